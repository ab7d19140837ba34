// SPDX-License-Identifier: GPL-2.0
//! The per-architecture halves of static keys and `asm_const` loads, laid out as the kernel's `arch/`.
//!
//! Each module mirrors one architecture's `arch/*/include/asm/jump_label.h` (the NOP and the
//! `__jump_table` entry that `arch_static_branch` emits) and `arch/*/kernel/jump_label.c` (the
//! jump that enabling a key writes over the NOP), plus the `const`-operand load that
//! [`crate::asm`] exposes. The instruction encoders are plain functions, compiled and tested on
//! every target; the inline assembly is compiled only for its own architecture. [`current`]
//! names the module of the architecture being built for, where there is one; on any other
//! architecture the shim keeps its portable replacements.

pub mod arm64;
pub mod loongarch;
pub mod riscv;
pub mod x86_64;

#[cfg(target_arch = "aarch64")]
pub use arm64 as current;
#[cfg(target_arch = "loongarch64")]
pub use loongarch as current;
#[cfg(target_arch = "riscv64")]
pub use riscv as current;
#[cfg(target_arch = "x86_64")]
pub use x86_64 as current;
