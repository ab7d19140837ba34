// SPDX-License-Identifier: GPL-2.0
//! `audit PATH --usage`: where any crate needs each gated feature it enables, as each compiler
//! says: per toolchain one compile ([`Compile`]) with every feature allowed, then one per gated
//! feature with that feature left out of `-Zallow-features`, run as steps of the one run
//! ([`crate::run::driver::execute`]: its lock, cache, `-j`, timeouts and Ctrl-C); their places
//! read and shown as the usage run's are ([`crate::features::places`], [`crate::report::usage`]).

use super::input::{package_manifest, Input};
use super::rustc_args::read_rustc_args;
use super::AuditReport;
use crate::features::expect::Outcome;
use crate::features::places::{PlaceReader, SourcePoint};
use crate::features::status::Status;
use crate::report::usage::{FeatureUsage, UsageCell, UsageReport, UsageToolchain};
use crate::run::cache::keys_by_identity;
pub use crate::run::crate_root::compile::Compile;
use crate::run::driver::{self, Run, Settings};
use crate::run::judge::StepResult;
use crate::run::plan::{directory_name, Check, Layout, Step};
use anyhow::{bail, Context};
use std::path::Path;
use std::time::Instant;

impl Compile {
    /// The compile for an audited crate root: `rustc_args` if given, else its Cargo package
    /// where the root lies in one (`Cargo.toml` up to two directories above it), else the root.
    pub fn for_input(input: &Input, rustc_args: Option<&Path>) -> anyhow::Result<Compile> {
        if let Some(file) = rustc_args {
            let (kept, left_out) = read_rustc_args(file)?;
            if !left_out.is_empty() {
                eprintln!(
                    "audit: --rustc-args {}: left out {}; the compiles pass on only the flags \
                     `cargo xtask audit --help` lists and write only metadata under the audit's \
                     scratch directory",
                    file.display(),
                    left_out.join(", ")
                );
            }
            return Ok(Compile::ArgFile(kept));
        }
        let Some(root) = &input.path else {
            bail!("--usage needs a crate root or a Cargo package, not a --features list");
        };
        Ok(match package_manifest(root) {
            Some(manifest) => Compile::Cargo(manifest),
            None => Compile::Root(root.clone(), input.kind),
        })
    }
}

/// A toolchain's column as planned: the step with every feature allowed, if any, and each cell
/// decided up front or by a step of its own (once that one passed).
type Planned = (Option<usize>, Vec<Result<usize, UsageCell>>);

impl AuditReport {
    /// The usage of every feature the audited crate enables, on every toolchain that answered
    /// the probe: a feature the probe calls gated and whose line is active there is compiled
    /// without, under the run lock, in `target/kshim/audit-usage/` (emptied before and after).
    pub fn usage(&self, compile: &Compile, settings: Settings) -> anyhow::Result<UsageReport> {
        let start = Instant::now();
        let layout = Layout::new(&crate::project_root());
        let lock = driver::lock(&layout, "audit", false)?;
        let scratch = layout.kshim.join("audit-usage");
        let empty = |scratch: &Path| match std::fs::remove_dir_all(scratch) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                Err(error).with_context(|| format!("cannot remove {}", scratch.display()))
            }
            _ => Ok(()),
        };
        empty(&scratch)?;
        let names = self.input.names();
        let mut steps = Vec::new();
        let planned: Vec<Planned> = (0..self.columns.len())
            .map(|index| self.plan_column(index, &names, compile, &scratch, &mut steps))
            .collect();
        let (steps, step_names): (Vec<Step>, Vec<String>) = steps.into_iter().unzip();
        let identity = |index: usize| self.columns[index].identity;
        let keys = keys_by_identity(&steps, &identity, &layout.root)?;
        let run = Run {
            command: "audit",
            steps: &steps,
            keys: &keys,
            names: step_names,
            report: None,
        };
        let results = driver::execute(&lock, &layout, &run, settings, start)?;
        empty(&scratch)?;
        let base = compile.base();
        let mut reader = PlaceReader::new(&base);
        let cells: Vec<Vec<UsageCell>> = planned
            .into_iter()
            .map(|planned| column_cells(planned, &results, &mut reader, &base))
            .collect();
        Ok(UsageReport {
            toolchains: self
                .columns
                .iter()
                .map(|column| UsageToolchain::of(&column.entry, column.label()))
                .collect(),
            features: names
                .iter()
                .enumerate()
                .map(|(index, name)| FeatureUsage {
                    name: name.to_string(),
                    shim_item: String::new(),
                    cells: cells.iter().map(|column| column[index].clone()).collect(),
                })
                .collect(),
            date: None,
        })
    }

    /// Plans a column's compiles under `scratch`, each added to `steps` with its name.
    fn plan_column(
        &self,
        index: usize,
        names: &[&str],
        compile: &Compile,
        scratch: &Path,
        steps: &mut Vec<(Step, String)>,
    ) -> Planned {
        let column = &self.columns[index];
        let directory = scratch.join(format!("{index}-{}", directory_name(&column.entry.id)));
        let mut add = |step: Step, what: String| {
            steps.push((step, format!("{}: crate {what}", column.entry.id)));
            steps.len() - 1
        };
        let (Some(answer), Some(rustc)) = (column.answer(), column.rustc.as_ref()) else {
            let cell = UsageCell::NotRun(column.entry.verdict.describe());
            return (None, vec![Err(cell); names.len()]);
        };
        // `None` where a line's condition is one the audit cannot decide (a build script's cfg,
        // a Cargo feature).
        let activity = |name: &str| {
            self.decider
                .name_active_on(&self.input, name, answer.release)
                .0
        };
        // Allowing a name the build does not enable is harmless; leaving out one it does
        // (behind a condition the audit cannot decide) would break every compile.
        let allowed: Vec<&str> = names
            .iter()
            .copied()
            .filter(|name| activity(name) != Some(false))
            .collect();
        let step = |feature: &str, part: &str, deps: Vec<usize>| {
            let list: Vec<&str> = allowed
                .iter()
                .copied()
                .filter(|name| *name != feature)
                .collect();
            // Cargo's target directory is the column's, so that its dependencies are built once;
            // rustc's outputs are each step's own.
            let output = match compile {
                Compile::Cargo(_) => directory.to_path_buf(),
                _ => directory.join(part),
            };
            let invocation = compile.invocation(rustc, Some(&list), &output)?;
            Ok::<_, anyhow::Error>(Step {
                inputs: compile.inputs(&output),
                directories: vec![output],
                deps,
                ..Step::new(index, compile.kind(), "crate", None, vec![invocation])
            })
        };
        let every = match step("", "every", Vec::new()) {
            Err(error) => {
                let error = format!("with every feature allowed, {error:#}");
                return (
                    None,
                    vec![Err(UsageCell::Failed(error, Vec::new())); names.len()],
                );
            }
            Ok(every) => {
                // A compile that wrote no metadata compiled nothing (Cargo writes its own).
                let check = match compile {
                    Compile::Cargo(_) => None,
                    _ => every.directories.first().cloned().map(Check::Metadata),
                };
                add(Step { check, ..every }, "with every feature allowed".into())
            }
        };
        let cells = names
            .iter()
            .map(|name| {
                let undecided = "its line's condition is undecided, so it is left out";
                Err(match (activity(name), answer.status(&self.input, name)) {
                    (Some(false), _) => UsageCell::NotEnabled,
                    (None, _) => UsageCell::NotRun(undecided.into()),
                    (_, Some(Status::Stable(since))) => UsageCell::Stable(since.to_string()),
                    (_, Some(Status::Gated)) => match step(name, name, vec![every]) {
                        Err(error) => UsageCell::Failed(format!("{error:#}"), Vec::new()),
                        Ok(without) => return Ok(add(without, format!("without {name}"))),
                    },
                    (_, Some(other)) => UsageCell::NotGated(other.word().into()),
                    (_, None) => UsageCell::NotGated("unanswered".into()),
                })
            })
            .collect();
        (Some(every), cells)
    }
}

/// A column's cells from its steps' results.
fn column_cells(
    (every, cells): Planned,
    results: &[StepResult],
    reader: &mut PlaceReader,
    base: &Path,
) -> Vec<UsageCell> {
    let error = |result: &StepResult| result.first_error.clone().unwrap_or_default();
    let every = every.map(|every| &results[every]);
    if let Some(every) = every.filter(|every| every.outcome != Outcome::Pass) {
        let error = format!("with every feature allowed, {}", error(every));
        return vec![UsageCell::Failed(error, Vec::new()); cells.len()];
    }
    cells
        .into_iter()
        .map(|cell| {
            let result = &results[cell?];
            let read = match (&result.usage, result.outcome) {
                (Some(read), Outcome::Pass) => read,
                _ => return Err(UsageCell::Failed(error(result), Vec::new())),
            };
            Ok(UsageCell::found(
                read.places
                    .iter()
                    .map(|place| reader.place("crate", place))
                    .collect(),
                read.attributes
                    .iter()
                    .map(|at| SourcePoint::of(at, base))
                    .collect(),
            ))
        })
        .map(|cell: Result<UsageCell, UsageCell>| cell.unwrap_or_else(|cell| cell))
        .collect()
}
