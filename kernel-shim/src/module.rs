// SPDX-License-Identifier: GPL-2.0
//! Kernel modules: the [`Module`] trait and the [`module!`](crate::module!) declaration.
//!
//! In the kernel, `module!` turns a type that implements `Module` into a loadable module:
//! `init` runs on `insmod`, and dropping the value runs on `rmmod`. Here the same declaration
//! also gives the example a host `main` that loads it with [`crate::host`]'s stand-in for the
//! module loader, so that every example runs with `cargo run --example NAME`.

use crate::error::Result;
use crate::jump_label::TextPatching;

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

    /// Adds how the host patches the program's text, which loading hands to
    /// [`jump_label::init`](crate::jump_label::init).
    ///
    /// `None` where the host cannot patch text; static keys then cannot be enabled where the
    /// `asm goto` form is compiled.
    ///
    /// # Safety
    ///
    /// As for [`jump_label::init`](crate::jump_label::init): the table must be the running
    /// program's `__jump_table`, and the hook must write exactly one site's instruction,
    /// unobserved by other threads.
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

    /// How the host patches the program's text, if it can; the loader hands it on.
    pub(crate) fn text_patching(&self) -> Option<TextPatching> {
        self.text_patching
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
/// let log = kernel::host::load_unload::<RustMinimal>(&THIS_MODULE).unwrap();
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
            // SAFETY: `__KSHIM_TEXT_PATCHING` is the host's own, for this very program: its
            // table is this program's `__jump_table` and its poke writes one site, while the
            // module's code is not running on another thread.
            unsafe { module.with_text_patching(__KSHIM_TEXT_PATCHING) }
        };

        /// Loads and unloads the module on the host and prints its log.
        fn main() {
            match $crate::host::load_unload::<$type>(&THIS_MODULE) {
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
#[cfg(kshim_has_used_with_arg)]
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
#[cfg(not(kshim_has_used_with_arg))]
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
