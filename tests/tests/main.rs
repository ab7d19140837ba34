// SPDX-License-Identifier: GPL-2.0
//! The black-box tests, one binary: the `xtask` binary run as a user runs it, the shim and the
//! examples built and run through Cargo in both modes, and the repository's rules that need no
//! internals. Helpers are in [`support`].

mod audit;
mod cli;
mod hardening;
mod hostile;
mod merge;
mod modes;
mod msrv;
mod provisioning;
mod show;
mod support;
mod tidy;
