// SPDX-License-Identifier: GPL-2.0
//! What the black-box tests share: the `xtask` binary, built once; a command run to its end
//! under a deadline, its output captured; assertions on what it left ([`Run`]), which fail with
//! the whole command line, the exit status, stdout and stderr; scratch directories, tiny kshim
//! trees, fake compilers and a lock held by another process.
//!
//! Every child's output is captured (or thrown away), never passed through, so that a test
//! prints nothing unless it fails, and then prints it in its message.

use serde_json::Value;
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// The checkout: this crate's parent directory.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is inside the checkout")
        .to_path_buf()
}

/// The cargo running these tests (`CARGO`, set by cargo for its children), else `cargo`.
pub fn cargo() -> std::ffi::OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// The `xtask` binary of this checkout (`target/debug/xtask`), built once per test process by
/// the cargo running the tests, which has released `target/`'s lock by then. Its path is the
/// one Cargo reports, wherever `CARGO_TARGET_DIR` puts it.
pub fn xtask_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let build = Command::new(cargo())
            .args(["build", "--package", "xtask", "--bin", "xtask"])
            .arg("--message-format=json-render-diagnostics")
            .current_dir(root())
            .run_within(Duration::from_secs(900));
        build.success();
        let executable = build.stdout.lines().rev().find_map(|line| {
            let message: Value = serde_json::from_str(line).ok()?;
            Some(PathBuf::from(message["executable"].as_str()?))
        });
        executable.unwrap_or_else(|| build.fail("cargo named no executable"))
    })
}

/// `xtask ARGS`, to run by [`Runs::run`].
pub fn xtask<S: AsRef<OsStr>>(args: &[S]) -> Command {
    let mut command = Command::new(xtask_binary());
    command.args(args).env("NO_COLOR", "1");
    command
}

/// A command run to its end by [`Runs::run`]: its command line, exit status and output.
pub struct Run {
    pub line: String,
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Fails the test, saying `what` and everything the command left.
    #[track_caller]
    pub fn fail(&self, what: &str) -> ! {
        panic!(
            "{what}\ncommand: {}\nstatus: {}\n--- stdout\n{}\n--- stderr\n{}",
            self.line, self.status, self.stdout, self.stderr
        )
    }

    #[track_caller]
    pub fn success(&self) -> &Self {
        if !self.status.success() {
            self.fail("expected success");
        }
        self
    }

    #[track_caller]
    pub fn code(&self, code: i32) -> &Self {
        if self.status.code() != Some(code) {
            self.fail(&format!("expected exit status {code}"));
        }
        self
    }

    #[track_caller]
    pub fn stdout_has(&self, text: &str) -> &Self {
        if !self.stdout.contains(text) {
            self.fail(&format!("expected {text:?} on stdout"));
        }
        self
    }

    #[track_caller]
    pub fn stderr_has(&self, text: &str) -> &Self {
        if !self.stderr.contains(text) {
            self.fail(&format!("expected {text:?} on stderr"));
        }
        self
    }

    #[track_caller]
    pub fn stdout_empty(&self) -> &Self {
        if !self.stdout.is_empty() {
            self.fail("expected nothing on stdout");
        }
        self
    }

    /// Asserts `holds`, failing with `what` and the command's output.
    #[track_caller]
    pub fn check(&self, holds: bool, what: &str) -> &Self {
        if !holds {
            self.fail(what);
        }
        self
    }

    /// Exit status 2 (bad input), with `message` on stderr.
    #[track_caller]
    pub fn refused(&self, message: &str) -> &Self {
        self.code(2).stderr_has(message)
    }

    /// The JSON report printed on stdout.
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|error| self.fail(&format!("stdout is no JSON: {error}")))
    }
}

/// Running a [`Command`] to its end, output captured, under a deadline.
pub trait Runs {
    /// Runs the command with stdin empty, for at most 30 s; a panic on its stderr fails the
    /// test.
    fn run(&mut self) -> Run {
        self.run_within(Duration::from_secs(30))
    }
    /// [`Runs::run`] with another deadline: a command that outlives it is killed and fails the
    /// test, since a hang is a bug of its own.
    fn run_within(&mut self, deadline: Duration) -> Run;
    /// Starts the command with stdin empty and stdout and stderr piped.
    fn start(&mut self) -> Child;
}

/// The command line, quoted where a word needs it, with the environment it sets in front.
pub fn command_line(command: &Command) -> String {
    let mut line = String::new();
    for (key, value) in command.get_envs() {
        if let Some(value) = value {
            let _ = write!(line, "{}={} ", key.to_string_lossy(), quoted(value));
        }
    }
    line.push_str(&quoted(command.get_program()));
    for arg in command.get_args() {
        line.push(' ');
        line.push_str(&quoted(arg));
    }
    line
}

fn quoted(word: &OsStr) -> String {
    let word = word.to_string_lossy();
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:+,@%".contains(c));
    if plain {
        word.into_owned()
    } else {
        format!("{:?}", word.chars().take(200).collect::<String>())
    }
}

impl Runs for Command {
    fn run_within(&mut self, deadline: Duration) -> Run {
        let line = command_line(self);
        let mut child = self.start();
        let mut stdout = child.stdout.take().expect("piped");
        let mut stderr = child.stderr.take().expect("piped");
        let err = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = stderr.read_to_end(&mut bytes);
            bytes
        });
        let out = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = stdout.read_to_end(&mut bytes);
            bytes
        });
        let status = wait_within(&mut child, deadline, &line);
        let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
        let run = Run {
            line,
            status,
            stdout: text(out.join().unwrap()),
            stderr: text(err.join().unwrap()),
        };
        if run.stderr.contains("panicked") {
            run.fail("it panicked");
        }
        // Once, during hostile runs as root, `/dev/null` was found replaced by a regular file.
        let null = std::fs::symlink_metadata("/dev/null").expect("/dev/null is there");
        if !std::os::unix::fs::FileTypeExt::is_char_device(&null.file_type()) {
            run.fail("after it, /dev/null is no longer a character device");
        }
        run
    }

    fn start(&mut self) -> Child {
        self.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("starting {}: {error}", command_line(self)))
    }
}

/// Waits for `child`, killing it and failing the test if it still runs after `deadline`.
pub fn wait_within(child: &mut Child, deadline: Duration, what: &str) -> ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} still ran after {deadline:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs a helper program (`kill`, `mount`, ...) quietly; whether it succeeded.
pub fn quietly(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|output| output.status.success())
}

/// Sends `signal` (a number) to the process `pid`.
pub fn send(signal: i32, pid: u32) {
    assert!(
        quietly("kill", &[&format!("-{signal}"), &pid.to_string()]),
        "kill -{signal} {pid}"
    );
}

/// The number of SIGINT, which Ctrl-C sends.
pub const SIGINT: i32 = 2;
/// The number of SIGKILL.
pub const SIGKILL: i32 = 9;

// ---------------------------------------------------------------------------------------------
// The compiler, scratch directories, the run lock.

/// The real rustc of the toolchain running the tests, by absolute path: `RUSTC` if set, else
/// rustup's answer for the active toolchain (its proxies pass `RUSTUP_TOOLCHAIN` down), else
/// `rustc` on `PATH`.
pub fn current_rustc() -> PathBuf {
    static RUSTC: OnceLock<PathBuf> = OnceLock::new();
    RUSTC
        .get_or_init(|| {
            if let Some(rustc) = std::env::var_os("RUSTC").filter(|value| !value.is_empty()) {
                return on_path(PathBuf::from(rustc));
            }
            let rustup = Command::new("rustup").args(["which", "rustc"]).output();
            if let Ok(output) = rustup {
                let path = String::from_utf8_lossy(&output.stdout).trim().to_string();
                if output.status.success() && !path.is_empty() {
                    return PathBuf::from(path);
                }
            }
            on_path(PathBuf::from("rustc"))
        })
        .clone()
}

/// A bare program name looked up on `PATH`; anything else made absolute.
fn on_path(program: PathBuf) -> PathBuf {
    if program.components().count() > 1 {
        return std::fs::canonicalize(&program).unwrap_or(program);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|directory| directory.join(&program))
        .find(|candidate| candidate.is_file())
        .unwrap_or(program)
}

/// What `rustc -vV` of [`current_rustc`] says.
pub fn verbose_version() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        let rustc = current_rustc();
        Command::new(&rustc)
            .arg("-vV")
            .run()
            .success()
            .stdout
            .clone()
    })
}

/// The release of [`current_rustc`], from its `release:` line (`1.95.0`, `1.97.0-nightly`).
pub fn release() -> &'static str {
    verbose_version()
        .lines()
        .find_map(|line| line.strip_prefix("release: "))
        .expect("rustc -vV has a release: line")
}

/// A fresh, empty directory for one test: `target/kshim/black-box/<name>`.
pub fn scratch_dir(name: &str) -> PathBuf {
    let directory = root().join("target/kshim/black-box").join(name);
    // Left-overs of an earlier run would let a broken run pass on old files.
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory)
        .unwrap_or_else(|error| panic!("creating {}: {error}", directory.display()));
    directory
}

/// One test at a time on this checkout's run lock (`target/kshim/matrix.lock`): taken by every
/// test that runs where it is taken (the xtask without `--root`, `toolchains install`) or
/// holds it on purpose, since one's run would wait for another's held lock.
pub fn checkouts_lock() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub fn path_str(path: &Path) -> &str {
    path.to_str().expect("scratch paths are UTF-8")
}

pub fn make_fifo(path: &Path) {
    assert!(quietly("mkfifo", &[path_str(path)]), "mkfifo {path:?}");
}

/// Writes an executable shell script, making its directory.
pub fn script(path: &Path, body: &str) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_path_buf()
}

/// `rustc -vV` of the real compiler, its release replaced by `release` (a suffix such as
/// `-beta.3` included) and its first line's tail by `tail`.
pub fn verbose_version_as(release: &str, tail: &str) -> String {
    let lines = verbose_version().lines().map(|line| {
        if line.starts_with("rustc ") {
            format!("rustc {release}{tail}\n")
        } else if line.starts_with("release: ") {
            format!("release: {release}\n")
        } else {
            format!("{line}\n")
        }
    });
    lines.collect()
}

/// A fake compiler that answers `-vV` with `verbose_version` and passes everything else to the
/// real one, after `before` (shell code that sees the arguments in `$*`).
pub fn wrapper(path: &Path, verbose_version: &str, before: &str) -> PathBuf {
    script(
        path,
        &format!(
            "if [ \"$1\" = -vV ]; then cat <<'END'\n{verbose_version}END\nexit 0; fi\n{before}\nexec '{}' \"$@\"\n",
            current_rustc().display()
        ),
    )
}

// ---------------------------------------------------------------------------------------------
// Tiny trees, pin files, reports.

/// A pin file with one pin, for trees whose matrix only uses `--toolchain`.
pub const ONE_PIN: &str = "[[pin]]\nid = \"minimum\"\nrelease = \"1.78.0\"\nrole = \"minimum\"\n";

/// The examples the catalog names, each once, in name order.
pub fn catalog_examples() -> Vec<&'static str> {
    let mut names: Vec<&str> = kernel::catalog::FEATURES
        .iter()
        .map(|feature| feature.example)
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// A tiny kshim tree in the fresh scratch directory `name`: a shim with one unit test, and
/// every example the catalog names as a one-line module with a test, so that the matrix's
/// catalog check passes and a toolchain's whole matrix takes seconds; its pin file is
/// [`ONE_PIN`].
pub fn tiny_tree(name: &str) -> PathBuf {
    let root = scratch_dir(name);
    let shim = root.join("kernel-shim/src");
    std::fs::create_dir_all(&shim).unwrap();
    std::fs::write(
        shim.join("lib.rs"),
        "//! A tiny stand-in for the shim.\n#![cfg_attr(not(test), no_std)]\n\
         /// The answer.\npub fn answer() -> u32 { 42 }\n\
         #[cfg(test)]\nmod tests {\n    #[test]\n    fn answers() { assert_eq!(super::answer(), 42); }\n}\n",
    )
    .unwrap();
    let directory = root.join("examples");
    std::fs::create_dir_all(&directory).unwrap();
    let mut manifest = String::from("[package]\nname = \"tiny-examples\"\n");
    for name in catalog_examples() {
        let _ = write!(
            manifest,
            "\n[[example]]\nname = \"{name}\"\npath = \"{name}.rs\"\n"
        );
        std::fs::write(
            directory.join(format!("{name}.rs")),
            format!(
                "fn main() {{ println!(\"[info] {name}: {{}}\", kernel::answer()); }}\n\
                 #[cfg(test)]\nmod tests {{\n    #[test]\n    fn loads() {{ assert_eq!(kernel::answer(), 42); }}\n}}\n"
            ),
        )
        .unwrap();
    }
    std::fs::write(directory.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(root.join("toolchains.toml"), ONE_PIN).unwrap();
    root
}

/// A pin file with `count` generated pins `p0`, `p1`, ...: releases from 1.100.0 on.
pub fn pin_file(path: &Path, count: usize) {
    let mut text = String::new();
    for index in 0..count {
        let release = format!("1.{}.0", 100 + index);
        let _ = write!(
            text,
            "[[pin]]\nid = \"p{index}\"\nrelease = \"{release}\"\nrole = \"feature\"\nrustup = \"{release}\"\n\n"
        );
    }
    std::fs::write(path, text).unwrap();
}

/// `xtask matrix` of the compiler running these tests on `root`, host cells only.
pub fn host_matrix_command(root: &Path) -> Command {
    let rustc = current_rustc();
    let mut command = xtask(&["matrix", "--root", path_str(root)]);
    command.args(["--toolchain", path_str(&rustc), "--target", "none"]);
    command
}

/// The matrix of the compiler running these tests on `root`, host cells only, as JSON.
pub fn host_matrix(root: &Path, extra: &[&str]) -> (Run, Value) {
    let run = host_matrix_command(root)
        .args(["--format", "json"])
        .args(extra)
        .run_within(Duration::from_secs(120));
    let report = run.json();
    (run, report)
}

/// A report without what differs between two runs with the same results: timings, the date,
/// and whether a result came from the cache.
pub fn results_of(report: &Value) -> Value {
    match report {
        Value::Object(members) => Value::Object(
            members
                .iter()
                .filter(|(key, _)| !["seconds", "cached", "date"].contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), results_of(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(results_of).collect()),
        other => other.clone(),
    }
}

/// How many steps the summary line on stderr says came from the cache.
pub fn reused(run: &Run) -> usize {
    run.stderr
        .lines()
        .rev()
        .find_map(|line| {
            let (_, rest) = line.rsplit_once(" (")?;
            rest.split_once(" from the cache")?.0.parse().ok()
        })
        .unwrap_or_else(|| run.fail("no summary line on stderr"))
}

// ---------------------------------------------------------------------------------------------
// Processes and locks.

/// Processes, other than zombies, whose command line mentions `needle`.
pub fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        let Ok(command_line) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let command_line = String::from_utf8_lossy(&command_line).replace('\0', " ");
        if command_line.contains(needle) && running(pid) {
            found.push(format!("{pid}: {command_line}"));
        }
    }
    found
}

/// Whether the process with this id is still running (zombies do not count).
pub fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(") ")
                .map(|(_, rest)| !rest.starts_with('Z'))
        })
        .unwrap_or(false)
}

/// A process that holds the lock at `path` until it is dropped, however the test ends: a
/// `flock` in a session of its own (`setsid`), as a run and what it started hold one.
pub struct Holder(Child);

impl Drop for Holder {
    fn drop(&mut self) {
        // It leads its own process group: `flock` and its `sleep`.
        quietly("kill", &["-KILL", "--", &format!("-{}", self.0.id())]);
        let _ = self.0.wait();
    }
}

/// Starts a [`Holder`] of the lock at `path` and returns once it holds it.
pub fn hold_lock(path: &Path) -> Holder {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let holder = Holder(
        Command::new("setsid")
            .args(["flock", path_str(path), "sleep", "600"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("running setsid flock"),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while quietly("flock", &["-n", path_str(path), "true"]) {
        assert!(Instant::now() < deadline, "flock never took the lock");
        std::thread::sleep(Duration::from_millis(20));
    }
    holder
}

/// Every path under `directory` with its size and modification time, in name order: what a
/// run that changes nothing leaves as it was.
pub fn snapshot(directory: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    let mut seen = Vec::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(current) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            let Ok(metadata) = entry.metadata() else {
                continue;
            };
            if metadata.is_dir() {
                pending.push(path.clone());
            }
            seen.push((path, metadata.len(), metadata.modified().unwrap()));
        }
    }
    seen.sort();
    seen
}
