// SPDX-License-Identifier: GPL-2.0
//! The matrix's report: every cell observed next to its prediction, the failures and a summary
//! per toolchain, as tables for people, Markdown, or the JSON whose layout docs/matrix.md
//! documents (section "The JSON report").

pub mod assemble;
pub mod audit;
mod check;
pub mod kbuild;
pub mod runs;
pub mod targets;
mod text;
mod to_json;
pub(crate) mod upgrade;
pub mod usage;

pub(crate) use to_json::REPORT_LIMIT;

use crate::catalog::{Feature, Release, FEATURES, MINIMUM_RELEASE};
use crate::features::expect::{enabled_in_kernel_mode, Outcome, ToolchainVerdict};
use crate::features::status::Status;
use crate::run::plan::{cell_label, Kind, Mode};
use crate::toolchains::discovery::SourceKind;
use crate::util::json::{self, Deserialize, Serialize};
use anyhow::{bail, ensure};
use std::fmt::Write;

/// The version of the JSON layout above; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 3;

/// One toolchain column; the report's `toolchains` list it with their verdict, its error and
/// their summary line. Read back, every member must be there, null or not.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ToolchainEntry {
    pub id: String,
    /// What was asked for, or how it was found.
    pub spec: String,
    /// Where the compiler comes from, or `None` when missing.
    #[serde(deserialize_with = "json::nullable")]
    pub source: Option<SourceKind>,
    #[serde(deserialize_with = "json::nullable")]
    pub pin: Option<String>,
    #[serde(deserialize_with = "json::nullable")]
    pub rustc: Option<String>,
    /// The release as `rustc -vV` writes it.
    #[serde(rename = "release", deserialize_with = "json::nullable")]
    pub release_text: Option<String>,
    #[serde(skip)]
    pub release: Option<Release>,
    #[serde(deserialize_with = "json::nullable")]
    pub channel: Option<String>,
    #[serde(deserialize_with = "json::nullable")]
    pub commit_date: Option<String>,
    /// The host triple.
    #[serde(deserialize_with = "json::nullable")]
    pub host: Option<String>,
    #[serde(skip)]
    pub verdict: ToolchainVerdict,
}

impl ToolchainEntry {
    /// The column header: the id, with the release if the id does not already say it.
    pub fn label(&self) -> String {
        crate::util::output::column_label(&self.id, self.release_text.as_deref(), None)
    }

    /// Its release if it is ok: a toolchain that builds, whose cells the catalog predicts.
    pub fn ok_release(&self) -> Option<Release> {
        self.release
            .filter(|_| self.verdict == ToolchainVerdict::Ok)
    }
}

/// A compiler's place in every table, page and `msrv` answer: by release, then by id; those
/// without a release (missing, broken) have equal keys, so a stable sort keeps their order.
pub fn release_key(release: Option<Release>, id: &str) -> (bool, Option<Release>, Option<&str>) {
    (release.is_none(), release, release.map(|_| id))
}

/// The indices of `toolchains` in [`release_key`] order.
pub fn release_order(toolchains: &[ToolchainEntry]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..toolchains.len()).collect();
    order.sort_by_key(|&index| release_key(toolchains[index].release, &toolchains[index].id));
    order
}

/// For each catalog feature in catalog order, the position of its row among `names` (the
/// report's features, in its order), or `None` where the report was recorded before the catalog
/// had it, so that adding a feature never leaves `cargo xtask docs` unable to regenerate; a
/// feature the catalog does not have, or one named twice, is refused.
pub(crate) fn recorded_rows(names: &[&str]) -> anyhow::Result<Vec<Option<usize>>> {
    let mut rows = vec![None; FEATURES.len()];
    for (row, name) in names.iter().enumerate() {
        let Some(position) = FEATURES.iter().position(|feature| feature.name == *name) else {
            bail!(
                "the report names the feature `{}`, which the catalog does not have: it was made \
                 from another version of kernel-shim/src/catalog.rs",
                crate::util::output::escape(name)
            )
        };
        if rows[position].replace(row).is_some() {
            bail!("the report has the feature `{name}` twice");
        }
    }
    Ok(rows)
}

/// What the probe found for one feature on one toolchain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Observed {
    Status(Status),
    /// The toolchain is missing or broken.
    NotProbed,
    /// The probe compilation failed in an unexpected way (the message says how).
    ProbeFailed(String),
    /// The report was recorded before the catalog had the feature: nothing was asked.
    NotRecorded,
}

impl Observed {
    pub(crate) fn word(&self) -> &'static str {
        match self {
            Observed::Status(status) => status.word(),
            Observed::NotProbed => "not-probed",
            Observed::ProbeFailed(_) => "probe-failed",
            Observed::NotRecorded => "not-recorded",
        }
    }

    fn cell(&self) -> String {
        match self {
            Observed::Status(status) => status.to_string(),
            Observed::NotProbed => "-".into(),
            Observed::ProbeFailed(_) => "probe failed".into(),
            Observed::NotRecorded => "not recorded".into(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct FeatureCell {
    pub observed: Observed,
    /// What the catalog predicts; `None` where the cell is informational.
    pub expected: Option<Status>,
}

impl FeatureCell {
    /// Whether observation and prediction agree (an informational cell always does, unless
    /// its probe failed).
    pub fn ok(&self) -> bool {
        match (&self.observed, self.expected) {
            (Observed::Status(observed), Some(expected)) => *observed == expected,
            (Observed::ProbeFailed(_), _) | (Observed::NotProbed, Some(_)) => false,
            (Observed::NotRecorded, _) | (_, None) => true,
        }
    }
}

/// The build, run and test cells the plan makes for a target in each mode: the shim is a
/// library, so it has nothing to run.
pub fn cell_kinds(target: &str) -> &'static [Kind] {
    if target == "kernel" {
        &[Kind::Build, Kind::Test]
    } else {
        &[Kind::Build, Kind::Run, Kind::Test]
    }
}

/// One build or test on one toolchain in one mode.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BuildCell {
    #[serde(skip)]
    pub toolchain: usize,
    /// `kernel` or an example's name.
    pub target: String,
    pub mode: Mode,
    pub kind: Kind,
    pub outcome: Outcome,
    pub expected: Outcome,
    /// The first error line, for failures and skips.
    #[serde(deserialize_with = "json::nullable")]
    pub first_error: Option<String>,
    /// Seconds of the run that produced the result.
    #[serde(serialize_with = "milliseconds")]
    pub seconds: f64,
    pub cached: bool,
    #[serde(deserialize_with = "json::nullable")]
    pub tests: Option<TestCounts>,
}

/// What libtest counted in a test run.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct TestCounts {
    pub passed: u64,
    pub failed: u64,
    pub ignored: u64,
}

impl BuildCell {
    pub fn ok(&self) -> bool {
        self.outcome == self.expected
    }
}

/// One difference between the compilers and the catalog, as printed and as the JSON lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub toolchain: String,
    /// Which cell: `feature inline_const`, `build rust_minimal (kernel)`, `toolchain`.
    pub cell: String,
    pub expected: String,
    pub observed: String,
    /// The compiler's first error line, if there is one.
    pub first_error: Option<String>,
}

/// Everything one matrix run found.
#[derive(Clone, Debug)]
pub struct Report {
    pub toolchains: Vec<ToolchainEntry>,
    /// Per catalog feature (catalog order), one cell per toolchain.
    pub features: Vec<Vec<FeatureCell>>,
    pub builds: Vec<BuildCell>,
    /// Whether missing pins count as failures.
    pub strict: bool,
    /// `K/N` when the run was one shard.
    pub shard: Option<String>,
    /// The target axis: which kernel targets each compiler knows, and the target cells.
    pub targets: targets::TargetAxis,
    /// Per toolchain, the Kbuild fixtures: what a driver gets when it enables features itself.
    pub kbuild: Vec<kbuild::KbuildCell>,
    /// The UTC minute the run ended (`2026-12-04 03:48 UTC`, [`crate::util::date::utc_now`]); a
    /// merge's is its newest shard's. `None` in reports written before reports had dates.
    pub date: Option<String>,
}

impl Report {
    /// Every difference, in the order the tables show them.
    pub fn failures(&self) -> Vec<Failure> {
        let mut failures = Vec::new();
        for toolchain in &self.toolchains {
            let (expected, observed, message) = match &toolchain.verdict {
                ToolchainVerdict::Broken(message) => ("ok", "broken", message),
                ToolchainVerdict::Missing(hint) if self.strict => ("found", "missing", hint),
                _ => continue,
            };
            failures.push(Failure {
                toolchain: toolchain.id.clone(),
                cell: "toolchain".into(),
                expected: expected.into(),
                observed: observed.into(),
                first_error: Some(message.clone()),
            });
        }
        for (feature, cells) in FEATURES.iter().zip(&self.features) {
            for (toolchain, cell) in self.toolchains.iter().zip(cells) {
                if cell.ok() {
                    continue;
                }
                failures.push(Failure {
                    toolchain: toolchain.id.clone(),
                    cell: format!("feature {}", feature.name),
                    expected: cell
                        .expected
                        .map_or_else(|| "-".to_string(), |status| status.to_string()),
                    observed: cell.observed.cell(),
                    first_error: match &cell.observed {
                        Observed::ProbeFailed(error) => Some(error.clone()),
                        _ => None,
                    },
                });
            }
        }
        for build in self.builds.iter().filter(|build| !build.ok()) {
            failures.push(Failure {
                toolchain: self.toolchains[build.toolchain].id.clone(),
                cell: cell_label(build.kind, &build.target, Some(build.mode), None),
                expected: build.expected.word().into(),
                observed: build.outcome.word().into(),
                first_error: build.first_error.clone(),
            });
        }
        failures.extend(kbuild::kbuild_failures(&self.kbuild, &self.toolchains));
        failures.extend(self.targets.failures(&self.toolchains));
        failures
    }

    /// The catalog's features the report was recorded with, each with its cells.
    fn recorded(&self) -> impl Iterator<Item = (&'static Feature, &Vec<FeatureCell>)> {
        let rows = FEATURES.iter().zip(&self.features);
        rows.filter(|(_, cells)| {
            cells
                .iter()
                .any(|cell| cell.observed != Observed::NotRecorded)
        })
    }

    pub fn verdict(&self) -> crate::Verdict {
        crate::Verdict::failure_if(!self.failures().is_empty())
    }

    /// One line per toolchain, in column order: "1.85.0: 8 of 14 features stable; kernel mode
    /// still needs RUSTC_BOOTSTRAP for 3 (...); 52 of 52 builds and tests pass".
    pub fn summary_lines(&self) -> Vec<String> {
        // Per toolchain: its build cells, how many passed, and how many unit tests passed; one
        // pass over the builds, so that summaries take time linear in the report.
        let mut counts = vec![(0, 0, 0); self.toolchains.len()];
        for build in &self.builds {
            if let Some((cells, passed, unit_tests)) = counts.get_mut(build.toolchain) {
                *cells += 1;
                *passed += usize::from(build.outcome == Outcome::Pass);
                *unit_tests += build.tests.map_or(0, |tests| tests.passed);
            }
        }
        counts
            .into_iter()
            .enumerate()
            .map(|(index, counts)| self.summary_line(index, counts))
            .collect()
    }

    /// The features the kernel's block enables on the compiler at `index` (of `release`) that
    /// it did not call stable: what kernel mode needs `RUSTC_BOOTSTRAP` for. A feature the
    /// report was recorded without is left out.
    pub fn still_gated(&self, index: usize, release: Release) -> Vec<&'static str> {
        let enabled = enabled_in_kernel_mode(release);
        FEATURES
            .iter()
            .zip(&self.features)
            .filter(|(feature, cells)| {
                enabled.iter().any(|enabled| enabled.name == feature.name)
                    && !matches!(
                        cells[index].observed,
                        Observed::NotRecorded | Observed::Status(Status::Stable(_))
                    )
            })
            .map(|(feature, _)| feature.name)
            .collect()
    }

    fn summary_line(
        &self,
        index: usize,
        (cells, passed, unit_tests): (usize, usize, u64),
    ) -> String {
        let toolchain = &self.toolchains[index];
        let label = toolchain.label();
        // A feature the report was recorded without is left out of every count.
        let observed: Vec<Option<Status>> = self
            .features
            .iter()
            .filter(|cells| cells[index].observed != Observed::NotRecorded)
            .map(|cells| match cells[index].observed {
                Observed::Status(status) => Some(status),
                _ => None,
            })
            .collect();
        let (total, not_recorded) = (observed.len(), self.features.len() - observed.len());
        let stable = observed
            .iter()
            .filter(|status| matches!(status, Some(Status::Stable(_))))
            .count();
        let probe = if observed.iter().all(Option::is_some) {
            match not_recorded {
                0 => format!("{stable} of {total} features stable"),
                _ => format!("{stable} of {total} features stable ({not_recorded} not recorded)"),
            }
        } else {
            "the probe failed".to_string()
        };
        match (&toolchain.verdict, toolchain.release) {
            (ToolchainVerdict::Ok, Some(release)) => {
                let still_gated = self.still_gated(index, release);
                let bootstrap = match still_gated.len() {
                    0 => "kernel mode no longer needs RUSTC_BOOTSTRAP".to_string(),
                    count => format!(
                        "kernel mode still needs RUSTC_BOOTSTRAP for {count} ({})",
                        still_gated.join(", ")
                    ),
                };
                let targets = self
                    .targets
                    .summary(index)
                    .map(|text| format!("; {text}"))
                    .unwrap_or_default();
                format!(
                    "{label}: {probe}; {bootstrap}; {passed} of {cells} builds, runs and test runs pass ({unit_tests} tests passed){targets}"
                )
            }
            (ToolchainVerdict::TooOld, _) => {
                let unknown = observed
                    .iter()
                    .filter(|status| matches!(status, Some(Status::Unknown)))
                    .count();
                format!(
                    "{label}: below the minimum ({MINIMUM_RELEASE}), builds skipped; for information, {probe}, {unknown} unknown to it"
                )
            }
            (verdict, _) => format!("{label}: {}", verdict.describe()),
        }
    }
}

pub fn failure_line(failure: &Failure) -> String {
    let mut line = format!(
        "{}: {}: expected {}, observed {}",
        failure.toolchain, failure.cell, failure.expected, failure.observed
    );
    if let Some(error) = &failure.first_error {
        // One failure, one line: a multi-line message (a broken compiler's output) is joined.
        let error: Vec<&str> = error
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .collect();
        let _ = write!(line, ": {}", error.join(" | "));
    }
    line
}

#[cfg(test)]
pub(crate) use tests::planned_builds;

/// The id of the toolchain a cell names by `index`; empty for none.
fn id_of(toolchains: &[ToolchainEntry], index: usize) -> String {
    toolchains
        .get(index)
        .map_or_else(String::new, |toolchain| toolchain.id.clone())
}

/// Seconds as the reports keep them: to the millisecond.
fn milliseconds<S: serde::Serializer>(seconds: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64((seconds * 1000.0).round() / 1000.0)
}

/// A cell as the report lists it: its own members, beside its toolchain's id and whether it is
/// what was predicted.
#[derive(Serialize)]
struct Listed<'a, T> {
    toolchain: String,
    ok: bool,
    #[serde(flatten)]
    cell: &'a T,
}

/// `cells` as the report lists them; `key` gives a cell's toolchain index and whether it is ok.
fn listed<'a, T>(
    cells: &'a [T],
    toolchains: &[ToolchainEntry],
    key: impl Fn(&T) -> (usize, bool),
) -> Vec<Listed<'a, T>> {
    let listed = cells.iter().map(|cell| {
        let (toolchain, ok) = key(cell);
        let toolchain = id_of(toolchains, toolchain);
        Listed {
            toolchain,
            ok,
            cell,
        }
    });
    listed.collect()
}

/// What [`Listed`] writes beside a cell's own members.
#[derive(Deserialize)]
struct Key {
    toolchain: String,
    ok: bool,
}

/// A toolchain's column by its id; the error names `what` asked.
type IndexOf<'a> = dyn Fn(&str, &str) -> anyhow::Result<usize> + 'a;

/// Cells read back from a list [`listed`] wrote (`list`, for errors), with `keys`, the
/// same list read as [`Key`]s: `read` gives a cell its toolchain's index, checks it, and says
/// whether it is ok, which must be what the file states.
fn read_listed<T>(
    cells: &mut [T],
    keys: &[Key],
    list: &str,
    index_of: &IndexOf<'_>,
    read: impl Fn(&mut T, usize, &str) -> anyhow::Result<bool>,
) -> anyhow::Result<()> {
    for (position, (cell, key)) in cells.iter_mut().zip(keys).enumerate() {
        let what = format!("{list}[{position}]");
        let ok = read(cell, index_of(&key.toolchain, &what)?, &what)?;
        stated_ok(key.ok, ok, &what)?;
    }
    Ok(())
}

/// The `ok` a file states must be what its cell says: a report edited into contradiction is
/// not trusted.
fn stated_ok(stated: bool, ok: bool, what: &str) -> anyhow::Result<()> {
    ensure!(
        stated == ok,
        "{what}: `ok` is {stated}, but what was observed and what was expected say {ok}"
    );
    Ok(())
}

fn seconds(seconds: f64, what: &str) -> anyhow::Result<()> {
    let finite = seconds.is_finite() && seconds >= 0.0;
    ensure!(finite, "{what}: `seconds` is not a number of seconds");
    Ok(())
}

#[cfg(test)]
mod tests;
