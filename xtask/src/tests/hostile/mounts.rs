// SPDX-License-Identifier: GPL-2.0
//! Faults of the machine under a run's outputs, made for real as root (a read-only bind
//! mount, a full tmpfs): cells fail with the system's error, nothing of it is cached, and once
//! the fault is gone the results are those before it. Without root the tests say they skipped;
//! under `CI=true` a test that cannot mount fails.
//!
//! Every input is generated here, none is a fixture; each test runs the real `xtask` binary
//! under a deadline (see `hostile.rs`), so a hang fails the test.

use super::*;
use crate::util::json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

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
