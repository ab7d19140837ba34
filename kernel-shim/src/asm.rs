// SPDX-License-Identifier: GPL-2.0
//! Architecture helpers in inline assembly that embed compile-time constants.
//!
//! The kernel's assembly often needs a number that Rust computes at compile time: the
//! `jump_label` code passes `offset_of!(type, key)` and the branch polarity to its `asm!`, and
//! `BUG()`/`WARN()` entries carry the line number and flags. A `const` operand
//! (`off = const N`, `asm_const`, stable since Rust 1.82.0, tracking issue #93332) pastes such a
//! value into the assembly text, where it becomes an immediate or a displacement.
//!
//! [`read_once_u32_at`] is the smallest helper of that kind: one load whose displacement is
//! the field offset, like the kernel's `READ_ONCE(ptr->field)`. Its `const_operand` form puts
//! the offset into the instruction; the stable replacement, `register_operand`, passes it in
//! a register, which costs that register and a move to fill it (`[base + index]` addressing
//! instead of `[base + displacement]`, and on RISC-V, which has no indexed load, an `add`
//! too). A literal could also be spliced into the template with `concat!`/`stringify!`, but
//! only a literal: not `offset_of!(...)`, nor a const generic. Both forms exist for x86-64,
//! arm64, riscv64 and loongarch64 (in [`crate::arch`]); other architectures use a volatile
//! read.

/// Reads the `u32` at `base + OFFSET` with exactly one load, like `READ_ONCE()` of a field.
///
/// On the four architectures the shim knows, this is a single load instruction that the
/// compiler can neither merge, repeat nor drop; the offset is usually an `offset_of!` result.
/// An offset that the architecture's load cannot encode as an immediate fails the build (above
/// 2047 bytes on RISC-V and LoongArch, above 16380 or not a multiple of 4 on arm64, from 2 GiB
/// on x86-64, whose displacement ends at 2^31 - 1); such a field is read with
/// [`register_operand`] instead.
///
/// # Safety
///
/// `base + OFFSET` must be within one allocation, aligned to 4 bytes and valid for reading 4
/// bytes, and `OFFSET` must not exceed `isize::MAX`.
///
/// # Examples
///
/// ```
/// use core::mem::offset_of;
/// use kernel::asm::read_once_u32_at;
///
/// #[repr(C)]
/// struct Registers {
///     status: u32,
///     control: u32,
/// }
///
/// let registers = Registers { status: 1, control: 0x80 };
/// let base: *const Registers = &registers;
/// // SAFETY: `control` is a `u32` field of a live, aligned `Registers`.
/// let control = unsafe { read_once_u32_at::<{ offset_of!(Registers, control) }>(base.cast()) };
/// assert_eq!(control, 0x80);
/// ```
#[inline(always)]
pub unsafe fn read_once_u32_at<const OFFSET: usize>(base: *const u8) -> u32 {
    #[cfg(all(kshim_have_arch, kshim_has_asm_const))]
    {
        // SAFETY: the caller's guarantees are this function's own.
        unsafe { const_operand::read_once_u32_at::<OFFSET>(base) }
    }
    #[cfg(all(kshim_have_arch, not(kshim_has_asm_const)))]
    {
        // SAFETY: the caller's guarantees are this function's own.
        unsafe { register_operand::read_once_u32_at::<OFFSET>(base) }
    }
    #[cfg(not(kshim_have_arch))]
    {
        // SAFETY: the caller guarantees that `base + OFFSET` is in bounds, aligned and
        // readable; a volatile read is performed exactly once.
        unsafe { core::ptr::read_volatile(base.add(OFFSET).cast::<u32>()) }
    }
}

/// The `asm_const` form for the architecture being built for: the offset is an immediate.
#[cfg(all(kshim_have_arch, kshim_has_asm_const))]
pub use crate::arch::current::const_operand;

/// The stable replacement for the architecture being built for: the offset is in a register.
#[cfg(kshim_have_arch)]
pub use crate::arch::current::register_operand;

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::offset_of;

    /// A C-layout block whose fields sit at offsets 0, 4, 8 and 4096 + 12.
    #[repr(C)]
    struct Device {
        status: u32,
        control: u32,
        irq: u32,
        padding: [u32; 1024],
        doorbell: u32,
    }

    fn device() -> Device {
        let mut padding = [0; 1024];
        for (index, word) in padding.iter_mut().enumerate() {
            *word = 0x5a5a_0000 | index as u32;
        }
        Device {
            status: 0xdead_beef,
            control: 1 << 31,
            irq: 17,
            padding,
            doorbell: u32::MAX,
        }
    }

    #[test]
    fn reads_each_field_at_its_offset() {
        let device = device();
        let base = (&device as *const Device).cast::<u8>();
        // SAFETY: every offset below is that of a `u32` field of the live, aligned `device`.
        let values = unsafe {
            [
                read_once_u32_at::<{ offset_of!(Device, status) }>(base),
                read_once_u32_at::<{ offset_of!(Device, control) }>(base),
                read_once_u32_at::<{ offset_of!(Device, irq) }>(base),
                read_once_u32_at::<{ offset_of!(Device, doorbell) }>(base),
            ]
        };
        assert_eq!(values, [0xdead_beef, 1 << 31, 17, u32::MAX]);
    }

    #[cfg(all(target_arch = "x86_64", kshim_has_asm_const))]
    #[test]
    fn gated_matches_replacement_asm_const() {
        let device = device();
        let base = (&device as *const Device).cast::<u8>();
        macro_rules! both_forms {
            ($offset:expr) => {
                // SAFETY: `$offset` is that of a `u32` in the live, aligned `device`.
                unsafe {
                    [
                        const_operand::read_once_u32_at::<{ $offset }>(base),
                        register_operand::read_once_u32_at::<{ $offset }>(base),
                    ]
                }
            };
        }
        let pairs = [
            (both_forms!(offset_of!(Device, status)), device.status),
            (both_forms!(offset_of!(Device, control)), device.control),
            (both_forms!(offset_of!(Device, irq)), device.irq),
            (both_forms!(offset_of!(Device, padding)), device.padding[0]),
            (
                both_forms!(offset_of!(Device, padding) + 4 * 513),
                device.padding[513],
            ),
            (both_forms!(offset_of!(Device, doorbell)), device.doorbell),
        ];
        for ([gated, replacement], expected) in pairs {
            assert_eq!(gated, expected);
            assert_eq!(replacement, expected);
        }
        // The data is not uniform, so a load from a wrong offset could not pass by accident.
        let distinct: [u32; 6] = [
            device.status,
            device.control,
            device.irq,
            device.padding[0],
            device.padding[513],
            device.doorbell,
        ];
        for (index, value) in distinct.iter().enumerate() {
            assert!(!distinct[index + 1..].contains(value));
        }
    }
}
