// SPDX-License-Identifier: GPL-2.0
//! Raw pointers to fields with `&raw mut place`: an intrusive list, walked with `container_of!`.
//!
//! `&raw const place` and `&raw mut place` (`raw_ref_op`, stable since Rust 1.82.0, tracking
//! issue #64490) make a raw pointer to a place without creating a reference first. Kernel
//! objects are linked through fields that C and other objects reach by raw pointer, and that
//! may still be uninitialized: a `&mut` on the way to such a field would assert uniqueness and
//! validity that do not hold. The kernel's `container_of!` has used `&raw` since April 2025,
//! after the seed commit, for its type check (`&raw const (*container_ptr).$($fields)*`), and
//! the shim's does too; at the seed it cast to `*const u8` and stepped back with
//! `ptr.sub(offset)`, with no `&raw` in it. Its own intrusive list, `kernel::list`, still
//! projects with `addr_of!` / `addr_of_mut!` in 7.3: the conversion to `&raw` never landed
//! there (7.3's `kernel::interop::list`, over C's `list_head`, uses `&raw`).
//!
//! The stable replacement, `core::ptr::addr_of_mut!(place)`, is the same operation spelled as a
//! macro and costs nothing at run time; `&raw` only reads better and composes with method
//! calls. The catch is syntax: a compiler before 1.82.0 rejects `&raw` as it parses, even in
//! code that `#[cfg]` removes, so the gated form lives in `rust_raw_ref_op/gated.rs`, declared
//! only where it may be used, next to the stable form below.
//!
//! This module links three devices into a list through their `links` field, then walks the
//! list and steps back from each `links` to its `Device` with `kernel::container_of!`.

// No `#![feature]`: in kernel mode Kbuild's `-Zcrate-attr='feature(...)'` already turns
// `raw_ref_op` on, which lets `&raw` (ours, and `container_of!`'s expansion) through on
// compilers before 1.82.0.

use core::mem::MaybeUninit;
use kernel::container_of::ListLinks;
use kernel::prelude::*;

module! {
    type: RustRawRefOp,
    name: "rust_raw_ref_op",
    authors: ["Rust for Linux Contributors"],
    description: "Rust raw_ref_op sample",
    license: "GPL",
}

/// A device that lives on a list through the links embedded in it.
#[repr(C)]
struct Device {
    id: u32,
    name: &'static str,
    links: ListLinks,
}

#[cfg(kshim_has_raw_ref_op)]
#[path = "rust_raw_ref_op/gated.rs"]
mod fields;

/// The stable form of the projection: `addr_of_mut!((*device).links)`.
#[cfg(not(kshim_has_raw_ref_op))]
mod fields {
    use super::Device;
    use kernel::container_of::ListLinks;

    /// A pointer to the links inside `*device`, made without an intermediate reference.
    ///
    /// # Safety
    ///
    /// `device` must point to a `Device`-sized place in one allocation; it need not be
    /// initialized.
    pub(crate) unsafe fn links_of(device: *mut Device) -> *mut ListLinks {
        // SAFETY: the caller guarantees the place is in bounds; `addr_of_mut!` only computes
        // the field's address, reading nothing and asserting nothing about its contents.
        unsafe { core::ptr::addr_of_mut!((*device).links) }
    }
}

struct RustRawRefOp {
    devices_seen: usize,
}

impl kernel::Module for RustRawRefOp {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust raw_ref_op sample (init)\n");

        let mut head = MaybeUninit::<ListLinks>::uninit();
        let mut devices = [(1, "eth0"), (2, "sda"), (3, "tty0")].map(|(id, name)| Device {
            id,
            name,
            // Overwritten by `add_tail` before anyone reads it.
            links: ListLinks::new_unlinked(),
        });
        let mut devices_seen = 0;
        // SAFETY: `head` and `devices` stay in place until the end of this block and each
        // device is linked once. Every `links` walked before coming back to `head` belongs to
        // one of the devices, so `container_of!` steps back to a live `Device`.
        unsafe {
            ListLinks::init(head.as_mut_ptr());
            for device in &mut devices {
                ListLinks::add_tail(fields::links_of(device), head.as_mut_ptr());
            }
            let mut links = ListLinks::next(head.as_ptr());
            while !core::ptr::eq(links, head.as_ptr()) {
                let device = kernel::container_of!(links, Device, links);
                pr_info!("device {}: {}\n", (*device).id, (*device).name);
                devices_seen += 1;
                links = ListLinks::next(links);
            }
        }
        Ok(RustRawRefOp { devices_seen })
    }
}

impl Drop for RustRawRefOp {
    fn drop(&mut self) {
        pr_info!("walked {} devices\n", self.devices_seen);
        pr_info!("Rust raw_ref_op sample (exit)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_the_list_in_order() {
        let log = kernel::host::load_unload::<RustRawRefOp>(&THIS_MODULE).unwrap();
        assert_eq!(
            log.as_str(),
            "[info] rust_raw_ref_op: Rust raw_ref_op sample (init)\n\
             [info] rust_raw_ref_op: device 1: eth0\n\
             [info] rust_raw_ref_op: device 2: sda\n\
             [info] rust_raw_ref_op: device 3: tty0\n\
             [info] rust_raw_ref_op: walked 3 devices\n\
             [info] rust_raw_ref_op: Rust raw_ref_op sample (exit)\n"
        );
    }
}
