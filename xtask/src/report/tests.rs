// SPDX-License-Identifier: GPL-2.0
//! Tests of the report: its failures, summaries, tables and JSON.

use super::*;
use crate::catalog::Feature;
use crate::features::expect::expected_status;
use crate::run::plan::{Kind, Mode};
use crate::util::json::{self, Value};

impl Report {
    /// [`Report::human_in`] in the tables' full layout.
    pub fn human(&self, colour: bool) -> String {
        self.human_in(&crate::util::output::Style {
            colour,
            width: crate::util::output::Width::Wide,
        })
    }
}

fn toolchain(id: &str, release: &str, verdict: ToolchainVerdict) -> ToolchainEntry {
    ToolchainEntry {
        id: id.into(),
        spec: format!("rustup:{id}"),
        source: Some(SourceKind::Rustup),
        pin: Some(id.into()),
        rustc: Some(format!("/toolchains/{id}/bin/rustc")),
        release_text: Some(release.into()),
        release: Release::parse(release),
        channel: Some("stable".into()),
        commit_date: Some("2025-02-17".into()),
        host: Some("x86_64-unknown-linux-gnu".into()),
        verdict,
    }
}

/// A report for 1.85.0 where the compiler agrees with the catalog except that it calls
/// `asm_goto` stable since 1.86.0, and one example fails in kernel mode.
fn sample() -> Report {
    let release = Release::new(1, 85, 0);
    let features = FEATURES
        .iter()
        .map(|feature| {
            let expected = expected_status(feature, release);
            let observed = if feature.name == "asm_goto" {
                Status::Stable(Release::new(1, 86, 0))
            } else {
                expected
            };
            vec![
                FeatureCell {
                    observed: Observed::Status(observed),
                    expected: Some(expected),
                },
                FeatureCell {
                    observed: Observed::NotProbed,
                    expected: None,
                },
            ]
        })
        .collect();
    let build = |target: &str, mode, kind, outcome, first_error: Option<&str>| BuildCell {
        toolchain: 0,
        target: target.into(),
        mode,
        kind,
        outcome,
        expected: Outcome::Pass,
        first_error: first_error.map(String::from),
        seconds: 0.5,
        cached: false,
        tests: (kind == Kind::Test).then_some(TestCounts {
            passed: 3,
            failed: 0,
            ignored: 0,
        }),
    };
    Report {
        toolchains: vec![
            toolchain("1.85.0", "1.85.0", ToolchainVerdict::Ok),
            ToolchainEntry {
                source: None,
                rustc: None,
                release_text: None,
                release: None,
                ..toolchain(
                    "1.78.0",
                    "1.78.0",
                    ToolchainVerdict::Missing("rustup toolchain install 1.78.0".into()),
                )
            },
        ],
        features,
        builds: vec![
            build("kernel", Mode::Kernel, Kind::Build, Outcome::Pass, None),
            build("kernel", Mode::Stable, Kind::Build, Outcome::Pass, None),
            build(
                "rust_asm_goto",
                Mode::Kernel,
                Kind::Build,
                Outcome::Fail,
                Some(
                    "error[E0658]: label operands are unstable (at examples/rust_asm_goto.rs:9:5)",
                ),
            ),
            build(
                "rust_asm_goto",
                Mode::Stable,
                Kind::Test,
                Outcome::Pass,
                None,
            ),
        ],
        strict: false,
        kbuild: Vec::new(),
        shard: None,
        targets: crate::report::targets::TargetAxis::default(),
        date: Some("2026-12-04 03:48 UTC".into()),
    }
}

#[test]
fn failures_name_toolchain_cell_expected_observed_and_error() {
    let report = sample();
    let failures = report.failures();
    assert_eq!(failures.len(), 2, "{failures:#?}");
    assert_eq!(
        failure_line(&failures[0]),
        "1.85.0: feature asm_goto: expected gated, observed stable 1.86"
    );
    assert_eq!(
        failure_line(&failures[1]),
        "1.85.0: build rust_asm_goto (kernel): expected pass, observed fail: \
         error[E0658]: label operands are unstable (at examples/rust_asm_goto.rs:9:5)"
    );
    assert_eq!(report.verdict(), crate::Verdict::Failure);
    let strict = Report {
        strict: true,
        ..sample()
    };
    assert_eq!(strict.failures().len(), 3);
    assert_eq!(strict.failures()[0].observed, "missing");
}

#[test]
fn a_broken_toolchain_fails_on_one_line() {
    let mut report = sample();
    report.toolchains[1].verdict =
        ToolchainVerdict::Broken("cannot read `rustc -vV` output; it printed:\ngarbage\n".into());
    let failures = report.failures();
    assert_eq!(
        failure_line(&failures[0]),
        "1.78.0: toolchain: expected ok, observed broken: \
         cannot read `rustc -vV` output; it printed: | garbage"
    );
}

#[test]
fn json_has_the_documented_shape() {
    let report = sample();
    let value = json::parse(&json::to_pretty(&report.to_json())).unwrap();
    assert_eq!(
        value.get("schema").and_then(Value::as_u64),
        Some(u64::from(SCHEMA_VERSION))
    );
    assert_eq!(
        value.get("verdict").and_then(Value::as_str),
        Some("failure")
    );
    let toolchains = value.get("toolchains").and_then(Value::as_array).unwrap();
    for key in [
        "id",
        "spec",
        "source",
        "pin",
        "rustc",
        "release",
        "channel",
        "commit_date",
        "host",
        "verdict",
        "error",
        "summary",
    ] {
        assert!(toolchains[0].get(key).is_some(), "toolchains[].{key}");
    }
    assert_eq!(
        toolchains[1].get("verdict").and_then(Value::as_str),
        Some("missing")
    );
    assert_eq!(
        toolchains[1].get("error").and_then(Value::as_str),
        Some("rustup toolchain install 1.78.0")
    );
    let features = value.get("features").and_then(Value::as_array).unwrap();
    assert_eq!(features.len(), FEATURES.len());
    let asm_goto = features
        .iter()
        .find(|feature| feature.get("name").and_then(Value::as_str) == Some("asm_goto"))
        .unwrap();
    let cell = asm_goto
        .get("toolchains")
        .and_then(|t| t.get("1.85.0"))
        .unwrap();
    assert_eq!(cell.get("observed").and_then(Value::as_str), Some("stable"));
    assert_eq!(
        cell.get("stable_since").and_then(Value::as_str),
        Some("1.86.0")
    );
    assert_eq!(cell.get("expected").and_then(Value::as_str), Some("gated"));
    assert_eq!(cell.get("ok").and_then(Value::as_bool), Some(false));
    let builds = value.get("builds").and_then(Value::as_array).unwrap();
    assert_eq!(builds.len(), 4);
    for key in [
        "toolchain",
        "target",
        "mode",
        "kind",
        "outcome",
        "expected",
        "ok",
        "first_error",
        "seconds",
        "cached",
        "tests",
    ] {
        assert!(builds[0].get(key).is_some(), "builds[].{key}");
    }
    assert_eq!(builds[2].get("ok").and_then(Value::as_bool), Some(false));
    assert_eq!(
        builds[3]
            .get("tests")
            .and_then(|t| t.get("passed"))
            .and_then(Value::as_u64),
        Some(3)
    );
    assert_eq!(
        value
            .get("failures")
            .and_then(Value::as_array)
            .map(Vec::len),
        Some(2)
    );
}

#[test]
fn json_reads_back_into_the_same_report() {
    let mut report = sample();
    report.features[0][0].observed = Observed::ProbeFailed("error: rustc crashed".into());
    report.toolchains[1].verdict =
        ToolchainVerdict::Missing("rustup toolchain install 1.78.0".into());
    let json = report.to_json();
    let back = Report::from_json(&json::to_pretty(&json)).unwrap();
    assert_eq!(back.to_json(), json);
    assert_eq!(back.human(false), report.human(false));
    assert_eq!(back.verdict(), report.verdict());
    assert_eq!(
        back.features[0][0].observed,
        Observed::ProbeFailed("error: rustc crashed".into())
    );

    let Value::Object(mut members) = json.clone() else {
        unreachable!()
    };
    members.remove("builds");
    let error = Report::from_json(&Value::Object(members).to_string())
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("missing field `builds` at line 1"),
        "{error}"
    );
    let error = Report::from_json("[]").unwrap_err().to_string();
    assert_eq!(
        error,
        "the report has schema ?, this xtask reads schemas 2 to 3"
    );
    // A member of another type is refused by name and place, never taken for a default.
    let text = json::to_pretty(&json);
    for (good, bad, named) in [
        (
            "\"cached\": false",
            "\"cached\": \"no\"",
            "builds[0].cached: invalid type: string \"no\", expected a boolean at line",
        ),
        (
            "\"seconds\": 0.5",
            "\"seconds\": \"0.5\"",
            "builds[0].seconds: invalid type: string \"0.5\", expected f64 at line",
        ),
    ] {
        assert!(text.contains(good), "{text}");
        let error = Report::from_json(&text.replacen(good, bad, 1))
            .unwrap_err()
            .to_string();
        assert!(error.starts_with(named), "{error}");
    }
}

#[test]
fn tables_mark_differences_and_summaries_count() {
    let report = sample();
    let text = report.human(false);
    assert!(text.contains("stable 1.86 !"), "{text}");
    assert!(text.contains("FAIL/- !"), "{text}");
    assert!(text.contains("stable 1.79 "), "{text}");
    assert!(!text.contains('\x1b'));
    assert!(report.human(true).contains("\x1b[31m"));
    let summary = report.summary_lines().swap_remove(0);
    // Counted from the catalog, with the sample's `asm_goto` observed stable on 1.85.0.
    let release = Release::new(1, 85, 0);
    let stable_here =
        |feature: &Feature| feature.is_stable_on(release) || feature.name == "asm_goto";
    let stable = FEATURES
        .iter()
        .filter(|feature| stable_here(feature))
        .count();
    let gated: Vec<&str> = crate::features::expect::enabled_in_kernel_mode(release)
        .into_iter()
        .filter(|feature| !stable_here(feature))
        .map(|feature| feature.name)
        .collect();
    assert!(gated.contains(&"derive_coerce_pointee") && !gated.contains(&"unsize"));
    assert!(
        summary.starts_with(&format!(
            "1.85.0: {stable} of {} features stable; kernel mode still needs RUSTC_BOOTSTRAP \
             for {} ({});",
            FEATURES.len(),
            gated.len(),
            gated.join(", ")
        )),
        "{summary}"
    );
    assert!(
        summary.contains("3 of 4 builds, runs and test runs pass"),
        "{summary}"
    );
    let markdown = report.markdown();
    assert!(
        markdown.contains("| `inline_const` | stable 1.79 |\n"),
        "{markdown}"
    );
    // The missing toolchain has no column, only its summary line.
    assert!(!markdown.contains("1.78.0 |"), "{markdown}");
    assert!(
        markdown.contains("- 1.78.0: missing; install it with: rustup toolchain install"),
        "{markdown}"
    );
    assert!(markdown.contains("**stable 1.86 !**"), "{markdown}");
}

#[test]
fn json_names_the_source_by_its_word_and_refuses_others() {
    let json = json::to_pretty(&sample().to_json());
    assert!(json.contains("\"source\": \"rustup\""), "{json}");
    let error = Report::from_json(&json.replace("\"rustup\"", "\"apt\""))
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("toolchains[0].source: unknown variant `apt`, expected one of"),
        "{error}"
    );
}

/// Every build, run and test cell a whole run has for `toolchains` and the catalog's examples,
/// each with the outcome the catalog expects: what the tests start from to make a report that
/// [`Report::check_complete`] accepts.
pub(crate) fn planned_builds(toolchains: &[ToolchainEntry]) -> Vec<BuildCell> {
    let examples: std::collections::BTreeSet<&str> =
        FEATURES.iter().map(|feature| feature.example).collect();
    let mut builds = Vec::new();
    for (index, toolchain) in toolchains.iter().enumerate() {
        if matches!(toolchain.verdict, ToolchainVerdict::Missing(_)) {
            continue;
        }
        let expected = crate::features::expect::expected_outcome(&toolchain.verdict);
        for target in std::iter::once("kernel").chain(examples.iter().copied()) {
            for &kind in cell_kinds(target) {
                for mode in Mode::ALL {
                    builds.push(BuildCell {
                        toolchain: index,
                        target: target.into(),
                        mode,
                        kind,
                        outcome: expected,
                        expected,
                        first_error: None,
                        seconds: 0.1,
                        cached: false,
                        tests: None,
                    });
                }
            }
        }
    }
    builds
}

#[test]
fn a_report_may_lack_a_newer_feature_but_not_have_another() {
    let all: Vec<&str> = FEATURES.iter().map(|feature| feature.name).collect();
    let rows = recorded_rows(&all).unwrap();
    assert!(rows
        .iter()
        .enumerate()
        .all(|(index, row)| *row == Some(index)));
    let without_second = [&all[..1], &all[2..]].concat();
    let rows = recorded_rows(&without_second).unwrap();
    assert_eq!((rows[0], rows[1], rows[2]), (Some(0), None, Some(1)));
    let error = recorded_rows(&[all[0], "no_such_feature"]).unwrap_err();
    assert!(error.to_string().contains("`no_such_feature`"), "{error}");
    // Rows are found by name: a catalog that moved an entry still reads its old reports.
    assert_eq!(
        recorded_rows(&[all[1], all[0]]).unwrap()[..2],
        [Some(1), Some(0)]
    );
    assert!(recorded_rows(&[all[0], all[0]]).is_err(), "a feature twice");
}
