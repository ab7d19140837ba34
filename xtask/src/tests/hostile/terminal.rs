// SPDX-License-Identifier: GPL-2.0
//! The terminal's side of the real binary, on generated reports and the pin file: human output
//! no wider than `COLUMNS` (the full tables with `--wide`), and `kernel --dry-run` printing its
//! plan and leaving `target/kernel/` as it was. What `show` does with a saved report is tested
//! in the top-level `tests/`.

use super::*;
use crate::project_root;
use crate::tests::support::{scratch_dir, the_kernel_dirs_lock, xtask_binary};
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

/// The recorded reports are the widest output the project has (427 columns in full): shown at
/// 60 and 200 columns, no line is wider, and `--wide` keeps the full tables.
#[test]
fn shown_reports_fit_the_terminal_unless_wide() {
    let root = project_root();
    // `show` ends as the command did: 1 where the kernel report holds a finding.
    let file = root.join("docs/kernel-report.json");
    let kernel = std::fs::read_to_string(&file).unwrap();
    let kernel = crate::kernel::report::json::KernelJson::read(&kernel, &file).unwrap();
    let finding = kernel
        .cells
        .iter()
        .any(|cell| cell.is_finding() || crate::kernel::report::boot_finding(cell));
    for (report, status) in [
        ("docs/matrix-report.json", 0),
        ("docs/kernel-report.json", i32::from(finding)),
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
        // Only a pair that builds (or passed before) is booted: where the build tools are
        // missing, as on a machine that never ran `kernel`, no pair is.
        let builds = words.contains(": build (") || words.contains(": cached: pass");
        assert_eq!(
            words.contains("; if it passes, boot") || words.contains("; boot "),
            booting && builds,
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
