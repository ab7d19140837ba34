//! Synchronisation primitives: reference counting with [`Arc`] and [`ArcBorrow`].

mod arc;

pub use arc::{Arc, ArcBorrow};
