// SPDX-License-Identifier: GPL-2.0
//! The target axis as the report's `targets` member, and back.

use super::{KnownCell, TargetAxis, TargetCell};
use crate::report::{listed, read_listed, seconds, IndexOf, Key, Listed, ToolchainEntry};
use crate::util::json::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `targets` member: written, its cells are [`Listed`]; read, the domain's, or their [`Key`]s.
#[derive(Serialize, Deserialize)]
pub(in crate::report) struct TargetAxisJson<K = KnownCell, C = TargetCell> {
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
    /// The target axis read back, with `keys`, the same member read as [`Key`]s; `index_of`
    /// turns a toolchain id into its column.
    pub(in crate::report) fn read(
        mut self,
        keys: TargetAxisJson<Key, Key>,
        toolchains: &[ToolchainEntry],
        index_of: &IndexOf<'_>,
    ) -> anyhow::Result<TargetAxis> {
        let mut sources = self.sources;
        let llvm = self.llvm.map(|llvm| {
            let major = |id: &String| llvm.get(id).copied().flatten();
            toolchains
                .iter()
                .map(|toolchain| major(&toolchain.id))
                .collect()
        });
        let sources = toolchains.iter().map(|toolchain| {
            let found = sources.remove(&toolchain.id).flatten();
            found.map(|found| match found {
                SourcesJson::Identity(identity) => Ok(identity),
                SourcesJson::Missing(why) => Err(why),
            })
        });
        read_listed(
            &mut self.known,
            &keys.known,
            "the report's targets: known",
            index_of,
            |cell, toolchain, _| {
                cell.toolchain = toolchain;
                Ok(cell.ok())
            },
        )?;
        read_listed(
            &mut self.cells,
            &keys.cells,
            "the report's targets: cells",
            index_of,
            |cell, toolchain, what| {
                cell.toolchain = toolchain;
                seconds(cell.seconds, what)?;
                Ok(cell.ok())
            },
        )?;
        let targets = TargetAxis {
            triples: self.triples,
            sources: sources.collect(),
            known: self.known,
            cells: self.cells,
            llvm,
        };
        targets.check()?;
        Ok(targets)
    }
}
