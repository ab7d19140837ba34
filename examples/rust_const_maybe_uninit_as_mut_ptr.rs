// SPDX-License-Identifier: GPL-2.0
//! `MaybeUninit::as_mut_ptr` in `const fn`: a PCI ID table written in place by the compiler.
//!
//! `const_maybe_uninit_as_mut_ptr` (tracking issue #75251, stable since Rust 1.83.0) makes
//! `MaybeUninit::as_mut_ptr` a `const fn`, so constant evaluation can take uninitialized
//! storage and initialize it in place, one element at a time, the way `pin_init` and the
//! kernel's static initializers do at run time. The kernel's `IdArray::new` builds its raw
//! `struct pci_device_id` table that way, and the table goes straight into the module's
//! `MODULE_DEVICE_TABLE` data.
//!
//! Before 1.83.0, constant evaluation cannot write into a `MaybeUninit` through a pointer.
//! The shim's replacement fills an array of `MaybeUninit<RawPciId>` by value and converts it
//! to `[RawPciId; N]` through a `union`: it needs `Copy` entries and one more copy of the
//! whole table, and the conversion is another unsafe step to argue.
//!
//! The feature is in the `kernel` crate's list, not in the list for code outside `rust/`, so
//! this driver does not enable it; it declares its table with `IdArray::new`, which uses the
//! gated form inside the `kernel` crate (`kernel::const_init::device_id`, where both forms are
//! compiled and tested against each other). Nothing of this runs at load time: the table is
//! in the module image.

use kernel::const_init::device_id::{IdArray, PciDeviceId};
use kernel::prelude::*;

module! {
    type: RustConstMaybeUninitAsMutPtr,
    name: "rust_const_maybe_uninit_as_mut_ptr",
    authors: ["Rust for Linux Contributors"],
    description: "Rust const MaybeUninit::as_mut_ptr sample",
    license: "GPL",
}

/// The board names the driver prints, indexed by the table's `driver_data`.
const BOARDS: [&str; 3] = ["Intel 82574L", "virtio-net", "Realtek RTL8111"];

/// The `pci_device_id` table, built in place at compile time.
static PCI_TABLE: IdArray<PciDeviceId, 3> = IdArray::new([
    PciDeviceId::new(0x8086, 0x10D3),
    PciDeviceId::new(0x1AF4, 0x1000),
    PciDeviceId::new(0x10EC, 0x8168),
]);

/// The (vendor, device) pairs the PCI core enumerated on this host.
const BUS: [(u16, u16); 4] = [
    (0x1AF4, 0x1000),
    (0x8086, 0x1533),
    (0x10EC, 0x8168),
    (0x8086, 0x10D3),
];

struct RustConstMaybeUninitAsMutPtr {
    probed: usize,
}

impl kernel::Module for RustConstMaybeUninitAsMutPtr {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust const MaybeUninit::as_mut_ptr sample (init)\n");
        let mut probed = 0;
        for (vendor, device) in BUS {
            match PCI_TABLE.find(vendor, device) {
                Some(index) => {
                    pr_info!(
                        "{:04x}:{:04x}: {} (driver_data {})\n",
                        vendor,
                        device,
                        BOARDS[index],
                        index
                    );
                    probed += 1;
                }
                None => pr_info!("{:04x}:{:04x}: not ours\n", vendor, device),
            }
        }
        Ok(RustConstMaybeUninitAsMutPtr { probed })
    }
}

impl Drop for RustConstMaybeUninitAsMutPtr {
    fn drop(&mut self) {
        pr_info!("removing {} devices\n", self.probed);
        pr_info!("Rust const MaybeUninit::as_mut_ptr sample (exit)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binds_the_listed_devices_with_their_table_index() {
        let log = kernel::host::load_unload::<RustConstMaybeUninitAsMutPtr>(&THIS_MODULE).unwrap();
        assert_eq!(
            log.as_str(),
            "[info] rust_const_maybe_uninit_as_mut_ptr: Rust const MaybeUninit::as_mut_ptr sample (init)\n\
             [info] rust_const_maybe_uninit_as_mut_ptr: 1af4:1000: virtio-net (driver_data 1)\n\
             [info] rust_const_maybe_uninit_as_mut_ptr: 8086:1533: not ours\n\
             [info] rust_const_maybe_uninit_as_mut_ptr: 10ec:8168: Realtek RTL8111 (driver_data 2)\n\
             [info] rust_const_maybe_uninit_as_mut_ptr: 8086:10d3: Intel 82574L (driver_data 0)\n\
             [info] rust_const_maybe_uninit_as_mut_ptr: removing 3 devices\n\
             [info] rust_const_maybe_uninit_as_mut_ptr: Rust const MaybeUninit::as_mut_ptr sample (exit)\n"
        );
    }
}
