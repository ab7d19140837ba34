// SPDX-License-Identifier: GPL-2.0
//! The documentation: generated regions up to date, the report schema as the code writes it,
//! links that lead somewhere, every xtask module placed in the layout.

use super::read;
use crate::project_root;
use std::fs;
use std::path::{Path, PathBuf};

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

#[test]
fn the_compatibility_page_is_generated_from_the_recorded_reports() {
    // The page, its reports and the regions of docs/features.md: what `cargo xtask docs
    // --check` checks in CI, here for `cargo test` too.
    let root = project_root();
    for recorded in [
        crate::docs::MATRIX_REPORT,
        crate::docs::USAGE_REPORT,
        crate::docs::page::PAGE,
    ] {
        assert!(
            root.join(recorded).is_file(),
            "{recorded} is missing: record a real run with `cargo xtask docs --report FILE --usage FILE`"
        );
    }
    assert_eq!(
        crate::docs::regenerate(&root, None, None, true).unwrap(),
        crate::Verdict::Success,
        "a generated file is stale: run `cargo xtask docs`"
    );
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
    use crate::report::targets::{KnownCell, TargetAxis, TargetCell};
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
            tests: Some((1, 1, 0)),
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
            sources: vec![Some(Ok("rust-web-src=1.85.0".into()))],
            known: vec![KnownCell {
                toolchain: 0,
                triple: "aarch64-unknown-none".into(),
                observed: Some(true),
                expected: Some(true),
                error: None,
            }],
            cross: vec![TargetCell {
                toolchain: 0,
                triple: "aarch64-unknown-none".into(),
                target: "sites".into(),
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

/// GitHub's anchor for a Markdown heading: lower case, spaces to `-`, punctuation dropped.
fn heading_anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file's headings, fenced code left out.
fn anchors(markdown: &str) -> Vec<String> {
    let mut fenced = false;
    let mut anchors = Vec::new();
    for line in markdown.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            anchors.push(heading_anchor(line.trim_start_matches('#')));
        }
    }
    anchors
}

#[test]
fn readme_and_docs_link_only_to_what_exists() {
    let root = project_root();
    let mut pages = vec![PathBuf::from("README.md"), PathBuf::from("ARCHITECTURE.md")];
    for entry in fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|extension| extension == "md") {
            pages.push(path.strip_prefix(&root).unwrap().to_path_buf());
        }
    }
    let mut broken = Vec::new();
    for page in &pages {
        let text = read(page.to_str().unwrap());
        let directory = page.parent().unwrap_or(Path::new(""));
        for link in text.split("](").skip(1) {
            let Some(target) = link.split(')').next() else {
                continue;
            };
            if target.contains("://") || target.starts_with("crate::") {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            let file = if file.is_empty() {
                page.clone()
            } else {
                directory.join(file)
            };
            let path = root.join(&file);
            if !path.exists() {
                broken.push(format!("{}: {target} (no such file)", page.display()));
                continue;
            }
            let is_markdown = file.extension().is_some_and(|extension| extension == "md");
            if !anchor.is_empty() && is_markdown {
                let text = fs::read_to_string(&path).unwrap();
                if !anchors(&text).iter().any(|known| known == anchor) {
                    broken.push(format!("{}: {target} (no such heading)", page.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}
