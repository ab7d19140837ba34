// SPDX-License-Identifier: GPL-2.0
//! An audit's JSON read back into its report, for `cargo xtask docs`: only what the compilers
//! said and what the audit was asked; the summaries, conclusions and findings are computed
//! again, never taken from the file.

use super::input::{Entry, Input};
use super::summary::{Answer, Decider};
use super::{AuditReport, Column, Probed};
use crate::catalog::Release;
use crate::features::cfg::Predicate;
use crate::features::expect::ToolchainVerdict;
use crate::features::kconfig::KconfigSymbol;
use crate::features::status::Status;
use crate::report::ToolchainEntry;
use crate::toolchains::discovery::SourceKind;
use crate::util::json::{self, Deserialize};
use anyhow::{anyhow, ensure, Context};
use std::collections::BTreeMap;

#[derive(Deserialize)]
struct AuditJson {
    schema: u32,
    path: Option<String>,
    min_rust: Option<String>,
    features: Vec<EntryJson>,
    toolchains: Vec<ToolchainJson>,
    target: BTreeMap<String, Vec<Option<String>>>,
    kconfig: Vec<KconfigJson>,
}

#[derive(Deserialize)]
struct EntryJson {
    name: String,
    line: Option<usize>,
    column: Option<usize>,
    condition: Option<String>,
    attribute: Option<PositionJson>,
}

#[derive(Deserialize)]
struct PositionJson {
    line: usize,
    column: usize,
}

#[derive(Deserialize)]
struct ToolchainJson {
    id: String,
    spec: String,
    release: Option<String>,
    source: Option<SourceKind>,
    verdict: String,
    error: Option<String>,
    features: Option<BTreeMap<String, FeatureJson>>,
    probed_alone: Option<Vec<AloneJson>>,
}

#[derive(Deserialize)]
struct FeatureJson {
    status: Option<String>,
    stable_since: Option<String>,
}

#[derive(Deserialize)]
struct AloneJson {
    name: String,
    error: String,
}

#[derive(Deserialize)]
struct KconfigJson {
    cfg: String,
    from: Option<String>,
    source: String,
}

fn release(text: Option<&str>, what: &str) -> anyhow::Result<Option<Release>> {
    let read =
        |text| Release::parse(text).ok_or_else(|| anyhow!("{what}: `{text}` is not a release"));
    text.map(read).transpose()
}

impl AuditReport {
    /// Reads an audit back from the JSON text [`AuditReport::to_json`] wrote.
    pub fn from_json(text: &str) -> anyhow::Result<AuditReport> {
        let file: AuditJson = json::read(text)?;
        ensure!(
            file.schema == super::render::SCHEMA_VERSION,
            "the audit has schema {}, this xtask reads schema {}",
            file.schema,
            super::render::SCHEMA_VERSION
        );
        let entries = file.features.into_iter().enumerate().map(|(index, entry)| {
            let condition = entry.condition.map(|text| {
                Predicate::parse(&text)
                    .map_err(|error| anyhow!("features[{index}].condition: {error:?}"))
            });
            anyhow::Ok(Entry {
                name: entry.name,
                condition: condition.transpose()?,
                location: entry.line.zip(entry.column),
                attribute: entry.attribute.map(|at| (at.line, at.column)),
            })
        });
        let input = Input {
            path: file.path.map(Into::into),
            entries: entries.collect::<anyhow::Result<_>>()?,
            kind: super::input::CrateKind::Library,
            loads_proc_macro: false,
            distinct: Default::default(),
        };
        let mut columns = Vec::new();
        for (index, toolchain) in file.toolchains.into_iter().enumerate() {
            let what = format!("toolchains[{index}]");
            let error = toolchain.error.clone().unwrap_or_default();
            let verdict = ToolchainVerdict::from_word(&toolchain.verdict, error)
                .ok_or_else(|| anyhow!("{what}: unknown verdict `{}`", toolchain.verdict))?;
            // A nightly's release is written `1.97.0-nightly`.
            let released = toolchain
                .release
                .as_deref()
                .and_then(|text| text.split('-').next());
            let released = release(released, &what)?;
            let probed = match (toolchain.features, &verdict) {
                (Some(features), _) => {
                    let release = released.with_context(|| format!("{what}: no release"))?;
                    let status = |name: &str| {
                        let feature = features
                            .get(name)
                            .with_context(|| format!("{what}: no answer about {name}"))?;
                        let since = self::release(feature.stable_since.as_deref(), &what)?;
                        let word = feature.status.as_deref().unwrap_or("");
                        Status::from_parts(word, since)
                            .with_context(|| format!("{what}: {name}: unknown status `{word}`"))
                    };
                    let statuses = input.names().into_iter().map(status);
                    let statuses = statuses.collect::<anyhow::Result<_>>()?;
                    let breakers = toolchain.probed_alone.unwrap_or_default();
                    let breakers = breakers.into_iter().map(|alone| (alone.name, alone.error));
                    Probed::Answered(Answer {
                        release,
                        statuses,
                        breakers: breakers.collect(),
                    })
                }
                (None, ToolchainVerdict::Ok) => Probed::Failed(toolchain.error.unwrap_or_default()),
                (None, _) => Probed::Unavailable,
            };
            let entry = ToolchainEntry {
                id: toolchain.id,
                spec: toolchain.spec,
                source: toolchain.source,
                release_text: toolchain.release,
                release: released,
                verdict,
                ..ToolchainEntry::default()
            };
            columns.push(Column {
                entry,
                probed,
                rustc: None,
                identity: None,
            });
        }
        let mut target = Vec::new();
        for (key, values) in file.target {
            target.extend(values.into_iter().map(|value| (key.clone(), value)));
        }
        let kconfig = file.kconfig.into_iter().map(|symbol| {
            let from = release(symbol.from.as_deref(), &symbol.cfg)?;
            anyhow::Ok(KconfigSymbol {
                cfg: symbol.cfg,
                from,
                source: symbol.source,
            })
        });
        let kconfig = kconfig.collect::<anyhow::Result<_>>()?;
        let min_rust = release(file.min_rust.as_deref(), "min_rust")?;
        let decider = Decider::new(&input, target, kconfig);
        Ok(AuditReport::new(input, decider, columns, min_rust))
    }
}
