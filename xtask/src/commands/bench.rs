// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask bench`: how long a cold and a warm run of the matrix (with `--usage`, of the
//! usage run) take through [`driver::drive`], next to the very same processes, from the same
//! plan, run by `make -j <cores>` with no orchestration at all.

use crate::features::expect::Outcome;
use crate::run::driver::{self, Settings, Work};
use crate::run::judge::StepResult;
use crate::run::plan::{Kind, Layout, Selection, Step};
use crate::targets::parse_targets;
use crate::toolchains::discovery::Availability;
use crate::util::output::Verbosity;
use crate::util::process::{shell_quote, DEFAULT_TIMEOUT};
use crate::{commands::flags, project_root, Verdict};
use anyhow::bail;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::time::Instant;
use xshell::{cmd, Shell};

/// The target: the cold run within this factor of the plain parallel run.
const TARGET_RATIO: f64 = 1.2;

/// Of one measurement's runs (wall-clock seconds), the fastest, the middle (the mean of the
/// middle two for an even count) and the slowest; not a number for no runs.
fn min_median_max(samples: &[f64]) -> [f64; 3] {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let Some((&min, &max)) = sorted.first().zip(sorted.last()) else {
        return [f64::NAN; 3];
    };
    let middle = sorted.len() / 2;
    let below = (sorted.len() - 1) / 2;
    [min, (sorted[below] + sorted[middle]) / 2.0, max]
}

/// The plain baseline as a Makefile: a phony target per step, after its dependencies and the
/// one `mkdir -p`, whose recipe is its processes joined by `&&`. A probe's, a usage compile's,
/// a Kbuild fixture's and a target test program's status means nothing by itself (the run
/// reads their output, or a failure is predicted): `|| true` follows them. Variables some
/// processes run without are unexported for all (`RUSTC_BOOTSTRAP`, which lines set again).
fn makefile(steps: &[Step]) -> String {
    let mut text = String::from(
        "# The plain baseline of `cargo xtask bench`: the planned processes, run by\n\
         # `make -j N`, with no scheduler, cache or report.\n",
    );
    let processes = steps.iter().flat_map(|step| &step.processes);
    let unset: BTreeSet<&String> = processes.flat_map(|process| &process.env_remove).collect();
    let directories: Vec<String> = steps
        .iter()
        .flat_map(|step| &step.directories)
        .map(|directory| shell_quote(&directory.to_string_lossy()))
        .collect::<BTreeSet<String>>()
        .into_iter()
        .collect();
    let targets: String = (0..steps.len()).map(|index| format!(" s{index}")).collect();
    let _ = writeln!(text, ".PHONY: all directories{targets}\nall:{targets}");
    for name in unset {
        let _ = writeln!(text, "unexport {name}");
    }
    let _ = writeln!(text, "directories:\n\tmkdir -p {}", directories.join(" "));
    for (index, step) in steps.iter().enumerate() {
        let deps: String = step.deps.iter().map(|dep| format!(" s{dep}")).collect();
        let lines: Vec<String> = step.processes.iter().map(ToString::to_string).collect();
        let ignored = matches!(
            step.kind,
            Kind::Probe | Kind::Usage | Kind::Kbuild | Kind::Emulate
        );
        let recipe = lines.join(" && ") + if ignored { " || true" } else { "" };
        let _ = writeln!(
            text,
            "s{index}: directories{deps}\n\t{}",
            recipe.replace('$', "$$")
        );
    }
    text
}

/// Checks one timed run: every planned step, none (`warm`: every one that ran) from the cache.
/// Returns how many were skipped after a failure.
fn check_run(
    results: &[StepResult],
    planned: usize,
    warm: bool,
    what: &str,
) -> anyhow::Result<usize> {
    if results.len() != planned {
        bail!(
            "the {what} run had {} steps where the bench planned {planned}",
            results.len()
        );
    }
    let skipped = results
        .iter()
        .filter(|result| result.outcome == Outcome::Skipped)
        .count();
    let cached = results.iter().filter(|result| result.cached).count();
    if cached != if warm { planned - skipped } else { 0 } {
        bail!("the {what} run took {cached} of {planned} results from the cache: not a {what} run");
    }
    Ok(skipped)
}

/// The one-minute load average, to show what else the machine was doing.
fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace().next().unwrap_or("?").to_string()
}

fn cpu_model() -> String {
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let line = text.lines().find(|line| line.starts_with("model name"));
    let model = line.and_then(|line| line.split_once(':'));
    model.map_or_else(|| "unknown".into(), |(_, model)| model.trim().to_string())
}

impl flags::Bench {
    /// Runs `cargo xtask bench`, printing a Markdown table of wall-clock seconds: the cold and
    /// the plain run each after the outputs are removed, the warm run after one untimed run
    /// refreshes the cache. Cold and plain runs alternate, so that a change in load hits both.
    pub fn run(&self, sh: &Shell) -> anyhow::Result<Verdict> {
        crate::util::interrupt::run_interruptible(|| self.measure(sh))
    }

    fn measure(&self, sh: &Shell) -> anyhow::Result<Verdict> {
        let runs = self.runs.unwrap_or(3);
        if runs == 0 {
            bail!("--runs must be at least 1");
        }
        if self.usage && !self.target.is_empty() {
            bail!("--target is the matrix's: the usage run builds for the host alone");
        }
        let work = match self.usage {
            true => Work::Usage,
            false => Work::Matrix,
        };
        let what = work.word();
        let cores = driver::jobs("bench", None)?;
        let layout = Layout::new(&project_root());
        let selection = Selection {
            toolchains: self.toolchain.clone(),
            targets: (!self.target.is_empty())
                .then(|| parse_targets(&self.target))
                .transpose()?,
            ..Selection::default()
        };
        let (planned, _) = driver::plan(sh, &layout, &selection, work, DEFAULT_TIMEOUT)?;
        let steps = planned.steps.len();
        let processes: usize = planned.steps.iter().map(|step| step.processes.len()).sum();
        let directory = layout.kshim.join("bench");
        let makefile_path = directory.join(format!("{what}.mk"));
        sh.create_dir(&directory)?;
        sh.write_file(&makefile_path, makefile(&planned.steps))?;
        eprintln!(
            "bench: plain run {}: {steps} steps, {processes} processes",
            makefile_path.display()
        );
        let toolchains: Vec<String> = planned
            .availabilities
            .iter()
            .filter_map(|availability| match availability {
                Availability::Found { toolchain, version } => {
                    Some(format!("{} = {}", toolchain.id, version.release_string()))
                }
                _ => None,
            })
            .collect();

        let [mut cold, mut plain, mut warm, mut planning] = <[Vec<f64>; 4]>::default();
        let mut loads = Vec::new();
        let mut skipped = 0;
        let settings = |use_cache| Settings {
            jobs: cores,
            timeout: DEFAULT_TIMEOUT,
            use_cache,
            progress: Verbosity::Quiet,
        };
        // One timed run, after removing the outputs first for a cold one.
        let mut timed = |label: &str, use_cache: bool, samples: &mut Vec<f64>| {
            let load = load_average();
            drop(driver::lock(&layout, "bench", !use_cache)?);
            let settings = settings(use_cache);
            let start = Instant::now();
            let driven = driver::drive(&layout, &selection, work, settings)?;
            let seconds = start.elapsed().as_secs_f64();
            skipped += check_run(&driven.results, steps, use_cache, label)?;
            eprintln!("bench: {label} {what} run: {seconds:.2} s (load {load})");
            samples.push(seconds);
            anyhow::Ok((load, driven.planning))
        };
        for run in 1..=runs {
            let (load, seconds) = timed("cold", false, &mut cold)?;
            planning.push(seconds);
            loads.push(load);

            let load = load_average();
            let (seconds, output) = {
                let _lock = driver::lock(&layout, "bench", true)?;
                let (start, jobs) = (Instant::now(), cores.to_string());
                let output = cmd!(sh, "make -r -s -k -j {jobs} -f {makefile_path}")
                    .env_remove("MAKEFLAGS")
                    .env_remove("MAKELEVEL")
                    .quiet()
                    .ignore_status()
                    .output()?;
                (start.elapsed().as_secs_f64(), output)
            };
            if let Some(signal) = crate::util::interrupt::interrupted() {
                return Err(crate::util::interrupt::Interrupted { signal }.into());
            }
            if !output.status.success() {
                let stderr = String::from_utf8_lossy(&output.stderr);
                let lines: Vec<&str> = stderr.lines().collect();
                bail!(
                    "the plain run {} failed ({}), so it did not do the {what} run's work:\n{}",
                    makefile_path.display(),
                    output.status,
                    lines[lines.len().saturating_sub(5)..].join("\n")
                );
            }
            eprintln!("bench: plain run, run {run} of {runs}: {seconds:.2} s (load {load})");
            plain.push(seconds);
            loads.push(load);
        }
        // The plain run rewrote every artifact: one untimed run puts their stamps in the cache.
        eprintln!("bench: refreshing the cache for the warm runs");
        driver::drive(&layout, &selection, work, settings(true))?;
        for _ in 0..runs {
            timed("warm", true, &mut warm)?;
        }

        // The flags as given, so that the table says how to take it again.
        let flags: String = std::env::args()
            .skip_while(|arg| arg != "bench")
            .skip(1)
            .map(|arg| format!(" {}", shell_quote(&arg)))
            .collect();
        let mut table = format!(
            "Measured by `cargo xtask bench{flags}` on {cores} cores ({}); {steps} {what} steps, \
             {processes} processes; toolchains: {}.\n\n\
             | Measurement | Runs | Min (s) | Median (s) | Max (s) |\n|---|---:|---:|---:|---:|\n",
            cpu_model(),
            toolchains.join(", ")
        );
        let mk = format!("`make -j {cores} -f target/kshim/bench/{what}.mk`");
        for (name, samples) in [
            (
                format!("Cold {what} run (no cache, outputs removed)"),
                &cold,
            ),
            (format!("Plain parallel run, {mk}"), &plain),
            (format!("Warm {what} run (every step cached)"), &warm),
        ] {
            let [min, median, max] = min_median_max(samples);
            let runs = samples.len();
            let _ = writeln!(
                table,
                "| {name} | {runs} | {min:.3} | {median:.3} | {max:.3} |"
            );
        }
        let ratio = min_median_max(&cold)[1] / min_median_max(&plain)[1];
        let verdict = if ratio <= TARGET_RATIO {
            "met".to_string()
        } else {
            format!("missed by {:.0} %", (ratio / TARGET_RATIO - 1.0) * 100.0)
        };
        let by_run: Vec<String> = cold
            .iter()
            .zip(&plain)
            .map(|(cold, plain)| format!("{:.3}", cold / plain))
            .collect();
        let _ = write!(
            table,
            "\n- Cold / plain (medians): **{ratio:.3}** (target at most {TARGET_RATIO}: \
             {verdict}); run by run: {}.\n\
             - Of the cold run, discovery and planning (`rustc -vV` of every compiler and the \
             plan): median {:.3} s.\n\
             - One-minute load average before each cold and plain run: {}.\n",
            by_run.join(", "),
            min_median_max(&planning)[1],
            loads.join(", ")
        );
        print!("{table}");
        let table_path = directory.join("results.md");
        sh.write_file(&table_path, &table)?;
        eprintln!("bench: the table is also in {}", table_path.display());
        if skipped > 0 {
            eprintln!(
                "bench: warning: the {what} runs skipped {skipped} steps after failures, which \
                 the plain run ran"
            );
        }
        let met = ratio <= TARGET_RATIO && skipped == 0;
        Ok(Verdict::failure_if(!met))
    }
}

#[cfg(test)]
mod tests;
