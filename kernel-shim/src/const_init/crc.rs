// SPDX-License-Identifier: GPL-2.0
//! CRC-32 lookup tables computed by the compiler, like the kernel's `lib/crc32table.h`.
//!
//! The kernel generates its CRC tables with a host program, `lib/gen_crc32table.c`, whose
//! `crc32init_le_generic()` fills `tab[i + j] = crc ^ tab[j]`: every entry is built from an
//! earlier one, through a pointer to the table. Here the compiler runs the same algorithm in a
//! `const fn`:
//!
//! - with `const_mut_refs` the table is filled by a helper that takes `&mut [u32; 256]`, as the
//!   C code takes `uint32_t (*tab)[256]`;
//! - the pre-1.83 replacement threads the table through the helper by value and returns it,
//!   which costs a 1 KiB copy per call during constant evaluation, and keeps the helpers from
//!   sharing one table in place.
//!
//! [`Crc32`] adds a compile-time check on its generic polynomial, written as a `const` block
//! with `inline_const` and as a named associated `const` before 1.79.0.

/// The reflected CRC-32 polynomial of IEEE 802.3, zlib and PNG: the kernel's `crc32_le`.
pub const CRC32_IEEE: u32 = 0xEDB8_8320;

/// The reflected Castagnoli polynomial of iSCSI, ext4 and btrfs: the kernel's `crc32c`.
pub const CRC32C: u32 = 0x82F6_3B78;

/// Whether `poly` is a reflected (least significant bit first) CRC-32 polynomial.
///
/// Every CRC polynomial has an `x^0` term; reflected, it lands in bit 31. A polynomial without
/// bit 31 is almost always one written in the normal order by mistake, such as `0x04C1_1DB7`
/// for [`CRC32_IEEE`].
pub const fn is_reflected(poly: u32) -> bool {
    poly & (1 << 31) != 0
}

/// Builds the 256-entry lookup table of a reflected CRC-32 polynomial at compile time.
///
/// # Examples
///
/// ```
/// use kernel::const_init::crc::{crc32_le, crc32_le_table, CRC32_IEEE};
///
/// static TABLE: [u32; 256] = crc32_le_table(CRC32_IEEE);
///
/// assert_eq!(TABLE[1], 0x7707_3096);
/// // The standard check value: CRC-32 of the ASCII digits "123456789".
/// assert_eq!(!crc32_le(!0, b"123456789", &TABLE), 0xCBF4_3926);
/// ```
pub const fn crc32_le_table(poly: u32) -> [u32; 256] {
    #[cfg(not(kshim_has_const_mut_refs))]
    use self::by_value::crc32_le_table as build;
    #[cfg(kshim_has_const_mut_refs)]
    use self::mut_refs::crc32_le_table as build;
    build(poly)
}

/// Feeds `data` into a running CRC `crc`, with the table of its polynomial, like the kernel's
/// `crc32_le(crc, p, len)`.
///
/// As in the kernel, neither the initial value nor the final result is inverted here; the
/// common CRC-32 is `!crc32_le(!0, data, table)`, as [`Crc32::checksum`] computes it.
pub const fn crc32_le(crc: u32, data: &[u8], table: &[u32; 256]) -> u32 {
    let mut crc = crc;
    let mut index = 0;
    while index < data.len() {
        crc = (crc >> 8) ^ table[((crc ^ data[index] as u32) & 0xFF) as usize];
        index += 1;
    }
    crc
}

/// The table filled in place through `&mut`, as `gen_crc32table.c` fills it.
#[cfg(kshim_has_const_mut_refs)]
mod mut_refs {
    pub(super) const fn crc32_le_table(poly: u32) -> [u32; 256] {
        let mut table = [0; 256];
        fill(&mut table, poly);
        table
    }

    const fn fill(table: &mut [u32; 256], poly: u32) {
        let mut crc = 1;
        // `half` walks the powers of two down from 128: entry `half` is the CRC of the single
        // bit it stands for, and every entry it combines with below it is already final.
        let mut half = 128;
        while half > 0 {
            shift_one_bit(&mut crc, poly);
            combine(table, half, crc);
            half >>= 1;
        }
    }

    const fn shift_one_bit(crc: &mut u32, poly: u32) {
        *crc = (*crc >> 1) ^ if *crc & 1 != 0 { poly } else { 0 };
    }

    const fn combine(table: &mut [u32; 256], half: usize, crc: u32) {
        let mut base = 0;
        while base < 256 {
            table[half + base] = crc ^ table[base];
            base += 2 * half;
        }
    }
}

/// The pre-1.83 replacement: the same algorithm, with the table passed in and returned.
// Kept compiled, and tested against the gated form, where that form is the one selected.
#[cfg_attr(kshim_has_const_mut_refs, allow(dead_code))]
mod by_value {
    pub(super) const fn crc32_le_table(poly: u32) -> [u32; 256] {
        let mut table = [0; 256];
        let mut crc = 1;
        let mut half = 128;
        while half > 0 {
            crc = shift_one_bit(crc, poly);
            table = combine(table, half, crc);
            half >>= 1;
        }
        table
    }

    const fn shift_one_bit(crc: u32, poly: u32) -> u32 {
        (crc >> 1) ^ if crc & 1 != 0 { poly } else { 0 }
    }

    const fn combine(table: [u32; 256], half: usize, crc: u32) -> [u32; 256] {
        let mut table = table;
        let mut base = 0;
        while base < 256 {
            table[half + base] = crc ^ table[base];
            base += 2 * half;
        }
        table
    }
}

/// A CRC-32 over a reflected polynomial, with its table built once at compile time.
///
/// The polynomial is a const generic, so every polynomial gets its own `'static` table and a
/// compile-time check that it is reflected. A wrong polynomial stops the build where
/// `Crc32::<POLY>` is first used, not the boot where it first checksums.
///
/// # Examples
///
/// ```
/// use kernel::const_init::crc::{Crc32, CRC32C, CRC32_IEEE};
///
/// assert_eq!(Crc32::<CRC32_IEEE>::checksum(b"123456789"), 0xCBF4_3926);
/// assert_eq!(Crc32::<CRC32C>::checksum(b"123456789"), 0xE306_9283);
/// ```
///
/// `0x04C1_1DB7` is CRC-32 written most significant bit first; it does not build:
///
/// ```compile_fail
/// use kernel::const_init::crc::Crc32;
///
/// let _ = Crc32::<0x04C1_1DB7>::checksum(b"123456789");
/// ```
pub struct Crc32<const POLY: u32>;

impl<const POLY: u32> Crc32<POLY> {
    /// The polynomial's lookup table, evaluated once by the compiler.
    pub fn table() -> &'static [u32; 256] {
        #[cfg(kshim_has_inline_const)]
        let table = self::inline_const::table::<POLY>();
        #[cfg(not(kshim_has_inline_const))]
        let table = ReplacementTable::<POLY>::get();
        table
    }

    /// The CRC-32 of `data`: initial value all ones, result inverted.
    pub fn checksum(data: &[u8]) -> u32 {
        !crc32_le(!0, data, Self::table())
    }
}

/// The pre-1.79 replacement for a `const` block in a generic function: a named associated
/// constant, which the compiler evaluates for each `POLY` that mentions it.
#[cfg_attr(kshim_has_inline_const, allow(dead_code))]
struct ReplacementTable<const POLY: u32>;

#[cfg_attr(kshim_has_inline_const, allow(dead_code))]
impl<const POLY: u32> ReplacementTable<POLY> {
    const TABLE: [u32; 256] = {
        assert!(
            is_reflected(POLY),
            "a reflected CRC-32 polynomial has its x^0 term in bit 31"
        );
        crc32_le_table(POLY)
    };

    fn get() -> &'static [u32; 256] {
        // Promoted to a `'static` allocation: `TABLE` is a constant with no interior
        // mutability and no destructor.
        &Self::TABLE
    }
}

// Before 1.79.0, `const { }` is feature-gated as it is parsed (E0658), so even a cfg'd-out
// block fails: keep it in its own file.
#[cfg(kshim_has_inline_const)]
mod inline_const;

#[cfg(test)]
mod tests {
    use super::*;

    /// The first entries of the kernel's `crc32table_le` and of `crc32ctable_le`, as
    /// `gen_crc32table` prints them.
    const IEEE_HEAD: [u32; 4] = [0x0000_0000, 0x7707_3096, 0xEE0E_612C, 0x9909_51BA];
    const CASTAGNOLI_HEAD: [u32; 4] = [0x0000_0000, 0xF26B_8303, 0xE13B_70F7, 0x1350_F3F4];

    /// Computes a CRC bit by bit, with no table, to check tables against.
    fn bitwise_crc32(poly: u32, data: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &byte in data {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = (crc >> 1) ^ if crc & 1 != 0 { poly } else { 0 };
            }
        }
        !crc
    }

    #[test]
    fn public_tables_match_the_kernel_and_the_bitwise_definition() {
        const IEEE: [u32; 256] = crc32_le_table(CRC32_IEEE);
        assert_eq!(IEEE[..4], IEEE_HEAD);
        assert_eq!(IEEE[255], 0x2D02_EF8D);
        assert_eq!(crc32_le_table(CRC32C)[..4], CASTAGNOLI_HEAD);
        let data = b"The quick brown fox jumps over the lazy dog";
        for poly in [CRC32_IEEE, CRC32C] {
            let table = crc32_le_table(poly);
            assert_eq!(!crc32_le(!0, data, &table), bitwise_crc32(poly, data));
        }
        assert_eq!(Crc32::<CRC32_IEEE>::checksum(data), 0x414F_A339);
        assert_eq!(Crc32::<CRC32_IEEE>::checksum(b""), 0);
    }

    #[cfg(kshim_has_const_mut_refs)]
    #[test]
    fn gated_matches_replacement_const_mut_refs() {
        // Both evaluated by the compiler, as the kernel's tables are.
        const GATED: [[u32; 256]; 2] = [
            mut_refs::crc32_le_table(CRC32_IEEE),
            mut_refs::crc32_le_table(CRC32C),
        ];
        const REPLACEMENT: [[u32; 256]; 2] = [
            by_value::crc32_le_table(CRC32_IEEE),
            by_value::crc32_le_table(CRC32C),
        ];
        assert_eq!(GATED, REPLACEMENT);
        assert_eq!(GATED[0][..4], IEEE_HEAD);
        assert_eq!(GATED[1][..4], CASTAGNOLI_HEAD);
        let check = b"123456789";
        assert_eq!(!crc32_le(!0, check, &GATED[0]), 0xCBF4_3926);
        assert_eq!(!crc32_le(!0, check, &GATED[1]), 0xE306_9283);
    }

    #[cfg(kshim_has_inline_const)]
    #[test]
    fn gated_matches_replacement_inline_const() {
        fn both<const POLY: u32>() -> (&'static [u32; 256], &'static [u32; 256]) {
            (
                inline_const::table::<POLY>(),
                ReplacementTable::<POLY>::get(),
            )
        }
        for (gated, replacement, check) in [
            (both::<CRC32_IEEE>().0, both::<CRC32_IEEE>().1, 0xCBF4_3926),
            (both::<CRC32C>().0, both::<CRC32C>().1, 0xE306_9283),
        ] {
            assert_eq!(gated, replacement);
            assert_eq!(!crc32_le(!0, b"123456789", gated), check);
        }
        // Each form evaluates once per polynomial: every call returns the same allocation.
        assert!(core::ptr::eq(
            inline_const::table::<CRC32C>(),
            inline_const::table::<CRC32C>()
        ));
        assert_ne!(both::<CRC32_IEEE>().0, both::<CRC32C>().0);
    }
}
