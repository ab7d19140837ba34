// SPDX-License-Identifier: GPL-2.0
//! Synchronisation primitives: reference counting with [`Arc`] and [`ArcBorrow`], and a
//! [`workqueue`] of reference-counted work items.
//!
//! These are where the kernel's four pointer features meet: `Arc` coerces to `Arc<dyn Trait>`
//! through `derive(CoercePointee)` (before Rust 1.84: `CoerceUnsized`, `DispatchFromDyn` and
//! `Unsize`), and methods take an `ArcBorrow<'_, Self>` receiver (`arbitrary_self_types`), as
//! the kernel's `ArcBorrow` doctest and Binder do and this work queue's items do in kernel
//! mode. Each has its stable replacement next to it.

mod arc;
pub mod workqueue;

pub use arc::{Arc, ArcBorrow, ArcPool};
