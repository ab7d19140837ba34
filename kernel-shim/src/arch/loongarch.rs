// SPDX-License-Identifier: GPL-2.0
//! loongarch64: a 4-byte `nop` that becomes `b label`, and `ld.w` with a 12-bit offset.
//!
//! As `arch/loongarch/include/asm/jump_label.h` and `arch/loongarch/kernel/jump_label.c`: the
//! site is `nop` (`andi $zero, $zero, 0`, `03400000`), enabling writes the `b` that
//! `larch_insn_gen_b()` makes, with a 26-bit word offset split into two fields, and the
//! `__jump_table` entry is `.long 1b - ., label - .` and `.quad key - .`, eight-byte aligned.

/// C's plain `char` in this architecture's psABI: signed, as `core::ffi::c_char` on Linux;
/// [`crate::ffi::by_hand`] takes it from here.
#[allow(non_camel_case_types)]
pub type c_char = i8;

/// The size of the instruction at a static-branch site, `JUMP_LABEL_NOP_SIZE`.
pub const JUMP_LABEL_NOP_SIZE: usize = 4;

/// The NOP at every disabled site, `larch_insn_gen_nop()`.
pub const NOP: [u8; JUMP_LABEL_NOP_SIZE] = 0x0340_0000_u32.to_le_bytes();

/// The `b` from a site at `code` to `target`, or `None` if `target` is out of reach.
///
/// The word offset's low 16 bits go to bits 10 to 25 and its high 10 bits to bits 0 to 9.
pub fn jump(code: usize, target: usize) -> Option<[u8; JUMP_LABEL_NOP_SIZE]> {
    let offset = target.wrapping_sub(code) as isize;
    if offset % 4 != 0 || !(-(1 << 27)..1 << 27).contains(&offset) {
        return None;
    }
    let words = (offset >> 2) as u32;
    let b = 0x5000_0000 | ((words & 0xffff) << 10) | ((words >> 16) & 0x3ff);
    Some(b.to_le_bytes())
}

/// `arch_static_branch()`: the NOP at the site and the `__jump_table` entry for it.
///
/// Expands to `true` only when the site has been patched into a branch to the label. The `R`
/// flag keeps the section in a host program linked with `--gc-sections`, as the kernel's
/// linker script does with `KEEP(*(__jump_table))`.
#[cfg(all(target_arch = "loongarch64", kshim_has_asm_goto))]
#[doc(hidden)]
#[macro_export]
macro_rules! __arch_static_branch {
    ($key:path, $offset:expr, $branch:expr) => {
        'arch_static_branch: {
            // SAFETY: the assembly is a NOP, or once patched a branch to the label, which Rust
            // sees; it touches no register, memory or stack. The section it adds is data that
            // only the jump label code reads.
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

/// Rejects, when it is instantiated, an offset that `ld.w rd, rj, si12` cannot encode.
#[cfg(all(target_arch = "loongarch64", kshim_has_asm_const))]
struct Displacement<const OFFSET: usize>;

#[cfg(all(target_arch = "loongarch64", kshim_has_asm_const))]
impl<const OFFSET: usize> Displacement<OFFSET> {
    /// Evaluated at compile time for each `OFFSET` used, so an unencodable one fails the build.
    const FITS: () = assert!(OFFSET <= 2047, "`ld.w` takes a signed 12-bit offset");
}

/// The `asm_const` form: the offset is a `const` operand, the load's immediate.
#[cfg(all(target_arch = "loongarch64", kshim_has_asm_const))]
pub mod const_operand {
    /// Reads the `u32` at `base + OFFSET` with one `ld.w $a0, $a1, OFFSET`.
    ///
    /// `OFFSET` must be at most 2047, or the build fails.
    ///
    /// # Safety
    ///
    /// As for [`crate::asm::read_once_u32_at`].
    #[inline(always)]
    pub unsafe fn read_once_u32_at<const OFFSET: usize>(base: *const u8) -> u32 {
        let () = super::Displacement::<OFFSET>::FITS;
        let value: u32;
        // SAFETY: the caller guarantees that the four bytes at `base + OFFSET` are readable and
        // aligned; the assembly reads only them and writes no memory and no stack.
        unsafe {
            core::arch::asm!(
                "ld.w {value}, {base}, {offset}",
                value = lateout(reg) value,
                base = in(reg) base,
                offset = const OFFSET,
                options(nostack, readonly, preserves_flags),
            );
        }
        value
    }
}

/// The stable replacement: the offset travels in a register, an indexed `ldx.w`.
#[cfg(target_arch = "loongarch64")]
pub mod register_operand {
    /// Reads the `u32` at `base + OFFSET` with one `ldx.w $a0, $a1, $a2`.
    ///
    /// # Safety
    ///
    /// As for [`crate::asm::read_once_u32_at`].
    #[inline(always)]
    pub unsafe fn read_once_u32_at<const OFFSET: usize>(base: *const u8) -> u32 {
        let value: u32;
        // SAFETY: the caller guarantees that the four bytes at `base + OFFSET` are readable and
        // aligned; the assembly reads only them and writes no memory and no stack.
        unsafe {
            core::arch::asm!(
                "ldx.w {value}, {base}, {offset}",
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
    fn branches_split_the_word_offset_in_two_fields() {
        // Encodings as llvm-mc assembles `b .+8`, `b .-4` and `b .+0x40000`.
        assert_eq!(jump(0x1000, 0x1008), Some(0x5000_0800_u32.to_le_bytes()));
        assert_eq!(jump(0x1000, 0x0ffc), Some(0x53ff_ffff_u32.to_le_bytes()));
        assert_eq!(jump(0, 0x4_0000), Some(0x5000_0001_u32.to_le_bytes()));
        assert_eq!(jump(0, 1 << 27), None, "beyond 26 signed bits of words");
        assert_eq!(NOP, [0, 0, 0x40, 0x03]);
    }
}
