// SPDX-License-Identifier: GPL-2.0
//! The tests that span the xtask and need its internals: its commands on real compilers,
//! hostile and hardened inputs made from its types, and the tidy checks that read its tables.
//! The tests of a single module stay beside it (`NAME/tests.rs`); what a user can do with the
//! binary is tested in the top-level `tests/` crate.

mod audit;
mod audit_corpus;
mod hardening;
mod hostile;
mod kcfi;
mod kernel_coverage;
mod kernel_mode;
mod modinfo;
mod page;
pub(crate) mod support;
mod targets;
mod tidy;
mod usage;
