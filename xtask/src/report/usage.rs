// SPDX-License-Identifier: GPL-2.0
//! The usage report: for every catalog feature and toolchain, the places the compiler says need
//! the feature, each with its enclosing item, or why there are none; assembled from a usage
//! run's steps, and written and read as JSON (the layout is in docs/audit.md).

#[cfg(test)]
mod tests;
pub mod text;

use crate::catalog::FEATURES;
use crate::features::expect::{Outcome, ToolchainVerdict};
use crate::features::places::{PlaceReader, SourcePoint, UsedPlace};
use crate::features::status::Status;
use crate::report::ToolchainEntry;
use crate::run::judge::StepResult;
use crate::run::plan::{Step, UsageCompile};
use crate::util::json::{self, Deserialize, Serialize, Value};
use crate::Verdict;
use anyhow::{bail, Context};
use std::collections::BTreeMap;
use std::path::Path;

pub const SCHEMA: u64 = 1;

/// A toolchain as the usage report shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageToolchain {
    /// The unique id, as the matrix's.
    pub id: String,
    /// The id with the release where the id does not say it (`nightly (1.97.0-nightly)`).
    pub label: String,
    /// The release as `rustc -vV` writes it, if the compiler runs.
    #[serde(deserialize_with = "json::nullable")]
    pub release: Option<String>,
}

impl UsageToolchain {
    pub fn of(entry: &ToolchainEntry, label: String) -> Self {
        UsageToolchain {
            id: entry.id.clone(),
            label,
            release: entry.release_text.clone(),
        }
    }
}

/// What one toolchain says about one feature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UsageCell {
    /// Gated, and needed at these places.
    Used(Vec<UsedPlace>),
    /// Gated and enabled (at these attributes), but nothing needs it.
    Unused(Vec<SourcePoint>),
    /// Stable on this compiler, so nothing is gated on it: no place can be reported.
    Stable(String),
    /// The shim does not enable it on this release (its cfg gate is off).
    NotEnabled,
    /// The compiler's probe said something else than gated or stable (`unknown`, `removed`).
    NotGated(String),
    /// A compile failed for another reason than the feature gate; the places it did report.
    Failed(String, Vec<UsedPlace>),
    /// The toolchain did not run (missing, broken, too old), or its steps did not.
    NotRun(String),
}

impl UsageCell {
    /// The cell's status word in the JSON report.
    pub fn word(&self) -> &'static str {
        self.parts().0
    }

    /// The cell as the JSON report has it: status word, detail, places, and where the feature
    /// is enabled.
    fn parts(&self) -> (&'static str, Option<&String>, &[UsedPlace], &[SourcePoint]) {
        match self {
            UsageCell::Used(places) => ("used", None, places, &[]),
            UsageCell::Unused(attributes) => ("unused", None, &[], attributes),
            UsageCell::Stable(since) => ("stable", Some(since), &[], &[]),
            UsageCell::NotEnabled => ("not-enabled", None, &[], &[]),
            UsageCell::NotGated(status) => ("not-gated", Some(status), &[], &[]),
            UsageCell::Failed(error, places) => ("failed", Some(error), places, &[]),
            UsageCell::NotRun(reason) => ("not-run", Some(reason), &[], &[]),
        }
    }

    /// A gated feature's cell from what its compiles found: used at `places`, else unused
    /// (enabled at `attributes`).
    pub fn found(mut places: Vec<UsedPlace>, mut attributes: Vec<SourcePoint>) -> UsageCell {
        if places.is_empty() {
            attributes.sort();
            attributes.dedup();
            UsageCell::Unused(attributes)
        } else {
            places.sort_by(|a, b| a.at.cmp(&b.at));
            UsageCell::Used(places)
        }
    }
}

/// One catalog feature's row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureUsage {
    pub name: String,
    pub shim_item: String,
    /// One cell per toolchain, in the report's toolchain order.
    pub cells: Vec<UsageCell>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageReport {
    pub toolchains: Vec<UsageToolchain>,
    /// One row per catalog feature, in catalog order.
    pub features: Vec<FeatureUsage>,
    /// The UTC minute the run ended, as [`crate::report::Report::date`]; `None` for
    /// `audit --usage`, which records nothing.
    pub date: Option<String>,
}

/// The report of a usage run over `columns` (every toolchain, as the matrix lists them); the
/// enclosing items are read from the sources under `root`.
pub fn assemble(
    root: &Path,
    columns: &[ToolchainEntry],
    steps: &[Step],
    results: &[StepResult],
    compiles: &[UsageCompile],
) -> UsageReport {
    let mut reader = PlaceReader::new(root);
    let probes = super::assemble::probe_results(steps, results);
    let mut features = Vec::new();
    for (feature_index, feature) in FEATURES.iter().enumerate() {
        let mut cells = Vec::new();
        for (toolchain, column) in columns.iter().enumerate() {
            let mine: Vec<&UsageCompile> = compiles
                .iter()
                .filter(|compile| compile.toolchain == toolchain && compile.feature == feature.name)
                .collect();
            let planned = compiles
                .iter()
                .any(|compile| compile.toolchain == toolchain);
            let cell = if !planned {
                UsageCell::NotRun(match &column.verdict {
                    verdict @ ToolchainVerdict::Missing(_) => verdict.word().to_string(),
                    verdict => verdict.describe(),
                })
            } else if mine.is_empty() {
                UsageCell::NotEnabled
            } else {
                // The probe's failure first, else the first compile's.
                let (status, mut problem) = match probes
                    .get(&toolchain)
                    .and_then(|probe| probe.probe.as_ref())
                {
                    Some(Ok(statuses)) => (statuses.get(feature_index).copied(), None),
                    Some(Err(error)) => (None, Some(format!("the probe failed: {error}"))),
                    None => (None, Some("the probe did not run".to_string())),
                };
                let mut places = Vec::new();
                let mut attributes = Vec::new();
                for compile in &mine {
                    let result = &results[compile.step];
                    if let Some(usage) = &result.usage {
                        for place in &usage.places {
                            places.push(reader.place(&compile.target, place));
                        }
                        attributes
                            .extend(usage.attributes.iter().map(|at| SourcePoint::of(at, root)));
                    }
                    if result.outcome != Outcome::Pass && problem.is_none() {
                        let error = result.first_error.clone().unwrap_or_default();
                        problem = Some(format!("{}: {error}", compile.target));
                    }
                }
                places.sort_by(|a: &UsedPlace, b| a.at.cmp(&b.at));
                match (status, problem) {
                    (_, Some(problem)) => UsageCell::Failed(problem, places),
                    (Some(Status::Stable(since)), None) if places.is_empty() => {
                        UsageCell::Stable(since.to_string())
                    }
                    (Some(Status::Unknown | Status::Removed), None) if places.is_empty() => {
                        UsageCell::NotGated(status.map(Status::word).unwrap_or_default().into())
                    }
                    (_, None) => UsageCell::found(places, attributes),
                }
            };
            cells.push(cell);
        }
        features.push(FeatureUsage {
            name: feature.name.to_string(),
            shim_item: feature.shim_item.to_string(),
            cells,
        });
    }
    UsageReport {
        toolchains: columns
            .iter()
            .map(|column| UsageToolchain::of(column, column.label()))
            .collect(),
        features,
        // Assembled as the run ends.
        date: Some(crate::util::date::utc_now()),
    }
}

/// The report file. Members are written in key order (through [`Value`]), whatever the order here.
#[derive(Serialize, Deserialize)]
struct UsageJson {
    schema: u64,
    report: String,
    verdict: String,
    toolchains: Vec<UsageToolchain>,
    features: Vec<FeatureJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    date: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct FeatureJson {
    name: String,
    shim_item: String,
    /// Keyed by toolchain id.
    toolchains: BTreeMap<String, CellJson>,
}

#[derive(Serialize, Deserialize)]
struct CellJson {
    status: String,
    #[serde(deserialize_with = "json::nullable")]
    detail: Option<String>,
    places: Vec<UsedPlace>,
    enabled_at: Vec<SourcePoint>,
}

impl UsageReport {
    /// Failure when a compile failed for a reason other than the feature gate.
    pub fn verdict(&self) -> Verdict {
        let failed = self
            .features
            .iter()
            .flat_map(|feature| &feature.cells)
            .any(|cell| matches!(cell, UsageCell::Failed(..)));
        Verdict::failure_if(failed)
    }

    pub fn to_json(&self) -> Value {
        let cell = |cell: &UsageCell| {
            let (status, detail, places, enabled_at) = cell.parts();
            CellJson {
                status: status.to_string(),
                detail: detail.cloned(),
                places: places.to_vec(),
                enabled_at: enabled_at.to_vec(),
            }
        };
        let features = self.features.iter().map(|feature| FeatureJson {
            name: feature.name.clone(),
            shim_item: feature.shim_item.clone(),
            toolchains: self
                .toolchains
                .iter()
                .zip(&feature.cells)
                .map(|(toolchain, one)| (toolchain.id.clone(), cell(one)))
                .collect(),
        });
        json::to_value(&UsageJson {
            schema: SCHEMA,
            report: "usage".to_string(),
            verdict: self.verdict().word().to_string(),
            toolchains: self.toolchains.clone(),
            features: features.collect(),
            date: self.date.clone(),
        })
    }

    /// Reads a report that [`UsageReport::to_json`] wrote.
    pub fn from_json(text: &str) -> anyhow::Result<UsageReport> {
        let value = json::parse(text).context("not JSON")?;
        if value.get("report").and_then(Value::as_str) != Some("usage")
            || value.get("schema").and_then(Value::as_u64) != Some(SCHEMA)
        {
            bail!("not a usage report of schema {SCHEMA} (written by `cargo xtask usage --format json`)");
        }
        let file: UsageJson = json::read(text)?;
        let mut features = Vec::new();
        for feature in file.features {
            let mut cells = Vec::new();
            let name = feature.name;
            let mut by_id = feature.toolchains;
            for toolchain in &file.toolchains {
                let cell = by_id
                    .remove(&toolchain.id)
                    .with_context(|| format!("feature {name} has no cell for {}", toolchain.id))?;
                let detail = || {
                    cell.detail
                        .clone()
                        .with_context(|| format!("feature {name}, {}: no detail", toolchain.id))
                };
                cells.push(match cell.status.as_str() {
                    "used" => UsageCell::Used(cell.places),
                    "unused" => UsageCell::Unused(cell.enabled_at),
                    "stable" => UsageCell::Stable(detail()?),
                    "not-enabled" => UsageCell::NotEnabled,
                    "not-gated" => UsageCell::NotGated(detail()?),
                    "failed" => UsageCell::Failed(detail()?, cell.places),
                    "not-run" => UsageCell::NotRun(detail()?),
                    other => bail!("feature {name}, {}: unknown status `{other}`", toolchain.id),
                });
            }
            features.push(FeatureUsage {
                name,
                shim_item: feature.shim_item,
                cells,
            });
        }
        if let Some(date) = &file.date {
            crate::util::date::check_utc_minute(date)?;
        }
        Ok(UsageReport {
            toolchains: file.toolchains,
            features,
            date: file.date,
        })
    }

    pub fn read(path: &Path) -> anyhow::Result<UsageReport> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        UsageReport::from_json(&text).with_context(|| format!("reading {}", path.display()))
    }
}
