// SPDX-License-Identifier: GPL-2.0
//! The kernels page's tests: what it says of each tree, from reports made here.

use super::*;

use crate::kernel::report::json::{CellJson, CrateJson, TreeJson};

fn tree(id: &str, version: Option<&str>, allowed: &[&str], error: Option<&str>) -> TreeJson {
    TreeJson {
        id: id.into(),
        version: version.map(Into::into),
        package: version.map(|version| format!("linux-source-6.12={version}-1")),
        source: None,
        sha256: None,
        minimum_rustc: version.map(|_| "1.78.0".into()),
        allowed_features: allowed.iter().map(|name| name.to_string()).collect(),
        error: error.map(Into::into),
    }
}

fn cell(toolchain: &str, rustc: Option<&str>, real: &str, reason: &str) -> CellJson {
    CellJson {
        tree: "6.12".into(),
        toolchain: toolchain.into(),
        rustc: rustc.map(Into::into),
        minimum_met: rustc.map(|_| true),
        predicted: rustc.map(|_| "pass".into()),
        prediction_error: None,
        crates: rustc
            .iter()
            .map(|_| CrateJson {
                root: KERNEL_CRATE.into(),
                features: vec!["lint_reasons".into()],
                predicted: "pass".into(),
                needs_bootstrap: true,
                errors: Vec::new(),
            })
            .collect(),
        real: real.into(),
        reason: reason.into(),
        first_error: None,
        warning: None,
        tools: None,
        enabled: Vec::new(),
        objects: 0,
        steps: Vec::new(),
        cached: false,
        finding: false,
        boot: None,
    }
}

/// How the page reads the real results and findings of a report; the values are made up
/// for the renderer.
#[test]
fn real_results_and_findings_are_shown_per_tree() {
    let mut failed = cell("debian-1.98.1", Some("1.98.1"), "fail", "make failed");
    failed.first_error = Some("error[E0000]: x".into());
    failed.finding = true;
    let report = KernelJson {
        trees: vec![
            tree("6.12", Some("6.12.118"), &["lint_reasons"], None),
            tree("5.10", Some("5.10.262"), &[], Some("no Rust support")),
        ],
        cells: vec![
            cell("1.78.0", Some("1.78.0"), "pass", "built"),
            failed,
            cell("nightly", None, "not run", "not installed"),
        ],
        tools: None,
        tools_error: None,
        seconds: 1.0,
    };
    let text = crate::util::json::to_pretty(&crate::util::json::to_value(&report));
    let page = kernels_page(Some(&text), Path::new("r.json")).unwrap();
    assert!(
        page.contains(
            "- Compilers: built for real by 1.78.0; failed to build with 1.98.1; not built: \
             nightly (not installed); **finding**: with 1.98.1 the probes predicted pass, \
             the real build said fail."
        ),
        "{page}"
    );
    assert!(page.contains("## Linux 5.10.262 (`5.10`)\n\nNot read in that run: no Rust support."));
    assert!(page.contains("| `lint_reasons` | every compiler probed | yes | [`examples/"));
    let error = kernels_page(Some("{}"), Path::new("r.json")).unwrap_err();
    assert_eq!(
        format!("{error}"),
        "r.json: not a `cargo xtask kernel` JSON report: missing field `trees` at line 1 \
         column 2"
    );
    let none = kernels_page(None, Path::new("r.json")).unwrap();
    assert!(none.contains("No `cargo xtask kernel` report is recorded yet"));
}
