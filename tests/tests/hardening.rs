// SPDX-License-Identifier: GPL-2.0
//! Hardening: the matrix facing compilers that misbehave, bad input, interrupted and
//! concurrent runs.
//!
//! The fake compilers are shell scripts written by the tests into scratch directories; most
//! forward what they do not fake to the compiler running these tests. The matrix runs on a tiny
//! tree ([`tiny_tree`]): a shim with one test and every example the catalog names, each a few
//! lines, so that a whole toolchain's matrix takes a few seconds. Whatever needs a process of
//! its own (exit codes, signals, two runs at once, stdout) runs the real `xtask` binary,
//! built once into its own target directory ([`xtask_binary`]).

use kshim_tests::{current_rustc, project_root, scratch_dir, xtask_binary};
use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use xtask::catalog::FEATURES;
use xtask::json::{self, Value};
use xtask::plan::Layout;
use xtask::process::inherited_environment;
use xtask::process::Invocation;
use xtask::toolchain::Availability;
use xtask::version::Channel;

/// `xtask ARGS`, run to its end.
fn xtask(args: &[&str]) -> Output {
    Command::new(xtask_binary())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("running xtask")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The compiler running these tests, and what it says of itself.
struct RealCompiler {
    path: PathBuf,
    verbose_version: String,
    release: String,
}

fn real_compiler() -> &'static RealCompiler {
    static REAL: OnceLock<RealCompiler> = OnceLock::new();
    REAL.get_or_init(|| {
        let path = current_rustc();
        let output = xtask::process::run(
            &Invocation {
                program: path.clone(),
                args: vec!["-vV".into()],
                env: xtask::toolchain::library_path_env(&path),
                env_remove: Vec::new(),
            },
            Duration::from_secs(60),
        )
        .expect("running rustc -vV");
        let verbose_version = output.stdout;
        let version = xtask::version::parse_verbose_version(&verbose_version).unwrap();
        RealCompiler {
            path,
            release: version.release.to_string(),
            verbose_version,
        }
    })
}

/// `rustc -vV` text of the real compiler, with its release replaced by `release` (a suffix
/// such as `-beta.3` included) and its first line's tail by `tail`.
fn verbose_version_as(release: &str, tail: &str) -> String {
    let real = real_compiler();
    real.verbose_version
        .lines()
        .map(|line| {
            if line.starts_with("rustc ") {
                format!("rustc {release}{tail}")
            } else if line.starts_with("release: ") {
                format!("release: {release}")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// Writes an executable shell script.
fn script(path: &Path, body: &str) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_path_buf()
}

/// A wrapper that answers `-vV` with `verbose_version` and passes everything else to the real
/// compiler, after `before` (shell code that sees the arguments in `$*`).
fn wrapper(path: &Path, verbose_version: &str, before: &str) -> PathBuf {
    let real = &real_compiler().path;
    script(
        path,
        &format!(
            "if [ \"$1\" = -vV ]; then cat <<'END'\n{verbose_version}END\nexit 0; fi\n{before}\nexec '{}' \"$@\"\n",
            real.display()
        ),
    )
}

/// A tiny kshim tree in a fresh scratch directory ([`kshim_tests::tiny_tree`]) with every
/// example the catalog names.
fn tiny_tree(name: &str) -> PathBuf {
    let names: BTreeSet<&str> = FEATURES.iter().map(|feature| feature.example).collect();
    let names: Vec<&str> = names.into_iter().collect();
    kshim_tests::tiny_tree(&format!("hardening-{name}"), &names)
}

fn get<'a>(value: &'a Value, key: &str) -> &'a Value {
    value
        .get(key)
        .unwrap_or_else(|| panic!("no `{key}` in {value}"))
}

/// A report without what differs between two runs with the same results: timings, whether a
/// result came from the cache, and the summaries' wording of them.
fn results_of(report: &Value) -> Value {
    fn strip(value: &Value) -> Value {
        match value {
            Value::Object(members) => Value::Object(
                members
                    .iter()
                    .filter(|(key, _)| *key != "seconds" && *key != "cached")
                    .map(|(key, value)| (key.clone(), strip(value)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(strip).collect()),
            other => other.clone(),
        }
    }
    strip(report)
}

/// The JSON report an xtask run printed on stdout.
fn stdout_report(output: &Output) -> Value {
    json::parse(&text(&output.stdout)).unwrap_or_else(|error| {
        panic!(
            "stdout is not the JSON report ({error}):\n{}\nstderr:\n{}",
            text(&output.stdout),
            text(&output.stderr)
        )
    })
}

/// How many steps the summary line on stderr says came from the cache.
fn reused(stderr: &str) -> usize {
    stderr
        .lines()
        .rev()
        .find_map(|line| {
            let (_, rest) = line.split_once(" (")?;
            rest.split_once(" from the cache")?.0.parse().ok()
        })
        .unwrap_or_else(|| panic!("no summary line on stderr:\n{stderr}"))
}

/// Processes, other than zombies, whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<String> {
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
        let command_line = text(&command_line).replace('\0', " ");
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|stat| {
                stat.rsplit_once(") ")
                    .map(|(_, rest)| rest.starts_with('Z'))
            })
            .unwrap_or(true);
        if command_line.contains(needle) && !zombie {
            found.push(format!("{pid}: {command_line}"));
        }
    }
    found
}

/// Whether the process with this id is still running (zombies do not count).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(") ")
                .map(|(_, rest)| !rest.starts_with('Z'))
        })
        .unwrap_or(false)
}

// ---------------------------------------------------------------------------------------------
// Bad toolchains, one by one, as discovery classifies them.

/// Discovers the given specs with `timeout`, against the tiny pin file.
fn discover(dir: &Path, specs: &[PathBuf], timeout: Duration) -> Vec<Availability> {
    let pins = dir.join("pins.toml");
    std::fs::write(&pins, kshim_tests::ONE_PIN).unwrap();
    let sh = xshell::Shell::new().unwrap();
    let specs: Vec<String> = specs
        .iter()
        .map(|spec| spec.display().to_string())
        .collect();
    xtask::toolchain::discover(&sh, Some(&pins), &specs, timeout).unwrap()
}

fn broken_error(availability: &Availability) -> &str {
    match availability {
        Availability::Broken { error, .. } => error,
        other => panic!("expected a broken toolchain, got {other:#?}"),
    }
}

#[test]
fn each_bad_compiler_gets_a_verdict_of_its_own() {
    let dir = scratch_dir("hardening-discovery");
    let real = real_compiler();
    let missing = dir.join("no-such/rustc");
    let not_executable = dir.join("not-executable");
    std::fs::write(&not_executable, "#!/bin/sh\nexec rustc \"$@\"\n").unwrap();
    std::fs::set_permissions(&not_executable, std::fs::Permissions::from_mode(0o644)).unwrap();
    let unrelated = script(
        &dir.join("unrelated"),
        "echo 'usage: frobnicate [--verbose] FILE'\n",
    );
    let silent = script(&dir.join("silent"), "exit 0\n");
    let unparsable = script(
        &dir.join("unparsable"),
        "echo 'rustc, the compiler'\necho 'release 1.95.0'\n",
    );
    let no_patch = wrapper(
        &dir.join("no-patch"),
        "rustc 1.85\nhost: x86_64-unknown-linux-gnu\nrelease: 1.85\n",
        "",
    );
    let suffixes = [
        (
            "beta",
            format!("{}-beta.3", real.release),
            "",
            Channel::Beta,
        ),
        ("dev", format!("{}-dev", real.release), "", Channel::Dev),
        (
            "nightly",
            format!("{}-nightly", real.release),
            " (e50aa6fba 2026-05-19)",
            Channel::Nightly,
        ),
        (
            "distro",
            real.release.clone(),
            " (4d91de4e4 2025-02-17) (built from a source tarball)",
            Channel::Stable,
        ),
    ];
    let suffixed: Vec<PathBuf> = suffixes
        .iter()
        .map(|(name, release, tail, _)| {
            wrapper(
                &dir.join(format!("suffix-{name}")),
                &verbose_version_as(release, tail),
                "",
            )
        })
        .collect();
    let too_old = wrapper(&dir.join("too-old"), &verbose_version_as("1.70.0", ""), "");
    let empty_sysroot = dir.join("empty-sysroot");
    std::fs::create_dir_all(&empty_sysroot).unwrap();
    let no_core = script(
        &dir.join("no-core"),
        &format!(
            "exec '{}' --sysroot '{}' \"$@\"\n",
            real.path.display(),
            empty_sysroot.display()
        ),
    );
    // A copy of the real driver, away from the libraries its rpath points to.
    let cannot_start = dir.join("copied/bin/rustc");
    std::fs::create_dir_all(cannot_start.parent().unwrap()).unwrap();
    std::fs::copy(&real.path, &cannot_start).unwrap();
    let hangs = script(&dir.join("hangs"), "sleep 600\n");
    let chatty = script(
        &dir.join("chatty"),
        &format!(
            "echo 'wrapper: picking a compiler'\nexec '{}' \"$@\"\n",
            real.path.display()
        ),
    );

    let mut specs = vec![
        missing.clone(),
        not_executable.clone(),
        unrelated,
        silent,
        unparsable,
        no_patch,
    ];
    specs.extend(suffixed);
    specs.extend([too_old, no_core, cannot_start.clone(), hangs, chatty]);
    let start = Instant::now();
    let found = discover(&dir, &specs, Duration::from_secs(2));
    let elapsed = start.elapsed();
    assert_eq!(found.len(), specs.len());
    // The hanging compiler costs its timeout once, and no more.
    assert!(
        elapsed < Duration::from_secs(5),
        "discovery took {elapsed:?}"
    );

    assert_eq!(
        broken_error(&found[0]),
        format!("{} does not exist", missing.display())
    );
    assert!(
        broken_error(&found[1]).contains("permission denied (is it executable?)"),
        "{}",
        broken_error(&found[1])
    );
    let unrelated = broken_error(&found[2]);
    assert!(
        unrelated.contains("not `rustc VERSION ...`") && unrelated.contains("usage: frobnicate"),
        "{unrelated}"
    );
    assert!(
        broken_error(&found[3]).contains("it printed nothing"),
        "{}",
        broken_error(&found[3])
    );
    assert!(
        broken_error(&found[4]).contains("not `rustc VERSION ...`"),
        "{}",
        broken_error(&found[4])
    );
    assert!(
        broken_error(&found[5]).contains("the release `1.85` is not MAJOR.MINOR.PATCH"),
        "{}",
        broken_error(&found[5])
    );
    for (offset, (name, release, _, channel)) in suffixes.iter().enumerate() {
        let Availability::Found { version, .. } = &found[6 + offset] else {
            panic!("{name}: {:#?}", found[6 + offset]);
        };
        assert_eq!(&version.release_string(), release, "{name}");
        assert_eq!(version.channel, *channel, "{name}");
    }
    let Availability::Found { version, .. } = &found[10] else {
        panic!("too old: {:#?}", found[10]);
    };
    assert_eq!(
        xtask::expect::ToolchainVerdict::for_release(version.release),
        xtask::expect::ToolchainVerdict::TooOld
    );
    let no_core = broken_error(&found[11]);
    assert!(
        no_core.contains(&format!(
            "its sysroot {} has no `core`",
            empty_sysroot.display()
        )),
        "{no_core}"
    );
    let cannot_start = broken_error(&found[12]);
    assert!(
        cannot_start.contains(
            "it cannot start, the dynamic loader cannot find the shared library librustc_driver"
        ),
        "{cannot_start}"
    );
    assert!(
        broken_error(&found[13]).contains("killed after 2 s (--timeout)"),
        "{}",
        broken_error(&found[13])
    );
    let Availability::Found { version, .. } = &found[14] else {
        panic!("a wrapper that prints to stdout: {:#?}", found[14]);
    };
    assert_eq!(version.release.to_string(), real.release);
    assert!(processes_mentioning(&dir.join("hangs").display().to_string()).is_empty());
}

// ---------------------------------------------------------------------------------------------
// Bad toolchains in one matrix: each its own verdict, the others go on, nothing hangs.

#[test]
fn a_matrix_of_bad_compilers_reports_each_and_finishes() {
    let root = tiny_tree("bad-matrix");
    let dir = root.join("fakes");
    let real = real_compiler();
    let real_version = verbose_version_as(&real.release, "");
    let missing = dir.join("no-such-rustc");
    let silent = script(&dir.join("silent"), "exit 0\n");
    let too_old = wrapper(&dir.join("too-old"), &verbose_version_as("1.70.0", ""), "");
    let no_core = script(
        &dir.join("no-core"),
        &format!(
            "exec '{}' --sysroot /nonexistent-sysroot \"$@\"\n",
            real.path.display()
        ),
    );
    // Forward the probe and the tests; die on the shim's rlib build.
    let rlib_build = "case \"$*\" in *'--crate-type rlib'*)";
    let crashes = wrapper(
        &dir.join("crashes"),
        &real_version,
        &format!("{rlib_build} kill -SEGV $$ ;; esac"),
    );
    let fails = wrapper(
        &dir.join("fails"),
        &real_version,
        &format!("{rlib_build} echo 'wrapper: out of licences' >&2; exit 3 ;; esac"),
    );
    // Hangs without exec'ing: its `sleep` child must die with it.
    let pids = dir.join("hang-pids");
    let hangs = wrapper(
        &dir.join("hangs"),
        &real_version,
        &format!(
            "{rlib_build} sleep 600 & echo $! >> '{}'; wait ;; esac",
            pids.display()
        ),
    );
    let chatty = wrapper(
        &dir.join("chatty"),
        &real_version,
        "echo 'wrapper: compiling, please wait'",
    );
    let specs = [
        &missing, &silent, &too_old, &no_core, &crashes, &fails, &hangs, &chatty,
    ];
    let mut args: Vec<String> = [
        "matrix",
        "--root",
        &root.display().to_string(),
        "--format",
        "json",
        "--timeout",
        "4",
        "-j",
        "4",
    ]
    .map(String::from)
    .into();
    for spec in specs {
        args.push("--toolchain".into());
        args.push(spec.display().to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let start = Instant::now();
    let output = xtask(&args);
    let elapsed = start.elapsed();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let report = stdout_report(&output);
    let toolchains = get(&report, "toolchains").as_array().unwrap();
    let by_spec = |spec: &Path| {
        toolchains
            .iter()
            .position(|toolchain| {
                get(toolchain, "spec").as_str() == Some(&spec.display().to_string())
            })
            .unwrap_or_else(|| panic!("no toolchain {} in {report}", spec.display()))
    };
    let verdict = |spec: &Path| {
        let toolchain = &toolchains[by_spec(spec)];
        (
            get(toolchain, "verdict").as_str().unwrap().to_string(),
            get(toolchain, "error")
                .as_str()
                .unwrap_or_default()
                .to_string(),
        )
    };
    let cells = |spec: &Path| -> Vec<(String, String, String)> {
        let id = get(&toolchains[by_spec(spec)], "id")
            .as_str()
            .unwrap()
            .to_string();
        get(&report, "builds")
            .as_array()
            .unwrap()
            .iter()
            .filter(|build| get(build, "toolchain").as_str() == Some(&id))
            .map(|build| {
                (
                    format!(
                        "{} {} ({})",
                        get(build, "kind").as_str().unwrap(),
                        get(build, "target").as_str().unwrap(),
                        get(build, "mode").as_str().unwrap()
                    ),
                    get(build, "outcome").as_str().unwrap().to_string(),
                    get(build, "first_error")
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                )
            })
            .collect()
    };
    let cell = |spec: &Path, name: &str| {
        cells(spec)
            .into_iter()
            .find(|(cell, _, _)| cell == name)
            .unwrap_or_else(|| panic!("no cell {name} for {}", spec.display()))
    };

    let (word, error) = verdict(&missing);
    assert_eq!(
        (word.as_str(), error.as_str()),
        ("broken", &*format!("{} does not exist", missing.display()))
    );
    let (word, error) = verdict(&silent);
    assert!(
        word == "broken" && error.contains("it printed nothing"),
        "{error}"
    );
    let (word, error) = verdict(&too_old);
    assert_eq!(
        (word.as_str(), error.as_str()),
        ("too-old", "below the minimum (1.78.0)")
    );
    let (word, error) = verdict(&no_core);
    assert!(
        word == "broken" && error.contains("has no `core`"),
        "{error}"
    );

    let (word, _) = verdict(&crashes);
    assert_eq!(word, "ok");
    let (_, outcome, error) = cell(&crashes, "build kernel (kernel)");
    assert_eq!(outcome, "fail");
    assert!(error.contains("killed by signal 11 (SIGSEGV)"), "{error}");
    let (_, outcome, error) = cell(&crashes, "build rust_asm_goto (stable)");
    assert_eq!(
        (outcome.as_str(), error.as_str()),
        ("skipped", "not run: build kernel (stable) failed")
    );
    // What does not need the rlib still ran.
    assert_eq!(cell(&crashes, "test kernel (kernel)").1, "pass");

    let (_, outcome, error) = cell(&fails, "build kernel (stable)");
    assert_eq!(outcome, "fail");
    assert!(
        error.contains("exit status 3: wrapper: out of licences"),
        "{error}"
    );

    let (_, outcome, error) = cell(&hangs, "build kernel (kernel)");
    assert_eq!(outcome, "fail");
    assert!(error.contains("killed after 4 s (--timeout)"), "{error}");
    let sleepers: Vec<u32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|pid| pid.parse().unwrap())
        .collect();
    assert_eq!(sleepers.len(), 2, "one hanging build per mode");
    for pid in sleepers {
        assert!(!running(pid), "the hanging wrapper's child {pid} survived");
    }

    // The wrapper that prints on stdout corrupted nothing: every one of its cells passed.
    let (word, _) = verdict(&chatty);
    assert_eq!(word, "ok");
    let chatty_cells = cells(&chatty);
    assert_eq!(chatty_cells.len(), (2 + 3 * 11) * 2);
    for (name, outcome, error) in chatty_cells {
        assert_eq!(outcome, "pass", "{name}: {error}");
    }
    // Nothing hangs: the hanging builds are killed at their 4 s timeout. The bound is loose on
    // purpose, since a loaded machine slows the other cells; a hang would mean forever.
    assert!(
        elapsed < Duration::from_secs(120),
        "the matrix took {elapsed:?}"
    );
    assert!(processes_mentioning(&dir.display().to_string()).is_empty());
}

// ---------------------------------------------------------------------------------------------
// Bad input: one message naming the file (and line), exit status 2.

fn assert_bad_input(output: &Output, expected: &str) {
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(expected),
        "expected {expected:?} in:\n{stderr}"
    );
    assert!(output.stdout.is_empty(), "{}", text(&output.stdout));
}

#[test]
fn bad_input_exits_with_status_2_naming_file_and_line() {
    assert_bad_input(&xtask(&["frobnicate"]), "error: ");
    assert_bad_input(&xtask(&["matrix", "--frobnicate"]), "--frobnicate");
    assert_bad_input(
        &xtask(&["matrix", "--timeout", "soon"]),
        "can't parse `--timeout`",
    );

    let root = tiny_tree("bad-input");
    let pins = root.join("pins.toml");
    let pin_cases = [
        (
            "[[pin]]\nid = \"a\"\nrelease 1.85.0\n",
            ":3: expected `key = \"value\"`",
        ),
        (
            "[[pin]]\nid = \"a\"\nrelease = \"1.85.0\"\nrole = \"feature\"\nchannel = \"stable\"\n",
            ":5: unknown key `channel`",
        ),
        (
            "[[pin]]\nid = \"a\"\nrelease = \"1.85.0\"\nrole = \"feature\"\n\
             [[pin]]\nid = \"b\"\nrelease = \"1.85.0\"\nrole = \"feature\"\n",
            ":7: duplicate pin: `a` (line 1) already pins 1.85.0",
        ),
        (
            "[[pin]]\nid = \"a\"\nrelease = \"one.eighty-five\"\nrole = \"feature\"\n",
            ":3: the release `one.eighty-five` is not MAJOR.MINOR.PATCH",
        ),
    ];
    let root_arg = root.display().to_string();
    let pins_arg = pins.display().to_string();
    for (contents, expected) in pin_cases {
        std::fs::write(&pins, contents).unwrap();
        let output = xtask(&["matrix", "--root", &root_arg, "--pins", &pins_arg]);
        assert_bad_input(&output, &format!("{}{expected}", pins.display()));
    }

    // The catalog names an example the manifest does not declare, or whose file is missing.
    let manifest = root.join("examples/Cargo.toml");
    let original = std::fs::read_to_string(&manifest).unwrap();
    let undeclared = original.replace(
        "[[example]]\nname = \"rust_asm_goto\"\npath = \"rust_asm_goto.rs\"\n",
        "",
    );
    assert_ne!(undeclared, original);
    std::fs::write(&manifest, undeclared).unwrap();
    let output = xtask(&["matrix", "--root", &root_arg]);
    let catalog = project_root().join("kernel-shim/src/catalog.rs");
    let catalog_line = std::fs::read_to_string(&catalog)
        .unwrap()
        .lines()
        .position(|line| line.contains("example: \"rust_asm_goto\""))
        .unwrap()
        + 1;
    assert_bad_input(
        &output,
        &format!(
            "{}:{catalog_line}: the feature `asm_goto` names the example `rust_asm_goto`, but {} \
             declares no [[example]] named `rust_asm_goto`",
            catalog.display(),
            manifest.display()
        ),
    );
    std::fs::write(&manifest, &original).unwrap();
    let example = root.join("examples/rust_asm_goto.rs");
    std::fs::remove_file(&example).unwrap();
    let manifest_line = original
        .lines()
        .position(|line| line == "name = \"rust_asm_goto\"")
        .unwrap()
        + 1;
    assert_bad_input(
        &xtask(&["matrix", "--root", &root_arg]),
        &format!(
            "{}:{manifest_line}: the [[example]] `rust_asm_goto` (which the catalog names for \
             the feature `asm_goto`) has no source file: {} does not exist",
            manifest.display(),
            example.display()
        ),
    );

    // An unwritable target/kshim: here a file stands where the directory must be (the tests
    // may run as root, whom permissions do not stop).
    let other = tiny_tree("unwritable");
    std::fs::create_dir_all(other.join("target")).unwrap();
    std::fs::write(other.join("target/kshim"), "not a directory").unwrap();
    let real = real_compiler().path.display().to_string();
    assert_bad_input(
        &xtask(&[
            "matrix",
            "--root",
            &other.display().to_string(),
            "--toolchain",
            &real,
        ]),
        &format!(
            "cannot create {}, where the matrix keeps its lock, cache and report",
            other.join("target/kshim").display()
        ),
    );
}

// ---------------------------------------------------------------------------------------------
// Cache keys: never reused when anything they depend on changed.

/// A compiler that is too old for builds, so that its matrix is one probe: cheap to rerun.
fn old_compiler(path: &Path, commit: char, comment: char) -> PathBuf {
    let verbose_version = verbose_version_as("1.70.0", &format!(" ({commit}bcdef012 2023-06-01)"));
    wrapper(path, &verbose_version, &format!("# {comment}"))
}

#[test]
fn a_changed_compiler_or_environment_is_never_answered_from_the_cache() {
    let root = tiny_tree("cache-identity");
    let compiler = root.join("fake/rustc");
    old_compiler(&compiler, 'a', 'x');
    let root_arg = root.display().to_string();
    let compiler_arg = compiler.display().to_string();
    let run = |env: &[(&str, &str)]| {
        let output = Command::new(xtask_binary())
            // The wrapper answers `--print target-list` as the real compiler behind it, which
            // knows targets 1.70.0 did not: the target axis is left out.
            .args(["matrix", "--root", &root_arg, "--toolchain", &compiler_arg])
            .args(["--target", "none"])
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        reused(&stderr)
    };
    assert_eq!(run(&[]), 0);
    assert_eq!(run(&[]), 1, "nothing changed");

    // Another compiler at the same path, with the same size and modification time.
    let stamp = std::fs::metadata(&compiler).unwrap().modified().unwrap();
    let size = std::fs::metadata(&compiler).unwrap().len();
    let replace = |commit: char, comment: char| {
        old_compiler(&compiler, commit, comment);
        let file = std::fs::File::options()
            .write(true)
            .open(&compiler)
            .unwrap();
        file.set_modified(stamp).unwrap();
        assert_eq!(std::fs::metadata(&compiler).unwrap().len(), size);
    };
    replace('b', 'x'); // its `-vV` (and so its contents) differ
    assert_eq!(
        run(&[]),
        0,
        "a compiler with another -vV was answered from the cache"
    );
    replace('b', 'y'); // the same `-vV`, other contents
    assert_eq!(
        run(&[]),
        0,
        "a compiler with other contents was answered from the cache"
    );
    assert_eq!(run(&[]), 1);

    // The environment the processes get is part of the key; what they never get is not.
    let tmp = root.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let tmp = tmp.display().to_string();
    assert_eq!(
        run(&[("TMPDIR", &tmp)]),
        0,
        "a changed TMPDIR was not noticed"
    );
    let ignored = [
        ("TMPDIR", tmp.as_str()),
        ("RUSTFLAGS", "--cfg bogus"),
        ("RUSTC_BOOTSTRAP", "1"),
    ];
    assert_eq!(run(&ignored), 1, "a variable no process gets changed a key");
}

#[test]
fn cache_keys_change_with_sources_flags_and_environment() {
    let root = tiny_tree("cache-keys");
    let layout = Layout::new(&root);
    let real = real_compiler();
    let version = xtask::version::parse_verbose_version(&real.verbose_version).unwrap();
    let rustc = xtask::plan::Rustc {
        path: real.path.clone(),
        env: Vec::new(),
        loader: None,
        release: version.release,
    };
    let planned = [xtask::plan::PlannedToolchain {
        index: 0,
        directory_name: "t".into(),
        rustc,
        builds: true,
    }];
    let examples = xtask::plan::examples(&root).unwrap();
    let steps = xtask::plan::plan(&layout, &planned, &examples).unwrap();
    let probe = layout.probe_source();
    std::fs::create_dir_all(probe.parent().unwrap()).unwrap();
    std::fs::write(&probe, xtask::probe::probe_source()).unwrap();
    let keys = |steps: &[xtask::plan::Step], inherited: &[(String, String)]| {
        let checker = xtask::cache::Key(8);
        xtask::cache::cache_keys(
            steps,
            inherited,
            checker,
            &|_| xtask::cache::Key(7),
            &mut |path| xtask::cache::hash_file(path),
        )
        .unwrap()
    };
    let inherited = inherited_environment();
    let before = keys(&steps, &inherited);
    assert_eq!(before, keys(&steps, &inherited), "keys are not stable");

    // One example's source: its own three steps per mode change, nothing else.
    let source = root.join("examples/rust_asm_goto.rs");
    std::fs::write(
        &source,
        std::fs::read_to_string(&source).unwrap() + "// changed\n",
    )
    .unwrap();
    let after = keys(&steps, &inherited);
    let changed: BTreeSet<String> = steps
        .iter()
        .zip(before.iter().zip(&after))
        .filter(|(_, (old, new))| old != new)
        .map(|(step, _)| step.label())
        .collect();
    let expected: BTreeSet<String> = ["build", "run", "test"]
        .iter()
        .flat_map(|kind| ["kernel", "stable"].map(|mode| format!("{kind} rust_asm_goto ({mode})")))
        .collect();
    assert_eq!(changed, expected);

    // The shim's source: everything but the probe and the Kbuild fixtures, which do not use it.
    let shim = root.join("kernel-shim/src/lib.rs");
    std::fs::write(
        &shim,
        std::fs::read_to_string(&shim).unwrap() + "// changed\n",
    )
    .unwrap();
    let shim_changed = keys(&steps, &inherited);
    for ((step, old), new) in steps.iter().zip(&after).zip(&shim_changed) {
        let without_shim = step.target == "features" || step.kind == xtask::plan::Kind::Kbuild;
        assert_eq!(old == new, without_shim, "{}", step.label());
    }

    // A flag on one command line, and one environment variable of one process.
    let mut flagged = steps.clone();
    flagged[1].processes[0].args.push("-Copt-level=1".into());
    let flagged_keys = keys(&flagged, &inherited);
    assert_ne!(flagged_keys[1], shim_changed[1]);
    assert_eq!(flagged_keys[0], shim_changed[0]);
    let mut with_env = steps.clone();
    with_env[1].processes[0]
        .env
        .push(("RUST_MIN_STACK".into(), "1000000".into()));
    assert_ne!(keys(&with_env, &inherited)[1], shim_changed[1]);

    // What every process inherits: every key changes.
    let mut other_inherited = inherited.clone();
    other_inherited.push(("TMPDIR".into(), "/elsewhere".into()));
    let other = keys(&steps, &other_inherited);
    assert!(other.iter().zip(&shim_changed).all(|(a, b)| a != b));
    // RUSTFLAGS is never inherited, so it cannot be part of any key.
    assert!(!xtask::process::INHERITED_VARIABLES.contains(&"RUSTFLAGS"));
}

// ---------------------------------------------------------------------------------------------
// Interrupted and concurrent runs.

/// Starts `xtask matrix` on the tree with the real compiler, JSON on stdout.
fn start_matrix(root: &Path, extra: &[&str]) -> Child {
    Command::new(xtask_binary())
        .args([
            "matrix",
            "--root",
            &root.display().to_string(),
            "--format",
            "json",
            "-j",
            "2",
        ])
        .args(["--toolchain", &real_compiler().path.display().to_string()])
        // Only the host's cells: the target axis has tests of its own (`targets.rs`).
        .args(["--target", "none"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(child: &Child, signal: i32) {
    let status = Command::new("sh")
        .args(["-c", &format!("kill -{signal} {}", child.id())])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits until the tree's lock file names `pid` (the run holds the lock), for at most 10 s.
fn wait_for_lock(root: &Path, pid: u32) {
    let lock = Layout::new(root).lock();
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(&lock)
        .ok()
        .map(|text| text.trim().to_string())
        != Some(pid.to_string())
    {
        assert!(Instant::now() < deadline, "run {pid} never took the lock");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn runs_that_are_killed_interrupted_or_concurrent_never_corrupt_results() {
    let root = tiny_tree("interrupted");
    let layout = Layout::new(&root);

    // Two runs at once: the second waits, says so, and then takes the first one's results.
    let first = start_matrix(&root, &["--no-cache"]);
    wait_for_lock(&root, first.id());
    let second = start_matrix(&root, &[]);
    let first_pid = first.id();
    let first = first.wait_with_output().unwrap();
    let second = second.wait_with_output().unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    let second_stderr = text(&second.stderr);
    assert!(
        second_stderr.contains(&format!(
            "matrix: waiting for another cargo xtask matrix (pid {first_pid}) to finish"
        )),
        "{second_stderr}"
    );
    let reference = results_of(&stdout_report(&first));
    assert_eq!(results_of(&stdout_report(&second)), reference);
    // The probe, the two Kbuild fixtures, and the shim's and eleven examples' cells.
    let steps = 1 + 2 + (2 + 3 * 11) * 2;
    assert_eq!(reused(&second_stderr), steps, "the second run redid work");
    let written = std::fs::read_to_string(layout.report()).unwrap();
    assert_eq!(results_of(&json::parse(&written).unwrap()), reference);

    // A cold cache, then runs killed at several moments, each resuming from what the last
    // one left; the run after them must give exactly the clean run's results.
    std::fs::remove_dir_all(layout.cache()).unwrap();
    std::fs::remove_dir_all(layout.kshim.join("matrix")).unwrap();
    let needle = root.display().to_string();
    let mut stopped_runs = 0;
    for (delay, signal_number) in [(300, 9), (700, 2), (500, 9), (900, 9)] {
        let run = start_matrix(&root, &[]);
        std::thread::sleep(Duration::from_millis(delay));
        signal(&run, signal_number);
        let signalled = Instant::now();
        let output = run.wait_with_output().unwrap();
        let stopped = signalled.elapsed();
        if output.status.signal() != Some(signal_number) {
            // It finished before the signal came (counted below).
            assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
            assert_ne!(
                signal_number, 2,
                "the SIGINT came too late to test anything"
            );
            continue;
        }
        stopped_runs += 1;
        if signal_number == 2 {
            // SIGINT: prompt, with what had completed, and every rustc gone.
            let stderr = text(&output.stderr);
            assert!(
                stopped < Duration::from_secs(2),
                "SIGINT took {stopped:?} to act"
            );
            assert!(
                stderr.contains("matrix: interrupted by SIGINT after"),
                "{stderr}"
            );
            assert!(stderr.contains("steps had completed"), "{stderr}");
            assert!(stderr.contains("no report was written"), "{stderr}");
            assert!(output.stdout.is_empty());
            let left = processes_mentioning(&needle);
            assert!(left.is_empty(), "left running after SIGINT: {left:#?}");
        }
    }
    assert!(
        stopped_runs >= 3,
        "only {stopped_runs} runs were stopped midway"
    );
    let last = start_matrix(&root, &[]).wait_with_output().unwrap();
    assert_eq!(last.status.code(), Some(0), "{}", text(&last.stderr));
    assert_eq!(results_of(&stdout_report(&last)), reference);
    // Every cache entry is whole, and no temporary file is left.
    for entry in std::fs::read_dir(layout.cache()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(!name.ends_with(".tmp"), "{name} left behind");
        let contents = std::fs::read_to_string(&path).unwrap();
        assert!(
            json::parse(&contents).is_ok(),
            "{name} is not JSON: {contents}"
        );
    }
}
