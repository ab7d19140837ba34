// SPDX-License-Identifier: GPL-2.0
//! A reference-counted pointer, [`Arc`], and its borrowed form, [`ArcBorrow`].
//!
//! This follows the kernel's `rust/kernel/sync/arc.rs`: `Arc<T>` is one non-null pointer to an
//! `ArcInner<T>` (a count followed by the data), it never allows a weak reference, and
//! `ArcBorrow<'_, T>` is the same pointer without a count of its own, which can be turned back
//! into an `Arc` by taking one.
//!
//! # Where the memory comes from
//!
//! The kernel's `Arc::new` takes its memory from `kmalloc`. This crate is `core` only and has
//! no allocator, so every `Arc` lives in an [`ArcPool`]: a fixed number of slots, each big
//! enough for one `ArcInner<T>`, in a `static` (the way a driver would carve objects out of a
//! `kmem_cache` or a static array in early boot). [`Arc::new_in`] claims a free slot or fails
//! with `ENOMEM`; when the last reference goes, `T`'s destructor runs and the slot becomes
//! free again. The pool must be `'static`, so an `Arc` can never outlive its memory, and the
//! count doubles as the slot's state, so claiming and freeing need no lock:
//!
//! - `SLOT_FREE` (`usize::MAX`): the slot holds no value and may be claimed;
//! - `1..=isize::MAX`: the slot holds a value with that many `Arc`s;
//! - `0`: the last `Arc` is running `T`'s destructor; nobody may claim the slot yet;
//! - the upper half of `usize`, `SLOT_FREE` excepted: the count saturated, as the kernel's
//!   `refcount_t` does; the value is leaked instead of freed, and the slot never returns.
//!
//! # Unsizing: `Arc<T>` to `Arc<dyn Trait>`
//!
//! The kernel coerces `Arc<T>` to `Arc<dyn Trait>` implicitly and calls methods whose receiver
//! is `self: Arc<Self>` or `self: ArcBorrow<'_, Self>` on trait objects. Both need unstable
//! traits implemented for `Arc` and `ArcBorrow`, and this file implements them exactly as the
//! kernel does, chosen by the same cfg:
//!
//! - with `CONFIG_RUSTC_HAS_COERCE_POINTEE` (Rust 1.84.0 on), `#[derive(CoercePointee)]`
//!   (`derive_coerce_pointee`), which implements `CoerceUnsized` and `DispatchFromDyn`;
//! - before it, hand-written `CoerceUnsized` and `DispatchFromDyn` impls bounded by `Unsize`
//!   (`coerce_unsized`, `dispatch_from_dyn` and `unsize`).
//!
//! In stable mode none of that exists; [`unsize_arc!`](crate::unsize_arc!) is the replacement,
//! available in every mode so that the two can be tested against each other.

use crate::error::{code::ENOMEM, Result};
use core::cell::UnsafeCell;
use core::fmt;
use core::marker::PhantomData;
use core::mem::{ManuallyDrop, MaybeUninit};
use core::ops::Deref;
use core::ptr::{self, NonNull};
use core::sync::atomic::{fence, AtomicUsize, Ordering};

/// The count of a slot that holds no value; only [`Arc::new_in`] claims a slot in this state.
const SLOT_FREE: usize = usize::MAX;

/// The count of a saturated slot: far from both `SLOT_FREE` and `isize::MAX`, so that racing
/// increments and decrements on a saturated count never leave the saturated range.
const REFCOUNT_SATURATED: usize = usize::MAX / 4 * 3;

/// The largest count that is not saturated.
const REFCOUNT_MAX: usize = isize::MAX as usize;

/// A count followed by the data it counts, as the kernel's `ArcInner`.
///
/// This is public only so that [`unsize_arc!`](crate::unsize_arc!) can move pointers to it
/// between functions; its module is private, so no code outside this crate can name it.
///
/// # Invariants
///
/// Reached through an [`Arc`] or [`ArcBorrow`], `refcount` is between 1 and `isize::MAX`, or
/// saturated, and `data` is initialized.
#[repr(C)]
pub struct ArcInner<T: ?Sized> {
    refcount: AtomicUsize,
    data: T,
}

/// One slot of an [`ArcPool`]: an `ArcInner<T>` whose data may be uninitialized.
///
/// `UnsafeCell<X>` and `MaybeUninit<X>` both have the same layout as `X`, and `ArcInner` is
/// `#[repr(C)]`, so a pointer to an `ArcSlot<T>` may be used as a pointer to an `ArcInner<T>`
/// once the data is initialized; the `UnsafeCell` is what lets the data be written and dropped
/// through a pointer derived from a shared reference to the pool.
type ArcSlot<T> = ArcInner<UnsafeCell<MaybeUninit<T>>>;

/// Fixed storage for up to `N` values of type `T`, each managed by an [`Arc`].
///
/// Put the pool in a `static`: [`Arc::new_in`] takes it by `&'static` reference, so an `Arc`
/// never outlives the memory it points to. A slot whose last `Arc` has gone can be claimed
/// again.
///
/// # Examples
///
/// ```
/// use kernel::error::code::ENOMEM;
/// use kernel::sync::{Arc, ArcPool};
///
/// static NUMBERS: ArcPool<u32, 1> = ArcPool::new();
///
/// let first = Arc::new_in(7, &NUMBERS).unwrap();
/// assert_eq!(*first, 7);
/// // The only slot is in use.
/// assert_eq!(Arc::new_in(8, &NUMBERS).err(), Some(ENOMEM));
/// drop(first);
/// // The slot was freed with the last reference.
/// assert_eq!(*Arc::new_in(9, &NUMBERS).unwrap(), 9);
/// ```
pub struct ArcPool<T, const N: usize> {
    slots: [ArcSlot<T>; N],
}

// SAFETY: Sharing the pool lets any thread create an `Arc<T>` in it, and the last `Arc`, on
// whatever thread it is dropped, drops the `T`; that is exactly what `Arc<T>: Send + Sync`
// allows, so the same bounds make sharing the pool sound. The slots themselves are only
// touched through atomic claims (see `Arc::new_in` and `Arc::drop`).
unsafe impl<T: Send + Sync, const N: usize> Sync for ArcPool<T, N> {}

impl<T, const N: usize> ArcPool<T, N> {
    /// A free slot; a named constant so that `new` can repeat it into an array.
    // Each use is a fresh slot, which is the point: `[Self::FREE_SLOT; N]` is how a `const fn`
    // fills an array of non-`Copy` values before inline `const` blocks (Rust 1.79).
    #[allow(clippy::declare_interior_mutable_const)]
    const FREE_SLOT: ArcSlot<T> = ArcInner {
        refcount: AtomicUsize::new(SLOT_FREE),
        data: UnsafeCell::new(MaybeUninit::uninit()),
    };

    /// An empty pool, usable in a `static`.
    pub const fn new() -> Self {
        Self {
            slots: [Self::FREE_SLOT; N],
        }
    }
}

impl<T, const N: usize> Default for ArcPool<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

/// A pointer to a `T` shared by reference counting, like the kernel's `kernel::sync::Arc`.
///
/// Cloning adds a reference, dropping removes one, and the last one drops the `T` and frees its
/// slot in the [`ArcPool`] it came from.
///
/// # Invariants
///
/// `ptr` points to an `ArcInner<T>` in an `ArcPool` (which lives forever), whose data is
/// initialized, and this `Arc` owns one of the references that its `refcount` counts.
///
/// # Examples
///
/// ```
/// use kernel::sync::{Arc, ArcPool};
///
/// struct Device {
///     name: &'static str,
/// }
///
/// static DEVICES: ArcPool<Device, 4> = ArcPool::new();
///
/// let device = Arc::new_in(Device { name: "ttyS0" }, &DEVICES).unwrap();
/// let shared = device.clone();
/// assert!(Arc::ptr_eq(&device, &shared));
/// assert_eq!(shared.name, "ttyS0");
/// ```
#[repr(transparent)]
#[cfg_attr(kshim_has_derive_coerce_pointee, derive(core::marker::CoercePointee))]
pub struct Arc<T: ?Sized> {
    ptr: NonNull<ArcInner<T>>,
    // NB: this informs dropck that objects of type `ArcInner<T>` may be used in `<Arc<T> as
    // Drop>::drop`, as in the kernel.
    _p: PhantomData<ArcInner<T>>,
}

// This is to allow coercion from `Arc<T>` to `Arc<U>` if `T` can be converted to the
// dynamically-sized type (DST) `U`.
#[cfg(all(kshim_kernel_mode, not(CONFIG_RUSTC_HAS_COERCE_POINTEE)))]
impl<T: ?Sized + core::marker::Unsize<U>, U: ?Sized> core::ops::CoerceUnsized<Arc<U>> for Arc<T> {}

// This is to allow `Arc<U>` to be dispatched on when `Arc<T>` can be coerced into `Arc<U>`.
#[cfg(all(kshim_kernel_mode, not(CONFIG_RUSTC_HAS_COERCE_POINTEE)))]
impl<T: ?Sized + core::marker::Unsize<U>, U: ?Sized> core::ops::DispatchFromDyn<Arc<U>> for Arc<T> {}

/// Turns an `Arc<T>` into an `Arc<U>` when the language can unsize `T` into `U`, in any mode.
///
/// This is the stable replacement for the implicit coercion that `derive(CoercePointee)` (or,
/// before Rust 1.84, `impl CoerceUnsized`) gives kernel code: write
/// `unsize_arc!(arc => dyn Trait)` where the kernel writes `let arc: Arc<dyn Trait> = arc;`.
/// The target may be left out when the context says it.
///
/// The macro moves the `Arc`'s inner pointer out, lets the compiler's built-in unsizing
/// coercion of `NonNull<ArcInner<T>>` turn it into a `NonNull<ArcInner<U>>`, and puts it back
/// into an `Arc`. That coercion can only add or replace pointer metadata (a length or a
/// vtable) that the compiler has checked against `T`, so the result points to the same object
/// with the same count: no reference is taken or lost. Its cost is one more line at each call
/// site, and no conversion where the kernel passes an `Arc<T>` to a function that wants an
/// `Arc<dyn Trait>`.
///
/// # Examples
///
/// ```
/// use kernel::sync::{Arc, ArcPool};
/// use kernel::unsize_arc;
///
/// trait Shape {
///     fn area(&self) -> u32;
/// }
///
/// struct Square(u32);
///
/// impl Shape for Square {
///     fn area(&self) -> u32 {
///         self.0 * self.0
///     }
/// }
///
/// static SQUARES: ArcPool<Square, 1> = ArcPool::new();
///
/// let square = Arc::new_in(Square(3), &SQUARES).unwrap();
/// let shape = unsize_arc!(square.clone() => dyn Shape);
/// assert_eq!(shape.area(), 9);
///
/// fn total(shapes: &[Arc<dyn Shape>]) -> u32 {
///     shapes.iter().map(|shape| shape.area()).sum()
/// }
/// // Here the target type comes from the array's element type.
/// assert_eq!(total(&[shape, unsize_arc!(square)]), 18);
/// ```
#[macro_export]
macro_rules! unsize_arc {
    ($arc:expr => $target:ty) => {{
        // The argument is evaluated outside the `unsafe` block, so it cannot use it.
        let arc: $crate::sync::Arc<_> = $arc;
        let inner = $crate::sync::Arc::into_inner_ptr(arc);
        // SAFETY: `inner` comes from `into_inner_ptr` just above and is used once. Passing it
        // as the argument applies nothing but the built-in unsizing coercion to it, which the
        // compiler allows only when the object is a valid `ArcInner<$target>`.
        unsafe { $crate::sync::Arc::<$target>::from_inner_ptr(inner) }
    }};
    ($arc:expr) => {{
        // The argument is evaluated outside the `unsafe` block, so it cannot use it.
        let arc: $crate::sync::Arc<_> = $arc;
        let inner = $crate::sync::Arc::into_inner_ptr(arc);
        // SAFETY: As above, with the target type taken from the context.
        unsafe { $crate::sync::Arc::from_inner_ptr(inner) }
    }};
}

// SAFETY: Sending an `Arc<T>` to another thread may make that thread drop the last reference
// and so the `T`, which needs `T: Send`; it also gives that thread a `&T`, which needs
// `T: Sync`. The count itself is atomic.
unsafe impl<T: ?Sized + Sync + Send> Send for Arc<T> {}

// SAFETY: A shared `&Arc<T>` can be cloned into an `Arc<T>` on another thread, so the same
// reasoning as for `Send` applies: it needs `T: Send + Sync`.
unsafe impl<T: ?Sized + Sync + Send> Sync for Arc<T> {}

impl<T> Arc<T> {
    /// Moves `contents` into a free slot of `pool` and returns the first reference to it.
    ///
    /// Fails with `ENOMEM`, dropping `contents`, when every slot is in use, as the kernel's
    /// `Arc::new` does when `kmalloc` fails.
    pub fn new_in<const N: usize>(contents: T, pool: &'static ArcPool<T, N>) -> Result<Self> {
        for slot in &pool.slots {
            // Acquire pairs with the release store that freed the slot, so that the previous
            // value's destructor has finished with the memory before it is reused.
            if slot
                .refcount
                .compare_exchange(SLOT_FREE, 1, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                continue;
            }
            // SAFETY: Winning the exchange from `SLOT_FREE` makes this the only code that may
            // touch the slot's data: no `Arc` points to it, and nobody else can claim it.
            // The data is in an `UnsafeCell`, so writing through the shared reference is
            // allowed.
            unsafe { (*slot.data.get()).write(contents) };
            // INVARIANT: The slot now holds an initialized `T` with a count of 1, owned by the
            // `Arc` built here, and it is in a `'static` pool. The cast is sound because
            // `ArcSlot<T>` has the layout of `ArcInner<T>` (see `ArcSlot`).
            return Ok(Arc {
                ptr: NonNull::from(slot).cast::<ArcInner<T>>(),
                _p: PhantomData,
            });
        }
        Err(ENOMEM)
    }
}

impl<T: ?Sized> Arc<T> {
    /// Builds an `Arc` that takes over a reference already counted in `inner`.
    ///
    /// # Safety
    ///
    /// `inner` must satisfy the type invariants of `Arc`: it points to an initialized
    /// `ArcInner<T>` in a pool, and the caller gives one counted reference to the new `Arc`.
    unsafe fn from_inner(inner: NonNull<ArcInner<T>>) -> Self {
        // INVARIANT: By the safety requirements.
        Arc {
            ptr: inner,
            _p: PhantomData,
        }
    }

    fn inner(&self) -> &ArcInner<T> {
        // SAFETY: By the type invariants, `ptr` points to an initialized `ArcInner<T>`, which
        // stays alive at least as long as this `Arc` holds its reference.
        unsafe { self.ptr.as_ref() }
    }

    /// Borrows the object without taking a reference, as an [`ArcBorrow`].
    ///
    /// The borrow can be copied freely and turned back into an `Arc` with `Arc::from`, which
    /// takes a reference only then.
    pub fn as_arc_borrow(&self) -> ArcBorrow<'_, T> {
        // SAFETY: By the type invariants, `ptr` points to a live `ArcInner<T>` with a count
        // of at least one, held by `self`, which the returned borrow cannot outlive.
        unsafe { ArcBorrow::new(self.ptr) }
    }

    /// Whether two `Arc`s point to the same object.
    ///
    /// Only the data addresses are compared, not the metadata, so an `Arc<dyn Trait>` and the
    /// `Arc<T>` it was coerced from are equal.
    pub fn ptr_eq(this: &Self, other: &Self) -> bool {
        ptr::eq(
            this.ptr.as_ptr().cast::<u8>(),
            other.ptr.as_ptr().cast::<u8>(),
        )
    }

    /// How many `Arc`s share this object now; only tests may rely on a count.
    #[cfg(test)]
    pub(crate) fn count(&self) -> usize {
        self.inner().refcount.load(Ordering::Relaxed)
    }

    /// Gives up this `Arc`'s pointer without dropping its reference; for
    /// [`unsize_arc!`](crate::unsize_arc!) only.
    #[doc(hidden)]
    pub fn into_inner_ptr(this: Self) -> NonNull<ArcInner<T>> {
        ManuallyDrop::new(this).ptr
    }

    /// Rebuilds an `Arc` from [`Arc::into_inner_ptr`]; for [`unsize_arc!`](crate::unsize_arc!)
    /// only.
    ///
    /// # Safety
    ///
    /// `inner` must be the result of `Arc::into_inner_ptr`, changed by nothing but the
    /// language's built-in unsizing coercion (which changes only the pointer's metadata, and
    /// only to metadata that is valid for the object), and must not have been used to rebuild
    /// an `Arc` before.
    #[doc(hidden)]
    pub unsafe fn from_inner_ptr(inner: NonNull<ArcInner<T>>) -> Self {
        // SAFETY: `into_inner_ptr` kept the reference counted, and by the safety requirements
        // `inner` still points to the same `ArcInner`, now described as an `ArcInner<T>`,
        // which an unsizing coercion only does when the object is a valid `ArcInner<T>`.
        unsafe { Self::from_inner(inner) }
    }
}

impl<T: ?Sized> Clone for Arc<T> {
    fn clone(&self) -> Self {
        // Relaxed suffices: a new reference can only come from an existing one, which already
        // keeps the object alive (the same argument as the kernel's `refcount_inc`).
        let old = self.inner().refcount.fetch_add(1, Ordering::Relaxed);
        if old >= REFCOUNT_MAX {
            // Saturate like `refcount_t`: the object is leaked rather than ever freed.
            self.inner()
                .refcount
                .store(REFCOUNT_SATURATED, Ordering::Relaxed);
        }
        // SAFETY: The reference was counted just above (or the count saturated, so the object
        // is never freed).
        unsafe { Self::from_inner(self.ptr) }
    }
}

impl<T: ?Sized> Drop for Arc<T> {
    fn drop(&mut self) {
        let inner = self.ptr.as_ptr();
        // Release makes this thread's uses of the data happen before the destructor that
        // another thread may run once the count reaches zero.
        let old = self.inner().refcount.fetch_sub(1, Ordering::Release);
        if old != 1 {
            if old > REFCOUNT_MAX {
                // Keep a saturated count saturated.
                self.inner()
                    .refcount
                    .store(REFCOUNT_SATURATED, Ordering::Relaxed);
            }
            return;
        }
        // Pairs with the release decrements of the other references.
        fence(Ordering::Acquire);
        // SAFETY: The count went from 1 to 0, so this was the last reference: nothing else can
        // reach the data, and the data is initialized by the type invariants. The slot is not
        // free yet (its count is 0, not `SLOT_FREE`), so nobody can claim it meanwhile. The
        // data lies inside the slot's `UnsafeCell`, so it may be dropped through this pointer.
        unsafe { ptr::drop_in_place(ptr::addr_of_mut!((*inner).data)) };
        // Release pairs with the acquire exchange in `Arc::new_in`: the destructor above is
        // done with the memory before the slot can be claimed again. If the destructor
        // panicked, this never runs and the slot is leaked, which is safe.
        //
        // SAFETY: The pool is `'static`, so the `ArcInner` is still there; only the count is
        // touched, and it is atomic.
        unsafe { (*inner).refcount.store(SLOT_FREE, Ordering::Release) };
    }
}

impl<T: ?Sized> Deref for Arc<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.inner().data
    }
}

impl<T: ?Sized> AsRef<T> for Arc<T> {
    fn as_ref(&self) -> &T {
        self
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Arc<T> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, formatter)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for Arc<T> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, formatter)
    }
}

/// A borrowed reference to an object managed by an [`Arc`], like the kernel's `ArcBorrow`.
///
/// It is `Copy` and takes no reference of its own, which makes it cheaper than `&Arc<T>` (one
/// indirection less) and than a cloned `Arc` (no atomic operation); unlike `&T`, it can be
/// turned back into an `Arc` with `Arc::from` whenever the callee decides to keep the object.
/// That is why kernel code takes it as a method receiver, `self: ArcBorrow<'_, Self>`: the
/// kernel's `sync/arc.rs` doctests (6.12, 7.3, run as KUnit tests) and Binder's `Process`
/// (`drivers/android/binder/`, 7.2 on) do.
///
/// # Invariants
///
/// `inner` points to an initialized `ArcInner<T>` whose count stays at least one for `'a`,
/// held by an `Arc` that `'a` borrows.
///
/// # Examples
///
/// ```
/// use kernel::sync::{Arc, ArcBorrow, ArcPool};
///
/// struct Buffer {
///     len: usize,
/// }
///
/// static BUFFERS: ArcPool<Buffer, 2> = ArcPool::new();
///
/// // Reads through the borrow, and keeps the buffer only when asked to.
/// fn inspect(buffer: ArcBorrow<'_, Buffer>, keep: bool) -> Option<Arc<Buffer>> {
///     assert_eq!(buffer.len, 64);
///     if keep {
///         Some(Arc::from(buffer))
///     } else {
///         None
///     }
/// }
///
/// let buffer = Arc::new_in(Buffer { len: 64 }, &BUFFERS).unwrap();
/// assert!(inspect(buffer.as_arc_borrow(), false).is_none());
/// let kept = inspect(buffer.as_arc_borrow(), true).unwrap();
/// assert!(Arc::ptr_eq(&kept, &buffer));
/// ```
///
/// Using `ArcBorrow<'_, Self>` as the type of `self` (`arbitrary_self_types`), as the kernel's
/// own doctest of `ArcBorrow` does, and beside it the stable replacement, an associated function
/// called with the borrow as its argument:
///
/// ```
/// # #![cfg_attr(kshim_kernel_mode, feature(arbitrary_self_types))]
/// use kernel::sync::{Arc, ArcBorrow, ArcPool};
///
/// struct Example {
///     a: u32,
///     b: u32,
/// }
///
/// impl Example {
///     #[cfg(kshim_has_arbitrary_self_types)]
///     fn use_reference(self: ArcBorrow<'_, Self>) -> u32 {
///         self.a + self.b
///     }
///
///     fn use_reference_stable(this: ArcBorrow<'_, Self>) -> u32 {
///         this.a + this.b
///     }
/// }
///
/// static EXAMPLES: ArcPool<Example, 1> = ArcPool::new();
/// let obj = Arc::new_in(Example { a: 10, b: 20 }, &EXAMPLES).unwrap();
/// #[cfg(kshim_has_arbitrary_self_types)]
/// assert_eq!(obj.as_arc_borrow().use_reference(), 30);
/// assert_eq!(Example::use_reference_stable(obj.as_arc_borrow()), 30);
/// ```
#[repr(transparent)]
#[cfg_attr(kshim_has_derive_coerce_pointee, derive(core::marker::CoercePointee))]
pub struct ArcBorrow<'a, T: ?Sized + 'a> {
    inner: NonNull<ArcInner<T>>,
    _p: PhantomData<&'a ()>,
}

// This is to allow `ArcBorrow<U>` to be dispatched on when `ArcBorrow<T>` can be coerced into
// `ArcBorrow<U>`. As in the kernel, there is no `CoerceUnsized` impl before Rust 1.84: only
// `derive(CoercePointee)` adds one.
#[cfg(all(kshim_kernel_mode, not(CONFIG_RUSTC_HAS_COERCE_POINTEE)))]
impl<T: ?Sized + core::marker::Unsize<U>, U: ?Sized> core::ops::DispatchFromDyn<ArcBorrow<'_, U>>
    for ArcBorrow<'_, T>
{
}

impl<T: ?Sized> Clone for ArcBorrow<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized> Copy for ArcBorrow<'_, T> {}

impl<T: ?Sized> ArcBorrow<'_, T> {
    /// Borrows the object that `inner` points to.
    ///
    /// # Safety
    ///
    /// `inner` must point to an initialized `ArcInner<T>` whose count stays at least one for
    /// the lifetime of the result.
    unsafe fn new(inner: NonNull<ArcInner<T>>) -> Self {
        // INVARIANT: By the safety requirements.
        Self {
            inner,
            _p: PhantomData,
        }
    }
}

impl<'a, T: ?Sized> ArcBorrow<'a, T> {
    /// Reinterprets a borrow of a trait object as a borrow of its concrete type.
    ///
    /// # Safety
    ///
    /// The object must really be a `U`.
    pub(crate) unsafe fn cast<U>(self) -> ArcBorrow<'a, U> {
        // SAFETY: The data pointer of an unsized `ArcInner` points to the same `ArcInner`,
        // which is an `ArcInner<U>` by the safety requirements; it is alive for as long as
        // `self` is.
        unsafe { ArcBorrow::new(self.inner.cast::<ArcInner<U>>()) }
    }
}

impl<T: ?Sized> From<ArcBorrow<'_, T>> for Arc<T> {
    fn from(borrow: ArcBorrow<'_, T>) -> Self {
        // SAFETY: By `ArcBorrow`'s invariants, `inner` points to a live `ArcInner<T>` held by
        // some `Arc`; wrapping it in `ManuallyDrop` means this copy never gives up a reference
        // it does not own, and cloning it takes a new one.
        let borrowed = ManuallyDrop::new(unsafe { Arc::from_inner(borrow.inner) });
        Arc::clone(&borrowed)
    }
}

impl<T: ?Sized> Deref for ArcBorrow<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: By the type invariants, `inner` points to an initialized `ArcInner<T>` kept
        // alive for as long as `self` is.
        unsafe { &self.inner.as_ref().data }
    }
}

#[cfg(test)]
mod tests;
