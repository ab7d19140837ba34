// SPDX-License-Identifier: GPL-2.0
//! The usage report: for every catalog feature and toolchain, the places the compiler says need
//! the feature, each with its enclosing item, or why there are none; assembled from a usage
//! run's steps, and written and read as JSON (the layout is in docs/audit.md).

#[cfg(test)]
mod tests;
pub mod text;

use crate::catalog::FEATURES;
use crate::expect::ToolchainVerdict;
use crate::json::{self, Value};
use crate::judge::StepResult;
use crate::places::{PlaceReader, SourcePoint, UsedPlace};
use crate::plan::{Kind, Step, UsageCompile};
use crate::report::ToolchainEntry;
use crate::status::Status;
use crate::Verdict;
use anyhow::{bail, Context};
use std::collections::HashMap;
use std::path::Path;

/// The report's `schema` value.
pub const SCHEMA: u64 = 1;

/// A toolchain as the usage report shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageToolchain {
    /// The unique id, as the matrix's.
    pub id: String,
    /// The id with the release where the id does not say it (`nightly (1.97.0-nightly)`).
    pub label: String,
    /// The release as `rustc -vV` writes it, if the compiler runs.
    pub release: Option<String>,
}

impl UsageToolchain {
    /// A toolchain of the run, shown as `label`.
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
        match self {
            UsageCell::Used(_) => "used",
            UsageCell::Unused(_) => "unused",
            UsageCell::Stable(_) => "stable",
            UsageCell::NotEnabled => "not-enabled",
            UsageCell::NotGated(_) => "not-gated",
            UsageCell::Failed(..) => "failed",
            UsageCell::NotRun(_) => "not-run",
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
    /// Its name.
    pub name: String,
    /// The catalog's shim item.
    pub shim_item: String,
    /// One cell per toolchain, in the report's toolchain order.
    pub cells: Vec<UsageCell>,
}

/// A whole usage run's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageReport {
    /// Every toolchain of the run, in order.
    pub toolchains: Vec<UsageToolchain>,
    /// One row per catalog feature, in catalog order.
    pub features: Vec<FeatureUsage>,
}

/// Assembles the report of a run over `columns` (every toolchain, as the matrix lists them)
/// from its steps, their results and the usage compiles among them; the enclosing items are
/// read from the sources under `root`.
pub fn assemble(
    root: &Path,
    columns: &[ToolchainEntry],
    steps: &[Step],
    results: &[StepResult],
    compiles: &[UsageCompile],
) -> UsageReport {
    let mut reader = PlaceReader::new(root);
    let probes: HashMap<usize, &StepResult> = steps
        .iter()
        .zip(results)
        .filter(|(step, _)| step.kind == Kind::Probe)
        .map(|(step, result)| (step.toolchain, result))
        .collect();
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
                    ToolchainVerdict::Missing(_) => "missing".to_string(),
                    verdict => verdict.describe(),
                })
            } else if mine.is_empty() {
                UsageCell::NotEnabled
            } else {
                let (status, probe_error) = match probes
                    .get(&toolchain)
                    .and_then(|probe| probe.probe.as_ref())
                {
                    Some(Ok(statuses)) => (statuses.get(feature_index).copied(), None),
                    Some(Err(error)) => (None, Some(format!("the probe failed: {error}"))),
                    None => (None, Some("the probe did not run".to_string())),
                };
                let mut places = Vec::new();
                let mut attributes = Vec::new();
                let mut problem = None;
                for compile in &mine {
                    let result = &results[compile.step];
                    if let Some(usage) = &result.usage {
                        for place in &usage.places {
                            places.push(reader.place(&compile.target, place));
                        }
                        attributes
                            .extend(usage.attributes.iter().map(|at| SourcePoint::of(at, root)));
                    }
                    if problem.is_none() {
                        problem.clone_from(&probe_error);
                    }
                    if result.outcome != crate::expect::Outcome::Pass && problem.is_none() {
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
    }
}

impl UsageReport {
    /// Failure when a compile failed for a reason other than the feature gate.
    pub fn verdict(&self) -> Verdict {
        let failed = self.features.iter().any(|feature| {
            feature
                .cells
                .iter()
                .any(|cell| matches!(cell, UsageCell::Failed(..)))
        });
        if failed {
            Verdict::Failure
        } else {
            Verdict::Success
        }
    }

    /// The report as JSON.
    pub fn to_json(&self) -> Value {
        let string = |text: &str| Value::String(text.to_string());
        let point = |at: &SourcePoint| {
            json::object(vec![
                ("file".into(), string(&at.file)),
                ("line".into(), Value::from(at.line)),
                ("column".into(), Value::from(at.column)),
            ])
        };
        let place = |place: &UsedPlace| {
            let mut members = vec![
                ("target".into(), string(&place.target)),
                ("item".into(), json::opt_string(place.item.clone())),
                (
                    "items".into(),
                    Value::Array(place.items.iter().map(|name| string(name)).collect()),
                ),
                (
                    "call_site".into(),
                    place.call_site.as_ref().map_or(Value::Null, point),
                ),
                (
                    "macros".into(),
                    Value::Array(place.macros.iter().map(|name| string(name)).collect()),
                ),
            ];
            if let Value::Object(at) = point(&place.at) {
                members.extend(at);
            }
            json::object(members)
        };
        let cell = |cell: &UsageCell| {
            let (places, enabled_at, detail): (&[UsedPlace], &[SourcePoint], Option<&str>) =
                match cell {
                    UsageCell::Used(places) => (places, &[], None),
                    UsageCell::Unused(attributes) => (&[], attributes, None),
                    UsageCell::Stable(since) => (&[], &[], Some(since)),
                    UsageCell::NotGated(status) => (&[], &[], Some(status)),
                    UsageCell::Failed(error, places) => (places, &[], Some(error)),
                    UsageCell::NotRun(reason) => (&[], &[], Some(reason)),
                    UsageCell::NotEnabled => (&[], &[], None),
                };
            json::object(vec![
                ("status".into(), string(cell.word())),
                ("detail".into(), json::opt_string(detail)),
                (
                    "places".into(),
                    Value::Array(places.iter().map(place).collect()),
                ),
                (
                    "enabled_at".into(),
                    Value::Array(enabled_at.iter().map(point).collect()),
                ),
            ])
        };
        json::object(vec![
            ("schema".into(), Value::from(SCHEMA)),
            ("report".into(), string("usage")),
            ("verdict".into(), string(self.verdict_word())),
            (
                "toolchains".into(),
                Value::Array(
                    self.toolchains
                        .iter()
                        .map(|toolchain| {
                            json::object(vec![
                                ("id".into(), string(&toolchain.id)),
                                ("label".into(), string(&toolchain.label)),
                                (
                                    "release".into(),
                                    json::opt_string(toolchain.release.clone()),
                                ),
                            ])
                        })
                        .collect(),
                ),
            ),
            (
                "features".into(),
                Value::Array(
                    self.features
                        .iter()
                        .map(|feature| {
                            let cells = self
                                .toolchains
                                .iter()
                                .zip(&feature.cells)
                                .map(|(toolchain, one)| (toolchain.id.clone(), cell(one)))
                                .collect();
                            json::object(vec![
                                ("name".into(), string(&feature.name)),
                                ("shim_item".into(), string(&feature.shim_item)),
                                ("toolchains".into(), json::object(cells)),
                            ])
                        })
                        .collect(),
                ),
            ),
        ])
    }

    fn verdict_word(&self) -> &'static str {
        match self.verdict() {
            Verdict::Success => "success",
            Verdict::Failure => "failure",
        }
    }

    /// Reads a report that [`UsageReport::to_json`] wrote.
    pub fn from_json(value: &Value) -> anyhow::Result<UsageReport> {
        if value.get("report").and_then(Value::as_str) != Some("usage")
            || value.get("schema").and_then(Value::as_u64) != Some(SCHEMA)
        {
            bail!("not a usage report of schema {SCHEMA} (written by `cargo xtask usage --format json`)");
        }
        let text = |value: &Value, key: &str| -> anyhow::Result<String> {
            value
                .get(key)
                .and_then(Value::as_str)
                .map(String::from)
                .with_context(|| format!("`{key}` is missing or not a string"))
        };
        let optional =
            |value: &Value, key: &str| value.get(key).and_then(Value::as_str).map(String::from);
        let number = |value: &Value, key: &str| -> anyhow::Result<u64> {
            value
                .get(key)
                .and_then(Value::as_u64)
                .with_context(|| format!("`{key}` is missing or not a number"))
        };
        let array = |value: &Value, key: &str| -> anyhow::Result<Vec<Value>> {
            value
                .get(key)
                .and_then(Value::as_array)
                .cloned()
                .with_context(|| format!("`{key}` is missing or not an array"))
        };
        let strings = |value: &Value, key: &str| -> anyhow::Result<Vec<String>> {
            array(value, key)?
                .iter()
                .map(|name| {
                    name.as_str()
                        .map(String::from)
                        .with_context(|| format!("`{key}` holds something else than a string"))
                })
                .collect()
        };
        let point = |value: &Value| -> anyhow::Result<SourcePoint> {
            Ok(SourcePoint {
                file: text(value, "file")?,
                line: number(value, "line")?,
                column: number(value, "column")?,
            })
        };
        let place = |value: &Value| -> anyhow::Result<UsedPlace> {
            Ok(UsedPlace {
                target: text(value, "target")?,
                at: point(value)?,
                item: optional(value, "item"),
                items: strings(value, "items")?,
                macros: strings(value, "macros")?,
                call_site: match value.get("call_site") {
                    None | Some(Value::Null) => None,
                    Some(site) => Some(point(site)?),
                },
            })
        };
        let toolchains = array(value, "toolchains")?
            .iter()
            .map(|toolchain| {
                Ok(UsageToolchain {
                    id: text(toolchain, "id")?,
                    label: text(toolchain, "label")?,
                    release: optional(toolchain, "release"),
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let mut features = Vec::new();
        for feature in array(value, "features")? {
            let name = text(&feature, "name")?;
            let mut cells = Vec::new();
            for toolchain in &toolchains {
                let cell = feature
                    .get("toolchains")
                    .and_then(|cells| cells.get(&toolchain.id))
                    .with_context(|| format!("feature {name} has no cell for {}", toolchain.id))?;
                let detail = || {
                    optional(cell, "detail")
                        .with_context(|| format!("feature {name}, {}: no detail", toolchain.id))
                };
                let places = || -> anyhow::Result<Vec<UsedPlace>> {
                    array(cell, "places")?.iter().map(place).collect()
                };
                cells.push(match text(cell, "status")?.as_str() {
                    "used" => UsageCell::Used(places()?),
                    "unused" => UsageCell::Unused(
                        array(cell, "enabled_at")?
                            .iter()
                            .map(point)
                            .collect::<anyhow::Result<_>>()?,
                    ),
                    "stable" => UsageCell::Stable(detail()?),
                    "not-enabled" => UsageCell::NotEnabled,
                    "not-gated" => UsageCell::NotGated(detail()?),
                    "failed" => UsageCell::Failed(detail()?, places()?),
                    "not-run" => UsageCell::NotRun(detail()?),
                    other => bail!("feature {name}, {}: unknown status `{other}`", toolchain.id),
                });
            }
            features.push(FeatureUsage {
                name,
                shim_item: text(&feature, "shim_item")?,
                cells,
            });
        }
        Ok(UsageReport {
            toolchains,
            features,
        })
    }

    /// Reads a usage report from a file, naming the file in errors.
    pub fn read(path: &Path) -> anyhow::Result<UsageReport> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let value = json::parse(&text)
            .map_err(|error| anyhow::anyhow!("{} is not JSON: {error}", path.display()))?;
        UsageReport::from_json(&value).with_context(|| format!("reading {}", path.display()))
    }
}
