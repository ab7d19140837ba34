// SPDX-License-Identifier: GPL-2.0
//! `audit PATH --usage`: where any crate needs each gated feature it enables, as each compiler
//! says: one compile ([`Compile`]) per toolchain and feature with that feature left out of
//! `-Zallow-features`, its places read and shown as the usage run's are
//! ([`crate::features::places`], [`crate::report::usage`]).

use super::input::{package_manifest, Input};
use super::rustc_args::read_rustc_args;
use super::{AuditReport, Column};
use crate::features::places::{read_gate_errors, GateErrors, PlaceReader, SourcePoint};
use crate::features::status::Status;
use crate::report::usage::{FeatureUsage, UsageCell, UsageReport, UsageToolchain};
pub use crate::run::crate_root::compile::Compile;
use crate::run::plan::Rustc;
use crate::util::process::{self, DEFAULT_TIMEOUT};
use anyhow::{anyhow, bail, Context};
use std::path::Path;

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

    /// Refuses a compile of the crate root that wrote no metadata under `scratch`: it compiled
    /// nothing, so no place could have been found.
    fn wrote_metadata(&self, scratch: &Path) -> anyhow::Result<()> {
        if let Compile::Cargo(_) = self {
            return Ok(());
        }
        let entries =
            std::fs::read_dir(scratch).with_context(|| format!("reading {}", scratch.display()))?;
        let rmeta = |name: &std::ffi::OsStr| Path::new(name).extension() == Some("rmeta".as_ref());
        if entries.flatten().any(|entry| rmeta(&entry.file_name())) {
            return Ok(());
        }
        bail!("the compile wrote no metadata, so it compiled nothing and no place could be found")
    }
}

/// What one compile without `feature` (of the `allowed` names) found, or why it could not say.
fn compile_without(
    compile: &Compile,
    rustc: &Rustc,
    active: &[&str],
    feature: &str,
    scratch: &Path,
) -> anyhow::Result<GateErrors> {
    let allowed: Vec<&str> = active
        .iter()
        .copied()
        .filter(|name| *name != feature)
        .collect();
    let invocation = compile.invocation(rustc, Some(&allowed), scratch)?;
    let output = process::run(&invocation, DEFAULT_TIMEOUT)
        .map_err(|error| anyhow!(process::describe_spawn_error(&invocation.program, &error)))?;
    let read = read_gate_errors(&compile.diagnostics(&output.stdout, &output.stderr));
    if !output.success() && read.places.is_empty() && read.attributes.is_empty() {
        // rustc's own error where it gave one, else Cargo's first error line.
        let said = read.other_error.clone().unwrap_or_else(|| {
            let lines = || output.stderr.lines().chain(output.stdout.lines());
            lines()
                .find(|line| line.starts_with("error"))
                .or_else(|| lines().find(|line| !line.trim().is_empty()))
                .unwrap_or("it printed nothing")
                .to_string()
        });
        bail!(
            "the compile {}: {said}",
            output.describe_ending(DEFAULT_TIMEOUT)
        );
    }
    match &read.other_error {
        Some(error) => bail!(error.clone()),
        None => Ok(read),
    }
}

impl AuditReport {
    /// The usage of every feature the audited crate enables, on every toolchain that answered
    /// the probe: a feature the probe calls gated and whose line is active there is compiled
    /// without.
    pub fn usage(&self, compile: &Compile, scratch: &Path) -> UsageReport {
        let names = self.input.names();
        let cells: Vec<Vec<UsageCell>> = super::in_parallel(&self.columns, |index, column| {
            let scratch = scratch.join(format!("usage-{index}"));
            self.column_cells(column, &names, compile, &scratch)
        });
        UsageReport {
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
        }
    }

    fn column_cells(
        &self,
        column: &Column,
        names: &[&str],
        compile: &Compile,
        scratch: &Path,
    ) -> Vec<UsageCell> {
        let (Some(answer), Some(rustc)) = (column.answer(), column.rustc.as_ref()) else {
            return vec![UsageCell::NotRun(column.entry.verdict.describe()); names.len()];
        };
        // `None` where a line's condition is one the audit cannot decide (a build script's cfg,
        // a Cargo feature).
        let activity = |name: &str| {
            self.decider
                .name_active_on(&self.input.lines_of(name), answer.release)
        };
        // Allowing a name the build does not enable is harmless; leaving out one it does
        // (behind a condition the audit cannot decide) would break every compile.
        let allowed: Vec<&str> = names
            .iter()
            .copied()
            .filter(|name| activity(name) != Some(false))
            .collect();
        let baseline = compile_without(compile, rustc, &allowed, "", scratch)
            .and_then(|_| compile.wrote_metadata(scratch));
        if let Err(error) = baseline {
            let error = format!("with every feature allowed, {error:#}");
            return vec![UsageCell::Failed(error, Vec::new()); names.len()];
        }
        let base = compile.base();
        let mut reader = PlaceReader::new(&base);
        names
            .iter()
            .map(|name| {
                let undecided = "its line's condition is undecided, so it is left out";
                match (activity(name), answer.status(&self.input, name)) {
                    (Some(false), _) => return UsageCell::NotEnabled,
                    (None, _) => return UsageCell::NotRun(undecided.into()),
                    (_, Some(Status::Stable(since))) => {
                        return UsageCell::Stable(since.to_string())
                    }
                    (_, Some(Status::Gated)) => {}
                    (_, Some(other)) => return UsageCell::NotGated(other.word().into()),
                    (_, None) => return UsageCell::NotGated("unanswered".into()),
                }
                match compile_without(compile, rustc, &allowed, name, scratch) {
                    Err(error) => UsageCell::Failed(format!("{error:#}"), Vec::new()),
                    Ok(read) => UsageCell::found(
                        read.places
                            .iter()
                            .map(|place| reader.place("crate", place))
                            .collect(),
                        read.attributes
                            .iter()
                            .map(|at| SourcePoint::of(at, &base))
                            .collect(),
                    ),
                }
            })
            .collect()
    }
}
