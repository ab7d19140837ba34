// SPDX-License-Identifier: GPL-2.0
//! Compile-time assertions, like the kernel's `static_assert!` and `build_assert!`.
//!
//! A condition that the compiler can evaluate should fail the build, not the boot. The kernel
//! has three tools for it, and kshim shows how each maps onto Rust 1.78 and later:
//!
//! - [`static_assert!`](crate::static_assert) checks a condition on constants where an item may
//!   stand: `const _: () = assert!(...)`. It needs no feature at all, since `panic!` in constants
//!   is stable from Rust 1.57.0.
//! - A check on a *generic* parameter (`N` must be a power of two, a polynomial must be
//!   reflected) can only run once the parameter is known, at monomorphization. With
//!   `inline_const` (stable since 1.79.0, tracking issue #76001) it is written in place,
//!   `const { assert!(N.is_power_of_two()) }`, because a `const` block may name the enclosing
//!   function's generic parameters. Before 1.79.0 the replacement is a named associated `const`
//!   on a generic type, which the function mentions (`let () = Self::CHECK;`) to force its
//!   evaluation; [`Crc32`](crate::const_init::crc::Crc32) has both forms side by side.
//! - The kernel's `build_assert!` also covers values that only the optimizer can prove
//!   constant, by calling a function that does not link; a host build without optimization
//!   cannot do that, so the shim leaves it out rather than imitate it badly.
//!
//! A `const { }` block is special in one more way: a pre-1.79 parser rejects it even in code
//! that a `#[cfg]` removes, because the feature gate is recorded while parsing. The shim
//! therefore keeps every `const` block in an out-of-line module file that is declared under
//! the cfg, and is never parsed when the cfg is false.

/// Fails the build if a constant condition is false, like the kernel's `static_assert!`.
///
/// It expands to an anonymous `const` item, so it may stand wherever an item may: at module
/// level, in an `impl` block's function, next to the type it checks. The condition cannot
/// name generic parameters; see the [module documentation](self) for that case.
///
/// # Examples
///
/// ```
/// use kernel::static_assert;
///
/// #[repr(C)]
/// struct RawHeader {
///     magic: u32,
///     length: u32,
/// }
///
/// // The C side reads this structure; its layout is part of the ABI.
/// static_assert!(core::mem::size_of::<RawHeader>() == 8);
/// static_assert!(core::mem::align_of::<RawHeader>() == 4, "the C side packs headers by 4");
/// ```
///
/// A false condition stops the build:
///
/// ```compile_fail
/// use kernel::static_assert;
///
/// static_assert!(core::mem::size_of::<u64>() == 4, "u64 is eight bytes, so this never builds");
/// ```
#[macro_export]
macro_rules! static_assert {
    ($condition:expr $(,)?) => {
        const _: () = ::core::assert!($condition);
    };
    ($condition:expr, $message:literal $(,)?) => {
        const _: () = ::core::assert!($condition, $message);
    };
}

#[cfg(test)]
mod tests {
    // These lines are the test: each one that does not hold stops `cargo test` from building.
    crate::static_assert!(u32::MAX as u64 + 1 == 1 << 32);
    crate::static_assert!(
        core::mem::size_of::<crate::const_init::device_id::RawPciId>()
            == 24 + 2 * core::mem::size_of::<usize>(),
        "struct pci_device_id: six u32 fields, a kernel_ulong_t, a u32 and padding to 8"
    );
}
