// SPDX-License-Identifier: GPL-2.0
//! Hostile input: what a careless or malicious user gives `cargo xtask` ends in a message and
//! exit status 2 (or a quiet end on a closed pipe), never in a panic, a hang, a wrong exit
//! status or a false result kept in the cache. Every input is generated here, none is a
//! fixture; each test runs the real `xtask` binary under a deadline, so a hang fails the test.

use kshim_tests::{current_rustc, scratch_dir, xtask_binary};
use std::collections::BTreeSet;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};
use xtask::cache::{Cache, Key};
use xtask::catalog::{Release, FEATURES};
use xtask::expect::{expected_status, Outcome, ToolchainVerdict};
use xtask::json::{self, Value};
use xtask::judge::StepResult;
use xtask::plan::Mode;
use xtask::process::CAPTURE_LIMIT;
use xtask::report::{cell_kinds, BuildCell, FeatureCell, Observed, Report, ToolchainEntry};

/// What a finished xtask left: its status, stdout and stderr.
struct Finished {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// Runs `xtask ARGS` with `env` added, and fails the test if it runs longer than `deadline`:
/// a hang is a failure, not a test that never ends.
fn xtask_within(deadline: Duration, args: &[&str], env: &[(&str, &str)]) -> Finished {
    let mut child = Command::new(xtask_binary())
        .args(args)
        .envs(env.iter().copied())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting xtask");
    let mut pipes = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let readers = std::thread::spawn(move || {
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        let err = std::thread::spawn(move || {
            let _ = pipes.1.read_to_end(&mut stderr);
            stderr
        });
        let _ = pipes.0.read_to_end(&mut stdout);
        (stdout, err.join().unwrap())
    });
    let status = kshim_tests::wait_within(&mut child, deadline, &format!("xtask {args:?}"));
    let (stdout, stderr) = readers.join().unwrap();
    let finished = Finished {
        status,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    };
    assert!(
        !finished.stderr.contains("panicked"),
        "xtask {args:?} panicked:\n{}",
        finished.stderr
    );
    finished
}

fn xtask(args: &[&str]) -> Finished {
    xtask_within(Duration::from_secs(30), args, &[])
}

/// Asserts that the run was refused as bad input (exit 2) with a message containing `message`.
fn assert_refused(finished: &Finished, message: &str) {
    assert_eq!(
        finished.status.code(),
        Some(2),
        "expected exit status 2, stderr:\n{}",
        finished.stderr
    );
    assert!(
        finished.stderr.contains(message),
        "expected {message:?} in stderr:\n{}",
        finished.stderr
    );
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("scratch paths are UTF-8")
}

fn make_fifo(path: &Path) {
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("running mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// The number of SIGPIPE, the signal of a write to a pipe that nobody reads.
const SIGPIPE: i32 = 13;

// ---------------------------------------------------------------------------------------------
// Generated reports.

/// The targets of every toolchain's build cells: the shim and the catalog's examples.
fn targets() -> Vec<&'static str> {
    let examples: BTreeSet<&str> = FEATURES.iter().map(|feature| feature.example).collect();
    std::iter::once("kernel").chain(examples).collect()
}

/// The pin id and release of the `index`th generated pin: releases from 1.100.0 on, every one
/// above the minimum and none the same.
fn pin(index: usize) -> (String, String) {
    (format!("p{index}"), format!("1.{}.0", 100 + index))
}

/// A pin file with `count` generated pins.
fn pin_file(path: &Path, count: usize) {
    let mut text = String::new();
    for index in 0..count {
        let (id, release) = pin(index);
        text.push_str(&format!(
            "[[pin]]\nid = \"{id}\"\nrelease = \"{release}\"\nrole = \"feature\"\nrustup = \"{release}\"\n\n"
        ));
    }
    std::fs::write(path, text).unwrap();
}

/// Shard `shard` of `shards` of a whole, passing run on the generated pins `0..count`, as
/// `matrix --shard` reports it: every feature as the catalog predicts, every cell passed.
fn shard_report(count: usize, shard: usize, shards: usize) -> Report {
    let positions: Vec<usize> = (0..count)
        .filter(|position| position % shards == shard - 1)
        .collect();
    let toolchains: Vec<ToolchainEntry> = positions
        .iter()
        .map(|&position| {
            let (id, release_text) = pin(position);
            ToolchainEntry {
                id: id.clone(),
                spec: format!("pin:{id}"),
                source: None,
                pin: Some(id),
                rustc: Some("/generated/rustc".into()),
                release: Release::parse(&release_text),
                release_text: Some(release_text),
                channel: Some("stable".into()),
                commit_date: None,
                host: Some("x86_64-unknown-linux-gnu".into()),
                verdict: ToolchainVerdict::Ok,
            }
        })
        .collect();
    let features = FEATURES
        .iter()
        .map(|feature| {
            toolchains
                .iter()
                .map(|toolchain| {
                    let status = expected_status(feature, toolchain.release.unwrap());
                    FeatureCell {
                        observed: Observed::Status(status),
                        expected: Some(status),
                    }
                })
                .collect()
        })
        .collect();
    let mut builds = Vec::new();
    for toolchain in 0..toolchains.len() {
        for target in targets() {
            for &kind in cell_kinds(target) {
                for mode in Mode::ALL {
                    builds.push(BuildCell {
                        toolchain,
                        target: target.into(),
                        mode,
                        kind,
                        outcome: Outcome::Pass,
                        expected: Outcome::Pass,
                        first_error: None,
                        seconds: 0.25,
                        cached: false,
                        tests: None,
                    });
                }
            }
        }
    }
    Report {
        toolchains,
        features,
        builds,
        strict: false,
        kbuild: Vec::new(),
        shard: Some(format!("{shard}/{shards}")),
        platforms: Default::default(),
    }
}

/// The build, run and test cells of one toolchain.
fn cells_per_toolchain() -> usize {
    targets()
        .iter()
        .map(|target| 2 * cell_kinds(target).len())
        .sum()
}

fn write_json(path: &Path, value: &Value) {
    std::fs::write(path, json::to_pretty(value)).unwrap();
}

/// The `index`th build of a report's JSON, to change.
fn build_mut(report: &mut Value, index: usize) -> &mut Value {
    &mut report["builds"][index]
}

// ---------------------------------------------------------------------------------------------
// 1. False results in the cache.

/// A tiny kshim tree: a shim with one test and every example the catalog names.
fn tiny_tree(name: &str) -> PathBuf {
    kshim_tests::tiny_tree(&format!("hostile-{name}"), &targets()[1..])
}

#[test]
fn a_machine_out_of_resources_is_never_cached_and_jobs_are_capped() {
    let root = tiny_tree("resources");
    let victim = targets()[1];
    // A compiler that, for one example, fails as rustc does when the machine cannot start the
    // linker; everything else it passes to the real compiler.
    let wrapper = root.join("bin/rustc");
    std::fs::create_dir_all(wrapper.parent().unwrap()).unwrap();
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\ncase \" $* \" in *'/{victim}.rs '*)\n\
             echo 'error: could not exec the linker `cc`: Resource temporarily unavailable (os error 11)' >&2\n\
             exit 1;;\nesac\nexec '{}' \"$@\"\n",
            current_rustc().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = || {
        xtask_within(
            Duration::from_secs(300),
            &[
                "matrix",
                "--root",
                path_str(&root),
                "--toolchain",
                path_str(&wrapper),
                "--format",
                "json",
                "-j",
                "100000",
            ],
            &[],
        )
    };
    let first = run();
    assert_eq!(first.status.code(), Some(1), "{}", first.stderr);
    assert!(
        first.stderr.contains("-j 100000 lowered to"),
        "{}",
        first.stderr
    );
    let second = run();
    assert_eq!(second.status.code(), Some(1), "{}", second.stderr);
    let report = json::parse(&second.stdout).unwrap();
    let mut victims = 0;
    for build in report["builds"].as_array().unwrap() {
        let ran = build["outcome"] != "skipped";
        if build["target"] == victim && build["kind"] == "build" {
            victims += 1;
            assert_eq!(build["outcome"], "fail");
            assert_eq!(build["cached"], false, "the machine's failure was cached");
        } else if ran && build["target"] != victim {
            assert_eq!(build["cached"], true, "{build}");
        }
    }
    assert_eq!(victims, 2);
    for entry in std::fs::read_dir(root.join("target/kshim/cache")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default();
        assert!(!text.contains("Resource temporarily unavailable"), "{text}");
    }
}

/// A mount this test made, undone however the test ends (lazily, should a process still hold a
/// file under it).
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let done = Command::new("umount").arg(&self.0).status();
        if !done.is_ok_and(|status| status.success()) {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
}

/// Runs each `mount` command line in turn, the first of which mounts on `point`; `None` when
/// this machine does not let the test mount (not root). Under `CI=true` that is a failure: the
/// fault tests must run there.
fn mounted(point: &Path, commands: &[&[&str]]) -> Option<Mounted> {
    let mut guard = None;
    for args in commands {
        let output = Command::new("mount")
            .args(*args)
            .stdin(Stdio::null())
            .output();
        let ok = output.as_ref().is_ok_and(|output| output.status.success());
        if !ok {
            let why = match &output {
                Ok(output) => String::from_utf8_lossy(&output.stderr).into_owned(),
                Err(error) => error.to_string(),
            };
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true, and mount {args:?} failed: {why}"
            );
            eprintln!("skipped: mount {args:?} failed (not root?): {why}");
            return None;
        }
        guard.get_or_insert_with(|| Mounted(point.to_path_buf()));
    }
    guard
}

/// The matrix of the compiler running these tests on `root`, host cells only, as JSON.
fn host_matrix(root: &Path, extra: &[&str]) -> (Finished, Value) {
    let rustc = current_rustc();
    let mut args = vec![
        "matrix",
        "--root",
        path_str(root),
        "--toolchain",
        path_str(&rustc),
        "--target",
        "none",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let finished = xtask_within(Duration::from_secs(120), &args, &[]);
    let report = json::parse(&finished.stdout)
        .unwrap_or_else(|error| panic!("no JSON report ({error}):\n{}", finished.stderr));
    (finished, report)
}

/// The build cells that ran and failed, and how many of those came from the cache.
fn failures(report: &Value) -> (usize, usize) {
    let failed: Vec<&Value> = report["builds"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|build| build["outcome"] == "fail")
        .collect();
    let cached = failed
        .iter()
        .filter(|build| build["cached"] == true)
        .count();
    (failed.len(), cached)
}

/// The one toolchain's output directory of a run on `root`.
fn output_directory(root: &Path) -> PathBuf {
    let matrix = root.join("target/kshim/matrix");
    let directories: Vec<PathBuf> = std::fs::read_dir(&matrix)
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect();
    assert_eq!(directories.len(), 1, "{directories:?}");
    directories.into_iter().next().unwrap()
}

/// A fault under the output directory (read-only, or a full disk) fails cells with the system's
/// error; once the fault is gone, the next run builds them again and they pass.
fn machine_fault_is_not_cached(name: &str, mount: impl Fn(&Path) -> Option<Mounted>, error: &str) {
    let root = tiny_tree(name);
    // A first run makes the output directory; its passes are then forgotten.
    let (first, before) = host_matrix(&root, &[]);
    assert_eq!(first.status.code(), Some(0), "{}", first.stderr);
    let output = output_directory(&root);
    std::fs::remove_dir_all(root.join("target/kshim/cache")).unwrap();
    {
        let Some(_mounted) = mount(&output) else {
            return;
        };
        let (faulty, report) = host_matrix(&root, &[]);
        assert_eq!(faulty.status.code(), Some(1), "{}", faulty.stderr);
        let (failed, _) = failures(&report);
        assert!(failed > 0, "no cell failed:\n{}", faulty.stdout);
        assert!(
            faulty.stdout.contains(error),
            "no {error:?} in the report:\n{}",
            faulty.stdout
        );
    }
    let (after, report) = host_matrix(&root, &[]);
    assert_eq!(
        failures(&report),
        (0, 0),
        "the machine's failures outlived it:\n{}",
        after.stdout
    );
    assert!(
        results_of(&report) == results_of(&before),
        "after the fault, the results differ from those before it:\n{}",
        after.stdout
    );
    assert_eq!(after.status.code(), Some(0), "{}", after.stderr);
}

/// A report without what differs between two runs with the same results: timings and whether
/// a result came from the cache.
fn results_of(report: &Value) -> Value {
    match report {
        Value::Object(members) => Value::Object(
            members
                .iter()
                .filter(|(key, _)| *key != "seconds" && *key != "cached" && *key != "date")
                .map(|(key, value)| (key.clone(), results_of(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(results_of).collect()),
        other => other.clone(),
    }
}

#[test]
fn a_read_only_output_directory_fails_cells_that_are_not_cached() {
    machine_fault_is_not_cached(
        "read-only",
        |output| {
            let point = path_str(output);
            mounted(
                output,
                &[&["--bind", point, point], &["-o", "remount,bind,ro", point]],
            )
        },
        "Read-only file system",
    );
}

#[test]
fn a_full_disk_under_the_outputs_fails_cells_that_are_not_cached() {
    machine_fault_is_not_cached(
        "full-disk",
        |output| {
            let point = path_str(output);
            mounted(output, &[&["-t", "tmpfs", "-o", "size=2m", "tmpfs", point]])
        },
        "No space left on device",
    );
}

#[test]
fn a_linker_that_writes_nothing_fails_links_instead_of_running_old_binaries() {
    let root = tiny_tree("silent-cc");
    let (first, before) = host_matrix(&root, &[]);
    assert_eq!(first.status.code(), Some(0), "{}", first.stderr);
    // A `cc` first on the PATH the xtask hands its compilers: it exits 0 and writes nothing.
    let bin = root.join("silent-bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("cc"), "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(bin.join("cc"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let rustc = current_rustc();
    let silent = xtask_within(
        Duration::from_secs(120),
        &[
            "matrix",
            "--root",
            path_str(&root),
            "--toolchain",
            path_str(&rustc),
            "--target",
            "none",
            "--format",
            "json",
            "--no-cache",
        ],
        &[("PATH", &path)],
    );
    assert_eq!(silent.status.code(), Some(1), "{}", silent.stderr);
    let report = json::parse(&silent.stdout).unwrap();
    let builds = report["builds"].as_array().unwrap();
    let passed_before = before["builds"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|build| build["outcome"] == "pass")
        .count();
    // Every cell links a program (a test harness or an example), except the shim's library
    // build: none of those may pass on binaries of the run before.
    let linked: Vec<&Value> = builds
        .iter()
        .filter(|build| !(build["target"] == "kernel" && build["kind"] == "build"))
        .collect();
    assert!(!linked.is_empty() && passed_before > linked.len() / 2);
    for build in linked {
        assert_ne!(
            build["outcome"], "pass",
            "an old binary was judged: {build}"
        );
        assert_eq!(build["cached"], false, "{build}");
    }
    assert!(
        silent.stdout.contains("did not write"),
        "no cell says the linker wrote nothing:\n{}",
        silent.stdout
    );
}

#[test]
fn cache_entries_that_are_no_files_or_too_large_are_misses() {
    let directory = scratch_dir("hostile-cache");
    let cache = Cache::new(directory.clone(), true);
    let entry = |key: u128| directory.join(format!("{}.json", Key(key)));
    make_fifo(&entry(1));
    std::os::unix::fs::symlink("/dev/zero", entry(2)).unwrap();
    std::fs::create_dir(entry(3)).unwrap();
    // Sparse: it takes no room, but says it holds 65 MiB.
    let file = std::fs::File::create(entry(4)).unwrap();
    file.set_len(65 << 20).unwrap();
    let start = Instant::now();
    for key in 1..=4 {
        assert!(cache.load(Key(key), None).is_none(), "entry {key}");
    }
    assert!(start.elapsed() < Duration::from_secs(5));

    // The largest entry a run writes, a module log as long as a capture keeps, still loads.
    let log = "[info] m: a line of the module's log\n".repeat(CAPTURE_LIMIT / 36);
    let result = StepResult {
        outcome: Outcome::Pass,
        log: Some(log.clone()),
        ..StepResult::skipped(String::new())
    };
    cache.store(Key(5), &result, None).unwrap();
    let start = Instant::now();
    let loaded = cache.load(Key(5), None).expect("the largest entry loads");
    eprintln!(
        "a cache entry of {:.1} MB loads in {:.2} s",
        std::fs::metadata(entry(5)).unwrap().len() as f64 / 1e6,
        start.elapsed().as_secs_f64()
    );
    assert_eq!(loaded.log.as_deref(), Some(log.as_str()));
}

// ---------------------------------------------------------------------------------------------
// 3. Hangs.

#[test]
fn fifos_devices_and_directories_are_refused_at_once() {
    let directory = scratch_dir("hostile-fifos");
    let fifo = directory.join("fifo.json");
    make_fifo(&fifo);
    let pins = directory.join("pins.toml");
    pin_file(&pins, 2);
    let fifo = path_str(&fifo);
    let directory_arg = path_str(&directory);
    for report in [fifo, "/dev/zero", directory_arg] {
        let merged = xtask(&["merge", "--pins", path_str(&pins), report]);
        assert_refused(&merged, "not a regular file");
        let docs = xtask(&["docs", "--check", "--report", report]);
        assert_refused(&docs, "not a regular file");
    }
    let tree = tiny_tree("fifo-pins");
    let matrix = xtask(&["matrix", "--root", path_str(&tree), "--pins", fifo]);
    assert_refused(&matrix, "reading the pin file");
    assert!(matrix.stderr.contains("it is a FIFO, not a regular file"));
}

// ---------------------------------------------------------------------------------------------
// 4. Panics, and 8. text printed raw.

#[test]
fn long_names_huge_timeouts_and_closed_pipes_end_cleanly() {
    let directory = scratch_dir("hostile-panics");
    let pins = directory.join("pins.toml");
    pin_file(&pins, 2);
    let mut first = shard_report(2, 1, 2);
    // Longer than the widths the standard library's formatting takes, with a terminal's
    // escape sequence and a line break in it.
    first.toolchains[0].id = format!("{}\u{1b}[2J\nX", "n".repeat(70_000));
    let first_path = directory.join("1.json");
    let second_path = directory.join("2.json");
    write_json(&first_path, &first.to_json());
    write_json(&second_path, &shard_report(2, 2, 2).to_json());
    let args = [
        "merge",
        "--pins",
        path_str(&pins),
        path_str(&first_path),
        path_str(&second_path),
    ];
    let merged = xtask(&args);
    assert_eq!(merged.status.code(), Some(0), "{}", merged.stderr);
    assert!(merged
        .stdout
        .contains(&format!("{}\\e[2J\\nX", "n".repeat(70_000))));
    assert!(!merged.stdout.contains('\u{1b}'));

    // A closed pipe: the output (wider than a pipe's buffer) ends by SIGPIPE, quietly.
    let mut child = Command::new(xtask_binary())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.signal(), Some(SIGPIPE), "{output:?}");
    assert!(output.stderr.is_empty(), "{output:?}");

    let tree = tiny_tree("timeout");
    let timeout = xtask(&[
        "matrix",
        "--root",
        path_str(&tree),
        "--timeout",
        "18446744073709551615",
    ]);
    assert_refused(
        &timeout,
        "--timeout 18446744073709551615 is more than a day",
    );
    let format = xtask(&["merge", "--format", "\u{1b}]0;owned\u{7}"]);
    assert_refused(&format, "not `\\e]0;owned\\u{7}`");
    assert!(!format.stderr.contains('\u{1b}'));
}

// ---------------------------------------------------------------------------------------------
// 5. merge and 9. docs --report: whole, consistent reports or exit 2.

#[test]
fn merge_and_docs_refuse_incomplete_or_contradictory_reports() {
    let directory = scratch_dir("hostile-merge");
    let pins = directory.join("pins.toml");
    pin_file(&pins, 4);
    let first = shard_report(4, 1, 2).to_json();
    let second_path = directory.join("2.json");
    write_json(&second_path, &shard_report(4, 2, 2).to_json());
    let merge = |name: &str, first: &Value| {
        let path = directory.join(name);
        write_json(&path, first);
        let merged = xtask(&[
            "merge",
            "--pins",
            path_str(&pins),
            path_str(&path),
            path_str(&second_path),
        ]);
        let docs = xtask(&["docs", "--check", "--report", path_str(&path)]);
        (merged, docs)
    };
    let (merged, _) = merge("whole.json", &first);
    assert_eq!(merged.status.code(), Some(0), "{}", merged.stderr);

    let mut no_builds = first.clone();
    no_builds["builds"] = Value::Array(Vec::new());
    let (merged, docs) = merge("no-builds.json", &no_builds);
    let cells = cells_per_toolchain();
    assert_refused(
        &merged,
        &format!("is not a whole report: toolchain p0 lacks {cells} of the {cells}"),
    );
    assert_refused(&docs, "is not a whole report: toolchain p0 lacks");

    let mut repeated = first.clone();
    let copy = repeated["builds"][0].clone();
    repeated["builds"].as_array_mut().unwrap().push(copy);
    assert_refused(
        &merge("repeated.json", &repeated).0,
        "build kernel (kernel) on p0: the cell is there twice",
    );

    let mut both_fail = first.clone();
    build_mut(&mut both_fail, 0)["outcome"] = "fail".into();
    build_mut(&mut both_fail, 0)["expected"] = "fail".into();
    assert_refused(
        &merge("both-fail.json", &both_fail).0,
        "it expects `fail`, but the catalog expects `pass`",
    );

    let mut wrong_ok = first.clone();
    build_mut(&mut wrong_ok, 3)["ok"] = false.into();
    assert_refused(
        &merge("wrong-ok.json", &wrong_ok).0,
        "builds[3]: `ok` is false, but what was observed and what was expected say true",
    );

    // The second toolchain of the shard renamed to the first's id: its cells would vanish.
    let mut collision = first.clone();
    collision["toolchains"][1]["id"] = "p0".into();
    assert_refused(
        &merge("collision.json", &collision).0,
        "toolchains[1] has the id `p0` of toolchains[0]",
    );

    let infinite = json::to_pretty(&first).replacen("\"seconds\": 0.25", "\"seconds\": 1e999", 1);
    let path = directory.join("infinite.json");
    std::fs::write(&path, infinite).unwrap();
    let merged = xtask(&[
        "merge",
        "--pins",
        path_str(&pins),
        path_str(&path),
        path_str(&second_path),
    ]);
    assert_refused(&merged, "is not a matrix report");
}

#[test]
fn merge_and_docs_recompute_every_prediction_and_refuse_what_disagrees() {
    let directory = scratch_dir("hostile-merge-predictions");
    let pins = directory.join("pins.toml");
    pin_file(&pins, 4);
    let first = shard_report(4, 1, 2).to_json();
    let second_path = directory.join("2.json");
    write_json(&second_path, &shard_report(4, 2, 2).to_json());
    let check = |name: &str, report: &Value, message: &str| {
        let path = directory.join(name);
        write_json(&path, report);
        let merged = xtask(&[
            "merge",
            "--pins",
            path_str(&pins),
            path_str(&path),
            path_str(&second_path),
        ]);
        assert_refused(&merged, message);
        assert!(merged.stderr.contains(name), "{}", merged.stderr);
        if !name.starts_with("strict") && !name.starts_with("release") {
            let docs = xtask(&["docs", "--check", "--report", path_str(&path)]);
            assert_refused(&docs, message);
        }
    };
    let asm_goto = FEATURES
        .iter()
        .position(|feature| feature.name == "asm_goto")
        .unwrap();
    // A cell that agrees with itself and not with the catalog: gated where asm_goto is stable.
    let mut gated = first.clone();
    let cell = &mut gated["features"][asm_goto]["toolchains"]["p0"];
    cell["observed"] = "gated".into();
    cell["stable_since"] = Value::Null;
    cell["expected"] = "gated".into();
    cell["expected_stable_since"] = Value::Null;
    check(
        "gated.json",
        &gated,
        "feature asm_goto on p0: it expects `gated`, but the catalog predicts `stable`",
    );
    let mut later = first.clone();
    later["features"][asm_goto]["toolchains"]["p0"]["stable_since"] = "1.150.0".into();
    later["features"][asm_goto]["toolchains"]["p0"]["expected_stable_since"] = "1.150.0".into();
    check(
        "later.json",
        &later,
        "feature asm_goto on p0: stable since 1.150.0, after the compiler's own release 1.100.0",
    );
    let mut date = first.clone();
    date["toolchains"][0]["commit_date"] = "1999-99-99".into();
    check(
        "date.json",
        &date,
        "toolchain p0: its commit date `1999-99-99` is no date",
    );
    let mut release = first.clone();
    release["toolchains"][0]["release"] = "1.101.0".into();
    check(
        "release.json",
        &release,
        "toolchain p0 reports release 1.101.0, but its pin p0 wants 1.100.0",
    );
    let mut strict = first.clone();
    strict["strict"] = true.into();
    check(
        "strict.json",
        &strict,
        "run every shard with the same --strict",
    );
}

// ---------------------------------------------------------------------------------------------
// 6. Linear time, and 7. misleading results.

#[test]
fn large_reports_are_read_checked_merged_and_shown_in_linear_time() {
    let directory = scratch_dir("hostile-large");
    // KSHIM_HOSTILE_SIZES=100,1000,3000 measures larger inputs (BENCHMARKS.md).
    let sizes: Vec<usize> = std::env::var("KSHIM_HOSTILE_SIZES")
        .unwrap_or_else(|_| "40,400".into())
        .split(',')
        .map(|size| size.parse().unwrap())
        .collect();
    for count in sizes {
        let pins = directory.join(format!("pins-{count}.toml"));
        pin_file(&pins, count);
        let paths: Vec<PathBuf> = (1..=2)
            .map(|shard| {
                let path = directory.join(format!("{count}-{shard}.json"));
                write_json(&path, &shard_report(count, shard, 2).to_json());
                path
            })
            .collect();
        let bytes: u64 = paths
            .iter()
            .map(|path| std::fs::metadata(path).unwrap().len())
            .sum();
        let start = Instant::now();
        let merged = xtask_within(
            Duration::from_secs(120),
            &[
                "merge",
                "--pins",
                path_str(&pins),
                path_str(&paths[0]),
                path_str(&paths[1]),
            ],
            &[],
        );
        let seconds = start.elapsed().as_secs_f64();
        assert_eq!(merged.status.code(), Some(0), "{}", merged.stderr);
        eprintln!(
            "merge of {count} toolchains ({:.1} MB of reports, {} build cells): {seconds:.2} s",
            bytes as f64 / 1e6,
            count * cells_per_toolchain()
        );
        assert!(seconds < 30.0 * (count as f64 / 400.0).max(1.0));
    }
}

#[test]
fn a_tree_that_is_no_checkout_or_a_machine_without_cc_is_one_error() {
    let not_a_checkout = scratch_dir("hostile-not-a-checkout");
    let refused = xtask(&["matrix", "--root", path_str(&not_a_checkout)]);
    assert_refused(
        &refused,
        "not a kshim checkout (it has no kernel-shim/src/lib.rs)",
    );
    assert!(
        !not_a_checkout.join("target").exists(),
        "--root created target/ before it failed"
    );

    let tree = tiny_tree("no-cc");
    let rustc = current_rustc();
    let no_cc = xtask_within(
        Duration::from_secs(60),
        &[
            "matrix",
            "--root",
            path_str(&tree),
            "--toolchain",
            path_str(&rustc),
        ],
        &[("PATH", "/nonexistent")],
    );
    assert_refused(&no_cc, "no `cc` on PATH (/nonexistent)");
    assert!(
        !tree.join("target/kshim/matrix-report.json").exists(),
        "a report was written"
    );
}

#[test]
fn audit_inputs_that_are_no_files_are_refused_at_once() {
    let directory = scratch_dir("hostile-audit");
    let root = directory.join("lib.rs");
    let kconfig = directory.join("Kconfig");
    make_fifo(&root);
    make_fifo(&kconfig);
    let finished = xtask(&["audit", path_str(&root)]);
    assert_refused(&finished, "it is a FIFO, not a regular file");
    let finished = xtask(&[
        "audit",
        "--features",
        "lint_reasons",
        "--kconfig",
        path_str(&kconfig),
    ]);
    assert_refused(&finished, "it is a FIFO, not a regular file");
}

#[test]
fn every_command_answers_help_typos_and_the_common_flags_as_cargo_does() {
    // `docs` says what it did, even when that is nothing.
    let docs = xtask(&["docs", "--check", "-q", "--color=never"]);
    assert_eq!(docs.status.code(), Some(0), "{}", docs.stderr);
    assert!(
        docs.stderr.starts_with("docs: all ")
            && docs.stderr.contains("generated files are up to date"),
        "{}",
        docs.stderr
    );
    // A bare `cargo xtask` and `help` list the commands; `COMMAND --help` is that command's.
    for args in [&[][..], &["help"][..]] {
        let list = xtask(args);
        assert_eq!(list.status.code(), Some(0));
        assert!(
            list.stdout.contains("\nCommands:\n    matrix "),
            "{}",
            list.stdout
        );
    }
    let help = xtask(&["audit", "--help"]);
    assert!(
        help.stdout.starts_with("Usage: cargo xtask audit [FLAGS]")
            && !help.stdout.contains("xtask matrix"),
        "{}",
        help.stdout
    );
    assert_refused(&xtask(&["usage", "--jobz", "2"]), "did you mean `--jobs`?");
    assert_refused(&xtask(&["merj"]), "did you mean `merge`?");
    assert_refused(&xtask(&["docs", "--color", "blue"]), "--color must be");
}

// ---------------------------------------------------------------------------------------------
// 2. Provisioning changes nothing it was not asked to.

/// Every path under `directory` with its size and modification time, in name order: what a
/// run that changes nothing leaves as it was.
fn snapshot(directory: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
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

#[test]
fn a_dry_run_with_a_debian_compiler_not_there_changes_nothing() {
    let tree = tiny_tree("dry-run");
    let toolchains = kshim_tests::project_root().join("target/toolchains");
    // Only the private apt and the top of the prefixes: the prefixes' insides are large.
    let apt = toolchains.join("apt");
    let before = (
        snapshot(&apt),
        std::fs::read_dir(toolchains.join("debian"))
            .map(|entries| entries.count())
            .ok(),
    );
    let finished = xtask_within(
        Duration::from_secs(60),
        &[
            "matrix",
            "--dry-run",
            "--root",
            path_str(&tree),
            "--toolchain",
            // A suite the private apt has never listed: a run that provisions fetches it.
            "debian:bookwrom:rustc",
        ],
        &[],
    );
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    let after = (
        snapshot(&apt),
        std::fs::read_dir(toolchains.join("debian"))
            .map(|entries| entries.count())
            .ok(),
    );
    assert!(
        before == after,
        "--dry-run changed {}",
        toolchains.display()
    );
}

#[test]
fn toolchains_install_waits_for_the_lock_a_matrix_holds() {
    let directory = scratch_dir("hostile-install-lock");
    // Built first, so that the build's time is not taken for waiting.
    let binary = xtask_binary();
    // The lock of the checkout whose target/toolchains install fills, as a matrix there holds
    // it: its id (a live process, this test's) in the file, and the lock held.
    let lock = kshim_tests::project_root().join("target/kshim/matrix.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    /// Ends the holder however the test ends.
    struct Holder(std::process::Child);
    impl Drop for Holder {
        fn drop(&mut self) {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", self.0.id())])
                .status();
            let _ = self.0.wait();
        }
    }
    let holder = Holder(
        Command::new("setsid")
            .args(["flock", path_str(&lock), "sleep", "600"])
            .stdin(Stdio::null())
            .spawn()
            .expect("running setsid flock"),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while Command::new("flock")
        .args(["-n", path_str(&lock), "true"])
        .status()
        .unwrap()
        .success()
    {
        assert!(Instant::now() < deadline, "flock never took the lock");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::write(&lock, format!("{}\n", std::process::id())).unwrap();
    // `--only` naming no pin: once it has the lock, it ends at once with exit 2 and installs
    // nothing (also when it wrongly takes no lock).
    let pins = directory.join("pins.toml");
    std::fs::write(&pins, kshim_tests::ONE_PIN).unwrap();
    let stderr = directory.join("stderr");
    let mut install = Command::new(binary)
        .args(["toolchains", "--pins", path_str(&pins), "install"])
        .args(["--no-rustup", "--only", "no-such-pin"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let early = install.try_wait().unwrap();
    let said = std::fs::read_to_string(&stderr).unwrap();
    drop(holder);
    let status = kshim_tests::wait_within(&mut install, Duration::from_secs(30), "install");
    assert!(
        early.is_none(),
        "toolchains install ran while a matrix held the lock:\n{said}"
    );
    assert!(
        said.contains("toolchains install: waiting")
            && said.contains(&format!("(pid {})", std::process::id())),
        "{said}"
    );
    assert_eq!(
        status.code(),
        Some(2),
        "{}",
        std::fs::read_to_string(&stderr).unwrap()
    );
}

#[test]
fn a_lock_held_only_by_what_a_dead_run_left_is_reclaimed() {
    let tree = tiny_tree("orphan-lock");
    // Built first: a build that outlasts the orphan would find the lock free.
    xtask_binary();
    let lock = tree.join("target/kshim/matrix.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    // A run that died by SIGKILL: its id in the lock file, and a process it started (in a
    // process group of its own, as the runner starts them) still holding the lock.
    let mut dead = Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    /// Ends the orphan however the test ends.
    struct Orphan(std::process::Child);
    impl Drop for Orphan {
        fn drop(&mut self) {
            // The orphan leads its own process group (setsid): it and its `sleep`.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", self.0.id())])
                .status();
            let _ = self.0.wait();
        }
    }
    let _orphan = Orphan(
        Command::new("setsid")
            .args(["flock", path_str(&lock), "sleep", "600"])
            .stdin(Stdio::null())
            .spawn()
            .expect("running setsid flock"),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while Command::new("flock")
        .args(["-n", path_str(&lock), "true"])
        .status()
        .unwrap()
        .success()
    {
        assert!(Instant::now() < deadline, "flock never took the lock");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::write(&lock, format!("{dead_pid}\n")).unwrap();
    let finished = xtask_within(
        Duration::from_secs(60),
        &[
            "matrix",
            "--root",
            path_str(&tree),
            "--toolchain",
            "/nonexistent/rustc",
        ],
        &[],
    );
    assert!(
        finished
            .stderr
            .contains(&format!("(pid {dead_pid}) is dead")),
        "{}",
        finished.stderr
    );
    assert!(finished.stderr.contains("sleep"), "{}", finished.stderr);
    assert_eq!(finished.status.code(), Some(1), "{}", finished.stderr);
}
