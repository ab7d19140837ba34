// SPDX-License-Identifier: GPL-2.0
//! The usage report's tests: its JSON read back equal, and the cells a run's results make.

use super::*;
use crate::catalog::feature;

fn place(target: &str, file: &str, line: u64, call_site: Option<SourcePoint>) -> UsedPlace {
    UsedPlace {
        target: target.into(),
        at: SourcePoint {
            file: file.into(),
            line,
            column: 5,
        },
        item: Some("fn run(self: ArcBorrow<'_, Self>)".into()),
        items: vec!["gated".into(), "WorkItem".into(), "run".into()],
        macros: call_site
            .is_some()
            .then(|| "static_branch_unlikely!".to_string())
            .into_iter()
            .collect(),
        call_site,
    }
}

fn report() -> UsageReport {
    let toolchain = |id: &str| UsageToolchain {
        id: id.into(),
        label: id.into(),
        release: Some("1.95.0".into()),
    };
    let cells = vec![
        UsageCell::Used(vec![
            place("kernel", "kernel-shim/src/sync/workqueue.rs", 46, None),
            place(
                "rust_asm_goto",
                "kernel-shim/src/jump_label.rs",
                159,
                Some(SourcePoint {
                    file: "examples/rust_asm_goto.rs".into(),
                    line: 80,
                    column: 12,
                }),
            ),
        ]),
        UsageCell::Unused(vec![SourcePoint {
            file: "kernel-shim/src/lib.rs".into(),
            line: 30,
            column: 40,
        }]),
        UsageCell::Stable("1.79.0".into()),
        UsageCell::NotEnabled,
        UsageCell::NotGated("unknown".into()),
        UsageCell::Failed("kernel: error: boom".into(), Vec::new()),
        UsageCell::NotRun("missing; install it with: rustup toolchain install 1.78.0".into()),
    ];
    UsageReport {
        toolchains: (0..cells.len())
            .map(|index| toolchain(&format!("t{index}")))
            .collect(),
        features: vec![FeatureUsage {
            name: "arbitrary_self_types".into(),
            shim_item: feature("arbitrary_self_types").unwrap().shim_item.into(),
            cells,
        }],
        date: Some("2026-12-04 04:20 UTC".into()),
    }
}

#[test]
fn the_json_reads_back_equal() {
    let report = report();
    let back = UsageReport::from_json(&report.to_json().to_string()).unwrap();
    assert_eq!(back, report);
    assert_eq!(report.verdict(), Verdict::Failure);
    let text = json::to_pretty(&report.to_json());
    assert!(text.contains("\"status\": \"stable\""), "{text}");
    let broken = text.replace("\"stable\"", "\"sideways\"");
    let error = format!("{:#}", UsageReport::from_json(&broken).unwrap_err());
    assert!(error.contains("unknown status `sideways`"), "{error}");
    // The untyped reader took a release or an item of another type, or none at all, for
    // null; the typed one names the member.
    for (good, bad, named) in [
        (
            "\"release\": \"",
            "\"release\": 1, \"x\": \"",
            "invalid type: integer `1`",
        ),
        ("\"item\": ", "\"itemm\": ", "missing field `item`"),
    ] {
        assert!(text.contains(good), "{text}");
        let error = format!(
            "{:#}",
            UsageReport::from_json(&text.replacen(good, bad, 1)).unwrap_err()
        );
        assert!(error.contains(named), "{error}");
    }
}

#[test]
fn people_read_places_items_and_why_there_are_none() {
    let human = report().human();
    assert!(
        human.contains(
            "    kernel-shim/src/sync/workqueue.rs:46:5 in `fn run(self: ArcBorrow<'_, Self>)` \
             (compiling the shim)\n"
        ),
        "{human}"
    );
    assert!(
        human.contains(", expanded from examples/rust_asm_goto.rs:80:12"),
        "{human}"
    );
    assert!(
        human.contains("  t2: stable here (since 1.79.0), not gated\n"),
        "{human}"
    );
    assert!(
        human.contains("  t1: unused: gated and enabled (at kernel-shim/src/lib.rs:30:40)"),
        "{human}"
    );
    let markdown = report().markdown();
    assert!(markdown.starts_with("| Feature | Toolchains | What they say |\n"));
}

#[test]
fn the_readme_documents_every_key_and_no_other() {
    crate::tests::support::assert_json_layout_documented(
        "docs/audit.md",
        "usage",
        &[
            "## Where each feature is used",
            "The JSON report (`--format json`):",
        ],
        &["1.95.0"],
        &report().to_json(),
        // Toolchain ids are data, not layout.
        &|_, key| key.starts_with('t') && key.len() <= 2,
    );
}
