// SPDX-License-Identifier: GPL-2.0
//! `show`: `help` names it (and `kernel --dry-run`, and `--wide`), it prints a saved report as
//! its command did, and it refuses what is no report.

use crate::support::*;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

#[test]
fn help_names_show_dry_run_and_wide() {
    let list = xtask(&["help"]).run();
    list.success().stdout_has("--wide").check(
        list.stdout
            .lines()
            .any(|line| line.trim_start().starts_with("show ")),
        "no `show` in the list of commands",
    );
    xtask(&["show", "--help"])
        .run()
        .success()
        .stdout_has("saved report");
    xtask(&["kernel", "--help"]).run().stdout_has("--dry-run");
    xtask(&["show", "--wdie", "docs/matrix-report.json"])
        .run()
        .refused("did you mean `--wide`?");
}

/// `show` gives back what the command printed: the matrix run's own human output, and the
/// recorded kernel report's JSON as it was written.
#[test]
fn show_prints_a_saved_report_as_its_command_did() {
    let _turn = checkouts_lock();
    let directory = scratch_dir("show-saved");
    let tree = tiny_tree("show-tree");
    let (run, report) = host_matrix(&tree, &[]);
    let saved = directory.join("r.json");
    std::fs::write(&saved, &run.stdout).unwrap();
    let saved = path_str(&saved);
    for (format, columns) in [("human", "60"), ("human", "200"), ("markdown", "60")] {
        let run = host_matrix_command(&tree)
            .args(["--format", format])
            .env("COLUMNS", columns)
            .run_within(Duration::from_secs(120));
        let shown = xtask(&["show", saved, "--format", format])
            .env("COLUMNS", columns)
            .run_within(Duration::from_secs(60));
        shown
            .code(run.status.code().expect("the matrix exited"))
            .check(
                shown.stdout == run.stdout,
                &format!(
                    "{format} at {columns} columns, the matrix printed:\n{}",
                    run.stdout
                ),
            );
    }
    let json_again = xtask(&["show", saved, "--format", "json"]).run();
    json_again.check(json_again.json() == report, "the JSON shown differs");
    let kernel = root().join("docs/kernel-report.json");
    let recorded: Value = serde_json::from_str(&std::fs::read_to_string(&kernel).unwrap()).unwrap();
    let shown = xtask(&["show", path_str(&kernel), "--format", "json"]).run();
    shown.check(shown.json() == recorded, "the kernel report shown differs");
    let markdown = xtask(&["show", path_str(&kernel), "--format", "markdown"]).run();
    markdown.check(
        markdown.stdout.starts_with("## Kernel trees\n"),
        "no `## Kernel trees` first",
    );
}

#[test]
fn show_refuses_what_is_no_report() {
    let directory = scratch_dir("show-refuses");
    let show = |path: &Path| xtask(&["show", path_str(path)]).run();
    show(&directory.join("missing.json")).refused("cannot read the report");
    let fifo = directory.join("fifo.json");
    make_fifo(&fifo);
    show(&fifo).refused("cannot read the report");
    let other = directory.join("other.json");
    std::fs::write(&other, "{\"name\": \"x\"}").unwrap();
    show(&other).refused("is neither a matrix report");
    let usage = root().join("docs/usage-report.json");
    show(&usage).refused("is neither a matrix report");
    let text = directory.join("text.json");
    std::fs::write(&text, "not json").unwrap();
    show(&text).refused("is not JSON");
    let altered = directory.join("altered.json");
    let kernel = std::fs::read_to_string(root().join("docs/kernel-report.json")).unwrap();
    let mut kernel: Value = serde_json::from_str(&kernel).unwrap();
    let finding = kernel["cells"][0]["finding"].as_bool().unwrap();
    kernel["cells"][0]["finding"] = Value::Bool(!finding);
    std::fs::write(&altered, serde_json::to_string_pretty(&kernel).unwrap()).unwrap();
    show(&altered).refused("an altered");
    xtask(&["show", path_str(&usage), "--format", "yaml"])
        .run()
        .refused("--format must be");
}
