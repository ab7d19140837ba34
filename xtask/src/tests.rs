// SPDX-License-Identifier: GPL-2.0
//! The tests that span the xtask: its commands on real compilers and on the real `xtask`
//! binary, hostile and hardened inputs, and the repository's tidy checks. The tests of a
//! single module stay beside it (`NAME/tests.rs`).

mod audit;
mod audit_corpus;
mod hardening;
mod hostile;
mod kernel;
mod kernel_coverage;
mod kernel_mode;
mod merge;
mod page;
pub(crate) mod support;
mod targets;
mod tidy;
mod toolchains;
mod usage;
