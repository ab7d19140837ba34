// SPDX-License-Identifier: GPL-2.0
//! Tables and initializers built at compile time, the kernel's four `const_*` features at work.
//!
//! C fills such tables with a host program (`lib/gen_crc32table.c` writes `crc32table.h`) or
//! with designated initializers the compiler folds; Rust does it with `const fn`. Until Rust
//! 1.83.0, `const fn` could not take `&mut` (`const_mut_refs`, #57349), write through a raw
//! pointer (`const_ptr_write`, #86302), get a pointer into a `MaybeUninit`
//! (`const_maybe_uninit_as_mut_ptr`, #75251) or borrow a value that may contain an
//! `UnsafeCell` (`const_refs_to_cell`, #80384); the kernel enabled all four for code such as
//! its device ID tables (`IdArray::new`). `inline_const` (#76001, stable since 1.79.0) lets a
//! generic function evaluate a `const` block, assertion included, per instantiation.
//!
//! Each module below keeps the gated form and its stable replacement compiled side by side
//! wherever the compiler allows, selects one for the public API by cfg, and tests that both
//! compute the same thing:
//!
//! - [`crc`]: CRC-32 lookup tables (`const_mut_refs`, `inline_const`);
//! - [`device_id`]: device ID tables built in place (`const_maybe_uninit_as_mut_ptr`,
//!   `const_ptr_write`, `const_refs_to_cell`).
//!
//! The gated forms of the four 1.83.0 features lean on one another: a pointer from
//! `MaybeUninit::as_mut_ptr` needs `&mut self`, and `ptr::write` needs a `*mut`, both of which
//! `const_mut_refs` gates. That is harmless here: kernel mode enables all four, and all four
//! became stable in the same release, so `kshim_has_F` implies the others for every `F` among
//! them.

pub mod crc;
pub mod device_id;
