// SPDX-License-Identifier: GPL-2.0
//! Long names, huge timeouts and closed pipes ending cleanly, on generated shard reports.
//!
//! Every input is generated here, none is a fixture; the test runs the real `xtask` binary
//! under a deadline (see `hostile.rs`), so a hang fails the test.

use super::*;
use crate::tests::support::{scratch_dir, xtask_binary};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

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
    // `--wide`: the id is checked whole, escaped, not the table's fitting to a terminal.
    let args = [
        "merge",
        "--wide",
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
