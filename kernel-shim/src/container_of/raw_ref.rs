// SPDX-License-Identifier: GPL-2.0
//! The `raw_ref_op` form of the link projection: `&raw mut (*links).next`.
//!
//! This is a file of its own because compilers before Rust 1.82.0 reject `&raw` as soon as
//! they parse it, even inside an item that `#[cfg]` then removes (Rust 1.63.0 reports E0658 for
//! exactly that). A module declared under a `#[cfg]` that does not hold is never read, so
//! `container_of.rs` declares this one under `kshim_has_raw_ref_op`.

use super::ListLinks;

/// Pointers to the `next` and `prev` fields of `*links`, made without an intermediate reference.
///
/// # Safety
///
/// `links` must point into an allocation that holds a whole `ListLinks` at that address; the
/// `ListLinks` need not be initialized.
#[inline(always)]
pub unsafe fn next_and_prev(links: *mut ListLinks) -> (*mut *mut ListLinks, *mut *mut ListLinks) {
    // SAFETY: the caller guarantees that `links` points to a `ListLinks`-sized place inside
    // one allocation, so the field places are in bounds; `&raw mut` only computes their
    // addresses, reading nothing and asserting nothing about initialization or aliasing.
    unsafe { (&raw mut (*links).next, &raw mut (*links).prev) }
}
