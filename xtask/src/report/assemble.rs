// SPDX-License-Identifier: GPL-2.0
//! The report of a run, assembled from the toolchains found, the steps planned and their
//! results, next to what the catalog predicts for every cell.

use super::kbuild::KbuildCell;
use super::targets::{assemble_target_axis, PlannedTargetAxis};
use super::{cell_kinds, BuildCell, FeatureCell, Observed, Report, TestCounts, ToolchainEntry};
use crate::catalog::FEATURES;
use crate::features::expect::{
    expected_kbuild_error, expected_outcome, expected_status, Outcome, ToolchainVerdict,
};
use crate::run::judge::StepResult;
use crate::run::plan::{Example, Kind, Mode, Step, KBUILD_FIXTURES};
use crate::toolchains::discovery::{Availability, Toolchain};
use std::collections::HashMap;

/// The report's column for what discovery found: the compiler's own account of itself, and
/// whether it can take part.
pub fn toolchain_entry(availability: &Availability) -> ToolchainEntry {
    // What any compiler that was found, working or not, says about itself.
    let found = |toolchain: &Toolchain, verdict| ToolchainEntry {
        id: toolchain.id.clone(),
        spec: toolchain.spec.clone(),
        source: Some(toolchain.source.kind()),
        pin: toolchain.pin.clone(),
        rustc: Some(toolchain.launch.rustc.to_string_lossy().into_owned()),
        verdict,
        ..ToolchainEntry::default()
    };
    match availability {
        Availability::Found { toolchain, version } => ToolchainEntry {
            release_text: Some(version.release_string()),
            release: Some(version.release),
            channel: Some(version.channel.name().to_string()),
            commit_date: version.commit_date.clone(),
            host: Some(version.host.clone()),
            ..found(toolchain, ToolchainVerdict::for_release(version.release))
        },
        Availability::Broken { toolchain, error } => {
            found(toolchain, ToolchainVerdict::Broken(error.clone()))
        }
        Availability::Missing { pin, install_hint } => ToolchainEntry {
            id: pin.id.clone(),
            spec: format!("pin:{}", pin.id),
            pin: Some(pin.id.clone()),
            release_text: Some(pin.release.clone()),
            commit_date: pin.commit_date.clone(),
            verdict: ToolchainVerdict::Missing(install_hint.clone()),
            ..ToolchainEntry::default()
        },
    }
}

/// The report of a run, in the columns given.
pub fn assemble(
    columns: &[ToolchainEntry],
    steps: &[Step],
    results: &[StepResult],
    examples: &[Example],
    strict: bool,
    shard: Option<String>,
    planned: &PlannedTargetAxis<'_>,
) -> Report {
    let probes = probe_results(steps, results);
    let mut features = Vec::new();
    for (feature_index, feature) in FEATURES.iter().enumerate() {
        let cells = columns.iter().enumerate().map(|(index, column)| {
            let expected = column
                .ok_release()
                .map(|release| expected_status(feature, release));
            let observed = match probes.get(&index).map(|result| (&result.probe, result)) {
                None => Observed::NotProbed,
                Some((Some(Ok(statuses)), _)) => Observed::Status(statuses[feature_index]),
                Some((Some(Err(error)), _)) => Observed::ProbeFailed(error.clone()),
                Some((None, result)) => {
                    let error = result.first_error.clone();
                    Observed::ProbeFailed(error.unwrap_or_else(|| "the probe did not run".into()))
                }
            };
            FeatureCell { observed, expected }
        });
        features.push(cells.collect());
    }

    // Each step's result by its cell, so that assembling takes time linear in the steps.
    let mut by_cell: HashMap<(usize, Kind, Mode, &str), &StepResult> = HashMap::new();
    for (step, result) in steps.iter().zip(results) {
        if let Some(mode) = step.mode {
            let key = (step.toolchain, step.kind, mode, step.target.as_str());
            by_cell.entry(key).or_insert(result);
        }
    }
    let (mut builds, mut kbuild) = (Vec::new(), Vec::new());
    let targets: Vec<String> = std::iter::once("kernel".to_string())
        .chain(examples.iter().map(|example| example.name.clone()))
        .collect();
    for (index, column) in columns.iter().enumerate() {
        if matches!(column.verdict, ToolchainVerdict::Missing(_)) {
            continue;
        }
        let expected = expected_outcome(&column.verdict);
        let skipped = StepResult::skipped(column.verdict.not_run());
        for target in &targets {
            for &kind in cell_kinds(target) {
                for mode in Mode::ALL {
                    let found = by_cell.get(&(index, kind, mode, target.as_str()));
                    let result = found.copied().unwrap_or(&skipped);
                    builds.push(BuildCell {
                        toolchain: index,
                        target: target.clone(),
                        mode,
                        kind,
                        outcome: result.outcome,
                        expected,
                        first_error: result.first_error.clone(),
                        seconds: result.seconds,
                        cached: result.cached,
                        tests: result.tests.map(|(passed, failed, ignored)| TestCounts {
                            passed,
                            failed,
                            ignored,
                        }),
                    });
                }
            }
        }
        // The plan compiles the fixtures as kernel-mode steps.
        for fixture in KBUILD_FIXTURES {
            let found = by_cell.get(&(index, Kind::Kbuild, Mode::Kernel, fixture));
            let result = found.copied().unwrap_or(&skipped);
            kbuild.push(KbuildCell {
                toolchain: index,
                fixture: fixture.into(),
                expected: column
                    .ok_release()
                    .and_then(|release| expected_kbuild_error(fixture, release))
                    .map(String::from),
                observed: result.error_codes.clone(),
                first_error: result.first_error.clone(),
                seconds: result.seconds,
                cached: result.cached,
            });
        }
    }
    compare_module_logs(&mut builds, &by_cell);
    Report {
        toolchains: columns.to_vec(),
        features,
        builds,
        strict,
        kbuild,
        shard,
        targets: assemble_target_axis(columns, steps, results, planned),
        // Assembled as the run ends.
        date: Some(crate::util::date::utc_now()),
    }
}

/// Fails both run cells of an example whose module log differs between kernel mode and
/// stable mode: the two forms of a feature must behave the same, down to what they log.
fn compare_module_logs(
    builds: &mut [BuildCell],
    by_cell: &HashMap<(usize, Kind, Mode, &str), &StepResult>,
) {
    let log = |toolchain: usize, target: &str, mode: Mode| {
        by_cell
            .get(&(toolchain, Kind::Run, mode, target))
            .and_then(|result| result.log.as_deref())
    };
    for build in builds.iter_mut() {
        if build.kind != Kind::Run || build.outcome != Outcome::Pass {
            continue;
        }
        let (Some(kernel), Some(stable)) = (
            log(build.toolchain, &build.target, Mode::Kernel),
            log(build.toolchain, &build.target, Mode::Stable),
        ) else {
            continue;
        };
        if let Some(difference) = first_difference(kernel, stable) {
            build.outcome = Outcome::Fail;
            build.first_error = Some(difference);
        }
    }
}

/// The first line where two module logs differ, described for the failure list.
pub fn first_difference(kernel: &str, stable: &str) -> Option<String> {
    fn lines(log: &str) -> impl Iterator<Item = Option<&str>> {
        log.lines().map(Some).chain(std::iter::repeat(None))
    }
    if kernel == stable {
        return None;
    }
    // Logs that differ only in their line ends differ at the line after their last.
    let (number, (left, right)) = lines(kernel)
        .zip(lines(stable))
        .enumerate()
        .find(|(_, (left, right))| left != right || left.is_none())?;
    Some(format!(
        "the module log differs between the modes at line {}: kernel mode {:?}, stable mode {:?}",
        number + 1,
        left.unwrap_or("(end)"),
        right.unwrap_or("(end)")
    ))
}

/// Each toolchain's probe result, by toolchain index.
pub(crate) fn probe_results<'a>(
    steps: &[Step],
    results: &'a [StepResult],
) -> HashMap<usize, &'a StepResult> {
    steps
        .iter()
        .zip(results)
        .filter(|(step, _)| step.kind == Kind::Probe)
        .map(|(step, result)| (step.toolchain, result))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_logs_are_compared_line_by_line() {
        assert_eq!(first_difference("a\nb\n", "a\nb\n"), None);
        assert_eq!(
            first_difference("a\nb\n", "a\nc\n").unwrap(),
            "the module log differs between the modes at line 2: kernel mode \"b\", stable mode \"c\""
        );
        assert!(first_difference("a\n", "a\nextra\n")
            .unwrap()
            .contains("kernel mode \"(end)\", stable mode \"extra\""));
    }
}
