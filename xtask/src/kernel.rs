// SPDX-License-Identifier: GPL-2.0
//! Real kernel trees: their Rust rules and what they predict ([`rules`]), their build, its kept
//! results ([`results`]) and boot, and the run of every (tree, compiler) pair ([`run`]) or its
//! plan.

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
