// SPDX-License-Identifier: GPL-2.0
//! `const` operands in `asm!`: a field offset from `offset_of!` becomes the load's displacement.
//!
//! A `const` operand (`asm_const`, stable since Rust 1.82.0, tracking issue #93332) pastes a
//! compile-time integer into the assembly text. The kernel's assembly needs such numbers all
//! the time: `static_branch_unlikely!` passes `offset_of!(type, key)` and the branch polarity
//! to its `asm!`, `BUG()` entries carry line numbers and flags. The feature is allowed outside
//! `rust/` because those macros expand the `asm!` in the driver's crate.
//!
//! The stable replacement passes the value in a register (`in(reg)`): it works for any value,
//! but costs a register and an instruction to load it, and the address becomes
//! `[base + index]` instead of `[base + displacement]`. (Pasting the number into the template
//! with `concat!`/`stringify!` works only for literals, not for `offset_of!` or a const
//! generic.) The operands are input to the `asm!` macro, which is not expanded in code that
//! `#[cfg]` removes, so both forms can stand side by side below, in this file.
//!
//! This module reads its statistics block the way `READ_ONCE(stats->field)` does: one load
//! per field, each with the field's offset built in.

// No `#![feature]`: in kernel mode Kbuild's `-Zcrate-attr='feature(...)'` already turns
// `asm_const` on, which allows `const` operands before 1.82.0.

use core::mem::offset_of;
use kernel::prelude::*;

module! {
    type: RustAsmConst,
    name: "rust_asm_const",
    authors: ["Rust for Linux Contributors"],
    description: "Rust asm_const sample",
    license: "GPL",
}

/// Counters that, in a driver, the interrupt handler would update behind our back.
#[repr(C)]
struct Stats {
    packets: u32,
    bytes: u32,
    errors: u32,
}

/// Reads the `u32` at `OFFSET` in `stats` with one load: `mov eax, [stats + OFFSET]`.
///
/// # Safety
///
/// `OFFSET` must be the offset of a `u32` field of `Stats`.
#[cfg(all(target_arch = "x86_64", kshim_has_asm_const))]
unsafe fn read_once<const OFFSET: usize>(stats: &Stats) -> u32 {
    let value: u32;
    // SAFETY: `stats` is a live, aligned `Stats` and the caller guarantees a `u32` field sits
    // at `OFFSET`, so the four bytes read are in bounds and aligned; nothing else is touched.
    unsafe {
        core::arch::asm!(
            "mov {value:e}, dword ptr [{stats} + {offset}]",
            value = lateout(reg) value,
            stats = in(reg) stats as *const Stats,
            offset = const OFFSET,
            options(nostack, readonly, preserves_flags),
        );
    }
    value
}

/// Reads the `u32` at `OFFSET` in `stats` with one load: `mov eax, [stats + index]`.
///
/// # Safety
///
/// `OFFSET` must be the offset of a `u32` field of `Stats`.
#[cfg(all(target_arch = "x86_64", not(kshim_has_asm_const)))]
unsafe fn read_once<const OFFSET: usize>(stats: &Stats) -> u32 {
    let value: u32;
    // SAFETY: `stats` is a live, aligned `Stats` and the caller guarantees a `u32` field sits
    // at `OFFSET`, so the four bytes read are in bounds and aligned; nothing else is touched.
    unsafe {
        core::arch::asm!(
            "mov {value:e}, dword ptr [{stats} + {offset}]",
            value = lateout(reg) value,
            stats = in(reg) stats as *const Stats,
            offset = in(reg) OFFSET,
            options(nostack, readonly, preserves_flags),
        );
    }
    value
}

/// Reads the `u32` at `OFFSET` in `stats` with the shim's one load for this architecture.
///
/// The shim has both forms for arm64 (`ldr w0, [x1, #OFFSET]`), riscv64 (`lw a0, OFFSET(a1)`)
/// and loongarch64 (`ld.w $a0, $a1, OFFSET`) in `kernel::arch`, and a volatile load elsewhere.
///
/// # Safety
///
/// `OFFSET` must be the offset of a `u32` field of `Stats`.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn read_once<const OFFSET: usize>(stats: &Stats) -> u32 {
    let base: *const Stats = stats;
    // SAFETY: the caller guarantees a `u32` field of the live `stats` sits at `OFFSET`.
    unsafe { kernel::asm::read_once_u32_at::<OFFSET>(base.cast()) }
}

struct RustAsmConst {
    stats: Stats,
}

impl kernel::Module for RustAsmConst {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust asm_const sample (init)\n");
        let stats = Stats {
            packets: 3,
            bytes: 1500,
            errors: 1,
        };
        // SAFETY: each offset is that of a `u32` field of `Stats`.
        let (packets, bytes) = unsafe {
            (
                read_once::<{ offset_of!(Stats, packets) }>(&stats),
                read_once::<{ offset_of!(Stats, bytes) }>(&stats),
            )
        };
        pr_info!("received {} packets, {} bytes\n", packets, bytes);
        Ok(RustAsmConst { stats })
    }
}

impl Drop for RustAsmConst {
    fn drop(&mut self) {
        // SAFETY: `errors` is a `u32` field of `Stats`.
        let errors = unsafe { read_once::<{ offset_of!(Stats, errors) }>(&self.stats) };
        pr_info!("errors at exit: {}\n", errors);
        pr_info!("Rust asm_const sample (exit)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_counters_read_by_offset() {
        let log = kernel::host::load_unload::<RustAsmConst>(&THIS_MODULE).unwrap();
        assert_eq!(
            log.as_str(),
            "[info] rust_asm_const: Rust asm_const sample (init)\n\
             [info] rust_asm_const: received 3 packets, 1500 bytes\n\
             [info] rust_asm_const: errors at exit: 1\n\
             [info] rust_asm_const: Rust asm_const sample (exit)\n"
        );
    }
}
