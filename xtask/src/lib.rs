// SPDX-License-Identifier: GPL-2.0
//! kshim's automation. Its one public item is [`commands::cli::main`], which `main.rs` calls;
//! each command lives in its own module under [`commands`]. The tests (`tests/`) are the crate's
//! own unit tests, so that they can reach every module.

/// The feature catalog: the shim's own file, compiled in here too, so that a shim that does not
/// build cannot stop the tool that reports it.
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

/// `work` on every item, each on a thread of its own: the answers, in order.
pub(crate) fn in_parallel<T: Send, R: Send>(
    items: impl IntoIterator<Item = T>,
    work: impl Fn(usize, T) -> R + Sync,
) -> Vec<R> {
    std::thread::scope(|scope| {
        let work = &work;
        let handles: Vec<_> = items
            .into_iter()
            .enumerate()
            .map(|(index, item)| scope.spawn(move || work(index, item)))
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("a worker thread panicked"))
            .collect()
    })
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

/// The number of single-character edits between `a` and `b`.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

/// The candidate closest to `typed`, if one is close enough to be what was meant.
pub(crate) fn closest<'a>(typed: &str, candidates: &'a [String]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|candidate| (distance(typed, candidate), candidate))
        .filter(|(distance, candidate)| *distance <= (candidate.len() / 3).max(2))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate.as_str())
}
