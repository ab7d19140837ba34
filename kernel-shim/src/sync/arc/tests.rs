// SPDX-License-Identifier: GPL-2.0
//! Tests of `Arc`, `ArcBorrow` and `unsize_arc!`: both forms of unsizing must behave the same.

extern crate std;

use super::*;
use core::sync::atomic::AtomicU32;
use std::vec::Vec;

/// Counts how often a value was dropped.
struct Tracked {
    value: u32,
    drops: &'static AtomicUsize,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn clones_and_drops_are_counted_and_the_destructor_runs_once() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    static POOL: ArcPool<Tracked, 1> = ArcPool::new();

    let first = Arc::new_in(
        Tracked {
            value: 5,
            drops: &DROPS,
        },
        &POOL,
    )
    .unwrap();
    assert_eq!(first.count(), 1);
    let clones: Vec<Arc<Tracked>> = (0..3).map(|_| first.clone()).collect();
    assert_eq!(first.count(), 4);
    assert!(clones.iter().all(|clone| Arc::ptr_eq(clone, &first)));
    assert_eq!(clones[2].value, 5);
    drop(clones);
    assert_eq!(first.count(), 1);
    assert_eq!(DROPS.load(Ordering::Relaxed), 0);
    drop(first);
    assert_eq!(DROPS.load(Ordering::Relaxed), 1);
    assert_eq!(POOL.slots[0].refcount.load(Ordering::Relaxed), SLOT_FREE);
}

#[test]
fn arc_borrow_round_trips_take_a_reference_only_when_converted() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    static POOL: ArcPool<Tracked, 1> = ArcPool::new();

    let owner = Arc::new_in(
        Tracked {
            value: 9,
            drops: &DROPS,
        },
        &POOL,
    )
    .unwrap();
    let borrow = owner.as_arc_borrow();
    let copy = borrow;
    assert_eq!((borrow.value, copy.value, owner.count()), (9, 9, 1));
    let upgraded = Arc::from(copy);
    assert!(Arc::ptr_eq(&upgraded, &owner));
    assert_eq!(owner.count(), 2);
    let again = Arc::from(upgraded.as_arc_borrow());
    assert_eq!(owner.count(), 3);
    drop(owner);
    drop(upgraded);
    assert_eq!((again.count(), DROPS.load(Ordering::Relaxed)), (1, 0));
    drop(again);
    assert_eq!(DROPS.load(Ordering::Relaxed), 1);
}

#[test]
fn a_full_pool_fails_with_enomem_and_freed_slots_are_reused() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    static POOL: ArcPool<Tracked, 2> = ArcPool::new();
    let tracked = |value| Tracked {
        value,
        drops: &DROPS,
    };

    let first = Arc::new_in(tracked(1), &POOL).unwrap();
    let second = Arc::new_in(tracked(2), &POOL).unwrap();
    assert_eq!(Arc::new_in(tracked(3), &POOL).err(), Some(ENOMEM));
    // The rejected value was dropped, as the kernel's `Arc::new` drops it.
    assert_eq!(DROPS.load(Ordering::Relaxed), 1);
    let first_address = first.ptr;
    drop(first);
    let reused = Arc::new_in(tracked(4), &POOL).unwrap();
    assert_eq!(reused.ptr, first_address);
    assert_eq!((reused.value, second.value), (4, 2));
    assert_eq!(DROPS.load(Ordering::Relaxed), 2);
}

#[test]
fn a_saturated_count_leaks_the_object_instead_of_freeing_it() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    static POOL: ArcPool<Tracked, 1> = ArcPool::new();

    let arc = Arc::new_in(
        Tracked {
            value: 0,
            drops: &DROPS,
        },
        &POOL,
    )
    .unwrap();
    // Pretend that `isize::MAX` references exist, as leaked clones would make it.
    arc.inner().refcount.store(REFCOUNT_MAX, Ordering::Relaxed);
    let clone = arc.clone();
    assert_eq!(arc.count(), REFCOUNT_SATURATED);
    drop(clone);
    drop(arc);
    assert_eq!(
        POOL.slots[0].refcount.load(Ordering::Relaxed),
        REFCOUNT_SATURATED
    );
    assert_eq!(DROPS.load(Ordering::Relaxed), 0);
    assert!(Arc::new_in(
        Tracked {
            value: 1,
            drops: &DROPS,
        },
        &POOL
    )
    .is_err());
}

#[test]
fn references_on_many_threads_drop_the_value_exactly_once() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    static POOL: ArcPool<Tracked, 1> = ArcPool::new();

    for round in 0..20 {
        let arc = Arc::new_in(
            Tracked {
                value: round,
                drops: &DROPS,
            },
            &POOL,
        )
        .unwrap();
        std::thread::scope(|scope| {
            for _ in 0..4 {
                let mine = arc.clone();
                scope.spawn(move || {
                    for _ in 0..100 {
                        let borrow = mine.as_arc_borrow();
                        drop(Arc::from(borrow).clone());
                    }
                    assert_eq!(mine.value, round);
                });
            }
        });
        drop(arc);
        // The slot is free again, or the next round's `new_in` would fail.
        assert_eq!(DROPS.load(Ordering::Relaxed), round as usize + 1);
    }
}

/// A trait object target for the coercion tests.
///
/// In kernel mode it also has the receivers that need `DispatchFromDyn` on `Arc` and
/// `ArcBorrow` to be callable on `dyn Shape`.
trait Shape: Send + Sync {
    fn area(&self) -> u32;

    #[cfg(kshim_kernel_mode)]
    fn area_through_borrow(self: ArcBorrow<'_, Self>) -> u32;

    /// Gives up the caller's reference, keeping one in `keep` for odd areas.
    #[cfg(kshim_kernel_mode)]
    fn area_and_release(self: Arc<Self>, keep: &mut Vec<Arc<dyn Shape>>) -> u32;
}

struct Square {
    side: u32,
    drops: &'static AtomicUsize,
}

struct Rectangle {
    width: u32,
    height: u32,
    runs: AtomicU32,
}

impl Drop for Square {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::Relaxed);
    }
}

impl Shape for Square {
    fn area(&self) -> u32 {
        self.side * self.side
    }

    #[cfg(kshim_kernel_mode)]
    fn area_through_borrow(self: ArcBorrow<'_, Self>) -> u32 {
        // A method of the concrete type, reached through the borrow's `Deref`.
        self.area() + 1000 * Arc::from(self).count() as u32
    }

    #[cfg(kshim_kernel_mode)]
    fn area_and_release(self: Arc<Self>, keep: &mut Vec<Arc<dyn Shape>>) -> u32 {
        let area = self.area();
        if area % 2 == 1 {
            keep.push(self);
        }
        area
    }
}

impl Shape for Rectangle {
    fn area(&self) -> u32 {
        self.runs.fetch_add(1, Ordering::Relaxed);
        self.width * self.height
    }

    #[cfg(kshim_kernel_mode)]
    fn area_through_borrow(self: ArcBorrow<'_, Self>) -> u32 {
        self.area() + 1000 * Arc::from(self).count() as u32
    }

    #[cfg(kshim_kernel_mode)]
    fn area_and_release(self: Arc<Self>, keep: &mut Vec<Arc<dyn Shape>>) -> u32 {
        let area = self.area();
        if area % 2 == 1 {
            keep.push(self);
        }
        area
    }
}

// Shared by the tests that run in parallel, each of which holds at most two of each.
static SQUARES: ArcPool<Square, 16> = ArcPool::new();
static RECTANGLES: ArcPool<Rectangle, 16> = ArcPool::new();

/// Builds one square and one rectangle; `drops` counts the square's destructor.
fn square_and_rectangle(side: u32, drops: &'static AtomicUsize) -> (Arc<Square>, Arc<Rectangle>) {
    let square = Arc::new_in(Square { side, drops }, &SQUARES).unwrap();
    let rectangle = Arc::new_in(
        Rectangle {
            width: side,
            height: side + 1,
            runs: AtomicU32::new(0),
        },
        &RECTANGLES,
    )
    .unwrap();
    (square, rectangle)
}

/// A function that turns a square and a rectangle into shapes, by one form or the other.
type Coerce = fn(Arc<Square>, Arc<Rectangle>) -> [Arc<dyn Shape>; 2];

/// Coerces clones of a new square and rectangle with `coerce` and records, step by step,
/// each shape's area and count and how many squares were dropped.
fn coerce_and_observe(coerce: Coerce, drops: &'static AtomicUsize) -> Vec<(u32, usize)> {
    let (square, rectangle) = square_and_rectangle(3, drops);
    let shapes = coerce(square.clone(), rectangle.clone());
    assert!(Arc::ptr_eq(
        &shapes[0],
        &coerce(square.clone(), rectangle.clone())[0]
    ));
    let data_address = |shape: &Arc<dyn Shape>| (&**shape as *const dyn Shape).cast::<u8>();
    assert_eq!(
        data_address(&shapes[0]),
        (&*square as *const Square).cast::<u8>()
    );
    let mut seen = Vec::new();
    let mut record = |shapes: &[Arc<dyn Shape>]| {
        for shape in shapes {
            seen.push((shape.area(), shape.count()));
        }
        seen.push((0, drops.load(Ordering::Relaxed)));
    };
    record(&shapes);
    drop(square);
    drop(rectangle);
    record(&shapes);
    // The last reference to the square is a `dyn Shape`; its destructor must still run.
    drop(shapes);
    record(&[]);
    seen
}

/// Runs `Shape`'s receivers through `dyn Shape` the gated way: on `ArcBorrow<'_, dyn
/// Shape>` and `Arc<dyn Shape>` themselves, which needs `DispatchFromDyn`.
#[cfg(kshim_kernel_mode)]
fn dispatch_gated(shapes: [Arc<dyn Shape>; 2], drops: &AtomicUsize) -> Vec<(u32, usize)> {
    let mut seen: Vec<_> = shapes
        .iter()
        .map(|shape| (shape.as_arc_borrow().area_through_borrow(), shape.count()))
        .collect();
    let mut kept = Vec::new();
    for shape in shapes {
        let area = shape.area_and_release(&mut kept);
        seen.push((area, kept.len()));
    }
    seen.extend(kept.iter().map(|shape| (shape.area(), shape.count())));
    drop(kept);
    seen.push((0, drops.load(Ordering::Relaxed)));
    seen
}

/// Does what `dispatch_gated` does the stable way: dispatch through `&dyn Shape`, and
/// keep or drop the `Arc` at the call site.
fn dispatch_replacement(shapes: [Arc<dyn Shape>; 2], drops: &AtomicUsize) -> Vec<(u32, usize)> {
    let mut seen: Vec<_> = shapes
        .iter()
        .map(|shape| {
            let borrow = shape.as_arc_borrow();
            let shape_ref: &dyn Shape = &*borrow;
            let area = shape_ref.area() + 1000 * Arc::from(borrow).count() as u32;
            (area, shape.count())
        })
        .collect();
    let mut kept = Vec::new();
    for shape in shapes {
        let area = shape.area();
        if area % 2 == 1 {
            kept.push(shape);
        }
        seen.push((area, kept.len()));
    }
    seen.extend(kept.iter().map(|shape| (shape.area(), shape.count())));
    drop(kept);
    seen.push((0, drops.load(Ordering::Relaxed)));
    seen
}

/// Coerces with the replacement, `unsize_arc!`, which every mode has.
fn coerce_replacement(square: Arc<Square>, rectangle: Arc<Rectangle>) -> [Arc<dyn Shape>; 2] {
    [unsize_arc!(square => dyn Shape), unsize_arc!(rectangle)]
}

/// Coerces implicitly, as kernel code does; needs `CoerceUnsized` on `Arc`.
#[cfg(kshim_kernel_mode)]
fn coerce_gated(square: Arc<Square>, rectangle: Arc<Rectangle>) -> [Arc<dyn Shape>; 2] {
    [square, rectangle]
}

/// What every way of coercing must observe: areas 9 and 12, each shared by two `Arc`s (the
/// original and the shape) and then by the shape alone, and one square dropped at the end.
const COERCED: [(u32, usize); 7] = [(9, 2), (12, 2), (0, 0), (9, 1), (12, 1), (0, 0), (0, 1)];

#[test]
fn unsize_arc_keeps_the_object_the_count_and_the_destructor() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    static BYTES: ArcPool<[u8; 4], 1> = ArcPool::new();

    assert_eq!(coerce_and_observe(coerce_replacement, &DROPS), COERCED);

    let bytes = Arc::new_in([1, 2, 3, 4], &BYTES).unwrap();
    let slice: Arc<[u8]> = unsize_arc!(bytes.clone());
    assert_eq!(
        (slice.len(), slice.iter().sum::<u8>(), bytes.count()),
        (4, 10, 2)
    );
}

#[test]
fn trait_objects_dispatch_through_shared_references() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);

    let (square, rectangle) = square_and_rectangle(5, &DROPS);
    let seen = dispatch_replacement(coerce_replacement(square, rectangle), &DROPS);
    // 25 + 1000 * 2 references while upgraded; 5 * 6 = 30 is even and dropped; the
    // square (25, odd) is kept, then dropped at the end.
    assert_eq!(
        seen,
        [(2025, 1), (2030, 1), (25, 1), (30, 1), (25, 1), (0, 1)]
    );
}

#[test]
#[cfg(kshim_has_derive_coerce_pointee)]
fn gated_matches_replacement_derive_coerce_pointee() {
    static GATED_DROPS: AtomicUsize = AtomicUsize::new(0);
    static REPLACED_DROPS: AtomicUsize = AtomicUsize::new(0);
    static DISPATCH_DROPS: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

    // The derived `CoerceUnsized`: implicit coercion against `unsize_arc!`.
    let gated = coerce_and_observe(coerce_gated, &GATED_DROPS);
    let replaced = coerce_and_observe(coerce_replacement, &REPLACED_DROPS);
    assert_eq!(gated, replaced);
    assert_eq!(gated, COERCED);

    // The derived `DispatchFromDyn`: `Arc<Self>` and `ArcBorrow<'_, Self>` receivers on
    // `dyn Shape` against dispatch through `&dyn Shape`.
    let (square, rectangle) = square_and_rectangle(5, &DISPATCH_DROPS[0]);
    let gated = dispatch_gated(coerce_gated(square, rectangle), &DISPATCH_DROPS[0]);
    let (square, rectangle) = square_and_rectangle(5, &DISPATCH_DROPS[1]);
    let replaced = dispatch_replacement(coerce_replacement(square, rectangle), &DISPATCH_DROPS[1]);
    assert_eq!(gated, replaced);
    assert_eq!(gated.last(), Some(&(0, 1)));

    // `ArcBorrow` coerces too, with the derive only.
    let (square, rectangle) = square_and_rectangle(2, &DISPATCH_DROPS[0]);
    let borrows: [ArcBorrow<'_, dyn Shape>; 2] =
        [square.as_arc_borrow(), rectangle.as_arc_borrow()];
    let gated: Vec<u32> = borrows.iter().map(|borrow| borrow.area()).collect();
    let shapes = coerce_replacement(square.clone(), rectangle.clone());
    let replaced: Vec<u32> = shapes
        .iter()
        .map(|shape| shape.as_arc_borrow().area())
        .collect();
    assert_eq!((gated, replaced), (std::vec![4, 6], std::vec![4, 6]));
}

#[test]
#[cfg(all(kshim_kernel_mode, not(CONFIG_RUSTC_HAS_COERCE_POINTEE)))]
fn gated_matches_replacement_coerce_unsized() {
    static GATED_DROPS: AtomicUsize = AtomicUsize::new(0);
    static REPLACED_DROPS: AtomicUsize = AtomicUsize::new(0);
    static BYTES: ArcPool<[u16; 3], 2> = ArcPool::new();

    // The hand-written `impl CoerceUnsized`: implicit coercion against `unsize_arc!`.
    let gated = coerce_and_observe(coerce_gated, &GATED_DROPS);
    let replaced = coerce_and_observe(coerce_replacement, &REPLACED_DROPS);
    assert_eq!(gated, replaced);
    assert_eq!(gated, COERCED);

    // Arrays unsize to slices the same way.
    let array = Arc::new_in([7, 8, 9], &BYTES).unwrap();
    let gated: Arc<[u16]> = array.clone();
    let replaced: Arc<[u16]> = unsize_arc!(array.clone());
    assert!(Arc::ptr_eq(&gated, &replaced));
    assert_eq!((&*gated, gated.count()), (&*replaced, 3));
}

#[test]
#[cfg(all(kshim_kernel_mode, not(CONFIG_RUSTC_HAS_COERCE_POINTEE)))]
fn gated_matches_replacement_dispatch_from_dyn() {
    static DISPATCH_DROPS: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

    // Both sides coerce with `unsize_arc!`, so that only dispatch differs: the
    // hand-written `impl DispatchFromDyn` for `Arc` and `ArcBorrow` against `&dyn Shape`.
    let (square, rectangle) = square_and_rectangle(5, &DISPATCH_DROPS[0]);
    let gated = dispatch_gated(coerce_replacement(square, rectangle), &DISPATCH_DROPS[0]);
    let (square, rectangle) = square_and_rectangle(5, &DISPATCH_DROPS[1]);
    let replaced = dispatch_replacement(coerce_replacement(square, rectangle), &DISPATCH_DROPS[1]);
    assert_eq!(gated, replaced);
    assert_eq!(
        gated,
        [(2025, 1), (2030, 1), (25, 1), (30, 1), (25, 1), (0, 1)]
    );
}

/// Unsizes any `Arc<T>` to any `Arc<U>` that `T: Unsize<U>` allows: the generic form that
/// needs the `Unsize` bound.
#[cfg(all(kshim_kernel_mode, not(CONFIG_RUSTC_HAS_COERCE_POINTEE)))]
fn unsize_generic<T: ?Sized + core::marker::Unsize<U>, U: ?Sized>(arc: Arc<T>) -> Arc<U> {
    arc
}

#[test]
#[cfg(all(kshim_kernel_mode, not(CONFIG_RUSTC_HAS_COERCE_POINTEE)))]
fn gated_matches_replacement_unsize() {
    static GATED_DROPS: AtomicUsize = AtomicUsize::new(0);
    static REPLACED_DROPS: AtomicUsize = AtomicUsize::new(0);
    static WORDS: ArcPool<[u32; 4], 1> = ArcPool::new();

    // The generic function, instantiated at each pair of types, against the replacement,
    // where the built-in raw-pointer coercion checks `T: Unsize<U>` at each call site.
    let gated = coerce_and_observe(
        |square, rectangle| [unsize_generic(square), unsize_generic(rectangle)],
        &GATED_DROPS,
    );
    let replaced = coerce_and_observe(coerce_replacement, &REPLACED_DROPS);
    assert_eq!(gated, replaced);
    assert_eq!(gated, COERCED);

    let words = Arc::new_in([1, 2, 3, 4], &WORDS).unwrap();
    let gated = unsize_generic::<[u32; 4], [u32]>(words.clone());
    let replaced: Arc<[u32]> = unsize_arc!(words.clone());
    let shape = |slice: &Arc<[u32]>| (slice.len(), slice.iter().product::<u32>(), slice.count());
    assert_eq!(shape(&gated), shape(&replaced));
    assert_eq!(shape(&gated), (4, 24, 3));
}

/// The object of the kernel's `ArcBorrow` doctest, with both forms of its method.
struct Example {
    a: u32,
    b: u32,
}

impl Example {
    /// The gated form: a method whose receiver is `ArcBorrow<'_, Self>`; it keeps the object
    /// when `a` is odd, taking a reference only then.
    #[cfg(kshim_has_arbitrary_self_types)]
    fn use_reference(self: ArcBorrow<'_, Self>) -> (u32, Option<Arc<Self>>) {
        (self.a + self.b, (self.a % 2 == 1).then(|| Arc::from(self)))
    }

    /// The replacement: the same body as an associated function taking the borrow.
    fn use_reference_stable(this: ArcBorrow<'_, Self>) -> (u32, Option<Arc<Self>>) {
        (this.a + this.b, (this.a % 2 == 1).then(|| Arc::from(this)))
    }
}

/// Either form of `use_reference`: the sum, and the object if it kept it.
type UseReference = fn(ArcBorrow<'_, Example>) -> (u32, Option<Arc<Example>>);

/// Runs `use_reference` on two objects, one kept and one not, and records each sum and the
/// counts before and after.
fn use_references(use_reference: UseReference) -> Vec<(u32, usize, usize)> {
    static EXAMPLES: ArcPool<Example, 4> = ArcPool::new();
    [(10, 20), (11, 20)]
        .into_iter()
        .map(|(a, b)| {
            let obj = Arc::new_in(Example { a, b }, &EXAMPLES).unwrap();
            let before = obj.count();
            let (sum, kept) = use_reference(obj.as_arc_borrow());
            // The borrow took no reference; only a kept object has a second one.
            let after = obj.count();
            assert_eq!(kept.is_some(), a % 2 == 1);
            (sum, before, after)
        })
        .collect()
}

#[test]
fn the_replacement_takes_a_reference_only_to_keep_the_object() {
    let replaced = use_references(Example::use_reference_stable);
    assert_eq!(replaced, [(30, 1, 1), (31, 1, 2)]);
}

#[test]
#[cfg(kshim_has_arbitrary_self_types)]
fn gated_matches_replacement_arbitrary_self_types() {
    // `obj.as_arc_borrow().use_reference()`, as the kernel's doctest calls it.
    let gated = use_references(|borrow| borrow.use_reference());
    let replaced = use_references(Example::use_reference_stable);
    assert_eq!(gated, replaced);
}
