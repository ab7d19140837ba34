// SPDX-License-Identifier: GPL-2.0
//! False results kept in the cache: a machine's failure (out of resources) is never cached,
//! a linker that writes nothing fails the links instead of the old binaries passing, and cache
//! entries that are no files or too large are misses.
//!
//! Every input is generated here, none is a fixture; each test runs the real `xtask` binary
//! under a deadline (see `hostile.rs`), so a hang fails the test.

use super::*;
use crate::features::expect::Outcome;
use crate::run::cache::{Cache, Key};
use crate::run::judge::StepResult;
use crate::tests::support::{current_rustc, scratch_dir};
use crate::util::json::{self, Value};
use crate::util::process::CAPTURE_LIMIT;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

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
