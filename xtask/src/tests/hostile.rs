// SPDX-License-Identifier: GPL-2.0
//! Hostile inputs made with the xtask's own types: shard reports generated from the catalog's
//! predictions or altered from the recorded one (run through the real `xtask` under a
//! deadline), cache entries, the kernels page. What they share is here: the run, generated pins
//! and reports, tiny trees. The hostile inputs a user can make are tested through the binary in
//! the top-level `tests/` crate.

mod cache;
mod inputs;
mod kernel_cache;
mod reports;
mod terminal;
mod text;

use crate::catalog::{Release, FEATURES};
use crate::features::expect::{expected_status, Outcome, ToolchainVerdict};
use crate::report::{cell_kinds, BuildCell, FeatureCell, Observed, Report, ToolchainEntry};
use crate::run::plan::Mode;
use crate::tests::support::xtask_binary;
use crate::util::json::{self, Value};
use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

/// What a finished xtask left: its status, stdout and stderr.
pub(crate) struct Finished {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs `xtask ARGS` with `env` added, and fails the test if it runs longer than `deadline`:
/// a hang is a failure, not a test that never ends.
pub(crate) fn xtask_within(deadline: Duration, args: &[&str], env: &[(&str, &str)]) -> Finished {
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
    let status =
        crate::tests::support::wait_within(&mut child, deadline, &format!("xtask {args:?}"));
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
    // Once, during hostile runs as root, `/dev/null` was found replaced by a regular file.
    use std::os::unix::fs::FileTypeExt;
    let null = std::fs::symlink_metadata("/dev/null").expect("/dev/null is there");
    assert!(
        null.file_type().is_char_device(),
        "after xtask {args:?}, /dev/null is no longer a character device"
    );
    finished
}

pub(crate) fn xtask(args: &[&str]) -> Finished {
    xtask_within(Duration::from_secs(30), args, &[])
}

/// Asserts that the run was refused as bad input (exit 2) with a message containing `message`.
pub(crate) fn assert_refused(finished: &Finished, message: &str) {
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

pub(crate) fn path_str(path: &Path) -> &str {
    path.to_str().expect("scratch paths are UTF-8")
}

pub(crate) fn make_fifo(path: &Path) {
    let made = Command::new("mkfifo")
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .expect("running mkfifo");
    assert!(
        made.status.success(),
        "mkfifo {}: {}",
        path.display(),
        String::from_utf8_lossy(&made.stderr)
    );
}

/// The number of SIGPIPE, the signal of a write to a pipe that nobody reads.
pub(crate) const SIGPIPE: i32 = 13;

// ---------------------------------------------------------------------------------------------
// Generated reports.

/// The targets of every toolchain's build cells: the shim and the catalog's examples.
pub(crate) fn targets() -> Vec<&'static str> {
    let examples: BTreeSet<&str> = FEATURES.iter().map(|feature| feature.example).collect();
    std::iter::once("kernel").chain(examples).collect()
}

/// The pin id and release of the `index`th generated pin: releases from 1.100.0 on, every one
/// above the minimum and none the same.
pub(crate) fn pin(index: usize) -> (String, String) {
    (format!("p{index}"), format!("1.{}.0", 100 + index))
}

/// A pin file with `count` generated pins.
pub(crate) fn pin_file(path: &Path, count: usize) {
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
pub(crate) fn shard_report(count: usize, shard: usize, shards: usize) -> Report {
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
        targets: Default::default(),
        date: None,
    }
}

/// The build, run and test cells of one toolchain.
pub(crate) fn cells_per_toolchain() -> usize {
    targets()
        .iter()
        .map(|target| 2 * cell_kinds(target).len())
        .sum()
}

pub(crate) fn write_json(path: &Path, value: &Value) {
    std::fs::write(path, json::to_pretty(value)).unwrap();
}

/// The `index`th build of a report's JSON, to change.
pub(crate) fn build_mut(report: &mut Value, index: usize) -> &mut Value {
    &mut report["builds"][index]
}

/// A tiny kshim tree: a shim with one test and every example the catalog names.
pub(crate) fn tiny_tree(name: &str) -> PathBuf {
    crate::tests::support::tiny_tree(&format!("hostile-{name}"), &targets()[1..])
}
