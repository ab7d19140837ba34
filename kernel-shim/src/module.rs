//! Kernel modules: the [`Module`] trait and the [`module!`](crate::module!) declaration.
//!
//! In the kernel, `module!` turns a type that implements `Module` into a loadable module:
//! `init` runs on `insmod`, and dropping the value runs on `rmmod`. Here the same declaration
//! also gives the example a host `main` that loads the module, unloads it and prints what it
//! logged, so that every example runs with `cargo run --example NAME`.

use crate::error::Result;
use crate::print::{self, Log};
use core::sync::atomic::{AtomicBool, Ordering};

/// What `module!` declares about a module, as `modinfo` shows it.
#[derive(Debug)]
pub struct ModuleInfo {
    /// The module's name, also the prefix of everything it logs.
    pub name: &'static str,
    /// Its authors.
    pub authors: &'static [&'static str],
    /// One line saying what it does.
    pub description: &'static str,
    /// Its license, such as `"GPL"`.
    pub license: &'static str,
}

/// The module a piece of code belongs to, like the kernel's `THIS_MODULE`.
#[derive(Debug)]
pub struct ThisModule {
    info: ModuleInfo,
}

impl ThisModule {
    /// Declares a module; `module!` calls this for its `THIS_MODULE` static.
    pub const fn new(info: ModuleInfo) -> Self {
        Self { info }
    }

    /// What `module!` said about this module.
    pub fn info(&self) -> &ModuleInfo {
        &self.info
    }
}

/// A kernel module: built by `init` when it is loaded, dropped when it is unloaded.
///
/// As in the kernel, it must be `Send`: the thread that unloads a module (and drops it) need
/// not be the one that loaded it.
pub trait Module: Sized + Sync + Send {
    /// Called when the module is loaded; an error makes loading fail, as `insmod` reports it.
    fn init(module: &'static ThisModule) -> Result<Self>;
}

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
/// fails, the error is returned, as `insmod` would report it, and nothing is dropped.
pub fn load_unload<M: Module>(module: &'static ThisModule) -> Result<Log> {
    let _loader = LoaderGuard::acquire();
    print::clear();
    let loaded = M::init(module)?;
    drop(loaded);
    Ok(print::snapshot())
}

/// Declares a kernel module, like the kernel's `module!`.
///
/// It defines `THIS_MODULE`, the log prefix the `pr_*!` macros use, and a host `main` that
/// loads and unloads the module and prints its log.
///
/// # Examples
///
/// `examples/rust_minimal.rs` is the whole story, logging included; in short:
///
/// ```
/// use kernel::prelude::*;
///
/// module! {
///     type: RustMinimal,
///     name: "rust_minimal",
///     authors: ["Rust for Linux Contributors"],
///     description: "Rust minimal sample",
///     license: "GPL",
/// }
///
/// struct RustMinimal;
///
/// impl kernel::Module for RustMinimal {
///     fn init(module: &'static ThisModule) -> Result<Self> {
///         assert_eq!(module.info().name, "rust_minimal");
///         Ok(RustMinimal)
///     }
/// }
///
/// let log = kernel::module::load_unload::<RustMinimal>(&THIS_MODULE).unwrap();
/// assert_eq!(log.as_str(), "");
/// ```
#[macro_export]
macro_rules! module {
    (
        type: $type:ty,
        name: $name:literal,
        authors: [$($author:literal),* $(,)?],
        description: $description:literal,
        license: $license:literal $(,)?
    ) => {
        /// The module's log prefix, which the `pr_*!` macros use.
        const __LOG_PREFIX: &str = $name;

        /// This module, as the kernel's `THIS_MODULE`.
        static THIS_MODULE: $crate::module::ThisModule =
            $crate::module::ThisModule::new($crate::module::ModuleInfo {
                name: $name,
                authors: &[$($author),*],
                description: $description,
                license: $license,
            });

        /// Loads and unloads the module on the host and prints its log.
        fn main() {
            match $crate::module::load_unload::<$type>(&THIS_MODULE) {
                ::core::result::Result::Ok(log) => ::std::print!("{}", log.as_str()),
                ::core::result::Result::Err(error) => {
                    ::std::eprintln!("{}: init failed: {:?}", $name, error);
                    ::std::process::exit(1);
                }
            }
        }
    };
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::error::code::EBUSY;
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
            call_printk(Level::Info, module.info().name, format_args!("init"));
            Ok(Logs)
        }
    }

    impl Drop for Logs {
        fn drop(&mut self) {
            call_printk(Level::Info, "loader_test", format_args!("exit"));
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
