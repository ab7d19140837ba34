// SPDX-License-Identifier: GPL-2.0
//! Tests of the plan: command lines, examples and directory names.

use super::examples::parse_examples;
use super::*;
use crate::catalog::Release;

#[test]
fn directory_names_are_safe() {
    assert_eq!(directory_name("1.95.0"), "1.95.0");
    assert_eq!(directory_name("/usr/bin/rustc"), "_usr_bin_rustc");
}

#[test]
fn every_compiler_has_its_own_output_directory() {
    let toolchain = |id: &str, rustc: &str| crate::toolchains::discovery::Toolchain {
        id: id.into(),
        spec: id.into(),
        source: crate::toolchains::discovery::Source::Path,
        launch: crate::toolchains::loader::Launch {
            rustc: PathBuf::from(rustc),
            env: Vec::new(),
            loader: None,
        },
        pin: None,
    };
    let rustup = identity_directory_name(&toolchain("1.95.0", "/rustup/1.95.0/bin/rustc"));
    let wrapper = identity_directory_name(&toolchain("1.95.0", "/tmp/wrapper/rustc"));
    assert!(rustup.starts_with("1.95.0-"), "{rustup}");
    assert_ne!(rustup, wrapper, "two compilers share their outputs");
    assert_eq!(
        rustup,
        identity_directory_name(&toolchain("1.95.0", "/rustup/1.95.0/bin/rustc")),
        "a compiler's directory is the same from run to run"
    );
}

#[test]
fn reads_example_tables() {
    let manifest = "[package]\nname = \"x\"\n\n[[example]]\nname = \"a\"\npath = \"a.rs\"\ntest = true\n\n[[example]]\nname = \"b\"\n\n[dependencies]\nname = \"not an example\"\n";
    let examples = parse_examples(manifest, Path::new("/e")).unwrap();
    assert_eq!(
        examples,
        [
            Example {
                name: "a".into(),
                path: "/e/a.rs".into()
            },
            Example {
                name: "b".into(),
                path: "/e/b.rs".into()
            }
        ]
    );
    assert!(parse_examples("[[example]]\npath = \"x.rs\"\n", Path::new("/")).is_err());
}

#[test]
fn kernel_mode_lines_carry_bootstrap_and_the_allow_list() {
    let rustc = Rustc {
        launch: crate::toolchains::loader::Launch {
            rustc: "/r/rustc".into(),
            env: vec![("LD_LIBRARY_PATH".into(), "/r/lib".into())],
            loader: None,
        },
        release: Release::new(1, 85, 0),
    };
    let example = Example {
        name: "rust_minimal".into(),
        path: "/p/examples/rust_minimal.rs".into(),
    };
    let cfgs = mode_cfgs(rustc.release, Mode::Kernel, None);
    let line = rustc
        .example(
            &example,
            Mode::Kernel,
            &cfgs,
            Path::new("/o/libkernel.rlib"),
            Output::Directory(Path::new("/o")),
        )
        .to_string();
    assert!(
        line.starts_with("LD_LIBRARY_PATH=/r/lib RUSTC_BOOTSTRAP=1 /r/rustc "),
        "{line}"
    );
    // Kbuild's flags for a driver, with the catalog's `rust_allowed_features`.
    let list = crate::catalog::RUST_ALLOWED_FEATURES;
    let kbuild = format!(
        " -Zallow-features={list} '-Zcrate-attr=feature({list})' -Astable_features \
         -Aunused_features "
    );
    assert!(line.contains(&kbuild), "{line}");
    assert!(!line.contains("no_std"), "{line}");
    assert!(line.contains(" --cfg kshim_kernel_mode "), "{line}");
    assert!(
        line.contains(" --check-cfg 'cfg(kshim_kernel_mode)'"),
        "{line}"
    );
    let stable = rustc.shim(
        Path::new("/p"),
        Mode::Stable,
        &mode_cfgs(rustc.release, Mode::Stable, None),
        Output::Directory(Path::new("/o")),
    );
    assert!(!stable.to_string().contains("RUSTC_BOOTSTRAP"));
    assert_eq!(stable.env_remove, ["RUSTC_BOOTSTRAP"]);
    let old = Rustc {
        release: Release::new(1, 79, 0),
        ..rustc
    };
    let line = old
        .shim(
            Path::new("/p"),
            Mode::Stable,
            &[],
            Output::Directory(Path::new("/o")),
        )
        .to_string();
    assert!(!line.contains("--check-cfg"), "{line}");
}
