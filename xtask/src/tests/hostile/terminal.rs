// SPDX-License-Identifier: GPL-2.0
//! The terminal's side of the real binary: human output no wider than `COLUMNS` (the full
//! tables with `--wide`), `show` printing a saved report as its command did and refusing what
//! is none, and `kernel --dry-run` printing its plan and leaving `target/kernel/` as it was.

use super::*;
use crate::project_root;
use crate::tests::support::{scratch_dir, the_checkouts_lock, the_kernel_dirs_lock, xtask_binary};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

fn widest(text: &str) -> usize {
    text.lines()
        .map(|line| line.chars().count())
        .max()
        .unwrap_or(0)
}

fn at_columns(columns: &str, args: &[&str]) -> Finished {
    xtask_within(Duration::from_secs(60), args, &[("COLUMNS", columns)])
}

#[test]
fn help_names_show_dry_run_and_wide() {
    let list = xtask(&["help"]);
    assert!(list.status.success(), "{}", list.stderr);
    assert!(list.stdout.contains("--wide"), "{}", list.stdout);
    assert!(list
        .stdout
        .lines()
        .any(|line| line.trim_start().starts_with("show ")));
    let show = xtask(&["show", "--help"]);
    assert!(show.status.success(), "{}", show.stderr);
    assert!(show.stdout.contains("saved report"), "{}", show.stdout);
    let kernel = xtask(&["kernel", "--help"]);
    assert!(kernel.stdout.contains("--dry-run"), "{}", kernel.stdout);
    let typo = xtask(&["show", "--wdie", "docs/matrix-report.json"]);
    assert_refused(&typo, "did you mean `--wide`?");
}

/// The recorded reports are the widest output the project has (427 columns in full): shown at
/// 60 and 200 columns, no line is wider, and `--wide` keeps the full tables.
#[test]
fn shown_reports_fit_the_terminal_unless_wide() {
    let root = project_root();
    for (report, status) in [
        ("docs/matrix-report.json", 0),
        ("docs/kernel-report.json", 1),
    ] {
        let path = root.join(report);
        let path = path_str(&path);
        let mut full_width = 0;
        for columns in ["60", "200"] {
            let shown = at_columns(columns, &["show", path]);
            assert_eq!(
                shown.status.code(),
                Some(status),
                "{report}: {}",
                shown.stderr
            );
            let limit: usize = columns.parse().unwrap();
            assert!(
                widest(&shown.stdout) <= limit,
                "{report} at COLUMNS={columns}: a line of {} columns:\n{}",
                widest(&shown.stdout),
                shown.stdout
            );
            let wide = at_columns(columns, &["show", "--wide", path]);
            full_width = widest(&wide.stdout);
            // The same words, however they are laid out: a narrow layout ends a table's
            // corner with a colon, and breaks only words longer than a line.
            let words = |text: &str| -> BTreeSet<String> {
                text.split_whitespace()
                    .map(|word| word.trim_end_matches(':').to_owned())
                    .collect()
            };
            let (fitted, full) = (words(&shown.stdout), words(&wide.stdout));
            let lost: Vec<&String> = full
                .iter()
                .filter(|word| word.chars().count() < 40 && !fitted.contains(*word))
                .collect();
            assert!(lost.is_empty(), "{report} at {columns}: lost {lost:?}");
        }
        assert!(full_width > 200, "{report}: --wide is {full_width} columns");
    }
    // Nothing says how wide (no COLUMNS, stdout a pipe): 100 columns.
    let recorded = root.join("docs/matrix-report.json");
    let unknown = Command::new(xtask_binary())
        .args(["show", path_str(&recorded)])
        .env_remove("COLUMNS")
        .stdin(Stdio::null())
        .output()
        .expect("running xtask show");
    let unknown = String::from_utf8_lossy(&unknown.stdout);
    assert!(
        (90..=100).contains(&widest(&unknown)),
        "{} columns:\n{unknown}",
        widest(&unknown)
    );
    // A list of the pins, and merge's tables, fit too.
    let list = at_columns("60", &["toolchains"]);
    assert!(list.stdout.starts_with("Pins in "), "{}", list.stderr);
    assert!(widest(&list.stdout) <= 60, "{}", list.stdout);
    // audit's table of every pin beside the shim's feature lines.
    let shim = root.join("kernel-shim/src/lib.rs");
    let audit = |columns: &str, wide: &[&str]| {
        let mut args = vec!["audit", path_str(&shim)];
        args.extend_from_slice(wide);
        at_columns(columns, &args)
    };
    let (audited, full) = (audit("60", &[]), audit("60", &["--wide"]));
    assert!(
        audited.stdout.starts_with(&full.stdout[..20]),
        "{}",
        audited.stderr
    );
    assert!(widest(&full.stdout) > 200, "{}", full.stdout);
    assert!(widest(&audited.stdout) <= 60, "{}", audited.stdout);
    let directory = scratch_dir("hostile-terminal-merge");
    let pins = directory.join("pins.toml");
    pin_file(&pins, 12);
    let shards: Vec<PathBuf> = (1..=2)
        .map(|shard| {
            let path = directory.join(format!("{shard}.json"));
            write_json(&path, &shard_report(12, shard, 2).to_json());
            path
        })
        .collect();
    let merge = |columns: &str, wide: bool| {
        let mut args = vec!["merge", "--pins", path_str(&pins)];
        args.extend(shards.iter().map(|path| path_str(path)));
        if wide {
            args.push("--wide");
        }
        at_columns(columns, &args)
    };
    let (merged, full) = (merge("60", false), merge("60", true));
    assert!(merged.status.code() != Some(2), "{}", merged.stderr);
    assert!(widest(&full.stdout) > 100, "{}", full.stdout);
    assert!(widest(&merged.stdout) <= 60, "{}", merged.stdout);
}

/// `show` gives back what the command printed: the matrix run's own human output, and the
/// recorded kernel report's JSON as it was written.
#[test]
fn show_prints_a_saved_report_as_its_command_did() {
    let _turn = the_checkouts_lock();
    let directory = scratch_dir("hostile-show");
    let tree = tiny_tree("show");
    let run = host_matrix_as(&tree, "json", "100");
    let report = json::parse(&run.stdout)
        .unwrap_or_else(|error| panic!("no JSON report ({error}):\n{}", run.stderr));
    let saved = directory.join("r.json");
    write_json(&saved, &report);
    let saved = path_str(&saved);
    for (format, columns) in [("human", "60"), ("human", "200"), ("markdown", "60")] {
        let run = host_matrix_as(&tree, format, columns);
        let shown = at_columns(columns, &["show", saved, "--format", format]);
        assert_eq!(shown.status.code(), run.status.code(), "{}", shown.stderr);
        assert_eq!(shown.stdout, run.stdout, "{format} at {columns} columns");
    }
    let json_again = xtask(&["show", saved, "--format", "json"]);
    assert_eq!(json::parse(&json_again.stdout).unwrap(), report);
    let kernel = project_root().join("docs/kernel-report.json");
    let recorded = json::parse(&std::fs::read_to_string(&kernel).unwrap()).unwrap();
    let shown = xtask(&["show", path_str(&kernel), "--format", "json"]);
    assert_eq!(json::parse(&shown.stdout).unwrap(), recorded);
    let markdown = xtask(&["show", path_str(&kernel), "--format", "markdown"]);
    assert!(
        markdown.stdout.starts_with("## Kernel trees\n"),
        "{}",
        markdown.stdout
    );
}

/// The tiny tree's matrix in `format` at `columns`, as the user would run it.
fn host_matrix_as(root: &Path, format: &str, columns: &str) -> Finished {
    let rustc = crate::tests::support::current_rustc();
    let args = [
        "matrix",
        "--root",
        path_str(root),
        "--toolchain",
        path_str(&rustc),
        "--target",
        "none",
        "--format",
        format,
    ];
    xtask_within(Duration::from_secs(120), &args, &[("COLUMNS", columns)])
}

#[test]
fn show_refuses_what_is_no_report() {
    let directory = scratch_dir("hostile-show-refuses");
    let missing = directory.join("missing.json");
    assert_refused(
        &xtask(&["show", path_str(&missing)]),
        "cannot read the report",
    );
    let fifo = directory.join("fifo.json");
    make_fifo(&fifo);
    assert_refused(&xtask(&["show", path_str(&fifo)]), "cannot read the report");
    let other = directory.join("other.json");
    std::fs::write(&other, "{\"name\": \"x\"}").unwrap();
    assert_refused(
        &xtask(&["show", path_str(&other)]),
        "is neither a matrix report",
    );
    let usage = project_root().join("docs/usage-report.json");
    assert_refused(
        &xtask(&["show", path_str(&usage)]),
        "is neither a matrix report",
    );
    let text = directory.join("text.json");
    std::fs::write(&text, "not json").unwrap();
    assert_refused(&xtask(&["show", path_str(&text)]), "is not JSON");
    let altered = directory.join("altered.json");
    let mut kernel = json::parse(
        &std::fs::read_to_string(project_root().join("docs/kernel-report.json")).unwrap(),
    )
    .unwrap();
    kernel["cells"][0]["finding"] = Value::Bool(!kernel["cells"][0]["finding"].as_bool().unwrap());
    write_json(&altered, &kernel);
    assert_refused(&xtask(&["show", path_str(&altered)]), "an altered");
    let format = xtask(&["show", path_str(&usage), "--format", "yaml"]);
    assert_refused(&format, "--format must be");
}

/// Every entry under `directory` (not following links): its kind, size and modification time,
/// and the contents of every regular file of at most 1 MiB (larger ones are the trees' and
/// the build's, read only by a build).
fn snapshot(directory: &Path) -> BTreeMap<PathBuf, (String, u64, i128, Vec<u8>)> {
    use std::os::unix::fs::MetadataExt;
    let mut entries = BTreeMap::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(path) = pending.pop() {
        let Ok(metadata) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let kind = format!("{:?}", metadata.file_type());
        let modified =
            i128::from(metadata.mtime()) * 1_000_000_000 + i128::from(metadata.mtime_nsec());
        let contents = if metadata.is_file() && metadata.len() <= 1 << 20 {
            std::fs::read(&path).unwrap_or_default()
        } else {
            Vec::new()
        };
        if metadata.is_dir() {
            for entry in std::fs::read_dir(&path).into_iter().flatten().flatten() {
                pending.push(entry.path());
            }
        }
        entries.insert(path, (kind, metadata.len(), modified, contents));
    }
    entries
}

#[test]
fn kernel_dry_run_prints_the_plan_and_changes_nothing() {
    // No other test's kernel run may write under target/kernel/ meanwhile.
    let _turn = the_kernel_dirs_lock();
    let kernel = project_root().join("target/kernel");
    let before = snapshot(&kernel);
    let pins =
        crate::toolchains::pins::Pins::load(&project_root().join("toolchains.toml")).unwrap();
    for args in [
        &["kernel", "--dry-run"][..],
        &["kernel", "--boot", "--dry-run"],
    ] {
        let planned = xtask_within(Duration::from_secs(120), args, &[("COLUMNS", "80")]);
        assert!(planned.status.success(), "{}", planned.stderr);
        for tree in &pins.trees {
            assert!(
                planned.stdout.contains(&format!("\n  {}: ", tree.id)),
                "tree {} is not in the plan:\n{}",
                tree.id,
                planned.stdout
            );
        }
        let cells = planned
            .stdout
            .lines()
            .filter(|line| line.contains(" with "))
            .count();
        assert!(
            cells >= pins.trees.len() * pins.pins.len(),
            "{}",
            planned.stdout
        );
        assert!(planned.stdout.contains("\nestimate"), "{}", planned.stdout);
        assert!(planned.stdout.contains("in all: "), "{}", planned.stdout);
        assert!(widest(&planned.stdout) <= 80, "{}", planned.stdout);
        // With --boot, QEMU and the accelerator are named, and a pair that builds is booted
        // (or says why not); without, nothing of the boot is planned.
        let booting = args.contains(&"--boot");
        let words = planned
            .stdout
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(
            planned.stdout.contains("\nboot: "),
            booting,
            "{}",
            planned.stdout
        );
        assert_eq!(
            words.contains("; if it passes, boot") || words.contains("; boot "),
            booting,
            "{}",
            planned.stdout
        );
    }
    let after = snapshot(&kernel);
    let changed: Vec<&PathBuf> = before
        .keys()
        .chain(after.keys())
        .filter(|path| before.get(*path) != after.get(*path))
        .collect();
    assert!(changed.is_empty(), "kernel --dry-run changed {changed:?}");
}
