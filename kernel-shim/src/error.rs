// SPDX-License-Identifier: GPL-2.0
//! Kernel-style errors: a negative errno wrapped in a type, as in `kernel::error`.

use core::fmt;

/// An error code from the kernel's errno space, such as `EINVAL`.
///
/// # Invariants
///
/// The value is a valid errno, in `1..=MAX_ERRNO`; it is stored positive and shown negative,
/// as the kernel returns it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Error(i32);

/// The largest errno the kernel hands out; `include/linux/err.h` calls it `MAX_ERRNO`.
pub const MAX_ERRNO: i32 = 4095;

impl Error {
    /// Builds an error from a negative errno, as C functions return it, or `None` if the value
    /// is not an error code.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::error::{code::EINVAL, Error};
    ///
    /// assert_eq!(Error::from_errno(-22), Some(EINVAL));
    /// assert_eq!(Error::from_errno(0), None);
    /// ```
    pub const fn from_errno(errno: crate::ffi::c_int) -> Option<Error> {
        if errno < -MAX_ERRNO || errno >= 0 {
            return None;
        }
        // INVARIANT: `-errno` is in `1..=MAX_ERRNO`, checked just above.
        Some(Error(-errno))
    }

    /// The negative errno, as the kernel's C side expects it: a C `int`.
    pub const fn to_errno(self) -> crate::ffi::c_int {
        -self.0
    }

    /// The errno's name, such as `"EINVAL"`, where this crate knows it.
    pub const fn name(self) -> Option<&'static str> {
        let mut index = 0;
        while index < code::NAMES.len() {
            let (error, name) = code::NAMES[index];
            if error.0 == self.0 {
                return Some(name);
            }
            index += 1;
        }
        None
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => formatter.write_str(name),
            None => write!(formatter, "Error({})", self.to_errno()),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, formatter)
    }
}

/// The result type of fallible kernel functions.
pub type Result<T = (), E = Error> = core::result::Result<T, E>;

/// The error codes this crate uses, named as in `include/uapi/asm-generic/errno-base.h`.
pub mod code {
    use super::Error;

    macro_rules! declare_errors {
        ($($name:ident = $value:literal, $doc:literal;)*) => {
            $(
                #[doc = $doc]
                pub const $name: Error = Error($value);
            )*
            pub(super) const NAMES: &[(Error, &str)] = &[$(($name, stringify!($name))),*];
        };
    }

    declare_errors! {
        EPERM = 1, "Operation not permitted.";
        ENOENT = 2, "No such file or directory.";
        EIO = 5, "I/O error.";
        ENOMEM = 12, "Out of memory.";
        EBUSY = 16, "Device or resource busy.";
        EINVAL = 22, "Invalid argument.";
        ENOSPC = 28, "No space left on device.";
        ERANGE = 34, "Result out of range.";
    }
}
