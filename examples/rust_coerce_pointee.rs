// SPDX-License-Identifier: GPL-2.0
//! Turning the kernel's `Arc<Uart>` into an `Arc<dyn Device>`, and calling `self: Arc<Self>`
//! methods on it.
//!
//! The standard library's `Arc<T>` coerces to `Arc<dyn Trait>` because it implements two
//! unstable traits: `CoerceUnsized` (the coercion itself) and `DispatchFromDyn` (so that a
//! method taking `self: Arc<Self>` can be called on a trait object). The kernel has its own
//! `Arc`, so it must implement them too, and for that it needs unstable features:
//!
//! - from Rust 1.84.0 on (`CONFIG_RUSTC_HAS_COERCE_POINTEE`), `derive_coerce_pointee`:
//!   `#[derive(CoercePointee)]` on `Arc` and `ArcBorrow`, which writes both impls and checks
//!   that the type really is a pointer (`#[repr(transparent)]`, one pointee);
//! - before it, the traits themselves, `coerce_unsized` and `dispatch_from_dyn`, plus
//!   `unsize` for the `T: Unsize<U>` bound of the hand-written impls.
//!
//! The kernel enables these in `rust/kernel/lib.rs` only: they are not in
//! `rust_allowed_features`, so a driver (or this sample) may not enable them. It does not need
//! to: the impls live in the `kernel` crate, and using a coercion or a `dyn` call needs no
//! feature. This sample is that situation. Its only feature is `arbitrary_self_types`, which
//! the kernel allows, for the `self: Arc<Self>` receiver itself: Kbuild turns it on for every
//! driver, so the sample uses it without enabling it.
//!
//! The stable replacement is the shim's `unsize_arc!` macro: it hands the `Arc`'s inner raw
//! pointer to the language's built-in unsizing coercion, which can change nothing but the
//! pointer's metadata, and rebuilds the `Arc`. It costs one macro call wherever the kernel
//! writes nothing at all. Without `DispatchFromDyn`, `remove` takes `&self`, and the caller's
//! `Arc` is dropped right after the call instead of inside it; the call site reads the same.
//!
//! Status: still unstable as of nightly 1.97 (2026-05): `derive_coerce_pointee` is tracked in
//! [#123430](https://github.com/rust-lang/rust/issues/123430) (its stabilization is expected),
//! `coerce_unsized` and `unsize` in [#18598](https://github.com/rust-lang/rust/issues/18598),
//! and `dispatch_from_dyn` has no tracking issue: it is meant to stay internal.

use core::sync::atomic::{AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::ArcPool;
#[cfg(not(kshim_kernel_mode))]
use kernel::unsize_arc;

module! {
    type: RustCoercePointee,
    name: "rust_coerce_pointee",
    authors: ["Rust for Linux Contributors"],
    description: "Rust coerce_pointee sample",
    license: "GPL",
}

/// What the driver core knows about any device.
trait Device: Send + Sync {
    fn name(&self) -> &'static str;
    fn irq(&self) -> u32;
    fn interrupts(&self) -> u32;

    /// Removes the device; the caller's reference goes with the call (kernel mode) or right
    /// after it (stable mode).
    #[cfg(kshim_kernel_mode)]
    fn remove(self: Arc<Self>);
    #[cfg(not(kshim_kernel_mode))]
    fn remove(&self);
}

/// A serial port; the driver also keeps a typed handle to it, to raise interrupts.
struct Uart {
    interrupts: AtomicU32,
}

/// A real-time clock, known to the module only as a `dyn Device`.
struct Rtc;

static UARTS: ArcPool<Uart, 1> = ArcPool::new();
static RTCS: ArcPool<Rtc, 1> = ArcPool::new();

impl Uart {
    fn interrupt(&self) {
        self.interrupts.fetch_add(1, Ordering::Relaxed);
    }
}

impl Device for Uart {
    fn name(&self) -> &'static str {
        "ttyS0"
    }

    fn irq(&self) -> u32 {
        4
    }

    fn interrupts(&self) -> u32 {
        self.interrupts.load(Ordering::Relaxed)
    }

    #[cfg(kshim_kernel_mode)]
    fn remove(self: Arc<Self>) {
        pr_info!("{}: removed\n", self.name());
    }

    #[cfg(not(kshim_kernel_mode))]
    fn remove(&self) {
        pr_info!("{}: removed\n", self.name());
    }
}

impl Device for Rtc {
    fn name(&self) -> &'static str {
        "rtc0"
    }

    fn irq(&self) -> u32 {
        8
    }

    fn interrupts(&self) -> u32 {
        0
    }

    #[cfg(kshim_kernel_mode)]
    fn remove(self: Arc<Self>) {
        pr_info!("{}: removed\n", self.name());
    }

    #[cfg(not(kshim_kernel_mode))]
    fn remove(&self) {
        pr_info!("{}: removed\n", self.name());
    }
}

impl Drop for Uart {
    fn drop(&mut self) {
        pr_info!("ttyS0: freed\n");
    }
}

impl Drop for Rtc {
    fn drop(&mut self) {
        pr_info!("rtc0: freed\n");
    }
}

struct RustCoercePointee {
    uart: Arc<Uart>,
    devices: [Option<Arc<dyn Device>>; 2],
}

impl kernel::Module for RustCoercePointee {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust coerce_pointee sample (init)\n");
        let uart = Arc::new_in(
            Uart {
                interrupts: AtomicU32::new(0),
            },
            &UARTS,
        )?;
        let rtc = Arc::new_in(Rtc, &RTCS)?;

        // Kernel mode: an ordinary coercion, which the `kernel` crate's `CoercePointee` (or,
        // before 1.84, `CoerceUnsized`) impl allows.
        #[cfg(kshim_kernel_mode)]
        let devices: [Arc<dyn Device>; 2] = [uart.clone(), rtc];
        // Stable mode: the same conversion, spelled out.
        #[cfg(not(kshim_kernel_mode))]
        let devices: [Arc<dyn Device>; 2] = [unsize_arc!(uart.clone()), unsize_arc!(rtc)];

        for device in &devices {
            pr_info!("{}: registered, irq {}\n", device.name(), device.irq());
        }
        // The typed handle and the `dyn Device` are one object.
        uart.interrupt();
        uart.interrupt();
        for device in &devices {
            pr_info!("{}: {} interrupts\n", device.name(), device.interrupts());
        }
        let [uart_device, rtc_device] = devices;
        Ok(RustCoercePointee {
            uart,
            devices: [Some(rtc_device), Some(uart_device)],
        })
    }
}

impl Drop for RustCoercePointee {
    fn drop(&mut self) {
        // The typed handle reaches the same object as the `dyn Device` did.
        self.uart.interrupt();
        pr_info!("ttyS0: {} interrupts at exit\n", self.uart.interrupts());
        for device in self.devices.iter_mut().filter_map(Option::take) {
            // Kernel mode: dispatched on `Arc<dyn Device>` itself (`DispatchFromDyn`), which
            // consumes it. Stable mode: dispatched on `&dyn Device`; `device` is dropped at
            // the end of this iteration. The rtc's last reference goes either way; the uart's
            // does not, since `self.uart` still holds one.
            device.remove();
        }
        pr_info!("Rust coerce_pointee sample (exit)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_coerce_dispatch_and_free_once() {
        let log = kernel::host::load_unload::<RustCoercePointee>(&THIS_MODULE).unwrap();
        assert_eq!(
            log.as_str(),
            "[info] rust_coerce_pointee: Rust coerce_pointee sample (init)\n\
             [info] rust_coerce_pointee: ttyS0: registered, irq 4\n\
             [info] rust_coerce_pointee: rtc0: registered, irq 8\n\
             [info] rust_coerce_pointee: ttyS0: 2 interrupts\n\
             [info] rust_coerce_pointee: rtc0: 0 interrupts\n\
             [info] rust_coerce_pointee: ttyS0: 3 interrupts at exit\n\
             [info] rust_coerce_pointee: rtc0: removed\n\
             [info] rust_coerce_pointee: rtc0: freed\n\
             [info] rust_coerce_pointee: ttyS0: removed\n\
             [info] rust_coerce_pointee: Rust coerce_pointee sample (exit)\n\
             [info] rust_coerce_pointee: ttyS0: freed\n"
        );
    }
}
