// SPDX-License-Identifier: GPL-2.0
//! C's types as bindgen writes them, like the kernel's `rust/bindings`: here `list_lru`'s.
//!
//! With `CONFIG_CFI_CLANG` every indirect call checks a hash of the callee's type (kCFI): C
//! hashes its own spelling of the type, `enum lru_status (*)(struct list_head *, ...)`, and
//! Rust must hash a function that C may call the same way. Rust hashes a `#[repr(C)]` type by
//! its name, as C does, but bindgen turns a C enum into a `#[repr(transparent)]` newtype
//! (`--newtype-enum`), which Rust hashes as the integer inside it: Binder's shrinker callback
//! `rust_shrink_free_page`, which returns an `lru_status`, would then fail C's check in
//! `list_lru_walk`. `#[cfi_encoding = "10lru_status"]` (`cfi_encoding`, unstable, tracking issue
//! #89653) tells Rust to hash the type as C's `enum lru_status`, Itanium-mangled; the kernel's
//! `rust/bindgen_parameters` puts it on `lru_status`, and `rust/bindings` and `rust/uapi` enable
//! the feature (7.2 on).
//!
//! The stable replacement, [`repr_c::lru_status`], is a `#[repr(C)]` struct of the same name:
//! Rust hashes it by that name, as C hashes the enum, so the check passes. What it costs is
//! the ABI: C returns an enum as an integer, while a struct, even of one integer, is returned
//! in memory on some ABIs (32-bit x86 and PowerPC among them) and only matches on the others,
//! x86-64, arm64 and RISC-V included, by their rules for small structs; and the hash matches
//! only while the Rust name is C's tag. The xtask's `kcfi` test reads both hashes, and C's,
//! from compiled objects.

// bindgen's names are C's, as in `rust/bindings`.
#![allow(non_camel_case_types)]

use crate::ffi::{c_long, c_ulong, c_void};

/// C's `struct list_head`: a link of a circular, doubly linked list.
#[repr(C)]
#[derive(Debug)]
pub struct list_head {
    /// The next link.
    pub next: *mut list_head,
    /// The previous link.
    pub prev: *mut list_head,
}

/// C's `struct list_lru_one`: one list of an LRU and how many items are on it.
#[repr(C)]
#[derive(Debug)]
pub struct list_lru_one {
    /// The list's head.
    pub list: list_head,
    /// The number of items on the list.
    pub nr_items: c_long,
}

/// The values of `enum lru_status`, as bindgen writes them, for either form.
macro_rules! lru_status_values {
    ($type:ident) => {
        impl $type {
            /// The item was removed from the list.
            pub const LRU_REMOVED: Self = Self(0);
            /// The item was removed, but the lock was dropped and taken again.
            pub const LRU_REMOVED_RETRY: Self = Self(1);
            /// The item was referenced: give it another pass.
            pub const LRU_ROTATE: Self = Self(2);
            /// The item cannot be locked: skip it.
            pub const LRU_SKIP: Self = Self(3);
            /// The item is not freeable.
            pub const LRU_RETRY: Self = Self(4);
            /// Stop walking the list.
            pub const LRU_STOP: Self = Self(5);
        }
    };
}

/// C's `enum lru_status` as bindgen's `--newtype-enum` writes it, hashed for kCFI as C's enum.
#[cfg(kshim_has_cfi_encoding)]
#[repr(transparent)]
#[cfi_encoding = "10lru_status"]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct lru_status(pub crate::ffi::c_uint);

#[cfg(not(kshim_has_cfi_encoding))]
pub use repr_c::lru_status;

/// The stable replacement for `cfi_encoding` on `lru_status`: a `#[repr(C)]` struct, which
/// Rust's kCFI hashes by its name.
pub mod repr_c {
    use crate::ffi::c_uint;

    /// C's `enum lru_status` as a `#[repr(C)]` struct of that name.
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct lru_status(pub c_uint);

    lru_status_values!(lru_status);
}

#[cfg(kshim_has_cfi_encoding)]
lru_status_values!(lru_status);

/// C's `list_lru_walk_cb`: what `list_lru_walk` calls for every item.
pub type list_lru_walk_cb = Option<
    unsafe extern "C" fn(
        item: *mut list_head,
        list: *mut list_lru_one,
        cb_arg: *mut c_void,
    ) -> lru_status,
>;

/// Makes `list` an empty LRU list, like `init_one_lru()`.
///
/// # Safety
///
/// `list` must be valid for writes and must not move while items are on it.
pub unsafe fn list_lru_init(list: *mut list_lru_one) {
    // SAFETY: the caller guarantees that `list` is valid for writes; the head points to itself.
    unsafe {
        let head = core::ptr::addr_of_mut!((*list).list);
        head.write(list_head {
            next: head,
            prev: head,
        });
        core::ptr::addr_of_mut!((*list).nr_items).write(0);
    }
}

/// Adds `item` at the tail of `list`, like `list_lru_add()`.
///
/// # Safety
///
/// `list` must be initialized, and `item` valid for writes, on no list, and not moving while
/// it is on this one.
pub unsafe fn list_lru_add(list: *mut list_lru_one, item: *mut list_head) {
    // SAFETY: the caller's guarantees; the four writes relink `tail <-> item <-> head`.
    unsafe {
        let head = core::ptr::addr_of_mut!((*list).list);
        let tail = (*head).prev;
        item.write(list_head {
            next: head,
            prev: tail,
        });
        (*tail).next = item;
        (*head).prev = item;
        (*list).nr_items += 1;
    }
}

/// Takes `item` off `list`, as a walk callback does before it returns `LRU_REMOVED`, like
/// `list_lru_isolate()`.
///
/// # Safety
///
/// `item` must be on `list`.
pub unsafe fn list_lru_isolate(list: *mut list_lru_one, item: *mut list_head) {
    // SAFETY: `item` is on `list`, so its neighbours are valid links of it.
    unsafe {
        (*(*item).prev).next = (*item).next;
        (*(*item).next).prev = (*item).prev;
        (*list).nr_items -= 1;
    }
}

/// The host's stand-in for C's `list_lru_walk_one()`: calls `isolate` on up to `nr_to_walk`
/// items, from the head, through the function pointer as C does, and returns how many it
/// removed.
///
/// `LRU_REMOVED` and `LRU_REMOVED_RETRY` count as removed, `LRU_STOP` ends the walk, anything
/// else leaves the item where it is.
///
/// # Safety
///
/// `list` must be initialized; `isolate` must follow `list_lru_walk_cb`'s rules (take the
/// item off the list with [`list_lru_isolate`] before returning `LRU_REMOVED`).
pub unsafe fn list_lru_walk(
    list: *mut list_lru_one,
    isolate: list_lru_walk_cb,
    cb_arg: *mut c_void,
    nr_to_walk: c_ulong,
) -> c_ulong {
    let Some(isolate) = isolate else {
        return 0;
    };
    let mut isolated = 0;
    let mut walked = 0;
    // SAFETY: `list` is initialized, so every link reached from its head is valid; the next
    // link is read before the callback may take the item off the list.
    unsafe {
        let head = core::ptr::addr_of_mut!((*list).list);
        let mut item = (*head).next;
        while item != head && walked < nr_to_walk {
            let next = (*item).next;
            walked += 1;
            let status = isolate(item, list, cb_arg);
            if status == lru_status::LRU_REMOVED || status == lru_status::LRU_REMOVED_RETRY {
                isolated += 1;
            } else if status == lru_status::LRU_STOP {
                break;
            }
            item = next;
        }
    }
    isolated
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::ptr::addr_of_mut;

    /// Items 0 to 5 on a list; the callback takes the even ones off.
    fn walk_with(isolate: list_lru_walk_cb) -> (c_ulong, c_long) {
        let mut list = core::mem::MaybeUninit::<list_lru_one>::uninit();
        let mut items: [list_head; 6] = core::array::from_fn(|_| list_head {
            next: core::ptr::null_mut(),
            prev: core::ptr::null_mut(),
        });
        let list = list.as_mut_ptr();
        let first = items.as_mut_ptr();
        // SAFETY: `list` and `items` are local and stay put; the callback follows the rules.
        unsafe {
            list_lru_init(list);
            for item in &mut items {
                list_lru_add(list, item);
            }
            let freed = list_lru_walk(list, isolate, first.cast(), 10);
            (freed, (*addr_of_mut!((*list).nr_items)))
        }
    }

    /// Takes even items off, with `cb_arg` pointing to the first item.
    unsafe extern "C" fn take_even(
        item: *mut list_head,
        list: *mut list_lru_one,
        cb_arg: *mut c_void,
    ) -> lru_status {
        // SAFETY: `cb_arg` is the first item of the array that `item` is in.
        let index = unsafe { item.offset_from(cb_arg.cast::<list_head>()) };
        if index % 2 == 0 {
            // SAFETY: `item` is on `list`.
            unsafe { list_lru_isolate(list, item) };
            lru_status::LRU_REMOVED
        } else {
            lru_status::LRU_SKIP
        }
    }

    #[test]
    fn the_walk_takes_off_what_the_callback_removes() {
        assert_eq!(walk_with(Some(take_even)), (3, 3));
        assert_eq!(walk_with(None), (0, 6));
    }

    /// The two forms at run time, on this host: the same layout, and a callback returning the
    /// replacement, called through C's pointer type, walks the same. What differs is the kCFI
    /// hash, only in an object built with `-Zsanitizer=kcfi` (the xtask's `kcfi` test), and
    /// the ABI on targets that return a struct in memory, which this host is not.
    #[cfg(kshim_has_cfi_encoding)]
    #[test]
    fn gated_matches_replacement_cfi_encoding() {
        use core::mem::{align_of, size_of, transmute};

        assert_eq!(size_of::<lru_status>(), size_of::<repr_c::lru_status>());
        assert_eq!(align_of::<lru_status>(), align_of::<repr_c::lru_status>());

        unsafe extern "C" fn take_even_repr_c(
            item: *mut list_head,
            list: *mut list_lru_one,
            cb_arg: *mut c_void,
        ) -> repr_c::lru_status {
            // SAFETY: the caller's guarantees are `take_even`'s.
            let status = unsafe { take_even(item, list, cb_arg) };
            repr_c::lru_status(status.0)
        }
        type ReprC = unsafe extern "C" fn(
            *mut list_head,
            *mut list_lru_one,
            *mut c_void,
        ) -> repr_c::lru_status;
        type Gated =
            unsafe extern "C" fn(*mut list_head, *mut list_lru_one, *mut c_void) -> lru_status;
        // SAFETY: only the return type differs, a struct of one `c_uint` against a transparent
        // `c_uint`, both returned in a register on the hosts this runs on (x86-64, arm64,
        // RISC-V), as C would call the function.
        let as_c_sees_it: list_lru_walk_cb =
            Some(unsafe { transmute::<ReprC, Gated>(take_even_repr_c as ReprC) });
        assert_eq!(walk_with(as_c_sees_it), walk_with(Some(take_even)));
    }
}
