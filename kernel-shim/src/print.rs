// SPDX-License-Identifier: GPL-2.0
//! `pr_info!`-style logging, like the kernel's `print.rs`: the `pr_*!` macros and `call_printk`.
//!
//! The kernel's `pr_*!` macros hand a message to `printk`, which adds it to the kernel log
//! (`dmesg`); here `call_printk` hands it to [`crate::host::log`], the host's stand-in for that
//! log. Each message is logged with the module name that `module!` declares as its prefix, as
//! `pr_fmt` makes it in the kernel. As in the kernel, the message carries its own line end:
//! kernel code writes `pr_info!("...\n")`, and the macros add none.

use core::fmt;

pub use crate::host::log::Level;

/// Hands one message to the kernel log, as the `pr_*!` macros do through C's `_printk`.
#[doc(hidden)]
pub fn call_printk(level: Level, prefix: &str, args: fmt::Arguments<'_>) {
    crate::host::log::printk(level, prefix, args);
}

/// Logs at a given level with the calling module's prefix.
#[doc(hidden)]
#[macro_export]
// `crate::__LOG_PREFIX` must name the *calling* crate's prefix, as in the kernel's `pr_*!`.
#[allow(clippy::crate_in_macro_def)]
macro_rules! print_macro {
    ($level:ident, $($arg:tt)+) => {
        // `crate::__LOG_PREFIX` is resolved in the calling crate, where `module!` defines it,
        // just as in the kernel.
        $crate::print::call_printk(
            $crate::print::Level::$level,
            crate::__LOG_PREFIX,
            ::core::format_args!($($arg)+),
        )
    };
}

/// Logs an informational message, like the kernel's `pr_info!`.
///
/// The calling crate must declare its module with [`module!`](crate::module!), which defines
/// the prefix.
#[macro_export]
macro_rules! pr_info {
    ($($arg:tt)+) => { $crate::print_macro!(Info, $($arg)+) };
}

/// Logs a notice, like the kernel's `pr_notice!`.
#[macro_export]
macro_rules! pr_notice {
    ($($arg:tt)+) => { $crate::print_macro!(Notice, $($arg)+) };
}

/// Logs a warning, like the kernel's `pr_warn!`.
#[macro_export]
macro_rules! pr_warn {
    ($($arg:tt)+) => { $crate::print_macro!(Warning, $($arg)+) };
}

/// Logs an error, like the kernel's `pr_err!`.
#[macro_export]
macro_rules! pr_err {
    ($($arg:tt)+) => { $crate::print_macro!(Err, $($arg)+) };
}

/// Logs a debug message, like the kernel's `pr_debug!`.
#[macro_export]
macro_rules! pr_debug {
    ($($arg:tt)+) => { $crate::print_macro!(Debug, $($arg)+) };
}
