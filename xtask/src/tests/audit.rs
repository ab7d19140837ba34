// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask audit` on the compiler running these tests: the shim's own feature block, the
//! kernel's (a fixture copied from the seed commit), the kernel's `rust_allowed_features`
//! list, and a pin file whose only toolchain is missing.
//!
//! What the compiler answers is checked against the catalog, whose stable-since releases the
//! matrix confirms on every pinned compiler; the audit itself never reads them.

use crate::catalog::{feature, Release};
use crate::commands::audit::input::{read_crate_root, read_feature_list, Input};
use crate::commands::audit::{parse_min_rust, run_audit, AuditReport, Options, Probed};
use crate::features::expect::expected_status;
use crate::features::status::Status;
use crate::project_root;
use crate::tests::support::{current_rustc, scratch_dir};
use crate::Verdict;

/// Audits `input` on this compiler alone.
fn audit(name: &str, input: Input, min_rust: Option<&str>) -> AuditReport {
    let mut options = Options::new(input);
    options.toolchains = vec![current_rustc().to_string_lossy().into_owned()];
    options.scratch = scratch_dir(name);
    options.min_rust = min_rust.map(|text| parse_min_rust(text).unwrap());
    run_audit(&options).expect("running the audit")
}

/// This compiler's release and its answer for each name of the input.
fn answers(report: &AuditReport) -> (Release, Vec<(String, Status)>) {
    assert_eq!(report.columns.len(), 1);
    let Probed::Answered(answer) = &report.columns[0].probed else {
        panic!("the compiler did not answer: {:?}", report.columns[0]);
    };
    let names = report.input.names();
    let pairs = names
        .iter()
        .map(|name| {
            (
                name.to_string(),
                answer.status(&report.input, name).unwrap(),
            )
        })
        .collect();
    (answer.release, pairs)
}

/// Every answer about a catalog feature is what the catalog predicts for this release.
fn assert_catalog_agrees(release: Release, answers: &[(String, Status)]) {
    for (name, status) in answers {
        if let Some(feature) = feature(name) {
            assert_eq!(*status, expected_status(feature, release), "{name}");
        }
    }
}

#[test]
fn the_shims_feature_block() {
    let input = read_crate_root(&project_root().join("kernel-shim/src/lib.rs")).unwrap();
    assert_eq!(input.entries.len(), crate::catalog::FEATURES.len());
    let report = audit("audit-shim", input, None);
    let (release, answers) = answers(&report);
    assert_catalog_agrees(release, &answers);
    assert!(
        release >= Release::new(1, 87, 0),
        "the tests run on 1.95 or a nightly"
    );
    let summary = report.summary_line(0);
    // What the catalog says of this compiler, in kernel mode.
    let active = crate::features::expect::enabled_in_kernel_mode(release);
    let gated: Vec<&str> = active
        .iter()
        .filter(|feature| !feature.is_stable_on(release))
        .map(|feature| feature.name)
        .collect();
    let expected = format!(
        "{} active feature(s) ({} switched off by their cfg_attr), {} stable; \
         {} still need RUSTC_BOOTSTRAP ({})",
        active.len(),
        crate::catalog::FEATURES.len() - active.len(),
        active.len() - gated.len(),
        gated.len(),
        gated.join(", ")
    );
    assert!(
        summary.contains(&expected),
        "{summary}\nexpected: {expected}"
    );
    let text = report.human(false);
    assert!(
        text.contains("coerce_unsized") && text.contains("gated (off)"),
        "{text}"
    );
    assert_eq!(
        report.cross.stable_from, None,
        "arbitrary_self_types is unstable"
    );
    assert_eq!(report.verdict(), Verdict::Success);
}

#[test]
fn the_kernels_feature_block_at_min_rust_1_85() {
    let path = project_root().join("xtask/tests/fixtures/audit/kernel_lib_b9b701fce49a.rs");
    let input = read_crate_root(&path).unwrap();
    let report = audit("audit-kernel", input, Some("1.85"));
    let (release, answers) = answers(&report);
    assert_catalog_agrees(release, &answers);
    let lines = |findings: &[crate::commands::audit::summary::Finding]| -> Vec<(String, usize)> {
        findings
            .iter()
            .map(|finding| {
                let entry = &report.input.entries[finding.entry];
                (entry.name.clone(), entry.location.unwrap().0)
            })
            .collect()
    };
    // What the kernel itself removed once its minimum reached 1.85: the seven stabilized
    // features, and the pre-1.84 `CoerceUnsized` branch.
    let expected_removable = [
        ("inline_const", 14),
        ("lint_reasons", 17),
        ("raw_ref_op", 20),
        ("const_maybe_uninit_as_mut_ptr", 23),
        ("const_mut_refs", 24),
        ("const_ptr_write", 25),
        ("const_refs_to_cell", 26),
    ];
    assert_eq!(
        lines(&report.lint.removable),
        expected_removable.map(|(name, line)| (name.to_string(), line))
    );
    assert_eq!(
        lines(&report.lint.dead),
        [
            ("coerce_unsized", 34),
            ("dispatch_from_dyn", 35),
            ("unsize", 36)
        ]
        .map(|(name, line)| (name.to_string(), line))
    );
    let text = report.human(false);
    assert!(
        text.contains(
            "removable: feature(inline_const): stable since 1.79.0, at or before 1.85.0\n  --> "
        ) && text.contains(&format!(
            "kernel_lib_b9b701fce49a.rs:14:12\n   |\n14 | #![feature(inline_const)]\n   | {}{}\n",
            " ".repeat(11),
            "^".repeat("inline_const".len())
        )),
        "{text}"
    );
    assert_eq!(
        report.verdict(),
        Verdict::Failure,
        "the lint found lines to remove"
    );
    let json = report.to_json();
    assert_eq!(
        json.get("removable")
            .and_then(|r| r.as_array())
            .map(Vec::len),
        Some(7)
    );
}

#[test]
fn the_kernels_allowed_features_list() {
    let input = read_feature_list(
        "asm_const,asm_goto,arbitrary_self_types,lint_reasons,raw_ref_op,no_such_feature",
    )
    .unwrap();
    let report = audit("audit-list", input, Some("1.85.0"));
    let (release, answers) = answers(&report);
    assert_catalog_agrees(release, &answers);
    assert_eq!(
        answers.last(),
        Some(&("no_such_feature".to_string(), Status::Unknown))
    );
    let removable: Vec<&str> = report
        .lint
        .removable
        .iter()
        .map(|finding| report.input.entries[finding.entry].name.as_str())
        .collect();
    assert_eq!(
        removable,
        ["asm_const", "lint_reasons", "raw_ref_op"],
        "asm_goto is 1.87"
    );
    assert!(report.lint.dead.is_empty());
    let summary = report.summary_line(0);
    assert!(
        summary.contains(
            "still needs RUSTC_BOOTSTRAP (arbitrary_self_types); \
             build errors on it: unknown feature no_such_feature"
        ),
        "{summary}"
    );
    // An unknown name is a build error on every compiler from the minimum on, not a feature
    // waiting for stabilization.
    let errors: Vec<&str> = report
        .lint
        .errors
        .iter()
        .map(|finding| report.input.entries[finding.entry].name.as_str())
        .collect();
    assert_eq!(errors, ["no_such_feature"]);
}

#[test]
fn a_build_error_is_a_finding_and_the_summary_says_it_first() {
    let input = read_feature_list("inline_const,nosuch_feature").unwrap();
    let report = audit("audit-build-error", input, None);
    assert_eq!(report.verdict(), Verdict::Failure);
    let text = report.human(false);
    let errors = text
        .find("Build errors on the newest compiler, not features waiting for stabilization: unknown feature nosuch_feature.")
        .unwrap_or_else(|| panic!("{text}"));
    let apart = text
        .find("Apart from those build errors, needs only stable Rust")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(errors < apart, "{text}");
    assert!(!text.contains("\nNeeds only stable Rust"), "{text}");
}

#[test]
fn a_missing_toolchain_is_reported_not_fatal() {
    let directory = scratch_dir("audit-missing");
    let pins = directory.join("pins.toml");
    std::fs::write(
        &pins,
        "[[pin]]\nid = \"ancient\"\nrelease = \"1.0.0\"\nrole = \"feature\"\nrustup = \"1.0.0\"\n",
    )
    .unwrap();
    let mut options = Options::new(read_feature_list("asm_goto").unwrap());
    options.pins = Some(pins);
    options.scratch = directory;
    let report = run_audit(&options).expect("a missing toolchain must not stop the audit");
    assert_eq!(
        report.summary_line(0),
        "ancient (1.0.0): missing; install it with: rustup toolchain install 1.0.0 --profile minimal"
    );
    assert!(report
        .human(false)
        .contains("No compiler answered: nothing can be concluded."));
    assert_eq!(report.verdict(), Verdict::Failure);
}

#[test]
fn the_given_kconfig_wins_over_the_catalogs_derivation() {
    let directory = scratch_dir("audit-kconfig-wins");
    let kconfig = directory.join("Kconfig");
    std::fs::write(
        &kconfig,
        "config RUSTC_HAS_COERCE_POINTEE\n\tdef_bool RUSTC_VERSION >= 109900\n",
    )
    .unwrap();
    let path = project_root().join("xtask/tests/fixtures/audit/kernel_lib_b9b701fce49a.rs");
    let mut options = Options::new(read_crate_root(&path).unwrap());
    options.toolchains = vec![current_rustc().to_string_lossy().into_owned()];
    options.scratch = directory;
    options.kconfig = Some(kconfig);
    let report = run_audit(&options).unwrap();
    let (release, _) = answers(&report);
    let active = |name: &str| {
        let entry = report.input.lines_of(name)[0];
        report.decider.active_on(entry.condition.as_ref(), release)
    };
    // On 1.95 the Kconfig's 1.99.0 threshold is not reached: the pre-1.84 branch is taken.
    assert_eq!(active("derive_coerce_pointee"), Some(false));
    assert_eq!(active("coerce_unsized"), Some(true));
}

#[test]
fn proc_macro_library_features_are_probed_with_proc_macro_loaded() {
    // The opening of a proc-macro crate root (the kernel's rust/macros/lib.rs enables
    // `proc_macro_span`), read without the `#[proc_macro]` functions that show its kind.
    let root = scratch_dir("audit-proc-macro").join("lib.rs");
    std::fs::write(
        &root,
        "#![cfg_attr(not(CONFIG_RUSTC_HAS_SPAN_FILE), feature(proc_macro_span))]\n\
         #![feature(proc_macro_def_site, proc_macro_diagnostic, no_such_feature)]\n",
    )
    .unwrap();
    let input = read_crate_root(&root).unwrap();
    let report = audit("audit-proc-macro", input, None);
    let (_, answers) = answers(&report);
    for name in [
        "proc_macro_span",
        "proc_macro_def_site",
        "proc_macro_diagnostic",
    ] {
        let status = answers.iter().find(|(n, _)| n == name).unwrap().1;
        assert!(
            matches!(status, Status::Gated | Status::Stable(_)),
            "{name}: {status:?}"
        );
    }
    // A name no library knows stays unknown.
    assert_eq!(answers.last().unwrap().1, Status::Unknown);
}
