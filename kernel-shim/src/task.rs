// SPDX-License-Identifier: GPL-2.0
//! The caller's file name for C: [`might_sleep`] and [`file_from_location`], as in the kernel.
//!
//! C's `might_sleep()` passes `__FILE__` and `__LINE__` to `__might_sleep()`, which names them
//! when a sleeping function is called from atomic context. The kernel's Rust `might_sleep()`
//! (`rust/kernel/task.rs`) is `#[track_caller]` and passes its caller's `Location`, whose
//! `file()` is a `&str` with no NUL. `Location::file_with_nul` (`file_with_nul`, tracking
//! issue #141727, first in Rust 1.89.0, renamed `file_as_c_str` in 1.91.0, stable under that
//! name since 1.92.0) hands out the compiler's own NUL-terminated copy as a `&CStr`, at no
//! cost. The kernel (7.2 on) enables the feature from `CONFIG_RUSTC_HAS_FILE_WITH_NUL` on, and
//! its `file_from_location` (in `lib.rs`) calls the method by the name the compiler has;
//! before 1.89.0 it gives up and passes `c"<Location::file_as_c_str() not supported>"`.
//!
//! The stable replacement here keeps the name instead: [`FileName`] copies `file()` into a
//! buffer and appends the NUL, at the cost of the copy on every call, [`FILE_NAME_CAPACITY`]
//! bytes of stack, and a name cut to its last bytes when it is longer.

use crate::ffi::{c_char, c_int};
use core::ffi::CStr;
use core::panic::Location;

/// Gets the C string file name of a [`Location`], as the kernel's `kernel::file_from_location`.
///
/// The gated form: no copy, the compiler's own NUL-terminated file name.
#[cfg(kshim_has_file_with_nul)]
// Clippy checks the call against the 1.78 minimum; the cfg above already limits this function
// to compilers that have the method.
#[allow(clippy::incompatible_msrv)]
#[inline]
pub fn file_from_location<'a>(loc: &'a Location<'a>) -> &'a CStr {
    #[cfg(CONFIG_RUSTC_HAS_FILE_AS_C_STR)]
    {
        loc.file_as_c_str()
    }

    // Rust 1.89.0 and 1.90.0, before the rename; no compiler of this project's pins is one.
    #[cfg(not(CONFIG_RUSTC_HAS_FILE_AS_C_STR))]
    {
        loc.file_with_nul()
    }
}

/// The longest file name [`FileName`] keeps, NUL included.
pub const FILE_NAME_CAPACITY: usize = 256;

/// A file name copied out of a [`Location`] with a NUL appended: the stable replacement for
/// `Location::file_as_c_str`.
///
/// # Invariants
///
/// `bytes[..len]` is the name, holding no NUL, and `bytes[len]` is a NUL.
pub struct FileName {
    bytes: [u8; FILE_NAME_CAPACITY],
    len: usize,
}

impl FileName {
    /// Copies `loc`'s file name, keeping its last `FILE_NAME_CAPACITY - 1` bytes if longer.
    pub fn of(loc: &Location<'_>) -> Self {
        Self::from_name(loc.file())
    }

    /// Copies `name` as [`FileName::of`] copies a location's.
    pub fn from_name(name: &str) -> Self {
        let name = name.as_bytes();
        // A file name has no NUL (the compiler's own copy relies on that); stop at one anyway.
        let name = &name[..name
            .iter()
            .position(|&byte| byte == 0)
            .unwrap_or(name.len())];
        let kept = &name[name.len().saturating_sub(FILE_NAME_CAPACITY - 1)..];
        let mut bytes = [0; FILE_NAME_CAPACITY];
        bytes[..kept.len()].copy_from_slice(kept);
        // INVARIANT: `kept` has no NUL and is shorter than the buffer, which is zeroed after it.
        FileName {
            bytes,
            len: kept.len(),
        }
    }

    /// The copied name as a C string, borrowed from the buffer.
    pub fn as_c_str(&self) -> &CStr {
        // SAFETY: by the type invariant, `bytes[..=len]` is the name with no NUL, then one.
        unsafe { CStr::from_bytes_with_nul_unchecked(&self.bytes[..=self.len]) }
    }
}

/// The host's stand-in for C's `__might_sleep(file, line)`, called as C is: it reads the file
/// name up to its NUL and logs where the check was made, at debug level.
///
/// # Safety
///
/// `file` must point to a NUL-terminated string.
unsafe extern "C" fn __might_sleep(file: *const c_char, line: c_int) {
    // SAFETY: the caller guarantees a NUL-terminated string, as C's `__FILE__` is.
    let file = unsafe { CStr::from_ptr(file) };
    crate::print::call_printk(
        crate::print::Level::Debug,
        "might_sleep",
        format_args!("{}:{}\n", file.to_str().unwrap_or("(not UTF-8)"), line),
    );
}

/// Marks a function that may sleep, like the kernel's `might_sleep()`: C's `__might_sleep`
/// gets the caller's file and line, here logged at debug level.
#[track_caller]
#[inline]
pub fn might_sleep() {
    let loc = Location::caller();
    let line = loc.line() as c_int;

    #[cfg(kshim_has_file_with_nul)]
    let file = file_from_location(loc);

    #[cfg(not(kshim_has_file_with_nul))]
    let copied = FileName::of(loc);
    #[cfg(not(kshim_has_file_with_nul))]
    let file = copied.as_c_str();

    // SAFETY: `file` is a C string that lives for the call.
    unsafe { __might_sleep(file.as_ptr(), line) }
}

#[cfg(test)]
mod tests {
    // The shim is `core` only, but its tests run with `std`.
    extern crate std;

    use super::*;

    #[test]
    fn a_long_name_keeps_its_end() {
        let long = "d/".repeat(200) + "driver.rs";
        let copied = FileName::from_name(&long);
        let kept = copied.as_c_str().to_bytes();
        assert_eq!(kept.len(), FILE_NAME_CAPACITY - 1);
        assert!(kept.ends_with(b"/driver.rs"));
        assert_eq!(FileName::from_name("a.rs").as_c_str(), c"a.rs");
    }

    #[test]
    fn might_sleep_hands_c_the_callers_file_and_line() {
        let _serial = crate::host::tests::serialize();
        crate::host::log::clear();
        let line = line!() + 1;
        might_sleep();
        let log = crate::host::log::snapshot();
        assert_eq!(
            log.as_str(),
            std::format!("[debug] might_sleep: {}:{line}\n", file!())
        );
    }

    #[cfg(kshim_has_file_with_nul)]
    #[test]
    fn gated_matches_replacement_file_with_nul() {
        let loc = Location::caller();
        let gated = file_from_location(loc);
        let copied = FileName::of(loc);
        let replacement = copied.as_c_str();
        assert_eq!(gated, replacement);
        assert_eq!(gated.to_str(), Ok(file!()));
        // What the replacement costs: the gated form is the compiler's own bytes, the ones
        // `file()` borrows, where the replacement is a copy on the stack.
        assert_eq!(gated.as_ptr().cast::<u8>(), loc.file().as_ptr());
        assert_ne!(replacement.as_ptr(), gated.as_ptr());
    }
}
