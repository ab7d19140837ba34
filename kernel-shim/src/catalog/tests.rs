// SPDX-License-Identifier: GPL-2.0
//! The catalog's own tests: its lists are well formed and agree with each other.

// The shim is `core` only, but its tests run with `std`.
extern crate std;

use super::*;
use std::vec::Vec;

#[test]
fn release_parse_takes_exactly_three_numbers() {
    assert_eq!(Release::parse("1.85.0"), Some(Release::new(1, 85, 0)));
    assert_eq!(Release::parse("1.85"), None);
    assert_eq!(Release::parse("1.85.0-nightly"), None);
    assert_eq!(Release::parse("1..0"), None);
    assert_eq!(Release::parse("1.85.0.1"), None);
    assert!(Release::new(1, 84, 1) > Release::new(1, 84, 0));
}

#[test]
fn derived_cfgs_follow_the_release() {
    let cfgs: Vec<_> = derived_cfgs(Release::new(1, 85, 0), false).collect();
    assert!(cfgs.contains(&"CONFIG_RUSTC_HAS_COERCE_POINTEE"));
    assert!(cfgs.contains(&"kshim_stable_inline_const"));
    assert!(!cfgs.contains(&"kshim_stable_asm_goto"));
    assert!(!cfgs.contains(&KERNEL_MODE_CFG));
    let cfgs: Vec<_> = derived_cfgs(MINIMUM_RELEASE, true).collect();
    let available: Vec<_> = HAS_CFGS
        .iter()
        .copied()
        .filter(|name| {
            ![
                "derive_coerce_pointee",
                "file_with_nul",
                "unsigned_is_multiple_of",
            ]
            .iter()
            .any(|later| name.ends_with(later))
        })
        .collect();
    assert_eq!(
        cfgs,
        [&[KERNEL_MODE_CFG][..], &available].concat(),
        "1.78.0 has nothing stable yet, and kernel mode all the features it knows"
    );
    // Every name is declared once for --check-cfg, however many features share it.
    let mut names: Vec<_> = all_cfg_names().collect();
    let count = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), count, "a cfg name declared twice");
    let stable_cfgs = FEATURES
        .iter()
        .filter(|feature| feature.stable_since.is_some() && feature.cfg.is_some())
        .count();
    assert_eq!(
        count,
        1 + stable_cfgs + KCONFIG_CFGS.len() + HAS_CFGS.len() + 1,
        "kernel mode, one per stable feature, the kernel's own, the available forms, the \
         architecture's"
    );
    assert_eq!(all_cfg_names().last(), Some(ARCH_CFG));
    assert_eq!(arch_cfg("riscv64"), Some(ARCH_CFG));
    assert_eq!(arch_cfg("s390x"), None);
}

#[test]
fn every_entry_is_named_once_as_an_identifier() {
    for (index, feature) in FEATURES.iter().enumerate() {
        let name = feature.name;
        let identifier = name
            .bytes()
            .next()
            .is_some_and(|first| first.is_ascii_lowercase() || first == b'_')
            && name
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_');
        assert!(
            identifier,
            "catalog entry {index}: `{name}` is not a feature name"
        );
        if let Some(earlier) = FEATURES[..index]
            .iter()
            .position(|other| other.name == name)
        {
            panic!("catalog entries {earlier} and {index} both name `{name}`");
        }
    }
}

#[test]
fn the_allowed_list_names_catalog_features_once() {
    let listed: Vec<&str> = RUST_ALLOWED_FEATURES.split(',').collect();
    for (index, name) in listed.iter().enumerate() {
        assert!(
            feature(name).is_some(),
            "RUST_ALLOWED_FEATURES names `{name}`, which has no catalog entry"
        );
        assert!(
            !listed[..index].contains(name),
            "RUST_ALLOWED_FEATURES names `{name}` twice"
        );
    }
}

#[test]
fn allowed_features_are_the_kernels_list() {
    // The same set in the two forms, each name once.
    let mut allowed: Vec<_> = allowed_features().collect();
    allowed.sort_unstable();
    let mut makefile: Vec<_> = RUST_ALLOWED_FEATURES.split(',').collect();
    makefile.sort_unstable();
    assert_eq!(
        makefile, allowed,
        "RUST_ALLOWED_FEATURES against the kernel_use fields"
    );
    makefile.dedup();
    assert_eq!(makefile.len(), allowed.len(), "a feature allowed twice");
}

#[test]
fn kbuild_driver_flags_carry_the_list_and_the_lints() {
    let mut flags: Vec<std::string::String> = Vec::new();
    kbuild_driver_flags("a,b", |flag| flags.push(std::format!("{flag}")));
    assert_eq!(
        flags,
        [
            "-Zallow-features=a,b",
            "-Zcrate-attr=feature(a,b)",
            "-Astable_features",
            "-Aunused_features"
        ]
    );
}

#[test]
fn has_cfgs_name_features_and_follow_mode_and_release() {
    for name in HAS_CFGS {
        let feature = has_cfg_feature(name).unwrap_or_else(|| panic!("`{name}` names no feature"));
        // Available wherever the compiler knows it: not a predecessor that the kernel drops.
        assert!(!feature.gate.contains("not("), "`{name}`: {}", feature.gate);
    }
    let mut names = HAS_CFGS.to_vec();
    names.dedup();
    assert_eq!(
        names.len(),
        HAS_CFGS.len(),
        "a has-cfg listed twice in a row"
    );
    let has = |release: (u32, u32), kernel: bool| -> Vec<&str> {
        derived_cfgs(Release::new(1, release.0, release.1), kernel)
            .filter(|name| name.starts_with("kshim_has_"))
            .collect()
    };
    // Kernel mode from the first release that knows the feature, stable mode from its
    // stabilization.
    let multiple_of = "kshim_has_unsigned_is_multiple_of";
    assert!(!has((81, 0), true).contains(&multiple_of));
    assert!(has((82, 0), true).contains(&multiple_of));
    assert!(!has((86, 0), false).contains(&multiple_of));
    assert!(has((87, 0), false).contains(&multiple_of));
    assert!(!has((86, 0), false).contains(&"kshim_has_asm_goto"));
    assert!(has((98, 1), true).contains(&"kshim_has_arbitrary_self_types"));
    assert!(!has((98, 1), false).contains(&"kshim_has_arbitrary_self_types"));
}
