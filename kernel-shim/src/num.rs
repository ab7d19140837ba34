// SPDX-License-Identifier: GPL-2.0
//! Integers that fit in `N` bits, like the kernel's `Bounded` (`rust/kernel/num/bounded.rs`).
//!
//! A register field is a few bits of a wider word. [`Bounded<N>`] holds a value that needs at
//! most `N` bits, so that a register assembled from fields cannot spill one into the next, and
//! its widths are const generic arguments: [`Bounded::new::<VALUE>()`](Bounded::new) checks at
//! compile time that `VALUE` fits, [`Bounded::shr::<SHIFT, RES>()`](Bounded::shr) that `RES`
//! bits hold what is left after the shift. (The kernel's is generic over the integer type too,
//! `Bounded<u32, 4>`; the shim's holds a `u64`.)
//!
//! The width a caller wants is nearly always the one its destination already names, the field's
//! type, and `generic_arg_infer` (stable since Rust 1.89.0, tracking issue #85077) lets `_`
//! stand for a const generic argument as it always could for a type: `Bounded::<_>::new::<2>()`
//! takes `N` from the function's return type, `addr.shr::<32, _>()` takes `RES` from the field
//! it is stored in. The kernel enables it from 7.2 on, in `rust/kernel/lib.rs` (whose
//! `bitfield.rs` documents `Bounded::<u32, _>::new::<0>()`) and in `rust_allowed_features`,
//! because drivers write it: nova-core's `Bounded::<u64, _>::from(addr)
//! .shr::<FLUSH_SYSMEM_ADDR_SHIFT_HI, _>()` (`drivers/gpu/nova-core/fb/hal/ga100.rs`).
//!
//! The stable replacement writes the argument out, `Bounded::<2>::new::<2>()`: the same
//! function instance and the same code, since `_` is resolved to that very constant while type
//! checking, but the width is now written twice, and a field that is widened must be edited at
//! every call as well as in its type (the compiler refuses a call left behind, `Bounded<20>`
//! where `Bounded<24>` is expected, so the cost is the edits, not a silent bug). Before 1.89.0
//! `_` there is E0747, "type provided when a constant was expected", a type-checking error, so
//! both forms may stand side by side under `#[cfg]`, unlike `&raw` or `const { }`.

/// An integer that needs at most `N` bits, `0 < N <= 64`.
///
/// # Invariants
///
/// `self.0 >> N == 0` when `N < 64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bounded<const N: u32>(u64);

/// `VALUE` fits in `N` bits: checked at compile time wherever [`ValueFits::CHECK`] is named.
struct ValueFits<const N: u32, const VALUE: u64>;

impl<const N: u32, const VALUE: u64> ValueFits<N, VALUE> {
    const CHECK: () = assert!(
        N > 0 && N <= 64 && (N == 64 || VALUE >> N == 0),
        "the value does not fit in N bits"
    );
}

/// An `N`-bit value shifted right by `SHIFT` fits in `RES` bits: checked at compile time
/// wherever [`ShiftFits::CHECK`] is named.
struct ShiftFits<const N: u32, const SHIFT: u32, const RES: u32>;

impl<const N: u32, const SHIFT: u32, const RES: u32> ShiftFits<N, SHIFT, RES> {
    const CHECK: () = assert!(
        SHIFT < 64 && RES > 0 && RES <= 64 && RES as u64 + SHIFT as u64 >= N as u64,
        "RES must be at least N - SHIFT, and SHIFT below 64"
    );
}

impl<const N: u32> Bounded<N> {
    /// The constant `VALUE`, checked at compile time to fit in `N` bits.
    pub fn new<const VALUE: u64>() -> Self {
        #[allow(clippy::let_unit_value)] // Naming the constant is what evaluates the check.
        let () = ValueFits::<N, VALUE>::CHECK;
        // INVARIANT: checked just above.
        Self(VALUE)
    }

    /// `value` if it fits in `N` bits.
    pub fn try_new(value: u64) -> Option<Self> {
        // INVARIANT: only values that shift to zero are kept.
        (N > 0 && N <= 64 && (N == 64 || value >> N == 0)).then_some(Self(value))
    }

    /// The value.
    pub fn get(self) -> u64 {
        self.0
    }

    /// `self` shifted right by `SHIFT`, as a `Bounded<RES>`: `RES >= N - SHIFT` is checked at
    /// compile time.
    pub fn shr<const SHIFT: u32, const RES: u32>(self) -> Bounded<RES> {
        #[allow(clippy::let_unit_value)] // Naming the constant is what evaluates the check.
        let () = ShiftFits::<N, SHIFT, RES>::CHECK;
        // INVARIANT: an `N`-bit value shifted right by `SHIFT` needs `N - SHIFT <= RES` bits.
        Bounded(self.0 >> SHIFT)
    }
}

impl From<u64> for Bounded<64> {
    fn from(value: u64) -> Self {
        // INVARIANT: every `u64` needs at most 64 bits.
        Self(value)
    }
}

/// A two-bit mode field, the kernel's own example of `_` in `Bounded` (`rust/kernel/bitfield.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Field value 0.
    Low,
    /// Field value 1.
    High,
    /// Field value 2.
    Auto,
}

/// The gated form: the width is the return type's, `_` in the const argument.
#[cfg(kshim_has_generic_arg_infer)]
pub(crate) mod inferred {
    use super::{Bounded, Mode};

    /// The field value of `mode`, each constant checked against the field's width.
    pub(crate) fn mode_field(mode: Mode) -> Bounded<2> {
        match mode {
            Mode::Low => Bounded::<_>::new::<0>(),
            Mode::High => Bounded::<_>::new::<1>(),
            Mode::Auto => Bounded::<_>::new::<2>(),
        }
    }
}

/// The stable replacement: the width written out again at every constant.
pub(crate) mod written_out {
    use super::{Bounded, Mode};

    /// The field value of `mode`, each constant checked against the field's width.
    #[cfg_attr(kshim_has_generic_arg_infer, allow(dead_code))]
    pub(crate) fn mode_field(mode: Mode) -> Bounded<2> {
        match mode {
            Mode::Low => Bounded::<2>::new::<0>(),
            Mode::High => Bounded::<2>::new::<1>(),
            Mode::Auto => Bounded::<2>::new::<2>(),
        }
    }
}

#[cfg(kshim_has_generic_arg_infer)]
use inferred as selected;
#[cfg(not(kshim_has_generic_arg_infer))]
use written_out as selected;

impl From<Mode> for Bounded<2> {
    fn from(mode: Mode) -> Self {
        selected::mode_field(mode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_shifts_keep_their_widths() {
        assert_eq!(Bounded::<4>::new::<15>().get(), 15);
        assert_eq!(Bounded::<4>::try_new(16), None);
        assert_eq!(
            Bounded::<64>::try_new(u64::MAX).map(Bounded::get),
            Some(u64::MAX)
        );
        let address = Bounded::<52>::try_new(0x000f_edcb_a987_6543).unwrap();
        assert_eq!(address.shr::<32, 20>().get(), 0xfedcb);
        assert_eq!(Bounded::<2>::from(Mode::Auto).get(), 2);
    }

    /// Nothing can differ at run time: `_` is resolved to the written-out constant while type
    /// checking, so both forms call the same `Bounded::<2>::new::<VALUE>` instances. What the
    /// test can observe is that they give the same field for every mode, and that the inferred
    /// width is the return type's (a `Bounded<2>` that holds 2, which `Bounded<1>` could not).
    #[cfg(kshim_has_generic_arg_infer)]
    #[test]
    fn gated_matches_replacement_generic_arg_infer() {
        for mode in [Mode::Low, Mode::High, Mode::Auto] {
            assert_eq!(inferred::mode_field(mode), written_out::mode_field(mode));
        }
        assert_eq!(inferred::mode_field(Mode::Auto).get(), 2);
        assert_eq!(Bounded::<1>::try_new(2), None);
    }
}
