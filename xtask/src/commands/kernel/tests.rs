// SPDX-License-Identifier: GPL-2.0
//! Tests of `cargo xtask kernel`'s reading of trees, its wrapper, its classification of what a
//! build printed and its cache entries, on small trees made in a temporary directory; and
//! docs/kernel.md's documentation of its JSON.

use crate::kernel::boot::tests::failed_boot;
use crate::kernel::build::{self, Built, Real};
use crate::kernel::report::cell;
use crate::kernel::report::json::{KernelJson, TreeJson};
use crate::kernel::rules::{CratePrediction, Predicted, Prediction};
use crate::kernel::trees;
use crate::kernel::{said, symbols, tools};
use std::path::{Path, PathBuf};
use xshell::cmd;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kshim-kernel-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A tree with the files the build reads: a top Makefile, scripts/config, one sample and one
/// Rust driver built from a composite object, one C driver.
fn small_tree(name: &str) -> PathBuf {
    let root = temp_dir(name);
    write(
        &root,
        "Makefile",
        "VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 118\n",
    );
    write(&root, "scripts/config", "#!/bin/sh\n");
    write(
        &root,
        "samples/rust/Kconfig",
        "menuconfig SAMPLES_RUST\n\tbool \"Rust samples\"\n\tdepends on RUST\n\n\
         config SAMPLE_RUST_MINIMAL\n\ttristate \"Minimal\"\n\thelp\n\t  RUST is mentioned\n\n\
         config SAMPLE_RUST_HOSTPROGS\n\tbool \"Host programs\"\n",
    );
    write(
        &root,
        "samples/rust/Makefile",
        "obj-$(CONFIG_SAMPLE_RUST_MINIMAL) += rust_minimal.o\n\
         subdir-$(CONFIG_SAMPLE_RUST_HOSTPROGS) += hostprogs\n",
    );
    write(&root, "samples/rust/rust_minimal.rs", "");
    write(
        &root,
        "drivers/block/Kconfig",
        "config BLK_DEV_RUST_NULL\n\ttristate \"Rust null block driver\"\n\tdepends on RUST && CONFIGFS_FS\n\n\
         config BLK_DEV_NULL_BLK\n\ttristate \"C null block driver\"\n\tdepends on BLOCK\n",
    );
    write(
        &root,
        "drivers/block/Makefile",
        "obj-$(CONFIG_BLK_DEV_RUST_NULL) += rnull_mod.o\nrnull_mod-y := rnull.o configfs.o\n\
         obj-$(CONFIG_BLK_DEV_NULL_BLK) += null_blk.o\n",
    );
    write(&root, "drivers/block/rnull.rs", "");
    write(
        &root,
        "drivers/gpu/Kconfig",
        "config NOVA_CORE\n\ttristate \"nova-core\"\n\tdepends on PCI\n\tdepends on RUST\n",
    );
    write(
        &root,
        "drivers/gpu/Makefile",
        "obj-$(CONFIG_NOVA_CORE) += nova-core.o\nnova-core-y := \\\n\tnova-core/nova_core.o \\\n\
         \tnova-core/nova_core_exports.o\n",
    );
    write(&root, "drivers/gpu/nova-core/nova_core.rs", "");
    write(
        &root,
        "drivers/net/phy/Kconfig",
        "config RUST_PHYLIB_ABSTRACTIONS\n\tbool \"Rust PHYLIB\"\n\tdepends on RUST\n\n\
         config AX88796B_RUST_PHY\n\tbool \"Rust PHY\"\n\tdepends on RUST_PHYLIB_ABSTRACTIONS && AX88796B_PHY\n",
    );
    write(&root, "drivers/block/configfs.c", "");
    write(&root, "drivers/block/null_blk.c", "");
    root
}

#[test]
fn a_kernel_tree_is_recognised_and_anything_else_refused() {
    let root = small_tree("recognised");
    trees::check_kernel_tree(&root).unwrap();
    let empty = temp_dir("not-a-tree");
    let error = format!("{:#}", trees::check_kernel_tree(&empty).unwrap_err());
    assert!(error.contains("is no kernel tree"), "{error}");
    write(&empty, "Makefile", "all:\n\techo hello\n");
    let error = format!("{:#}", trees::check_kernel_tree(&empty).unwrap_err());
    assert!(error.contains("sets no VERSION"), "{error}");
    std::fs::remove_dir_all(root).unwrap();
    std::fs::remove_dir_all(empty).unwrap();
}

#[test]
fn every_rust_sample_and_rust_driver_is_turned_on_with_its_objects() {
    let root = small_tree("symbols");
    let symbols = symbols::rust_symbols(&root);
    assert_eq!(
        symbols,
        vec![
            ("AX88796B_RUST_PHY".to_owned(), false),
            ("BLK_DEV_RUST_NULL".to_owned(), true),
            ("NOVA_CORE".to_owned(), true),
            ("RUST_PHYLIB_ABSTRACTIONS".to_owned(), false),
            ("SAMPLE_RUST_HOSTPROGS".to_owned(), false),
            ("SAMPLE_RUST_MINIMAL".to_owned(), true),
        ]
    );
    assert_eq!(
        symbols::objects_of(&root, "SAMPLE_RUST_MINIMAL"),
        vec!["samples/rust/rust_minimal.o"]
    );
    // The composite's Rust member only: configfs.o is C.
    assert_eq!(
        symbols::objects_of(&root, "BLK_DEV_RUST_NULL"),
        vec!["drivers/block/rnull.o"]
    );
    assert!(symbols::objects_of(&root, "BLK_DEV_NULL_BLK").is_empty());
    // A composite continued over lines, its Rust member in a directory below.
    assert_eq!(
        symbols::objects_of(&root, "NOVA_CORE"),
        vec!["drivers/gpu/nova-core/nova_core.o"]
    );
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn the_wrapper_passes_its_own_sysroot_only_when_the_caller_gave_none() {
    let dir = temp_dir("wrapper");
    let program = dir.join("echo-args");
    write(
        &dir,
        "echo-args",
        "#!/bin/sh\necho \"$FROM_WRAPPER\" \"$@\"\n",
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let wrapper = dir.join("w/rustc");
    let leading = [
        "--library-path",
        "/lib's",
        "rustc",
        "--sysroot",
        "/prefix/usr",
    ]
    .map(String::from)
    .to_vec();
    let launch = crate::toolchains::loader::Launch {
        rustc: PathBuf::from("rustc"),
        loader: Some(crate::toolchains::loader::OwnLoader {
            program,
            leading_args: leading,
        }),
        env: vec![("FROM_WRAPPER".to_owned(), "set".to_owned())],
    };
    tools::write_wrapper(&wrapper, &launch).unwrap();
    let run = |args: &[&str]| {
        let sh = xshell::Shell::new().unwrap();
        crate::tests::support::read_quietly(cmd!(sh, "{wrapper} {args...}"))
    };
    assert_eq!(
        run(&["--version"]),
        "set --library-path /lib's rustc --sysroot /prefix/usr --version"
    );
    assert_eq!(
        run(&["--sysroot=/dev/null", "x.rs"]),
        "set --library-path /lib's rustc --sysroot=/dev/null x.rs"
    );
    assert_eq!(
        run(&["--sysroot", "/other", "x.rs"]),
        "set --library-path /lib's rustc --sysroot /other x.rs"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_first_error_names_the_place_rustc_gave() {
    let said = "  RUSTC L rust/kernel.o\nwarning: unused\nerror[E0635]: unknown feature `x`\n \
                --> rust/kernel/lib.rs:17:12\n  |\nmake[2]: *** [rust/Makefile:1] Error 1\n";
    assert_eq!(
        said::first_error(said).as_deref(),
        Some("error[E0635]: unknown feature `x` (rust/kernel/lib.rs:17:12)")
    );
    assert_eq!(said::first_error("all fine\n"), None);
    // rust_is_available.sh's banner is a warning; make's own failure line is an error.
    let said = "***\n*** Rust compiler 'rustc' is too new. This may or may not work.\n***\n\
                make[1]: *** No rule to make target 'x.o'.  Stop.\n";
    assert_eq!(
        said::first_error(said).as_deref(),
        Some("make[1]: *** No rule to make target 'x.o'.  Stop.")
    );
}

#[test]
fn the_target_make_failed_to_make_is_read_from_its_error_line() {
    let said = "error: unknown argument: '-mindirect-branch-cs-prefix'\n\
                make[2]: *** [/t/rust/Makefile:308: rust/bindings/bindings_generated.rs] Error 1\n\
                make[1]: *** [/t/Makefile:1280: prepare0] Error 2\n\
                make: *** No rule to make target 'x'.  Stop.\n";
    let targets: Vec<&str> = said::failed_targets(said).collect();
    assert_eq!(targets, ["rust/bindings/bindings_generated.rs", "prepare0"]);
}

#[test]
fn the_first_error_is_the_failing_tools_own() {
    // bindgen 0.56 (Rust before 1.73): one line; make's line after it is not the cause.
    let said = "  BINDGEN rust/bindings/bindings_generated.rs\n\
                thread 'main' panicked at 'Unable to generate bindings: ()', src/main.rs:52:36\n\
                make[1]: *** [rust/Makefile:308: rust/bindings/bindings_generated.rs] Error 101\n";
    assert_eq!(
        said::first_error(said).as_deref(),
        Some("thread 'main' panicked at 'Unable to generate bindings: ()', src/main.rs:52:36")
    );
    // A newer panic puts its message on the next line.
    let said = "thread 'main' panicked at src/main.rs:52:36:\nUnable to generate bindings\n\
                make[1]: *** [x] Error 101\n";
    assert_eq!(
        said::first_error(said).as_deref(),
        Some("thread 'main' panicked at src/main.rs:52:36: Unable to generate bindings")
    );
    // libclang's diagnostic comes before bindgen's panic and before a later rustc error.
    let said = "./include/linux/x.h:3:1: error: unknown type name 'y'\n\
                thread 'main' panicked at 'Unable to generate bindings'\n\
                error[E0425]: cannot find value `z`\n";
    assert_eq!(
        said::first_error(said).as_deref(),
        Some("./include/linux/x.h:3:1: error: unknown type name 'y'")
    );
}

fn built(real: Real) -> Built {
    Built {
        real,
        reason: "why".into(),
        first_error: Some("error: e".into()),
        warning: None,
        cacheable: true,
        enabled: vec!["SAMPLE_RUST_MINIMAL".into()],
        objects: 3,
        steps: vec![("prepare".into(), 1.5)],
        tools: Some("clang 19; lld 19; bindgen 0.71.1 with libclang 19".into()),
    }
}

#[test]
fn cached_results_round_trip_and_a_result_not_run_is_never_read_back() {
    let dir = temp_dir("cache");
    let entry = dir.join("entry.json");
    for real in [Real::Pass, Real::Fail, Real::Refused] {
        crate::kernel::stamps::write_entry(&entry, &built(real.clone())).unwrap();
        let back = crate::kernel::results::load_result(&entry).unwrap();
        assert_eq!(back.real, real);
        assert_eq!(back.first_error.as_deref(), Some("error: e"));
        assert_eq!(back.enabled, vec!["SAMPLE_RUST_MINIMAL"]);
        assert_eq!(back.objects, 3);
        assert_eq!(back.tools, built(real.clone()).tools);
    }
    crate::kernel::stamps::write_entry(&entry, &built(Real::NotRun)).unwrap();
    assert!(crate::kernel::results::load_result(&entry).is_none());
    std::fs::write(&entry, "{\"real\": \"pass\"").unwrap();
    assert!(crate::kernel::results::load_result(&entry).is_none());
    std::fs::remove_dir_all(dir).unwrap();
}

/// The report for a terminal, the table in its full layout.
fn human(report: &KernelJson) -> String {
    report.human_in(&crate::util::output::Style {
        colour: false,
        width: crate::util::output::Width::Wide,
    })
}

fn report() -> KernelJson {
    let prediction = Prediction {
        minimum_met: true,
        predicted: Predicted::Pass,
        crates: vec![CratePrediction {
            root: "rust/kernel/lib.rs".into(),
            features: vec!["used_with_arg".into()],
            predicted: Predicted::Pass,
            needs_bootstrap: true,
            errors: Vec::new(),
        }],
    };
    KernelJson {
        trees: vec![TreeJson {
            id: "6.12".into(),
            version: Some("6.12.118".into()),
            package: Some("linux-source-6.12=6.12.118-1".into()),
            source: Some("linux-source-6.12=6.12.118-1 (trixie-security)".into()),
            sha256: Some("0".repeat(64)),
            minimum_rustc: Some("1.78.0".into()),
            allowed_features: vec!["lint_reasons".into()],
            error: None,
        }],
        cells: vec![
            cell(
                ("6.12", "debian-1.78.0"),
                Some("1.78.0".into()),
                Ok(prediction.clone()),
                (built(Real::Pass), false),
                Some(failed_boot()),
            ),
            cell(
                ("6.12", "debian-1.98.1"),
                Some("1.98.1".into()),
                Ok(prediction),
                (built(Real::Fail), true),
                None,
            ),
        ],
        tools: Some("clang 19; bindgen 0.71.1".into()),
        tools_error: None,
        seconds: 1.0,
    }
    .with_tools_used()
}

#[test]
fn a_disagreement_is_a_finding_printed_with_its_first_error() {
    let report = report();
    let findings = report.findings();
    assert_eq!(findings.len(), 2);
    assert_eq!(findings[1].toolchain, "debian-1.98.1");
    let human = human(&report);
    assert!(
        human.contains("finding: 6.12 with debian-1.98.1: predicted pass, really fail: error: e"),
        "{human}"
    );
    // The build passed as predicted, the boot did not: a finding with the failed test's output.
    assert!(
        human.contains(
            "finding: 6.12 with debian-1.78.0: built, predicted to boot and pass, but the boot \
             failed: KUnit failed: rust_kvec.rust_kvec_pop\n  rust_kvec.rust_kvec_pop failed:\n\
             \x20       # rust_kvec_pop: ASSERTION FAILED"
        ),
        "{human}"
    );
    assert!(
        human.contains("6.12 with debian-1.78.0: boot fail (tcg, 1.0 s) KUnit 4 passed, 1 failed, \
             1 skipped; samples: 1 of 1 lines seen, not checked (nothing printed at init): rust_soc"),
        "{human}"
    );
    assert!(report
        .markdown()
        .contains("| debian-1.78.0 | fail (FINDING) | 4 | 1 | 1 | 1 of 1 | KUnit failed: "));
    assert!(report
        .markdown()
        .contains("| 6.12 | debian-1.78.0 | 1.78.0 | yes | pass | pass |"));
}

#[test]
fn the_report_names_the_tools_each_cell_really_ran_with() {
    let mut report = report();
    let old = "clang 19; lld 19; bindgen 0.56.0 with libclang LLVM 19.1.7";
    let mut older = report.cells[0].clone();
    older.tree = "6.1".into();
    older.tools = Some(old.into());
    report.cells.push(older);
    let never_ran = Built::not_run("no compiler".into());
    let never_ran = cell(
        ("6.12", "1.78.0"),
        None,
        Err("no".into()),
        (never_ran, false),
        None,
    );
    report.cells.push(never_ran);
    let json = report.with_tools_used();
    assert_eq!(
        json.tools.as_deref(),
        Some(
            "clang 19; lld 19; bindgen 0.71.1 with libclang 19 (6.12) | \
             clang 19; lld 19; bindgen 0.56.0 with libclang LLVM 19.1.7 (6.1)"
        )
    );
    assert_eq!(json.cells[2].tools.as_deref(), Some(old));
    assert_eq!(json.cells[3].tools, None);
    // With no build run, the tools found (or why they are missing) are all there is to say.
    let mut report = self::report();
    report.cells.clear();
    report.tools = Some("clang 19; bindgen 0.71.1".into());
    assert_eq!(report.clone().with_tools_used().tools, report.tools);
}

#[test]
fn the_readme_documents_every_key_of_the_json_and_no_other() {
    crate::tests::support::assert_json_layout_documented(
        "docs/kernel.md",
        "kernel",
        &["# Real kernel trees", "The JSON report (`--format json`):"],
        &[],
        &crate::util::json::to_value(&report()),
        &|_, _| false,
    );
}

/// A tree whose top Makefile plays Kbuild: each target does what the real one does to the
/// files the build checks, or, by the word in the tree's `mode` file, what goes wrong (`refuse`,
/// `drop` CONFIG_RUST, `slow` to be killed, a `full` disk, `error` from rustc, one with terminal
/// `escape` sequences, `stale` objects, an `orphan` that writes into the build directory 20 s
/// into `prepare`); `rust/` fails as rustc would when `rust/kernel/lib.rs` enables
/// `this_feature_does_not_exist`.
pub(crate) fn playing_tree(name: &str, mode: &str) -> PathBuf {
    let root = small_tree(name);
    write(&root, "mode", mode);
    write(
        &root,
        "Makefile",
        "VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 0\nmode := $(shell cat mode)\n\
         .PHONY: rustavailable x86_64_defconfig olddefconfig prepare rust/ samples/rust/\n\
         rustavailable:\n\
         \t@if [ $(mode) = new ]; then echo '***'; echo \"*** Rust compiler '$(RUSTC)' is too new. \
         This may or may not work.\"; echo '***   Expected version: 1.62.0'; echo '***'; fi\n\
         \t@if [ $(mode) = refuse ]; then echo '***'; echo \"*** Rust compiler '$(RUSTC)' is too old.\"; \
         echo '***   Your version:    1.78.0'; echo '***'; exit 1; fi\n\
         x86_64_defconfig:\n\t@mkdir -p $(O); echo CONFIG_SAMPLES=y > $(O)/.config\n\
         olddefconfig:\n\t@if [ $(mode) = drop ]; then grep -v '^CONFIG_RUST=' $(O)/.config > $(O)/.new; \
         mv $(O)/.new $(O)/.config; fi\n\
         prepare:\n\t@if [ $(mode) = slow ]; then sleep 60; fi\n\
         \t@if [ $(mode) = orphan ]; then touch $(O)/orphan-started; sleep 20; touch $(O)/late; fi\n\
         \t@if [ $(mode) = full ]; then echo 'rust/core.o: No space left on device' >&2; exit 2; fi\n\
         \t@if [ $(mode) = bindgen ]; then echo \"error: unknown argument: '-mx'\" >&2; \
         echo 'make[2]: *** [rust/Makefile:1: rust/bindings/bindings_generated.rs] Error 1' >&2; \
         exit 2; fi\n\
         \t@mkdir -p $(O)/rust; for o in core kernel; do [ -f $(O)/rust/.$$o.o.cmd ] || { \
         touch $(O)/rust/$$o.o; echo \"cmd_rust/$$o.o := $(RUSTC) --emit=obj\" > $(O)/rust/.$$o.o.cmd; }; \
         done\n\
         rust/:\n\t@if grep -qs this_feature_does_not_exist rust/kernel/lib.rs; then \
         echo 'error[E0635]: unknown feature `this_feature_does_not_exist`' >&2; exit 2; fi\n\
         \t@if [ $(mode) = error ]; then echo 'error[E0635]: unknown feature `x`' >&2; \
         echo ' --> rust/kernel/lib.rs:1:1' >&2; exit 2; fi\n\
         \t@if [ $(mode) = escape ]; then \
         printf 'error[E0635]: unknown feature \\033]0;owned\\007\\033[2J`x`\\n' >&2; exit 2; fi\n\
         samples/rust/:\n\t@mkdir -p $(O)/samples/rust; if [ $(mode) != stale ]; then \
         touch $(O)/samples/rust/rust_minimal.o; \
         echo \"cmd := $(RUSTC)\" > $(O)/samples/rust/.rust_minimal.o.cmd; fi\n\
         drivers/%.o:\n\t@mkdir -p $(dir $(O)/$@); touch $(O)/$@; \
         echo \"cmd := $(RUSTC)\" > $(dir $(O)/$@).$(notdir $@).cmd\n",
    );
    // scripts/config: -e/-m/-d on the file after --file, as the kernel's does.
    write(
        &root,
        "scripts/config",
        "#!/bin/sh\nfile=$2; shift 2\nwhile [ $# -gt 0 ]; do\n  case $1 in\n\
         -e) echo \"CONFIG_$2=y\" >> $file ;;\n  -m) echo \"CONFIG_$2=m\" >> $file ;;\n\
         -d) grep -v \"^CONFIG_$2=\" $file > $file.new; mv $file.new $file ;;\n  esac\n  shift 2\ndone\n",
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        root.join("scripts/config"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    root
}

/// Builds the playing tree `mode` in a fresh build directory with a wrapper that is never run,
/// `times` times over.
fn play(mode: &str, timeout: u64) -> (Built, bool, bool) {
    play_times(mode, timeout, 1)
}

fn play_times(mode: &str, timeout: u64, times: usize) -> (Built, bool, bool) {
    let root = playing_tree(&format!("play-{mode}"), mode);
    let out_dir = root.join("out");
    let out = build::BuildDir::open(&out_dir, "tree", "tools").unwrap();
    let tools = tools::Tools {
        bindgen: root.join("bindgen"),
        libclang: root.join("libclang"),
        llvm_suffix: "-19".into(),
        identity: "tools".into(),
    };
    let pair = build::Pair {
        tree: &root,
        out: &out,
        wrapper: &root.join("wrappers/one/rustc"),
        library: &root.join("library"),
        rustdoc: None,
        tools: &tools,
        jobs: 1,
        lock: None,
        timeout: std::time::Duration::from_secs(timeout),
        progress: &|_| {},
    };
    let mut built = None;
    for _ in 0..times {
        built = Some(build::build(&pair));
        // Every later build starts strictly after the objects of this one.
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let built = built.unwrap();
    let sealed = out_dir.join("kshim-build.txt").is_file();
    let spoiled = out.is_spoiled();
    std::fs::remove_dir_all(root).unwrap();
    (built, sealed, spoiled)
}

#[test]
fn a_build_that_really_happened_passes_and_its_directory_is_kept() {
    let (built, sealed, _) = play("pass", 60);
    assert_eq!(built.real, Real::Pass, "{built:?}");
    assert!(built.cacheable);
    // rust/core.o, rust/kernel.o, the sample and the two Rust drivers' objects.
    assert_eq!(built.objects, 5, "{built:?}");
    assert!(built.enabled.contains(&"BLK_DEV_RUST_NULL".to_owned()));
    assert!(sealed);
}

#[test]
fn the_trees_refusal_is_a_real_result() {
    let (built, _, _) = play("refuse", 60);
    assert_eq!(built.real, Real::Refused, "{built:?}");
    assert!(built.cacheable);
    let said = built.first_error.unwrap();
    assert!(said.contains("is too old. Your version: 1.78.0"), "{said}");
    // 6.1's check accepts a newer compiler with a banner that never says "warning".
    let (built, _, _) = play("new", 60);
    assert_eq!(built.real, Real::Pass, "{built:?}");
    let warning = built.warning.unwrap_or_default();
    assert!(
        warning.contains("is too new. This may or may not work. Expected version: 1.62.0"),
        "{warning}"
    );
}

#[test]
fn a_config_that_loses_config_rust_builds_nothing_and_is_not_cached() {
    let (built, sealed, _) = play("drop", 60);
    assert_eq!(built.real, Real::NotRun, "{built:?}");
    assert!(
        built.reason.contains("dropped CONFIG_RUST=y"),
        "{}",
        built.reason
    );
    assert!(!built.cacheable);
    assert!(!built.steps.iter().any(|(step, _)| step == "prepare"));
    assert!(
        sealed,
        "the directory is consistent: only the configuration ran"
    );
}

#[test]
fn a_build_killed_midway_is_not_cached_and_its_directory_is_discarded() {
    let (built, sealed, spoiled) = play("slow", 2);
    assert_eq!(built.real, Real::NotRun, "{built:?}");
    assert!(
        built.reason.contains("killed after 2 s"),
        "{}",
        built.reason
    );
    assert!(!built.cacheable);
    assert!(spoiled && !sealed);
}

#[test]
fn a_compiler_error_fails_with_its_place_and_objects_not_rebuilt_are_no_pass() {
    let (built, sealed, _) = play("error", 60);
    assert_eq!(built.real, Real::Fail, "{built:?}");
    assert!(built.cacheable);
    assert_eq!(
        built.first_error.as_deref(),
        Some("error[E0635]: unknown feature `x` (rust/kernel/lib.rs:1:1)")
    );
    assert!(sealed);
    let (built, sealed, spoiled) = play("stale", 60);
    assert_eq!(built.real, Real::NotRun, "{built:?}");
    assert!(
        built
            .reason
            .contains("samples/rust/rust_minimal.o (not rebuilt in this build)"),
        "{}",
        built.reason
    );
    assert!(!built.cacheable && spoiled && !sealed);
    // bindgen's (libclang's) `error:` is no compiler's verdict: named, and not cached.
    let (built, _, _) = play("bindgen", 60);
    assert_eq!(built.real, Real::Fail, "{built:?}");
    assert!(!built.cacheable);
    assert!(
        built.reason.contains("bindgen could not generate"),
        "{}",
        built.reason
    );
    assert_eq!(
        built.first_error.as_deref(),
        Some("error: unknown argument: '-mx'")
    );
}

#[test]
fn the_rust_drivers_of_a_real_tree_map_to_their_objects() {
    let trees = crate::project_root().join("target/kernel/trees");
    let Some(root) = std::fs::read_dir(&trees).ok().and_then(|entries| {
        entries
            .filter_map(Result::ok)
            .map(|entry| entry.path().join("linux-source-7.3"))
            .find(|root| root.join("Makefile").is_file())
    }) else {
        eprintln!("note: no 7.3 tree under {}; skipped", trees.display());
        return;
    };
    for (symbol, object) in [
        (
            "ANDROID_BINDER_IPC_RUST",
            "drivers/android/binder/rust_binder_main.o",
        ),
        ("NOVA_CORE", "drivers/gpu/nova-core/nova_core.o"),
        ("DRM_NOVA", "drivers/gpu/drm/nova/nova.o"),
        ("SAMPLE_RUST_MINIMAL", "samples/rust/rust_minimal.o"),
    ] {
        let objects = symbols::objects_of(&root, symbol);
        assert!(
            objects.contains(&object.to_owned()),
            "{symbol}: {objects:?}"
        );
    }
}

#[test]
fn a_full_disk_is_the_machines_failure_not_the_compilers() {
    let (built, sealed, spoiled) = play("full", 60);
    assert_eq!(built.real, Real::NotRun, "{built:?}");
    assert!(
        built.reason.contains("the disk is full"),
        "{}",
        built.reason
    );
    assert!(!built.cacheable && spoiled && !sealed);
}

#[test]
fn the_same_compiler_again_rebuilds_what_kbuild_would_call_up_to_date() {
    // Kbuild (as the playing Makefile) skips objects whose command is unchanged: the second
    // build with the same wrapper must still see them built now, by it.
    let (built, sealed, _) = play_times("pass", 60, 2);
    assert_eq!(built.real, Real::Pass, "{built:?}");
    assert!(sealed);
}

#[test]
fn each_bindgen_runs_with_the_libclang_it_can_read_and_says_which() {
    let dir = crate::project_root().join("target/kernel");
    for (bindgen, libclang) in [
        (tools::BINDGEN, "libclang 19."),
        (tools::OLD_BINDGEN, "libclang 15."),
    ] {
        match tools::find_tools(&dir, bindgen) {
            Ok(found) => {
                let says = format!("bindgen {} with {libclang}", bindgen.version);
                assert!(found.identity.contains(&says), "{}", found.identity);
                let lld = format!("LLD {}.", bindgen.llvm);
                assert!(found.identity.contains(&lld), "{}", found.identity);
                assert_eq!(found.llvm_suffix, format!("-{}", bindgen.llvm));
            }
            // Not installed here: the cell names the commands that install it.
            Err(missing) => {
                eprintln!("note: {missing:#}; skipped");
                assert!(missing.to_string().contains("install"), "{missing:#}");
            }
        }
    }
}

mod escapes;
