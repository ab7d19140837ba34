// SPDX-License-Identifier: GPL-2.0
//! Real kernel trees: their own Rust rules and what a compiler's probes of them predict
//! ([`rules`]), the pinned trees and the tools a build runs, the build itself and what it said,
//! the results it keeps and how they are found ([`results`]), the plan of a run (`--dry-run`),
//! the boot of a built kernel, the report that puts the real result beside the prediction, and
//! the run of every (tree, compiler) pair ([`run`]).

pub(crate) mod boot;
pub(crate) mod build;
pub(crate) mod plan;
pub(crate) mod report;
pub(crate) mod results;
pub(crate) mod rules;
pub(crate) mod run;
pub(crate) mod said;
pub(crate) mod stamps;
pub(crate) mod symbols;
pub(crate) mod tools;
pub(crate) mod trees;
