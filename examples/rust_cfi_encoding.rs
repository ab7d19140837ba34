// SPDX-License-Identifier: GPL-2.0
//! A shrinker callback that C calls through a pointer: its return type hashed as C's enum.
//!
//! Under the kernel's control-flow integrity (`CONFIG_CFI_CLANG`, kCFI), C checks a hash of
//! the callee's type before every indirect call. Binder's shrinker hands `list_lru_walk()` a
//! Rust callback returning `lru_status`, which bindgen writes as a `#[repr(transparent)]`
//! newtype, and Rust hashes a newtype as the integer inside it, not as C's `enum lru_status`:
//! C's check would fail. `#[cfi_encoding = "10lru_status"]` on the bindings' type
//! (`cfi_encoding`, unstable, tracking issue #89653) makes Rust hash it as C does; the kernel's
//! `rust/bindings` and `rust/uapi` enable it.
//!
//! The stable replacement, `kernel::bindings::repr_c::lru_status`, is a `#[repr(C)]` struct of
//! the same name, which Rust hashes by its name as C hashes the enum. Its cost is the ABI: a
//! struct is returned in memory on some ABIs (32-bit x86, PowerPC), where C's enum is an
//! integer in a register, and the hash holds only while the names agree. On the host nothing
//! checks the hash, so the module behaves the same either way; `cargo xtask`'s `kcfi` test
//! compiles this example with `-Zsanitizer=kcfi` and compares the hashes with C's.
//!
//! The module puts six pages on an LRU list and lets the C walk call its callback, which
//! frees the even ones, as Binder's `rust_shrink_free_page` frees unused pages.

use core::ffi::c_void;
use kernel::bindings::{self, list_head, list_lru_one, lru_status};
use kernel::prelude::*;

module! {
    type: RustCfiEncoding,
    name: "rust_cfi_encoding",
    authors: ["Rust for Linux Contributors"],
    description: "Rust cfi_encoding sample",
    license: "GPL",
}

/// A page on the shrinker's list, its `list_head` first, as Binder's `PageInfo`.
#[repr(C)]
struct PageInfo {
    lru: list_head,
    index: usize,
}

/// Called by `list_lru_walk` through C's `list_lru_walk_cb`: frees even pages.
///
/// # Safety
///
/// `item` must be the `lru` of a `PageInfo` on `lru`, as the walk guarantees.
#[no_mangle]
unsafe extern "C" fn rust_shrink_free_page(
    item: *mut list_head,
    lru: *mut list_lru_one,
    _cb_arg: *mut c_void,
) -> lru_status {
    // CAST: the `list_head` field is first in `PageInfo`.
    let page = item.cast::<PageInfo>();
    // SAFETY: `item` is the `lru` of a live `PageInfo`.
    let index = unsafe { (*page).index };
    if index % 2 != 0 {
        return lru_status::LRU_SKIP;
    }
    // SAFETY: `item` is on `lru`.
    unsafe { bindings::list_lru_isolate(lru, item) };
    pr_info!("freed page {}\n", index);
    lru_status::LRU_REMOVED
}

struct RustCfiEncoding;

impl kernel::Module for RustCfiEncoding {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust cfi_encoding sample (init)\n");
        let mut lru = core::mem::MaybeUninit::<list_lru_one>::uninit();
        let mut pages: [PageInfo; 6] = core::array::from_fn(|index| PageInfo {
            lru: list_head {
                next: core::ptr::null_mut(),
                prev: core::ptr::null_mut(),
            },
            index,
        });
        let lru = lru.as_mut_ptr();
        // SAFETY: `lru` and `pages` are local and stay put until the walk is over; the
        // callback follows `list_lru_walk_cb`'s rules.
        let (freed, left) = unsafe {
            bindings::list_lru_init(lru);
            for page in &mut pages {
                bindings::list_lru_add(lru, core::ptr::addr_of_mut!(page.lru));
            }
            let freed = bindings::list_lru_walk(
                lru,
                Some(rust_shrink_free_page),
                core::ptr::null_mut(),
                16,
            );
            (freed, (*lru).nr_items)
        };
        pr_info!("freed {} pages, {} left\n", freed, left);
        Ok(RustCfiEncoding)
    }
}

impl Drop for RustCfiEncoding {
    fn drop(&mut self) {
        pr_info!("Rust cfi_encoding sample (exit)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frees_the_even_pages() {
        let log = kernel::host::load_unload::<RustCfiEncoding>(&THIS_MODULE).unwrap();
        assert_eq!(
            log.as_str(),
            "[info] rust_cfi_encoding: Rust cfi_encoding sample (init)\n\
             [info] rust_cfi_encoding: freed page 0\n\
             [info] rust_cfi_encoding: freed page 2\n\
             [info] rust_cfi_encoding: freed page 4\n\
             [info] rust_cfi_encoding: freed 3 pages, 3 left\n\
             [info] rust_cfi_encoding: Rust cfi_encoding sample (exit)\n"
        );
    }
}
