// SPDX-License-Identifier: GPL-2.0
//! The committed reports, with one feature taken out as if recorded before the catalog had
//! it, still make every generated file, the feature's cells plainly "not recorded"; a report
//! naming a feature the catalog lacks, or with a cell altered, is still refused.

use crate::docs::{page, status_region, summary_region, usage_region, MATRIX_REPORT, USAGE_REPORT};
use crate::project_root;
use crate::report::usage::UsageReport;
use crate::report::Report;
use crate::util::json::{self, Value};

/// The feature taken out: its example shows no other feature, so the builds go with it.
const LEFT_OUT: &str = "asm_const";
const ITS_EXAMPLE: &str = "rust_asm_const";

fn committed(file: &str) -> Value {
    json::parse(&std::fs::read_to_string(project_root().join(file)).unwrap()).unwrap()
}

fn without_the_feature(mut report: Value) -> Value {
    let features = report["features"].as_array_mut().unwrap();
    let before = features.len();
    features.retain(|feature| feature["name"] != LEFT_OUT);
    assert_eq!(
        features.len() + 1,
        before,
        "the committed report has {LEFT_OUT}"
    );
    if let Some(builds) = report.get_mut("builds").and_then(Value::as_array_mut) {
        builds.retain(|build| build["target"] != ITS_EXAMPLE);
    }
    report
}

#[test]
fn a_report_without_a_newer_feature_still_renders_it_as_not_recorded() {
    let catalog_feature = crate::catalog::feature(LEFT_OUT).unwrap();
    assert_eq!(catalog_feature.example, ITS_EXAMPLE);
    let text = json::to_pretty(&without_the_feature(committed(MATRIX_REPORT)));
    let report = Report::from_json(&text).unwrap();
    report.check_complete().unwrap();

    let statuses = status_region(&report).unwrap();
    let row = statuses
        .lines()
        .find(|line| line.starts_with(&format!("| `{LEFT_OUT}` |")))
        .unwrap();
    assert!(
        row.split(" | ")
            .skip(1)
            .all(|cell| cell.trim_end_matches(" |") == "not recorded"),
        "{row}"
    );
    let summary = summary_region(&report, "a date");
    // The one taken out, and any the catalog gained since the reports were recorded.
    let recorded = committed(MATRIX_REPORT)["features"]
        .as_array()
        .unwrap()
        .len();
    let not_recorded = crate::catalog::FEATURES.len() - recorded + 1;
    assert!(
        summary.contains(&format!("({not_recorded} not recorded)")),
        "{summary}"
    );
    assert!(!summary.contains("probe failed"), "{summary}");

    let usage_text = json::to_pretty(&without_the_feature(committed(USAGE_REPORT)));
    let usage = UsageReport::from_json(&usage_text).unwrap();
    let places = usage_region(&usage).unwrap();
    assert!(
        places.contains(&format!("| `{LEFT_OUT}` | all | not recorded")),
        "{places}"
    );
    let html = page::compat_page(&report, Some(&usage), &[], "a date");
    assert!(
        html.contains(&format!("{LEFT_OUT} on ")),
        "the page has the feature's row"
    );
    assert!(html.contains("not recorded: the report was made before the catalog had it"));
    assert!(html.contains("st-not-recorded"));

    // Written back, the report is the one it was: the feature stays out.
    let again = json::to_pretty(&report.to_json());
    assert!(!again.contains(&format!("\"{LEFT_OUT}\"")));
}

#[test]
fn a_report_naming_another_feature_or_with_an_altered_cell_is_refused() {
    let mut report = committed(MATRIX_REPORT);
    report["features"][0]["name"] = Value::from("no_such_feature");
    let error = format!(
        "{:#}",
        Report::from_json(&json::to_pretty(&report)).unwrap_err()
    );
    assert!(error.contains("`no_such_feature`"), "{error}");

    let mut report = committed(MATRIX_REPORT);
    // A compiler that was probed: the first in the file may be a pin that was missing.
    let cell = &mut report["features"][0]["toolchains"]["1.78.0"];
    let observed = cell["observed"].as_str().unwrap().to_string();
    cell["observed"] = Value::from(if observed == "gated" {
        "unknown"
    } else {
        "gated"
    });
    let error = format!(
        "{:#}",
        Report::from_json(&json::to_pretty(&report)).unwrap_err()
    );
    assert!(error.contains("feature"), "{error}");
    // A pin that was missing has no word on any feature (this was accepted).
    let mut report = committed(MATRIX_REPORT);
    report["features"][0]["toolchains"]["1.64.0"]["observed"] = Value::from("gated");
    let checked =
        Report::from_json(&json::to_pretty(&report)).and_then(|report| report.check_complete());
    let error = format!("{:#}", checked.unwrap_err());
    assert!(error.contains("it was never asked"), "{error}");

    let mut usage = committed(USAGE_REPORT);
    usage["features"][0]["name"] = Value::from("no_such_feature");
    let usage = UsageReport::from_json(&json::to_pretty(&usage)).unwrap();
    let error = format!("{:#}", usage_region(&usage).unwrap_err());
    assert!(error.contains("`no_such_feature`"), "{error}");
}
