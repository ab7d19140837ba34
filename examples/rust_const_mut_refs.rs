// SPDX-License-Identifier: GPL-2.0
//! `&mut` in `const fn`: a firmware checksum computed by the compiler through a helper.
//!
//! `const_mut_refs` (tracking issue #57349, stable since Rust 1.83.0) allows `&mut` references
//! in `const fn` and constants: a helper may update its caller's state in place, as C code
//! passes `uint32_t *crc`. The kernel enabled it, with the other three 1.83.0 features, for
//! its device ID tables: `IdArray::new` fills its table through `MaybeUninit::as_mut_ptr`,
//! which takes `&mut self`. A lookup table filled by helper functions, as here, is the same
//! need.
//!
//! The stable replacement threads the state through by value: `fn step(state) -> state`. For
//! a `u32` that costs nothing but style; for a table it is a copy of the whole table per call
//! during constant evaluation, and helpers can no longer share one buffer.
//!
//! The feature is in the `kernel` crate's list but not in the one for code outside `rust/`, so
//! this module never enables it: the shim's [`crc32_le_table`] uses the gated form inside the
//! `kernel` crate, and this file writes its own `&mut` helper only under
//! `kshim_stable_const_mut_refs`, where it needs no feature. Unlike `const { }`, a `&mut` in a
//! `const fn` is rejected by the type checker, not the parser, so both forms can stand here
//! side by side under plain `#[cfg]`s.

use kernel::const_init::crc::{crc32_le_table, CRC32_IEEE};
use kernel::prelude::*;

module! {
    type: RustConstMutRefs,
    name: "rust_const_mut_refs",
    authors: ["Rust for Linux Contributors"],
    description: "Rust &mut in const fn sample",
    license: "GPL",
}

/// The lookup table, built by the compiler (in place, through `&mut`, inside the shim).
static CRC32_TABLE: [u32; 256] = crc32_le_table(CRC32_IEEE);

/// A firmware image as a driver would embed it, header and payload.
const FIRMWARE: &[u8] = b"KSHM\x01\x00\x10\x00firmware payload";

/// Feeds `data` into `crc` in place: the stabilized form, no feature attribute needed.
#[cfg(kshim_stable_const_mut_refs)]
const fn feed(crc: &mut u32, data: &[u8]) {
    let mut index = 0;
    while index < data.len() {
        *crc = (*crc >> 8) ^ CRC32_TABLE_CONST[((*crc ^ data[index] as u32) & 0xFF) as usize];
        index += 1;
    }
}

/// Feeds `data` into `crc` and returns the result: the pre-1.83 replacement.
#[cfg(not(kshim_stable_const_mut_refs))]
const fn feed(crc: u32, data: &[u8]) -> u32 {
    let mut crc = crc;
    let mut index = 0;
    while index < data.len() {
        crc = (crc >> 8) ^ CRC32_TABLE_CONST[((crc ^ data[index] as u32) & 0xFF) as usize];
        index += 1;
    }
    crc
}

/// The table as a constant, since a constant may not read a `static` before 1.83.0.
const CRC32_TABLE_CONST: [u32; 256] = crc32_le_table(CRC32_IEEE);

/// The CRC-32 of the header and of the payload, fed in two pieces, at compile time.
const EXPECTED_CRC: u32 = {
    let (header, payload) = FIRMWARE.split_at(8);
    let mut crc = !0;
    #[cfg(kshim_stable_const_mut_refs)]
    {
        feed(&mut crc, header);
        feed(&mut crc, payload);
    }
    #[cfg(not(kshim_stable_const_mut_refs))]
    {
        crc = feed(crc, header);
        crc = feed(crc, payload);
    }
    !crc
};

struct RustConstMutRefs;

impl kernel::Module for RustConstMutRefs {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust const mut refs sample (init)\n");
        // The same CRC, computed at load time from the static table, must agree.
        let loaded = !kernel::const_init::crc::crc32_le(!0, FIRMWARE, &CRC32_TABLE);
        pr_info!(
            "firmware: {} bytes, crc32 {:#010x} at build time, {:#010x} at load time\n",
            FIRMWARE.len(),
            EXPECTED_CRC,
            loaded
        );
        if loaded != EXPECTED_CRC {
            pr_err!("firmware image is corrupt\n");
            return Err(EIO);
        }
        Ok(RustConstMutRefs)
    }
}

impl Drop for RustConstMutRefs {
    fn drop(&mut self) {
        pr_info!("Rust const mut refs sample (exit)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn firmware_checksum_agrees_at_build_and_load_time() {
        let log = kernel::host::load_unload::<RustConstMutRefs>(&THIS_MODULE).unwrap();
        assert_eq!(
            log.as_str(),
            "[info] rust_const_mut_refs: Rust const mut refs sample (init)\n\
             [info] rust_const_mut_refs: firmware: 24 bytes, crc32 0x061ebeae at build time, \
             0x061ebeae at load time\n\
             [info] rust_const_mut_refs: Rust const mut refs sample (exit)\n"
        );
    }
}
