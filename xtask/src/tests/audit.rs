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
use crate::tests::support::{current_rustc, scratch_dir, xtask_binary};
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
fn a_packages_rust_version_is_its_minimum() {
    let package = scratch_dir("audit-rust-version");
    std::fs::create_dir_all(package.join("src")).unwrap();
    std::fs::write(
        package.join("Cargo.toml"),
        "[package]\nname = \"rv\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
         rust-version = \"1.80\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(package.join("src/lib.rs"), "#![feature(inline_const)]\n").unwrap();
    let output = std::process::Command::new(xtask_binary())
        .arg("audit")
        .arg(package.join("src/lib.rs"))
        .arg("--toolchain")
        .arg(current_rustc())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("audit: --min-rust 1.80.0, the rust-version of"),
        "{stderr}"
    );
    assert!(
        stdout.contains("feature(inline_const): stable since 1.79.0, at or before 1.80.0"),
        "{stdout}"
    );
    assert_eq!(
        output.status.code(),
        Some(1),
        "a removable feature is a finding"
    );
}

#[test]
fn a_feature_enabled_twice_is_a_build_error() {
    let directory = scratch_dir("audit-twice");
    let root = directory.join("twice.rs");
    std::fs::write(
        &root,
        "#![feature(never_type)]\n#![cfg_attr(all(), feature(never_type))]\npub fn f() {}\n",
    )
    .unwrap();
    // What the compiler itself says, bootstrapped so that the gate does not stop it first:
    // E0636, or the deny-by-default `duplicate_features` lint on newer compilers.
    let compiled = std::process::Command::new(current_rustc())
        .env("RUSTC_BOOTSTRAP", "1")
        .args(["--crate-type", "lib", "--emit=metadata", "--out-dir"])
        .arg(&directory)
        .arg(&root)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&compiled.stderr);
    assert!(!compiled.status.success(), "{said}");
    assert!(
        said.contains("the feature `never_type` has already been enabled"),
        "{said}"
    );

    let output = std::process::Command::new(xtask_binary())
        .arg("audit")
        .arg(&root)
        .args(["--min-rust", "1.85", "--toolchain"])
        .arg(current_rustc())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("error: feature(never_type): enabled twice"),
        "{stdout}"
    );
    assert!(stdout.contains("(first at line 1, column 12)"), "{stdout}");
    assert!(stdout.contains("twice.rs:2:28"), "{stdout}");
    assert!(!stdout.contains("no build error"), "{stdout}");
    assert_eq!(output.status.code(), Some(1), "{stdout}");
}

#[test]
fn a_crate_root_without_features_needs_no_unstable_feature() {
    // memchr 2.8.3's attributes (its lib.rs, lines 172-186): valid, with no feature.
    let root = scratch_dir("audit-no-feature").join("lib.rs");
    std::fs::write(
        &root,
        "#![deny(missing_docs)]\n#![no_std]\n#![cfg_attr(\n    not(any(\n        \
         all(target_arch = \"x86_64\", target_feature = \"sse2\"),\n        \
         all(target_arch = \"wasm32\", target_feature = \"simd128\"),\n        \
         target_arch = \"aarch64\",\n    )),\n    allow(dead_code)\n)]\n\
         #![cfg_attr(miri, allow(dead_code, unused_macros))]\n\npub fn f() {}\n",
    )
    .unwrap();
    let output = std::process::Command::new(xtask_binary())
        .arg("audit")
        .arg(&root)
        .args(["--min-rust", "1.60", "--toolchain"])
        .arg(current_rustc())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stdout.contains("needs no unstable feature on any compiler"),
        "{stdout}{stderr}"
    );
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
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
fn kconfig_files_a_dot_config_is_refused_and_one_without_thresholds_is_said() {
    let directory = scratch_dir("audit-kconfig-files");
    let audit_with = |kconfig: &std::path::Path| {
        std::process::Command::new(xtask_binary())
            .args(["audit", "--features", "asm_goto", "--kconfig"])
            .arg(kconfig)
            .arg("--toolchain")
            .arg(current_rustc())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let dot_config = directory.join(".config");
    std::fs::write(&dot_config, "CONFIG_RUST=y\nCONFIG_RUSTC_VERSION=109500\n").unwrap();
    let refused = audit_with(&dot_config);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("is a .config (line 1: `CONFIG_RUST=y`), not a Kconfig"),
        "{stderr}"
    );

    // The Rust entries of 6.1's init/Kconfig: no release threshold among them.
    let six_one = directory.join("Kconfig");
    std::fs::write(
        &six_one,
        "config RUST_IS_AVAILABLE\n\tdef_bool $(success,$(srctree)/scripts/rust_is_available.sh)\n\n\
         config RUSTC_VERSION_TEXT\n\tstring\n\tdepends on RUST\n\
         \tdefault \"$(shell,$(RUSTC) --version 2>/dev/null)\"\n",
    )
    .unwrap();
    let read = audit_with(&six_one);
    let stderr = String::from_utf8_lossy(&read.stderr);
    assert!(
        stderr.contains("defines no RUSTC_HAS_* release threshold"),
        "{stderr}"
    );
    assert_eq!(read.status.code(), Some(0), "{stderr}");
}

#[test]
fn rustc_args_that_name_outputs_linkers_plugins_or_files_are_left_out_and_named() {
    let directory = scratch_dir("audit-rustc-args");
    let outside = directory.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let root = directory.join("lib.rs");
    std::fs::write(
        &root,
        "#![feature(never_type)]\npub type Never = !;\nfn main() {}\n",
    )
    .unwrap();
    // A linker that leaves a mark if it is ever run.
    let linker = directory.join("fake-linker");
    std::fs::write(
        &linker,
        format!("#!/bin/sh\ntouch {}/linked\nexit 1\n", outside.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&linker, std::fs::Permissions::from_mode(0o755)).unwrap();
    let other = directory.join("other.args");
    std::fs::write(&other, "--cfg\nfrom_other_file\n").unwrap();
    let o = |name: &str| outside.join(name).display().to_string();
    let args = [
        "--edition=2021".to_string(),
        "--crate-type=bin".into(),
        "--crate-name=given".into(),
        "-o".into(),
        o("dash-o"),
        "--out-dir".into(),
        o("out-dir"),
        format!("--emit=link={}", o("emit")),
        format!("-Clinker={}", linker.display()),
        "-C".into(),
        format!("linker={}", linker.display()),
        "-Zllvm-plugins=/nonexistent/plugin.so".into(),
        format!("@{}", other.display()),
        root.display().to_string(),
    ];
    let file = directory.join("given.args");
    std::fs::write(&file, args.join("\n")).unwrap();
    let output = std::process::Command::new(xtask_binary())
        .arg("audit")
        .arg(&root)
        .args(["--usage", "--rustc-args"])
        .arg(&file)
        .arg("--toolchain")
        .arg(current_rustc())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let left: Vec<&str> = outside
        .read_dir()
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .map(|name| Box::leak(name.into_boxed_str()) as &str)
        .collect();
    assert!(
        left.is_empty(),
        "written outside: {left:?}\n{stdout}{stderr}"
    );
    for named in [
        format!("`-o {}` (an output path)", o("dash-o")),
        format!("`--out-dir {}` (an output path)", o("out-dir")),
        format!("`--emit=link={}` (an output path)", o("emit")),
        format!("`-Clinker={}` (a linker)", linker.display()),
        format!("`-C linker={}` (a linker)", linker.display()),
        "`-Zllvm-plugins=/nonexistent/plugin.so` (a plugin)".to_string(),
        format!("`@{}` (another argument file)", other.display()),
    ] {
        assert!(stderr.contains(&named), "{named} not in\n{stderr}");
    }
    // The compile still ran, and found where the crate needs the feature.
    assert!(stdout.contains("lib.rs:2:18"), "{stdout}{stderr}");
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

#[test]
fn a_misspelt_feature_name_gets_a_did_you_mean() {
    let output = std::process::Command::new(xtask_binary())
        .args([
            "audit",
            "--wide",
            "--features",
            "asm_gotto,lint_reasons",
            "--toolchain",
        ])
        .arg(current_rustc())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("unknown feature asm_gotto (did you mean `asm_goto`?)"),
        "{stdout}"
    );
    // The table shows no marker, so no legend.
    assert!(!stdout.contains("`(off)`"), "{stdout}");
}
