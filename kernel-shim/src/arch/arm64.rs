// SPDX-License-Identifier: GPL-2.0
//! arm64: a 4-byte `nop` that becomes `b label`, and `ldr` with a scaled immediate offset.
//!
//! As `arch/arm64/include/asm/jump_label.h` and `arch/arm64/kernel/jump_label.c`: the site is
//! the architected `nop` (`d503201f`), enabling writes a `b` with a 26-bit word offset
//! (`aarch64_insn_gen_branch_imm()`), and the `__jump_table` entry is
//! `.long 1b - ., label - .` and `.quad key - .`, eight-byte aligned. A real arm64 kernel also
//! synchronizes the instruction cache after the write (`aarch64_insn_patch_text_nosync()`).

/// C's plain `char` in this architecture's psABI: unsigned, as `core::ffi::c_char` on Linux;
/// [`crate::ffi::by_hand`] takes it from here.
#[allow(non_camel_case_types)]
pub type c_char = u8;

/// The size of the instruction at a static-branch site, `JUMP_LABEL_NOP_SIZE`.
pub const JUMP_LABEL_NOP_SIZE: usize = 4;

/// The NOP at every disabled site, `aarch64_insn_gen_nop()`.
pub const NOP: [u8; JUMP_LABEL_NOP_SIZE] = 0xd503_201f_u32.to_le_bytes();

/// The `b` from a site at `code` to `target`, or `None` if `target` is out of reach.
///
/// The offset is in words and must fit 26 signed bits: 128 MiB either way.
pub fn jump(code: usize, target: usize) -> Option<[u8; JUMP_LABEL_NOP_SIZE]> {
    let offset = target.wrapping_sub(code) as isize;
    if offset % 4 != 0 || !(-(1 << 27)..1 << 27).contains(&offset) {
        return None;
    }
    let imm26 = ((offset >> 2) as u32) & 0x03ff_ffff;
    Some((0x1400_0000 | imm26).to_le_bytes())
}

/// `arch_static_branch()`: the NOP at the site and the `__jump_table` entry for it.
///
/// Expands to `true` only when the site has been patched into a branch to the label. The `R`
/// flag keeps the section in a host program linked with `--gc-sections`, as the kernel's
/// linker script does with `KEEP(*(__jump_table))`.
#[cfg(all(target_arch = "aarch64", kshim_has_asm_goto))]
#[doc(hidden)]
#[macro_export]
macro_rules! __arch_static_branch {
    ($key:path, $offset:expr, $branch:expr) => {
        'arch_static_branch: {
            // SAFETY: the assembly is a NOP, or once patched a branch to the label, which Rust
            // sees; it touches no register, memory, stack or flag. The section it adds is
            // data that only the jump label code reads.
            unsafe {
                ::core::arch::asm!(
                    "1: nop",
                    ".pushsection __jump_table, \"awR\"",
                    ".align 3",
                    ".long 1b - ., {l_yes} - .",
                    ".quad {symb} + {off} + {branch} - .",
                    ".popsection",
                    symb = sym $key,
                    off = const $offset,
                    branch = const $crate::jump_label::bool_to_int($branch),
                    l_yes = label {
                        break 'arch_static_branch true;
                    },
                    options(nomem, nostack, preserves_flags),
                );
            }
            false
        }
    };
}

/// Rejects, when it is instantiated, an offset that `ldr w, [x, #imm]` cannot encode.
#[cfg(all(target_arch = "aarch64", kshim_has_asm_const))]
struct Displacement<const OFFSET: usize>;

#[cfg(all(target_arch = "aarch64", kshim_has_asm_const))]
impl<const OFFSET: usize> Displacement<OFFSET> {
    /// Evaluated at compile time for each `OFFSET` used, so an unencodable one fails the build.
    const FITS: () = assert!(
        OFFSET % 4 == 0 && OFFSET <= 4 * 4095,
        "a 32-bit `ldr` takes an unsigned 12-bit offset in words"
    );
}

/// The `asm_const` form: the offset is a `const` operand, the load's immediate.
#[cfg(all(target_arch = "aarch64", kshim_has_asm_const))]
pub mod const_operand {
    /// Reads the `u32` at `base + OFFSET` with one `ldr w0, [x1, #OFFSET]`.
    ///
    /// `OFFSET` must be a multiple of 4 no larger than 16380, or the build fails.
    ///
    /// # Safety
    ///
    /// As for [`crate::asm::read_once_u32_at`].
    #[inline(always)]
    pub unsafe fn read_once_u32_at<const OFFSET: usize>(base: *const u8) -> u32 {
        let () = super::Displacement::<OFFSET>::FITS;
        let value: u32;
        // SAFETY: the caller guarantees that the four bytes at `base + OFFSET` are readable and
        // aligned; the assembly reads only them, writes no memory, no stack and no flags.
        unsafe {
            core::arch::asm!(
                "ldr {value:w}, [{base}, #{offset}]",
                value = lateout(reg) value,
                base = in(reg) base,
                offset = const OFFSET,
                options(nostack, readonly, preserves_flags),
            );
        }
        value
    }
}

/// The stable replacement: the offset travels in a register, `[base, index]` addressing.
#[cfg(target_arch = "aarch64")]
pub mod register_operand {
    /// Reads the `u32` at `base + OFFSET` with one `ldr w0, [x1, x2]`.
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
                "ldr {value:w}, [{base}, {offset}]",
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
    fn branches_encode_a_signed_word_offset() {
        // `b .+8` and `b .-4` as llvm-mc assembles them, and the farthest forward `b`.
        assert_eq!(jump(0x1000, 0x1008), Some(0x1400_0002_u32.to_le_bytes()));
        assert_eq!(jump(0x1000, 0x0ffc), Some(0x17ff_ffff_u32.to_le_bytes()));
        assert_eq!(jump(0, (1 << 27) - 4), Some(0x15ff_ffff_u32.to_le_bytes()));
        assert_eq!(jump(0, 1 << 27), None, "beyond 26 signed bits of words");
        assert_eq!(jump(0, 2), None, "not a whole instruction");
        assert_eq!(NOP, [0x1f, 0x20, 0x03, 0xd5]);
    }
}
