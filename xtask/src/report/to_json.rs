// SPDX-License-Identifier: GPL-2.0
//! The report as JSON and back, in the layout docs/matrix.md documents: typed members, so that a
//! damaged or foreign file is refused with the member that is wrong; then what the members must
//! agree on (ids, words, each `ok`, the verdict) is checked here.

use super::kbuild::KbuildCell;
use super::targets::to_json::TargetAxisJson;
use super::upgrade::{schema_of, upgrade};
use super::SCHEMA_VERSION;
use super::{
    listed, read_listed, seconds, BuildCell, Failure, FeatureCell, Observed, Report, ToolchainEntry,
};
use super::{stated_ok, Key};
use crate::catalog::{Release, FEATURES, MINIMUM_RELEASE};
use crate::features::expect::ToolchainVerdict;
use crate::features::status::Status;
use crate::run::plan::{Kind, KBUILD_FIXTURES};
use crate::util::json::{self, Deserialize, Serialize, Value};
use crate::util::output::escape;
use anyhow::{anyhow, bail, ensure, Context as _};
use std::collections::{BTreeMap, HashMap};

/// The largest report file read: about two thousand toolchains' worth.
pub(crate) const REPORT_LIMIT: u64 = 64 << 20;

/// The report file. Members are written in key order (through [`Value`]), whatever the order here.
/// Written, its lists hold the domain's types ([`Listed`] for the cells). Read, it is read twice
/// from the same text, so that an error names the member: as the domain's types, and as [`Keys`],
/// what the file writes beside them, whose words and toolchain ids the reader checks.
#[derive(Serialize, Deserialize)]
struct ReportJson<T = ToolchainEntry, B = BuildCell, K = KbuildCell, A = TargetAxisJson> {
    schema: u32,
    minimum_release: String,
    strict: bool,
    #[serde(deserialize_with = "json::nullable")]
    shard: Option<String>,
    verdict: String,
    toolchains: Vec<T>,
    features: Vec<FeatureJson>,
    builds: Vec<B>,
    /// Absent in reports written before the Kbuild cells existed.
    #[serde(default = "Vec::new")]
    kbuild: Vec<K>,
    targets: A,
    failures: Vec<Failure>,
    /// Absent in reports written before reports had dates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    date: Option<String>,
}

type Keys = ReportJson<ToolchainSaid, Key, Key, TargetAxisJson<Key, Key>>;

/// A toolchain as written: its entry, and what the report says of it.
#[derive(Serialize)]
struct ToolchainView<'a> {
    #[serde(flatten)]
    entry: &'a ToolchainEntry,
    #[serde(flatten)]
    said: ToolchainSaid,
}

/// What the report says of a toolchain; its summary is not read back but made again.
#[derive(Serialize, Deserialize)]
struct ToolchainSaid {
    verdict: String,
    #[serde(deserialize_with = "json::nullable")]
    error: Option<String>,
    summary: String,
}

#[derive(Serialize, Deserialize)]
struct FeatureJson {
    name: String,
    #[serde(deserialize_with = "json::nullable")]
    catalog_stable_since: Option<String>,
    /// Keyed by toolchain id.
    toolchains: BTreeMap<String, CellJson>,
}

#[derive(Serialize, Deserialize)]
struct CellJson {
    observed: String,
    #[serde(deserialize_with = "json::nullable")]
    stable_since: Option<String>,
    #[serde(deserialize_with = "json::nullable")]
    expected: Option<String>,
    #[serde(deserialize_with = "json::nullable")]
    expected_stable_since: Option<String>,
    ok: bool,
}

fn release(text: Option<&str>, what: &str) -> anyhow::Result<Option<Release>> {
    text.map(|text| {
        crate::toolchains::version::parse_release(text)
            .map(|(release, _)| release)
            .with_context(|| what.to_owned())
    })
    .transpose()
}

fn status(word: &str, since: Option<Release>, what: &str) -> anyhow::Result<Status> {
    Status::from_parts(word, since).ok_or_else(|| anyhow!("{what}: unknown status `{word}`"))
}

impl Report {
    /// The report as JSON, in the layout docs/matrix.md documents.
    pub fn to_json(&self) -> Value {
        let release = |release: Option<Release>| release.map(|release| release.to_string());
        let toolchains = self.toolchains.iter().zip(self.summary_lines());
        let toolchains = toolchains.map(|(entry, summary)| {
            let error = match &entry.verdict {
                ToolchainVerdict::Ok => None,
                ToolchainVerdict::TooOld => Some(entry.verdict.describe()),
                ToolchainVerdict::Broken(message) | ToolchainVerdict::Missing(message) => {
                    Some(message.clone())
                }
            };
            let said = ToolchainSaid {
                verdict: entry.verdict.word().to_string(),
                error,
                summary,
            };
            ToolchainView { entry, said }
        });
        // A feature the report was recorded without stays out of it, as it was.
        let features = self.recorded().map(|(feature, cells)| FeatureJson {
            name: feature.name.to_string(),
            catalog_stable_since: release(feature.stable_since),
            toolchains: self
                .toolchains
                .iter()
                .zip(cells)
                .map(|(toolchain, cell)| {
                    let observed_since = match cell.observed {
                        Observed::Status(status) => status.stable_since(),
                        _ => None,
                    };
                    let cell = CellJson {
                        observed: cell.observed.word().to_string(),
                        stable_since: release(observed_since),
                        expected: cell.expected.map(|status| status.word().to_string()),
                        expected_stable_since: release(
                            cell.expected.and_then(Status::stable_since),
                        ),
                        ok: cell.ok(),
                    };
                    (toolchain.id.clone(), cell)
                })
                .collect(),
        });
        json::to_value(&ReportJson {
            schema: SCHEMA_VERSION,
            minimum_release: MINIMUM_RELEASE.to_string(),
            strict: self.strict,
            shard: self.shard.clone(),
            verdict: self.verdict().word().to_string(),
            toolchains: toolchains.collect(),
            features: features.collect(),
            builds: listed(&self.builds, &self.toolchains, |cell| {
                (cell.toolchain, cell.ok())
            }),
            kbuild: listed(&self.kbuild, &self.toolchains, |cell| {
                (cell.toolchain, cell.ok())
            }),
            targets: self.targets.to_json(&self.toolchains),
            failures: self.failures(),
            date: self.date.clone(),
        })
    }

    /// Reads a report file that `cargo xtask matrix --format json` wrote.
    pub fn read(path: &std::path::Path) -> anyhow::Result<Report> {
        let text = crate::util::files::read_text(path, REPORT_LIMIT)
            .with_context(|| format!("cannot read the report {}", path.display()))?;
        json::parse(&text).with_context(|| {
            format!(
                "{} is not a matrix report (written by `cargo xtask matrix --format json`)",
                path.display()
            )
        })?;
        // The message may quote the file's own text.
        Report::from_json(&text).map_err(|error| {
            anyhow!(
                "{} is not a matrix report: {}",
                path.display(),
                escape(&format!("{error:#}"))
            )
        })
    }

    /// Reads back what [`Report::to_json`] wrote (of this schema or one [`upgrade`] reads); the
    /// verdict, the failures and the summaries are recomputed.
    pub fn from_json(text: &str) -> anyhow::Result<Report> {
        // The schema first, so that another layout is named as such rather than by a member.
        let value = json::parse(text)?;
        let schema = schema_of(&value).unwrap_or_default();
        let value = upgrade(value)?;
        fn read<T: serde::de::DeserializeOwned>(
            text: &str,
            value: &Value,
            schema: u64,
        ) -> anyhow::Result<T> {
            if schema == u64::from(SCHEMA_VERSION) {
                // Read from the text, so that an error says its line.
                return json::read(text);
            }
            json::read_value(value.clone()).map_err(|error| {
                anyhow!("{error}, in the report upgraded from schema {schema} to {SCHEMA_VERSION}")
            })
        }
        let mut file: ReportJson = read(text, &value, schema)?;
        let keys: Keys = read(text, &value, schema)?;
        let mut toolchains = file.toolchains;
        for (index, (entry, said)) in toolchains.iter_mut().zip(keys.toolchains).enumerate() {
            let what = format!("toolchains[{index}]");
            let error = said.error.unwrap_or_default();
            entry.verdict = ToolchainVerdict::from_word(&said.verdict, error)
                .ok_or_else(|| anyhow!("{what}: unknown verdict `{}`", said.verdict))?;
            // A missing pin's release is what the pin file asks for, not a compiler's.
            if !matches!(entry.verdict, ToolchainVerdict::Missing(_)) {
                entry.release = release(entry.release_text.as_deref(), &what)?;
            }
        }
        // Cells name their toolchain by id: two toolchains with one id would share cells.
        let mut positions: HashMap<&str, usize> = HashMap::with_capacity(toolchains.len());
        for (index, toolchain) in toolchains.iter().enumerate() {
            if let Some(first) = positions.insert(&toolchain.id, index) {
                bail!(
                    "toolchains[{index}] has the id `{}` of toolchains[{first}]: every toolchain \
                     needs an id of its own",
                    escape(&toolchain.id)
                );
            }
        }
        let index_of = |id: &str, what: &str| {
            positions
                .get(id)
                .copied()
                .ok_or_else(|| anyhow!("{what}: no toolchain `{}` in the report", escape(id)))
        };
        // A failed probe's message is kept in the failure list, which names the cell.
        let mut failure_errors: HashMap<(&str, &str), &str> = HashMap::new();
        for failure in &file.failures {
            if let Some(error) = &failure.first_error {
                let cell = (failure.toolchain.as_str(), failure.cell.as_str());
                failure_errors.entry(cell).or_insert(error);
            }
        }

        let names: Vec<&str> = file.features.iter().map(|entry| &*entry.name).collect();
        let rows = crate::report::recorded_rows(&names)?;
        let mut features = Vec::new();
        for (feature, row) in FEATURES.iter().zip(rows) {
            let Some(row) = row else {
                let not_recorded = FeatureCell {
                    observed: Observed::NotRecorded,
                    expected: None,
                };
                features.push(vec![not_recorded; toolchains.len()]);
                continue;
            };
            let entry = &file.features[row];
            let mut cells = Vec::new();
            for toolchain in &toolchains {
                let what = format!("feature {} on {}", feature.name, toolchain.id);
                let cell = entry
                    .toolchains
                    .get(&toolchain.id)
                    .ok_or_else(|| anyhow!("{what}: no cell"))?;
                let observed = match cell.observed.as_str() {
                    "not-probed" => Observed::NotProbed,
                    "probe-failed" => {
                        let cell_name = format!("feature {}", feature.name);
                        let message = failure_errors
                            .get(&(toolchain.id.as_str(), cell_name.as_str()))
                            .copied()
                            .unwrap_or("the probe failed");
                        Observed::ProbeFailed(message.to_string())
                    }
                    word => Observed::Status(status(
                        word,
                        release(cell.stable_since.as_deref(), &what)?,
                        &what,
                    )?),
                };
                let expected_since = release(cell.expected_stable_since.as_deref(), &what)?;
                let expected = cell
                    .expected
                    .as_deref()
                    .map(|word| status(word, expected_since, &what))
                    .transpose()?;
                let cell_read = FeatureCell { observed, expected };
                stated_ok(cell.ok, cell_read.ok(), &what)?;
                cells.push(cell_read);
            }
            features.push(cells);
        }

        read_listed(
            &mut file.builds,
            &keys.builds,
            "builds",
            &index_of,
            |build, toolchain, what| {
                build.toolchain = toolchain;
                ensure!(
                    matches!(
                        build.kind,
                        Kind::Probe | Kind::Build | Kind::Run | Kind::Test
                    ),
                    "{what}: unknown kind `{}`",
                    build.kind.word()
                );
                seconds(build.seconds, what)?;
                Ok(build.ok())
            },
        )?;
        read_listed(
            &mut file.kbuild,
            &keys.kbuild,
            "kbuild",
            &index_of,
            |cell, toolchain, what| {
                cell.toolchain = toolchain;
                ensure!(
                    KBUILD_FIXTURES.contains(&cell.fixture.as_str()),
                    "{what}: unknown fixture `{}`",
                    cell.fixture
                );
                seconds(cell.seconds, what)?;
                Ok(cell.ok())
            },
        )?;
        if let Some(date) = &file.date {
            crate::util::date::check_utc_minute(date)?;
        }
        let targets = file.targets.read(keys.targets, &toolchains, &index_of)?;
        let report = Report {
            targets,
            toolchains,
            features,
            builds: file.builds,
            strict: file.strict,
            kbuild: file.kbuild,
            shard: file.shard,
            date: file.date,
        };
        let verdict = report.verdict().word();
        ensure!(
            file.verdict == verdict,
            "the report's verdict is `{}`, but its cells make it `{verdict}`",
            escape(&file.verdict)
        );
        Ok(report)
    }
}
