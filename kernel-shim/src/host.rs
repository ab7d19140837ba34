// SPDX-License-Identifier: GPL-2.0
//! What the kernel gives a module from outside `rust/kernel`, stood in for on the host.
//!
//! Unlike the modules beside it, this one mirrors no file of `rust/kernel`: it is what lets an
//! example run as a program and a test check it. [`load_unload`] is the module loader (`insmod`
//! then `rmmod`), [`log`] is printk's ring buffer, and `__host_text_patching!`, which
//! [`module!`](crate::module!) expands, is the `__jump_table` and `text_poke()` that the
//! kernel's loader hands to the jump label code, built on `mprotect` on x86-64 Linux.

use crate::error::Result;
use crate::jump_label;
use crate::module::{Module, ThisModule};
use core::sync::atomic::{AtomicBool, Ordering};
use log::Log;

pub mod log;
mod text_patching;

/// Only one module is loaded at a time on the host, so that each load sees its own log.
static LOADER: AtomicBool = AtomicBool::new(false);

/// Holds the host's module loader; released when dropped.
struct LoaderGuard;

impl LoaderGuard {
    fn acquire() -> Self {
        while LOADER
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            core::hint::spin_loop();
        }
        LoaderGuard
    }
}

impl Drop for LoaderGuard {
    fn drop(&mut self) {
        LOADER.store(false, Ordering::Release);
    }
}

/// Loads a module (runs `init`), unloads it (drops it) and returns everything it logged.
///
/// Loads are serialized, so concurrent tests each see only their own module's log. If `init`
/// fails, the error is returned, as `insmod` would report it, and nothing is dropped. Before
/// `init`, the module's text patching, if it has one, goes to [`jump_label::init`], as the
/// kernel's loader registers a module's jump entries before calling its init function.
pub fn load_unload<M: Module>(module: &'static ThisModule) -> Result<Log> {
    let _loader = LoaderGuard::acquire();
    if let Some(text_patching) = module.text_patching() {
        // SAFETY: whoever built `module` with `with_text_patching` promised what `init` needs.
        unsafe { jump_label::init(text_patching) };
    }
    log::clear();
    let loaded = M::init(module)?;
    drop(loaded);
    Ok(log::snapshot())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::error::code::EBUSY;
    use crate::module::ModuleInfo;
    use crate::print::{call_printk, Level};

    /// Serializes the crate's own tests that read the shared log.
    pub(crate) fn serialize() -> impl Drop {
        LoaderGuard::acquire()
    }

    static INFO: ThisModule = ThisModule::new(ModuleInfo {
        name: "loader_test",
        authors: &[],
        description: "a module that logs its init and exit",
        license: "GPL",
    });

    struct Logs;

    impl Module for Logs {
        fn init(module: &'static ThisModule) -> Result<Self> {
            call_printk(Level::Info, module.info().name, format_args!("init\n"));
            Ok(Logs)
        }
    }

    impl Drop for Logs {
        fn drop(&mut self) {
            call_printk(Level::Info, "loader_test", format_args!("exit\n"));
        }
    }

    struct Fails;

    impl Module for Fails {
        fn init(_module: &'static ThisModule) -> Result<Self> {
            Err(EBUSY)
        }
    }

    #[test]
    fn load_runs_init_then_drop_and_returns_the_log() {
        let log = load_unload::<Logs>(&INFO).unwrap();
        assert!(log
            .lines()
            .eq(["[info] loader_test: init", "[info] loader_test: exit"]));
    }

    #[test]
    fn failed_init_is_reported() {
        assert_eq!(load_unload::<Fails>(&INFO).unwrap_err(), EBUSY);
    }
}
