// SPDX-License-Identifier: GPL-2.0
//! Any crate root, outside this repository too, as `audit` and `msrv` take it: the feature lines
//! it enables ([`input`]), one compiler's answer about their names ([`probing`]), and the
//! compile of the crate itself, with or without `RUSTC_BOOTSTRAP` ([`compile`]).

pub mod compile;
pub mod input;
pub mod probing;
