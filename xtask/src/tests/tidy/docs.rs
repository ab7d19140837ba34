// SPDX-License-Identifier: GPL-2.0
//! The documentation: generated regions up to date and the report schema as the code writes it.
//! (`docs --check` and the links are tested through the binary in the top-level `tests/`
//! crate.)

use super::read;
use crate::project_root;
use std::fs;

#[test]
fn generated_docs_are_up_to_date() {
    // Without a report, the statuses region of docs/features.md is kept as it is: the check is
    // that every part generated from the catalog agrees with it.
    for (path, expected) in crate::docs::generated_files(&project_root(), None, None).unwrap() {
        let found = fs::read_to_string(&path).unwrap_or_default();
        assert!(
            found == expected,
            "{} is stale: run `cargo xtask docs` to regenerate it",
            path.display()
        );
    }
}

/// Every key of a JSON value, at any depth.
fn json_keys(value: &crate::util::json::Value, keys: &mut std::collections::BTreeSet<String>) {
    match value {
        crate::util::json::Value::Object(members) => {
            for (key, member) in members {
                keys.insert(key.clone());
                json_keys(member, keys);
            }
        }
        crate::util::json::Value::Array(elements) => {
            for element in elements {
                json_keys(element, keys);
            }
        }
        _ => {}
    }
}

/// A report with one toolchain, every feature cell and one failing build, so that its JSON
/// holds every key the layout has.
fn sample_report() -> crate::report::Report {
    use crate::catalog::{Release, FEATURES};
    use crate::features::expect::{Outcome, ToolchainVerdict};
    use crate::features::status::Status;
    use crate::report::targets::{KnownCell, Sources, TargetAxis, TargetCell};
    use crate::report::{BuildCell, FeatureCell, Observed, Report, ToolchainEntry};
    use crate::run::plan::{Kind, Mode};
    let release = Release::new(1, 85, 0);
    Report {
        toolchains: vec![ToolchainEntry {
            id: "t".into(),
            spec: "t".into(),
            source: None,
            pin: None,
            rustc: Some("/r".into()),
            release_text: Some("1.85.0".into()),
            release: Some(release),
            channel: Some("stable".into()),
            commit_date: None,
            host: None,
            verdict: ToolchainVerdict::Ok,
        }],
        features: FEATURES
            .iter()
            .map(|feature| {
                let status = crate::features::expect::expected_status(feature, release);
                vec![FeatureCell {
                    observed: Observed::Status(status),
                    expected: Some(Status::Gated),
                }]
            })
            .collect(),
        builds: vec![BuildCell {
            toolchain: 0,
            target: "kernel".into(),
            mode: Mode::Kernel,
            kind: Kind::Test,
            outcome: Outcome::Fail,
            expected: Outcome::Pass,
            first_error: Some("1 of 2 tests failed".into()),
            seconds: 1.0,
            cached: false,
            tests: Some(crate::report::TestCounts {
                passed: 1,
                failed: 1,
                ignored: 0,
            }),
        }],
        strict: false,
        kbuild: vec![crate::report::kbuild::KbuildCell {
            toolchain: 0,
            fixture: "outside_allow_list".into(),
            expected: Some("E0725".into()),
            observed: Some(vec!["E0725".into()]),
            first_error: Some(
                "error[E0725]: the feature `coerce_unsized` is not in the list".into(),
            ),
            seconds: 0.1,
            cached: false,
        }],
        shard: None,
        date: Some("2026-12-04 03:08 UTC".into()),
        targets: TargetAxis {
            triples: vec!["aarch64-unknown-none".into()],
            sources: vec![Some(Sources::Identity("rust-web-src=1.85.0".into()))],
            llvm: Some(vec![Some(19)]),
            known: vec![KnownCell {
                toolchain: 0,
                triple: "aarch64-unknown-none".into(),
                observed: Some(true),
                expected: Some(true),
                error: None,
            }],
            cells: vec![TargetCell {
                toolchain: 0,
                triple: "aarch64-unknown-none".into(),
                stage: "sites".into(),
                kind: Kind::Objects,
                mode: Some(Mode::Kernel),
                outcome: Outcome::Pass,
                expected: Outcome::Pass,
                first_error: None,
                detail: Some("3 static-branch sites".into()),
                seconds: 0.4,
                cached: false,
            }],
        },
    }
}

#[test]
fn the_matrix_page_documents_the_report_schema_as_the_code_does() {
    let readme = read("docs/matrix.md");
    let block = readme
        .split("## The JSON report")
        .nth(1)
        .and_then(|section| section.split("```text\n").nth(1))
        .and_then(|block| block.split("```").next())
        .expect("docs/matrix.md has a ```text block under \"## The JSON report\"");
    let documented: std::collections::BTreeSet<String> = block
        .split('"')
        .collect::<Vec<_>>()
        .windows(2)
        .filter(|pair| pair[1].trim_start().starts_with(':'))
        .map(|pair| pair[0].to_string())
        .collect();
    let mut written = std::collections::BTreeSet::new();
    json_keys(&sample_report().to_json(), &mut written);
    // The per-toolchain objects are keyed by toolchain id, which the layout shows by example.
    written.remove("t");
    let undocumented: Vec<&String> = written.difference(&documented).collect();
    let stale: Vec<&String> = documented
        .difference(&written)
        .filter(|key| !key.contains('.') && !key.contains('-'))
        .collect();
    assert!(
        undocumented.is_empty() && stale.is_empty(),
        "docs/matrix.md's JSON layout is out of step with `Report::to_json`: keys written but not \
         documented {undocumented:?}, documented but not written {stale:?}"
    );
}
