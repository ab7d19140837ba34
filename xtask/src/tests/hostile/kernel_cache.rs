// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask kernel`'s cache and build directories against what happens to a tree: a line
//! added to a tree after a passing build, a run killed with SIGKILL in `make prepare`, a `make`
//! killed after `--timeout`, two trees of one name, a path that is no tree. The trees are small
//! ones whose Makefile plays Kbuild (`commands::kernel::tests::playing_tree`), with the files
//! the rules reader reads copied from the real 6.12 tree; the compiler is debian-1.98.1. Without
//! the tree, the compiler or the build tools, a test says so and passes.

use super::*;
use std::time::{Duration, Instant};

const COMPILER: &str = "debian-1.98.1";

/// A playing tree in `mode` that the rules reader takes too, or `None` (with a note).
fn kbuild_tree(name: &str, mode: &str) -> Option<PathBuf> {
    let real = crate::kernel::rules::tests::real_tree("6.12")?;
    let root = crate::commands::kernel::tests::playing_tree(name, mode);
    for file in [
        "init/Kconfig",
        "rust/Makefile",
        "rust/kernel/lib.rs",
        "scripts/Makefile.build",
        "scripts/min-tool-version.sh",
    ] {
        let to = root.join(file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(real.join(file), to).unwrap();
    }
    Some(root)
}

/// The report's one cell, or `None` (with a note) when what the test needs is not here.
fn only_cell(finished: &Finished) -> Option<Value> {
    let report = json::parse(&finished.stdout)
        .unwrap_or_else(|error| panic!("no JSON report ({error}):\n{}", finished.stderr));
    let cell = report["cells"][0].clone();
    let reason = cell["reason"].as_str().unwrap_or_default();
    let missing = [
        "not installed",
        "the build tools are missing",
        "RUST_LIB_SRC",
    ];
    if cell["real"] == "not run" && missing.iter().any(|what| reason.contains(what)) {
        eprintln!("note: {reason}; skipped");
        return None;
    }
    Some(cell)
}

fn kernel(tree: &Path, extra: &[&str]) -> Finished {
    let mut args = vec!["kernel", "--tree", path_str(tree), "--toolchain", COMPILER];
    args.extend_from_slice(&["--format", "json"]);
    args.extend_from_slice(extra);
    xtask_within(Duration::from_secs(600), &args, &[])
}

/// After a passing build, `#![feature(this_feature_does_not_exist)]` added to the tree's
/// `rust/kernel/lib.rs` was "pass (cached)" with the false finding "predicted fail, really
/// pass", exit 1, because a local tree was keyed by its path alone.
#[test]
fn a_line_added_to_a_tree_after_a_passing_build_is_built_again() {
    let Some(tree) = kbuild_tree("kernel-cache-line", "pass") else {
        return;
    };
    let _turn = crate::tests::support::the_kernel_dirs_lock();
    let first = kernel(&tree, &[]);
    let Some(cell) = only_cell(&first) else {
        return;
    };
    assert_eq!(first.status.code(), Some(0), "{}", first.stderr);
    assert_eq!(
        (&cell["predicted"], &cell["real"]),
        (&"pass".into(), &"pass".into())
    );
    // Nothing changed: from the cache, prediction and result.
    let again = kernel(&tree, &[]);
    let cell = only_cell(&again).unwrap();
    assert_eq!(cell["cached"], true, "{cell:#}");
    assert!(!again.stderr.contains("predicting"), "{}", again.stderr);
    let lib = tree.join("rust/kernel/lib.rs");
    let mut text = std::fs::read_to_string(&lib).unwrap();
    text.insert_str(0, "#![feature(this_feature_does_not_exist)]\n");
    std::fs::write(&lib, text).unwrap();
    let changed = kernel(&tree, &[]);
    let cell = only_cell(&changed).unwrap();
    assert_eq!(changed.status.code(), Some(0), "{}", changed.stderr);
    assert_eq!(cell["cached"], false, "{cell:#}");
    assert_eq!(cell["predicted"], "fail", "{cell:#}");
    assert_eq!(cell["real"], "fail", "{cell:#}");
    assert_eq!(cell["finding"], false, "{cell:#}");
    std::fs::remove_dir_all(tree).unwrap();
}

/// A run killed with SIGKILL in `make prepare` left its `make`'s children running; the next run
/// went on without them ("not run: … removing …/build/6.12: Directory not empty (os error 39)"
/// on a real tree), and one wrote into the build directory after the next run had sealed it.
/// They hold the run lock now: the next run ends them before it touches the directory.
#[test]
fn a_run_killed_in_make_prepare_leaves_nothing_that_writes_into_the_next() {
    let Some(tree) = kbuild_tree("kernel-cache-orphan", "orphan") else {
        return;
    };
    let _turn = crate::tests::support::the_kernel_dirs_lock();
    let scratch = crate::tests::support::scratch_dir("kernel-cache-orphan");
    let log = scratch.join("stderr");
    let mut first = std::process::Command::new(xtask_binary())
        .args(["kernel", "--tree", path_str(&tree), "--toolchain", COMPILER])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let name = tree.file_name().unwrap().to_string_lossy().into_owned();
    let build = crate::project_root().join(format!("target/kernel/build/path-{name}"));
    // Killed once `prepare`'s recipe has started (the progress line comes before `make` does).
    let deadline = Instant::now() + Duration::from_secs(300);
    while !build.join("orphan-started").exists() {
        if let Ok(Some(status)) = first.try_wait() {
            // No tools or no compiler: the run ended before any make.
            let said = std::fs::read_to_string(&log).unwrap_or_default();
            eprintln!("note: the run ended ({status}) before make prepare; skipped:\n{said}");
            return;
        }
        let said = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(Instant::now() < deadline, "no make prepare:\n{said}");
        std::thread::sleep(Duration::from_millis(50));
    }
    first.kill().unwrap();
    first.wait().unwrap();
    let killed = Instant::now();
    std::fs::write(tree.join("mode"), "pass").unwrap();
    let rerun = kernel(&tree, &[]);
    let cell = only_cell(&rerun).unwrap();
    assert_eq!(rerun.status.code(), Some(0), "{}", rerun.stderr);
    assert_eq!(cell["real"], "pass", "{cell:#}");
    assert!(rerun.stderr.contains("is dead; ending"), "{}", rerun.stderr);
    // The orphan's write comes 20 s into prepare: wait past it.
    std::thread::sleep(Duration::from_secs(22).saturating_sub(killed.elapsed()));
    assert!(build.is_dir(), "no build directory {}", build.display());
    assert!(
        !build.join("late").exists(),
        "the killed run's make wrote into the next run's build directory"
    );
    std::fs::remove_dir_all(build).unwrap();
    std::fs::remove_dir_all(tree).unwrap();
}

/// A `make` killed after `--timeout`: the reason was in the JSON alone; the table, its Markdown
/// and the progress line said only what `make` had printed last ("not run  make: Entering
/// directory '…'"), not that it was killed, nor which.
#[test]
fn a_make_killed_after_the_timeout_is_said_in_every_format() {
    let Some(tree) = kbuild_tree("kernel-timeout", "slow") else {
        return;
    };
    let _turn = crate::tests::support::the_kernel_dirs_lock();
    let killed = "make prepare: killed after 2 s (--timeout)";
    let run = |format: &str| {
        let args = ["kernel", "--tree", path_str(&tree), "--toolchain", COMPILER];
        // `--wide`: each row whole, not as a narrow terminal would split the table.
        let args = [&args[..], &["--wide", "--timeout", "2", "--format", format]].concat();
        let finished = xtask_within(Duration::from_secs(600), &args, &[]);
        let missing = [
            "not installed",
            "the build tools are missing",
            "RUST_LIB_SRC",
        ];
        let skipped = missing.iter().any(|what| finished.stdout.contains(what));
        (!skipped).then_some(finished)
    };
    let Some(human) = run("human") else {
        eprintln!("note: no build tools or compiler; skipped");
        return;
    };
    assert!(
        human
            .stdout
            .lines()
            .any(|line| line.contains(" not run ") && line.contains(killed)),
        "{}\n{}",
        human.stdout,
        human.stderr
    );
    assert!(
        human
            .stderr
            .lines()
            .any(|line| line.contains("not run in ") && line.contains(killed)),
        "{}",
        human.stderr
    );
    let markdown = run("markdown").unwrap().stdout;
    assert!(
        markdown
            .lines()
            .any(|line| line.starts_with("| ") && line.contains(killed)),
        "{markdown}"
    );
    std::fs::remove_dir_all(tree).unwrap();
}

/// `a/linux` and `b/linux` in one run were both `path-linux`, with one build directory.
#[test]
fn two_trees_of_one_name_are_two_trees() {
    let scratch = crate::tests::support::scratch_dir("kernel-cache-names");
    for side in ["a", "b"] {
        std::fs::create_dir_all(scratch.join(side).join("linux")).unwrap();
    }
    let (a, b) = (scratch.join("a/linux"), scratch.join("b/linux"));
    let finished = xtask(&[
        "kernel",
        "--tree",
        path_str(&a),
        "--tree",
        path_str(&b),
        "--tree",
        path_str(&a),
        "--toolchain",
        COMPILER,
        "--format",
        "json",
    ]);
    let report = json::parse(&finished.stdout).unwrap();
    let ids: Vec<&str> = report["trees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tree| tree["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "the same tree named twice is one: {ids:?}");
    assert_ne!(ids[0], ids[1]);
    assert!(
        ids.iter().all(|id| id.starts_with("path-linux-")),
        "{ids:?}"
    );
    // Deterministic: the same paths, the same ids.
    let again = xtask(&[
        "kernel",
        "--tree",
        path_str(&a),
        "--tree",
        path_str(&b),
        "--toolchain",
        COMPILER,
        "--format",
        "json",
    ]);
    let again = json::parse(&again.stdout).unwrap();
    assert_eq!(again["trees"][1]["id"], ids[1]);
}

/// `--tree /nonexistent/path` was a tree `path-path`, not run, exit 0.
#[test]
fn a_tree_path_that_is_no_directory_is_refused_at_once() {
    let scratch = crate::tests::support::scratch_dir("kernel-cache-no-dir");
    let file = scratch.join("file");
    std::fs::write(&file, "").unwrap();
    let missing = scratch.join("nonexistent/path");
    for (tree, message) in [
        (missing, "/nonexistent/path: no such directory"),
        (file, "file: is not a directory"),
    ] {
        let refused = xtask(&["kernel", "--tree", path_str(&tree)]);
        assert_refused(&refused, message);
        // At once: before the build tools, compilers or trees are looked for, which say so.
        assert_eq!(refused.stderr.lines().count(), 1, "{}", refused.stderr);
    }
}
