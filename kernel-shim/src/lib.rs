// SPDX-License-Identifier: GPL-2.0
//! A core-only crate shaped like the Linux kernel's `rust/kernel`, for teaching.
//!
//! Every unstable feature that the kernel's Rust code depended on in 2025 appears here inside a
//! real kernel-style abstraction, next to its stable replacement. Which form is compiled is
//! chosen by cfgs derived from the compiler (see [`catalog`]):
//!
//! - kernel mode (`kshim_kernel_mode`, set by `RUSTC_BOOTSTRAP=1` or a nightly compiler): the
//!   feature block below is on, exactly as in `rust/kernel/lib.rs`, and the gated forms are
//!   used;
//! - stable mode: no `#![feature]` at all; the stabilized syntax is used where the compiler
//!   has it, and the stable replacement where it does not, from Rust 1.78.0 on.
//!
//! A block written in a feature's form reads `#[cfg(kshim_has_<feature>)]`: the form is
//! available, in kernel mode where the compiler knows the feature, in either mode where it is
//! stable.
//!
//! The `catalog` module is the one source of truth for every feature: its stable-since
//! release, tracking issue, replacement, the cfg that selects it and the example that teaches
//! it.

#![no_std]
//
// Please see https://github.com/Rust-for-Linux/linux/issues/2 for details on
// the unstable features in use.
//
// Stable since Rust 1.79.0.
#![cfg_attr(kshim_kernel_mode, feature(inline_const))]
//
// Stable since Rust 1.81.0.
#![cfg_attr(kshim_kernel_mode, feature(lint_reasons))]
//
// Stable since Rust 1.82.0.
#![cfg_attr(kshim_kernel_mode, feature(raw_ref_op))]
//
// Stable since Rust 1.83.0.
#![cfg_attr(kshim_kernel_mode, feature(const_maybe_uninit_as_mut_ptr))]
#![cfg_attr(kshim_kernel_mode, feature(const_mut_refs))]
#![cfg_attr(kshim_kernel_mode, feature(const_ptr_write))]
#![cfg_attr(kshim_kernel_mode, feature(const_refs_to_cell))]
//
// Expected to become stable.
#![cfg_attr(kshim_kernel_mode, feature(arbitrary_self_types))]
//
// `feature(derive_coerce_pointee)` is expected to become stable. Before Rust
// 1.84.0, it did not exist, so enable the predecessor features.
#![cfg_attr(
    all(kshim_kernel_mode, CONFIG_RUSTC_HAS_COERCE_POINTEE),
    feature(derive_coerce_pointee)
)]
#![cfg_attr(
    all(kshim_kernel_mode, not(CONFIG_RUSTC_HAS_COERCE_POINTEE)),
    feature(coerce_unsized)
)]
#![cfg_attr(
    all(kshim_kernel_mode, not(CONFIG_RUSTC_HAS_COERCE_POINTEE)),
    feature(dispatch_from_dyn)
)]
#![cfg_attr(
    all(kshim_kernel_mode, not(CONFIG_RUSTC_HAS_COERCE_POINTEE)),
    feature(unsize)
)]
//
// Not in `rust/kernel/lib.rs`: the kernel crate does not use them itself, and the crates
// `rust/Makefile` builds get no `-Zallow-features` (the KUnit doctests, under `rust/` but
// built by `scripts/Makefile.build`'s rule, do). They are in `rust_allowed_features`
// (`scripts/Makefile.build`) because `static_branch_unlikely!` expands its `asm goto` and
// its `const` operand inside the driver's crate. The shim enables them for its own
// `jump_label` and `asm` abstractions.
//
// Stable since Rust 1.82.0.
#![cfg_attr(kshim_kernel_mode, feature(asm_const))]
//
// Stable since Rust 1.87.0.
#![cfg_attr(kshim_kernel_mode, feature(asm_goto))]
//
// Not at the seed: what the pinned trees enable besides (6.1, 6.12, 7.2, 7.3).
//
// Stable since Rust 1.64.0. Linux 6.1's `rust/kernel/lib.rs` and `rust_allowed_features`.
#![cfg_attr(kshim_kernel_mode, feature(core_ffi_c))]
//
// To be determined. From Linux 6.12: `module!`'s `.modinfo` entries are `#[used(compiler)]`.
#![cfg_attr(kshim_kernel_mode, feature(used_with_arg))]
//
// `feature(file_with_nul)` is stable since Rust 1.92.0. Before Rust 1.89.0, it did not exist, so
// enable it conditionally. From Linux 7.2.
#![cfg_attr(
    all(kshim_kernel_mode, CONFIG_RUSTC_HAS_FILE_WITH_NUL),
    feature(file_with_nul)
)]
//
// To be determined. Not in `rust/kernel/lib.rs`: `rust/bindings` and `rust/uapi` enable it for
// the bindings' `#[cfi_encoding]` (Linux 7.2 on), which the shim's `bindings` module has.
#![cfg_attr(kshim_kernel_mode, feature(cfi_encoding))]
//
// Stable since Rust 1.89.0. From Linux 7.2, and in `rust_allowed_features` too: drivers write
// `_` for `Bounded` widths.
#![cfg_attr(kshim_kernel_mode, feature(generic_arg_infer))]
//
// Stable since Rust 1.87.0. Before Rust 1.82.0 it did not exist; the kernel's minimum (1.85.0)
// needs no condition, the shim's does. From Linux 7.3.
#![cfg_attr(
    all(kshim_kernel_mode, kshim_has_unsigned_is_multiple_of),
    feature(unsigned_is_multiple_of)
)]
//
// As in the kernel, a feature that has become stable keeps its attribute until the minimum
// Rust version passes it; the compiler's reminder is expected. And `used_with_arg` is used only
// where `module!` expands, in the driver, never in this crate: the nightly's `unused_features`
// says so. Kbuild allows both lints for every crate, `rust/kernel` included, with
// `rust_common_flags`'s `-Astable_features -Aunused_features`.
#![cfg_attr(kshim_kernel_mode, allow(stable_features, unused_features))]
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod arch;
pub mod asm;
pub mod bindings;
pub mod build_assert;
pub mod catalog;
pub mod const_init;
pub mod container_of;
pub mod error;
pub mod ffi;
pub mod host;
pub mod io;
#[doc = include_str!("features.md")]
pub mod features {}
pub mod jump_label;
pub mod module;
pub mod num;
pub mod prelude;
pub mod print;
pub mod sync;
pub mod task;

pub use crate::module::{Module, ThisModule};
