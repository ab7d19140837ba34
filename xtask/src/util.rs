// SPDX-License-Identifier: GPL-2.0
//! Small utilities that know nothing of compilers, features or kernels: files, processes, JSON,
//! output, hashes, dates, the run lock and Ctrl-C. Every other folder may use them; they use
//! nothing above them.

pub(crate) mod browser;
pub(crate) mod date;
pub(crate) mod diagnostics;
pub(crate) mod files;
pub(crate) mod hash;
pub(crate) mod interrupt;
pub(crate) mod json;
pub(crate) mod libtest;
pub(crate) mod output;
pub(crate) mod png;
pub(crate) mod process;
pub(crate) mod run_lock;
