// SPDX-License-Identifier: GPL-2.0
//! Borrowing a value of a generic type while a constant is evaluated: a driver's ID table.
//!
//! `const_refs_to_cell` (tracking issue #80384; a language feature, stable since Rust 1.83.0)
//! lets a `const fn` borrow a value that may contain an `UnsafeCell`. A value of a generic type
//! `T` may: nothing rules a cell out. So before 1.83.0, `&id` with `id: T` in a `const fn` is
//! an error, and that is what the kernel hit: `IdArray::new` builds a driver's
//! `struct pci_device_id` table at compile time and copies each ID to its raw type with
//! `transmute_copy(&id)`, generic over the bus's ID type. `rust/kernel/lib.rs` enables the
//! feature for it.
//!
//! The feature is in the `kernel` crate's list, not in `rust_allowed_features`, so a driver
//! cannot enable it (Kbuild's `-Zallow-features` refuses it with E0725): before 1.83.0, a driver
//! gets that borrow only inside the `kernel` crate. This sample shows both sides. Its own
//! generic `raw_id` copies an ID as the kernel does, borrowing it, where the compiler has the
//! feature stable (`kshim_stable_const_refs_to_cell`), and before that, the stable
//! replacement: copy the value through a `union`, by value, with no borrow. It costs a `union`
//! type, a `Copy` bound and an unsafe read of a field that was not written. The sample's
//! table is then built again with the shim's `IdArray::new`, which borrows inside the `kernel`
//! crate (`kernel::const_init::device_id`), and the two tables must agree.

use kernel::const_init::device_id::{IdArray, PciDeviceId, RawDeviceId, RawPciId};
use kernel::prelude::*;

module! {
    type: RustConstRefsToCell,
    name: "rust_const_refs_to_cell",
    authors: ["Rust for Linux Contributors"],
    description: "Rust const refs to cell sample",
    license: "GPL",
}

/// The network cards this driver handles.
const IDS: [PciDeviceId; 3] = [
    PciDeviceId::new(0x8086, 0x10D3), // Intel 82574L
    PciDeviceId::new(0x1AF4, 0x1000), // virtio-net
    PciDeviceId::new(0x10EC, 0x8168), // Realtek RTL8111
];

/// The raw structure of an ID, made while a constant is evaluated: the stabilized form, a
/// borrow of the generic value, as the kernel's `IdArray::new` writes it.
#[cfg(kshim_stable_const_refs_to_cell)]
const fn raw_id<T: RawDeviceId>(id: T) -> T::RawType {
    // `&id` is what needs `const_refs_to_cell`: `T` is generic, so it may hold a cell.
    // SAFETY: `RawDeviceId` guarantees that `T` has the layout of `T::RawType` and that every
    // `T` is a valid `T::RawType`; `&id` is valid for reads of that size.
    unsafe { core::mem::transmute_copy(&id) }
}

/// A value of one type read back as another, by value, as a `const fn` could before 1.83.0.
#[cfg(not(kshim_stable_const_refs_to_cell))]
#[repr(C)]
union Transmute<Src: Copy, Dst: Copy> {
    src: Src,
    dst: Dst,
}

/// The raw structure of an ID, made while a constant is evaluated: the replacement, a copy
/// through a `union`, with no borrow.
#[cfg(not(kshim_stable_const_refs_to_cell))]
const fn raw_id<T: RawDeviceId>(id: T) -> T::RawType {
    // SAFETY: `RawDeviceId` guarantees that `T` has the size and layout of `T::RawType` and
    // that every `T` is a valid `T::RawType`, so the `dst` field, which overlays all of `src`,
    // holds a valid value once `src` is written.
    unsafe { Transmute { src: id }.dst }
}

/// The driver's own raw table, copied entry by entry at compile time.
const RAW_IDS: [RawPciId; 3] = [raw_id(IDS[0]), raw_id(IDS[1]), raw_id(IDS[2])];

/// The same table built by the `kernel` crate, with `driver_data` set to each entry's index.
static PCI_TABLE: IdArray<PciDeviceId, 3> = IdArray::new(IDS);

struct RustConstRefsToCell;

impl kernel::Module for RustConstRefsToCell {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust const refs to cell sample (init)\n");
        for (index, raw) in RAW_IDS.iter().enumerate() {
            let kernel = &PCI_TABLE.raw_ids()[index];
            pr_info!(
                "id {}: vendor {:04x} device {:04x}, as the kernel copied it: {}\n",
                index,
                raw.vendor,
                raw.device,
                RawPciId {
                    driver_data: 0,
                    ..*kernel
                } == *raw
            );
        }
        pr_info!(
            "probe 1af4:1000: driver_data {:?}\n",
            PCI_TABLE.find(0x1AF4, 0x1000)
        );
        Ok(RustConstRefsToCell)
    }
}

impl Drop for RustConstRefsToCell {
    fn drop(&mut self) {
        pr_info!("Rust const refs to cell sample (exit)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drivers_copy_and_the_kernels_table_agree() {
        let log = kernel::host::load_unload::<RustConstRefsToCell>(&THIS_MODULE).unwrap();
        assert_eq!(
            log.as_str(),
            "[info] rust_const_refs_to_cell: Rust const refs to cell sample (init)\n\
             [info] rust_const_refs_to_cell: id 0: vendor 8086 device 10d3, as the kernel \
             copied it: true\n\
             [info] rust_const_refs_to_cell: id 1: vendor 1af4 device 1000, as the kernel \
             copied it: true\n\
             [info] rust_const_refs_to_cell: id 2: vendor 10ec device 8168, as the kernel \
             copied it: true\n\
             [info] rust_const_refs_to_cell: probe 1af4:1000: driver_data Some(1)\n\
             [info] rust_const_refs_to_cell: Rust const refs to cell sample (exit)\n"
        );
        // Field by field, not only what the log shows.
        for (index, raw) in RAW_IDS.iter().enumerate() {
            let kernel = PCI_TABLE.raw_ids()[index];
            assert_eq!(kernel.driver_data, index);
            assert_eq!(
                RawPciId {
                    driver_data: 0,
                    ..kernel
                },
                *raw
            );
        }
    }
}
