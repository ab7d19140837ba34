// SPDX-License-Identifier: GPL-2.0
//! Hardening: the matrix facing bad input, compilers that misbehave, a changed compiler or
//! environment behind the cache, and runs that are killed, interrupted or concurrent.
//!
//! The matrix runs on a tiny tree ([`tiny_tree`]): a shim with one test and every example the
//! catalog names, each a few lines, so that a whole toolchain's matrix takes a few seconds.
//! The fake compilers are shell scripts; most forward what they do not fake to the compiler
//! running these tests.

use crate::support::*;
use serde_json::Value;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

/// The cells of one toolchain that runs everything on a tiny tree: the shim's build and test,
/// and each example's build, run and test, in both modes.
fn cells_per_toolchain() -> usize {
    (2 + 3 * catalog_examples().len()) * 2
}

#[test]
fn bad_input_exits_with_status_2_naming_file_and_line() {
    let bad = |run: Run, expected: &str| {
        run.refused(expected).stdout_empty();
    };
    bad(xtask(&["frobnicate"]).run(), "error: ");
    bad(xtask(&["matrix", "--frobnicate"]).run(), "--frobnicate");
    bad(
        xtask(&["matrix", "--timeout", "soon"]).run(),
        "can't parse `--timeout`",
    );

    let root = tiny_tree("hardening-bad-input");
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
    for (contents, expected) in pin_cases {
        std::fs::write(&pins, contents).unwrap();
        bad(
            xtask(&[
                "matrix",
                "--root",
                path_str(&root),
                "--pins",
                path_str(&pins),
            ])
            .run(),
            &format!("{}{expected}", pins.display()),
        );
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
    let catalog = root_of_checkout_catalog();
    let catalog_line = std::fs::read_to_string(&catalog)
        .unwrap()
        .lines()
        .position(|line| line.contains("example: \"rust_asm_goto\""))
        .unwrap()
        + 1;
    bad(
        xtask(&["matrix", "--root", path_str(&root)]).run(),
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
    bad(
        xtask(&["matrix", "--root", path_str(&root)]).run(),
        &format!(
            "{}:{manifest_line}: the [[example]] `rust_asm_goto` (which the catalog names for \
             the feature `asm_goto`) has no source file: {} does not exist",
            manifest.display(),
            example.display()
        ),
    );

    // An unwritable target/kshim: here a file stands where the directory must be (the tests
    // may run as root, whom permissions do not stop).
    let other = tiny_tree("hardening-unwritable");
    std::fs::create_dir_all(other.join("target")).unwrap();
    std::fs::write(other.join("target/kshim"), "not a directory").unwrap();
    bad(
        xtask(&["matrix", "--root", path_str(&other), "--toolchain"])
            .arg(current_rustc())
            .args(["--target", "none"])
            .run(),
        &format!(
            "cannot create {}, where the matrix keeps its lock, cache and report",
            other.join("target/kshim").display()
        ),
    );
}

/// The catalog the xtask reads: the shim's, in this checkout.
fn root_of_checkout_catalog() -> std::path::PathBuf {
    root().join("kernel-shim/src/catalog.rs")
}

// ---------------------------------------------------------------------------------------------
// Bad toolchains in one matrix: each gets its own verdict, the others go on, nothing hangs.

#[test]
fn a_matrix_of_bad_compilers_reports_each_and_finishes() {
    let root = tiny_tree("hardening-bad-matrix");
    let dir = root.join("fakes");
    let real = current_rustc();
    let real_version = verbose_version_as(release(), "");
    // A path to nothing is no compiler to report on: bad input, refused before the run.
    let missing = dir.join("no-such-rustc");
    xtask(&[
        "matrix",
        "--root",
        path_str(&root),
        "--toolchain",
        path_str(&missing),
    ])
    .run_within(Duration::from_secs(60))
    .refused("no such file");
    let silent = script(&dir.join("silent"), "exit 0\n");
    let too_old = wrapper(&dir.join("too-old"), &verbose_version_as("1.70.0", ""), "");
    let no_core = script(
        &dir.join("no-core"),
        &format!(
            "exec '{}' --sysroot /nonexistent-sysroot \"$@\"\n",
            real.display()
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
        &silent, &too_old, &no_core, &crashes, &fails, &hangs, &chatty,
    ];
    let mut command = xtask(&["matrix", "--root", path_str(&root)]);
    command.args([
        "--format",
        "json",
        "--timeout",
        "4",
        "-j",
        "4",
        "--target",
        "none",
    ]);
    for spec in specs {
        command.arg("--toolchain").arg(spec);
    }
    let start = Instant::now();
    let run = command.run_within(Duration::from_secs(300));
    let elapsed = start.elapsed();
    let report = run.code(1).json();
    let toolchains = report["toolchains"].as_array().unwrap();
    let by_spec = |spec: &Path| {
        toolchains
            .iter()
            .find(|toolchain| toolchain["spec"].as_str() == Some(path_str(spec)))
            .unwrap_or_else(|| run.fail(&format!("no toolchain {}", spec.display())))
    };
    let verdict = |spec: &Path| {
        let toolchain = by_spec(spec);
        (
            toolchain["verdict"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            toolchain["error"].as_str().unwrap_or_default().to_string(),
        )
    };
    let cells = |spec: &Path| -> Vec<(String, String, String)> {
        let id = by_spec(spec)["id"].as_str().unwrap().to_string();
        report["builds"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|build| build["toolchain"].as_str() == Some(&id))
            .map(|build| {
                let word = |key: &str| build[key].as_str().unwrap_or_default().to_string();
                (
                    format!("{} {} ({})", word("kind"), word("target"), word("mode")),
                    word("outcome"),
                    word("first_error"),
                )
            })
            .collect()
    };
    let cell = |spec: &Path, name: &str| {
        cells(spec)
            .into_iter()
            .find(|(cell, _, _)| cell == name)
            .unwrap_or_else(|| run.fail(&format!("no cell {name} for {}", spec.display())))
    };

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

    assert_eq!(verdict(&crashes).0, "ok");
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
    assert_eq!(verdict(&chatty).0, "ok");
    let chatty_cells = cells(&chatty);
    assert_eq!(chatty_cells.len(), cells_per_toolchain());
    for (name, outcome, error) in chatty_cells {
        assert_eq!(outcome, "pass", "{name}: {error}");
    }
    // Nothing hangs: the hanging builds are killed at their 4 s timeout. The bound is loose on
    // purpose, since a loaded machine slows the other cells; a hang would mean forever.
    assert!(
        elapsed < Duration::from_secs(120),
        "the matrix took {elapsed:?}"
    );
    assert!(processes_mentioning(path_str(&dir)).is_empty());
}

// ---------------------------------------------------------------------------------------------
// Cache keys: never reused when anything they depend on changed.

/// A compiler that is too old for builds, so that its matrix is one probe: cheap to rerun.
fn old_compiler(path: &Path, commit: char, comment: char) {
    let verbose_version = verbose_version_as("1.70.0", &format!(" ({commit}bcdef012 2023-06-01)"));
    wrapper(path, &verbose_version, &format!("# {comment}"));
}

#[test]
fn a_changed_compiler_or_environment_is_never_answered_from_the_cache() {
    let root = tiny_tree("hardening-cache-identity");
    let compiler = root.join("fake/rustc");
    old_compiler(&compiler, 'a', 'x');
    let run = |env: &[(&str, &str)]| {
        let run = xtask(&["matrix", "--root", path_str(&root), "--toolchain"])
            .arg(&compiler)
            // The wrapper answers `--print target-list` as the real compiler behind it, which
            // knows targets 1.70.0 did not: the target axis is left out.
            .args(["--target", "none"])
            .envs(env.iter().copied())
            .run_within(Duration::from_secs(60));
        reused(run.success())
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
    let tmp = path_str(&tmp);
    assert_eq!(
        run(&[("TMPDIR", tmp)]),
        0,
        "a changed TMPDIR was not noticed"
    );
    let ignored = [
        ("TMPDIR", tmp),
        ("RUSTFLAGS", "--cfg bogus"),
        ("RUSTC_BOOTSTRAP", "1"),
    ];
    assert_eq!(run(&ignored), 1, "a variable no process gets changed a key");
}

// ---------------------------------------------------------------------------------------------
// Interrupted and concurrent runs: killed, interrupted or concurrent, results never corrupt.

/// Starts `xtask matrix` on the tree with the real compiler, JSON on stdout.
fn start_matrix(root: &Path, extra: &[&str]) -> Child {
    xtask(&[
        "matrix",
        "--root",
        path_str(root),
        "--format",
        "json",
        "-j",
        "2",
    ])
    .arg("--toolchain")
    .arg(current_rustc())
    // Only the host's cells: the target axis has tests of its own.
    .args(["--target", "none"])
    .args(extra)
    .start()
}

/// What a started run left, as a [`Run`].
fn finish(child: Child, line: &str) -> Run {
    let output = child.wait_with_output().unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    Run {
        line: line.to_string(),
        status: output.status,
        stdout: text(&output.stdout),
        stderr: text(&output.stderr),
    }
}

/// Waits until the tree's lock file names `pid` (the run holds the lock), for at most 10 s.
fn wait_for_lock(root: &Path, pid: u32) {
    let lock = root.join("target/kshim/matrix.lock");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(&lock).ok() != Some(format!("{pid} matrix\n")) {
        assert!(Instant::now() < deadline, "run {pid} never took the lock");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn runs_that_are_killed_interrupted_or_concurrent_never_corrupt_results() {
    let root = tiny_tree("hardening-interrupted");
    let kshim = root.join("target/kshim");

    // Two runs at once: the second waits, says so, and then takes all the first one's results
    // from the cache.
    let first = start_matrix(&root, &["--no-cache"]);
    let first_pid = first.id();
    wait_for_lock(&root, first_pid);
    let second = start_matrix(&root, &[]);
    let first = finish(first, "the first matrix");
    let second = finish(second, "the second matrix");
    first.success();
    second.success().stderr_has(&format!(
        "matrix: waiting for another cargo xtask matrix (pid {first_pid}) to finish"
    ));
    let reference = results_of(&first.json());
    second.check(
        results_of(&second.json()) == reference,
        "the second run's results differ",
    );
    // The probe, the two Kbuild fixtures, and the shim's and the examples' cells.
    let steps = 1 + 2 + cells_per_toolchain();
    second.check(reused(&second) == steps, "the second run redid work");
    let written = std::fs::read_to_string(kshim.join("matrix-report.json")).unwrap();
    let written: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(results_of(&written), reference);

    // A cold cache, then runs killed at several moments, each resuming from what the last
    // one left; the run after them must give exactly the clean run's results.
    std::fs::remove_dir_all(kshim.join("cache")).unwrap();
    std::fs::remove_dir_all(kshim.join("matrix")).unwrap();
    let needle = root.display().to_string();
    let mut stopped_runs = 0;
    let mut runs = std::collections::VecDeque::from([
        (300, SIGKILL),
        (700, SIGINT),
        (500, SIGKILL),
        (900, SIGKILL),
    ]);
    while let Some((delay, signal_number)) = runs.pop_front() {
        let run = start_matrix(&root, &[]);
        std::thread::sleep(Duration::from_millis(delay));
        send(signal_number, run.id());
        let signalled = Instant::now();
        let output = finish(
            run,
            &format!("matrix, signal {signal_number} after {delay} ms"),
        );
        let stopped = signalled.elapsed();
        if signal_number == SIGINT {
            // SIGINT: prompt, nothing written, and every rustc gone.
            output
                .check(
                    stopped < Duration::from_secs(2),
                    &format!("SIGINT took {stopped:?} to act"),
                )
                .stdout_empty();
            let left = processes_mentioning(&needle);
            assert!(left.is_empty(), "left running after SIGINT: {left:#?}");
            if output.stderr.contains("interrupted")
                && !output.stderr.contains("steps had completed")
            {
                // It came before the first step (a loaded machine, or a wait for the orphans
                // of the run killed before): once more, later, at most 5.6 s after the start.
                output.check(delay < 5000, "every SIGINT came before the first step");
                runs.push_front((delay * 2, SIGINT));
                continue;
            }
        }
        if output.status.signal() != Some(signal_number) {
            // It finished before the signal came (counted below).
            output
                .success()
                .check(signal_number != SIGINT, "the SIGINT came too late");
            continue;
        }
        stopped_runs += 1;
        if signal_number == SIGINT {
            // Mid-run, it says what had completed.
            output
                .stderr_has("matrix: interrupted by SIGINT after")
                .stderr_has("no report was written");
        }
    }
    assert!(
        stopped_runs >= 3,
        "only {stopped_runs} runs were stopped midway"
    );
    let last = finish(start_matrix(&root, &[]), "the last matrix");
    last.success()
        .check(results_of(&last.json()) == reference, "the results differ");
    // Every cache entry is whole, and no temporary file is left.
    for entry in std::fs::read_dir(kshim.join("cache")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(!name.ends_with(".tmp"), "{name} left behind");
        let contents = std::fs::read_to_string(&path).unwrap();
        assert!(
            serde_json::from_str::<Value>(&contents).is_ok(),
            "{name} is not JSON: {contents}"
        );
    }
}
