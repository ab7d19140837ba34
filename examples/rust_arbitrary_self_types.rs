// SPDX-License-Identifier: GPL-2.0
//! A method whose receiver is the kernel's own smart pointer: `fn run(self: ArcBorrow<'_, Self>)`.
//!
//! Stable Rust lets a method take `self` only as `Self`, `&Self`, `&mut Self`, or one of the
//! standard library's `Box`, `Rc`, `Arc` and `Pin`. `arbitrary_self_types` lifts that limit
//! for any type that dereferences to `Self`. The kernel has its own `Arc` (no weak count, its
//! own allocator) and its `ArcBorrow<'_, T>`, a borrowed `Arc` that costs no atomic operation
//! but can still become an `Arc` when the callee decides to keep the object. Binder (7.2 on)
//! uses it: its `Process` methods take `self: ArcBorrow<'_, Self>`, and its work items
//! (`DeliverToRead`) take an `Arc` of themselves as `self`, called as methods, also through
//! `dyn Trait`; so do the kernel's `ArcBorrow` doctests.
//!
//! Here a small driver polls two sensors from a work queue (`kernel::sync::workqueue`). Each
//! poll is a work item whose `run` reads through its `ArcBorrow`, and, if it has more to do,
//! queues itself again with `Arc::from(this)`: that is the moment it takes a reference, and
//! only then. In kernel mode the item's receiver is Binder's kind; the kernel's own
//! `workqueue.rs` needs none, its `run` being `fn run(this: Self::Pointer)`.
//!
//! The stable replacement is that shape: `fn run(this: ArcBorrow<'_, Self>)`, an associated
//! function. The shim also gives `ArcBorrow<'_, T>` a `run()` method through an extension trait
//! (`RunWorkItem`), so call sites stay `item.run()`. It costs the `this` spelling, an extra
//! import, and, because a trait without a receiver is not object safe, an object-safe
//! trampoline inside the shim for the queue's `dyn` items. Both forms stand side by side
//! below; the module logs the same lines either way.
//!
//! Status: still unstable as of nightly 1.97 (2026-05), tracking issue
//! [#44874](https://github.com/rust-lang/rust/issues/44874); the kernel lists
//! `arbitrary_self_types` in `rust_allowed_features`, so Kbuild turns it on for every module
//! (`-Zcrate-attr='feature(...)'`): a module uses it and never enables it itself (a
//! `#![feature(arbitrary_self_types)]` of its own would be an error: E0636 up to 1.95, the
//! deny-by-default `duplicate_features` lint from 1.96.0). Calling such a method on
//! `dyn WorkItem` also needs `ArcBorrow` to implement `DispatchFromDyn`, which the shim
//! provides (see `rust_coerce_pointee`).

use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::prelude::*;
#[cfg(not(kshim_has_arbitrary_self_types))]
use kernel::sync::workqueue::RunWorkItem;
use kernel::sync::workqueue::{WorkItem, WorkQueue};
use kernel::sync::ArcPool;

module! {
    type: RustArbitrarySelfTypes,
    name: "rust_arbitrary_self_types",
    authors: ["Rust for Linux Contributors"],
    description: "Rust arbitrary_self_types sample",
    license: "GPL",
}

/// One sensor, polled once per run until it has reported all its readings.
struct SensorPoll {
    name: &'static str,
    readings: [u32; 3],
    next: AtomicUsize,
}

/// The module's work queue, drained by `flush` as a kernel worker thread would.
static POLLS: WorkQueue<4> = WorkQueue::new();

/// Where the sensors' `Arc`s live: this crate has no allocator.
static SENSORS: ArcPool<SensorPoll, 2> = ArcPool::new();

impl SensorPoll {
    /// One poll: the work itself, shared by both spellings of `run`.
    fn poll(this: ArcBorrow<'_, Self>) {
        let index = this.next.fetch_add(1, Ordering::Relaxed);
        pr_info!(
            "{}: reading {} = {}\n",
            this.name,
            index,
            this.readings[index]
        );
        if index + 1 < this.readings.len() {
            // More to read: keep the object, taking a reference only now.
            if POLLS.enqueue(Arc::from(this)).is_err() {
                pr_warn!("{}: poll queue full, giving up\n", this.name);
            }
        }
    }
}

impl WorkItem for SensorPoll {
    // Kernel mode: the receiver is the kernel's own smart pointer.
    #[cfg(kshim_has_arbitrary_self_types)]
    fn run(self: ArcBorrow<'_, Self>) {
        Self::poll(self)
    }

    // Stable mode: an associated function; `RunWorkItem` still lets callers write `.run()`.
    #[cfg(not(kshim_has_arbitrary_self_types))]
    fn run(this: ArcBorrow<'_, Self>) {
        Self::poll(this)
    }
}

struct RustArbitrarySelfTypes {
    sensors: [Arc<SensorPoll>; 2],
}

impl kernel::Module for RustArbitrarySelfTypes {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust arbitrary_self_types sample (init)\n");
        let sensor = |name, readings| SensorPoll {
            name,
            readings,
            next: AtomicUsize::new(0),
        };
        let temperature = Arc::new_in(sensor("temp", [21, 22, 23]), &SENSORS)?;
        let fan = Arc::new_in(sensor("fan", [1200, 1250, 1300]), &SENSORS)?;

        // The first reading is taken right away, and that poll queues the next one itself:
        // the same call in both modes.
        temperature.as_arc_borrow().run();
        if POLLS.enqueue(fan.clone()).is_err() {
            return Err(EBUSY);
        }
        pr_info!("queued {} polls\n", POLLS.pending());
        let ran = POLLS.flush();
        pr_info!("ran {} polls\n", ran);
        Ok(RustArbitrarySelfTypes {
            sensors: [temperature, fan],
        })
    }
}

impl Drop for RustArbitrarySelfTypes {
    fn drop(&mut self) {
        for sensor in &self.sensors {
            pr_info!(
                "{}: {} readings taken\n",
                sensor.name,
                sensor.next.load(Ordering::Relaxed)
            );
        }
        pr_info!("Rust arbitrary_self_types sample (exit)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polls_run_through_arc_borrow_receivers() {
        let log = kernel::host::load_unload::<RustArbitrarySelfTypes>(&THIS_MODULE).unwrap();
        assert_eq!(
            log.as_str(),
            "[info] rust_arbitrary_self_types: Rust arbitrary_self_types sample (init)\n\
             [info] rust_arbitrary_self_types: temp: reading 0 = 21\n\
             [info] rust_arbitrary_self_types: queued 2 polls\n\
             [info] rust_arbitrary_self_types: temp: reading 1 = 22\n\
             [info] rust_arbitrary_self_types: fan: reading 0 = 1200\n\
             [info] rust_arbitrary_self_types: temp: reading 2 = 23\n\
             [info] rust_arbitrary_self_types: fan: reading 1 = 1250\n\
             [info] rust_arbitrary_self_types: fan: reading 2 = 1300\n\
             [info] rust_arbitrary_self_types: ran 5 polls\n\
             [info] rust_arbitrary_self_types: temp: 3 readings taken\n\
             [info] rust_arbitrary_self_types: fan: 3 readings taken\n\
             [info] rust_arbitrary_self_types: Rust arbitrary_self_types sample (exit)\n"
        );
    }
}
