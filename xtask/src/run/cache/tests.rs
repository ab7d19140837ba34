// SPDX-License-Identifier: GPL-2.0
//! Tests of the cache: its keys, its entries and the lock.

use super::*;
use crate::features::places::{GateErrors, Location, Place};
use crate::run::plan::Rustc;
use std::time::Duration;

/// Rewrites `file` with other bytes of the same size, and sets its modification time back.
fn overwrite_keeping_size_and_time(file: &Path) {
    let metadata = fs::metadata(file).unwrap();
    let mut bytes = fs::read(file).unwrap();
    bytes[0] ^= 1;
    std::thread::sleep(Duration::from_millis(20));
    fs::write(file, &bytes).unwrap();
    fs::File::options()
        .write(true)
        .open(file)
        .unwrap()
        .set_modified(metadata.modified().unwrap())
        .unwrap();
    assert_eq!(fs::metadata(file).unwrap().len(), metadata.len());
}

#[test]
fn a_sysroot_library_rewritten_in_place_changes_the_compilers_identity() {
    let sysroot = crate::project_root().join("target/kshim/unit-tests/cache-sysroot");
    let _ = fs::remove_dir_all(&sysroot);
    let host = "x86_64-unknown-linux-gnu";
    let libraries = sysroot.join("lib/rustlib").join(host).join("lib");
    fs::create_dir_all(&libraries).unwrap();
    fs::create_dir_all(sysroot.join("bin")).unwrap();
    let rustc = sysroot.join("bin/rustc");
    fs::write(&rustc, "#!/bin/sh\n").unwrap();
    let libcore = libraries.join("libcore-0123.rlib");
    fs::write(&libcore, vec![b'c'; 4096]).unwrap();
    let launch = crate::toolchains::loader::Launch {
        rustc,
        env: Vec::new(),
        loader: None,
    };
    let version = RustcVersion {
        sysroot: Some(sysroot.clone()),
        ..crate::toolchains::version::parse_verbose_version(
            "rustc 1.95.0 (59807616e 2026-04-14)\nbinary: rustc\nhost: x86_64-unknown-linux-gnu\nrelease: 1.95.0\n",
        )
        .unwrap()
    };
    let before = compiler_identity(&launch, &version);
    overwrite_keeping_size_and_time(&libcore);
    assert_ne!(
        compiler_identity(&launch, &version),
        before,
        "a libcore rewritten with its size and time kept served the old results"
    );
}

#[test]
fn provisioned_inputs_rewritten_in_place_change_the_keys_of_the_cross_cells() {
    use crate::run::plan::{plan_targets, Layout, PlannedToolchain};
    let scratch = crate::project_root().join("target/kshim/unit-tests/cache-cross");
    let _ = fs::remove_dir_all(&scratch);
    let library = scratch.join("usr/src/rustc-1.95.0/library");
    fs::create_dir_all(library.join("core/src")).unwrap();
    fs::create_dir_all(library.join("stdarch/crates/core_arch/src")).unwrap();
    let core = library.join("core/src/lib.rs");
    fs::write(&core, "#![no_core]\n").unwrap();
    fs::write(library.join("stdarch/crates/core_arch/src/mod.rs"), "\n").unwrap();
    let emulator = scratch.join("qemu-aarch64");
    fs::write(&emulator, "#!/bin/sh\nexec \"$@\"\n").unwrap();
    let linker = scratch.join("ld.lld");
    fs::write(&linker, "#!/bin/sh\n").unwrap();
    let root = crate::project_root();
    let layout = Layout::new(&root);
    let toolchain = PlannedToolchain {
        index: 0,
        directory_name: "cache-cross".into(),
        rustc: Rustc {
            launch: crate::toolchains::loader::Launch {
                rustc: scratch.join("rustc"),
                env: Vec::new(),
                loader: None,
            },
            release: Release::new(1, 95, 0),
        },
        builds: true,
    };
    let sources = crate::toolchains::library_sources::LibrarySources {
        library: library.clone(),
        identity: "test sources".into(),
        core_edition: "2021".into(),
        compiler_builtins: None,
    };
    let kernel_target = crate::targets::KERNEL_TARGETS
        .iter()
        .find(|target| target.arch == "aarch64")
        .unwrap();
    let mut steps = Vec::new();
    plan_targets(
        &layout,
        &[toolchain],
        &[Some(Ok(sources))],
        &[kernel_target],
        &[Ok((linker.clone(), Some(emulator.clone())))],
        &mut steps,
    )
    .unwrap();
    let provisioned = scratch.clone();
    let keys = || {
        cache_keys(&steps, &[], Key(2), &|_| Key(1), &mut |path: &Path| {
            input_key(path, &root, &provisioned)
        })
        .unwrap()
    };
    let of = |keys: &[Key], kind: crate::run::plan::Kind| -> Vec<Key> {
        steps
            .iter()
            .zip(keys)
            .filter(|(step, _)| step.kind == kind)
            .map(|(_, key)| *key)
            .collect()
    };
    let before = keys();
    assert_eq!(before, keys(), "keys are stable");
    // A step the xtask checks itself is keyed by the checker too, and only such a step.
    let other_checker = cache_keys(&steps, &[], Key(3), &|_| Key(1), &mut |path: &Path| {
        input_key(path, &root, &provisioned)
    })
    .unwrap();
    assert!(steps.iter().any(|step| step.check.is_some()));
    for ((step, before), after) in steps.iter().zip(&before).zip(&other_checker) {
        assert_eq!(step.check.is_some(), before != after, "{:?}", step.kind);
    }
    overwrite_keeping_size_and_time(&core);
    let after_core = keys();
    assert!(
        of(&after_core, crate::run::plan::Kind::Core)
            .iter()
            .zip(of(&before, crate::run::plan::Kind::Core))
            .all(|(after, before)| *after != before),
        "a damaged library source kept the key of core"
    );
    overwrite_keeping_size_and_time(&emulator);
    let after_emulator = keys();
    assert!(
        of(&after_emulator, crate::run::plan::Kind::Emulate)
            .iter()
            .zip(of(&after_core, crate::run::plan::Kind::Emulate))
            .all(|(after, before)| *after != before),
        "a replaced emulator kept the key of the program's run"
    );
    overwrite_keeping_size_and_time(&linker);
    assert_ne!(
        of(&keys(), crate::run::plan::Kind::Emulate),
        of(&after_emulator, crate::run::plan::Kind::Emulate),
        "a replaced linker kept the key of the program's build"
    );
}

#[test]
fn cache_entries_round_trip() {
    let result = StepResult {
        outcome: Outcome::Pass,
        first_error: None,
        seconds: 1.5,
        cached: false,
        log: Some("[info] m: init\n".into()),
        tests: Some((12, 0, 1)),
        probe: Some(Ok(vec![
            Status::Stable(crate::catalog::Release::new(1, 79, 0)),
            Status::Gated,
            Status::Unknown,
        ])),
        usage: Some(GateErrors {
            places: vec![Place {
                location: Location {
                    file: "kernel-shim/src/jump_label.rs".into(),
                    line: 159,
                    column: 9,
                },
                call_site: Some(Location {
                    file: "examples/rust_asm_goto.rs".into(),
                    line: 40,
                    column: 8,
                }),
                macros: vec!["static_branch_unlikely!".into()],
            }],
            attributes: vec![Location {
                file: "lib.rs".into(),
                line: 67,
                column: 40,
            }],
            other_error: None,
        }),
        targets: Some(vec!["aarch64-unknown-none".into()]),
        error_codes: Some(vec!["E0636".into(), "duplicate_features".into()]),
        interrupted: false,
    };
    let entry = encode_entry(&result, None);
    let back = decode_entry(&entry, None).unwrap();
    assert!(back.cached);
    assert_eq!(back.tests, result.tests);
    assert_eq!(back.probe, result.probe);
    assert_eq!(back.log, result.log);
    assert_eq!(back.usage, result.usage);
    assert_eq!(back.targets, result.targets);
    assert_eq!(back.error_codes, result.error_codes);
    assert_eq!(back.outcome, Outcome::Pass);
    // An artifact that is gone makes the entry stale.
    assert!(decode_entry(
        &encode_entry(&result, Some((1, 2))),
        Some(Path::new("/nonexistent/libkernel.rlib"))
    )
    .is_none());
}

#[test]
fn entries_keep_their_layout_and_a_mistyped_member_is_a_miss() {
    // An entry as the untyped writer before the typed one wrote it: members in key order.
    let written = r#"{"artifact":null,"error_codes":null,"first_error":"error[E0658]: gated","log":null,"outcome":"fail","probe":[["stable","1.79.0"],["gated",null]],"seconds":1.5,"targets":null,"tests":[3,0,1],"usage":{"attributes":[["lib.rs",67,40]],"other_error":null,"places":[{"at":["a.rs",1,2],"call_site":null,"macros":[]}]}}"#;
    let result = decode_entry(written, None).unwrap();
    assert_eq!(encode_entry(&result, None), written);
    assert_eq!(result.first_error.as_deref(), Some("error[E0658]: gated"));
    assert_eq!(result.tests, Some((3, 0, 1)));
    // The untyped reader took a first error or a log of another type for none, and served the
    // entry without it; the typed one misses, and the step runs again.
    for (good, bad) in [
        (
            r#""first_error":"error[E0658]: gated""#,
            r#""first_error":5"#,
        ),
        (r#""log":null"#, r#""log":["a"]"#),
        (r#""seconds":1.5"#, r#""seconds":"1.5""#),
        (r#""outcome":"fail""#, r#""outcome":"failed""#),
        (r#""log":null,"#, ""),
        (r#""artifact":null,"#, ""),
        (r#""outcome":"fail""#, r#""outcome":"Fail""#),
        (r#""seconds":1.5"#, r#""seconds":1.5,"seconds":1.5"#),
        (r#""gated",null"#, r#""gated ",null"#),
        (r#""stable","1.79.0""#, r#""stable",null"#),
        (r#""stable","1.79.0""#, r#""stable","1.79""#),
        (r#""probe":[["stable","1.79.0"],["gated",null]],"#, ""),
    ] {
        let damaged = written.replace(good, bad);
        assert_ne!(damaged, written);
        assert!(decode_entry(&damaged, None).is_none(), "{damaged}");
    }
}
