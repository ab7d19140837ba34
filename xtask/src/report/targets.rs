// SPDX-License-Identifier: GPL-2.0
//! The report's target axis: per toolchain and kernel target, whether the compiler knows the
//! target, and the target cells (`core`, `compiler_builtins`, then per mode the shim, the
//! static-key sample's objects and the test program), each next to its prediction.

use super::{id_of, Failure, ToolchainEntry};
use crate::features::expect::{Outcome, ToolchainVerdict};
use crate::run::judge::StepResult;
use crate::run::plan::{cell_label, has_sites, not_built, Kind, Mode, Step};
use crate::targets::{broken_jump_tables, kernel_target, KernelTarget};
use crate::toolchains::library_sources::LibrarySources;
use crate::util::json::{self, Deserialize, Serialize};
use crate::util::process::last_nonempty_line;
use anyhow::{bail, ensure};
use std::collections::HashMap;

mod check;
#[cfg(test)]
mod tests;
mod text;
pub(super) mod to_json;

/// Whether one compiler knows one kernel target.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnownCell {
    #[serde(skip)]
    pub toolchain: usize,
    #[serde(rename = "target")]
    pub triple: String,
    /// What `rustc --print target-list` said; `None` where it did not run or failed.
    #[serde(deserialize_with = "json::nullable")]
    pub observed: Option<bool>,
    /// What the catalog predicts; `None` where it makes no claim.
    #[serde(deserialize_with = "json::nullable")]
    pub expected: Option<bool>,
    /// Why there is no observation, if the probe ran and failed.
    #[serde(deserialize_with = "json::nullable")]
    pub error: Option<String>,
}

impl KnownCell {
    /// Whether observation and prediction agree; a failed probe never does.
    pub fn ok(&self) -> bool {
        match (self.observed, self.expected) {
            (Some(observed), Some(expected)) => observed == expected,
            _ => self.error.is_none(),
        }
    }
}

/// The stages of one toolchain on one kernel target, in run order: `(stage, kind, modes)`.
pub const STAGES: [(&str, Kind, &[Option<Mode>]); 5] = [
    ("core", Kind::Core, &[None]),
    ("compiler_builtins", Kind::Core, &[None]),
    ("kernel", Kind::Build, BOTH_MODES),
    ("sites", Kind::Objects, BOTH_MODES),
    ("program", Kind::Emulate, BOTH_MODES),
];

/// The stages built per mode are built in both.
const BOTH_MODES: &[Option<Mode>] = &[Some(Mode::Kernel), Some(Mode::Stable)];

/// One target step on one toolchain and kernel target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetCell {
    #[serde(skip)]
    pub toolchain: usize,
    #[serde(rename = "target")]
    pub triple: String,
    /// One of [`STAGES`]' names.
    pub stage: String,
    /// Its kind, as [`STAGES`] gives it.
    pub kind: Kind,
    /// The mode, for the stages built per mode.
    #[serde(deserialize_with = "json::nullable")]
    pub mode: Option<Mode>,
    pub outcome: Outcome,
    /// What the catalog predicts.
    pub expected: Outcome,
    /// The first error, for failures and skips.
    #[serde(deserialize_with = "json::nullable")]
    pub first_error: Option<String>,
    /// What the step found: the static-branch sites checked, the test program's last line.
    #[serde(deserialize_with = "json::nullable")]
    pub detail: Option<String>,
    /// Seconds of the run that produced the result.
    #[serde(serialize_with = "super::milliseconds")]
    pub seconds: f64,
    pub cached: bool,
}

impl TargetCell {
    pub fn ok(&self) -> bool {
        self.outcome == self.expected
    }

    /// The cell as the failure list names it: `build kernel (kernel) for aarch64-unknown-none`.
    pub fn label(&self) -> String {
        cell_label(self.kind, &self.stage, self.mode, Some(&self.triple))
    }

    /// What tells the cell apart from every other of a report.
    fn key(&self) -> (usize, &str, &str, Option<Mode>) {
        (self.toolchain, &self.triple, &self.stage, self.mode)
    }
}

/// Where a toolchain's target libraries come from, or why there are none.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Sources {
    Identity(String),
    Missing(String),
}

/// The target axis of a report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TargetAxis {
    /// The kernel targets of the run, in catalog order.
    pub triples: Vec<String>,
    /// Per toolchain: where its library sources come from, or why there are none (`None` for
    /// a toolchain that was not found).
    pub sources: Vec<Option<Sources>>,
    /// Per toolchain that was found and kernel target, whether the compiler knows it.
    pub known: Vec<KnownCell>,
    pub cells: Vec<TargetCell>,
    /// Per toolchain: the major version of its LLVM, where `rustc -vV` said it; `None` in
    /// reports written before it was recorded.
    pub llvm: Option<Vec<Option<u32>>>,
}

/// What the plan knew of the target axis.
pub struct PlannedTargetAxis<'a> {
    pub targets: &'a [&'static KernelTarget],
    /// Per toolchain column that was found: its library sources, or why there are none.
    pub library_sources: &'a [Option<Result<LibrarySources, String>>],
    /// Per kernel target: why its test program is not built or run here, if it is not.
    pub not_run: &'a [Option<String>],
    /// Per toolchain column: the major version of its LLVM, where `rustc -vV` says it.
    pub llvm: &'a [Option<u32>],
}

/// The target axis of a run's report, from its steps' results.
pub fn assemble_target_axis(
    columns: &[ToolchainEntry],
    steps: &[Step],
    results: &[StepResult],
    planned: &PlannedTargetAxis<'_>,
) -> TargetAxis {
    let mut listed: HashMap<usize, &StepResult> = HashMap::new();
    let mut by_cell: HashMap<(usize, &str, &str, Option<Mode>), &StepResult> = HashMap::new();
    for (step, result) in steps.iter().zip(results) {
        if step.kind == Kind::Targets {
            listed.insert(step.toolchain, result);
        } else if let Some(kernel_target) = step.kernel_target {
            by_cell.insert(
                (
                    step.toolchain,
                    kernel_target.triple,
                    step.target.as_str(),
                    step.mode,
                ),
                result,
            );
        }
    }
    let mut targets = TargetAxis {
        triples: planned
            .targets
            .iter()
            .map(|kernel_target| kernel_target.triple.to_string())
            .collect(),
        sources: planned
            .library_sources
            .iter()
            .map(|sources| {
                Some(match sources.as_ref()? {
                    Ok(found) => Sources::Identity(found.identity.clone()),
                    Err(why) => Sources::Missing(why.clone()),
                })
            })
            .collect(),
        llvm: Some(planned.llvm.to_vec()),
        ..TargetAxis::default()
    };
    for (index, column) in columns.iter().enumerate() {
        let Some(Some(sources)) = planned.library_sources.get(index) else {
            continue;
        };
        let probe = listed.get(&index);
        let missing = sources.as_ref().err().map(String::as_str);
        let llvm = planned.llvm.get(index).copied().flatten();
        for (position, &kernel_target) in planned.targets.iter().enumerate() {
            targets.known.push(KnownCell {
                toolchain: index,
                triple: kernel_target.triple.to_string(),
                observed: probe
                    .and_then(|result| result.targets.as_ref())
                    .map(|known| known.iter().any(|name| name == kernel_target.triple)),
                expected: column
                    .release
                    .and_then(|release| kernel_target.known_on(release)),
                error: probe
                    .filter(|result| result.outcome != Outcome::Pass)
                    .map(|result| result.first_error.clone().unwrap_or_default()),
            });
            for (stage, kind, modes) in STAGES {
                for &mode in modes {
                    let (expected, why_not) = expected_cell(
                        column,
                        (missing, llvm),
                        kernel_target,
                        (kind, mode),
                        planned.not_run[position].as_deref(),
                    );
                    let found = by_cell.get(&(index, kernel_target.triple, stage, mode));
                    targets.cells.push(TargetCell {
                        toolchain: index,
                        triple: kernel_target.triple.to_string(),
                        stage: stage.to_string(),
                        kind,
                        mode,
                        outcome: found.map_or(Outcome::Skipped, |result| result.outcome),
                        expected,
                        first_error: match found {
                            Some(result) => result.first_error.clone(),
                            None => why_not,
                        },
                        detail: found
                            .and_then(|result| result.log.as_deref())
                            .and_then(last_nonempty_line)
                            .map(String::from),
                        seconds: found.map_or(0.0, |result| result.seconds),
                        cached: found.is_some_and(|result| result.cached),
                    });
                }
            }
        }
    }
    targets
}

/// What the catalog expects of one target cell of `column`, and why the cell is skipped if it
/// is: the run's rule, and the one every report read back is checked by. `missing` says why the
/// toolchain's library sources are missing, if they are; `llvm` is its LLVM's major version;
/// `not_run` why the target's test program is not run where the run was (no emulator).
pub(super) fn expected_cell(
    column: &ToolchainEntry,
    (missing, llvm): (Option<&str>, Option<u32>),
    kernel_target: &KernelTarget,
    (kind, mode): (Kind, Option<Mode>),
    not_run: Option<&str>,
) -> (Outcome, Option<String>) {
    let release = column.release;
    let why_not = match (&column.verdict, release) {
        (ToolchainVerdict::Ok, Some(release)) => not_built(release, missing, kernel_target),
        (verdict, _) => Some(verdict.not_run()),
    };
    let why_not = why_not.or_else(|| not_run.filter(|_| kind == Kind::Emulate).map(String::from));
    // The sample's and the program's checks fail where the build has sites and the compiler's
    // LLVM writes their entries wrongly.
    let sites = mode
        .zip(release)
        .is_some_and(|(mode, release)| has_sites(release, mode));
    let expected = if why_not.is_some() {
        Outcome::Skipped
    } else if broken_jump_tables(kernel_target, llvm).is_some()
        && sites
        && matches!(kind, Kind::Objects | Kind::Emulate)
    {
        Outcome::Fail
    } else {
        Outcome::Pass
    };
    (expected, why_not)
}

/// Whether a compiler knows a target, as tables and failures say it.
pub fn known_word(known: Option<bool>) -> &'static str {
    match known {
        Some(true) => "known",
        Some(false) => "unknown",
        None => "-",
    }
}

impl TargetAxis {
    /// Every difference on the target axis, as the failure list prints it.
    pub fn failures(&self, toolchains: &[ToolchainEntry]) -> Vec<Failure> {
        let id = |index: usize| id_of(toolchains, index);
        let mut failures = Vec::new();
        for cell in self.known.iter().filter(|cell| !cell.ok()) {
            failures.push(Failure {
                toolchain: id(cell.toolchain),
                cell: format!("target {}", cell.triple),
                expected: known_word(cell.expected).into(),
                observed: match &cell.error {
                    Some(_) => "target-list failed".into(),
                    None => known_word(cell.observed).into(),
                },
                first_error: cell.error.clone(),
            });
        }
        for cell in self.cells.iter().filter(|cell| !cell.ok()) {
            failures.push(Failure {
                toolchain: id(cell.toolchain),
                cell: cell.label(),
                expected: cell.expected.word().into(),
                observed: cell.outcome.word().into(),
                first_error: cell.first_error.clone(),
            });
        }
        failures
    }

    /// For a toolchain's summary line: how many kernel targets it knows, and how its target
    /// cells came out; `None` when the run had no target axis or the toolchain none.
    pub fn summary(&self, toolchain: usize) -> Option<String> {
        let known: Vec<&KnownCell> = self
            .known
            .iter()
            .filter(|cell| cell.toolchain == toolchain)
            .collect();
        if known.is_empty() {
            return None;
        }
        let knows = known
            .iter()
            .filter(|cell| cell.observed == Some(true))
            .count();
        let cells: Vec<&TargetCell> = self
            .cells
            .iter()
            .filter(|cell| cell.toolchain == toolchain)
            .collect();
        let count = |keep: fn(&TargetCell) -> bool| cells.iter().filter(|cell| keep(cell)).count();
        let passed = count(|cell| cell.outcome == Outcome::Pass);
        let predicted =
            count(|cell| cell.outcome == Outcome::Fail && cell.expected == Outcome::Fail);
        let skipped = count(|cell| cell.outcome == Outcome::Skipped);
        let mut text = format!(
            "knows {knows} of {} kernel targets; {passed} of {} target cells pass",
            known.len(),
            cells.len()
        );
        if predicted > 0 {
            text.push_str(&format!(", {predicted} fail as predicted"));
        }
        // Cells that could not run are said as skipped, with why, so that they never read as
        // failures: "32 skipped: no library sources (`rustup component add rust-src ...`)".
        match self.sources.get(toolchain) {
            Some(Some(Sources::Missing(why))) if skipped > 0 => {
                let why = match why.split_once(": run ") {
                    Some((what, command)) => format!("{what} ({command})"),
                    None => why.clone(),
                };
                text.push_str(&format!(", {skipped} skipped: {why}"));
            }
            Some(Some(Sources::Missing(why))) => text.push_str(&format!(" ({why})")),
            _ if skipped > 0 => text.push_str(&format!(", {skipped} skipped")),
            _ => {}
        }
        Some(text)
    }

    /// Fails, saying what is wrong, unless every cell of a report read back names a kernel
    /// target of the run and a stage the plan makes, once (its toolchain was found by id).
    pub fn check(&self) -> anyhow::Result<()> {
        for triple in &self.triples {
            if kernel_target(triple).is_none() {
                bail!("`{triple}` is not a kernel target");
            }
        }
        let mut seen = std::collections::HashSet::new();
        for cell in &self.known {
            ensure!(
                self.triples.contains(&cell.triple),
                "a target cell names toolchain {} and `{}`, not one of the run's",
                cell.toolchain,
                cell.triple
            );
            if !seen.insert((cell.toolchain, cell.triple.as_str(), "", None)) {
                bail!("target {} is there twice", cell.triple);
            }
        }
        for cell in &self.cells {
            if !self.triples.contains(&cell.triple) {
                bail!("{}: names no toolchain or target of the run", cell.label());
            }
            if !STAGES.iter().any(|&(stage, kind, modes)| {
                stage == cell.stage && kind == cell.kind && modes.contains(&cell.mode)
            }) {
                bail!("{}: the plan makes no such cell", cell.label());
            }
            if !seen.insert(cell.key()) {
                bail!("{}: the cell is there twice", cell.label());
            }
        }
        Ok(())
    }
}
