// SPDX-License-Identifier: GPL-2.0
//! Which compilers build the shim: the matrix's own probes and shim builds in both modes
//! ([`Work::Shim`]), so that after a matrix run the answer is read from the cache.

use super::answer::{Built, Row};
use crate::catalog::FEATURES;
use crate::features::expect::{enabled_in_kernel_mode, Outcome};
use crate::features::status::Status;
use crate::run::driver::{self, Driven, Settings, Work};
use crate::run::plan::{Kind, Layout, Mode, Selection};

/// A row per selected compiler, and a note of how many steps came from the cache.
pub fn rows(
    layout: &Layout,
    selection: &Selection,
    settings: Settings,
) -> anyhow::Result<(Vec<Row>, String)> {
    let driven = driver::drive(layout, selection, Work::Shim, settings)?;
    let steps = &driven.planned.steps;
    let cached = driven.results.iter().filter(|result| result.cached).count();
    // Without the checkout's path, which the errors about the shim's files name.
    let prefix = format!("{}/", layout.root.display());
    let toolchains = 0..driven.planned.availabilities.len();
    let rows = toolchains
        .map(|index| row(&driven, index, &prefix))
        .collect();
    let note = format!(
        "from {} probes and shim builds, {cached} of them from the cache",
        steps.len()
    );
    Ok((rows, note))
}

fn row(driven: &Driven, index: usize, prefix: &str) -> Row {
    let (steps, results) = (&driven.planned.steps, &driven.results);
    let (toolchain, version) = match Row::found(&driven.planned.availabilities[index]) {
        Ok(found) => found,
        Err(row) => return *row,
    };
    let mine = || {
        steps
            .iter()
            .zip(results)
            .filter(move |(step, _)| step.toolchain == index)
    };
    let built = |mode: Mode| {
        let found = mine().find(|(step, _)| step.kind == Kind::Build && step.mode == Some(mode));
        let Some((_, result)) = found else {
            return Built::Unknown("not planned".into());
        };
        let error = || {
            result
                .first_error
                .as_deref()
                .unwrap_or("")
                .replace(prefix, "")
        };
        match result.outcome {
            Outcome::Pass => Built::Builds,
            Outcome::Fail => Built::Fails(error()),
            Outcome::Skipped => Built::Unknown(error()),
        }
    };
    let probe = mine()
        .find_map(|(step, result)| result.probe.as_ref().filter(|_| step.kind == Kind::Probe));
    let gated = match probe {
        Some(Ok(statuses)) => enabled_in_kernel_mode(version.release)
            .iter()
            .filter(|feature| {
                let position = FEATURES.iter().position(|known| known.name == feature.name);
                position.and_then(|position| statuses.get(position)) == Some(&Status::Gated)
            })
            .map(|feature| feature.name.to_string())
            .collect(),
        _ => Vec::new(),
    };
    let both = [built(Mode::Stable), built(Mode::Kernel)];
    Row {
        cached: mine().all(|(_, result)| result.cached),
        ..Row::new((toolchain, version), both, gated)
    }
}
