// SPDX-License-Identifier: GPL-2.0
//! `_` for a const generic argument: a register field's width taken from the field.
//!
//! `generic_arg_infer` (stable since Rust 1.89.0, tracking issue #85077) lets `_` stand for a
//! const generic argument, inferred as a type argument always was. The kernel's `Bounded<T, N>`
//! (`rust/kernel/num/bounded.rs`, the shim's [`kernel::num::Bounded`]) carries bit widths as
//! const arguments, and a shift names the width of its result: `shr::<SHIFT, RES>()`. That
//! width is the one the destination field already has, so nova-core writes
//! `Bounded::<u64, _>::from(addr).shr::<FLUSH_SYSMEM_ADDR_SHIFT_HI, _>()`
//! (`drivers/gpu/nova-core/fb/hal/ga100.rs`), and 7.2 puts the feature in
//! `rust_allowed_features` for drivers like it as well as in `rust/kernel/lib.rs`.
//!
//! The stable replacement writes the width out, `shr::<FLUSH_SYSMEM_ADDR_SHIFT_HI, 24>()`: the
//! same instance of `shr`, so the same code, and nothing to pay at run time; the cost is that
//! the field's width is written twice, and widening the field means editing the call too (the
//! compiler refuses a call left behind, so the cost is the edit, not a bug).
//!
//! This module programs a GPU's system-memory flush page as nova-core does: the address's bits
//! 40 to 63 go to the `_HI` register's 24-bit field, bits 8 to 39 to the low register.

// No `#![feature]`: in kernel mode Kbuild's `-Zcrate-attr='feature(...)'` turns
// `generic_arg_infer` on, which lets `_` through on compilers before 1.89.0.

use kernel::num::Bounded;
use kernel::prelude::*;

module! {
    type: RustGenericArgInfer,
    name: "rust_generic_arg_infer",
    authors: ["Rust for Linux Contributors"],
    description: "Rust generic_arg_infer sample",
    license: "GPL",
}

/// Shift applied to the address before it is written into `NV_PFB_NISO_FLUSH_SYSMEM_ADDR_HI`.
const FLUSH_SYSMEM_ADDR_SHIFT_HI: u32 = 40;
/// Shift applied to the address before it is written into `NV_PFB_NISO_FLUSH_SYSMEM_ADDR`.
const FLUSH_SYSMEM_ADDR_SHIFT: u32 = 8;

/// `NV_PFB_NISO_FLUSH_SYSMEM_ADDR_HI`: its one field, address bits 40 to 63.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FlushSysmemAddrHi {
    adr_63_40: Bounded<24>,
}

/// The gated form: the field's width is inferred from `adr_63_40`'s type.
#[cfg(kshim_has_generic_arg_infer)]
fn flush_addr_hi_inferred(addr: u64) -> FlushSysmemAddrHi {
    FlushSysmemAddrHi {
        adr_63_40: Bounded::<_>::from(addr).shr::<FLUSH_SYSMEM_ADDR_SHIFT_HI, _>(),
    }
}

/// The stable form: the field's width written out again.
#[cfg_attr(kshim_has_generic_arg_infer, allow(dead_code))]
fn flush_addr_hi_written_out(addr: u64) -> FlushSysmemAddrHi {
    FlushSysmemAddrHi {
        adr_63_40: Bounded::<64>::from(addr).shr::<FLUSH_SYSMEM_ADDR_SHIFT_HI, 24>(),
    }
}

#[cfg(kshim_has_generic_arg_infer)]
use flush_addr_hi_inferred as flush_addr_hi;
#[cfg(not(kshim_has_generic_arg_infer))]
use flush_addr_hi_written_out as flush_addr_hi;

/// The two register values for the flush page at `addr`, high first, as the driver writes them.
fn sysmem_flush_registers(addr: u64) -> (FlushSysmemAddrHi, u32) {
    // `as u32` strips the bits that went to the `_HI` register.
    (
        flush_addr_hi(addr),
        (addr >> FLUSH_SYSMEM_ADDR_SHIFT) as u32,
    )
}

struct RustGenericArgInfer;

impl kernel::Module for RustGenericArgInfer {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust generic_arg_infer sample (init)\n");
        for addr in [0x0000_0001_2345_6700, 0x00ab_cdef_0123_4500] {
            let (hi, lo) = sysmem_flush_registers(addr);
            pr_info!(
                "flush page {addr:#018x}: ADDR_HI.adr_63_40 = {:#x}, ADDR.adr_39_08 = {lo:#010x}\n",
                hi.adr_63_40.get()
            );
        }
        Ok(RustGenericArgInfer)
    }
}

impl Drop for RustGenericArgInfer {
    fn drop(&mut self) {
        pr_info!("Rust generic_arg_infer sample (exit)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_the_flush_page() {
        let log = kernel::host::load_unload::<RustGenericArgInfer>(&THIS_MODULE).unwrap();
        assert_eq!(
            log.as_str(),
            "[info] rust_generic_arg_infer: Rust generic_arg_infer sample (init)\n\
             [info] rust_generic_arg_infer: flush page 0x0000000123456700: ADDR_HI.adr_63_40 = 0x0, ADDR.adr_39_08 = 0x01234567\n\
             [info] rust_generic_arg_infer: flush page 0x00abcdef01234500: ADDR_HI.adr_63_40 = 0xabcd, ADDR.adr_39_08 = 0xef012345\n\
             [info] rust_generic_arg_infer: Rust generic_arg_infer sample (exit)\n"
        );
    }

    /// Nothing differs at run time: `_` becomes 24 while type checking, so both forms call
    /// `Bounded::<64>::shr::<40, 24>`. The test checks that they agree on addresses that set
    /// each bit of the field, and the field's ends.
    #[cfg(kshim_has_generic_arg_infer)]
    #[test]
    fn gated_matches_replacement_generic_arg_infer() {
        let addresses = (0..64)
            .map(|bit| 1u64 << bit)
            .chain([0, u64::MAX, 0xffff_ff00_0000_0000]);
        for addr in addresses {
            assert_eq!(
                flush_addr_hi_inferred(addr),
                flush_addr_hi_written_out(addr),
                "{addr:#x}"
            );
        }
        assert_eq!(flush_addr_hi_inferred(u64::MAX).adr_63_40.get(), 0xff_ffff);
    }
}
