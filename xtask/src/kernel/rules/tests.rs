// SPDX-License-Identifier: GPL-2.0
//! Tests against the real trees (Debian's `linux-source-X`, as `cargo xtask kernel` unpacks
//! them under `target/kernel/trees/`, or under `$KSHIM_KERNEL_TREES/linux-source-X`) and the
//! provisioned compilers. Absent trees skip a test with a note; under `CI=true` an absent 6.12
//! or 7.3 tree (which CI unpacks) fails it.

use super::*;
use crate::kernel::report::json::{CellJson, KernelJson, TreeJson};
use crate::run::plan::Rustc;
use crate::toolchains::discovery::{discover, Availability, VERSION_TIMEOUT};
use std::time::Duration;

/// The trees CI always has.
const CI_TREES: [&str; 2] = ["6.12", "7.3"];

/// Every `RUSTC_HAS_*` of the tree's Kconfig (`CONFIG_RUSTC_HAS_X`), and whether Kconfig
/// sets it for a compiler of `release`, in the Kconfig's order.
fn rustc_has(tree: &Tree, release: Release) -> Vec<(String, bool)> {
    tree.kconfig
        .iter()
        .filter(|symbol| symbol.cfg.starts_with("CONFIG_RUSTC_HAS_"))
        .map(|symbol| {
            let set = symbol.from.is_some_and(|from| release >= from);
            (symbol.cfg.clone(), set)
        })
        .collect()
}

/// The unpacked `linux-source-X` tree for `series` (`6.12`), if there is one.
pub(crate) fn real_tree(series: &str) -> Option<PathBuf> {
    let name = format!("linux-source-{series}");
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os("KSHIM_KERNEL_TREES") {
        candidates.push(PathBuf::from(dir).join(&name));
    }
    let trees = crate::project_root().join("target/kernel/trees");
    if let Ok(entries) = std::fs::read_dir(&trees) {
        for entry in entries.flatten() {
            let prefix = entry.file_name().to_string_lossy().into_owned();
            if prefix.starts_with(&format!("{name}-")) {
                candidates.push(entry.path().join(&name));
            }
        }
    }
    let found = candidates
        .into_iter()
        .find(|root| root.join("Makefile").is_file() && root.join("scripts").is_dir());
    // CI unpacks 6.12 and 7.3 (`.ci/run`); the other trees are for a developer's machine.
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true") || !CI_TREES.contains(&series),
            "CI=true and no {name} tree: run `cargo xtask kernel` first to unpack it"
        );
        eprintln!(
            "note: no {name} tree under target/kernel/trees/ or $KSHIM_KERNEL_TREES; skipped"
        );
    }
    found
}

fn names(krate: &CrateRoot) -> Vec<String> {
    krate.features.iter().map(|f| f.name.clone()).collect()
}

fn krate<'a>(tree: &'a Tree, root: &str) -> &'a CrateRoot {
    tree.crates
        .iter()
        .find(|krate| krate.root == root)
        .unwrap_or_else(|| panic!("no crate root {root} in {}", tree.version))
}

#[test]
fn reads_6_12() {
    let Some(root) = real_tree("6.12") else {
        return;
    };
    let tree = read(&root).unwrap();
    assert!(tree.version.starts_with("6.12."), "{}", tree.version);
    assert_eq!(
        tree.allowed_features,
        ["arbitrary_self_types", "lint_reasons", "used_with_arg"]
    );
    assert_eq!(
        tree.driver_flags,
        [
            "-Zallow-features=arbitrary_self_types,lint_reasons,used_with_arg",
            "-Zcrate-attr=no_std",
            "-Zcrate-attr=feature(arbitrary_self_types,lint_reasons,used_with_arg)",
        ]
    );
    let build = std::fs::read_to_string(root.join("scripts/Makefile.build")).unwrap();
    let rust_common_cmd = makefiles::rust_common_cmd(&build).unwrap();
    assert!(rust_common_cmd.windows(2).any(|pair| pair
        == [
            "-Zcrate-attr=no_std",
            "-Zcrate-attr='feature($(rust_allowed_features))'"
        ]));
    assert_eq!(tree.minimum.rustc, Release::new(1, 78, 0));
    assert_eq!(tree.minimum.bindgen, Release::new(0, 65, 1));
    let kernel = krate(&tree, "rust/kernel/lib.rs");
    assert_eq!(kernel.build, Build::Library);
    assert_eq!(
        names(kernel),
        [
            "arbitrary_self_types",
            "coerce_unsized",
            "dispatch_from_dyn",
            "inline_const",
            "lint_reasons",
            "unsize",
            "used_with_arg"
        ]
    );
    let minimal = krate(&tree, "samples/rust/rust_minimal.rs");
    assert_eq!(minimal.build, Build::Kbuild);
    assert_eq!(minimal.name, "rust_minimal");
    assert!(minimal.features.is_empty());
    assert!(tree
        .symbol("CONFIG_RUSTC_HAS_UNNECESSARY_TRANSMUTES")
        .is_some_and(|symbol| symbol.from == Some(Release::new(1, 88, 0))));
    for expected in [
        "rust/macros/lib.rs",
        "rust/uapi/lib.rs",
        "rust/bindings/lib.rs",
        "rust/compiler_builtins.rs",
        "rust/ffi.rs",
    ] {
        krate(&tree, expected);
    }
}

#[test]
fn reads_7_3() {
    let Some(root) = real_tree("7.3") else {
        return;
    };
    let tree = read(&root).unwrap();
    assert_eq!(tree.version, "7.3.0-rc7");
    // `-Dwarnings` from scripts/Makefile.warn's `CONFIG_WERROR` block, after `-Astable_features`.
    assert_eq!(
        tree.denied_lints,
        ["internal_features", "incomplete_features"]
    );
    assert_eq!(
        tree.allowed_features,
        [
            "arbitrary_self_types",
            "asm_goto",
            "generic_arg_infer",
            "used_with_arg"
        ]
    );
    // 7.3's min-tool-version.sh tells architectures apart.
    assert_eq!(tree.minimum.rustc, Release::new(1, 85, 0));
    let powerpc = minimum(&root, "powerpc", "powerpc").unwrap();
    assert_eq!(powerpc.rustc, Release::new(1, 95, 0));
    let s390 = minimum(&root, "s390", "s390").unwrap();
    assert_eq!(s390.rustc, Release::new(1, 96, 0));
    assert_eq!(tree.minimum.bindgen, Release::new(0, 71, 1));
    let kernel = krate(&tree, "rust/kernel/lib.rs");
    let file_with_nul = kernel
        .features
        .iter()
        .find(|feature| feature.name == "file_with_nul")
        .unwrap();
    assert_eq!(
        file_with_nul.condition().unwrap().to_string(),
        "CONFIG_RUSTC_HAS_FILE_WITH_NUL"
    );
    // The vendored crates, pin-init and the drivers are crate roots too.
    for expected in [
        "rust/syn/lib.rs",
        "rust/quote/lib.rs",
        "rust/proc-macro2/lib.rs",
        "rust/zerocopy/src/lib.rs",
        "rust/pin-init/src/lib.rs",
        "rust/pin-init/internal/src/lib.rs",
        "drivers/block/rnull/rnull.rs",
        "drivers/android/binder/rust_binder_main.rs",
        "mm/kasan/kasan_test_rust.rs",
        "lib/find_bit_benchmark_rust.rs",
    ] {
        krate(&tree, expected);
    }
    assert_eq!(krate(&tree, "rust/pin-init/src/lib.rs").name, "pin_init");
    assert_eq!(
        krate(&tree, "rust/pin-init/internal/src/lib.rs").name,
        "pin_init_internal"
    );
    // pin-init tests a cfg no Kconfig defines: its `unsafe_pinned` branch is never on.
    assert!(tree.symbol("CONFIG_RUSTC_HAS_UNSAFE_PINNED").is_none());
    let pin_init = krate(&tree, "rust/pin-init/src/lib.rs");
    assert!(names(pin_init).contains(&"unsafe_pinned".to_string()));
    let (on, undecided) = prediction::enabled_features(&tree, pin_init, Release::new(1, 98, 0));
    assert!(
        on.is_empty() && undecided.is_empty(),
        "{on:?} {undecided:?}"
    );
    // proc-macro2's `proc_macro_span_file` cfg is given from 1.88.0 on.
    let proc_macro2 = krate(&tree, "rust/proc-macro2/lib.rs");
    assert!(proc_macro2
        .cfgs
        .contains(&("proc_macro_span_file".into(), Some(Release::new(1, 88, 0)))));
    assert!(proc_macro2.cfgs.contains(&("wrap_proc_macro".into(), None)));
    // macros enables proc_macro_span only before Span::file (1.88.0).
    let macros = krate(&tree, "rust/macros/lib.rs");
    let on = |release| prediction::enabled_features(&tree, macros, release).0;
    assert!(on(Release::new(1, 85, 0)).contains(&"proc_macro_span".to_string()));
    assert!(!on(Release::new(1, 88, 0)).contains(&"proc_macro_span".to_string()));
}

#[test]
fn reads_6_1_and_refuses_5_10_and_bad_trees() {
    if let Some(root) = real_tree("6.1") {
        let tree = read(&root).unwrap();
        assert_eq!(tree.allowed_features, ["core_ffi_c"]);
        assert_eq!(tree.minimum.rustc, Release::new(1, 62, 0));
    }
    if let Some(root) = real_tree("5.10") {
        let error = format!("{:#}", read(&root).unwrap_err());
        assert!(error.contains("has no Rust support"), "{error}");
    }
    let empty = std::env::temp_dir().join(format!("kshim-no-tree-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let error = format!("{:#}", read(&empty).unwrap_err());
    assert!(error.contains("is not a kernel tree"), "{error}");
    std::fs::remove_dir_all(&empty).unwrap();
}

#[test]
fn a_tree_without_rust_makefile_has_no_rust_support() {
    let Some(root) = real_tree("6.12") else {
        return;
    };
    // A private copy of the files 5.10 has too (it has no rust/ at all).
    let copy = std::env::temp_dir().join(format!("kshim-no-rust-{}", std::process::id()));
    for file in ["Makefile", "init/Kconfig", "scripts/Makefile.build"] {
        let to = copy.join(file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(root.join(file), to).unwrap();
    }
    let error = format!("{:#}", read(&copy).unwrap_err());
    std::fs::remove_dir_all(&copy).unwrap();
    assert!(
        error.contains("(6.12.") && error.contains("has no Rust support"),
        "{error}"
    );
}

#[test]
fn a_makefile_build_without_an_allowed_list_is_an_error() {
    let Some(root) = real_tree("6.12") else {
        return;
    };
    // A private copy of the files read, with `rust_allowed_features` taken out.
    let copy = std::env::temp_dir().join(format!("kshim-no-list-{}", std::process::id()));
    for file in [
        "Makefile",
        "init/Kconfig",
        "rust/Makefile",
        "scripts/min-tool-version.sh",
    ] {
        let to = copy.join(file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(root.join(file), to).unwrap();
    }
    let build = std::fs::read_to_string(root.join("scripts/Makefile.build")).unwrap();
    let without: String = build
        .lines()
        .filter(|line| !line.starts_with("rust_allowed_features"))
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(copy.join("scripts/Makefile.build"), without).unwrap();
    let error = format!("{:#}", read(&copy).unwrap_err());
    std::fs::remove_dir_all(&copy).unwrap();
    assert!(error.contains("sets no `rust_allowed_features`"), "{error}");
}

/// The compiler of pin `id` (`debian-1.85.0`), if it is provisioned.
fn compiler(id: &str) -> Option<Rustc> {
    let sh = xshell::Shell::new().unwrap();
    let allowed = crate::toolchains::debian::Provisioning::Allowed;
    let found = discover(&sh, None, &[], VERSION_TIMEOUT, allowed).unwrap();
    let rustc = found.into_iter().find_map(|entry| match entry {
        Availability::Found { toolchain, version } if toolchain.id == id => {
            Some(Rustc::of(&toolchain, version.release))
        }
        _ => None,
    });
    if rustc.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true and no {id}: run `cargo xtask toolchains install`"
        );
        eprintln!("note: {id} is not provisioned; skipped");
    }
    rustc
}

#[test]
fn predicts_7_3_with_real_compilers() {
    let Some(root) = real_tree("7.3") else {
        return;
    };
    let tree = read(&root).unwrap();
    let directory = std::env::temp_dir().join(format!("kshim-kernel-probe-{}", std::process::id()));
    let timeout = std::time::Duration::from_secs(120);
    if let Some(rustc) = compiler("debian-1.85.0") {
        let prediction = predict(&tree, &rustc, &directory, timeout).unwrap();
        assert!(prediction.minimum_met);
        assert_eq!(prediction.predicted, Predicted::Pass, "{prediction:#?}");
        let kernel = prediction
            .crates
            .iter()
            .find(|krate| krate.root == "rust/kernel/lib.rs")
            .unwrap();
        // A stable compiler needs the bootstrap for `#![feature]`.
        assert!(kernel.needs_bootstrap);
        assert!(!kernel.features.contains(&"file_with_nul".to_string()));
        // 7.3's Kconfig has five thresholds, from 1.88.0 on: none is set for 1.85.0.
        assert_eq!(
            rustc_has(&tree, rustc.release),
            [
                "SPAN_FILE",
                "UNNECESSARY_TRANSMUTES",
                "FILE_WITH_NUL",
                "FILE_AS_C_STR",
                "SUSPICIOUS_RUNTIME_SYMBOL_DEFINITIONS"
            ]
            .map(|name| (format!("CONFIG_RUSTC_HAS_{name}"), false))
        );
    }
    if let Some(rustc) = compiler("1.78.0") {
        let prediction = predict(&tree, &rustc, &directory, timeout).unwrap();
        assert!(!prediction.minimum_met);
        assert_eq!(prediction.predicted, Predicted::Refused);
        // 1.78 does not know `derive_coerce_pointee`: the kernel crate's probe says so.
        let kernel = prediction
            .crates
            .iter()
            .find(|krate| krate.root == "rust/kernel/lib.rs")
            .unwrap();
        assert_eq!(kernel.predicted, Predicted::Fail);
        assert!(
            kernel
                .errors
                .iter()
                .any(|error| error.contains("derive_coerce_pointee") && error.contains("E0635")),
            "{:?}",
            kernel.errors
        );
    }
    if let Some(rustc) = compiler("debian-1.63.0") {
        // A driver's features come from `-Zcrate-attr`: its errors name them as the source's.
        let prediction = predict(&tree, &rustc, &directory, timeout).unwrap();
        let minimal = prediction
            .crates
            .iter()
            .find(|krate| krate.root == "samples/rust/rust_minimal.rs")
            .unwrap();
        assert!(minimal.features.is_empty());
        assert_eq!(minimal.predicted, Predicted::Fail);
        assert!(
            minimal
                .errors
                .contains(&"unknown feature `asm_goto` (E0635)".to_string()),
            "{:?}",
            minimal.errors
        );
    }
    let _ = std::fs::remove_dir_all(&directory);
}

#[test]
fn predicts_6_1_fails_with_1_63_where_werror_denies_stable_features() {
    let Some(root) = real_tree("6.1") else {
        return;
    };
    let tree = read(&root).unwrap();
    // `CONFIG_WERROR=y` (x86_64_defconfig) and `-Dwarnings`: nothing allows the feature lints.
    assert_eq!(tree.denied_lints, makefiles::FEATURE_LINTS);
    let Some(rustc) = compiler("debian-1.63.0") else {
        return;
    };
    let directory = std::env::temp_dir().join(format!("kshim-kernel-6-1-{}", std::process::id()));
    let prediction = predict(&tree, &rustc, &directory, Duration::from_secs(120)).unwrap();
    let _ = std::fs::remove_dir_all(&directory);
    // The real build's error: `nll` is stable since 1.63.0, in rust/alloc/lib.rs.
    assert_eq!(prediction.predicted, Predicted::Fail, "{prediction:#?}");
    let alloc = krate_prediction(&prediction, "rust/alloc/lib.rs");
    assert_eq!(
        alloc.errors,
        ["feature `nll` has been stable since 1.63.0 (`stable_features`, denied)"]
    );
}

#[test]
fn predicts_6_12_passes_where_it_allows_stable_features_and_its_crate_internal_ones() {
    let Some(root) = real_tree("6.12") else {
        return;
    };
    let tree = read(&root).unwrap();
    assert_eq!(
        tree.denied_lints,
        ["internal_features", "incomplete_features"]
    );
    assert_eq!(
        krate(&tree, "rust/compiler_builtins.rs").allowed_lints,
        ["internal_features"]
    );
    let Some(rustc) = compiler("debian-1.96.0") else {
        return;
    };
    let directory = std::env::temp_dir().join(format!("kshim-kernel-6-12-{}", std::process::id()));
    let prediction = predict(&tree, &rustc, &directory, Duration::from_secs(120)).unwrap();
    let _ = std::fs::remove_dir_all(&directory);
    assert_eq!(prediction.predicted, Predicted::Pass, "{prediction:#?}");
}

fn krate_prediction<'a>(prediction: &'a Prediction, root: &str) -> &'a CratePrediction {
    let found = prediction.crates.iter().find(|krate| krate.root == root);
    found.unwrap_or_else(|| panic!("no {root} in {prediction:#?}"))
}

/// The JSON a `cargo xtask kernel` report has for one tree and its cells, from real reads and
/// predictions; the real builds are `not run` here (`commands/kernel.rs` makes them).
fn report_part(
    tree_id: &str,
    tree: &Tree,
    predictions: &[(String, Prediction)],
) -> (TreeJson, Vec<CellJson>) {
    let tree_json = TreeJson {
        id: tree_id.into(),
        version: Some(tree.version.clone()),
        package: None,
        source: None,
        sha256: None,
        minimum_rustc: Some(tree.minimum.rustc.to_string()),
        allowed_features: tree.allowed_features.clone(),
        error: None,
    };
    let cells = predictions
        .iter()
        .map(|(release, prediction)| CellJson {
            tree: tree_id.into(),
            toolchain: release.clone(),
            rustc: Some(release.clone()),
            minimum_met: Some(prediction.minimum_met),
            predicted: Some(prediction.predicted.word().into()),
            prediction_error: None,
            crates: prediction.crates.clone(),
            real: "not run".into(),
            reason: "predictions only".into(),
            first_error: None,
            warning: None,
            tools: None,
            enabled: Vec::new(),
            objects: 0,
            steps: Vec::new(),
            cached: false,
            finding: false,
            boot: None,
        })
        .collect();
    (tree_json, cells)
}

#[test]
fn the_kernels_page_shows_how_the_lists_changed_from_6_12_to_7_3() {
    let (Some(old), Some(new)) = (real_tree("6.12"), real_tree("7.3")) else {
        return;
    };
    let compilers: Vec<Rustc> = ["debian-1.85.0", "debian-1.98.1"]
        .iter()
        .filter_map(|id| compiler(id))
        .collect();
    if compilers.len() < 2 {
        return;
    }
    let directory = std::env::temp_dir().join(format!("kshim-kernels-page-{}", std::process::id()));
    let timeout = std::time::Duration::from_secs(120);
    let mut trees = Vec::new();
    let mut cells = Vec::new();
    for (id, root) in [("6.12", old), ("7.3", new)] {
        let tree = read(&root).unwrap();
        let predictions: Vec<(String, Prediction)> = compilers
            .iter()
            .map(|rustc| {
                (
                    rustc.release.to_string(),
                    predict(&tree, rustc, &directory, timeout).unwrap(),
                )
            })
            .collect();
        let (tree_value, tree_cells) = report_part(id, &tree, &predictions);
        trees.push(tree_value);
        cells.extend(tree_cells);
    }
    let _ = std::fs::remove_dir_all(&directory);
    let report = KernelJson {
        trees,
        cells,
        tools: None,
        tools_error: None,
        seconds: 0.0,
    };
    let page = crate::docs::kernels::kernels_page(
        Some(&crate::util::json::to_value(&report).to_string()),
        Path::new("docs/kernel-report.json"),
    )
    .unwrap();
    // 6.12 drops `lint_reasons` from the allowed list and gains `asm_goto` and
    // `generic_arg_infer`, as its and 7.3's Makefile.build say.
    assert!(
        page.contains(
            "- `rust_allowed_features`: 3, then 4; dropped `lint_reasons`; added `asm_goto`, \
             `generic_arg_infer`."
        ),
        "{page}"
    );
    // `file_with_nul` is on only where Kconfig's RUSTC_HAS_FILE_WITH_NUL is (1.89.0 on).
    let file_with_nul = "| `file_with_nul` | 1.98.1 (not 1.85.0) | no | [`examples/";
    assert!(page.contains(file_with_nul), "{page}");
    // A feature the catalog has links to the shim's example.
    assert!(
        page.contains("| `arbitrary_self_types` | every compiler probed | yes | [`examples/"),
        "{page}"
    );
    assert!(
        page.contains("| `used_with_arg` | every compiler probed | yes | [`examples/"),
        "{page}"
    );
    assert!(!page.contains("| not in the shim |"), "{page}");
    assert!(page.contains("## Linux 7.3.0-rc7 (`7.3`)"), "{page}");
}

/// A private copy of the files of the real 6.12 tree that [`read`] needs, with `rust/` reduced
/// to its kernel crate and two injected samples: one that enables an allowed feature itself,
/// one that uses a feature outside the list.
fn tree_with_bad_samples(root: &Path, name: &str) -> PathBuf {
    let copy = std::env::temp_dir().join(format!("kshim-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&copy);
    for file in [
        "Makefile",
        "init/Kconfig",
        "rust/Makefile",
        "rust/kernel/lib.rs",
        "scripts/Makefile.build",
        "scripts/min-tool-version.sh",
    ] {
        let to = copy.join(file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(root.join(file), to).unwrap();
    }
    let samples = copy.join("samples/rust");
    std::fs::create_dir_all(&samples).unwrap();
    std::fs::write(
        samples.join("Makefile"),
        "obj-m += rust_twice.o rust_outside.o\n",
    )
    .unwrap();
    std::fs::write(samples.join("rust_twice.rs"), "#![feature(lint_reasons)]\n").unwrap();
    std::fs::write(samples.join("rust_outside.rs"), "#![feature(never_type)]\n").unwrap();
    copy
}

#[test]
fn a_driver_that_enables_an_allowed_feature_or_one_outside_the_list_fails() {
    let Some(root) = real_tree("6.12") else {
        return;
    };
    let copy = tree_with_bad_samples(&root, "bad-samples");
    let tree = read(&copy).unwrap();
    assert_eq!(
        tree.crates
            .iter()
            .map(|krate| (krate.root.as_str(), krate.build))
            .collect::<Vec<_>>(),
        [
            ("rust/kernel/lib.rs", Build::Library),
            ("samples/rust/rust_outside.rs", Build::Kbuild),
            ("samples/rust/rust_twice.rs", Build::Kbuild),
        ]
    );
    let directory = copy.join("probes");
    let timeout = std::time::Duration::from_secs(120);
    for id in ["1.78.0", "debian-1.98.1"] {
        let Some(rustc) = compiler(id) else {
            continue;
        };
        let prediction = predict(&tree, &rustc, &directory, timeout).unwrap();
        assert_eq!(
            prediction.predicted,
            Predicted::Fail,
            "{id}: {prediction:#?}"
        );
        let errors = |root: &str| {
            let krate = prediction.crates.iter().find(|k| k.root == root).unwrap();
            assert_eq!(krate.predicted, Predicted::Fail, "{id}: {krate:?}");
            krate.errors.join("\n")
        };
        let twice = errors("samples/rust/rust_twice.rs");
        assert!(
            // E0636 "already been declared" on 1.78, later "already been enabled"; on 1.98.1 the
            // deny-by-default `duplicate_features` lint instead of E0636.
            (twice.contains("E0636") || twice.contains("[duplicate_features]"))
                && twice.contains("the feature `lint_reasons` has already"),
            "{id}: {twice}"
        );
        let outside = errors("samples/rust/rust_outside.rs");
        assert!(
            outside.contains("E0725") && outside.contains("`never_type`"),
            "{id}: {outside}"
        );
    }
    std::fs::remove_dir_all(&copy).unwrap();
}

/// What `kconfig.rs` says of `CONFIG_RUSTC_HAS_UNSAFE_PINNED`, checked against every tree.
#[test]
fn no_trees_kconfig_defines_rustc_has_unsafe_pinned() {
    let mut tested_by_pin_init = Vec::new();
    for series in ["6.1", "6.12", "7.2", "7.3"] {
        let Some(root) = real_tree(series) else {
            continue;
        };
        let kconfig = std::fs::read_to_string(root.join("init/Kconfig")).unwrap();
        assert!(!kconfig.contains("UNSAFE_PINNED"), "{series}");
        let tree = read(&root).unwrap();
        let tests_it = tree.crates.iter().any(|krate| {
            krate.features.iter().any(|feature| {
                feature
                    .condition()
                    .is_some_and(|c| c.to_string().contains("CONFIG_RUSTC_HAS_UNSAFE_PINNED"))
            })
        });
        if tests_it {
            tested_by_pin_init.push(series);
        }
    }
    if real_tree("7.3").is_some() {
        assert!(
            tested_by_pin_init.contains(&"7.3"),
            "{tested_by_pin_init:?}"
        );
    }
}

#[test]
fn a_min_tool_version_script_that_fails_is_named_in_the_error() {
    let Some(root) = real_tree("6.12") else {
        return;
    };
    let copy = std::env::temp_dir().join(format!("kshim-bad-script-{}", std::process::id()));
    for file in [
        "Makefile",
        "init/Kconfig",
        "rust/Makefile",
        "scripts/Makefile.build",
    ] {
        let to = copy.join(file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(root.join(file), to).unwrap();
    }
    std::fs::write(
        copy.join("scripts/min-tool-version.sh"),
        "echo \"$1: unknown tool\" >&2\nexit 1\n",
    )
    .unwrap();
    let error = format!("{:#}", read(&copy).unwrap_err());
    std::fs::remove_dir_all(&copy).unwrap();
    assert!(
        error.contains("min-tool-version.sh rustc")
            && error.contains("exit status 1")
            && error.contains("rustc: unknown tool"),
        "{error}"
    );
}

#[test]
fn the_driver_flags_allow_the_feature_lints_the_trees_allow() {
    // The catalog's `KBUILD_ALLOWED_LINTS` are the `*_features` lints `rust_common_flags` allows.
    for root in CI_TREES.iter().filter_map(|series| real_tree(series)) {
        let makefile = std::fs::read_to_string(root.join("Makefile")).unwrap();
        let flags = makefiles::assignment(&makefile, "rust_common_flags").unwrap();
        let allowed: Vec<&str> = (flags.split_whitespace())
            .filter_map(|word| word.strip_prefix("-A"))
            .filter(|lint| lint.ends_with("_features"))
            .collect();
        assert_eq!(allowed, crate::catalog::KBUILD_ALLOWED_LINTS, "{root:?}");
    }
}
