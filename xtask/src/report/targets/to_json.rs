// SPDX-License-Identifier: GPL-2.0
//! The target axis as the report's `targets` member, and back.

use super::{KnownCell, TargetAxis, TargetCell, STAGES};
use crate::report::{listed, mode, outcome, seconds, stated_ok, Listed, ToolchainEntry};
use crate::util::json::{self, Deserialize, Serialize};
use anyhow::anyhow;
use std::collections::BTreeMap;

/// The `targets` member: written, its cells are the domain's ([`Listed`]); read, the types below.
#[derive(Serialize, Deserialize)]
pub(in crate::report) struct TargetAxisJson<K = KnownJson, C = TargetCellJson> {
    triples: Vec<String>,
    /// Keyed by toolchain id; null where nothing was looked for.
    sources: BTreeMap<String, Option<SourcesJson>>,
    known: Vec<K>,
    cells: Vec<C>,
    /// Keyed by toolchain id: the major version of its LLVM. Absent in reports written before
    /// it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    llvm: Option<BTreeMap<String, Option<u32>>>,
}

/// Where a toolchain's target libraries come from, or why there are none.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
enum SourcesJson {
    Identity(String),
    Missing(String),
}

#[derive(Deserialize)]
pub(in crate::report) struct KnownJson {
    toolchain: String,
    target: String,
    #[serde(deserialize_with = "json::nullable")]
    observed: Option<bool>,
    #[serde(deserialize_with = "json::nullable")]
    expected: Option<bool>,
    #[serde(deserialize_with = "json::nullable")]
    error: Option<String>,
    ok: bool,
}

#[derive(Deserialize)]
pub(in crate::report) struct TargetCellJson {
    toolchain: String,
    target: String,
    stage: String,
    /// Required, but the stage says the kind.
    #[allow(dead_code)]
    kind: String,
    #[serde(deserialize_with = "json::nullable")]
    mode: Option<String>,
    outcome: String,
    expected: String,
    ok: bool,
    #[serde(deserialize_with = "json::nullable")]
    first_error: Option<String>,
    #[serde(deserialize_with = "json::nullable")]
    detail: Option<String>,
    seconds: f64,
    cached: bool,
}

impl TargetAxis {
    /// The `targets` member, cells naming toolchains by id.
    pub(in crate::report) fn to_json<'a>(
        &'a self,
        toolchains: &[ToolchainEntry],
    ) -> TargetAxisJson<Listed<'a, KnownCell>, Listed<'a, TargetCell>> {
        let sources = toolchains.iter().enumerate().map(|(index, toolchain)| {
            let sources = self.sources.get(index).cloned().flatten();
            let sources = sources.map(|found| match found {
                Ok(identity) => SourcesJson::Identity(identity),
                Err(why) => SourcesJson::Missing(why),
            });
            (toolchain.id.clone(), sources)
        });
        let llvm = self.llvm.as_ref().map(|llvm| {
            let major = |index: usize| llvm.get(index).copied().flatten();
            let ids = toolchains.iter().map(|toolchain| toolchain.id.clone());
            ids.enumerate()
                .map(|(index, id)| (id, major(index)))
                .collect()
        });
        TargetAxisJson {
            llvm,
            triples: self.triples.clone(),
            sources: sources.collect(),
            known: listed(&self.known, toolchains, |cell| (cell.toolchain, cell.ok())),
            cells: listed(&self.cells, toolchains, |cell| (cell.toolchain, cell.ok())),
        }
    }
}

impl TargetAxisJson {
    /// The target axis read back; `index_of` turns a toolchain id into its column.
    pub(in crate::report) fn read(
        self,
        toolchains: &[ToolchainEntry],
        index_of: &dyn Fn(&str, &str) -> anyhow::Result<usize>,
    ) -> anyhow::Result<TargetAxis> {
        let what = "the report's targets";
        let mut sources = self.sources;
        let llvm = self.llvm.map(|llvm| {
            let major = |id: &String| llvm.get(id).copied().flatten();
            toolchains
                .iter()
                .map(|toolchain| major(&toolchain.id))
                .collect()
        });
        let mut targets = TargetAxis {
            triples: self.triples,
            llvm,
            ..TargetAxis::default()
        };
        for toolchain in toolchains {
            let found = sources.remove(&toolchain.id).flatten();
            targets.sources.push(found.map(|found| match found {
                SourcesJson::Identity(identity) => Ok(identity),
                SourcesJson::Missing(why) => Err(why),
            }));
        }
        for (index, cell) in self.known.into_iter().enumerate() {
            let what = format!("{what}: known[{index}]");
            let parsed = KnownCell {
                toolchain: index_of(&cell.toolchain, &what)?,
                triple: cell.target,
                observed: cell.observed,
                expected: cell.expected,
                error: cell.error,
            };
            stated_ok(cell.ok, parsed.ok(), &what)?;
            targets.known.push(parsed);
        }
        for (index, cell) in self.cells.into_iter().enumerate() {
            let what = format!("{what}: cells[{index}]");
            let (_, kind, _) = STAGES
                .iter()
                .find(|(stage, _, _)| *stage == cell.stage)
                .copied()
                .ok_or_else(|| anyhow!("{what}: unknown stage `{}`", cell.stage))?;
            let parsed = TargetCell {
                toolchain: index_of(&cell.toolchain, &what)?,
                triple: cell.target,
                stage: cell.stage,
                kind,
                mode: cell.mode.map(|word| mode(&word, &what)).transpose()?,
                outcome: outcome(&cell.outcome, &what)?,
                expected: outcome(&cell.expected, &what)?,
                first_error: cell.first_error,
                detail: cell.detail,
                seconds: seconds(cell.seconds, &what)?,
                cached: cell.cached,
            };
            stated_ok(cell.ok, parsed.ok(), &what)?;
            targets.cells.push(parsed);
        }
        targets.check()?;
        Ok(targets)
    }
}
