// SPDX-License-Identifier: GPL-2.0
//! kshim's automation as a library, so that the repository tests can drive the same code.
//!
//! `main.rs` only parses flags and dispatches; each command lives in its own module, with
//! `impl flags::Command { fn run(&self, sh: &Shell) -> anyhow::Result<Verdict> }`.

#![warn(unreachable_pub)]

pub mod flags;

/// The feature catalog: the shim's own file, compiled in here too, so that there is no second
/// copy and a shim that does not build cannot stop the tool that reports it.
#[path = "../../kernel-shim/src/catalog.rs"]
pub mod catalog;

mod apt;
pub mod attributes;
pub mod audit;
mod bench;
pub mod browser;
pub mod cache;
pub mod cfg;
pub mod ci_matrix;
pub mod cli;
pub mod date;
mod debian;
pub mod diagnostics;
mod digests;
pub mod docs;
pub mod driver;
pub mod emulators;
pub mod expect;
mod extracted;
mod files;
pub mod hash;
mod interrupt;
pub mod json;
pub mod judge;
pub mod jump_table;
pub mod kconfig;
mod kernel;
mod kernel_report;
pub mod kernel_tree;
pub mod library_sources;
pub mod libtest;
mod loader;
pub mod matrix;
pub mod merge;
pub mod output;
pub mod pins;
pub mod places;
pub mod plan;
pub mod probe;
pub mod process;
mod provision;
pub mod report;
pub mod run_lock;
pub mod runner;
pub mod schedule;
pub mod status;
pub mod targets;
pub mod toolchain;
mod toolchains;
pub mod usage;
pub mod usage_report;
pub mod version;

use std::path::PathBuf;

/// How a command that ran to its end came out; errors (exit status 2) are `anyhow::Error`s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Everything matched: exit status 0.
    Success,
    /// The command found a mismatch or a failure it reports: exit status 1.
    Failure,
}

/// The repository's root, where `Cargo.toml`, `toolchains.toml` and `target/` are.
pub fn project_root() -> PathBuf {
    let manifest_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map(PathBuf::from)
        .unwrap_or(manifest_dir)
}
