// SPDX-License-Identifier: GPL-2.0
//! C's integer types, for everything that crosses to C: `kernel::ffi`, as the kernel's `ffi`.
//!
//! A function that C calls, or that calls C, must use C's types: an `int` is 32 bits on every
//! kernel architecture, but `long` is the pointer's width and `char` is signed on x86-64 and
//! LoongArch and unsigned on arm64 and RISC-V. `core::ffi::c_int` and its siblings
//! (`core_ffi_c`, stable since Rust 1.64.0, tracking issue #94501) give them once, for every
//! target, in `core`. Linux 6.1, the first tree with Rust, needed Rust 1.62.0, so its
//! `rust/kernel/lib.rs` enabled `core_ffi_c`, and so did its `rust_allowed_features`: `module!`
//! expands `extern "C" fn init_module() -> core::ffi::c_int` in the driver's own crate. The
//! kernel's errors ([`crate::error::Error::to_errno`]) are these types too.
//!
//! The stable replacement is the table [`by_hand`], what the out-of-tree Rust for Linux kept
//! as `kernel::c_types` before 6.1: one alias per C type and architecture, which is free at
//! run time and costs what a copy of an ABI table costs, keeping it right for every target,
//! unchecked by the compiler. The kernel has since grown such a table again, on purpose (its
//! `ffi` crate, `rust/ffi.rs` in 6.12: `c_char` is always `u8`, since the kernel builds its C
//! with `-funsigned-char`, and `c_long` is `isize`), and checks only each size against
//! `core::ffi`'s.
//!
//! `core_ffi_c` was stable long before the kernel's minimum (1.78.0), so every compiler the
//! shim supports has the `core` form; the table is kept beside it to show what it replaced,
//! and a test checks that the two name the same types.

pub use core::ffi::{
    c_char, c_int, c_long, c_longlong, c_schar, c_short, c_uchar, c_uint, c_ulong, c_ulonglong,
    c_ushort, c_void,
};

/// C's integer types written out by hand for the kernel's architectures, as the kernel wrote
/// them before `core::ffi` (its `c_types`).
///
/// They agree with `core::ffi` on Linux and on the four architectures the shim has modules
/// for (`catalog::ARCH_MODULES`), each of which says what its `char` is; on any other target
/// nothing checks them.
#[allow(non_camel_case_types)]
pub mod by_hand {
    /// C's `char`, whose sign is the architecture's: unsigned on arm64 and RISC-V, signed on
    /// x86-64 and LoongArch.
    #[cfg(kshim_have_arch)]
    pub type c_char = crate::arch::current::c_char;
    /// C's `char`, where the shim has no module for the architecture: a guess, as any table
    /// written by hand must make for a target it does not know.
    #[cfg(not(kshim_have_arch))]
    pub type c_char = i8;
    /// C's `signed char`.
    pub type c_schar = i8;
    /// C's `unsigned char`.
    pub type c_uchar = u8;
    /// C's `short`.
    pub type c_short = i16;
    /// C's `unsigned short`.
    pub type c_ushort = u16;
    /// C's `int`.
    pub type c_int = i32;
    /// C's `unsigned int`.
    pub type c_uint = u32;
    /// C's `long`: the pointer's width on Linux (LP64 on 64-bit targets).
    #[cfg(target_pointer_width = "64")]
    pub type c_long = i64;
    /// C's `long`: the pointer's width on Linux (ILP32 on 32-bit targets).
    #[cfg(not(target_pointer_width = "64"))]
    pub type c_long = i32;
    /// C's `unsigned long`.
    #[cfg(target_pointer_width = "64")]
    pub type c_ulong = u64;
    /// C's `unsigned long`.
    #[cfg(not(target_pointer_width = "64"))]
    pub type c_ulong = u32;
    /// C's `long long`.
    pub type c_longlong = i64;
    /// C's `unsigned long long`.
    pub type c_ulonglong = u64;
}

#[cfg(test)]
mod tests {
    use core::any::TypeId;

    /// `core_ffi_c` is stable on every compiler the shim supports, so this runs in both modes.
    #[test]
    fn gated_matches_replacement_core_ffi_c() {
        // Same type, not merely the same size: a signed `c_char` where C's is unsigned would
        // pass a size check and still turn byte 0xff into -1.
        macro_rules! same {
            ($($name:ident),*) => {$(
                assert_eq!(
                    TypeId::of::<super::$name>(),
                    TypeId::of::<super::by_hand::$name>(),
                    concat!("core::ffi::", stringify!($name), " and the table differ")
                );
            )*};
        }
        same!(
            c_char,
            c_schar,
            c_uchar,
            c_short,
            c_ushort,
            c_int,
            c_uint,
            c_long,
            c_ulong,
            c_longlong,
            c_ulonglong
        );
        // What the difference would have cost, had the table been wrong: the same byte read
        // back as C's `char` is 255 or -1.
        let byte = 0xffu8;
        let as_c_char = byte as super::c_char;
        let widened = i32::from(as_c_char);
        let unsigned = super::c_char::MIN == 0;
        assert_eq!(widened, if unsigned { 255 } else { -1 });
    }
}
