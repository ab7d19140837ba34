// SPDX-License-Identifier: GPL-2.0
//! `.modinfo` entries that nothing refers to, kept with `#[used(compiler)]`.
//!
//! A module's `license=GPL`, `author=...` and `firmware=...` strings live in its `.modinfo`
//! section, where `modinfo` and the module loader find them; no code refers to them, so the
//! compiler must be told to keep them. `#[used(compiler)]` (`used_with_arg`, unstable, tracking
//! issue #93798) keeps a static in the object file and says nothing to the linker, as C's
//! `__used` does. The kernel's `module!` says it on every entry (6.12 on), and since the macro
//! expands in the driver's crate, `used_with_arg` is in the kernel's allowed list.
//!
//! The stable replacement is a plain `#[used]`. It keeps the static as well, and before Rust
//! 1.89.0 it meant exactly the same; from 1.89.0 on ELF it means `#[used(linker)]`, and the
//! entry gets a `.modinfo` section of its own flagged `SHF_GNU_RETAIN`, unlike the ones C
//! makes. Its cost is that flag and the extra section, which only the object shows: on the host
//! both forms hold the same bytes, and the program cannot see its sections' flags, so this
//! example's test compares the bytes and the xtask's `modinfo` test reads the flags.
//!
//! `module!` already writes `license=`, `author=` and `description=` this way; the module
//! below adds `firmware=` entries, one per form, and logs them as `modinfo` prints them.

use kernel::prelude::*;

module! {
    type: RustUsedWithArg,
    name: "rust_used_with_arg",
    authors: ["Rust for Linux Contributors"],
    description: "Rust used_with_arg sample",
    license: "GPL",
}

// The gated form, as the kernel's `module!` writes every entry. Kbuild's allowed list turns
// `used_with_arg` on in this crate, so the expansion compiles here.
#[cfg(kshim_has_used_with_arg)]
kernel::__modinfo_used_compiler!(FIRMWARE: firmware = "rust/used_with_arg.bin");

// The stable form: a plain `#[used]`, `#[used(linker)]` on ELF from Rust 1.89.0.
#[cfg(not(kshim_has_used_with_arg))]
kernel::__modinfo_used!(FIRMWARE: firmware = "rust/used_with_arg.bin");

/// `field=value` split as `modinfo` prints it, `field: value`, from an entry with its NUL.
fn modinfo_line(entry: &[u8]) -> Option<(&str, &str)> {
    let text = core::str::from_utf8(entry.strip_suffix(b"\0")?).ok()?;
    text.split_once('=')
}

struct RustUsedWithArg;

impl kernel::Module for RustUsedWithArg {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust used_with_arg sample (init)\n");
        match modinfo_line(&FIRMWARE) {
            Some((field, value)) => pr_info!("{}: {}\n", field, value),
            None => pr_err!("a malformed .modinfo entry\n"),
        }
        Ok(RustUsedWithArg)
    }
}

impl Drop for RustUsedWithArg {
    fn drop(&mut self) {
        pr_info!("Rust used_with_arg sample (exit)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_the_entry_as_modinfo_does() {
        let log = kernel::host::load_unload::<RustUsedWithArg>(&THIS_MODULE).unwrap();
        assert_eq!(
            log.as_str(),
            "[info] rust_used_with_arg: Rust used_with_arg sample (init)\n\
             [info] rust_used_with_arg: firmware: rust/used_with_arg.bin\n\
             [info] rust_used_with_arg: Rust used_with_arg sample (exit)\n"
        );
    }

    /// What the host can observe: both forms keep a static with the same bytes. Where they
    /// differ, the section's `SHF_GNU_RETAIN` flag from Rust 1.89.0 on, is checked on the
    /// compiled object by the xtask (`xtask/src/tests/modinfo.rs`).
    #[cfg(kshim_has_used_with_arg)]
    #[test]
    fn gated_matches_replacement_used_with_arg() {
        kernel::__modinfo_used!(REPLACEMENT: firmware = "rust/used_with_arg.bin");
        assert_eq!(FIRMWARE, REPLACEMENT);
        assert_eq!(&FIRMWARE[..], b"firmware=rust/used_with_arg.bin\0");
        assert!(
            !core::ptr::eq(&FIRMWARE, &REPLACEMENT),
            "two statics, both kept"
        );
    }
}
