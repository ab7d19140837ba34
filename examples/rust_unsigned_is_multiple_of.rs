// SPDX-License-Identifier: GPL-2.0
//! `is_multiple_of`: I/O regions whose size must be a whole number of 32-bit words.
//!
//! `unsigned_is_multiple_of` (stable since Rust 1.87.0, tracking issue #128101) gives unsigned
//! integers `n.is_multiple_of(m)`, which is `n % m == 0` said as meant, and is `n == 0` for
//! `m == 0` where `%` panics. 7.3 enables it in `rust/kernel/lib.rs` for one check:
//! `io::Region::ptr_try_from_raw_parts_mut` refuses a size that is not `is_multiple_of(4)`, so
//! that 32-bit accessors never run off a region's end (the shim's [`kernel::io::Region`]).
//!
//! A driver gets that check through `Region`; it cannot use the feature itself, since 7.3's
//! `rust_allowed_features` does not list it: before 1.87.0 a driver writes `size % 4 == 0`,
//! which for a constant divisor like 4 is the same machine code and the same answer, so the
//! replacement costs nothing. Only a divisor that may be zero tells them apart.
//!
//! This module checks the windows a device describes in its one BAR and keeps the usable ones.

use kernel::io::Region;
use kernel::prelude::*;

module! {
    type: RustUnsignedIsMultipleOf,
    name: "rust_unsigned_is_multiple_of",
    authors: ["Rust for Linux Contributors"],
    description: "Rust unsigned_is_multiple_of sample",
    license: "GPL",
}

/// The smallest window the driver uses: a status and a doorbell register, 8 bytes.
const MIN_WINDOW: usize = 8;

/// The BAR's memory: 64 bytes, 4-byte aligned, as MMIO is.
#[repr(C, align(4))]
struct Bar([u8; 64]);

/// The driver's own check of a window size, in whole words: the method where it is stable, the
/// remainder before that (a driver cannot enable the feature, Kbuild does not allow it).
fn whole_words(size: usize) -> bool {
    // Clippy checks the call against the 1.78 minimum; the cfg is where it is stable.
    #[cfg(kshim_stable_unsigned_is_multiple_of)]
    #[allow(clippy::incompatible_msrv)]
    let whole = size.is_multiple_of(4);
    // The replacement, which that lint asks to replace where the method exists.
    #[cfg(not(kshim_stable_unsigned_is_multiple_of))]
    #[allow(clippy::manual_is_multiple_of)]
    let whole = size % 4 == 0;
    whole
}

struct RustUnsignedIsMultipleOf {
    usable: usize,
}

impl kernel::Module for RustUnsignedIsMultipleOf {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust unsigned_is_multiple_of sample (init)\n");
        let mut bar = Bar([0; 64]);
        let base = bar.0.as_mut_ptr();
        // (name, offset, size), as the device's capability list might give them.
        let windows = [
            ("status", 0, 8),
            ("mailbox", 8, 22),
            ("doorbell", 32, 4),
            ("queue", 36, 28),
            ("debug", 6, 8),
        ];
        let mut usable = 0;
        for (name, offset, size) in windows {
            let made =
                Region::<MIN_WINDOW>::ptr_try_from_raw_parts_mut(base.wrapping_add(offset), size);
            match made {
                Ok(_) => {
                    usable += 1;
                    pr_info!("{name}: {size} bytes at {offset:#x}, usable\n");
                }
                Err(error) => pr_info!(
                    "{name}: {size} bytes at {offset:#x} refused ({error:?}), whole words: {}\n",
                    whole_words(size)
                ),
            }
        }
        Ok(RustUnsignedIsMultipleOf { usable })
    }
}

impl Drop for RustUnsignedIsMultipleOf {
    fn drop(&mut self) {
        pr_info!("{} usable windows\n", self.usable);
        pr_info!("Rust unsigned_is_multiple_of sample (exit)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_aligned_windows() {
        let log = kernel::host::load_unload::<RustUnsignedIsMultipleOf>(&THIS_MODULE).unwrap();
        assert_eq!(
            log.as_str(),
            "[info] rust_unsigned_is_multiple_of: Rust unsigned_is_multiple_of sample (init)\n\
             [info] rust_unsigned_is_multiple_of: status: 8 bytes at 0x0, usable\n\
             [info] rust_unsigned_is_multiple_of: mailbox: 22 bytes at 0x8 refused (EINVAL), whole words: false\n\
             [info] rust_unsigned_is_multiple_of: doorbell: 4 bytes at 0x20 refused (EINVAL), whole words: true\n\
             [info] rust_unsigned_is_multiple_of: queue: 28 bytes at 0x24, usable\n\
             [info] rust_unsigned_is_multiple_of: debug: 8 bytes at 0x6 refused (EINVAL), whole words: true\n\
             [info] rust_unsigned_is_multiple_of: 2 usable windows\n\
             [info] rust_unsigned_is_multiple_of: Rust unsigned_is_multiple_of sample (exit)\n"
        );
    }

    /// The driver's two spellings agree on every size, as they must for the divisor 4; with a
    /// zero divisor the method answers where `%` panics, the one difference there is.
    #[cfg(kshim_stable_unsigned_is_multiple_of)]
    #[allow(clippy::incompatible_msrv)]
    #[test]
    fn gated_matches_replacement_unsigned_is_multiple_of() {
        for size in 0..1024usize {
            #[allow(clippy::manual_is_multiple_of)]
            let replacement = size % 4 == 0;
            assert_eq!(whole_words(size), replacement, "{size}");
        }
        let zero = std::hint::black_box(0usize);
        assert!(0usize.is_multiple_of(zero) && !8usize.is_multiple_of(zero));
        #[allow(clippy::manual_is_multiple_of)]
        let remainder = std::panic::catch_unwind(|| 8usize % zero == 0);
        assert!(remainder.is_err());
    }
}
