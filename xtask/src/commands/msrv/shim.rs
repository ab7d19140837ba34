// SPDX-License-Identifier: GPL-2.0
//! Which compilers build the shim: the matrix's own probes and shim builds in both modes
//! ([`Work::Shim`]), so that after a matrix run the answer is read from the cache.

use super::answer::{Answer, Built, Row, BOTH_MODES};
use crate::catalog::{Feature, FEATURES};
use crate::features::expect::{enabled_in_kernel_mode, Outcome};
use crate::features::status::Status;
use crate::project_root;
use crate::run::driver::{self, Driven, Settings, Work};
use crate::run::plan::{Kind, Layout, Mode, Selection};
use anyhow::Context;

/// The answer for the shim, also written where [`Work::Shim`] keeps its report.
pub fn answer(selection: &Selection, settings: Settings) -> anyhow::Result<Answer> {
    let layout = Layout::new(&project_root());
    let driven = driver::drive(&layout, selection, Work::Shim, settings)?;
    let cached = driven.results.iter().filter(|result| result.cached).count();
    // Without the checkout's path, which the errors about the shim's files name.
    let prefix = format!("{}/", layout.root.display());
    let toolchains = 0..driven.planned.availabilities.len();
    let rows = toolchains
        .map(|index| row(&driven, index, &prefix))
        .collect();
    let note = format!(
        "from {} probes and shim builds, {cached} of them from the cache",
        driven.planned.steps.len()
    );
    let subject = "the shim (kernel-shim/src/lib.rs)".to_string();
    let answer = Answer::new((subject, "shim"), &BOTH_MODES, rows, vec![note]);
    let path = Work::Shim.report(&layout);
    let json = crate::util::json::to_pretty(&answer.to_json());
    crate::util::files::write_atomically(&path, json.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(answer)
}

fn row(driven: &Driven, index: usize, prefix: &str) -> Row {
    let mine = || {
        let steps = driven.planned.steps.iter().zip(&driven.results);
        steps.filter(move |(step, _)| step.toolchain == index)
    };
    let built = |mode: Mode| {
        let found = mine().find(|(step, _)| step.kind == Kind::Build && step.mode == Some(mode));
        let Some((_, result)) = found else {
            return Built::Unknown("not planned".into());
        };
        let error = || {
            let error = result.first_error.as_deref().unwrap_or("");
            error.replace(prefix, "")
        };
        match result.outcome {
            Outcome::Pass => Built::Builds,
            Outcome::Fail => Built::Fails(error()),
            Outcome::Skipped => Built::Unknown(error()),
        }
    };
    let probe = mine()
        .find_map(|(step, result)| result.probe.as_ref().filter(|_| step.kind == Kind::Probe));
    Row::of(&driven.planned.availabilities[index], |_, version| {
        let enabled = enabled_in_kernel_mode(version.release);
        let is_enabled = |feature: &Feature| enabled.iter().any(|on| on.name == feature.name);
        let gated = match probe {
            Some(Ok(statuses)) => FEATURES
                .iter()
                .zip(statuses)
                .filter(|(feature, status)| **status == Status::Gated && is_enabled(feature))
                .map(|(feature, _)| feature.name.to_string())
                .collect(),
            _ => Vec::new(),
        };
        let both = [built(Mode::Stable), built(Mode::Kernel)];
        (both, gated, mine().all(|(_, result)| result.cached))
    })
}
