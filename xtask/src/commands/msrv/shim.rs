// SPDX-License-Identifier: GPL-2.0
//! Which compilers build the shim: the matrix's own probes and shim builds in both modes
//! ([`Work::Shim`]), so that after a matrix run the answer is read from the cache.

use super::answer::{Built, Row};
use crate::catalog::FEATURES;
use crate::features::expect::{enabled_in_kernel_mode, Outcome};
use crate::features::status::Status;
use crate::run::driver::{self, Settings, Work};
use crate::run::judge::StepResult;
use crate::run::plan::{Kind, Layout, Mode, Selection, Step};
use crate::toolchains::discovery::Availability;

/// A row per selected compiler, and a note of how many steps came from the cache.
pub fn rows(
    layout: &Layout,
    selection: &Selection,
    settings: Settings,
) -> anyhow::Result<(Vec<Row>, String)> {
    let driven = driver::drive(layout, selection, Work::Shim, settings)?;
    let steps = &driven.planned.steps;
    let cached = driven.results.iter().filter(|result| result.cached).count();
    let rows = driven
        .planned
        .availabilities
        .iter()
        .enumerate()
        .map(|(index, availability)| row(index, availability, steps, &driven.results))
        .map(|row| relative_to(row, &layout.root))
        .collect();
    let note = format!(
        "from {} probes and shim builds, {cached} of them from the cache",
        steps.len()
    );
    Ok((rows, note))
}

fn row(index: usize, availability: &Availability, steps: &[Step], results: &[StepResult]) -> Row {
    let (toolchain, version) = match Row::found(availability) {
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
        let error = || result.first_error.clone().unwrap_or_default();
        match result.outcome {
            Outcome::Pass => Built::Builds,
            Outcome::Fail => Built::Fails(error()),
            Outcome::Skipped => Built::Unknown(error()),
        }
    };
    let probe = mine().find_map(|(step, result)| {
        (step.kind == Kind::Probe)
            .then_some(result.probe.as_ref())
            .flatten()
    });
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

/// `row` with the checkout's path left out of its errors, which name the shim's files.
fn relative_to(mut row: Row, root: &std::path::Path) -> Row {
    let prefix = format!("{}/", root.display());
    for built in [&mut row.stable, &mut row.kernel] {
        if let Built::Fails(error) | Built::Unknown(error) = built {
            *error = error.replace(&prefix, "");
        }
    }
    row
}
