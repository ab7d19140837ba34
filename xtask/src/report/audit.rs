// SPDX-License-Identifier: GPL-2.0
//! The audit's report: the feature lines of a crate ([`input`], read where `msrv --root` reads
//! them too, in [`crate::run::crate_root`]), each compiler's answer about them, what they mean
//! ([`summary`]) and how they are written ([`render`]); `cargo xtask audit` makes one, and
//! `cargo xtask docs` renders the one recorded in `docs/audit-report.json` ([`read`]).

pub use crate::run::crate_root::input;
pub mod read;
pub mod render;
pub mod summary;

use crate::catalog::Release;
use crate::project_root;
use crate::report::ToolchainEntry;
use crate::run::plan::Rustc;
use crate::toolchains::discovery::SourceKind;
use crate::Verdict;
use input::Input;
use std::path::Path;
use summary::{Answer, CrossSummary, Decider, Lint};

#[derive(Clone, Debug)]
pub enum Probed {
    Answered(Answer),
    /// The probe ran but could not be read, or did not run (the message says which).
    Failed(String),
    /// The toolchain is missing or broken (its verdict says why).
    Unavailable,
}

/// One toolchain of the audit.
#[derive(Clone, Debug)]
pub struct Column {
    pub entry: ToolchainEntry,
    pub probed: Probed,
    pub rustc: Option<Rustc>,
    /// The compiler's identity in cache keys ([`crate::run::cache::compiler_identity`]), where
    /// it was found.
    pub identity: Option<crate::util::hash::Key>,
}

impl Column {
    /// The column header: the id, with the release if the id does not already say it, and for
    /// a compiler given as a path, the path (two of one release are told apart by it).
    pub fn label(&self) -> String {
        let entry = &self.entry;
        let path = (entry.source == Some(SourceKind::Path)).then(|| {
            let path = Path::new(&entry.spec);
            path.strip_prefix(project_root())
                .unwrap_or(path)
                .display()
                .to_string()
        });
        crate::util::output::column_label(&entry.id, entry.release_text.as_deref(), path.as_deref())
    }

    pub fn answer(&self) -> Option<&Answer> {
        match &self.probed {
            Probed::Answered(answer) => Some(answer),
            _ => None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct AuditReport {
    pub input: Input,
    pub decider: Decider,
    /// The toolchains, in release order as every table's columns.
    pub columns: Vec<Column>,
    pub min_rust: Option<Release>,
    pub cross: CrossSummary,
    pub lint: Lint,
}

impl AuditReport {
    /// Sums up columns that have been probed, put in release order.
    pub fn new(
        input: Input,
        decider: Decider,
        columns: Vec<Column>,
        min_rust: Option<Release>,
    ) -> Self {
        let entries: Vec<ToolchainEntry> = columns.iter().map(|c| c.entry.clone()).collect();
        let order = crate::report::release_order(&entries).into_iter();
        let columns: Vec<Column> = order.map(|index| columns[index].clone()).collect();
        let answers: Vec<Answer> = columns.iter().filter_map(Column::answer).cloned().collect();
        let cross = summary::cross_summary(&input, &decider, &answers);
        let lint = min_rust.map(|minimum| summary::lint(&input, &decider, &answers, minimum));
        AuditReport {
            input,
            decider,
            columns,
            min_rust,
            cross,
            lint: lint.unwrap_or_default(),
        }
    }

    /// Failure when `--min-rust` found something, when the newest compiler rejects a feature
    /// (a build error), or when no compiler answered about a crate that enables any feature.
    pub fn verdict(&self) -> Verdict {
        let answered = self.input.entries.is_empty()
            || self.columns.iter().any(|column| column.answer().is_some());
        // A feature the newest compiler rejects is a build error: a finding, as `cargo msrv
        // verify` fails on a crate that does not build.
        let clean = self.lint.is_empty() && self.cross.rejected_by_newest.is_empty();
        Verdict::failure_if(!(answered && clean))
    }
}

#[cfg(test)]
mod tests;
