// SPDX-License-Identifier: GPL-2.0
//! The caller's file name as a C string, for C's `__might_sleep(file, line)`.
//!
//! A function that may sleep starts with `might_sleep()`, and C's `__might_sleep()` names the
//! caller's `__FILE__` and `__LINE__` when it is called from atomic context. From Rust the
//! caller is `Location::caller()` in a `#[track_caller]` function, and its `file()` is a `&str`
//! without the NUL that C needs. `Location::file_with_nul` (`file_with_nul`, tracking issue
//! #141727; in Rust 1.89.0, renamed `file_as_c_str` in 1.91.0 and stable under that name since
//! 1.92.0) returns the compiler's own NUL-terminated copy. The kernel enables it from 7.2 on,
//! where `CONFIG_RUSTC_HAS_FILE_WITH_NUL` says the compiler has it, for
//! `kernel::file_from_location` and so for `might_sleep()` in `rust/kernel/task.rs`.
//!
//! The stable replacement, `kernel::task::FileName`, copies `file()` into a buffer and appends
//! the NUL: a copy on every call, 256 bytes of stack, and only the end of a longer name. (The
//! kernel's own fallback before 1.89.0 passes the placeholder `<Location::file_as_c_str() not
//! supported>`, losing the name.) Both forms give C the same string; the gated one is taken
//! where the compiler has it, in kernel mode under the kernel's condition, in stable mode from
//! 1.92.0 on.
//!
//! The module calls a function that may sleep, as a driver waits for its device, and logs the
//! file name both forms hand to C.

use core::ffi::CStr;
use core::panic::Location;
use kernel::prelude::*;

module! {
    type: RustFileWithNul,
    name: "rust_file_with_nul",
    authors: ["Rust for Linux Contributors"],
    description: "Rust file_with_nul sample",
    license: "GPL",
}

/// Waits for the device, as a driver would: a function that may sleep.
#[track_caller]
fn wait_for_device() {
    kernel::task::might_sleep();
}

/// Logs `loc`'s file name as C receives it: the compiler's own C string.
#[cfg(kshim_has_file_with_nul)]
fn log_file_for_c(loc: &Location<'_>) {
    log_c_string(kernel::task::file_from_location(loc));
}

/// Logs `loc`'s file name as C receives it: a copy with a NUL appended.
#[cfg(not(kshim_has_file_with_nul))]
fn log_file_for_c(loc: &Location<'_>) {
    log_c_string(kernel::task::FileName::of(loc).as_c_str());
}

fn log_c_string(file: &CStr) {
    pr_info!(
        "C gets {} bytes and a NUL: {}\n",
        file.to_bytes().len(),
        file.to_str().unwrap_or("(not UTF-8)")
    );
}

struct RustFileWithNul;

impl kernel::Module for RustFileWithNul {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust file_with_nul sample (init)\n");
        wait_for_device();
        log_file_for_c(Location::caller());
        Ok(RustFileWithNul)
    }
}

impl Drop for RustFileWithNul {
    fn drop(&mut self) {
        pr_info!("Rust file_with_nul sample (exit)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_gets_the_callers_file_and_line() {
        let log = kernel::host::load_unload::<RustFileWithNul>(&THIS_MODULE).unwrap();
        let file = file!();
        // `wait_for_device()`'s line in `init`, which `#[track_caller]` passes on.
        let source = include_str!("rust_file_with_nul.rs");
        let line = 1 + source
            .lines()
            .position(|line| line.trim() == "wait_for_device();")
            .unwrap();
        assert_eq!(
            log.as_str(),
            format!(
                "[info] rust_file_with_nul: Rust file_with_nul sample (init)\n\
                 [debug] might_sleep: {file}:{line}\n\
                 [info] rust_file_with_nul: C gets {} bytes and a NUL: {file}\n\
                 [info] rust_file_with_nul: Rust file_with_nul sample (exit)\n",
                file.len()
            )
        );
    }
}
