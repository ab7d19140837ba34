// SPDX-License-Identifier: GPL-2.0
//! kshim's automation. Its one public item is [`commands::cli::main`], which `main.rs` calls: it
//! parses the flags and dispatches; each command lives in its own module under [`commands`], with
//! `impl flags::Command { fn run(&self, sh: &Shell) -> anyhow::Result<Verdict> }`. The tests
//! (`tests/`) are the crate's own unit tests, so that they can reach every module.

/// The feature catalog: the shim's own file, compiled in here too, so that there is no second
/// copy and a shim that does not build cannot stop the tool that reports it.
#[path = "../../kernel-shim/src/catalog.rs"]
mod catalog;

pub mod commands;
mod docs;
mod features;
mod kernel;
mod report;
mod run;
mod targets;
mod toolchains;
mod util;

use std::path::PathBuf;

/// How a command that ran to its end came out; errors (exit status 2) are `anyhow::Error`s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Everything matched: exit status 0.
    Success,
    /// The command found a mismatch or a failure it reports: exit status 1.
    Failure,
}

impl Verdict {
    pub(crate) fn failure_if(failed: bool) -> Verdict {
        if failed {
            Verdict::Failure
        } else {
            Verdict::Success
        }
    }

    /// The `verdict` member of the JSON reports: `success` or `failure`.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Verdict::Success => "success",
            Verdict::Failure => "failure",
        }
    }
}

/// Adds `item` unless `list` holds it already: a set that keeps the order items came in.
pub(crate) fn push_once<T: PartialEq>(list: &mut Vec<T>, item: T) {
    if !list.contains(&item) {
        list.push(item);
    }
}

/// The items without repeats, in the order they first came.
pub(crate) fn distinct<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut list = Vec::new();
    for item in items {
        push_once(&mut list, item);
    }
    list
}

/// The repository's root, where `Cargo.toml`, `toolchains.toml` and `target/` are.
pub(crate) fn project_root() -> PathBuf {
    let manifest_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map(PathBuf::from)
        .unwrap_or(manifest_dir)
}

#[cfg(test)]
mod tests;
