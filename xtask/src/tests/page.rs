// SPDX-License-Identifier: GPL-2.0
//! The committed compatibility page (`docs/compat.html`) as a real browser builds it: Debian's
//! chromium, headless, loads it from a `file:` URL and hands back its document, in which every
//! cell of the committed report (`docs/matrix-report.json`) must carry the class of its status,
//! and exactly the report's failures must be framed.
//!
//! Without a browser the test says so and passes, except under `CI=true`, where `.ci/run`
//! installs one and its absence is a failure.

use crate::project_root;
use crate::tests::support::scratch_dir;
use crate::util::browser;
use crate::util::json::{self, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Every element of `dom` that stands for a report cell: its `data-cell` key and its classes.
fn page_cells(dom: &str) -> BTreeMap<String, BTreeSet<String>> {
    let attribute = |tag: &str, name: &str| -> Option<String> {
        let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        let end = start + tag[start..].find('"')?;
        Some(tag[start..end].replace("&amp;", "&"))
    };
    let mut cells = BTreeMap::new();
    let mut rest = dom;
    while let Some(at) = rest.find(" data-cell=\"") {
        let open = rest[..at].rfind('<').expect("an attribute outside a tag");
        let close = at + rest[at..].find('>').expect("an unclosed tag");
        let tag = &rest[open..close];
        let key = attribute(tag, "data-cell").expect("data-cell without a value");
        let classes = attribute(tag, "class")
            .unwrap_or_default()
            .split_whitespace()
            .map(String::from)
            .collect();
        assert!(
            cells.insert(key.clone(), classes).is_none(),
            "the page has the cell {key} twice"
        );
        rest = &rest[close..];
    }
    cells
}

fn text<'a>(value: &'a Value, name: &str) -> &'a str {
    value[name]
        .as_str()
        .unwrap_or_else(|| panic!("the report's `{name}` is not a string in {value}"))
}

fn ok(value: &Value) -> bool {
    value["ok"]
        .as_bool()
        .unwrap_or_else(|| panic!("no `ok` in {value}"))
}

/// The cells the page must show for the report, read from its JSON as docs/matrix.md documents it:
/// key, the class its status gives, and whether it differs from the catalog.
fn report_cells(report: &Value) -> BTreeMap<String, (String, bool)> {
    let mut cells = BTreeMap::new();
    let toolchains = report["toolchains"].as_array().expect("toolchains");
    let strict = report["strict"].as_bool() == Some(true);
    let shown: BTreeSet<&str> = toolchains
        .iter()
        // The compilers that ran get columns; missing and broken ones only their verdict.
        .filter(|toolchain| matches!(text(toolchain, "verdict"), "ok" | "too-old"))
        .map(|toolchain| text(toolchain, "id"))
        .collect();
    for toolchain in toolchains {
        let verdict = text(toolchain, "verdict");
        let failed = verdict == "broken" || (strict && verdict == "missing");
        cells.insert(
            format!("toolchain/{}", text(toolchain, "id")),
            (format!("v-{verdict}"), failed),
        );
    }
    for feature in report["features"].as_array().expect("features") {
        let name = text(feature, "name");
        for (id, cell) in feature["toolchains"]
            .as_object()
            .expect("feature toolchains")
        {
            if shown.contains(id.as_str()) {
                cells.insert(
                    format!("feature/{name}/{id}"),
                    (format!("st-{}", text(cell, "observed")), !ok(cell)),
                );
            }
        }
    }
    for build in report["builds"].as_array().expect("builds") {
        cells.insert(
            format!(
                "build/{}/{}/{}/{}",
                text(build, "target"),
                text(build, "kind"),
                text(build, "mode"),
                text(build, "toolchain")
            ),
            (format!("out-{}", text(build, "outcome")), !ok(build)),
        );
    }
    for cell in report["kbuild"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        if shown.contains(text(cell, "toolchain")) {
            let class = if ok(cell) {
                "kb-expected"
            } else {
                "kb-unexpected"
            };
            cells.insert(
                format!(
                    "kbuild/{}/{}",
                    text(cell, "fixture"),
                    text(cell, "toolchain")
                ),
                (class.to_string(), !ok(cell)),
            );
        }
    }
    let targets = &report["platforms"];
    for known in targets["known"].as_array().expect("known") {
        let class = match (known["observed"].as_bool(), known["error"].is_null()) {
            (_, false) => "kn-failed",
            (Some(true), true) => "kn-known",
            (Some(false), true) => "kn-unknown",
            (None, true) => "kn-none",
        };
        cells.insert(
            format!(
                "known/{}/{}",
                text(known, "target"),
                text(known, "toolchain")
            ),
            (class.to_string(), !ok(known)),
        );
    }
    for cross in targets["cross"].as_array().expect("cross") {
        cells.insert(
            format!(
                "cross/{}/{}/{}/{}",
                text(cross, "target"),
                text(cross, "stage"),
                cross["mode"].as_str().unwrap_or("-"),
                text(cross, "toolchain")
            ),
            (format!("out-{}", text(cross, "outcome")), !ok(cross)),
        );
    }
    cells
}

/// The kernel grid's cells for the recorded `cargo xtask kernel` report: key, the class of the
/// real result, and whether the prediction said otherwise (framed as a `finding`).
fn kernel_cells(report: &Value) -> BTreeMap<String, (String, bool)> {
    let mut cells = BTreeMap::new();
    for cell in report["cells"]
        .as_array()
        .expect("the kernel report's cells")
    {
        // A compiler not found has no release: the page names it by its toolchain id.
        let compiler = cell["rustc"]
            .as_str()
            .unwrap_or_else(|| text(cell, "toolchain"));
        cells.insert(
            format!("kernel/{}/{compiler}", text(cell, "tree")),
            (
                format!("kt-{}", text(cell, "real").replace(' ', "-")),
                cell["finding"].as_bool() == Some(true),
            ),
        );
    }
    cells
}

#[test]
fn the_committed_page_shows_every_cell_of_the_committed_report() {
    let root = project_root();
    let page = root.join("docs/compat.html");
    let report_text = std::fs::read_to_string(root.join("docs/matrix-report.json"))
        .expect("reading docs/matrix-report.json");
    let report = json::parse(&report_text).expect("docs/matrix-report.json is JSON");
    let failures = report["failures"].as_array().expect("failures").len();

    if browser::find().is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "no chromium under CI=true: .ci/run installs it (apt-get install chromium)"
        );
        eprintln!("no chromium here (apt-get install chromium): the page was not loaded");
        return;
    }
    let dom = browser::dump_dom(&browser::file_url(&page), &scratch_dir("page"))
        .expect("loading the page in chromium");
    assert!(
        dom.contains("<h1>Which compiler takes which kernel feature</h1>"),
        "the browser did not render the page: {}",
        &dom[..dom.len().min(400)]
    );
    for external in ["<script", "<link", " src=", "url(", "@import"] {
        assert!(
            !dom.contains(external),
            "the page refers to something outside itself ({external})"
        );
    }

    let shown = page_cells(&dom);
    let mut expected = report_cells(&report);
    let kernel = match std::fs::read_to_string(root.join("docs/kernel-report.json")) {
        Ok(text) => kernel_cells(&json::parse(&text).expect("docs/kernel-report.json is JSON")),
        Err(_) => BTreeMap::new(),
    };
    let findings = kernel.values().filter(|(_, finding)| *finding).count();
    for (key, (class, finding)) in &kernel {
        let classes = shown
            .get(key)
            .unwrap_or_else(|| panic!("the page has no kernel cell {key}"));
        assert!(
            classes.contains(class),
            "{key}: {class}, not in {classes:?}"
        );
        assert_eq!(
            classes.contains("finding"),
            *finding,
            "{key}: framed as a finding"
        );
    }
    let framed_findings = shown
        .values()
        .filter(|classes| classes.contains("finding"))
        .count();
    assert_eq!(
        framed_findings, findings,
        "kernel findings framed on the page"
    );
    expected.extend(
        kernel
            .into_iter()
            .map(|(key, (class, _))| (key, (class, false))),
    );
    let missing: Vec<&String> = expected
        .keys()
        .filter(|key| !shown.contains_key(*key))
        .collect();
    let extra: Vec<&String> = shown
        .keys()
        .filter(|key| !expected.contains_key(*key))
        .collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "the page's cells are not the report's: missing {missing:?}, not in the report {extra:?}"
    );
    for (key, (class, differs)) in &expected {
        let classes = &shown[key];
        assert!(
            classes.contains(class),
            "{key}: the report says {class}, the page's classes are {classes:?}"
        );
        assert_eq!(
            classes.contains("differs"),
            *differs,
            "{key}: framed on the page must mean differing in the report"
        );
    }
    let framed = shown
        .values()
        .filter(|classes| classes.contains("differs"))
        .count();
    assert_eq!(
        framed, failures,
        "the page frames {framed} cells, the report has {failures} failures"
    );
    assert!(
        expected.len() > 100,
        "only {} cells: is the committed report a whole run?",
        expected.len()
    );
}
