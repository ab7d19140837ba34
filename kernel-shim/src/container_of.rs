// SPDX-License-Identifier: GPL-2.0
//! `container_of!` and intrusive list links: raw pointers to fields, with no reference between.
//!
//! Kernel data structures embed their links: a `struct list_head` inside the object, reached
//! from C and from other objects through raw pointers. Going from the object to a field, or
//! back from a field to the object (`container_of`), must not create a `&` or `&mut` on the
//! way: the memory may be uninitialized, and other pointers alias it, so a reference would
//! assert things that are not true. `&raw const place` / `&raw mut place` (`raw_ref_op`, stable
//! since Rust 1.82.0, tracking issue #64490) make the pointer directly; the stable
//! replacement, `core::ptr::addr_of!` / `addr_of_mut!`, is the same operation spelled as a
//! macro, at no run-time cost at all. The kernel switched to `&raw` because it reads as what
//! it is. At the seed commit `raw_ref_op` was on the allowed list though no kernel macro put
//! `&raw` into a driver: the entry served the KUnit doctests, a crate under `rust/` that Kbuild
//! compiles with the drivers' rule, `-Zallow-features` included. The kernel's
//! [`container_of!`](crate::container_of!) took `&raw` only after the seed (April 2025),
//! together with a check of the field pointer's type; before, it cast to `*const u8`, stepped
//! back with `ptr.sub(offset)` and cast the result `as *const $type`, with no check.
//!
//! Where the gated syntax may live is the lesson here:
//!
//! - In a function body, `&raw` is rejected by compilers before 1.82.0 while parsing, even in
//!   an item that `#[cfg]` removes. The `raw_ref` form is therefore a file of its own,
//!   declared under the cfg, and the [`addr_of`] form stays here.
//! - A `macro_rules!` body is only a token tree until the macro is expanded, and `& raw const`
//!   are three ordinary tokens to any compiler, so both `container_of!` forms are defined
//!   here, always. Which one `container_of!` expands to is chosen by this crate's cfgs.
//! - The expansion is then parsed in the crate that invokes the macro and feature-gated there:
//!   in kernel mode on a compiler before 1.82.0, a crate that uses `container_of!` must enable
//!   `raw_ref_op` itself (Rust 1.63.0 rejects a `&raw` from another crate's macro, checked).
//!   So once the kernel's `container_of!` took `&raw`, drivers needed the allowed list's
//!   `raw_ref_op` too, on compilers before 1.82.0.

/// Implemented by `*const T` and `*mut T`, so that `container_of!` can name `T`.
#[doc(hidden)]
pub trait FieldPointer {
    /// The type the pointer points to.
    type Pointee: ?Sized;
}

impl<T: ?Sized> FieldPointer for *const T {
    type Pointee = T;
}

impl<T: ?Sized> FieldPointer for *mut T {
    type Pointee = T;
}

/// Fails to compile unless `field_ptr` points to the type of the named field; used by
/// `container_of!`.
#[doc(hidden)]
#[inline(always)]
pub fn assert_same_pointee<P: FieldPointer>(_field_ptr: P, _field_place: *const P::Pointee) {}

/// Turns a pointer to a field into a pointer to the struct that contains it.
///
/// `container_of!(field_ptr, Container, field)` returns `*const Container` or `*mut Container`,
/// following `field_ptr`. It checks at compile time that `field_ptr` points to the field's
/// type, with `&raw const (*container).field`, the way the kernel's macro does.
///
/// It must be used inside `unsafe`: `field_ptr` must point to the field `field` of a
/// `Container` (so that stepping back by the field's offset stays in the same allocation).
///
/// # Examples
///
/// ```
/// use kernel::container_of;
///
/// #[repr(C)]
/// struct Device {
///     id: u32,
///     irq: u16,
/// }
///
/// let device = Device { id: 7, irq: 33 };
/// let irq: *const u16 = &device.irq;
/// // SAFETY: `irq` points to the `irq` field of a `Device`.
/// let container = unsafe { container_of!(irq, Device, irq) };
/// assert!(core::ptr::eq(container, &device));
/// ```
#[cfg(kshim_has_raw_ref_op)]
#[macro_export]
macro_rules! container_of {
    ($field_ptr:expr, $Container:ty, $field:ident) => {
        $crate::__container_of_raw_ref!($field_ptr, $Container, $field)
    };
}

/// Turns a pointer to a field into a pointer to the struct that contains it.
///
/// `container_of!(field_ptr, Container, field)` returns `*const Container` or `*mut Container`,
/// following `field_ptr`. It checks at compile time that `field_ptr` points to the field's
/// type, with `addr_of!((*container).field)`: the kernel's check, which came with `&raw`,
/// spelled with the stable macro (before `&raw` the kernel's macro had none).
///
/// It must be used inside `unsafe`: `field_ptr` must point to the field `field` of a
/// `Container` (so that stepping back by the field's offset stays in the same allocation).
///
/// # Examples
///
/// ```
/// use kernel::container_of;
///
/// #[repr(C)]
/// struct Device {
///     id: u32,
///     irq: u16,
/// }
///
/// let device = Device { id: 7, irq: 33 };
/// let irq: *const u16 = &device.irq;
/// // SAFETY: `irq` points to the `irq` field of a `Device`.
/// let container = unsafe { container_of!(irq, Device, irq) };
/// assert!(core::ptr::eq(container, &device));
/// ```
#[cfg(not(kshim_has_raw_ref_op))]
#[macro_export]
macro_rules! container_of {
    ($field_ptr:expr, $Container:ty, $field:ident) => {
        $crate::__container_of_addr_of!($field_ptr, $Container, $field)
    };
}

/// The `raw_ref_op` form of [`container_of!`]; its expansion needs `&raw` in the calling crate.
#[doc(hidden)]
#[macro_export]
macro_rules! __container_of_raw_ref {
    ($field_ptr:expr, $Container:ty, $field:ident) => {{
        let field_ptr = $field_ptr;
        let offset: usize = ::core::mem::offset_of!($Container, $field);
        let container_ptr = field_ptr.byte_sub(offset).cast::<$Container>();
        $crate::container_of::assert_same_pointee(field_ptr, &raw const (*container_ptr).$field);
        container_ptr
    }};
}

/// The stable form of [`container_of!`], with `addr_of!`.
#[doc(hidden)]
#[macro_export]
macro_rules! __container_of_addr_of {
    ($field_ptr:expr, $Container:ty, $field:ident) => {{
        let field_ptr = $field_ptr;
        let offset: usize = ::core::mem::offset_of!($Container, $field);
        let container_ptr = field_ptr.byte_sub(offset).cast::<$Container>();
        $crate::container_of::assert_same_pointee(
            field_ptr,
            ::core::ptr::addr_of!((*container_ptr).$field),
        );
        container_ptr
    }};
}

/// Links of an intrusive, circular, doubly linked list, like C's `struct list_head`.
///
/// A `ListLinks` is embedded in the objects it links and handled through raw pointers only:
/// the objects are reached from several places at once, and [`ListLinks::init`] runs on
/// uninitialized memory. [`container_of!`](crate::container_of!) goes from the links back to
/// the object.
///
/// # Invariants
///
/// Once initialized by [`ListLinks::init`] or [`ListLinks::add_tail`], `next` and `prev` point
/// to initialized `ListLinks` of the same list, and `(*(*links).next).prev == links`.
#[repr(C)]
#[derive(Debug)]
pub struct ListLinks {
    next: *mut ListLinks,
    prev: *mut ListLinks,
}

/// How a list operation reaches the two link fields from a pointer to the links.
type Projection = unsafe fn(*mut ListLinks) -> (*mut *mut ListLinks, *mut *mut ListLinks);

#[cfg(kshim_has_raw_ref_op)]
pub mod raw_ref;

#[cfg(kshim_has_raw_ref_op)]
const SELECTED: Projection = raw_ref::next_and_prev;
#[cfg(not(kshim_has_raw_ref_op))]
const SELECTED: Projection = addr_of::next_and_prev;

/// The stable form of the link projection: `addr_of_mut!((*links).next)`.
pub mod addr_of {
    use super::ListLinks;

    /// Pointers to the `next` and `prev` fields of `*links`, made without an intermediate
    /// reference.
    ///
    /// # Safety
    ///
    /// `links` must point into an allocation that holds a whole `ListLinks` at that address;
    /// the `ListLinks` need not be initialized.
    #[inline(always)]
    pub unsafe fn next_and_prev(
        links: *mut ListLinks,
    ) -> (*mut *mut ListLinks, *mut *mut ListLinks) {
        // SAFETY: the caller guarantees that `links` points to a `ListLinks`-sized place
        // inside one allocation, so the field places are in bounds; `addr_of_mut!` only
        // computes their addresses, reading nothing and asserting nothing about
        // initialization or aliasing.
        unsafe {
            (
                core::ptr::addr_of_mut!((*links).next),
                core::ptr::addr_of_mut!((*links).prev),
            )
        }
    }
}

impl ListLinks {
    /// Links that are on no list yet, for embedding in a new object.
    ///
    /// [`ListLinks::init`] or [`ListLinks::add_tail`] gives them their values; until then no
    /// other method may be called on them.
    pub const fn new_unlinked() -> Self {
        ListLinks {
            next: core::ptr::null_mut(),
            prev: core::ptr::null_mut(),
        }
    }

    /// Makes `*links` an empty list, like `INIT_LIST_HEAD()`: both links point to itself.
    ///
    /// # Safety
    ///
    /// `links` must be valid for writing a `ListLinks`, which may be uninitialized; no other
    /// list may point to it.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::mem::MaybeUninit;
    /// use kernel::container_of::ListLinks;
    ///
    /// let mut head = MaybeUninit::<ListLinks>::uninit();
    /// // SAFETY: `head` is writable and unlinked.
    /// unsafe { ListLinks::init(head.as_mut_ptr()) };
    /// // SAFETY: `head` is initialized now.
    /// assert!(unsafe { ListLinks::is_empty(head.as_ptr()) });
    /// ```
    pub unsafe fn init(links: *mut ListLinks) {
        // SAFETY: the caller's guarantees are `init_with`'s.
        unsafe { Self::init_with(SELECTED, links) }
    }

    /// Inserts `new` before `head`, at the tail of `head`'s list, like `list_add_tail()`.
    ///
    /// # Safety
    ///
    /// `head` must be an initialized list; `new` must be valid for writing a `ListLinks` and
    /// on no list. Both must stay where they are while they are linked.
    pub unsafe fn add_tail(new: *mut ListLinks, head: *mut ListLinks) {
        // SAFETY: the caller's guarantees are `add_tail_with`'s.
        unsafe { Self::add_tail_with(SELECTED, new, head) }
    }

    /// The links after `links`, like `list->next`.
    ///
    /// # Safety
    ///
    /// `links` must be initialized links.
    pub unsafe fn next(links: *const ListLinks) -> *mut ListLinks {
        // SAFETY: the caller guarantees that `links` is initialized; reading the field
        // through the raw place creates no reference.
        unsafe { (*links).next }
    }

    /// Whether the list that `head` heads has no other entries, like `list_empty()`.
    ///
    /// # Safety
    ///
    /// `head` must be initialized links.
    pub unsafe fn is_empty(head: *const ListLinks) -> bool {
        // SAFETY: the caller's guarantee is `next`'s.
        core::ptr::eq(unsafe { Self::next(head) }, head)
    }

    /// [`ListLinks::init`], with the field projection passed in.
    ///
    /// # Safety
    ///
    /// As for [`ListLinks::init`]; `project` must be one of this module's projections.
    unsafe fn init_with(project: Projection, links: *mut ListLinks) {
        // SAFETY: `links` is valid for writing a `ListLinks` (the caller's guarantee).
        let (next, prev) = unsafe { project(links) };
        // SAFETY: both field pointers are in bounds and writable, since `links` is. `write`
        // does not read or drop the old, perhaps uninitialized, contents.
        unsafe {
            // INVARIANT: a list of one: both links point back to the links themselves.
            next.write(links);
            prev.write(links);
        }
    }

    /// [`ListLinks::add_tail`], with the field projection passed in.
    ///
    /// # Safety
    ///
    /// As for [`ListLinks::add_tail`]; `project` must be one of this module's projections.
    unsafe fn add_tail_with(project: Projection, new: *mut ListLinks, head: *mut ListLinks) {
        // SAFETY: `head` is an initialized list, so its `prev` is initialized links of it.
        let tail = unsafe { (*head).prev };
        // SAFETY: `new` is writable and `tail` and `head` are initialized links, so all three
        // projections are in bounds and their fields are writable; the writes below relink
        // `tail <-> new <-> head`.
        unsafe {
            let (new_next, new_prev) = project(new);
            let (tail_next, _) = project(tail);
            let (_, head_prev) = project(head);
            // INVARIANT: `tail.next == new`, `new.prev == tail`, `new.next == head` and
            // `head.prev == new`: every `next` is still the inverse of a `prev`.
            new_next.write(head);
            new_prev.write(tail);
            tail_next.write(new);
            head_prev.write(new);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::MaybeUninit;
    use core::ptr;

    /// An object that lives on a list, with fields before and after its links.
    #[repr(C)]
    struct Device {
        id: u32,
        name: &'static str,
        links: ListLinks,
        irq: u8,
    }

    fn device(id: u32, name: &'static str, irq: u8) -> MaybeUninit<Device> {
        let mut device = MaybeUninit::<Device>::uninit();
        let place = device.as_mut_ptr();
        // SAFETY: `place` points to a writable `Device`; the links are left uninitialized for
        // `ListLinks::init` or `add_tail`, which accept that.
        unsafe {
            ptr::addr_of_mut!((*place).id).write(id);
            ptr::addr_of_mut!((*place).name).write(name);
            ptr::addr_of_mut!((*place).irq).write(irq);
        }
        device
    }

    /// Builds `head -> devices...` with the given projection and reads it back by walking
    /// `next` and stepping back to each `Device` with `container`.
    fn build_and_walk(
        project: Projection,
        container: unsafe fn(*mut ListLinks) -> *mut Device,
    ) -> [(u32, &'static str, u8); 3] {
        let mut head = MaybeUninit::<ListLinks>::uninit();
        let mut devices = [
            device(1, "eth0", 16),
            device(2, "sda", 17),
            device(3, "tty0", 4),
        ];
        let mut found = [(0, "", 0); 3];
        // SAFETY: `head` and the devices are local and stay put until the end of this
        // function; each device is linked once, and each `links` pointer walked is one of the
        // devices' (the walk stops at the head), so stepping back to the `Device` is valid.
        unsafe {
            ListLinks::init_with(project, head.as_mut_ptr());
            for device in &mut devices {
                let links = ptr::addr_of_mut!((*device.as_mut_ptr()).links);
                ListLinks::add_tail_with(project, links, head.as_mut_ptr());
            }
            let mut links = ListLinks::next(head.as_ptr());
            for slot in &mut found {
                assert!(!ptr::eq(links, head.as_ptr()), "list ended early");
                let device = container(links);
                *slot = ((*device).id, (*device).name, (*device).irq);
                links = ListLinks::next(links);
            }
            assert!(ptr::eq(links, head.as_ptr()), "list is circular");
        }
        found
    }

    #[test]
    fn list_keeps_insertion_order_and_is_circular() {
        /// # Safety
        ///
        /// `links` must be the `links` field of a `Device`.
        unsafe fn device_of(links: *mut ListLinks) -> *mut Device {
            // SAFETY: the caller's guarantee is `container_of!`'s.
            unsafe { crate::container_of!(links, Device, links) }
        }
        let walked = build_and_walk(SELECTED, device_of);
        assert_eq!(walked, [(1, "eth0", 16), (2, "sda", 17), (3, "tty0", 4)]);

        let mut head = MaybeUninit::<ListLinks>::uninit();
        // SAFETY: `head` is local and unlinked; after `init` it is initialized.
        unsafe {
            ListLinks::init(head.as_mut_ptr());
            assert!(ListLinks::is_empty(head.as_ptr()));
        }
    }

    #[cfg(kshim_has_raw_ref_op)]
    #[test]
    fn gated_matches_replacement_raw_ref_op() {
        use core::mem::offset_of;

        // Field projections: the same addresses, and the ones `offset_of!` predicts.
        let mut storage = device(9, "nvme0", 42);
        let device_ptr = storage.as_mut_ptr();
        let links = device_ptr
            .cast::<u8>()
            .wrapping_add(offset_of!(Device, links))
            .cast::<ListLinks>();
        // SAFETY: `links` is the links field of the local `device`, uninitialized, which the
        // projections allow.
        let (gated, replacement) =
            unsafe { (raw_ref::next_and_prev(links), addr_of::next_and_prev(links)) };
        assert_eq!(gated, replacement);
        assert_eq!(
            gated.1 as usize - gated.0 as usize,
            offset_of!(ListLinks, prev) - offset_of!(ListLinks, next)
        );
        assert_eq!(gated.0.cast::<ListLinks>(), links);

        // `container_of!` round trips from every field, in both forms, to the same object.
        // SAFETY: each field pointer is projected from `device_ptr`, which points to a local
        // `Device`, and is given back with that field's name.
        unsafe {
            // `addr_of!` here, not `&raw`: this file must stay readable by older parsers.
            let id = ptr::addr_of!((*device_ptr).id);
            let name = ptr::addr_of_mut!((*device_ptr).name);
            let links = ptr::addr_of!((*device_ptr).links);
            let irq = ptr::addr_of_mut!((*device_ptr).irq);
            assert_eq!(
                [
                    crate::__container_of_raw_ref!(id, Device, id),
                    crate::__container_of_raw_ref!(name, Device, name).cast_const(),
                    crate::__container_of_raw_ref!(links, Device, links),
                    crate::__container_of_raw_ref!(irq, Device, irq).cast_const(),
                ],
                [device_ptr.cast_const(); 4]
            );
            assert_eq!(
                [
                    crate::__container_of_addr_of!(id, Device, id),
                    crate::__container_of_addr_of!(name, Device, name).cast_const(),
                    crate::__container_of_addr_of!(links, Device, links),
                    crate::__container_of_addr_of!(irq, Device, irq).cast_const(),
                ],
                [device_ptr.cast_const(); 4]
            );
            assert_eq!((*device_ptr).id, 9);
            assert_eq!((*device_ptr).irq, 42);
        }

        // Whole lists built and walked with either form agree, entry by entry.
        /// # Safety
        ///
        /// `links` must be the `links` field of a `Device`.
        unsafe fn gated_container(links: *mut ListLinks) -> *mut Device {
            // SAFETY: the caller's guarantee is the macro's.
            unsafe { crate::__container_of_raw_ref!(links, Device, links) }
        }
        /// # Safety
        ///
        /// `links` must be the `links` field of a `Device`.
        unsafe fn replacement_container(links: *mut ListLinks) -> *mut Device {
            // SAFETY: the caller's guarantee is the macro's.
            unsafe { crate::__container_of_addr_of!(links, Device, links) }
        }
        let gated = build_and_walk(raw_ref::next_and_prev, gated_container);
        let replacement = build_and_walk(addr_of::next_and_prev, replacement_container);
        assert_eq!(gated, replacement);
        assert_eq!(gated, [(1, "eth0", 16), (2, "sda", 17), (3, "tty0", 4)]);
    }
}
