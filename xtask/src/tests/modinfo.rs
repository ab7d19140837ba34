// SPDX-License-Identifier: GPL-2.0
//! `.modinfo` in the compiled object, where `used_with_arg` makes its only difference.
//!
//! The example `rust_used_with_arg` is compiled to an object in both modes, as the matrix
//! builds it (kernel mode with Kbuild's flags for a driver), and its sections are read with the
//! `object` crate. Every entry `module!` declares (`license=`, `author=`, `description=`) and
//! the example's own `firmware=` is kept in a `.modinfo` section in both modes. In kernel mode
//! (`#[used(compiler)]`, as the kernel's `module!` writes it) no such section is flagged
//! `SHF_GNU_RETAIN`, as none of C's is; in stable mode (a plain `#[used]`) every one is from
//! Rust 1.89.0 on ([`USED_MEANS_LINKER_SINCE`]) and none is before. Checked on the compiler
//! running the tests and on Debian's 1.85.0, one on each side of that release.

use crate::catalog::Release;
use crate::run::plan::{Mode, Rustc};
use crate::tests::kernel_mode::{compiler, compiler_at, example_object};
use crate::tests::support::scratch_dir;
use crate::util::process::run;
use object::elf::SHF_GNU_RETAIN;
use object::{Object, ObjectSection, SectionFlags};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

/// The first release whose plain `#[used]` is `#[used(linker)]` on ELF (rust-lang/rust#140872),
/// as the kernel's switch of `module!` to `#[used(compiler)]` names it; measured here as
/// Debian's 1.85.0 and 1.85.1 without the flag, rustup's 1.95.0 and Debian's 1.96.0 with it.
const USED_MEANS_LINKER_SINCE: Release = Release::new(1, 89, 0);

/// The entries the example's object must keep, in both modes.
const ENTRIES: [&str; 4] = [
    "author=Rust for Linux Contributors",
    "description=Rust used_with_arg sample",
    "firmware=rust/used_with_arg.bin",
    "license=GPL",
];

/// Each `.modinfo` string in the object, with whether its section is `SHF_GNU_RETAIN`.
fn modinfo_entries(object_file: &Path) -> Vec<(String, bool)> {
    let data = std::fs::read(object_file)
        .unwrap_or_else(|error| panic!("reading {}: {error}", object_file.display()));
    let file = object::File::parse(&*data)
        .unwrap_or_else(|error| panic!("{}: {error}", object_file.display()));
    let mut entries = Vec::new();
    for section in file.sections() {
        if section.name() != Ok(".modinfo") {
            continue;
        }
        let retain = match section.flags() {
            SectionFlags::Elf { sh_flags, .. } => sh_flags.contains(SHF_GNU_RETAIN),
            other => panic!("{}: not ELF flags: {other:?}", object_file.display()),
        };
        let bytes = section
            .data()
            .expect("a .modinfo section has its bytes in the file");
        for entry in bytes
            .split(|byte| *byte == 0)
            .filter(|entry| !entry.is_empty())
        {
            entries.push((String::from_utf8_lossy(entry).into_owned(), retain));
        }
    }
    entries
}

/// The example compiled to an object in `mode` by `rustc`, into `directory`: its `.modinfo`.
fn example_object_entries(rustc: &Rustc, mode: Mode, directory: &Path) -> Vec<(String, bool)> {
    let (invocation, object_file) = example_object(rustc, mode, "rust_used_with_arg", directory);
    let output = run(&invocation, Duration::from_secs(300)).expect("running rustc");
    assert!(
        output.success(),
        "`{}` failed:\n{}",
        invocation,
        output.stderr
    );
    modinfo_entries(&object_file)
}

fn check(rustc: &Rustc, label: &str) {
    let scratch = scratch_dir(&format!("modinfo-{label}"));
    let wanted: BTreeSet<&str> = ENTRIES.into_iter().collect();
    for mode in Mode::ALL {
        let entries = example_object_entries(rustc, mode, &scratch.join(mode.word()));
        let kept: BTreeSet<&str> = entries.iter().map(|(entry, _)| entry.as_str()).collect();
        assert_eq!(
            kept,
            wanted,
            "{label}, {} mode: the entries kept in .modinfo",
            mode.word()
        );
        let retained = match mode {
            Mode::Kernel => false,
            Mode::Stable => rustc.release >= USED_MEANS_LINKER_SINCE,
        };
        for (entry, retain) in &entries {
            assert_eq!(
                *retain,
                retained,
                "{label} ({}), {} mode: `{entry}`'s section SHF_GNU_RETAIN",
                rustc.release,
                mode.word()
            );
        }
    }
}

#[test]
fn used_with_arg_keeps_modinfo_without_shf_gnu_retain() {
    check(&compiler(), "current");
    let (path, _) = crate::tests::targets::provisioned("debian-1.85.0", false);
    let old = compiler_at(path.into());
    assert!(old.release < USED_MEANS_LINKER_SINCE, "{}", old.release);
    check(&old, "debian-1.85.0");
}
