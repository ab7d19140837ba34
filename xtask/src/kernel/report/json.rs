// SPDX-License-Identifier: GPL-2.0
//! The JSON file of `cargo xtask kernel` (its layout is in docs/kernel.md): one set of typed
//! members that the command writes and the docs read back, so that a member missing or of
//! another type is refused by its path and never taken for a default.

use crate::kernel::build::Real;
use crate::kernel::rules::{CratePrediction, Predicted};
use crate::util::json::{self, Deserialize, Serialize};
use crate::util::output::escape;
use anyhow::{anyhow, bail, ensure, Context as _};
use std::collections::HashSet;
use std::path::Path;

/// The report file. Members are written in key order (through [`json::Value`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct KernelJson {
    pub trees: Vec<TreeJson>,
    pub cells: Vec<CellJson>,
    /// The tools the cells' builds ran with, each set once with its trees.
    #[serde(deserialize_with = "json::nullable")]
    pub tools: Option<String>,
    /// Why the build tools are missing, if they are.
    #[serde(deserialize_with = "json::nullable")]
    pub tools_error: Option<String>,
    /// Wall time of the run.
    pub seconds: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct TreeJson {
    pub id: String,
    /// The version its Makefile says; null when the tree could not be read.
    #[serde(deserialize_with = "json::nullable")]
    pub version: Option<String>,
    #[serde(deserialize_with = "json::nullable")]
    pub package: Option<String>,
    /// Where it came from exactly, with the suite, or its path.
    #[serde(deserialize_with = "json::nullable")]
    pub source: Option<String>,
    #[serde(deserialize_with = "json::nullable")]
    pub sha256: Option<String>,
    #[serde(deserialize_with = "json::nullable")]
    pub minimum_rustc: Option<String>,
    /// `rust_allowed_features`.
    pub allowed_features: Vec<String>,
    /// Why it could not be provided or read.
    #[serde(deserialize_with = "json::nullable")]
    pub error: Option<String>,
}

/// One (tree, compiler) cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct CellJson {
    pub tree: String,
    pub toolchain: String,
    /// The compiler's release; null when it was not found.
    #[serde(deserialize_with = "json::nullable")]
    pub rustc: Option<String>,
    #[serde(deserialize_with = "json::nullable")]
    pub minimum_met: Option<bool>,
    /// `pass`, `fail` or `refused`; null with a `prediction_error`.
    #[serde(deserialize_with = "json::nullable")]
    pub predicted: Option<String>,
    #[serde(deserialize_with = "json::nullable")]
    pub prediction_error: Option<String>,
    pub crates: Vec<CratePrediction>,
    /// `pass`, `fail`, `refused` or `not run`.
    pub real: String,
    pub reason: String,
    #[serde(deserialize_with = "json::nullable")]
    pub first_error: Option<String>,
    #[serde(deserialize_with = "json::nullable")]
    pub warning: Option<String>,
    /// The tools its `make` ran with; null when no `make` ran.
    #[serde(deserialize_with = "json::nullable")]
    pub tools: Option<String>,
    /// The samples and drivers the build enabled.
    pub enabled: Vec<String>,
    pub objects: usize,
    pub steps: Vec<StepJson>,
    pub cached: bool,
    /// Whether the real build contradicts the prediction: written for readers, and on reading
    /// checked against [`CellJson::is_finding`], never believed.
    pub finding: bool,
    /// The boot stage (`--boot`), in a cell whose build passed; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot: Option<BootJson>,
}

pub(crate) const BOOT_PASS: &str = "pass";
pub(crate) const BOOT_FAIL: &str = "fail";
pub(crate) const BOOT_NOT_RUN: &str = "not run";

/// A cell's boot under QEMU.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct BootJson {
    /// `pass`, `fail` or `not run`.
    pub result: String,
    pub reason: String,
    /// `kvm` or `tcg`; null when QEMU was not started.
    #[serde(deserialize_with = "json::nullable")]
    pub accel: Option<String>,
    /// One entry per line a built-in sample prints at init; `expected` null for a sample that
    /// prints nothing there (not checked).
    pub samples: Vec<SampleJson>,
    /// Null when no KTAP was read (no boot).
    #[serde(deserialize_with = "json::nullable")]
    pub kunit: Option<KunitJson>,
    /// The console's last lines; null when QEMU was not started.
    #[serde(deserialize_with = "json::nullable")]
    pub console_tail: Option<String>,
    /// The boot's wall time (QEMU's start to its exit); null when it was not started.
    #[serde(deserialize_with = "json::nullable")]
    pub seconds: Option<f64>,
    pub cached: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct SampleJson {
    pub name: String,
    #[serde(deserialize_with = "json::nullable")]
    pub expected: Option<String>,
    pub seen: bool,
}

/// KUnit's cases (one level below their suites), counted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct KunitJson {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
    pub failures: Vec<FailureJson>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct FailureJson {
    pub suite: String,
    pub test: String,
    /// What it printed before its result line.
    pub output: String,
}

impl BootJson {
    /// How many sample lines were checked (a sample that prints nothing at init is not), and
    /// how many of them were seen.
    pub(crate) fn sample_lines(&self) -> (usize, usize) {
        let checked = self.samples.iter().filter(|s| s.expected.is_some());
        let seen = checked.clone().filter(|sample| sample.seen).count();
        (checked.count(), seen)
    }
}

impl CellJson {
    /// Whether the real build contradicts the prediction: the one definition of a finding.
    pub(crate) fn is_finding(&self) -> bool {
        self.real != Real::NotRun.word()
            && matches!(&self.predicted, Some(word) if *word != self.real)
    }
}

/// One timed step of a build.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct StepJson {
    pub step: String,
    pub seconds: f64,
}

impl KernelJson {
    /// Reads the report text of `file`; the error names the file and the member.
    pub(crate) fn read(text: &str, file: &Path) -> anyhow::Result<KernelJson> {
        let report: KernelJson = json::read(text).map_err(|error| {
            anyhow!(
                "{}: not a `cargo xtask kernel` JSON report: {error}",
                file.display()
            )
        })?;
        report.check().map_err(|error| {
            anyhow!(
                "{}: an altered `cargo xtask kernel` report: {}",
                file.display(),
                escape(&format!("{error:#}"))
            )
        })?;
        Ok(report)
    }

    /// Fails, naming the cell, unless each cell's `minimum_met`, `predicted` and `finding` are
    /// what its own members derive and its `boot` is one the boot stage can write; the
    /// compilers' and builds' own words (probe results, `real`, errors, tools) are kept as read.
    fn check(&self) -> anyhow::Result<()> {
        let mut seen = HashSet::new();
        for (index, cell) in self.cells.iter().enumerate() {
            let what = || format!("cells[{index}] ({} with {})", cell.tree, cell.toolchain);
            self.check_cell(cell, &mut seen).with_context(what)?;
        }
        Ok(())
    }

    /// [`KernelJson::check`] for one cell; `seen` holds the cells before it.
    fn check_cell<'a>(
        &self,
        cell: &'a CellJson,
        seen: &mut HashSet<(&'a str, &'a str)>,
    ) -> anyhow::Result<()> {
        let tree = self.trees.iter().find(|tree| tree.id == cell.tree);
        let tree = tree.context("no tree has that id")?;
        ensure!(
            seen.insert((&cell.tree, &cell.toolchain)),
            "the cell is there twice"
        );
        ensure!(
            ["pass", "fail", "refused", "not run"].contains(&cell.real.as_str()),
            "unknown real result `{}`",
            cell.real
        );
        let refused = cell
            .crates
            .iter()
            .find(|krate| krate.predicted == Predicted::Refused);
        if let Some(krate) = refused {
            bail!("{}: unknown probe result `refused`", krate.root);
        }
        let derived = derived_prediction(tree, cell)?;
        let (met, predicted) = (derived.map(|(met, _)| met), derived.map(|(_, word)| word));
        ensure!(
            cell.minimum_met == met,
            "`minimum_met` is {:?}, but rustc {} against the tree's minimum {} makes it {:?}",
            cell.minimum_met,
            cell.rustc.as_deref().unwrap_or("?"),
            tree.minimum_rustc.as_deref().unwrap_or("?"),
            met
        );
        ensure!(
            cell.predicted.as_deref() == predicted,
            "`predicted` is {:?}, but its crates' probes and the minimum make it {:?}",
            cell.predicted,
            predicted
        );
        if let Some(boot) = &cell.boot {
            check_boot(cell, boot)?;
        }
        ensure!(
            cell.finding == cell.is_finding(),
            "`finding` is {}, but predicted {} against real {} makes it {}",
            cell.finding,
            cell.predicted.as_deref().unwrap_or("(none)"),
            cell.real,
            cell.is_finding()
        );
        Ok(())
    }
}

/// Fails unless a cell's boot is one the boot stage can write: in a cell whose build passed,
/// with known words, one named failure per failed case, and a pass with no failed case and no
/// sample line missing.
fn check_boot(cell: &CellJson, boot: &BootJson) -> anyhow::Result<()> {
    ensure!(
        cell.real == "pass",
        "it has a `boot` but its build is `{}` (only a cell whose build passed is booted)",
        cell.real
    );
    ensure!(
        [BOOT_PASS, BOOT_FAIL, BOOT_NOT_RUN].contains(&boot.result.as_str()),
        "unknown boot result `{}`",
        boot.result
    );
    if let Some(accel) = &boot.accel {
        ensure!(
            ["kvm", "tcg"].contains(&accel.as_str()),
            "unknown boot accel `{accel}`"
        );
    }
    if let Some(kunit) = &boot.kunit {
        ensure!(
            kunit.failures.len() == kunit.failed,
            "its boot counts {} failed KUnit cases but names {}",
            kunit.failed,
            kunit.failures.len()
        );
    }
    if boot.result == BOOT_PASS {
        let failed = boot.kunit.as_ref().map_or(0, |kunit| kunit.failed);
        let (checked, seen) = boot.sample_lines();
        let unseen = checked - seen;
        ensure!(
            boot.kunit.is_some() && failed == 0 && unseen == 0,
            "its boot is `pass`, but with {} ({failed} failed KUnit cases, {unseen} sample lines \
             not seen)",
            boot.kunit.as_ref().map_or("no KUnit read", |_| "failures")
        );
    }
    Ok(())
}

/// What a cell's own members predict: whether its rustc meets the tree's minimum, and the
/// prediction's word; `None` where the cell has no prediction (no compiler, a probe that could
/// not run), and then it may have no probes either.
fn derived_prediction(
    tree: &TreeJson,
    cell: &CellJson,
) -> anyhow::Result<Option<(bool, &'static str)>> {
    let (Some(rustc), None) = (&cell.rustc, &cell.prediction_error) else {
        ensure!(cell.crates.is_empty(), "it has probes but no prediction");
        return Ok(None);
    };
    if cell.predicted.is_none() && cell.crates.is_empty() {
        bail!("it names rustc {rustc} but has neither a prediction nor why there is none");
    }
    let minimum = tree
        .minimum_rustc
        .as_deref()
        .context("its tree has no minimum rustc")?;
    let release =
        |text: &str| crate::toolchains::version::parse_release(text).map(|(release, _)| release);
    let met = release(rustc)? >= release(minimum)?;
    Ok(Some((met, Predicted::of_tree(met, &cell.crates).word())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A member missing or of another type in a copy of the recorded report is refused by its
    /// path, where the untyped reader took a default.
    #[test]
    fn a_damaged_copy_of_the_recorded_report_is_refused_by_member() {
        let file = crate::project_root().join(crate::docs::kernels::KERNEL_REPORT);
        let text = std::fs::read_to_string(&file).unwrap();
        KernelJson::read(&text, &file).unwrap();
        for (good, bad, named) in [
            (
                "\"cached\": true",
                "\"cached\": \"yes\"",
                "cells[0].cached: invalid type",
            ),
            (
                "\"real\": ",
                "\"realm\": ",
                "cells[0]: missing field `real`",
            ),
            (
                "\"version\": \"",
                "\"version\": 6, \"x\": \"",
                "trees[0].version: invalid type",
            ),
            (
                "\"allowed_features\": ",
                "\"allowed\": ",
                "trees[0]: missing field `allowed_features`",
            ),
            (
                "\"root\": \"",
                "\"root\": null, \"x\": \"",
                "cells[0].crates[0].root: invalid type",
            ),
        ] {
            assert!(text.contains(good), "{good}");
            let error = KernelJson::read(&text.replacen(good, bad, 1), &file).unwrap_err();
            let error = format!("{error:#}");
            assert!(
                error.starts_with(&format!(
                    "{}: not a `cargo xtask kernel` JSON report: {named}",
                    file.display()
                )),
                "{error}"
            );
        }
    }

    /// A cell's boot is read back only as the boot stage can write it: in a cell whose build
    /// passed, with known words, its failures named, and a pass with nothing failed or missing.
    #[test]
    fn a_boot_the_boot_stage_cannot_write_is_refused() {
        let file = crate::project_root().join(crate::docs::kernels::KERNEL_REPORT);
        let text = std::fs::read_to_string(&file).unwrap();
        let report = KernelJson::read(&text, &file).unwrap();
        let built = report.cells.iter().position(|cell| cell.real == "pass");
        let failed = report.cells.iter().position(|cell| cell.real == "fail");
        let (built, failed) = (built.unwrap(), failed.unwrap());
        let read = |change: &dyn Fn(&mut KernelJson)| {
            let mut report = report.clone();
            report.cells[built].boot = Some(crate::kernel::boot::tests::failed_boot());
            change(&mut report);
            let text = json::to_value(&report).to_string();
            KernelJson::read(&text, &file).map_err(|error| format!("{error:#}"))
        };
        let boot = |report: &mut KernelJson| report.cells[built].boot.clone().unwrap();
        assert_eq!(
            read(&|_| {}).unwrap().cells[built]
                .boot
                .as_ref()
                .unwrap()
                .result,
            "fail"
        );
        for (change, named) in [
            (
                &(|report: &mut KernelJson| {
                    report.cells[failed].boot = report.cells[built].boot.take();
                }) as &dyn Fn(&mut KernelJson),
                "it has a `boot` but its build is `fail`",
            ),
            (
                &|report: &mut KernelJson| {
                    let mut changed = boot(report);
                    changed.result = "passed".into();
                    report.cells[built].boot = Some(changed);
                },
                "unknown boot result `passed`",
            ),
            (
                &|report: &mut KernelJson| {
                    let mut changed = boot(report);
                    changed.accel = Some("hvf".into());
                    report.cells[built].boot = Some(changed);
                },
                "unknown boot accel `hvf`",
            ),
            (
                &|report: &mut KernelJson| {
                    let mut changed = boot(report);
                    changed.kunit.as_mut().unwrap().failures.clear();
                    report.cells[built].boot = Some(changed);
                },
                "its boot counts 1 failed KUnit cases but names 0",
            ),
            (
                &|report: &mut KernelJson| {
                    let mut changed = boot(report);
                    changed.result = "pass".into();
                    report.cells[built].boot = Some(changed);
                },
                "its boot is `pass`, but with failures (1 failed KUnit cases, 0 sample lines",
            ),
        ] {
            let error = read(change).unwrap_err();
            assert!(
                error.contains("an altered `cargo xtask kernel` report"),
                "{error}"
            );
            assert!(error.contains(named), "{named}: {error}");
        }
    }
}
