// SPDX-License-Identifier: GPL-2.0
//! The kernels page's tests: what it says of each tree, from reports made here.

use super::*;

use crate::kernel::report::json::{
    BootJson, CellJson, FailureJson, KunitJson, SampleJson, TreeJson,
};
use crate::kernel::rules::{CratePrediction, Predicted};

pub(crate) fn tree(
    id: &str,
    version: Option<&str>,
    allowed: &[&str],
    error: Option<&str>,
) -> TreeJson {
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

pub(crate) fn cell(toolchain: &str, rustc: Option<&str>, real: &str, reason: &str) -> CellJson {
    CellJson {
        tree: "6.12".into(),
        toolchain: toolchain.into(),
        rustc: rustc.map(Into::into),
        minimum_met: rustc.map(|_| true),
        predicted: rustc.map(|_| "pass".into()),
        prediction_error: None,
        crates: rustc
            .iter()
            .map(|_| CratePrediction {
                root: KERNEL_CRATE.into(),
                features: vec!["lint_reasons".into()],
                predicted: Predicted::Pass,
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

/// A boot as `cargo xtask kernel --boot` records it: `kunit` (passed, failed, skipped) with one
/// named failure per failed case, and two sample lines of which `seen` were printed, beside a
/// sample that prints nothing at init; no KUnit and no samples where QEMU did not run.
pub(crate) fn boot(
    result: &str,
    reason: &str,
    kunit: Option<(usize, usize, usize)>,
    seen: usize,
) -> BootJson {
    let ran = kunit.is_some();
    let mut samples: Vec<SampleJson> = (0..2)
        .map(|index| SampleJson {
            name: "rust_minimal".into(),
            expected: Some(format!("rust_minimal: line {index}")),
            seen: index < seen,
        })
        .collect();
    samples.push(SampleJson {
        name: "rust_soc".into(),
        expected: None,
        seen: false,
    });
    BootJson {
        result: result.into(),
        reason: reason.into(),
        accel: ran.then(|| "tcg".into()),
        samples: if ran { samples } else { Vec::new() },
        kunit: kunit.map(|(passed, failed, skipped)| KunitJson {
            passed,
            failed,
            skipped,
            failures: (0..failed)
                .map(|index| FailureJson {
                    suite: "rust_kvec".into(),
                    test: format!("test_{index}"),
                    output: format!(
                        "# test_{index}: ASSERTION FAILED at rust/kernel/alloc/kvec.rs:{index}"
                    ),
                })
                .collect(),
        }),
        console_tail: ran.then(|| "[    0.9] reboot: Restarting system".into()),
        seconds: ran.then_some(1.1),
        cached: false,
    }
}

/// A report of one tree whose four compilers built it: booted and passed, booted and failed,
/// not booted (QEMU missing), and no boot in the report; and a fifth compiler not installed.
pub(crate) fn booted_report() -> KernelJson {
    let mut cells = Vec::new();
    for (toolchain, boot) in [
        (
            "1.78.0",
            Some(boot("pass", "rebooted", Some((390, 0, 1)), 2)),
        ),
        (
            "1.85.0",
            Some(boot(
                "fail",
                "KUnit failed: rust_kvec.test_0",
                Some((389, 1, 1)),
                1,
            )),
        ),
        (
            "1.96.0",
            Some(boot(
                "not run",
                "qemu-system-x86_64 is not installed: `apt-get install qemu-system-x86`",
                None,
                0,
            )),
        ),
        ("1.98.1", None),
    ] {
        let mut built = cell(toolchain, Some(toolchain), "pass", "built");
        built.boot = boot;
        cells.push(built);
    }
    cells.push(cell("nightly", None, "not run", "not installed"));
    KernelJson {
        trees: vec![tree("6.12", Some("6.12.118"), &["lint_reasons"], None)],
        cells,
        tools: None,
        tools_error: None,
        seconds: 1.0,
    }
}

/// Each built cell's boot is on the page in a few words, a failed one as a finding, and one the
/// report lacks as not recorded; a boot lost from the report changes its line.
#[test]
fn each_built_cells_boot_is_shown_and_a_failed_one_as_a_finding() {
    let page = |report: &KernelJson| {
        let text = crate::util::json::to_pretty(&crate::util::json::to_value(report));
        kernels_page(Some(&text), Path::new("r.json")).unwrap()
    };
    let report = booted_report();
    let line = "- Booted under QEMU (`cargo xtask kernel --boot`): 1.78.0 boot pass (KUnit \
                390/1 skipped), samples' lines seen 2 of 2; **finding**: 1.85.0 boot fail (KUnit \
                389/1 failed/1 skipped), samples' lines seen 1 of 2: KUnit failed: \
                rust\\_kvec.test\\_0 (built, so predicted to boot and pass); 1.96.0 boot not run: \
                qemu-system-x86\\_64 is not installed: \\`apt-get install qemu-system-x86\\`; not \
                recorded for 1.98.1 (the report has no boot for these cells that built).\n";
    let shown = page(&report);
    assert!(shown.contains(&format!("built for real by 1.78.0, 1.85.0, 1.96.0, 1.98.1; not built: nightly (not installed).\n{line}\n")), "{shown}");
    let mut lost = report.clone();
    lost.cells[0].boot = None;
    let shown = page(&lost);
    assert!(!shown.contains(line), "{shown}");
    assert!(shown.contains(": **finding**: 1.85.0 boot fail"), "{shown}");
    assert!(
        shown.contains("not recorded for 1.78.0, 1.98.1 (the report"),
        "{shown}"
    );
    let mut passed = report;
    passed.cells[1].boot = Some(boot("pass", "rebooted", Some((390, 0, 1)), 2));
    assert!(!page(&passed).contains("finding"));
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
