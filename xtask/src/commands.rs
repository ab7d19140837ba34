// SPDX-License-Identifier: GPL-2.0
//! One module per command, each `impl flags::Command { fn run(&self, sh: &Shell, ...) }` (a command that prints
//! tables takes the width to lay them out for); [`cli`]
//! reads the common flags, parses the rest (`flags`) and dispatches. No command imports
//! another.

pub(crate) mod audit;
pub(crate) mod bench;
pub(crate) mod ci_matrix;
pub mod cli;
pub(crate) mod docs;
pub(crate) mod flags;
pub(crate) mod kernel;
pub(crate) mod matrix;
pub(crate) mod merge;
pub(crate) mod msrv;
pub(crate) mod show;
pub(crate) mod toolchains;
pub(crate) mod usage;
