// SPDX-License-Identifier: GPL-2.0
//! Derives the shim's cfgs from the compiler that builds it, with no dependencies.
//!
//! Cargo runs this; `cargo xtask matrix` drives rustc directly and derives the same cfgs from
//! the same catalog. `examples/build.rs` reuses this file, since the examples need the same
//! cfgs to pick their gated or stable forms.
//!
//! Kernel mode (the shim as the kernel builds `rust/kernel`, the examples as Kbuild builds a
//! driver, through `.cargo/kbuild-rustc`) is chosen by `KSHIM_MODE=kernel`, or
//! else by `RUSTC_BOOTSTRAP=1` (or a value naming this crate), or else by a nightly or dev
//! compiler. `KSHIM_MODE=stable` or `RUSTC_BOOTSTRAP=-1` forces stable mode.

#[path = "src/catalog.rs"]
// The build script uses only part of the catalog. (No `reason = ...` here: this file must
// compile on 1.78.0, before `lint_reasons` was stable.)
#[allow(dead_code, unused_imports)]
mod catalog;

use std::env;
use std::process::Command;

/// The parts of `rustc -vV` that choose the cfgs.
struct Compiler {
    release: catalog::Release,
    prerelease: bool,
}

fn probe_compiler() -> Compiler {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(&rustc)
        .arg("-vV")
        .output()
        .unwrap_or_else(|error| panic!("cannot run `{} -vV`: {error}", rustc.to_string_lossy()));
    let text = String::from_utf8_lossy(&output.stdout);
    let release_line = text
        .lines()
        .find_map(|line| line.strip_prefix("release: "))
        .unwrap_or_else(|| panic!("`rustc -vV` printed no `release:` line:\n{text}"));
    // "1.97.0-nightly" or "1.85.0": the number, then an optional channel suffix.
    let (number, suffix) = release_line.split_once('-').unwrap_or((release_line, ""));
    let release = catalog::Release::parse(number.trim())
        .unwrap_or_else(|| panic!("`rustc -vV` reported an unparsable release {release_line:?}"));
    Compiler {
        release,
        prerelease: suffix.starts_with("nightly") || suffix.starts_with("dev"),
    }
}

/// Whether this build is kernel mode: the feature block on, as in `rust/kernel`.
fn kernel_mode(compiler: &Compiler) -> bool {
    match env::var("KSHIM_MODE").as_deref() {
        Ok("kernel") => return true,
        Ok("stable") => return false,
        Ok(other) => panic!("KSHIM_MODE must be `kernel` or `stable`, not {other:?}"),
        Err(_) => {}
    }
    match env::var("RUSTC_BOOTSTRAP").as_deref() {
        Ok("1") => true,
        Ok("-1") => false,
        Ok(crates) if !crates.is_empty() => {
            let this = env::var("CARGO_PKG_NAME")
                .unwrap_or_default()
                .replace('-', "_");
            crates
                .split(',')
                .any(|name| name.trim() == this || name.trim() == "kernel")
        }
        _ => compiler.prerelease,
    }
}

/// Prints the cfgs for Cargo; public so that `examples/build.rs` can call it.
pub fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC_BOOTSTRAP");
    println!("cargo:rerun-if-env-changed=KSHIM_MODE");
    if let Err(error) = catalog::check_lists(catalog::FEATURES, catalog::EXCLUDED) {
        panic!("kernel-shim/src/catalog.rs: {error}");
    }
    // Single-colon instructions keep older Cargo releases (before 1.77) able to read this file.
    for name in catalog::all_cfg_names() {
        println!("cargo:rustc-check-cfg=cfg({name})");
    }
    let compiler = probe_compiler();
    let kernel = kernel_mode(&compiler);
    // Cargo gives a build script the target's cfgs as `CARGO_CFG_*`.
    let target_arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let derived = catalog::derived_cfgs(compiler.release, kernel);
    for name in derived.chain(catalog::arch_cfg(&target_arch)) {
        println!("cargo:rustc-cfg={name}");
    }
    // Every package but the shim is a driver: in kernel mode Kbuild gives it its flags, which
    // `.cargo/kbuild-rustc` passes on, since a build script cannot. None holds a space.
    if kernel && env::var("CARGO_PKG_NAME").as_deref() != Ok("kernel-shim") {
        let mut flags = Vec::new();
        catalog::kbuild_driver_flags(catalog::RUST_ALLOWED_FEATURES, |flag| {
            flags.push(flag.to_string())
        });
        println!(
            "cargo:rustc-env=KSHIM_KBUILD_DRIVER_FLAGS={}",
            flags.join(" ")
        );
    }
}
