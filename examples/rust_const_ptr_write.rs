// SPDX-License-Identifier: GPL-2.0
//! `ptr::write` in `const fn`: each device tree ID's `data` field set by the compiler.
//!
//! `const_ptr_write` (tracking issue #86302, stable since Rust 1.83.0) makes `ptr::write` and
//! `<*mut T>::write` usable in `const fn`. The kernel's `IdArray::new` needs it: generic over
//! the bus, it knows the raw ID structure only through a trait that gives the byte offset of
//! the `driver_data` (here `data`) field, and stores each entry's index there with
//! `ptr.byte_add(OFFSET).cast::<usize>().write(index)`. The C side later hands that index to
//! `probe`, which looks up the driver's per-entry information with it.
//!
//! Before 1.83.0 no `const fn` can store through a pointer. The shim's replacement overlays the
//! entry with a byte array in a `union` and stores the index one byte at a time: it works
//! for any bus, but only for raw IDs up to `MAX_RAW_ID_SIZE` bytes, with an unsafe union and
//! a loop where one store would do.
//!
//! The feature is in the `kernel` crate's list, not in the list for code outside `rust/`, so
//! this driver does not enable it; it calls `IdArray::new`, which uses the gated form inside
//! the `kernel` crate (`kernel::const_init::device_id`, where both forms are compiled and
//! tested against each other).

use kernel::const_init::device_id::{IdArray, OfDeviceId};
use kernel::prelude::*;

module! {
    type: RustConstPtrWrite,
    name: "rust_const_ptr_write",
    authors: ["Rust for Linux Contributors"],
    description: "Rust const ptr::write sample",
    license: "GPL",
}

/// What the driver knows about each compatible device, indexed by the table's `data` field.
struct UartInfo {
    fifo_size: u32,
    uses_dma: bool,
}

const INFO: [UartInfo; 3] = [
    UartInfo {
        fifo_size: 32,
        uses_dma: true,
    },
    UartInfo {
        fifo_size: 16,
        uses_dma: false,
    },
    UartInfo {
        fifo_size: 64,
        uses_dma: true,
    },
];

/// The `of_device_id` table, with `data` set to each entry's index by the compiler.
static OF_TABLE: IdArray<OfDeviceId, 3> = IdArray::new([
    OfDeviceId::new("arm,pl011"),
    OfDeviceId::new("ns16550a"),
    OfDeviceId::new("snps,dw-apb-uart"),
]);

/// The `compatible` strings of the nodes the device tree offers this driver.
const NODES: [&str; 4] = [
    "snps,dw-apb-uart",
    "fsl,imx21-uart",
    "arm,pl011",
    "ns16550a",
];

struct RustConstPtrWrite {
    bound: usize,
}

impl kernel::Module for RustConstPtrWrite {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust const ptr::write sample (init)\n");
        let mut bound = 0;
        for node in NODES {
            match OF_TABLE.find(node) {
                Some(index) => {
                    let info = &INFO[index];
                    pr_info!(
                        "probe {}: data {}, fifo {} bytes, dma {}\n",
                        node,
                        index,
                        info.fifo_size,
                        info.uses_dma
                    );
                    bound += 1;
                }
                None => pr_info!("{}: no match\n", node),
            }
        }
        Ok(RustConstPtrWrite { bound })
    }
}

impl Drop for RustConstPtrWrite {
    fn drop(&mut self) {
        pr_info!("unbinding {} devices\n", self.bound);
        pr_info!("Rust const ptr::write sample (exit)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_each_node_with_its_entry_data() {
        let log = kernel::host::load_unload::<RustConstPtrWrite>(&THIS_MODULE).unwrap();
        assert_eq!(
            log.as_str(),
            "[info] rust_const_ptr_write: Rust const ptr::write sample (init)\n\
             [info] rust_const_ptr_write: probe snps,dw-apb-uart: data 2, fifo 64 bytes, dma true\n\
             [info] rust_const_ptr_write: fsl,imx21-uart: no match\n\
             [info] rust_const_ptr_write: probe arm,pl011: data 0, fifo 32 bytes, dma true\n\
             [info] rust_const_ptr_write: probe ns16550a: data 1, fifo 16 bytes, dma false\n\
             [info] rust_const_ptr_write: unbinding 3 devices\n\
             [info] rust_const_ptr_write: Rust const ptr::write sample (exit)\n"
        );
        assert_eq!(OF_TABLE.raw_ids().map(|raw| raw.data), [0, 1, 2]);
    }
}
