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
//! a register, which costs that register and a `mov` to fill it (`[base + index]` addressing
//! instead of `[base + displacement]`). A literal could also be spliced into the template with
//! `concat!`/`stringify!`, but only a literal: not `offset_of!(...)`, nor a const generic.
//! Other architectures use a volatile read.

/// Reads the `u32` at `base + OFFSET` with exactly one load, like `READ_ONCE()` of a field.
///
/// On x86-64 this is a single `mov` that the compiler can neither merge, repeat nor drop; the
/// offset is usually an `offset_of!` result.
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
    #[cfg(all(target_arch = "x86_64", any(kshim_kernel_mode, kshim_stable_asm_const)))]
    {
        // SAFETY: the caller's guarantees are this function's own.
        unsafe { const_operand::read_once_u32_at::<OFFSET>(base) }
    }
    #[cfg(all(
        target_arch = "x86_64",
        not(any(kshim_kernel_mode, kshim_stable_asm_const))
    ))]
    {
        // SAFETY: the caller's guarantees are this function's own.
        unsafe { register_operand::read_once_u32_at::<OFFSET>(base) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        // SAFETY: the caller guarantees that `base + OFFSET` is in bounds, aligned and
        // readable; a volatile read is performed exactly once.
        unsafe { core::ptr::read_volatile(base.add(OFFSET).cast::<u32>()) }
    }
}

/// Rejects, when it is instantiated, an offset that no x86-64 displacement can hold.
#[cfg(all(target_arch = "x86_64", any(kshim_kernel_mode, kshim_stable_asm_const)))]
struct Displacement<const OFFSET: usize>;

#[cfg(all(target_arch = "x86_64", any(kshim_kernel_mode, kshim_stable_asm_const)))]
impl<const OFFSET: usize> Displacement<OFFSET> {
    /// Evaluated at compile time for each `OFFSET` used, so a too-large one fails the build.
    ///
    /// An associated `const` rather than a `const { }` block, which Rust 1.78.0 lacks.
    const FITS: () = assert!(
        OFFSET <= i32::MAX as usize,
        "an x86-64 displacement is a signed 32-bit number"
    );
}

/// The `asm_const` form: the offset is a `const` operand, a displacement in the instruction.
///
/// The `const` operand is input to the `asm!` macro, which is not expanded while the module is
/// configured out, so older compilers accept this file as it is (Rust 1.63.0 does).
#[cfg(all(target_arch = "x86_64", any(kshim_kernel_mode, kshim_stable_asm_const)))]
pub mod const_operand {
    /// Reads the `u32` at `base + OFFSET` with one `mov eax, dword ptr [base + OFFSET]`.
    ///
    /// # Safety
    ///
    /// As for [`super::read_once_u32_at`].
    #[inline(always)]
    pub unsafe fn read_once_u32_at<const OFFSET: usize>(base: *const u8) -> u32 {
        // Naming the unit `const` is what makes the compiler evaluate it for this `OFFSET`.
        let () = super::Displacement::<OFFSET>::FITS;
        let value: u32;
        // SAFETY: the caller guarantees that the four bytes at `base + OFFSET` are readable and
        // aligned; the assembly reads only them, writes no memory, no stack and no flags.
        unsafe {
            core::arch::asm!(
                "mov {value:e}, dword ptr [{base} + {offset}]",
                value = lateout(reg) value,
                base = in(reg) base,
                offset = const OFFSET,
                options(nostack, readonly, preserves_flags),
            );
        }
        value
    }
}

/// The stable replacement: the offset travels in a register, an index in the address.
#[cfg(target_arch = "x86_64")]
pub mod register_operand {
    /// Reads the `u32` at `base + OFFSET` with one `mov eax, dword ptr [base + index]`.
    ///
    /// # Safety
    ///
    /// As for [`super::read_once_u32_at`].
    #[inline(always)]
    pub unsafe fn read_once_u32_at<const OFFSET: usize>(base: *const u8) -> u32 {
        let value: u32;
        // SAFETY: the caller guarantees that the four bytes at `base + OFFSET` are readable and
        // aligned; the assembly reads only them, writes no memory, no stack and no flags.
        unsafe {
            core::arch::asm!(
                "mov {value:e}, dword ptr [{base} + {offset}]",
                value = lateout(reg) value,
                base = in(reg) base,
                offset = in(reg) OFFSET,
                options(nostack, readonly, preserves_flags),
            );
        }
        value
    }
}

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

    #[cfg(all(target_arch = "x86_64", any(kshim_kernel_mode, kshim_stable_asm_const)))]
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
