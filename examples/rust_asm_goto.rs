// SPDX-License-Identifier: GPL-2.0
//! `asm goto`: assembly that jumps straight into a Rust block, the heart of static keys.
//!
//! A `label { ... }` operand (`asm_goto`, stable since Rust 1.87.0, tracking issue #119364)
//! names a Rust block that the assembly may jump to. The kernel's static keys are built on it:
//! `static_branch_unlikely!(KEY)` assembles to a NOP plus a `__jump_table` entry (site, label,
//! key), and enabling the key rewrites the NOP into a jump to the label, so a disabled
//! tracepoint costs one NOP: no load, no compare. On x86-64 the shim's `arch_static_branch`
//! (`kernel::arch::x86_64`, after `arch/x86/include/asm/jump_label.h`) expands to
//!
//! ```text
//! 1: .byte 0x0f, 0x1f, 0x44, 0x00, 0x00         # nopl 0x0(%rax,%rax,1)
//! .pushsection __jump_table, "awR"
//! .balign 8
//! .long 1b - .                                  # the site
//! .long {l_yes} - .                             # the label: `break 'enabled true`
//! .quad {symb} + {off} + {branch} - .           # the key, by `sym` and two `const`s
//! .popsection
//! ```
//!
//! and enabling writes `e9 rel32` (`jmp l_yes`) over the five bytes. That is the kernel's form
//! without objtool (`!CONFIG_HAVE_JUMP_LABEL_HACK`). A normal x86-64 kernel build has objtool,
//! and there the site is `1: jmp {l_yes}` (2 or 5 bytes, as the assembler chooses) with the
//! key field `key + 2`, and objtool writes the NOP; a host program has no objtool pass, so the
//! shim models only the NOP form. The kernel allows the feature outside `rust/` because its
//! `static_branch_unlikely!` macro expands the `asm!` in the driver's crate, as here: Kbuild
//! turns `asm_goto` (and `asm_const`, for the key's `offset_of!`) on for this crate in kernel
//! mode.
//!
//! The stable replacement, the kernel's `CONFIG_JUMP_LABEL=n` path, loads the key's count and
//! branches on it: correct, but a load, a compare and a branch on every pass. The shim's macro
//! picks it by itself where `asm goto` is missing, so the module below reads the same either
//! way; its tests show the bytes at the site before and after the key changes.
//!
//! This module has a tracepoint in its packet path: quiet until the key is enabled.

// No `#![feature]`: in kernel mode Kbuild's `-Zcrate-attr='feature(...)'` already turns
// `asm_goto` and `asm_const` on, which allow `label` operands before 1.87.0 (`const` ones
// before 1.82.0).

use kernel::jump_label::StaticKey;
use kernel::prelude::*;

module! {
    type: RustAsmGoto,
    name: "rust_asm_goto",
    authors: ["Rust for Linux Contributors"],
    description: "Rust asm_goto sample",
    license: "GPL",
}

/// A tracepoint with its key inside, like the kernel's `struct tracepoint`.
#[repr(C)]
struct Tracepoint {
    name: &'static str,
    key: StaticKey,
}

/// The packet tracepoint, like `DEFINE_STATIC_KEY_FALSE(trace_packets)` in a tracepoint.
static TRACE_PACKETS: Tracepoint = Tracepoint {
    name: "packets",
    key: StaticKey::INIT,
};

/// The packet path, with its tracepoint: a NOP while the key is disabled.
fn receive(length: usize) -> usize {
    if kernel::static_branch_unlikely!(TRACE_PACKETS, Tracepoint, key) {
        pr_info!("{}: received {} bytes\n", TRACE_PACKETS.name, length);
    }
    length
}

struct RustAsmGoto {
    bytes: usize,
}

impl kernel::Module for RustAsmGoto {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust asm_goto sample (init)\n");
        let mut bytes = receive(64) + receive(1500);
        TRACE_PACKETS.key.enable();
        bytes += receive(576);
        TRACE_PACKETS.key.disable();
        bytes += receive(9000);
        Ok(RustAsmGoto { bytes })
    }
}

impl Drop for RustAsmGoto {
    fn drop(&mut self) {
        pr_info!("received {} bytes in all\n", self.bytes);
        pr_info!("Rust asm_goto sample (exit)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traces_only_while_the_key_is_enabled() {
        let log = kernel::host::load_unload::<RustAsmGoto>(&THIS_MODULE).unwrap();
        assert_eq!(
            log.as_str(),
            "[info] rust_asm_goto: Rust asm_goto sample (init)\n\
             [info] rust_asm_goto: packets: received 576 bytes\n\
             [info] rust_asm_goto: received 11140 bytes in all\n\
             [info] rust_asm_goto: Rust asm_goto sample (exit)\n"
        );
    }

    /// Patches the tracepoint's sites while loaded, as a test of the loader's own module.
    #[cfg(all(target_arch = "x86_64", kshim_has_asm_goto))]
    struct SitePatching;

    #[cfg(all(target_arch = "x86_64", kshim_has_asm_goto))]
    impl kernel::Module for SitePatching {
        fn init(_module: &'static ThisModule) -> Result<Self> {
            use kernel::jump_label::{load_and_branch, sites};

            /// The bytes at each of the tracepoint's sites.
            fn site_bytes() -> Vec<[u8; 5]> {
                sites(&TRACE_PACKETS.key)
                    .map(|site| site.instruction())
                    .collect()
            }

            /// `jmp rel32` from each site to its label, computed here from the entries alone.
            fn jumps() -> Vec<[u8; 5]> {
                sites(&TRACE_PACKETS.key)
                    .map(|site| {
                        let rel32 = (site.target() as i64 - (site.code() as i64 + 5)) as i32;
                        let [b0, b1, b2, b3] = rel32.to_le_bytes();
                        [0xe9, b0, b1, b2, b3]
                    })
                    .collect()
            }

            let nop5 = [0x0f, 0x1f, 0x44, 0x00, 0x00];
            let count = sites(&TRACE_PACKETS.key).count();
            assert!(count >= 1, "`receive` has at least one site");
            assert!(sites(&TRACE_PACKETS.key).all(|site| !site.is_branch()));

            assert_eq!(
                site_bytes(),
                vec![nop5; count],
                "disabled: a NOP at every site"
            );
            assert_eq!(receive(1), 1);
            assert!(!load_and_branch::static_branch_unlikely(&TRACE_PACKETS.key));

            TRACE_PACKETS.key.enable();
            assert_eq!(
                site_bytes(),
                jumps(),
                "enabled: a jump to the label at every site"
            );
            assert_ne!(site_bytes(), vec![nop5; count]);
            assert!(load_and_branch::static_branch_unlikely(&TRACE_PACKETS.key));
            assert_eq!(receive(2), 2);

            assert!(TRACE_PACKETS.key.disable());
            assert_eq!(site_bytes(), vec![nop5; count], "disabled again: NOPs back");
            assert_eq!(receive(3), 3);
            Ok(SitePatching)
        }
    }

    #[cfg(all(target_arch = "x86_64", kshim_has_asm_goto))]
    #[test]
    fn gated_matches_replacement_asm_goto() {
        let log = kernel::host::load_unload::<SitePatching>(&THIS_MODULE).unwrap();
        // Only the call made while the key was enabled reached the tracepoint's block.
        assert_eq!(
            log.as_str(),
            "[info] rust_asm_goto: packets: received 2 bytes\n"
        );
    }
}
