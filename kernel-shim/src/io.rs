// SPDX-License-Identifier: GPL-2.0
//! I/O regions checked before use, like the kernel's `io::Region` (`rust/kernel/io.rs`, 7.3).
//!
//! A [`Region<SIZE>`] is a span of I/O memory of at least `SIZE` bytes, whose base and size are
//! both 4-byte aligned, so that 32-bit accessors never straddle its end.
//! [`Region::ptr_try_from_raw_parts_mut`] checks a base and size from outside (a BAR, a device
//! tree) before making one; its size check is the kernel's one call of `is_multiple_of`,
//! `!size.is_multiple_of(4)`.
//!
//! `unsigned_is_multiple_of` (stable since Rust 1.87.0, tracking issue #128101) gives every
//! unsigned integer `is_multiple_of(rhs)`: `self % rhs == 0`, said as what it means, and
//! defined for `rhs == 0` as `self == 0` where `%` panics. 7.3 enables it in
//! `rust/kernel/lib.rs`; clippy's `manual_is_multiple_of` (warn by default, checked with 1.95.0's
//! clippy) flags the `%` spelling wherever the method exists.
//!
//! The stable replacement is `size % 4 == 0`: for the kernel's divisor, the constant 4, the same
//! machine code and the same answer for every size, so it costs nothing here; only a divisor
//! that may be zero tells the two apart, and there `%` panics.

use crate::error::{code::EINVAL, Result};

/// An I/O region of at least `SIZE` bytes.
///
/// # Invariants
///
/// The base address and the length are multiples of 4, and the length is at least `SIZE`.
pub struct Region<const SIZE: usize = 0> {
    inner: [u8],
}

/// The gated form: `is_multiple_of`, from `unsigned_is_multiple_of`.
#[cfg(kshim_has_unsigned_is_multiple_of)]
// Clippy checks the call against the 1.78 minimum; the cfg above already limits this module to
// compilers where the call is allowed.
#[allow(clippy::incompatible_msrv)]
pub(crate) mod method {
    /// Whether `size` is a whole number of 32-bit words.
    pub(crate) fn whole_words(size: usize) -> bool {
        size.is_multiple_of(4)
    }
}

/// The stable replacement: the remainder, which panics for a zero divisor.
pub(crate) mod remainder {
    /// Whether `size` is a whole number of 32-bit words.
    #[cfg_attr(kshim_has_unsigned_is_multiple_of, allow(dead_code))]
    // The replacement shown here is exactly what that lint asks to replace.
    #[allow(clippy::manual_is_multiple_of)]
    pub(crate) fn whole_words(size: usize) -> bool {
        size % 4 == 0
    }
}

#[cfg(kshim_has_unsigned_is_multiple_of)]
use method as selected;
#[cfg(not(kshim_has_unsigned_is_multiple_of))]
use remainder as selected;

impl<const SIZE: usize> Region<SIZE> {
    /// A raw pointer to the region at `base` of `size` bytes, unchecked.
    ///
    /// Like every raw pointer it may be made freely; one that does not uphold the invariants is
    /// not valid to use.
    pub fn ptr_from_raw_parts_mut(base: *mut u8, size: usize) -> *mut Self {
        core::ptr::slice_from_raw_parts_mut(base, size) as *mut Region<SIZE>
    }

    /// A raw pointer to the region at `base` of `size` bytes, or `EINVAL` if `base` or `size`
    /// is not 4-byte aligned or `size` is below `SIZE`.
    pub fn ptr_try_from_raw_parts_mut(base: *mut u8, size: usize) -> Result<*mut Self> {
        if size < SIZE || base.align_offset(4) != 0 || !selected::whole_words(size) {
            return Err(EINVAL);
        }
        Ok(Self::ptr_from_raw_parts_mut(base, size))
    }

    /// The region's bytes, for reading.
    pub fn as_bytes(&self) -> &[u8] {
        &self.inner
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    #[test]
    fn only_aligned_regions_of_the_minimum_size_are_made() {
        #[repr(align(4))]
        struct Window([u8; 32]);
        let mut window = Window([0; 32]);
        let base = window.0.as_mut_ptr();
        let made = |base, size| Region::<8>::ptr_try_from_raw_parts_mut(base, size).is_ok();
        assert!(made(base, 8) && made(base, 32));
        assert!(!made(base, 4), "below the minimum size");
        assert!(!made(base, 10), "a size that is no whole number of words");
        assert!(!made(base.wrapping_add(2), 8), "a base that is not aligned");
        let region = Region::<8>::ptr_try_from_raw_parts_mut(base, 16).unwrap();
        // SAFETY: made from `window`, which outlives it.
        unsafe {
            assert_eq!((*region).as_bytes(), [0; 16]);
        }
    }

    /// Both forms agree on every size, as they must for the constant 4; the difference the
    /// feature makes is only seen with a zero divisor, where `is_multiple_of` answers and `%`
    /// panics.
    #[cfg(kshim_has_unsigned_is_multiple_of)]
    #[test]
    fn gated_matches_replacement_unsigned_is_multiple_of() {
        for size in (0..4096).chain([usize::MAX - 3, usize::MAX]) {
            assert_eq!(
                method::whole_words(size),
                remainder::whole_words(size),
                "{size}"
            );
        }
        let divisor = core::hint::black_box(0usize);
        assert!(0usize.is_multiple_of(divisor));
        assert!(!4usize.is_multiple_of(divisor));
        #[allow(clippy::manual_is_multiple_of)]
        let remainder = std::panic::catch_unwind(|| 4usize % divisor == 0);
        assert!(remainder.is_err(), "`%` by zero panics");
    }
}
