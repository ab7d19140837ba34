// SPDX-License-Identifier: GPL-2.0
//! The `raw_ref_op` form of the sample's projection: `&raw mut (*device).links`.
//!
//! A file of its own because compilers before Rust 1.82.0 reject `&raw` while parsing, even in
//! an item that `#[cfg]` removes; a module that is configured out is never read.

use super::Device;
use kernel::container_of::ListLinks;

/// A pointer to the links inside `*device`, made without an intermediate reference.
///
/// # Safety
///
/// `device` must point to a `Device`-sized place in one allocation; it need not be initialized.
pub(crate) unsafe fn links_of(device: *mut Device) -> *mut ListLinks {
    // SAFETY: the caller guarantees the place is in bounds; `&raw mut` only computes the
    // field's address, reading nothing and asserting nothing about its contents.
    unsafe { &raw mut (*device).links }
}
