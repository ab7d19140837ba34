// SPDX-License-Identifier: GPL-2.0
//! C's types at the border with C: a handler that C calls, with `int` and `const char *`.
//!
//! `core::ffi::c_int`, `c_char` and the other C types (`core_ffi_c`, stable since Rust 1.64.0,
//! tracking issue #94501) are C's integer types as `core` defines them for every target. Linux
//! 6.1 needed Rust 1.62.0, so it enabled `core_ffi_c` in `rust/kernel/lib.rs` and, as the only
//! entry, in `rust_allowed_features`: `module!` expands `init_module() -> core::ffi::c_int` in
//! the driver's crate, and drivers write C callbacks with these types.
//!
//! The stable replacement is a table of aliases written by hand, as the out-of-tree kernel's
//! `c_types` was (`kernel::ffi::by_hand` here): nothing at run time, but a copy of every
//! architecture's ABI that nothing checks. Its classic slip is `char`'s sign: unsigned on arm64
//! and RISC-V, signed on x86-64. The feature has been stable since long before the kernel's
//! minimum, 1.78.0, so every compiler the shim supports takes the `core` form; the handler is
//! written with both, side by side, and the test checks that they agree.
//!
//! The module registers an interrupt-style handler the way C holds it, as an
//! `extern "C" fn(c_int, *const c_char) -> c_int`, calls it as C would, and logs the results.

use core::ffi::CStr;
use kernel::prelude::*;

module! {
    type: RustCoreFfiC,
    name: "rust_core_ffi_c",
    authors: ["Rust for Linux Contributors"],
    description: "Rust core_ffi_c sample",
    license: "GPL",
}

/// What C holds: a handler that takes an interrupt number and a device name, and returns 0 or
/// a negative errno.
type Handler = unsafe extern "C" fn(
    irq: kernel::ffi::c_int,
    name: *const kernel::ffi::c_char,
) -> kernel::ffi::c_int;

/// The handler written with `core::ffi`'s types, as the kernel's `kernel::ffi` re-exports them.
mod with_core_ffi {
    use kernel::ffi::{c_char, c_int};

    /// Accepts interrupts 0 to 15 from a device with a name, as C calls it.
    ///
    /// # Safety
    ///
    /// `name` must be null or point to a NUL-terminated string.
    pub(crate) unsafe extern "C" fn handle(irq: c_int, name: *const c_char) -> c_int {
        // SAFETY: the caller's guarantee is `super::check`'s.
        unsafe { super::check(irq, name) }
    }
}

/// The same handler with the types written by hand, as before `core::ffi`.
mod with_table {
    use kernel::ffi::by_hand::{c_char, c_int};

    /// Accepts interrupts 0 to 15 from a device with a name, as C calls it.
    ///
    /// # Safety
    ///
    /// `name` must be null or point to a NUL-terminated string.
    pub(crate) unsafe extern "C" fn handle(irq: c_int, name: *const c_char) -> c_int {
        // SAFETY: the caller's guarantee is `super::check`'s.
        unsafe { super::check(irq, name) }
    }
}

/// The handler's body, shared: `-EINVAL` for an interrupt out of range or no name.
///
/// # Safety
///
/// `name` must be null or point to a NUL-terminated string.
unsafe fn check(irq: i32, name: *const kernel::ffi::c_char) -> kernel::ffi::c_int {
    if !(0..16).contains(&irq) || name.is_null() {
        return kernel::error::code::EINVAL.to_errno();
    }
    // SAFETY: `name` is not null, and the caller guarantees it is NUL-terminated.
    let name = unsafe { CStr::from_ptr(name) };
    pr_info!("irq {} for {:?}\n", irq, name);
    0
}

struct RustCoreFfiC;

impl kernel::Module for RustCoreFfiC {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust core_ffi_c sample (init)\n");
        // The table's function has the same type as `core::ffi`'s on every kernel architecture,
        // so C can hold either; the compiler checks this assignment.
        let handlers: [Handler; 2] = [with_core_ffi::handle, with_table::handle];
        for handler in handlers {
            for (irq, name) in [(4, c"ttyS0".as_ptr()), (99, c"eth0".as_ptr())] {
                // SAFETY: `name` is a NUL-terminated literal.
                let result = unsafe { handler(irq, name) };
                pr_info!("handler({}) = {}\n", irq, result);
            }
        }
        Ok(RustCoreFfiC)
    }
}

impl Drop for RustCoreFfiC {
    fn drop(&mut self) {
        pr_info!("Rust core_ffi_c sample (exit)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_handlers_answer_the_same() {
        let log = kernel::host::load_unload::<RustCoreFfiC>(&THIS_MODULE).unwrap();
        let one_handler = "[info] rust_core_ffi_c: irq 4 for \"ttyS0\"\n\
                           [info] rust_core_ffi_c: handler(4) = 0\n\
                           [info] rust_core_ffi_c: handler(99) = -22\n";
        assert_eq!(
            log.as_str(),
            format!(
                "[info] rust_core_ffi_c: Rust core_ffi_c sample (init)\n\
                 {one_handler}{one_handler}\
                 [info] rust_core_ffi_c: Rust core_ffi_c sample (exit)\n"
            )
        );
    }
}
