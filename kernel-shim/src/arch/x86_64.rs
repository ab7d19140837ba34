// SPDX-License-Identifier: GPL-2.0
//! x86-64: a 5-byte NOP that becomes `jmp rel32`, and loads with a 32-bit displacement.
//!
//! `arch/x86/include/asm/jump_label.h` has two forms of `ARCH_STATIC_BRANCH_ASM`, the macro
//! the kernel's Rust side expands too:
//!
//! - with `CONFIG_HAVE_JUMP_LABEL_HACK`, as a normal x86-64 build has it (objtool runs on
//!   every object): the site is `1: jmp label # objtool NOPs this`, which the assembler makes
//!   a 2- or 5-byte jump, and the entry's key field is `key + 2`; objtool then writes a NOP of
//!   the jump's size over the site, and `arch/x86/kernel/jump_label.c` patches either size;
//! - without it: the site is `BYTES_NOP5` (`0f 1f 44 00 00`, `nopl 0x0(%rax,%rax,1)`) and the
//!   key field is `key`.
//!
//! The shim models only the second form: a host program has no objtool pass to turn the first
//! into NOPs. Enabling writes `e9 rel32` over the site, and the `__jump_table` entry is
//! `.long 1b - .`, `.long label - .`, `.quad key - .`, eight-byte aligned. The kernel's `asm!` wrapper (`rust/kernel/lib.rs`) adds `options(att_syntax)` on
//! x86, as the C headers are written in AT&T syntax; the static branch below does the same,
//! which also keeps the label `1:` from reading as the binary number `1b` in Intel syntax.

/// C's plain `char` in this architecture's psABI: signed, as `core::ffi::c_char` on Linux;
/// [`crate::ffi::by_hand`] takes it from here.
#[allow(non_camel_case_types)]
pub type c_char = i8;

/// The size of the instruction at a static-branch site, `JUMP_LABEL_NOP_SIZE`.
pub const JUMP_LABEL_NOP_SIZE: usize = 5;

/// The NOP at every disabled site: `BYTES_NOP5`, one instruction, so no CPU can stop inside it.
pub const NOP: [u8; JUMP_LABEL_NOP_SIZE] = [0x0f, 0x1f, 0x44, 0x00, 0x00];

/// The `jmp rel32` from a site at `code` to `target`, or `None` if `target` is out of reach.
///
/// `rel32` counts from the end of the five-byte instruction, as in the kernel's
/// `__jump_label_patch()`.
pub fn jump(code: usize, target: usize) -> Option<[u8; JUMP_LABEL_NOP_SIZE]> {
    let next = code.wrapping_add(JUMP_LABEL_NOP_SIZE);
    let offset = i32::try_from(target.wrapping_sub(next) as isize).ok()?;
    let [b0, b1, b2, b3] = offset.to_le_bytes();
    Some([0xe9, b0, b1, b2, b3])
}

/// `arch_static_branch()`: the NOP at the site and the `__jump_table` entry for it.
///
/// Expands to `true` only when the site has been patched into a jump to the label. The `R`
/// section flag (`SHF_GNU_RETAIN`) keeps the entries when a host program is linked with
/// `--gc-sections`; the kernel's linker script keeps them with `KEEP(*(__jump_table))`.
#[cfg(all(target_arch = "x86_64", kshim_has_asm_goto))]
#[doc(hidden)]
#[macro_export]
macro_rules! __arch_static_branch {
    ($key:path, $offset:expr, $branch:expr) => {
        'arch_static_branch: {
            // SAFETY: the assembly is a NOP, or once patched a jump to the label, which Rust
            // sees; it touches no register, memory, stack or flag. The section it adds is
            // data that only the jump label code reads.
            unsafe {
                ::core::arch::asm!(
                    "1: .byte 0x0f, 0x1f, 0x44, 0x00, 0x00",
                    ".pushsection __jump_table, \"awR\"",
                    ".balign 8",
                    ".long 1b - .",
                    ".long {l_yes} - .",
                    ".quad {symb} + {off} + {branch} - .",
                    ".popsection",
                    symb = sym $key,
                    off = const $offset,
                    branch = const $crate::jump_label::bool_to_int($branch),
                    l_yes = label {
                        break 'arch_static_branch true;
                    },
                    options(att_syntax, nomem, nostack, preserves_flags),
                );
            }
            false
        }
    };
}

/// Rejects, when it is instantiated, an offset that no x86-64 displacement can hold.
#[cfg(all(target_arch = "x86_64", kshim_has_asm_const))]
struct Displacement<const OFFSET: usize>;

#[cfg(all(target_arch = "x86_64", kshim_has_asm_const))]
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
#[cfg(all(target_arch = "x86_64", kshim_has_asm_const))]
pub mod const_operand {
    /// Reads the `u32` at `base + OFFSET` with one `mov eax, dword ptr [base + OFFSET]`.
    ///
    /// # Safety
    ///
    /// As for [`crate::asm::read_once_u32_at`].
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
    /// As for [`crate::asm::read_once_u32_at`].
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

    #[test]
    fn jumps_count_from_the_end_of_the_instruction() {
        // As llvm-mc assembles it: `jmp .+16` is `e9 0b 00 00 00`.
        assert_eq!(jump(0x1000, 0x1010), Some([0xe9, 0x0b, 0, 0, 0]));
        // A jump to the site itself goes back five bytes.
        assert_eq!(jump(0x1000, 0x1000), Some([0xe9, 0xfb, 0xff, 0xff, 0xff]));
        assert_eq!(jump(0, 0x8000_0004), Some([0xe9, 0xff, 0xff, 0xff, 0x7f]));
        assert_eq!(jump(0, 0x8000_0005), None, "beyond a signed 32-bit offset");
    }
}
