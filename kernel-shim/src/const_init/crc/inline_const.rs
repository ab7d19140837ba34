// SPDX-License-Identifier: GPL-2.0
//! The `inline_const` form of [`Crc32`](super::Crc32)'s table: a `const` block in a generic
//! function.
//!
//! This file is only declared when the compiler accepts `const { }` (kernel mode, or 1.79.0
//! and later): older compilers parse it but gate it as they parse (E0658), so a false `#[cfg]`
//! does not help.

/// The table of `POLY`, checked and built by the compiler once per polynomial.
pub(super) fn table<const POLY: u32>() -> &'static [u32; 256] {
    // The block may name `POLY`, which a nested `const` item could not; the assertion fails
    // the build for the instantiation that breaks it.
    &const {
        assert!(
            super::is_reflected(POLY),
            "a reflected CRC-32 polynomial has its x^0 term in bit 31"
        );
        super::crc32_le_table(POLY)
    }
}
