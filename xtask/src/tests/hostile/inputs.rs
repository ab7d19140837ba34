// SPDX-License-Identifier: GPL-2.0
//! Hostile command lines and files: FIFOs, devices and directories refused at once, long
//! names, huge timeouts and closed pipes ending cleanly, a tree that is no checkout, a machine
//! without `cc`, audit inputs that are no files, and help and typos answered as cargo does.
//!
//! Every input is generated here, none is a fixture; each test runs the real `xtask` binary
//! under a deadline (see `hostile.rs`), so a hang fails the test.

use super::*;
use crate::tests::support::{current_rustc, scratch_dir, xtask_binary};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::Duration;

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
