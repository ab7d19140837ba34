//! A `const` that points at a `static` with interior mutability: a module's shared counters.
//!
//! `const_refs_to_cell` (tracking issue #80384, stable since Rust 1.83.0) allows references
//! to values that may contain an `UnsafeCell` (atomics, locks, `Opaque<T>`) in constant
//! evaluation. The kernel needed it wherever a `const fn` borrows a value of a generic type,
//! which might hold a cell: `IdArray::new` copies each ID with `transmute_copy(&id)`.
//!
//! Naming a `static` from a `const`, as here, needs one more feature, `const_refs_to_static`,
//! stabilized in the same release; the kernel's lists never had it, so before 1.83.0 even
//! kernel mode cannot write this. Even now, the constant may not keep a *reference* to the
//! static's atomics (the compiler rejects a constant that refers to mutable memory), so it
//! keeps a raw pointer, as C's `.owner = THIS_MODULE` does.
//!
//! The stable replacement is a `static` instead of a `const`: statics may always borrow
//! statics. It costs one more symbol and an indirection a constant would fold away, and it
//! cannot appear where only a constant may, such as in another constant's initializer.
//!
//! This module enables no feature: the `const` form stands under
//! `kshim_stable_const_refs_to_cell`, where it is stable, and the `static` form otherwise.
//! The borrow of a generic value lives in the shim (`kernel::const_init::device_id`).

use core::sync::atomic::{AtomicU32, Ordering};
use kernel::prelude::*;

module! {
    type: RustConstRefsToCell,
    name: "rust_const_refs_to_cell",
    authors: ["Rust for Linux Contributors"],
    description: "Rust const refs to cell sample",
    license: "GPL",
}

/// Counters that every user of the module shares: the interior-mutable `static`.
struct Stats {
    opens: AtomicU32,
    errors: AtomicU32,
}

static STATS: Stats = Stats {
    opens: AtomicU32::new(0),
    errors: AtomicU32::new(0),
};

/// A handle to the module's counters, as a file-operations table would carry it.
///
/// # Invariants
///
/// `stats` points to a `Stats` that lives for the whole program.
struct StatsHandle {
    stats: *const Stats,
}

// SAFETY: the handle only ever gives out `&Stats`, and `Stats` is `Sync` (atomics only).
unsafe impl Sync for StatsHandle {}

impl StatsHandle {
    const fn new(stats: &'static Stats) -> Self {
        // INVARIANT: `stats` is `'static`.
        StatsHandle { stats }
    }

    fn get(&self) -> &'static Stats {
        // SAFETY: by the type invariant, `stats` points to a `Stats` that lives forever.
        unsafe { &*self.stats }
    }
}

/// The handle as a constant that refers to the `static`: the stabilized form.
#[cfg(kshim_stable_const_refs_to_cell)]
const HANDLE: StatsHandle = StatsHandle::new(&STATS);

/// The handle as a `static` that refers to the `static`: the pre-1.83 replacement.
#[cfg(not(kshim_stable_const_refs_to_cell))]
static HANDLE: StatsHandle = StatsHandle::new(&STATS);

/// Opens the device `count` times, failing every third open, as a user might.
fn open_many(count: u32) {
    let stats = HANDLE.get();
    for attempt in 1..=count {
        stats.opens.fetch_add(1, Ordering::Relaxed);
        if attempt % 3 == 0 {
            stats.errors.fetch_add(1, Ordering::Relaxed);
        }
    }
}

struct RustConstRefsToCell;

impl kernel::Module for RustConstRefsToCell {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust const refs to cell sample (init)\n");
        let (opens, errors) = (&STATS.opens, &STATS.errors);
        let before = (
            opens.load(Ordering::Relaxed),
            errors.load(Ordering::Relaxed),
        );
        open_many(7);
        pr_info!(
            "opens {}, errors {}\n",
            opens.load(Ordering::Relaxed) - before.0,
            errors.load(Ordering::Relaxed) - before.1
        );
        pr_info!(
            "handle and static agree: {}\n",
            core::ptr::eq(HANDLE.get(), &STATS)
        );
        Ok(RustConstRefsToCell)
    }
}

impl Drop for RustConstRefsToCell {
    fn drop(&mut self) {
        pr_info!("Rust const refs to cell sample (exit)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_handle_updates_the_shared_counters() {
        let log = kernel::module::load_unload::<RustConstRefsToCell>(&THIS_MODULE).unwrap();
        assert_eq!(
            log.as_str(),
            "[info] rust_const_refs_to_cell: Rust const refs to cell sample (init)\n\
             [info] rust_const_refs_to_cell: opens 7, errors 2\n\
             [info] rust_const_refs_to_cell: handle and static agree: true\n\
             [info] rust_const_refs_to_cell: Rust const refs to cell sample (exit)\n"
        );
    }
}
