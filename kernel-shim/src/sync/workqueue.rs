// SPDX-License-Identifier: GPL-2.0
//! Deferred work: a queue of reference-counted items, each run through a borrow of its `Arc`.
//!
//! A driver that cannot do something in the current context (an interrupt handler, a held
//! lock) queues a work item and lets a worker run it later. The queue holds one [`Arc`] per
//! pending item and runs each through an `ArcBorrow`, so an item can turn the borrow back into
//! an `Arc` (to queue itself again, or to hand itself to someone else) and pays for a reference
//! only when it does.
//!
//! # The receiver: `arbitrary_self_types` and its replacement
//!
//! The kernel's own `rust/kernel/workqueue.rs` needs no custom receiver: its `WorkItem::run`
//! is `fn run(this: Self::Pointer)`, an associated function given the item's `Arc` or
//! `Pin<KBox>`. [`replacement`] has that shape. The gated form, in `gated` (kernel mode only),
//! is Binder's (`drivers/android/binder/`, 7.2 on): its work items, `dyn DeliverToRead`, run
//! through `fn do_work(self: DArc<Self>, ...)`, an `Arc` receiver, and its `Process` methods take
//! `self: ArcBorrow<'_, Self>`. Here [`WorkItem::run`] takes `self: ArcBorrow<'_, Self>`, which
//! needs `arbitrary_self_types`; calling it on a `dyn WorkItem` also needs `ArcBorrow` to
//! implement `DispatchFromDyn` (see [`ArcBorrow`](crate::sync::ArcBorrow)).
//!
//! [`replacement`] declares `run(this: ArcBorrow<'_, Self>)` and adds
//! [`replacement::RunWorkItem`], an extension trait implemented for `ArcBorrow<'_, T>`, so that
//! call sites still read `item.run()`. A trait whose method has no receiver cannot be used as
//! `dyn WorkItem`, so for the queue's `dyn` items the replacement also carries a hidden
//! object-safe trampoline that each item type gets from a blanket impl (the kernel's workqueue
//! puts a per-type `extern "C" fn run` into each item's C `work_struct` instead). The costs:
//! implementors write `this` instead of `self`, callers import `RunWorkItem`, and every item
//! type gets one more function, the trampoline, which the queue calls through the vtable
//! where the gated form calls `run` itself.

use crate::sync::Arc;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, Ordering};

// The re-exports also bring `run()` on `ArcBorrow<'_, QueuedWork>` into scope for `flush`.
#[cfg(kshim_has_arbitrary_self_types)]
pub use gated::WorkItem;
#[cfg(not(kshim_has_arbitrary_self_types))]
pub use replacement::{RunWorkItem, WorkItem};

/// The kernel-mode work item, whose receiver is an `ArcBorrow` (`arbitrary_self_types`).
#[cfg(kshim_has_arbitrary_self_types)]
pub mod gated {
    use crate::sync::ArcBorrow;

    /// Work that a [`WorkQueue`](super::WorkQueue) runs later, through a borrow of its `Arc`.
    pub trait WorkItem: Send + Sync {
        /// Does the work; the queue keeps the item alive until this returns.
        fn run(self: ArcBorrow<'_, Self>);
    }
}

/// The stable-mode work item: an associated function and an extension trait for `ArcBorrow`.
pub mod replacement {
    use crate::sync::ArcBorrow;

    /// Work that a [`WorkQueue`](super::WorkQueue) runs later, through a borrow of its `Arc`.
    pub trait WorkItem: Send + Sync {
        /// Does the work; the queue keeps the item alive until this returns.
        ///
        /// Call it as `item.run()` with [`RunWorkItem`] in scope, as kernel code would.
        fn run(this: ArcBorrow<'_, Self>);
    }

    /// Gives `ArcBorrow<'_, T>` a `run()` method, the call that kernel mode spells with an
    /// `ArcBorrow<'_, Self>` receiver.
    pub trait RunWorkItem {
        /// Runs the work item this borrow points to.
        fn run(self);
    }

    impl<T: WorkItem> RunWorkItem for ArcBorrow<'_, T> {
        fn run(self) {
            T::run(self)
        }
    }

    mod sealed {
        /// Only this crate's blanket impl provides [`DynWorkItem`](super::DynWorkItem).
        pub trait Sealed {}
    }

    /// The object-safe form of [`WorkItem`], implemented for every work item: what the queue
    /// stores as `Arc<dyn DynWorkItem>`.
    pub trait DynWorkItem: sealed::Sealed + Send + Sync {
        /// Runs the item `self` as its concrete type.
        ///
        /// # Safety
        ///
        /// `this` must borrow the `Arc` that holds `self`.
        #[doc(hidden)]
        unsafe fn run_erased(&self, this: ArcBorrow<'_, dyn DynWorkItem>);
    }

    impl<T: WorkItem> sealed::Sealed for T {}

    impl<T: WorkItem> DynWorkItem for T {
        unsafe fn run_erased(&self, this: ArcBorrow<'_, dyn DynWorkItem>) {
            // SAFETY: By the safety requirements, `this` points to the `ArcInner` that holds
            // `self`, whose type is `T`.
            let this = unsafe { this.cast::<T>() };
            T::run(this)
        }
    }

    impl RunWorkItem for ArcBorrow<'_, dyn DynWorkItem> {
        fn run(self) {
            // SAFETY: `self` derefs to the object it borrows, so `this` borrows the `Arc`
            // that holds the receiver.
            unsafe { (*self).run_erased(self) }
        }
    }
}

/// What the queue holds: each mode's `dyn` form of a work item.
#[cfg(kshim_has_arbitrary_self_types)]
type QueuedWork = dyn gated::WorkItem;
#[cfg(not(kshim_has_arbitrary_self_types))]
type QueuedWork = dyn replacement::DynWorkItem;

/// A first-in, first-out queue of up to `N` pending work items.
///
/// # Invariants
///
/// `pending` is only accessed while `locked` is held.
///
/// # Examples
///
/// Work items that count down, each queueing itself again until it reaches zero:
///
/// ```
/// # #![cfg_attr(kshim_kernel_mode, feature(arbitrary_self_types))]
/// use core::sync::atomic::{AtomicU32, Ordering};
/// use kernel::sync::workqueue::{WorkItem, WorkQueue};
/// use kernel::sync::{Arc, ArcBorrow, ArcPool};
/// #[cfg(not(kshim_has_arbitrary_self_types))]
/// use kernel::sync::workqueue::RunWorkItem;
///
/// struct Countdown {
///     left: AtomicU32,
/// }
///
/// static QUEUE: WorkQueue<4> = WorkQueue::new();
/// static ITEMS: ArcPool<Countdown, 2> = ArcPool::new();
///
/// impl Countdown {
///     fn tick(this: ArcBorrow<'_, Self>) {
///         if this.left.fetch_sub(1, Ordering::Relaxed) > 1 {
///             // Keep the item: take a reference only now.
///             QUEUE.enqueue(Arc::from(this)).ok().unwrap();
///         }
///     }
/// }
///
/// impl WorkItem for Countdown {
///     #[cfg(kshim_has_arbitrary_self_types)]
///     fn run(self: ArcBorrow<'_, Self>) {
///         Self::tick(self)
///     }
///     #[cfg(not(kshim_has_arbitrary_self_types))]
///     fn run(this: ArcBorrow<'_, Self>) {
///         Self::tick(this)
///     }
/// }
///
/// let item = Arc::new_in(Countdown { left: AtomicU32::new(3) }, &ITEMS).unwrap();
/// QUEUE.enqueue(item.clone()).ok().unwrap();
/// assert_eq!(QUEUE.flush(), 3);
/// assert_eq!(item.left.load(Ordering::Relaxed), 0);
/// // The same call works on a borrow of a concrete item, in both modes.
/// item.left.store(2, Ordering::Relaxed);
/// item.as_arc_borrow().run();
/// assert_eq!(QUEUE.flush(), 1);
/// ```
pub struct WorkQueue<const N: usize> {
    locked: AtomicBool,
    pending: UnsafeCell<Pending<N>>,
}

/// The ring of queued items.
///
/// # Invariants
///
/// `head < N` (when `N > 0`) and `len <= N`; the `len` slots from `head` on, wrapping, are
/// `Some`, the others `None`.
struct Pending<const N: usize> {
    items: [Option<Arc<QueuedWork>>; N],
    head: usize,
    len: usize,
}

// SAFETY: The items are `Arc<dyn ...>` of `Send + Sync` work items, so they may be moved to and
// run on any thread, and `pending` is only touched with `locked` held (see `with_pending`).
unsafe impl<const N: usize> Sync for WorkQueue<N> {}

impl<const N: usize> WorkQueue<N> {
    /// An empty slot; a named constant so that `new` can repeat it into an array.
    const EMPTY: Option<Arc<QueuedWork>> = None;

    /// An empty queue, usable in a `static`.
    pub const fn new() -> Self {
        // INVARIANT: Nothing is queued, and the lock is free.
        Self {
            locked: AtomicBool::new(false),
            pending: UnsafeCell::new(Pending {
                items: [Self::EMPTY; N],
                head: 0,
                len: 0,
            }),
        }
    }

    /// Runs `f` on the pending items with the lock held.
    ///
    /// `f` must not call back into the queue or run code it does not control (such as a
    /// destructor), which could try to take the lock again.
    fn with_pending<R>(&self, f: impl FnOnce(&mut Pending<N>) -> R) -> R {
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            core::hint::spin_loop();
        }
        // SAFETY: The lock is held from the exchange above until the store below, so this is
        // the only reference to `pending`.
        let result = f(unsafe { &mut *self.pending.get() });
        self.locked.store(false, Ordering::Release);
        result
    }

    /// Queues `item` to run at the next [`flush`](Self::flush), or gives it back if the queue
    /// is full.
    pub fn enqueue<T: WorkItem + 'static>(&self, item: Arc<T>) -> Result<(), Arc<T>> {
        self.with_pending(|pending| {
            if pending.len == N {
                return Err(item);
            }
            // The kernel just writes the coercion; stable Rust spells it out.
            #[cfg(kshim_kernel_mode)]
            let item: Arc<QueuedWork> = item;
            #[cfg(not(kshim_kernel_mode))]
            let item: Arc<QueuedWork> = crate::unsize_arc!(item);
            // `len < N` here, so `N > 0` and the remainder is defined.
            let tail = (pending.head + pending.len) % N;
            // INVARIANT: `tail` was the first `None` slot after the queued ones.
            pending.items[tail] = Some(item);
            pending.len += 1;
            Ok(())
        })
    }

    /// How many items are waiting to run.
    pub fn pending(&self) -> usize {
        self.with_pending(|pending| pending.len)
    }

    /// Runs queued items in order until the queue is empty, and returns how many ran.
    ///
    /// Items queued while it runs (by the items themselves, say) run in the same flush. The
    /// lock is not held while an item runs or is dropped, so items may queue work freely.
    pub fn flush(&self) -> usize {
        let mut ran = 0;
        while let Some(item) = self.with_pending(Pending::pop) {
            item.as_arc_borrow().run();
            ran += 1;
        }
        ran
    }
}

impl<const N: usize> Default for WorkQueue<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Pending<N> {
    fn pop(&mut self) -> Option<Arc<QueuedWork>> {
        if self.len == 0 {
            return None;
        }
        let item = self.items[self.head].take();
        // INVARIANT: The head slot is now `None` and no longer counted; the new head is the
        // next queued slot, wrapping.
        self.head = (self.head + 1) % N;
        self.len -= 1;
        item
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::{replacement, WorkQueue};
    use crate::sync::{Arc, ArcBorrow, ArcPool};
    use core::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Mutex;
    use std::vec::Vec;

    /// What the items of one test run saw: `(id, references while running, runs left)`.
    type Trace = Mutex<Vec<(u32, usize, u32)>>;

    /// A job that runs a given number of times, keeping itself for the next round each time.
    struct Job {
        id: u32,
        runs_left: AtomicU32,
        trace: &'static Trace,
        kept: &'static Mutex<Vec<Arc<Job>>>,
    }

    impl Job {
        /// The work itself, shared by both forms of `run`.
        fn step(this: ArcBorrow<'_, Self>) {
            let left = this.runs_left.fetch_sub(1, Ordering::Relaxed) - 1;
            let references = Arc::from(this).count() - 1;
            this.trace.lock().unwrap().push((this.id, references, left));
            if left > 0 {
                this.kept.lock().unwrap().push(Arc::from(this));
            }
        }
    }

    #[cfg(kshim_has_arbitrary_self_types)]
    impl super::gated::WorkItem for Job {
        fn run(self: ArcBorrow<'_, Self>) {
            Self::step(self)
        }
    }

    impl replacement::WorkItem for Job {
        fn run(this: ArcBorrow<'_, Self>) {
            Self::step(this)
        }
    }

    /// A work item for the public queue, in whichever form this build uses.
    struct Requeue {
        id: u32,
        runs_left: AtomicU32,
        queue: &'static WorkQueue<2>,
        trace: &'static Trace,
    }

    impl Requeue {
        fn step(this: ArcBorrow<'_, Self>) {
            let left = this.runs_left.fetch_sub(1, Ordering::Relaxed) - 1;
            this.trace
                .lock()
                .unwrap()
                .push((this.id, this.queue.pending(), left));
            if left > 0 {
                assert!(this.queue.enqueue(Arc::from(this)).is_ok());
            }
        }
    }

    impl super::WorkItem for Requeue {
        #[cfg(kshim_has_arbitrary_self_types)]
        fn run(self: ArcBorrow<'_, Self>) {
            Self::step(self)
        }

        #[cfg(not(kshim_has_arbitrary_self_types))]
        fn run(this: ArcBorrow<'_, Self>) {
            Self::step(this)
        }
    }

    #[test]
    fn items_run_in_order_and_may_queue_themselves_again() {
        static QUEUE: WorkQueue<2> = WorkQueue::new();
        static ITEMS: ArcPool<Requeue, 2> = ArcPool::new();
        static TRACE: Trace = Mutex::new(Vec::new());
        let item = |id, runs| Requeue {
            id,
            runs_left: AtomicU32::new(runs),
            queue: &QUEUE,
            trace: &TRACE,
        };

        let first = Arc::new_in(item(1, 3), &ITEMS).unwrap();
        let second = Arc::new_in(item(2, 1), &ITEMS).unwrap();
        assert!(QUEUE.enqueue(first.clone()).is_ok());
        assert!(QUEUE.enqueue(second.clone()).is_ok());
        // Full: the item comes back, with its reference.
        let refused = QUEUE.enqueue(first.clone()).unwrap_err();
        assert!(Arc::ptr_eq(&refused, &first));
        drop(refused);
        assert_eq!((QUEUE.pending(), first.count(), second.count()), (2, 2, 2));

        assert_eq!(QUEUE.flush(), 4);
        assert_eq!(
            *TRACE.lock().unwrap(),
            [(1, 1, 2), (2, 1, 0), (1, 0, 1), (1, 0, 0)]
        );
        // The queue gave up every reference it took.
        assert_eq!((QUEUE.pending(), first.count(), second.count()), (0, 1, 1));
        assert_eq!(QUEUE.flush(), 0);
    }

    /// Runs `jobs` in rounds until none keeps itself, turning each into `Arc<Dyn>` with
    /// `coerce` and running it with `run`; returns the trace.
    fn run_in_rounds<Dyn: ?Sized>(
        jobs: Vec<Arc<Job>>,
        kept: &Mutex<Vec<Arc<Job>>>,
        trace: &Trace,
        coerce: fn(Arc<Job>) -> Arc<Dyn>,
        run: fn(ArcBorrow<'_, Dyn>),
    ) -> Vec<(u32, usize, u32)> {
        let mut pending: Vec<Arc<Dyn>> = jobs.into_iter().map(coerce).collect();
        while !pending.is_empty() {
            for item in pending.drain(..) {
                run(item.as_arc_borrow());
            }
            pending = kept.lock().unwrap().drain(..).map(coerce).collect();
        }
        let seen = trace.lock().unwrap().clone();
        seen
    }

    /// The jobs both forms run: ids 1, 2 and 3, running 2, 1 and 3 times.
    fn jobs(trace: &'static Trace, kept: &'static Mutex<Vec<Arc<Job>>>) -> Vec<Arc<Job>> {
        static JOBS: ArcPool<Job, 9> = ArcPool::new();
        [(1, 2), (2, 1), (3, 3)]
            .into_iter()
            .map(|(id, runs)| {
                let job = Job {
                    id,
                    runs_left: AtomicU32::new(runs),
                    trace,
                    kept,
                };
                Arc::new_in(job, &JOBS).unwrap()
            })
            .collect()
    }

    /// Three rounds; while it runs, each job's only reference is the round's own.
    const ROUNDS: [(u32, usize, u32); 6] = [
        (1, 1, 1),
        (2, 1, 0),
        (3, 1, 2),
        (1, 1, 0),
        (3, 1, 1),
        (3, 1, 0),
    ];

    #[test]
    fn the_replacement_dispatches_through_its_trampoline() {
        static TRACE: Trace = Mutex::new(Vec::new());
        static KEPT: Mutex<Vec<Arc<Job>>> = Mutex::new(Vec::new());

        let replaced = run_in_rounds::<dyn replacement::DynWorkItem>(
            jobs(&TRACE, &KEPT),
            &KEPT,
            &TRACE,
            |job| crate::unsize_arc!(job),
            |item| replacement::RunWorkItem::run(item),
        );
        assert_eq!(replaced, ROUNDS);
    }

    #[test]
    #[cfg(kshim_has_arbitrary_self_types)]
    fn gated_work_items_match_the_replacement() {
        static GATED_TRACE: Trace = Mutex::new(Vec::new());
        static REPLACED_TRACE: Trace = Mutex::new(Vec::new());
        static GATED_KEPT: Mutex<Vec<Arc<Job>>> = Mutex::new(Vec::new());
        static REPLACED_KEPT: Mutex<Vec<Arc<Job>>> = Mutex::new(Vec::new());
        // Gated: `run(self: ArcBorrow<'_, Self>)`, dispatched on `ArcBorrow<'_, dyn WorkItem>`.
        let gated = run_in_rounds::<dyn super::gated::WorkItem>(
            jobs(&GATED_TRACE, &GATED_KEPT),
            &GATED_KEPT,
            &GATED_TRACE,
            |job| crate::unsize_arc!(job),
            |item| item.run(),
        );
        // Replacement: `run(this: ArcBorrow<'_, Self>)`, called as `item.run()` through
        // `RunWorkItem` and the object-safe trampoline.
        let replaced = run_in_rounds::<dyn replacement::DynWorkItem>(
            jobs(&REPLACED_TRACE, &REPLACED_KEPT),
            &REPLACED_KEPT,
            &REPLACED_TRACE,
            |job| crate::unsize_arc!(job),
            |item| replacement::RunWorkItem::run(item),
        );
        assert_eq!(gated, replaced);
        assert_eq!(gated, ROUNDS);

        // The static call on a concrete borrow agrees too: `run()` on `ArcBorrow<'_, Job>`.
        use super::gated::WorkItem as _;
        let gated_job = jobs(&GATED_TRACE, &GATED_KEPT).swap_remove(0);
        let replaced_job = jobs(&REPLACED_TRACE, &REPLACED_KEPT).swap_remove(0);
        for _ in 0..2 {
            gated_job.as_arc_borrow().run();
            replacement::RunWorkItem::run(replaced_job.as_arc_borrow());
        }
        let gated = GATED_TRACE.lock().unwrap().split_off(ROUNDS.len());
        let replaced = REPLACED_TRACE.lock().unwrap().split_off(ROUNDS.len());
        assert_eq!(gated, replaced);
        // The first run kept the job, so the second saw two references.
        assert_eq!(gated, [(1, 1, 1), (1, 2, 0)]);
        REPLACED_KEPT.lock().unwrap().clear();
        GATED_KEPT.lock().unwrap().clear();
    }
}
