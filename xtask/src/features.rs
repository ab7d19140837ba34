// SPDX-License-Identifier: GPL-2.0
//! The catalog's features as the xtask reads them: a status and its encoding, cfg predicates and
//! a crate root's attributes, what the catalog predicts for a release, asking a compiler, the
//! places a feature is used, and the kernel's `RUSTC_HAS_*` Kconfig entries.

pub(crate) mod attributes;
pub(crate) mod cfg;
pub(crate) mod expect;
pub(crate) mod kconfig;
pub(crate) mod places;
pub(crate) mod probe;
pub(crate) mod status;
