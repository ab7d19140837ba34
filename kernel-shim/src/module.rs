// SPDX-License-Identifier: GPL-2.0
//! Kernel modules: the [`Module`] trait and the [`module!`](crate::module!) declaration.
//!
//! In the kernel, `module!` turns a type that implements `Module` into a loadable module:
//! `init` runs on `insmod`, and dropping the value runs on `rmmod`. Here the same declaration
//! also gives the example a host `main` that loads the module, unloads it and prints what it
//! logged, so that every example runs with `cargo run --example NAME`. On x86-64 Linux it also
//! gives the loader what static keys need to patch the program's text: the program's
//! `__jump_table` and a `text_poke` built on `mprotect`, as the kernel's module loader hands
//! a module's jump entries to the jump label code.

use crate::error::Result;
use crate::jump_label::{self, TextPatching};
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
    text_patching: Option<TextPatching>,
}

impl ThisModule {
    /// Declares a module; `module!` calls this for its `THIS_MODULE` static.
    pub const fn new(info: ModuleInfo) -> Self {
        Self {
            info,
            text_patching: None,
        }
    }

    /// Adds how the host patches the program's text, which loading hands to [`jump_label::init`].
    ///
    /// `None` where the host cannot patch text; static keys then cannot be enabled where the
    /// `asm goto` form is compiled.
    ///
    /// # Safety
    ///
    /// As for [`jump_label::init`]: the table must be the running program's `__jump_table`, and
    /// the hook must write exactly one site's instruction, unobserved by other threads.
    pub const unsafe fn with_text_patching(self, text_patching: Option<TextPatching>) -> Self {
        Self {
            info: self.info,
            text_patching,
        }
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
/// fails, the error is returned, as `insmod` would report it, and nothing is dropped. Before
/// `init`, the module's text patching, if it has one, goes to [`jump_label::init`], as the
/// kernel's loader registers a module's jump entries before calling its init function.
pub fn load_unload<M: Module>(module: &'static ThisModule) -> Result<Log> {
    let _loader = LoaderGuard::acquire();
    if let Some(text_patching) = module.text_patching {
        // SAFETY: whoever built `module` with `with_text_patching` promised what `init` needs.
        unsafe { jump_label::init(text_patching) };
    }
    print::clear();
    let loaded = M::init(module)?;
    drop(loaded);
    Ok(print::snapshot())
}

/// Declares a kernel module, like the kernel's `module!`.
///
/// It defines `THIS_MODULE`, the log prefix the `pr_*!` macros use, and a host `main` that
/// loads and unloads the module and prints its log. `THIS_MODULE` carries the host's text
/// patching for static keys, so that loading the module, from `main` or from a test, lets
/// [`static_branch_unlikely!`](crate::static_branch_unlikely!) sites be patched. Its
/// `license=`, `author=` and `description=` strings go to `.modinfo`, each kept by
/// `__modinfo!`: in kernel mode with `#[used(compiler)]`, which the
/// crate that expands `module!` must allow (`used_with_arg`). Kbuild gives it to every driver
/// in its allowed list, and the kernel's `rust/Makefile` to its doctests with
/// `-Zcrate-attr='feature(used_with_arg)'`, as the hidden first line of this example does.
///
/// # Examples
///
/// `examples/rust_minimal.rs` is the whole story, logging included; in short:
///
/// ```
/// # #![cfg_attr(kshim_kernel_mode, feature(used_with_arg))]
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

        $crate::__modinfo!(license = $license);
        $crate::__modinfo!(description = $description);
        $($crate::__modinfo!(author = $author);)*

        $crate::__host_text_patching!();

        /// This module, as the kernel's `THIS_MODULE`.
        static THIS_MODULE: $crate::module::ThisModule = {
            let module = $crate::module::ThisModule::new($crate::module::ModuleInfo {
                name: $name,
                authors: &[$($author),*],
                description: $description,
                license: $license,
            });
            // SAFETY: `__KSHIM_TEXT_PATCHING` is the runner's own, for this very program: its
            // table is this program's `__jump_table` and its poke writes one site, while the
            // module's code is not running on another thread.
            unsafe { module.with_text_patching(__KSHIM_TEXT_PATCHING) }
        };

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

/// `field=value` and a NUL, as `modinfo` reads a `.modinfo` entry, in an array of its exact
/// length; [`module!`](crate::module!)'s entries are made with it.
///
/// # Panics
///
/// At compile time, where it is used for a `static`, if `N` is not `text`'s length plus one.
#[doc(hidden)]
pub const fn modinfo_entry<const N: usize>(text: &str) -> [u8; N] {
    let bytes = text.as_bytes();
    assert!(
        bytes.len() + 1 == N,
        "a .modinfo entry is its text and a NUL"
    );
    let mut entry = [0; N];
    let mut index = 0;
    while index < bytes.len() {
        entry[index] = bytes[index];
        index += 1;
    }
    entry
}

/// One `.modinfo` entry of the module being declared; [`module!`](crate::module!) expands it
/// once per field.
///
/// `modinfo` and the module loader read a module's `license=`, `author=` and `description=`
/// strings from its `.modinfo` section, which nothing in the code refers to: the compiler must
/// be told to keep each one. The kernel's `module!` says `#[used(compiler)]` (`used_with_arg`):
/// keep it in the object, as C's `__used` does, and let the kernel's linker script do the rest.
/// In kernel mode this expands to that form, [`__modinfo_used_compiler!`](crate::__modinfo_used_compiler!).
///
/// The stable replacement is a plain `#[used]` ([`__modinfo_used!`](crate::__modinfo_used!)),
/// which keeps the entry too and meant the same before Rust 1.89.0. From 1.89.0 on ELF it means
/// `#[used(linker)]` (rust-lang/rust#140872): the entry gets a `.modinfo` section of its own,
/// flagged `SHF_GNU_RETAIN` ("keep even if unreferenced"), beside the unflagged `.modinfo` that
/// C's `MODULE_LICENSE()` and friends fill, so the kernel's `module!` (6.12 on) asks for the
/// compiler-only form to keep C's layout. On the host nothing reads `.modinfo`, so the two forms
/// differ only in the object: the xtask's `modinfo` test reads the sections and their flags.
#[cfg(kshim_kernel_mode)]
#[doc(hidden)]
#[macro_export]
macro_rules! __modinfo {
    ($field:ident = $value:literal) => {
        const _: () = {
    $crate::__modinfo_used_compiler!(ENTRY: $field = $value);
        };
    };
}

/// One `.modinfo` entry of the module being declared, with a plain `#[used]` (stable mode).
#[cfg(not(kshim_kernel_mode))]
#[doc(hidden)]
#[macro_export]
macro_rules! __modinfo {
    ($field:ident = $value:literal) => {
        const _: () = {
    $crate::__modinfo_used!(ENTRY: $field = $value);
        };
    };
}

/// `static NAME`, a `.modinfo` entry that `#[used(compiler)]` keeps (`used_with_arg`); its
/// expansion needs the feature in the calling crate, which the kernel's allowed list gives to
/// every driver.
#[doc(hidden)]
#[macro_export]
macro_rules! __modinfo_used_compiler {
    ($name:ident: $field:ident = $value:literal) => {
        #[cfg_attr(
            any(target_os = "linux", target_os = "none"),
            link_section = ".modinfo"
        )]
        #[used(compiler)]
        static $name: [u8; ::core::concat!(::core::stringify!($field), "=", $value).len() + 1] =
            $crate::module::modinfo_entry(::core::concat!(::core::stringify!($field), "=", $value));
    };
}

/// `static NAME`, a `.modinfo` entry that a plain `#[used]` keeps: the stable form.
#[doc(hidden)]
#[macro_export]
macro_rules! __modinfo_used {
    ($name:ident: $field:ident = $value:literal) => {
        #[cfg_attr(
            any(target_os = "linux", target_os = "none"),
            link_section = ".modinfo"
        )]
        #[used]
        static $name: [u8; ::core::concat!(::core::stringify!($field), "=", $value).len() + 1] =
            $crate::module::modinfo_entry(::core::concat!(::core::stringify!($field), "=", $value));
    };
}

/// The host runner's text patching, expanded by [`module!`](crate::module!) into the program.
///
/// It defines `__KSHIM_TEXT_PATCHING`: the program's `__jump_table`, between the bounds GNU ld
/// and LLD define for a section named like a C identifier, and a `text_poke` that makes the
/// site's pages writable with `mprotect`, writes the instruction and makes them read-only
/// again. The shim stays `core`-only; the program that expands this links the C library
/// anyway. The bounds are declared weak, so that a program without any static branch still
/// links and sees an empty table.
///
/// The write is plain stores, not the kernel's `text_poke_bp()` protocol (an `int3` first, so
/// that another CPU never runs a half-written jump): a key must change state only while no
/// other thread runs its sites, which holds for the examples and the tests.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __host_text_patching {
    () => {
        /// How the host patches this program's text: its `__jump_table` and its `text_poke`.
        const __KSHIM_TEXT_PATCHING: ::core::option::Option<$crate::jump_label::TextPatching> =
            ::core::option::Option::Some($crate::jump_label::TextPatching {
                jump_table: __kshim_jump_table,
                text_poke: __kshim_text_poke,
            });

        /// This program's `__jump_table`, empty if it has no static branch.
        fn __kshim_jump_table() -> &'static [$crate::jump_label::JumpEntry] {
            let (start, stop): (usize, usize);
            // SAFETY: the assembly loads two addresses from the global offset table and
            // touches nothing else; a weak symbol that the linker did not define is zero.
            unsafe {
                ::core::arch::asm!(
                    ".weak __start___jump_table",
                    ".weak __stop___jump_table",
                    "mov {start}, qword ptr [rip + __start___jump_table@GOTPCREL]",
                    "mov {stop}, qword ptr [rip + __stop___jump_table@GOTPCREL]",
                    start = out(reg) start,
                    stop = out(reg) stop,
                    options(nostack, pure, nomem, preserves_flags),
                );
            }
            if start == 0 {
                return &[];
            }
            let length = (stop - start) / ::core::mem::size_of::<$crate::jump_label::JumpEntry>();
            // SAFETY: the linker placed the entries that `arch_static_branch` emitted, aligned,
            // back to back between the two bounds, in memory that lives as long as the program
            // and that nothing writes.
            unsafe {
                ::core::slice::from_raw_parts(
                    start as *const $crate::jump_label::JumpEntry,
                    length,
                )
            }
        }

        /// Writes `instruction` over the site at `site`, as the kernel's `text_poke()` does.
        ///
        /// # Safety
        ///
        /// As for [`$crate::jump_label::TextPoke`]; no other thread may run the site meanwhile.
        unsafe fn __kshim_text_poke(site: *mut u8, instruction: &[u8]) {
            use ::core::ffi::{c_int, c_long, c_void};
            extern "C" {
                fn mprotect(address: *mut c_void, length: usize, protection: c_int) -> c_int;
                fn sysconf(name: c_int) -> c_long;
            }
            const PROT_READ: c_int = 1;
            const PROT_WRITE: c_int = 2;
            const PROT_EXEC: c_int = 4;
            const _SC_PAGESIZE: c_int = 30;

            // SAFETY: `sysconf` only reads its argument.
            let page = unsafe { sysconf(_SC_PAGESIZE) } as usize;
            let first = site as usize & !(page - 1);
            let end = (site as usize + instruction.len() + page - 1) & !(page - 1);
            let pages = first as *mut c_void;
            // Executable all along: other threads may be running other code on these pages.
            let writable_text = PROT_READ | PROT_WRITE | PROT_EXEC;
            // SAFETY: the pages hold the program's text, mapped for its whole life; adding
            // write permission changes no byte.
            let writable = unsafe { mprotect(pages, end - first, writable_text) };
            assert_eq!(writable, 0, "text_poke: mprotect({first:#x}, {}) failed", end - first);
            // SAFETY: the caller guarantees that `site` is a site of this program's text, now
            // writable, of `instruction.len()` bytes that no thread runs meanwhile.
            unsafe {
                ::core::ptr::copy_nonoverlapping(instruction.as_ptr(), site, instruction.len())
            };
            // SAFETY: as above; the text goes back to read and execute, as it was mapped.
            let restored = unsafe { mprotect(pages, end - first, PROT_READ | PROT_EXEC) };
            assert_eq!(restored, 0, "text_poke: mprotect({first:#x}, {}) failed", end - first);
        }
    };
}

/// Elsewhere the runner cannot patch text: no `__jump_table`, no `text_poke`.
#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
#[doc(hidden)]
#[macro_export]
macro_rules! __host_text_patching {
    () => {
        /// This host cannot patch a program's text.
        const __KSHIM_TEXT_PATCHING: ::core::option::Option<$crate::jump_label::TextPatching> =
            ::core::option::Option::None;
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
