// SPDX-License-Identifier: GPL-2.0
//! Device ID tables built at compile time, like the kernel's `IdArray` in `device_id.rs`.
//!
//! A driver hands the C side an array of raw ID structures (`struct pci_device_id`,
//! `struct of_device_id`), and each entry's `driver_data` field tells `probe` which entry
//! matched. The kernel builds that array in a `const fn`, generic over the bus's ID type, and
//! that one function needs three of the 1.83.0 features:
//!
//! - `const_refs_to_cell`: it copies each ID with `transmute_copy(&id)`, and borrowing a value
//!   of a generic type is a borrow of something that may contain an `UnsafeCell`. Replacement:
//!   copy the value through a `union`, by value, which needs `Copy` and an unsafe read.
//! - `const_ptr_write`: it stores the entry's index at `DRIVER_DATA_OFFSET`, a byte offset
//!   the bus's trait provides, with `ptr.write(index)`. Replacement: overlay the entry with a
//!   byte array in a `union` and store the index byte by byte, which limits entries to
//!   [`MAX_RAW_ID_SIZE`] bytes.
//! - `const_maybe_uninit_as_mut_ptr`: it writes each entry into the array's uninitialized
//!   storage through `MaybeUninit::as_mut_ptr`. Replacement: build an array of
//!   `MaybeUninit` by value and convert it through a `union`, which needs `Copy` entries and
//!   copies the table once more.
//!
//! [`IdArray::new`] composes the selected form of each step; the tests run every gated step
//! against its replacement with the other steps held fixed.

use core::mem::{size_of, MaybeUninit};

/// A bus's device ID, layout-compatible with the raw structure the C side reads.
///
/// # Safety
///
/// Implementers guarantee that `Self` has the size, alignment and layout of
/// [`RawType`](Self::RawType) (for example, by being a `#[repr(transparent)]` wrapper around
/// it), that every initialized `Self` is a valid `RawType`, and that
/// [`DRIVER_DATA_OFFSET`](Self::DRIVER_DATA_OFFSET) is the offset of a `usize` field of
/// `RawType` (such as `kernel_ulong_t driver_data`), aligned for `usize` (so not a field of a
/// packed structure), to which any value may be written.
pub unsafe trait RawDeviceId: Copy {
    /// The structure the C side reads, such as `struct pci_device_id`.
    type RawType: Copy;

    /// The byte offset of the field that holds the index of the matching entry.
    const DRIVER_DATA_OFFSET: usize;
}

/// The largest raw ID structure the pre-1.83 replacement can patch, in bytes.
pub const MAX_RAW_ID_SIZE: usize = 256;

/// A table of device IDs with each entry's `driver_data` set to its index, built by the
/// compiler.
///
/// # Examples
///
/// ```
/// use kernel::const_init::device_id::{IdArray, PciDeviceId};
///
/// static PCI_TABLE: IdArray<PciDeviceId, 2> = IdArray::new([
///     PciDeviceId::new(0x8086, 0x10D3), // Intel 82574L
///     PciDeviceId::new(0x1AF4, 0x1000), // virtio-net
/// ]);
///
/// assert_eq!(PCI_TABLE.find(0x1AF4, 0x1000), Some(1));
/// assert_eq!(PCI_TABLE.raw_ids()[1].driver_data, 1);
/// assert_eq!(PCI_TABLE.find(0x10EC, 0x8168), None);
/// ```
pub struct IdArray<T: RawDeviceId, const N: usize> {
    raw_ids: [T::RawType; N],
}

impl<T: RawDeviceId, const N: usize> IdArray<T, N> {
    /// Builds the raw table: entry `i` is `ids[i]` with its `driver_data` set to `i`.
    pub const fn new(ids: [T; N]) -> Self {
        #[cfg(not(kshim_has_const_maybe_uninit_as_mut_ptr))]
        use self::by_value::build;
        #[cfg(kshim_has_const_maybe_uninit_as_mut_ptr)]
        use self::in_place::build;
        Self {
            raw_ids: build::<T, N>(ids),
        }
    }

    /// The raw table, as the C side sees it.
    pub const fn raw_ids(&self) -> &[T::RawType; N] {
        &self.raw_ids
    }
}

/// Entry `index` of the raw table: `id`, copied to its raw type, with `driver_data = index`.
const fn raw_entry<T: RawDeviceId>(id: T, index: usize) -> T::RawType {
    #[cfg(not(kshim_has_const_refs_to_cell))]
    use self::by_value::to_raw;
    #[cfg(not(kshim_has_const_ptr_write))]
    use self::by_value::with_driver_data;
    #[cfg(kshim_has_const_ptr_write)]
    use self::ptr_write::with_driver_data;
    #[cfg(kshim_has_const_refs_to_cell)]
    use self::refs_to_cell::to_raw;
    with_driver_data::<T>(to_raw(id), index)
}

/// Reinterprets a value of one type as another, by value, as `const fn` could before 1.83.0.
///
/// # Invariants
///
/// Only read through [`Transmute::dst`] after writing `src`, when `Src` and `Dst` have the
/// same size and every `Src` is a valid `Dst`; the callers below argue it.
#[cfg_attr(
    all(kshim_has_const_refs_to_cell, kshim_has_const_maybe_uninit_as_mut_ptr),
    allow(dead_code)
)]
#[repr(C)]
union Transmute<Src: Copy, Dst: Copy> {
    src: Src,
    dst: Dst,
}

/// The gated copy: borrow the generic value and copy its bytes, as the kernel does.
#[cfg(kshim_has_const_refs_to_cell)]
mod refs_to_cell {
    use super::RawDeviceId;

    pub(super) const fn to_raw<T: RawDeviceId>(id: T) -> T::RawType {
        // `&id` is what needs `const_refs_to_cell`: `T` is generic, so it may hold a cell.
        // SAFETY: `RawDeviceId` guarantees that `T` has the layout of `T::RawType` and that
        // every `T` is a valid `T::RawType`; `&id` is valid for reads of that size.
        unsafe { core::mem::transmute_copy(&id) }
    }
}

/// The gated store: write `driver_data` through a pointer at the trait's offset.
#[cfg(kshim_has_const_ptr_write)]
// Clippy checks `const` calls against the 1.78 minimum; the cfg above already limits this
// module to compilers where the call is allowed.
#[allow(clippy::incompatible_msrv)]
mod ptr_write {
    use super::RawDeviceId;

    pub(super) const fn with_driver_data<T: RawDeviceId>(
        raw: T::RawType,
        data: usize,
    ) -> T::RawType {
        let mut raw = raw;
        let entry = core::ptr::addr_of_mut!(raw).cast::<u8>();
        // SAFETY: `RawDeviceId` guarantees an aligned `usize` field at `DRIVER_DATA_OFFSET`
        // inside `T::RawType`, so the pointer stays in `raw`, is aligned for `usize` (`raw` is
        // aligned for `T::RawType`, and the field's offset is a multiple of `usize`'s
        // alignment) and may be written with any value.
        unsafe { entry.add(T::DRIVER_DATA_OFFSET).cast::<usize>().write(data) };
        raw
    }
}

/// The gated table: write each entry into the array's uninitialized storage in place.
#[cfg(kshim_has_const_maybe_uninit_as_mut_ptr)]
// Clippy checks `const` calls against the 1.78 minimum; the cfg above already limits this
// module to compilers where the call is allowed.
#[allow(clippy::incompatible_msrv)]
mod in_place {
    use super::{raw_entry, RawDeviceId};
    use core::mem::MaybeUninit;

    pub(super) const fn build<T: RawDeviceId, const N: usize>(ids: [T; N]) -> [T::RawType; N] {
        let mut table = MaybeUninit::<[T::RawType; N]>::uninit();
        let first = table.as_mut_ptr().cast::<T::RawType>();
        let mut index = 0;
        while index < N {
            // SAFETY: `index < N`, so the slot lies inside `table`'s storage; `T::RawType` is
            // `Copy`, so assigning over uninitialized memory drops nothing.
            unsafe { *first.add(index) = raw_entry(ids[index], index) };
            index += 1;
        }
        // SAFETY: the loop wrote all `N` entries.
        unsafe { table.assume_init() }
    }
}

/// The replacements, plain Rust 1.78: values in, values out, `union`s for the reinterpreting.
///
/// Each stays compiled, and tested against its gated form, where that form is the one selected.
mod by_value {
    use super::{raw_entry, size_of, MaybeUninit, RawDeviceId, Transmute, MAX_RAW_ID_SIZE};

    #[cfg_attr(kshim_has_const_refs_to_cell, allow(dead_code))]
    pub(super) const fn to_raw<T: RawDeviceId>(id: T) -> T::RawType {
        // SAFETY: `RawDeviceId` guarantees that `T` and `T::RawType` have the same size and
        // that every `T` is a valid `T::RawType`, which is the `Transmute` invariant.
        unsafe { Transmute::<T, T::RawType> { src: id }.dst }
    }

    /// A raw entry that can also be written one byte at a time.
    #[cfg_attr(kshim_has_const_ptr_write, allow(dead_code))]
    #[repr(C)]
    union Overlay<R: Copy> {
        raw: R,
        bytes: [u8; MAX_RAW_ID_SIZE],
    }

    #[cfg_attr(kshim_has_const_ptr_write, allow(dead_code))]
    pub(super) const fn with_driver_data<T: RawDeviceId>(
        raw: T::RawType,
        data: usize,
    ) -> T::RawType {
        assert!(
            size_of::<T::RawType>() <= MAX_RAW_ID_SIZE,
            "raw device ID too large for the pre-1.83 replacement"
        );
        let mut overlay = Overlay { raw };
        let data = data.to_ne_bytes();
        let mut byte = 0;
        while byte < data.len() {
            // SAFETY: this only writes one byte of the union's storage and reads nothing; the
            // index is in bounds (checked by the indexing) and, by `RawDeviceId`, falls in
            // `raw`'s `usize` field at `DRIVER_DATA_OFFSET`.
            unsafe { overlay.bytes[T::DRIVER_DATA_OFFSET + byte] = data[byte] };
            byte += 1;
        }
        // SAFETY: `raw` was written whole, then only the bytes of a `usize` field changed, and
        // `RawDeviceId` allows any value there; so `raw` holds a valid `T::RawType`.
        unsafe { overlay.raw }
    }

    #[cfg_attr(kshim_has_const_maybe_uninit_as_mut_ptr, allow(dead_code))]
    pub(super) const fn build<T: RawDeviceId, const N: usize>(ids: [T; N]) -> [T::RawType; N] {
        let mut table = [MaybeUninit::<T::RawType>::uninit(); N];
        let mut index = 0;
        while index < N {
            table[index] = MaybeUninit::new(raw_entry(ids[index], index));
            index += 1;
        }
        // SAFETY: every entry was written, and `[MaybeUninit<R>; N]` has the size and layout
        // of `[R; N]`, which is the `Transmute` invariant.
        unsafe { Transmute::<[MaybeUninit<T::RawType>; N], [T::RawType; N]> { src: table }.dst }
    }
}

/// Matches any vendor or device, like the C side's `PCI_ANY_ID`.
pub const PCI_ANY_ID: u32 = !0;

/// The C side's `struct pci_device_id`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawPciId {
    /// Vendor ID, or [`PCI_ANY_ID`].
    pub vendor: u32,
    /// Device ID, or [`PCI_ANY_ID`].
    pub device: u32,
    /// Subsystem vendor ID, or [`PCI_ANY_ID`].
    pub subvendor: u32,
    /// Subsystem device ID, or [`PCI_ANY_ID`].
    pub subdevice: u32,
    /// Device class, matched under `class_mask`.
    pub class: u32,
    /// Which bits of `class` to compare.
    pub class_mask: u32,
    /// The driver's data for this entry; [`IdArray`] stores the entry's index.
    pub driver_data: usize,
    /// Match only when the driver is chosen by `driver_override`.
    pub override_only: u32,
}

/// A PCI device ID, as drivers write it.
#[repr(transparent)]
#[derive(Clone, Copy, Debug)]
pub struct PciDeviceId(RawPciId);

impl PciDeviceId {
    /// Matches one vendor and device, any subsystem, like the C side's `PCI_DEVICE()`.
    pub const fn new(vendor: u16, device: u16) -> Self {
        Self(RawPciId {
            vendor: vendor as u32,
            device: device as u32,
            subvendor: PCI_ANY_ID,
            subdevice: PCI_ANY_ID,
            class: 0,
            class_mask: 0,
            driver_data: 0,
            override_only: 0,
        })
    }
}

// SAFETY: `PciDeviceId` is `#[repr(transparent)]` over `RawPciId`, and `driver_data` is a
// `usize` field of it that may hold any value.
unsafe impl RawDeviceId for PciDeviceId {
    type RawType = RawPciId;
    const DRIVER_DATA_OFFSET: usize = core::mem::offset_of!(RawPciId, driver_data);
}

impl<const N: usize> IdArray<PciDeviceId, N> {
    /// The `driver_data` of the first entry matching a device, as the PCI core passes it to
    /// `probe`.
    pub fn find(&self, vendor: u16, device: u16) -> Option<usize> {
        let matches = |id: u32, wanted: u16| id == PCI_ANY_ID || id == u32::from(wanted);
        self.raw_ids
            .iter()
            .find(|raw| matches(raw.vendor, vendor) && matches(raw.device, device))
            .map(|raw| raw.driver_data)
    }
}

/// The length of the `compatible` string of [`RawOfId`], terminating NUL included.
pub const OF_COMPATIBLE_LEN: usize = 128;

/// The C side's `struct of_device_id`, with its data pointer used as an index, as the
/// kernel's Rust `of::DeviceId` uses it.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawOfId {
    /// The node name to match, NUL-padded; empty matches any.
    pub name: [u8; 32],
    /// The device type to match, NUL-padded; empty matches any.
    pub device_type: [u8; 32],
    /// The `compatible` string to match, NUL-padded.
    pub compatible: [u8; OF_COMPATIBLE_LEN],
    /// The driver's data for this entry; [`IdArray`] stores the entry's index.
    pub data: usize,
}

/// An Open Firmware (device tree) ID, matched by its `compatible` string.
#[repr(transparent)]
#[derive(Clone, Copy, Debug)]
pub struct OfDeviceId(RawOfId);

impl OfDeviceId {
    /// Matches nodes whose `compatible` property is `compatible`.
    ///
    /// A string too long for the C structure stops the build when used in a constant.
    pub const fn new(compatible: &str) -> Self {
        let text = compatible.as_bytes();
        assert!(
            text.len() < OF_COMPATIBLE_LEN,
            "compatible string too long for struct of_device_id"
        );
        let mut padded = [0; OF_COMPATIBLE_LEN];
        let mut index = 0;
        while index < text.len() {
            padded[index] = text[index];
            index += 1;
        }
        Self(RawOfId {
            name: [0; 32],
            device_type: [0; 32],
            compatible: padded,
            data: 0,
        })
    }
}

// SAFETY: `OfDeviceId` is `#[repr(transparent)]` over `RawOfId`, and `data` is a `usize`
// field of it that may hold any value.
unsafe impl RawDeviceId for OfDeviceId {
    type RawType = RawOfId;
    const DRIVER_DATA_OFFSET: usize = core::mem::offset_of!(RawOfId, data);
}

impl<const N: usize> IdArray<OfDeviceId, N> {
    /// The `data` of the first entry whose `compatible` string is `compatible`.
    pub fn find(&self, compatible: &str) -> Option<usize> {
        self.raw_ids
            .iter()
            .find(|raw| {
                let end = raw.compatible.iter().position(|&byte| byte == 0);
                raw.compatible[..end.unwrap_or(OF_COMPATIBLE_LEN)] == *compatible.as_bytes()
            })
            .map(|raw| raw.data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PCI_IDS: [PciDeviceId; 4] = [
        PciDeviceId::new(0x8086, 0x10D3),
        PciDeviceId::new(0x1AF4, 0x1000),
        PciDeviceId::new(0x10EC, 0x8168),
        PciDeviceId::new(0x14E4, 0x1677),
    ];

    const OF_IDS: [OfDeviceId; 3] = [
        OfDeviceId::new("arm,pl011"),
        OfDeviceId::new("ns16550a"),
        OfDeviceId::new("snps,dw-apb-uart"),
    ];

    /// The raw PCI table a C driver would write by hand for `PCI_IDS`.
    fn expected_pci_table() -> [RawPciId; 4] {
        let mut table = [0x8086, 0x1AF4, 0x10EC, 0x14E4].map(|vendor| RawPciId {
            vendor,
            device: 0,
            subvendor: PCI_ANY_ID,
            subdevice: PCI_ANY_ID,
            class: 0,
            class_mask: 0,
            driver_data: 0,
            override_only: 0,
        });
        for (index, (raw, device)) in table
            .iter_mut()
            .zip([0x10D3, 0x1000, 0x8168, 0x1677])
            .enumerate()
        {
            raw.device = device;
            raw.driver_data = index;
        }
        table
    }

    #[test]
    fn tables_carry_each_entry_index_and_match_like_the_bus() {
        static PCI: IdArray<PciDeviceId, 4> = IdArray::new(PCI_IDS);
        static OF: IdArray<OfDeviceId, 3> = IdArray::new(OF_IDS);
        assert_eq!(*PCI.raw_ids(), expected_pci_table());
        assert_eq!(PCI.find(0x10EC, 0x8168), Some(2));
        assert_eq!(PCI.find(0x10EC, 0x8169), None);
        assert_eq!(OF.find("snps,dw-apb-uart"), Some(2));
        assert_eq!(OF.find("ns16550"), None);
        assert_eq!(&OF.raw_ids()[1].compatible[..9], b"ns16550a\0");
    }

    #[cfg(kshim_has_const_refs_to_cell)]
    #[test]
    fn gated_matches_replacement_const_refs_to_cell() {
        const GATED: ([RawPciId; 2], RawOfId) = (
            [
                refs_to_cell::to_raw(PCI_IDS[0]),
                refs_to_cell::to_raw(PCI_IDS[3]),
            ],
            refs_to_cell::to_raw(OF_IDS[2]),
        );
        const REPLACEMENT: ([RawPciId; 2], RawOfId) = (
            [by_value::to_raw(PCI_IDS[0]), by_value::to_raw(PCI_IDS[3])],
            by_value::to_raw(OF_IDS[2]),
        );
        assert_eq!(GATED, REPLACEMENT);
        assert_eq!(GATED.0[1].vendor, 0x14E4);
        assert_eq!(GATED.0[1].subvendor, PCI_ANY_ID);
        assert_eq!(&GATED.1.compatible[..17], b"snps,dw-apb-uart\0");
    }

    #[cfg(kshim_has_const_ptr_write)]
    #[test]
    fn gated_matches_replacement_const_ptr_write() {
        const PCI_RAW: RawPciId = PCI_IDS[1].0;
        const OF_RAW: RawOfId = OF_IDS[0].0;
        // Values that use every byte of the field, so a misplaced or short store shows.
        const DATA: [usize; 3] = [0, 7, usize::MAX / 3];
        const GATED: ([RawPciId; 3], [RawOfId; 3]) = (
            [
                ptr_write::with_driver_data::<PciDeviceId>(PCI_RAW, DATA[0]),
                ptr_write::with_driver_data::<PciDeviceId>(PCI_RAW, DATA[1]),
                ptr_write::with_driver_data::<PciDeviceId>(PCI_RAW, DATA[2]),
            ],
            [
                ptr_write::with_driver_data::<OfDeviceId>(OF_RAW, DATA[0]),
                ptr_write::with_driver_data::<OfDeviceId>(OF_RAW, DATA[1]),
                ptr_write::with_driver_data::<OfDeviceId>(OF_RAW, DATA[2]),
            ],
        );
        const REPLACEMENT: ([RawPciId; 3], [RawOfId; 3]) = (
            [
                by_value::with_driver_data::<PciDeviceId>(PCI_RAW, DATA[0]),
                by_value::with_driver_data::<PciDeviceId>(PCI_RAW, DATA[1]),
                by_value::with_driver_data::<PciDeviceId>(PCI_RAW, DATA[2]),
            ],
            [
                by_value::with_driver_data::<OfDeviceId>(OF_RAW, DATA[0]),
                by_value::with_driver_data::<OfDeviceId>(OF_RAW, DATA[1]),
                by_value::with_driver_data::<OfDeviceId>(OF_RAW, DATA[2]),
            ],
        );
        assert_eq!(GATED, REPLACEMENT);
        for (index, &data) in DATA.iter().enumerate() {
            assert_eq!(
                GATED.0[index],
                RawPciId {
                    driver_data: data,
                    ..PCI_RAW
                }
            );
            assert_eq!(GATED.1[index], RawOfId { data, ..OF_RAW });
        }
    }

    #[cfg(kshim_has_const_maybe_uninit_as_mut_ptr)]
    #[test]
    fn gated_matches_replacement_const_maybe_uninit_as_mut_ptr() {
        const GATED: ([RawPciId; 4], [RawOfId; 3]) =
            (in_place::build(PCI_IDS), in_place::build(OF_IDS));
        const REPLACEMENT: ([RawPciId; 4], [RawOfId; 3]) =
            (by_value::build(PCI_IDS), by_value::build(OF_IDS));
        assert_eq!(GATED, REPLACEMENT);
        assert_eq!(GATED.0, expected_pci_table());
        assert!(GATED
            .1
            .iter()
            .enumerate()
            .all(|(index, raw)| raw.data == index));
    }
}
