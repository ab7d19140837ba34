// SPDX-License-Identifier: GPL-2.0
//! riscv64: a 4-byte `nop` that becomes `jal zero, label`, and `lw` with a 12-bit offset.
//!
//! As `arch/riscv/include/asm/jump_label.h` and `arch/riscv/kernel/jump_label.c`: the site is
//! `addi zero, zero, 0` (`00000013`), assembled under `.option norvc` so that it is never the
//! 2-byte compressed `c.nop` and a 4-byte `jal` fits over it, and under `.option norelax` so
//! that the linker does not shrink the code around it; enabling writes `jal zero` with a
//! 21-bit byte offset. The `__jump_table` entry is `.long 1b - ., label - .` and
//! `.dword key - .` (`RISCV_PTR`), aligned to `RISCV_LGPTR`.

/// C's plain `char` in this architecture's psABI: unsigned, as `core::ffi::c_char` on Linux;
/// [`crate::ffi::by_hand`] takes it from here.
#[allow(non_camel_case_types)]
pub type c_char = u8;

/// The size of the instruction at a static-branch site, `JUMP_LABEL_NOP_SIZE`.
pub const JUMP_LABEL_NOP_SIZE: usize = 4;

/// The NOP at every disabled site, `RISCV_INSN_NOP`.
pub const NOP: [u8; JUMP_LABEL_NOP_SIZE] = 0x0000_0013_u32.to_le_bytes();

/// The `jal zero` from a site at `code` to `target`, or `None` if `target` is out of reach.
///
/// The offset is even and fits 21 signed bits (1 MiB either way); its bits are scattered over
/// the instruction as the J-type format lays them out.
pub fn jump(code: usize, target: usize) -> Option<[u8; JUMP_LABEL_NOP_SIZE]> {
    let offset = target.wrapping_sub(code) as isize;
    if offset % 2 != 0 || !(-(1 << 20)..1 << 20).contains(&offset) {
        return None;
    }
    let offset = offset as u32;
    let jal_zero = 0x6f
        | (offset & 0x000f_f000)
        | ((offset & 0x0000_0800) << 9)
        | ((offset & 0x0000_07fe) << 20)
        | ((offset & 0x0010_0000) << 11);
    Some(jal_zero.to_le_bytes())
}

/// `arch_static_branch()`: the NOP at the site and the `__jump_table` entry for it.
///
/// Expands to `true` only when the site has been patched into a jump to the label. The `R`
/// flag keeps the section in a host program linked with `--gc-sections`, as the kernel's
/// linker script does with `KEEP(*(__jump_table))`.
#[cfg(all(target_arch = "riscv64", kshim_has_asm_goto))]
#[doc(hidden)]
#[macro_export]
macro_rules! __arch_static_branch {
    ($key:path, $offset:expr, $branch:expr) => {
        'arch_static_branch: {
            // SAFETY: the assembly is a NOP, or once patched a jump to the label, which Rust
            // sees; it touches no register, memory or stack. The section it adds is data that
            // only the jump label code reads.
            unsafe {
                ::core::arch::asm!(
                    ".align 2",
                    ".option push",
                    ".option norelax",
                    ".option norvc",
                    "1: nop",
                    ".option pop",
                    ".pushsection __jump_table, \"awR\"",
                    ".align 3",
                    ".long 1b - ., {l_yes} - .",
                    ".dword {symb} + {off} + {branch} - .",
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

/// Rejects, when it is instantiated, an offset that `lw rd, imm(rs)` cannot encode.
#[cfg(all(target_arch = "riscv64", kshim_has_asm_const))]
struct Displacement<const OFFSET: usize>;

#[cfg(all(target_arch = "riscv64", kshim_has_asm_const))]
impl<const OFFSET: usize> Displacement<OFFSET> {
    /// Evaluated at compile time for each `OFFSET` used, so an unencodable one fails the build.
    const FITS: () = assert!(OFFSET <= 2047, "a RISC-V load takes a signed 12-bit offset");
}

/// The `asm_const` form: the offset is a `const` operand, the load's immediate.
#[cfg(all(target_arch = "riscv64", kshim_has_asm_const))]
pub mod const_operand {
    /// Reads the `u32` at `base + OFFSET` with one `lw a0, OFFSET(a1)`.
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
                "lw {value}, {offset}({base})",
                value = lateout(reg) value,
                base = in(reg) base,
                offset = const OFFSET,
                options(nostack, readonly, preserves_flags),
            );
        }
        value
    }
}

/// The stable replacement: RISC-V has no register-indexed load, so it costs an `add` as well.
#[cfg(target_arch = "riscv64")]
pub mod register_operand {
    /// Reads the `u32` at `base + OFFSET` with `add a2, a1, a2` and `lw a0, 0(a2)`.
    ///
    /// # Safety
    ///
    /// As for [`crate::asm::read_once_u32_at`].
    #[inline(always)]
    pub unsafe fn read_once_u32_at<const OFFSET: usize>(base: *const u8) -> u32 {
        let value: u32;
        // SAFETY: the caller guarantees that the four bytes at `base + OFFSET` are readable and
        // aligned; the assembly reads only them and writes no memory and no stack, and the
        // scratch register is an output Rust allocated for it.
        unsafe {
            core::arch::asm!(
                "add {address}, {base}, {offset}",
                "lw {value}, 0({address})",
                value = lateout(reg) value,
                address = out(reg) _,
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
    fn jumps_scatter_the_offset_as_j_type() {
        // Encodings as llvm-mc assembles `j .+8`, `j .-4` and `j .+0x7fffe`.
        assert_eq!(jump(0x1000, 0x1008), Some(0x0080_006f_u32.to_le_bytes()));
        assert_eq!(jump(0x1000, 0x0ffc), Some(0xffdf_f06f_u32.to_le_bytes()));
        assert_eq!(jump(0, 0x7_fffe), Some(0x7ff7_f06f_u32.to_le_bytes()));
        assert_eq!(jump(0, 1 << 20), None, "beyond 21 signed bits");
        assert_eq!(jump(0, 3), None, "odd offsets do not exist");
        assert_eq!(NOP, [0x13, 0, 0, 0]);
    }
}
