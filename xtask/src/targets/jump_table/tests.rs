// SPDX-License-Identifier: GPL-2.0
//! The checker against real objects: the sample compiled by the host's rustc with the shim in
//! kernel mode, in stable mode, and in stable mode as a compiler before `asm goto` builds it;
//! then the same objects truncated and corrupted.

use super::*;
use crate::catalog::Release;
use crate::run::plan::{mode_cfgs, Example, Mode, Output, Rustc};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::OnceLock;
use xshell::{cmd, Shell};

/// The host toolchain's real rustc: `RUSTC`, or rustup's for the active toolchain, or `rustc`
/// from `PATH`.
fn host_rustc() -> Rustc {
    let sh = Shell::new().unwrap();
    let path = crate::tests::support::current_rustc();
    let version = crate::tests::support::read_quietly(cmd!(sh, "{path} -vV"));
    let release = version
        .lines()
        .find_map(|line| line.strip_prefix("release: "))
        .and_then(|release| Release::parse(release.split('-').next().unwrap()))
        .unwrap();
    Rustc {
        launch: crate::toolchains::loader::Launch {
            rustc: path,
            env: Vec::new(),
            loader: None,
        },
        release,
    }
}

/// Runs a compilation that must succeed; returns what it wrote to stderr.
fn run(invocation: &crate::util::process::Invocation) -> String {
    let output = invocation.command().output().unwrap();
    assert!(
        output.status.success(),
        "{invocation}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The sample's object, built as the matrix builds it: the shim's rlib with the mode's cfgs
/// for `cfgs_of`, then the sample against it with `--emit=obj`.
fn build_sample(name: &str, mode: Mode, cfgs_of: Option<Release>) -> Vec<u8> {
    let root = crate::project_root();
    let directory = root.join("target/kshim/unit-tests/jump-table").join(name);
    std::fs::create_dir_all(&directory).unwrap();
    let rustc = host_rustc();
    let cfgs = mode_cfgs(cfgs_of.unwrap_or(rustc.release), mode, None);
    let _ = run(&rustc.shim(&root, mode, &cfgs, Output::Directory(&directory)));
    let sample = Example {
        name: "sites".into(),
        path: root.join(SAMPLE_PATH),
    };
    let rlib = directory.join("libkernel.rlib");
    let mut invocation = rustc.example(&sample, mode, &cfgs, &rlib, Output::Directory(&directory));
    let crate_type = invocation.args.iter().position(|arg| arg == "bin").unwrap();
    invocation.args[crate_type] = "lib".into();
    let emit = invocation
        .args
        .iter()
        .position(|arg| arg == "--emit=link")
        .unwrap();
    invocation.args[emit] = "--emit=obj".into();
    invocation
        .args
        .extend(["-C", "codegen-units=1", "-C", "opt-level=2"].map(String::from));
    let warnings = run(&invocation);
    assert!(warnings.is_empty(), "{invocation}\n{warnings}");
    std::fs::read(directory.join("sites.o")).unwrap()
}

/// Each object is built once per test process, however many tests read it.
fn object(which: usize) -> &'static [u8] {
    static OBJECTS: [OnceLock<Vec<u8>>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    OBJECTS[which].get_or_init(|| match which {
        0 => build_sample("kernel", Mode::Kernel, None),
        1 => build_sample("stable", Mode::Stable, None),
        _ => build_sample("stable-1.86", Mode::Stable, Some(Release::new(1, 86, 0))),
    })
}

const KERNEL: usize = 0;
const STABLE: usize = 1;
const BEFORE_ASM_GOTO: usize = 2;

#[test]
fn sample_sites_match_the_sample_source() {
    let source = std::fs::read_to_string(crate::project_root().join(SAMPLE_PATH)).unwrap();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for use_site in source.split("static_branch_unlikely!(").skip(1) {
        let key = use_site
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .next()
            .unwrap();
        *counts.entry(key).or_default() += 1;
    }
    let mut expected: Vec<(&str, usize)> = SAMPLE_SITES.to_vec();
    expected.sort();
    assert_eq!(counts.into_iter().collect::<Vec<_>>(), expected);
}

#[test]
fn the_nops_are_the_shims() {
    let shim = crate::project_root().join("kernel-shim/src");
    let modules = std::fs::read_to_string(shim.join("arch.rs")).unwrap();
    for target in crate::targets::KERNEL_TARGETS {
        // `#[cfg(target_arch = "aarch64")]` above `pub use arm64 as current;`
        let cfg = format!("#[cfg(target_arch = \"{}\")]", target.arch);
        let module = modules.split(&cfg).nth(1).unwrap().trim_start();
        let file = module
            .strip_prefix("pub use ")
            .unwrap()
            .split(' ')
            .next()
            .unwrap();
        let source = std::fs::read_to_string(shim.join(format!("arch/{file}.rs"))).unwrap();
        let line = source
            .lines()
            .find(|line| line.starts_with("pub const NOP"))
            .unwrap();
        let value = line.split_once('=').unwrap().1.trim().trim_end_matches(';');
        let bytes: Vec<u8> = if let Some(word) = value.strip_suffix("_u32.to_le_bytes()") {
            let word = u32::from_str_radix(&word.trim_start_matches("0x").replace('_', ""), 16);
            word.unwrap().to_le_bytes().to_vec()
        } else {
            let list = value.trim_start_matches('[').trim_end_matches(']');
            let parse = |byte: &str| u8::from_str_radix(byte.trim().trim_start_matches("0x"), 16);
            list.split(',').map(|byte| parse(byte).unwrap()).collect()
        };
        assert_eq!(bytes, target.nop, "{file}.rs: {line}");
    }
}

fn check_sample(which: usize, expected: &[(&str, usize)]) -> Vec<Site> {
    let sites = check_object(object(which), "x86_64", expected).unwrap();
    for site in &sites {
        assert!(
            !site.branch,
            "static_branch_unlikely! is a NOP while disabled: {site:?}"
        );
        assert!(site.section.starts_with(".text"), "{site:?}");
        assert_ne!(site.label, site.offset, "{site:?}");
    }
    sites
}

#[test]
fn kernel_mode_has_every_site() {
    let sites = check_sample(KERNEL, SAMPLE_SITES);
    let sections: Vec<&str> = sites.iter().map(|site| site.section.as_str()).collect();
    for function in [
        "kshim_trace_receive",
        "kshim_trace_send",
        "kshim_debug_check",
    ] {
        assert!(
            sections.iter().any(|s| s.ends_with(function)),
            "{function}: {sites:?}"
        );
    }
}

#[test]
fn stable_mode_with_asm_goto_has_every_site() {
    assert!(host_rustc().release >= Release::new(1, 87, 0));
    check_sample(STABLE, SAMPLE_SITES);
}

#[test]
fn stable_mode_before_asm_goto_has_no_table() {
    check_sample(BEFORE_ASM_GOTO, &[]);
    let error = check_object(object(BEFORE_ASM_GOTO), "x86_64", SAMPLE_SITES)
        .unwrap_err()
        .to_string();
    assert_eq!(error, "key KSHIM_TRACE_KEY has 0 sites, expected 2");
}

#[test]
fn wrong_expectations_and_architectures_are_named() {
    let bytes = object(KERNEL);
    let error = check_object(bytes, "x86_64", &[]).unwrap_err().to_string();
    assert!(
        error.starts_with("expected no __jump_table entries, found 4"),
        "{error}"
    );
    let fewer = &SAMPLE_SITES[..2];
    let error = check_object(bytes, "x86_64", fewer)
        .unwrap_err()
        .to_string();
    assert_eq!(error, "key KSHIM_TRACEPOINT has 1 sites, expected none");
    let error = check_object(bytes, "aarch64", SAMPLE_SITES)
        .unwrap_err()
        .to_string();
    assert_eq!(error, "the object's e_machine is 62, not 183 for aarch64");
    assert!(check_object(bytes, "mips64", SAMPLE_SITES).is_err());
}

#[test]
fn a_changed_nop_names_its_site() {
    let bytes = object(KERNEL);
    for site in check_sample(KERNEL, SAMPLE_SITES) {
        let (offset, _) = file_range(bytes, &site.section);
        let mut changed = bytes.to_vec();
        let at = offset + site.offset as usize + 2;
        changed[at] ^= 0x10;
        let error = check_object(&changed, "x86_64", SAMPLE_SITES)
            .unwrap_err()
            .to_string();
        let place = format!("the site {}+{:#x} holds", site.section, site.offset);
        assert!(error.contains(&place), "{error}");
        assert!(
            error.ends_with("not the x86_64 NOP 0f 1f 44 00 00"),
            "{error}"
        );
    }
}

/// Where the bytes of the section called `name` lie in the object: offset and size.
fn file_range(bytes: &[u8], name: &str) -> (usize, usize) {
    let object = Object::parse(bytes).unwrap();
    let section = object.section(object.sections_named(name)[0]).unwrap();
    let (offset, size) = section.file_range(object.endian).unwrap();
    (offset as usize, size as usize)
}

/// The kernel-mode object with one change to the `__jump_table` relocation at `r_offset`:
/// `change` gets the 24 bytes of the `Elf64_Rela`.
fn with_relocation_changed(r_offset: u64, change: impl Fn(&mut [u8])) -> Vec<u8> {
    let bytes = object(KERNEL);
    let (start, size) = file_range(bytes, ".rela__jump_table");
    let end = start + size;
    let mut changed = bytes.to_vec();
    let entry = changed[start..end]
        .chunks_exact_mut(24)
        .find(|entry| entry[..8] == r_offset.to_le_bytes())
        .unwrap();
    change(entry);
    changed
}

fn add_to_addend(entry: &mut [u8], value: i64) {
    let addend = i64::from_le_bytes(entry[16..24].try_into().unwrap());
    entry[16..24].copy_from_slice(&(addend + value).to_le_bytes());
}

#[test]
fn corrupted_relocations_are_named() {
    let check = |bytes: &[u8]| check_object(bytes, "x86_64", SAMPLE_SITES);
    let first_key = 8;
    let branch = check(&with_relocation_changed(first_key, |e| add_to_addend(e, 1))).unwrap();
    assert!(branch[0].branch, "bit 0 of the key field is the branch");
    assert!(!branch[1].branch);
    let error = check(&with_relocation_changed(first_key, |e| add_to_addend(e, 2)))
        .unwrap_err()
        .to_string();
    assert!(error.ends_with("is not four-byte aligned"), "{error}");
    let far = with_relocation_changed(first_key, |e| add_to_addend(e, 0x1000));
    let error = check(&far).unwrap_err().to_string();
    assert!(error.ends_with("is not inside a data symbol"), "{error}");
    // The first entry's label, relocated against the second entry's site's section.
    let other_symbol = {
        let object = Object::parse(object(KERNEL)).unwrap();
        let table = object.sections_named("__jump_table")[0];
        object.relocations(table).unwrap()[&16][0].symbol as u32
    };
    let moved = with_relocation_changed(4, |e| {
        e[12..16].copy_from_slice(&other_symbol.to_le_bytes())
    });
    let error = check(&moved).unwrap_err().to_string();
    assert!(error.ends_with("is not in the site's section"), "{error}");
    let error = check(&with_relocation_changed(4, |e| e[8] = 1))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("field at __jump_table+0x4 has relocation types [1]"),
        "{error}"
    );
    assert!(error.contains("[1] (R_X86_64_64), not one"), "{error}");
}

/// `check_object` on `bytes`, with a panic turned into a failure that names `what`.
fn check_without_panic(bytes: &[u8], what: &str) -> anyhow::Result<Vec<Site>> {
    catch_unwind(AssertUnwindSafe(|| {
        check_object(bytes, "x86_64", SAMPLE_SITES)
    }))
    .unwrap_or_else(|_| panic!("check_object panicked on {what}"))
}

#[test]
fn every_truncation_is_an_error() {
    let bytes = object(KERNEL);
    for length in 0..bytes.len() {
        let truncated = &bytes[..length];
        let result = check_without_panic(truncated, &format!("the first {length} bytes"));
        assert!(result.is_err(), "the first {length} bytes passed");
    }
    assert!(check_without_panic(bytes, "the whole object").is_ok());
}

#[test]
fn flipped_header_and_section_table_bytes_never_panic() {
    let bytes = object(KERNEL);
    let object = Object::parse(bytes).unwrap();
    let table = u64::from_le_bytes(bytes[40..48].try_into().unwrap()) as usize;
    let table_end = table + object.sections.len() * 64;
    for at in (0..64).chain(table..table_end) {
        for flip in [0xff, 0x80, 0x01] {
            let mut changed = bytes.to_vec();
            changed[at] ^= flip;
            let _ = check_without_panic(&changed, &format!("byte {at:#x} ^ {flip:#x}"));
        }
    }
    // What the reader relies on must be checked: the identification, type, version, machine,
    // the header's and the section table's place and shape, and where each section's bytes
    // are. Fields it ignores (`e_flags`, an unrelated section's `sh_flags`) may change.
    let must_fail = [
        0, 1, 2, 3, 4, 5, 6, 16, 18, 19, 20, 40, 41, 45, 52, 58, 60, 62,
    ];
    let mut must_fail: Vec<usize> = must_fail.to_vec();
    for (index, section) in object.sections.iter().enumerate().skip(1) {
        let endian = object.endian;
        if section.sh_type(endian) != elf::SHT_NOBITS && section.sh_size(endian) > 0 {
            let header = table + index * 64;
            must_fail.extend([header + 24 + 7, header + 32 + 7]);
        }
    }
    for at in must_fail {
        let mut changed = bytes.to_vec();
        changed[at] ^= 0xff;
        let result = check_without_panic(&changed, &format!("byte {at:#x}"));
        assert!(result.is_err(), "flipping byte {at:#x} passed");
    }
}

#[test]
fn any_flipped_byte_never_panics() {
    let bytes = object(KERNEL);
    for at in 0..bytes.len() {
        let mut changed = bytes.to_vec();
        changed[at] ^= 0xff;
        let _ = check_without_panic(&changed, &format!("byte {at:#x} ^ 0xff"));
    }
}

/// Checks objects built elsewhere, by hand: `KSHIM_OBJECTS=arch:file,arch:file,...`. Each must
/// have the sample's sites, unless its file name contains `before-asm-goto`, and every
/// truncation, byte flip and changed NOP is handled as for the host's object.
#[test]
fn objects_named_in_the_environment() {
    let Some(list) = std::env::var_os("KSHIM_OBJECTS") else {
        return;
    };
    for item in list.to_string_lossy().split(',') {
        let (arch, file) = item.split_once(':').unwrap();
        let bytes = std::fs::read(Path::new(file)).unwrap();
        let expected = if file.contains("before-asm-goto") {
            &[][..]
        } else {
            SAMPLE_SITES
        };
        let sites =
            check_object(&bytes, arch, expected).unwrap_or_else(|error| panic!("{file}: {error}"));
        let object = Object::parse(&bytes).unwrap();
        let table = object.sections_named("__jump_table");
        let mut kinds: Vec<u32> = table
            .iter()
            .flat_map(|&index| object.relocations(index).unwrap().into_values().flatten())
            .map(|relocation| relocation.kind)
            .collect();
        kinds.sort();
        kinds.dedup();
        eprintln!(
            "{file}: {} sites, relocation types {kinds:?}: {sites:?}",
            sites.len()
        );
        for length in 0..bytes.len() {
            let truncated = catch_unwind(|| check_object(&bytes[..length], arch, expected));
            assert!(truncated.unwrap().is_err(), "{file}: {length} bytes passed");
        }
        for at in 0..bytes.len() {
            let mut changed = bytes.clone();
            changed[at] ^= 0xff;
            let flipped = catch_unwind(|| check_object(&changed, arch, expected));
            assert!(flipped.is_ok(), "{file}: flipping byte {at:#x} panicked");
        }
        for site in sites {
            let (offset, _) = file_range(&bytes, &site.section);
            let mut changed = bytes.clone();
            changed[offset + site.offset as usize] ^= 0x40;
            let error = check_object(&changed, arch, expected)
                .unwrap_err()
                .to_string();
            let place = format!("the site {}+{:#x} holds", site.section, site.offset);
            assert!(error.contains(&place), "{file}: {error}");
        }
    }
}
