// SPDX-License-Identifier: GPL-2.0
//! The target axis as a table for people, and the notes that say why cells were skipped.

use super::{known_word, KnownCell, Sources, TargetAxis, TargetCell, STAGES};
use crate::features::expect::{Outcome, ToolchainVerdict};
use crate::report::text::outcome_cell;
use crate::report::{id_of, ToolchainEntry};
use crate::run::plan::Kind;
use crate::targets::{kernel_target, BROKEN_JUMP_TABLES};
use crate::util::output::Table;
use std::collections::HashMap;

impl TargetAxis {
    /// The kernel-target table: per target, whether each compiler knows it, then its stages
    /// (kernel mode / stable mode where built per mode); `None` without a target axis.
    pub fn table(&self, shown: &[usize], headers: &[String]) -> Option<Table> {
        if self.triples.is_empty() {
            return None;
        }
        let mut table = Table::new("kernel target (kernel mode / stable mode)", headers);
        let known: HashMap<(usize, &str), &KnownCell> = self
            .known
            .iter()
            .map(|cell| ((cell.toolchain, cell.triple.as_str()), cell))
            .collect();
        let cells: HashMap<_, &TargetCell> =
            self.cells.iter().map(|cell| (cell.key(), cell)).collect();
        for triple in &self.triples {
            let row = shown
                .iter()
                .map(|&index| match known.get(&(index, triple.as_str())) {
                    Some(cell) if cell.error.is_some() => ("failed".to_string(), !cell.ok()),
                    Some(cell) => (known_word(cell.observed).to_string(), !cell.ok()),
                    None => ("-".to_string(), false),
                })
                .collect();
            table.rows.push((format!("{triple}: listed"), row));
            for (stage, kind, modes) in STAGES {
                let row = shown
                    .iter()
                    .map(|&index| {
                        let cells = modes.iter().map(|&mode| {
                            let cell = cells.get(&(index, triple.as_str(), stage, mode));
                            cell.map(|cell| (cell.outcome, cell.ok()))
                        });
                        outcome_cell(&cells.collect::<Vec<_>>())
                    })
                    .collect();
                let stage = match kind {
                    Kind::Build => "build kernel",
                    Kind::Objects => "check static-key objects",
                    Kind::Emulate => "run test program",
                    _ => stage,
                };
                table.rows.push((format!("{triple}: {stage}"), row));
            }
        }
        Some(table)
    }

    /// Why cells were skipped, once each: toolchains without library sources, targets whose
    /// test program cannot run here.
    pub fn notes(&self, toolchains: &[ToolchainEntry]) -> Vec<String> {
        let mut notes = Vec::new();
        for (toolchain, sources) in toolchains.iter().zip(&self.sources) {
            if let Some(Sources::Missing(why)) = sources {
                notes.push(format!("{}: {why}", toolchain.id));
            }
        }
        // Skips the plan made for a reason of the target's own; a failed step's dependents
        // and a toolchain's verdict or missing sources are said elsewhere.
        let mut reasons: Vec<String> = self
            .cells
            .iter()
            .filter(|cell| cell.expected == Outcome::Skipped && cell.outcome == Outcome::Skipped)
            .filter_map(|cell| {
                let why = cell.first_error.as_ref()?;
                let sources = self.sources.get(cell.toolchain);
                let said = matches!(sources, Some(Some(Sources::Missing(missing))) if missing == why)
                    || toolchains
                        .get(cell.toolchain)
                        .is_some_and(|toolchain| toolchain.verdict != ToolchainVerdict::Ok);
                (!said).then(|| format!("{}: {why}", cell.triple))
            })
            .collect();
        // Failures the catalog predicts, with what the compilers showed.
        for cell in self
            .cells
            .iter()
            .filter(|cell| cell.expected == Outcome::Fail)
        {
            let Some(broken) = kernel_target(&cell.triple).and_then(|target| {
                BROKEN_JUMP_TABLES
                    .iter()
                    .find(|broken| broken.arch == target.arch)
            }) else {
                continue;
            };
            let id = id_of(toolchains, cell.toolchain);
            reasons.push(format!(
                "{}: {id} is predicted to fail its static-branch checks: {}",
                cell.triple, broken.evidence
            ));
        }
        reasons.sort();
        reasons.dedup();
        notes.extend(reasons);
        notes
    }
}
