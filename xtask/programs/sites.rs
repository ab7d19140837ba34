// SPDX-License-Identifier: GPL-2.0
//! A sample of static-branch sites, compiled to an object for each target and mode and read
//! back by the xtask's `jump_table` checker.
//!
//! Every `static_branch_unlikely!` use sits directly in its own `#[no_mangle]` function that
//! nothing here calls, so inlining cannot copy a site: the object holds exactly one
//! `__jump_table` entry per use where the shim compiles the `asm goto` form, and none where it
//! loads and branches instead. The keys are `#[no_mangle]` too, so the checker finds them by
//! name; `KSHIM_TRACEPOINT` keeps its key behind another field, so its entries carry the
//! `offset_of!` that the `const` operand adds. The `read_once_u32_at` calls make the compiler
//! assemble the architecture's `const`-operand load and its register replacement as well.
//! The xtask's unit test counts the macro's uses in this file, so keep each on one line.

#![no_std]

use core::mem::offset_of;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::jump_label::StaticKey;

/// A key with two sites.
#[no_mangle]
pub static KSHIM_TRACE_KEY: StaticKey = StaticKey::INIT;

/// A key with one site.
#[no_mangle]
pub static KSHIM_DEBUG_KEY: StaticKey = StaticKey::INIT;

/// A tracepoint whose key is not its first field, like the kernel's `struct tracepoint`.
#[repr(C)]
pub struct Tracepoint {
    /// What the tracepoint counts, so the key sits at a non-zero offset.
    pub hits: AtomicU32,
    /// The key that enables the tracepoint.
    pub key: StaticKey,
}

/// A tracepoint with one site, tested through its `key` field.
#[no_mangle]
pub static KSHIM_TRACEPOINT: Tracepoint = Tracepoint {
    hits: AtomicU32::new(0),
    key: StaticKey::INIT,
};

static TRACED: AtomicU32 = AtomicU32::new(0);

/// The first site of `KSHIM_TRACE_KEY`.
#[no_mangle]
pub fn kshim_trace_receive(length: u32) -> u32 {
    if kernel::static_branch_unlikely!(KSHIM_TRACE_KEY) {
        TRACED.fetch_add(length, Ordering::Relaxed);
    }
    length.wrapping_mul(3)
}

/// The second site of `KSHIM_TRACE_KEY`.
#[no_mangle]
pub fn kshim_trace_send(length: u32) -> u32 {
    if kernel::static_branch_unlikely!(KSHIM_TRACE_KEY) {
        TRACED.fetch_sub(length, Ordering::Relaxed);
    }
    length.wrapping_add(7)
}

/// The site of `KSHIM_DEBUG_KEY`.
#[no_mangle]
pub fn kshim_debug_check(value: u32) -> u32 {
    if kernel::static_branch_unlikely!(KSHIM_DEBUG_KEY) {
        TRACED.store(value, Ordering::Relaxed);
    }
    value ^ 0x5a
}

/// The site of `KSHIM_TRACEPOINT`'s key.
#[no_mangle]
pub fn kshim_tracepoint_hit() -> u32 {
    if kernel::static_branch_unlikely!(KSHIM_TRACEPOINT, Tracepoint, key) {
        KSHIM_TRACEPOINT.hits.fetch_add(1, Ordering::Relaxed);
    }
    TRACED.load(Ordering::Relaxed)
}

/// A register block for the `const`-operand loads.
#[repr(C)]
pub struct Registers {
    /// At offset 0.
    pub status: u32,
    /// At offset 4.
    pub control: u32,
    /// At offset 8 + 4 * 64.
    pub doorbell: [u32; 65],
}

/// Reads three fields with `read_once_u32_at`, whichever form the shim compiles.
///
/// # Safety
///
/// `registers` must point to a live, aligned `Registers`.
#[no_mangle]
pub unsafe fn kshim_read_registers(registers: *const Registers) -> u32 {
    let base = registers.cast::<u8>();
    // SAFETY: the caller passes a live, aligned `Registers`; each offset is a `u32` field's.
    unsafe {
        kernel::asm::read_once_u32_at::<{ offset_of!(Registers, status) }>(base)
            ^ kernel::asm::read_once_u32_at::<{ offset_of!(Registers, control) }>(base)
            ^ kernel::asm::read_once_u32_at::<{ offset_of!(Registers, doorbell) + 4 * 64 }>(base)
    }
}

/// Reads a field with the register-operand replacement, which every mode has.
///
/// # Safety
///
/// `registers` must point to a live, aligned `Registers`.
#[cfg(kshim_have_arch)]
#[no_mangle]
pub unsafe fn kshim_read_control(registers: *const Registers) -> u32 {
    // SAFETY: the caller passes a live, aligned `Registers`; the offset is a `u32` field's.
    unsafe {
        kernel::asm::register_operand::read_once_u32_at::<{ offset_of!(Registers, control) }>(
            registers.cast(),
        )
    }
}
