// SPDX-License-Identifier: GPL-2.0
//! Shared helpers for the xtask's tests.
//!
//! They find the compiler the tests run under and give each test its own scratch directory
//! under `target/`, so that tests running in parallel never share output files.

use crate::project_root;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard, OnceLock};

/// The real rustc of the toolchain running the tests, by absolute path.
///
/// `RUSTC` wins if set; otherwise rustup's answer for the active toolchain (rustup's proxies
/// pass `RUSTUP_TOOLCHAIN` down, so `cargo +nightly test` gets nightly's); otherwise `rustc`
/// from `PATH`, resolved to a file.
pub(crate) fn current_rustc() -> PathBuf {
    if let Some(rustc) = std::env::var_os("RUSTC").filter(|value| !value.is_empty()) {
        return resolve(PathBuf::from(rustc));
    }
    let rustup = Command::new("rustup").args(["which", "rustc"]).output();
    if let Ok(output) = rustup {
        let path = String::from_utf8_lossy(&output.stdout).trim().to_string();
        if output.status.success() && !path.is_empty() {
            return PathBuf::from(path);
        }
    }
    resolve(PathBuf::from("rustc"))
}

/// A bare program name looked up on `PATH`; anything else made absolute.
fn resolve(program: PathBuf) -> PathBuf {
    if program.components().count() > 1 {
        return std::fs::canonicalize(&program).unwrap_or(program);
    }
    crate::util::process::which(&program).unwrap_or(program)
}

/// A fresh, empty directory for one test: `target/kshim/tests/<name>`.
pub(crate) fn scratch_dir(name: &str) -> PathBuf {
    let directory = project_root().join("target/kshim/tests").join(name);
    // Left-overs of an earlier run would let a broken build pass with an old binary.
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory)
        .unwrap_or_else(|error| panic!("creating {}: {error}", directory.display()));
    directory
}

/// One test at a time on this checkout's run lock (`target/kshim/matrix.lock`): taken by every
/// test that runs on it (the `xtask` binary without `--root`, or a run in this process) or holds
/// it on purpose, since all share one process, where one's run would outlast another's deadline,
/// wait for its held lock, or write between its two runs.
pub(crate) fn the_checkouts_lock() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One test at a time on `target/kernel/`'s lock, for the tests whose `xtask kernel` builds:
/// another's run would take the lock between a test's two runs (and end the orphans that test
/// waits to see its own run end).
pub(crate) fn the_kernel_dirs_lock() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The `xtask` binary of this checkout, built once per test process by the cargo running the
/// tests (which has released `target/`'s lock by then), where Cargo says it put it: the same
/// binary the top-level `tests/` crate runs.
pub(crate) fn xtask_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let output = Command::new(cargo)
            .args(["build", "--package", "xtask", "--bin", "xtask"])
            .arg("--message-format=json-render-diagnostics")
            .current_dir(project_root())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("running cargo build -p xtask");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "cargo build -p xtask failed:\n{stderr}"
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        let executable = stdout.lines().rev().find_map(|line| {
            let message = crate::util::json::parse(line).ok()?;
            Some(PathBuf::from(message.get("executable")?.as_str()?))
        });
        executable.unwrap_or_else(|| panic!("cargo build -p xtask named no executable:\n{stderr}"))
    })
}

/// Waits for `child`, killing it and failing the test if it still runs after `deadline`: a
/// command that hangs is a bug of its own.
pub(crate) fn wait_within(
    child: &mut std::process::Child,
    deadline: std::time::Duration,
    what: &str,
) -> std::process::ExitStatus {
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} still ran after {deadline:?}: it hangs");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// What `command` prints on stdout (less its last newline, as xshell's `read`), run with its
/// stderr captured where `read` passes it to the test's terminal: a test prints nothing while
/// the command succeeds, and its failure message says what the command said.
pub(crate) fn read_quietly(command: xshell::Cmd<'_>) -> String {
    let line = command.to_string();
    let output = command
        .quiet()
        .ignore_status()
        .output()
        .unwrap_or_else(|error| panic!("running {line}: {error}"));
    assert!(
        output.status.success(),
        "{line} exited with {}:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let mut stdout = String::from_utf8(output.stdout).expect("UTF-8 on stdout");
    if stdout.ends_with('\n') {
        stdout.pop();
    }
    stdout
}

/// A pin file with one pin, for trees whose matrix only uses `--toolchain`.
pub(crate) const ONE_PIN: &str =
    "[[pin]]\nid = \"minimum\"\nrelease = \"1.78.0\"\nrole = \"minimum\"\n";

/// A tiny kshim tree in the fresh scratch directory `name`: a shim with one unit test, and each
/// of `examples` (the names the catalog gives, which the caller reads: this library cannot) as
/// a one-line module with a test, so that the matrix's catalog check passes and a toolchain's
/// whole matrix takes seconds; its pin file is [`ONE_PIN`].
pub(crate) fn tiny_tree(name: &str, examples: &[&str]) -> PathBuf {
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
    for name in examples {
        manifest.push_str(&format!(
            "\n[[example]]\nname = \"{name}\"\npath = \"{name}.rs\"\n"
        ));
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

/// Asserts that a report's JSON layout in the page `page` names every member `written` has and
/// no other. The layout is the ```text block after the last of `markers`, each looked for after
/// the one before. Names that are data, not layout, are left out: in `written`, the keys that
/// `data(parent, key)` picks, `parent` being the key whose object holds them (None at the top
/// and in arrays); in the block, the `examples` it shows as such keys.
pub(crate) fn assert_json_layout_documented(
    page: &str,
    what: &str,
    markers: &[&str],
    examples: &[&str],
    written: &crate::util::json::Value,
    data: &dyn Fn(Option<&str>, &str) -> bool,
) {
    use crate::util::json::Value;
    use std::collections::BTreeSet;
    fn keys(
        value: &Value,
        parent: Option<&str>,
        data: &dyn Fn(Option<&str>, &str) -> bool,
        into: &mut BTreeSet<String>,
    ) {
        match value {
            Value::Object(members) => {
                for (key, member) in members {
                    if !data(parent, key) {
                        into.insert(key.clone());
                    }
                    keys(member, Some(key), data, into);
                }
            }
            Value::Array(items) => items.iter().for_each(|item| keys(item, None, data, into)),
            _ => {}
        }
    }
    let mut members = BTreeSet::new();
    keys(written, None, data, &mut members);
    let text = std::fs::read_to_string(project_root().join(page)).unwrap();
    let block = markers
        .iter()
        .chain(&["```text\n"])
        .try_fold(text.as_str(), |rest, marker| rest.split(marker).nth(1))
        .and_then(|rest| rest.split("\n```").next())
        .unwrap_or_else(|| panic!("{page} documents the {what} report's JSON in a ```text block"));
    let mut documented = BTreeSet::new();
    for part in block.split('"').collect::<Vec<_>>().windows(2) {
        if part[1].starts_with(':') && !part[0].contains(' ') && !examples.contains(&part[0]) {
            documented.insert(part[0].to_string());
        }
    }
    assert!(members.len() > 10, "{members:?}");
    assert_eq!(
        documented, members,
        "{page}'s {what} JSON layout and to_json differ"
    );
}
