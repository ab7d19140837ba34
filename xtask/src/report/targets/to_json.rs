// SPDX-License-Identifier: GPL-2.0
//! The target axis as the report's `targets` member, and back.

use super::{KnownCell, Sources, TargetAxis, TargetCell};
use crate::report::{listed, read_listed, seconds, IndexOf, Key, Listed, ToolchainEntry};
use crate::util::json::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `targets` member: written, its cells are [`Listed`]; read, the domain's, or their [`Key`]s.
#[derive(Serialize, Deserialize)]
pub(in crate::report) struct TargetAxisJson<K = KnownCell, C = TargetCell> {
    triples: Vec<String>,
    /// Keyed by toolchain id; null where nothing was looked for.
    sources: BTreeMap<String, Option<Sources>>,
    known: Vec<K>,
    cells: Vec<C>,
    /// Keyed by toolchain id: the major version of its LLVM. Absent in reports written before
    /// it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    llvm: Option<BTreeMap<String, Option<u32>>>,
}

/// `values`, one per toolchain, keyed by its id: null for a toolchain past their end.
fn by_id<T: Clone>(
    toolchains: &[ToolchainEntry],
    values: &[Option<T>],
) -> BTreeMap<String, Option<T>> {
    let value = |index: usize| values.get(index).cloned().flatten();
    let ids = toolchains.iter().map(|toolchain| toolchain.id.clone());
    ids.enumerate()
        .map(|(index, id)| (id, value(index)))
        .collect()
}

/// What [`by_id`] wrote read back in the order of `toolchains`: `None` for an id it lacks.
fn of_ids<T>(
    toolchains: &[ToolchainEntry],
    mut values: BTreeMap<String, Option<T>>,
) -> Vec<Option<T>> {
    let value = |toolchain: &ToolchainEntry| values.remove(&toolchain.id).flatten();
    toolchains.iter().map(value).collect()
}

impl TargetAxis {
    /// The `targets` member, cells naming toolchains by id.
    pub(in crate::report) fn to_json<'a>(
        &'a self,
        toolchains: &[ToolchainEntry],
    ) -> TargetAxisJson<Listed<'a, KnownCell>, Listed<'a, TargetCell>> {
        TargetAxisJson {
            llvm: self.llvm.as_deref().map(|llvm| by_id(toolchains, llvm)),
            triples: self.triples.clone(),
            sources: by_id(toolchains, &self.sources),
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
            sources: of_ids(toolchains, self.sources),
            known: self.known,
            cells: self.cells,
            llvm: self.llvm.map(|llvm| of_ids(toolchains, llvm)),
        };
        targets.check()?;
        Ok(targets)
    }
}
