// SPDX-License-Identifier: GPL-2.0
//! The audit's report on fake answers: summaries, conclusions, the lint and the JSON layout.

use super::*;
use crate::commands::audit::parse_min_rust;
use crate::features::expect::ToolchainVerdict;
use crate::features::kconfig;
use crate::features::status::Status;
use crate::util::json::{self, Value};
use input::read_feature_list;

impl AuditReport {
    /// [`AuditReport::text`] in the table's full layout.
    pub fn human(&self, colour: bool) -> String {
        self.text(Some(&crate::util::output::Style {
            colour,
            width: crate::util::output::Width::Wide,
        }))
    }
}

fn stable(text: &str) -> Status {
    Status::Stable(Release::parse(text).unwrap())
}

/// The kernel's allowed list on a fake 1.85.0, a fake 1.63.0, a missing pin and a failed
/// probe.
fn sample(min_rust: Option<&str>) -> AuditReport {
    let input =
        read_feature_list("asm_const,asm_goto,arbitrary_self_types,lint_reasons,raw_ref_op")
            .unwrap();
    let entry = |id: &str, spec: &str, release: &str, verdict| ToolchainEntry {
        id: id.into(),
        spec: spec.into(),
        source: None,
        pin: None,
        rustc: None,
        release_text: Some(release.into()),
        release: Release::parse(release),
        channel: None,
        commit_date: None,
        host: None,
        verdict,
    };
    let answered = |id: &str, release: &str, statuses: Vec<Status>| Column {
        entry: entry(
            id,
            &format!("rustup:{id}"),
            release,
            ToolchainVerdict::for_release(Release::parse(release).unwrap()),
        ),
        probed: Probed::Answered(Answer {
            release: Release::parse(release).unwrap(),
            statuses,
            breakers: Vec::new(),
        }),
        rustc: None,
        identity: None,
    };
    let columns = vec![
        answered(
            "debian-1.85.0",
            "1.85.0",
            vec![
                stable("1.82.0"),
                Status::Gated,
                Status::Gated,
                stable("1.81.0"),
                stable("1.82.0"),
            ],
        ),
        answered(
            "debian-1.63.0",
            "1.63.0",
            vec![
                Status::Gated,
                Status::Unknown,
                Status::Gated,
                Status::Gated,
                Status::Gated,
            ],
        ),
        Column {
            entry: entry(
                "1.78.0",
                "pin:1.78.0",
                "1.78.0",
                ToolchainVerdict::Missing("rustup toolchain install 1.78.0".into()),
            ),
            probed: Probed::Unavailable,
            rustc: None,
            identity: None,
        },
        Column {
            entry: ToolchainEntry {
                source: Some(SourceKind::Path),
                ..entry("odd", "/opt/odd/rustc", "1.90.0", ToolchainVerdict::Ok)
            },
            probed: Probed::Failed("error[E0463]: can't find crate for `core`".into()),
            rustc: None,
            identity: None,
        },
    ];
    let min_rust = min_rust.map(|text| parse_min_rust(text).unwrap());
    let decider = Decider::new(&input, Vec::new(), kconfig::tests::built_in());
    AuditReport::new(input, decider, columns, min_rust)
}

#[test]
fn summaries_name_what_still_needs_bootstrap_and_what_is_missing() {
    let report = sample(None);
    assert_eq!(
        report.summary_line(2),
        "debian-1.85.0: 5 active feature(s), 3 stable; 2 still need RUSTC_BOOTSTRAP \
         (asm_goto, arbitrary_self_types)"
    );
    assert_eq!(
        report.summary_line(0),
        "debian-1.63.0: below the kernel's minimum, for information: 5 active feature(s), \
         0 stable; 4 still need RUSTC_BOOTSTRAP (asm_const, arbitrary_self_types, \
         lint_reasons, raw_ref_op); build errors on it: unknown feature asm_goto"
    );
    assert_eq!(
        report.summary_line(1),
        "1.78.0: missing; install it with: rustup toolchain install 1.78.0"
    );
    assert_eq!(
        report.summary_line(3),
        "odd (1.90.0, /opt/odd/rustc): the probe failed: error[E0463]: can't find crate for `core`"
    );
    let text = report.human(false);
    assert!(
        text.contains("Needs RUSTC_BOOTSTRAP on every release probed, up to 1.85.0: it still calls asm_goto, arbitrary_self_types gated."),
        "{text}"
    );
    assert!(
        text.contains(
            "Every active feature is known from 1.85.0 on (1.63.0 does not know asm_goto)."
        ),
        "{text}"
    );
    // The missing pin has no column; the failed probe has one.
    assert!(!text.contains("1.78.0  "), "{text}");
    assert!(text.contains("probe failed"), "{text}");
    assert_eq!(report.verdict(), Verdict::Success);
}

#[test]
fn min_rust_makes_it_a_lint_that_fails() {
    let report = sample(Some("1.85"));
    assert_eq!(report.verdict(), Verdict::Failure);
    let text = report.text(None);
    for expected in [
        "- removable: --features asm_const: feature(asm_const): stable since 1.82.0, at or before 1.85.0",
        "- removable: --features lint_reasons: feature(lint_reasons): stable since 1.81.0, at or before 1.85.0",
        "- removable: --features raw_ref_op: feature(raw_ref_op): stable since 1.82.0, at or before 1.85.0",
    ] {
        assert!(text.contains(expected), "{expected}\n{text}");
    }
    assert!(!text.contains("removable: --features asm_goto"), "{text}");
    let quiet = sample(Some("1.80.0"));
    assert_eq!(quiet.verdict(), Verdict::Success);
    assert!(quiet.human(false).contains(
        "--min-rust 1.80.0: nothing to remove, no dead cfg_attr branch, no build error."
    ));
    assert!(parse_min_rust("1.85.x").is_err());
    assert!(parse_min_rust("185").is_err());
}

#[test]
fn json_has_the_documented_shape() {
    let report = sample(Some("1.85.0"));
    let value = crate::util::json::parse(&json::to_pretty(&report.to_json())).unwrap();
    assert_eq!(value.get("schema").and_then(Value::as_u64), Some(2));
    assert_eq!(
        value.get("gated_on_newest"),
        Some(&serde_json::json!(["asm_goto", "arbitrary_self_types"]))
    );
    assert_eq!(value.get("newest").and_then(Value::as_str), Some("1.85.0"));
    assert_eq!(value.get("path"), Some(&Value::Null));
    assert_eq!(
        value.get("verdict").and_then(Value::as_str),
        Some("failure")
    );
    let toolchains = value.get("toolchains").and_then(Value::as_array).unwrap();
    assert_eq!(toolchains.len(), 4);
    let asm_goto = toolchains[2]
        .get("features")
        .and_then(|features| features.get("asm_goto"))
        .unwrap();
    assert_eq!(
        asm_goto.get("status").and_then(Value::as_str),
        Some("gated")
    );
    assert_eq!(asm_goto.get("active").and_then(Value::as_bool), Some(true));
    assert_eq!(
        toolchains[2]
            .get("needs_bootstrap")
            .and_then(Value::as_array)
            .map(Vec::len),
        Some(2)
    );
    assert_eq!(
        toolchains[1].get("verdict").and_then(Value::as_str),
        Some("missing")
    );
    assert_eq!(
        toolchains[3].get("error").and_then(Value::as_str),
        Some("error[E0463]: can't find crate for `core`")
    );
    assert_eq!(
        value.get("known_from").and_then(Value::as_str),
        Some("1.85.0")
    );
    assert_eq!(value.get("stable_from"), Some(&Value::Null));
    assert_eq!(
        value
            .get("removable")
            .and_then(Value::as_array)
            .map(Vec::len),
        Some(3)
    );
}

#[test]
fn a_cfg_no_kconfig_defines_is_explained_where_a_condition_names_it() {
    // The attribute as Linux 7.3-rc7's rust/pin-init/src/lib.rs (lines 267-270) writes it.
    let root = project_root().join(format!(
        "target/kshim/unit-tests/audit-never-set-{}.rs",
        std::process::id()
    ));
    std::fs::create_dir_all(root.parent().unwrap()).unwrap();
    std::fs::write(
        &root,
        "#![cfg_attr(\n    all(feature = \"unsafe-pinned\", CONFIG_RUSTC_HAS_UNSAFE_PINNED),\n    \
         feature(unsafe_pinned)\n)]\n",
    )
    .unwrap();
    let input = input::read_crate_root(&root).unwrap();
    std::fs::remove_file(&root).unwrap();
    let decider = Decider::new(&input, Vec::new(), kconfig::tests::built_in());
    assert_eq!(
        decider.active_on(input.entries[0].condition.as_ref(), Release::new(1, 98, 0)),
        Some(false)
    );
    let human = AuditReport::new(input, decider, Vec::new(), None).human(false);
    assert!(
        human.contains(
            "`CONFIG_RUSTC_HAS_UNSAFE_PINNED`: no tree's init/Kconfig defines it (7.3's \
             included), though pin-init's lib.rs tests it in a cfg_attr"
        ) && human.contains("in the kernel that branch is never on."),
        "{human}"
    );
    // Without such a condition, no note.
    let plain = AuditReport::new(
        read_feature_list("lint_reasons").unwrap(),
        Decider::new(
            &read_feature_list("lint_reasons").unwrap(),
            Vec::new(),
            kconfig::tests::built_in(),
        ),
        Vec::new(),
        None,
    );
    assert!(!plain.human(false).contains("never on"));
}

#[test]
fn findings_come_first_and_the_legend_only_with_its_markers() {
    let report = sample(Some("1.85.0"));
    for text in [report.human(false), report.text(None)] {
        let finding = text.find("removable: ").expect("a removable line");
        let table = text.find("line:col").expect("the table's header");
        assert!(finding < table, "{text}");
        // No line of the sample has a condition: nothing in the table needs the legend.
        assert!(
            !text.contains("`(off)`") && !text.contains("`(?)`"),
            "{text}"
        );
    }
}

#[test]
fn an_audit_read_back_from_its_json_prints_as_it_did() {
    let report = sample(Some("1.85.0"));
    let text = json::to_pretty(&report.to_json());
    let read = AuditReport::from_json(&text).unwrap();
    assert_eq!(read.human(false), report.human(false));
    assert_eq!(read.text(None), report.text(None));
    assert_eq!(json::to_pretty(&read.to_json()), text);
    // Findings are computed again, never read: a file that claims none still has them.
    let mut value = json::parse(&text).unwrap();
    value["removable"] = Value::Array(Vec::new());
    let read = AuditReport::from_json(&json::to_pretty(&value)).unwrap();
    assert_eq!(read.lint, report.lint);
}

#[test]
fn the_docs_document_every_key_and_no_other() {
    // The recorded audit: every toolchain answered, its lines have attributes, a target, kconfig
    // thresholds and findings.
    let recorded = project_root().join(crate::docs::audit_sample::AUDIT_REPORT);
    let mut report = AuditReport::from_json(&std::fs::read_to_string(recorded).unwrap()).unwrap();
    // No feature of it was probed alone; one shows that member's layout. Its `errors` finding
    // list is empty, but written as `removable` and `dead` are.
    let Probed::Answered(answer) = &mut report.columns[0].probed else {
        panic!("the recorded audit's first toolchain answered");
    };
    answer
        .breakers
        .push(("staged_api".into(), "error[E0658]".into()));
    crate::tests::support::assert_json_layout_documented(
        "docs/audit.md",
        "audit",
        &["The JSON report (`--format json`):"],
        &["inline_const", "target_arch"],
        &report.to_json(),
        // A toolchain's features and the target's cfgs are keyed by name.
        &|parent, _| matches!(parent, Some("features" | "target")),
    );
}
