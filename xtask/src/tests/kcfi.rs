// SPDX-License-Identifier: GPL-2.0
//! kCFI type hashes in compiled objects, where `cfi_encoding` makes its only difference.
//!
//! With `-Zsanitizer=kcfi` (and `-Zsanitizer-cfi-normalize-integers`, as the kernel passes
//! them) x86-64 code gets a `__cfi_NAME` preamble before every function, whose
//! `mov $HASH, %eax` holds the hash of the function's type that an indirect call checks. The
//! example `rust_cfi_encoding` is compiled to an object in kernel mode (its callback returns
//! the bindings' `lru_status` with `#[cfi_encoding = "10lru_status"]`) and with the stable
//! cfgs (the `#[repr(C)]` replacement), and a plain `#[repr(transparent)]` newtype, what
//! bindgen writes without the attribute, beside them. The first two must hash as C's
//! `enum lru_status (*)(struct list_head *, struct list_lru_one *, void *)`, the third not;
//! where clang is installed, C's own hash, from a function compiled with
//! `-fsanitize=kcfi -fsanitize-cfi-icall-experimental-normalize-integers`, is compared too.

use crate::run::plan::{Mode, Rustc};
use crate::tests::kernel_mode::{compiler, example_object};
use crate::tests::support::scratch_dir;
use crate::util::process::{run, Invocation};
use object::{Object, ObjectSection, ObjectSymbol};
use std::path::Path;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(300);

/// The kernel's kCFI flags for Rust (`CONFIG_CFI_CLANG`), with the `panic=abort` that kCFI
/// requires and the kernel has anyway.
const KCFI: [&str; 3] = [
    "-Zsanitizer=kcfi",
    "-Zsanitizer-cfi-normalize-integers",
    "-Cpanic=abort",
];

/// What bindgen writes for `lru_status` without the attribute, with the callback's signature.
const NAIVE: &str = "#![no_std]\n\
    #[repr(C)] pub struct list_head { next: *mut list_head, prev: *mut list_head }\n\
    #[repr(C)] pub struct list_lru_one { list: list_head, nr_items: i64 }\n\
    #[repr(transparent)] pub struct lru_status(pub u32);\n\
    #[no_mangle]\n\
    pub unsafe extern \"C\" fn rust_shrink_free_page(\n\
        _item: *mut list_head, _lru: *mut list_lru_one, _arg: *mut core::ffi::c_void,\n\
    ) -> lru_status { lru_status(3) }\n";

/// C's callback, as `list_lru_walk_cb` types it.
const C_CALLBACK: &str = "struct list_head; struct list_lru_one;\n\
    enum lru_status { LRU_REMOVED, LRU_REMOVED_RETRY, LRU_ROTATE, LRU_SKIP };\n\
    enum lru_status c_shrink_free_page(struct list_head *item, struct list_lru_one *lru,\n\
                                       void *arg) { return LRU_SKIP; }\n";

/// Runs a compilation that uses `-Zsanitizer`; compilers that refuse to mix it with a `core`
/// built without it (from about 1.88.0) are told that this object is only read, not linked.
fn compile(mut invocation: Invocation) {
    let output = run(&invocation, TIMEOUT).expect("running rustc");
    if output.success() {
        return;
    }
    assert!(
        output.stderr.contains("mixing `-Zsanitizer"),
        "`{}` failed:\n{}",
        invocation,
        output.stderr
    );
    invocation
        .args
        .push("-Cunsafe-allow-abi-mismatch=sanitizer,sanitizer-cfi-normalize-integers".to_string());
    let output = run(&invocation, TIMEOUT).expect("running rustc");
    assert!(
        output.success(),
        "`{}` failed:\n{}",
        invocation,
        output.stderr
    );
}

/// The hash in `function`'s `__cfi_` preamble: the operand of its `mov $imm32, %eax` (`b8`).
fn kcfi_hash(object_file: &Path, function: &str) -> u32 {
    let data = std::fs::read(object_file).unwrap();
    let file = object::File::parse(&*data)
        .unwrap_or_else(|error| panic!("{}: {error}", object_file.display()));
    let name = format!("__cfi_{function}");
    let symbol = file
        .symbols()
        .find(|symbol| symbol.name() == Ok(name.as_str()))
        .unwrap_or_else(|| panic!("{}: no {name}", object_file.display()));
    let section = file
        .section_by_index(symbol.section_index().expect("a preamble is in a section"))
        .unwrap();
    let bytes = section.data().unwrap();
    let start = usize::try_from(symbol.address() - section.address()).unwrap();
    let preamble = &bytes[start..start + usize::try_from(symbol.size()).unwrap()];
    let mov = preamble
        .iter()
        .position(|byte| *byte == 0xb8)
        .unwrap_or_else(|| panic!("{name}: no `mov $imm32, %eax` in {preamble:02x?}"));
    u32::from_le_bytes(preamble[mov + 1..mov + 5].try_into().unwrap())
}

/// The example's object in `mode`'s cfgs, compiled with the kernel's kCFI flags.
fn example_hash(rustc: &Rustc, mode: Mode, directory: &Path) -> u32 {
    let (mut invocation, object_file) = example_object(rustc, mode, "rust_cfi_encoding", directory);
    invocation.args.extend(KCFI.map(String::from));
    // `-Z` flags need it; the cfgs stay the mode's, and so does the type the example gets.
    invocation.env_remove.clear();
    invocation
        .env
        .push(("RUSTC_BOOTSTRAP".to_string(), "1".to_string()));
    compile(invocation);
    kcfi_hash(&object_file, "rust_shrink_free_page")
}

/// C's hash of `list_lru_walk_cb`'s type, if a clang is installed.
fn c_hash(directory: &Path) -> Option<u32> {
    let source = directory.join("callback.c");
    std::fs::write(&source, C_CALLBACK).unwrap();
    let object_file = directory.join("callback.o");
    for clang in ["clang-19", "clang"] {
        let invocation = Invocation::new(
            clang,
            [
                "-c",
                "-O2",
                "-fsanitize=kcfi",
                "-fsanitize-cfi-icall-experimental-normalize-integers",
            ]
            .map(String::from)
            .into_iter()
            .chain([
                source.display().to_string(),
                "-o".into(),
                object_file.display().to_string(),
            ])
            .collect(),
        );
        if run(&invocation, TIMEOUT).is_ok_and(|output| output.success()) {
            return Some(kcfi_hash(&object_file, "c_shrink_free_page"));
        }
    }
    None
}

#[test]
fn cfi_encoding_hashes_lru_status_as_c_does() {
    if std::env::consts::ARCH != "x86_64" {
        eprintln!("the __cfi_ preamble read here is x86-64's: not checked on this host");
        return;
    }
    let rustc = compiler();
    let scratch = scratch_dir("kcfi");
    let gated = example_hash(&rustc, Mode::Kernel, &scratch.join("kernel"));
    let replacement = example_hash(&rustc, Mode::Stable, &scratch.join("stable"));

    let naive_source = scratch.join("naive.rs");
    std::fs::write(&naive_source, NAIVE).unwrap();
    let naive_object = scratch.join("naive.o");
    let args = [
        "--crate-type=lib",
        "--edition=2021",
        "--emit=obj",
        "-Ccodegen-units=1",
    ]
    .into_iter()
    .chain(KCFI)
    .map(String::from)
    .chain([
        naive_source.display().to_string(),
        "-o".into(),
        naive_object.display().to_string(),
    ])
    .collect();
    let mut env = rustc.launch.env.clone();
    env.push(("RUSTC_BOOTSTRAP".to_string(), "1".to_string()));
    compile(rustc.launch.invocation(args, env));
    let naive = kcfi_hash(&naive_object, "rust_shrink_free_page");

    assert_eq!(
        gated, replacement,
        "the #[repr(C)] replacement hashes as the cfi_encoding form: {gated:#x} vs {replacement:#x}"
    );
    assert_ne!(
        gated, naive,
        "without cfi_encoding a transparent newtype must hash as its integer, not as C's enum"
    );
    match c_hash(&scratch) {
        Some(c) => assert_eq!(gated, c, "Rust {gated:#x}, C {c:#x}"),
        None => eprintln!("no clang here: C's own hash not compared"),
    }
}
