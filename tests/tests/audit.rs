// SPDX-License-Identifier: GPL-2.0
//! `audit` as a user runs it on the compiler running these tests: a package's `rust-version` is
//! its minimum, a feature enabled twice is the build error rustc says it is, a crate root without
//! features needs none, a `.config` given for a Kconfig is refused, and a misspelt feature name
//! gets a did-you-mean.

use crate::support::*;
use std::path::Path;
use std::time::Duration;

/// `audit ARGS --toolchain RUSTC`, with the compiler running these tests.
fn audit(args: &[&str]) -> Run {
    xtask(&["audit"])
        .args(args)
        .arg("--toolchain")
        .arg(current_rustc())
        .run_within(Duration::from_secs(120))
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
    let root = package.join("src/lib.rs");
    std::fs::write(&root, "#![feature(inline_const)]\n").unwrap();
    // A removable feature is a finding.
    audit(&[path_str(&root)])
        .code(1)
        .stderr_has("audit: --min-rust 1.80.0, the rust-version of")
        .stdout_has("feature(inline_const): stable since 1.79.0, at or before 1.80.0");
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
        .run();
    compiled
        .check(!compiled.status.success(), "rustc took it")
        .stderr_has("the feature `never_type` has already been enabled");

    let run = audit(&[path_str(&root), "--min-rust", "1.85"]);
    run.code(1)
        .stdout_has("error: feature(never_type): enabled twice")
        .stdout_has("(first at line 1, column 12)")
        .stdout_has("twice.rs:2:28")
        .check(
            !run.stdout.contains("no build error"),
            "no build error said",
        );
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
    audit(&[path_str(&root), "--min-rust", "1.60"])
        .code(0)
        .stdout_has("needs no unstable feature on any compiler");
}

#[test]
fn kconfig_files_a_dot_config_is_refused_and_one_without_thresholds_is_said() {
    let directory = scratch_dir("audit-kconfig-files");
    let audit_with =
        |kconfig: &Path| audit(&["--features", "asm_goto", "--kconfig", path_str(kconfig)]);
    let dot_config = directory.join(".config");
    std::fs::write(&dot_config, "CONFIG_RUST=y\nCONFIG_RUSTC_VERSION=109500\n").unwrap();
    audit_with(&dot_config).refused("is a .config (line 1: `CONFIG_RUST=y`), not a Kconfig");

    // The Rust entries of 6.1's init/Kconfig: no release threshold among them.
    let six_one = directory.join("Kconfig");
    std::fs::write(
        &six_one,
        "config RUST_IS_AVAILABLE\n\tdef_bool $(success,$(srctree)/scripts/rust_is_available.sh)\n\n\
         config RUSTC_VERSION_TEXT\n\tstring\n\tdepends on RUST\n\
         \tdefault \"$(shell,$(RUSTC) --version 2>/dev/null)\"\n",
    )
    .unwrap();
    audit_with(&six_one)
        .code(0)
        .stderr_has("defines no RUSTC_HAS_* release threshold");
}

#[test]
fn a_misspelt_feature_name_gets_a_did_you_mean() {
    let features = ["--features", "asm_gotto,lint_reasons"];
    let json = audit(&[&features[..], &["--format", "json"]].concat());
    let report = json.json();
    let summary = report["toolchains"][0]["summary"]
        .as_str()
        .unwrap_or_default();
    json.check(
        summary.contains("unknown feature asm_gotto (did you mean `asm_goto`?)"),
        "no did-you-mean in the toolchain's summary",
    );
    // The table shows no marker, so no legend.
    let human = audit(&features);
    human.check(!human.stdout.contains("`(off)`"), "a legend for no marker");
}

/// `audit --usage`'s compiles are steps of the one run: a second run takes both (every feature
/// allowed, then without `never_type`) from the cache and says the same; a changed source is
/// compiled again.
#[test]
fn usage_compiles_come_from_the_cache_until_the_source_changes() {
    let root = scratch_dir("audit-usage-cache").join("lib.rs");
    let usage = |source: &str| {
        // Written only when it changes: a file's stamp is part of the key.
        if std::fs::read_to_string(&root).ok().as_deref() != Some(source) {
            std::fs::write(&root, source).unwrap();
        }
        let run = audit(&[path_str(&root), "--usage", "--format", "json", "-j", "2"]);
        let report = run.json();
        let place = &report["features"][0]["toolchains"]
            .as_object()
            .and_then(|toolchains| toolchains.values().next())
            .unwrap_or_else(|| run.fail("no toolchain's cell"))["places"][0];
        let at = (place["line"].as_u64(), place["column"].as_u64());
        (reused(&run), at, run.stdout)
    };
    let source = "#![feature(never_type)]\npub type Never = !;\n";
    let (first, at, report) = usage(source);
    assert_eq!((first, at), (0, (Some(2), Some(18))), "{report}");
    let (second, _, again) = usage(source);
    assert_eq!(second, 2, "{again}");
    assert_eq!(report, again);
    let (third, at, report) = usage("#![feature(never_type)]\n\npub type Never = !;\n");
    assert_eq!((third, at), (0, (Some(3), Some(18))), "{report}");
}
