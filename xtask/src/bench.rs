// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask bench`: how long the matrix takes cold and warm, next to the very same rustc
//! and test commands, taken from the matrix's own plan ([`plan_run`]), run by `xargs -P <cores>`
//! with no orchestration at all.

use crate::expect::{Outcome, ToolchainVerdict};
use crate::files::write_atomically;
use crate::plain_run::PlainRun;
use crate::plan::{plan_run, Kind, Layout, Selection};
use crate::process::{shell_quote, DEFAULT_TIMEOUT};
use crate::report::Report;
use crate::run_lock::RunLock;
use crate::targets::parse_platforms;
use crate::{flags, probe, project_root, Verdict};
use anyhow::{bail, Context};
use std::fmt::Write as _;
use std::process::Output;
use std::time::Instant;
use xshell::{cmd, Shell};

/// How many times each measurement runs unless `--runs` says otherwise.
pub(crate) const DEFAULT_RUNS: usize = 3;

/// The target: the cold matrix within this factor of the plain parallel run.
pub(crate) const TARGET_RATIO: f64 = 1.2;

/// Checks a matrix report's build, run and test cells against the plan: `planned` of them,
/// and either every one (`warm`) or none taken from the cache.
///
/// The report does not say whether a feature probe came from the cache, so only these cells
/// decide; the probe shares their cache and `--no-cache` turns it off for every step alike.
pub(crate) fn check_cache_use(
    report: &Report,
    planned: usize,
    warm: bool,
    what: &str,
) -> anyhow::Result<()> {
    // Only a toolchain that builds has steps behind its cells; the others' are placeholders,
    // as are the cross cells predicted to be skipped (no sources, an unknown target, no
    // emulator). Those predicted to fail did run, as did the Kbuild cells of a toolchain that
    // builds.
    let cells: Vec<bool> = report
        .builds
        .iter()
        .filter(|cell| report.toolchains[cell.toolchain].verdict == ToolchainVerdict::Ok)
        .map(|cell| cell.cached)
        .chain(
            report
                .platforms
                .cross
                .iter()
                .filter(|cell| cell.expected != Outcome::Skipped)
                .map(|cell| cell.cached),
        )
        .chain(
            report
                .kbuild
                .iter()
                .filter(|cell| report.toolchains[cell.toolchain].verdict == ToolchainVerdict::Ok)
                .map(|cell| cell.cached),
        )
        .collect();
    if cells.len() != planned {
        bail!(
            "the {what} matrix reported {} build, run and test cells where the bench planned \
             {planned}: it did not do the plain run's work",
            cells.len()
        );
    }
    let cached = cells.iter().filter(|&&cached| cached).count();
    if cached != if warm { planned } else { 0 } {
        bail!(
            "the {what} matrix took {cached} of {planned} results from the cache: not a {what} run"
        );
    }
    Ok(())
}

/// The wall-clock seconds of one measurement's runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Samples(pub Vec<f64>);

impl Samples {
    /// The fastest, the middle (the mean of the middle two for an even count) and the slowest
    /// run; not a number for no runs.
    pub(crate) fn min_median_max(&self) -> [f64; 3] {
        let mut sorted = self.0.clone();
        sorted.sort_by(f64::total_cmp);
        let Some((&min, &max)) = sorted.first().zip(sorted.last()) else {
            return [f64::NAN; 3];
        };
        let middle = sorted.len() / 2;
        let below = (sorted.len() - 1) / 2;
        [min, (sorted[below] + sorted[middle]) / 2.0, max]
    }

    /// The middle run.
    pub(crate) fn median(&self) -> f64 {
        self.min_median_max()[1]
    }
}

/// The one-minute load average, to show what else the machine was doing.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().map(String::from))
        .unwrap_or_else(|| "?".into())
}

/// The CPU model, from `/proc/cpuinfo`.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split_once(':'))
                .map(|(_, model)| model.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// Runs `work` holding the matrix's run lock, so no `cargo xtask matrix` shares the outputs.
fn with_run_lock<T>(
    layout: &Layout,
    work: impl FnOnce() -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let _lock = RunLock::acquire(&layout.lock(), &mut |message| eprintln!("bench: {message}"))?;
    work()
}

/// Times one process to its end; its output is kept for the checks.
fn timed(command: xshell::Cmd<'_>) -> anyhow::Result<(f64, Output)> {
    let start = Instant::now();
    let output = command.quiet().ignore_status().output()?;
    Ok((start.elapsed().as_secs_f64(), output))
}

/// The last lines of a process's stderr, for an error message.
fn stderr_tail(output: &Output) -> String {
    let text = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(5)..].join("\n")
}

/// Everything one bench run measured.
#[derive(Default)]
struct Figures {
    cold: Samples,
    plain: Samples,
    warm: Samples,
    startup: Samples,
    /// The bench's own [`plan_run`]: the matrix's discovery and planning.
    planning: Samples,
    steps: usize,
    loads: Vec<String>,
    /// `id = release (verdict)` of each toolchain found, from the last report.
    toolchains: Vec<String>,
}

impl flags::Bench {
    /// Runs `cargo xtask bench`, printing a Markdown table of wall-clock seconds.
    ///
    /// Each figure is one whole process, timed with [`Instant`] around it: the cold matrix
    /// (`xtask matrix -j <cores> --no-cache` after `target/kshim/matrix/` is removed; no cell of
    /// its report may come from the cache), the plain run (`sh target/kshim/bench/plain.sh`, a
    /// [`PlainRun`], after the same removal and with the probe source written as the matrix
    /// writes it), the warm matrix (`xtask matrix -j <cores>` after one untimed run refreshes
    /// the cache; every cell must come from it) and the xtask's start-up (`xtask --help`).
    /// Cold and plain runs alternate, so that a change in the machine's load falls on both.
    pub fn run(&self, sh: &Shell) -> anyhow::Result<Verdict> {
        let runs = match self.runs {
            Some(0) => bail!("--runs must be at least 1"),
            Some(runs) => runs,
            None => DEFAULT_RUNS,
        };
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let xtask = std::env::current_exe().context("finding the xtask binary")?;
        let layout = Layout::new(&project_root());
        let outputs = layout.kshim.join("matrix");
        let bench_directory = layout.kshim.join("bench");
        let selection = Selection {
            toolchains: self.toolchain.clone(),
            platforms: (!self.target.is_empty())
                .then(|| parse_platforms(&self.target))
                .transpose()
                .map_err(anyhow::Error::msg)?,
            ..Selection::default()
        };
        let toolchain_flags: Vec<String> = self
            .toolchain
            .iter()
            .flat_map(|spec| ["--toolchain".to_string(), spec.clone()])
            .chain(
                self.target
                    .iter()
                    .flat_map(|triple| ["--target".to_string(), triple.clone()]),
            )
            .collect();
        let selection_args = &toolchain_flags;
        let jobs = cores.to_string();

        let steps = plan_run(sh, &layout, &selection, DEFAULT_TIMEOUT)?.steps;
        // The probes' results are no cells of their own.
        let planned_cells = steps
            .iter()
            .filter(|step| !matches!(step.kind, Kind::Probe | Kind::Targets))
            .count();
        let plain = PlainRun::from_steps(&steps);
        let script_path = bench_directory.join("plain.sh");
        sh.create_dir(&bench_directory)?;
        sh.write_file(&script_path, plain.script(cores))?;
        eprintln!(
            "bench: plain run {}: {} steps as {} jobs ({} processes) in {} waves",
            script_path.display(),
            steps.len(),
            plain.jobs(),
            plain.processes,
            plain.waves.len()
        );

        let mut figures = Figures {
            steps: steps.len(),
            ..Figures::default()
        };
        let mut matrix_failed = false;
        // One matrix run, timed, and the report it wrote; a cold one starts with no outputs.
        let matrix = |what: &str, cold: bool| -> anyhow::Result<(f64, Report)> {
            let mut stale = vec![layout.report()];
            if cold {
                stale.push(outputs.clone());
            }
            // The matrix's own run lock guards the outputs while the bench, not a matrix,
            // touches them; the timed matrix takes that lock itself.
            with_run_lock(&layout, || {
                stale.iter().try_for_each(|path| Ok(sh.remove_path(path)?))
            })?;
            let no_cache = cold.then_some("--no-cache");
            let (seconds, output) = timed(cmd!(
                sh,
                "{xtask} matrix -j {jobs} {no_cache...} {selection_args...}"
            ))?;
            if !matches!(output.status.code(), Some(0 | 1)) {
                bail!(
                    "the {what} matrix stopped ({}):\n{}",
                    output.status,
                    stderr_tail(&output)
                );
            }
            let report = Report::read(&layout.report())
                .with_context(|| format!("after the {what} matrix"))?;
            Ok((seconds, report))
        };
        for run in 1..=runs {
            let start = Instant::now();
            plan_run(sh, &layout, &selection, DEFAULT_TIMEOUT)?;
            figures.planning.0.push(start.elapsed().as_secs_f64());

            let load = load_average();
            let (seconds, report) = matrix("cold", true)?;
            check_cache_use(&report, planned_cells, false, "cold")?;
            matrix_failed |= report.verdict() == Verdict::Failure;
            eprintln!("bench: cold matrix, run {run} of {runs}: {seconds:.2} s (load {load})");
            figures.cold.0.push(seconds);
            figures.loads.push(load);

            let load = load_average();
            let (seconds, output) = with_run_lock(&layout, || {
                sh.remove_path(&outputs)?;
                write_atomically(&layout.probe_source(), probe::probe_source().as_bytes())?;
                timed(cmd!(sh, "sh {script_path}"))
            })?;
            if !output.status.success() {
                bail!(
                    "the plain run {} failed ({}), so it did not do the matrix's work:\n{}",
                    script_path.display(),
                    output.status,
                    stderr_tail(&output)
                );
            }
            eprintln!("bench: plain run, run {run} of {runs}: {seconds:.2} s (load {load})");
            figures.plain.0.push(seconds);
            figures.loads.push(load);
        }

        // One untimed run puts the current outputs' stamps into the cache; the plain run
        // rewrote every artifact since the last cold run.
        eprintln!("bench: refreshing the cache for the warm runs");
        matrix("refresh", false)?;
        for run in 1..=runs {
            let load = load_average();
            let (seconds, report) = matrix("warm", false)?;
            check_cache_use(&report, planned_cells, true, "warm")?;
            eprintln!("bench: warm matrix, run {run} of {runs}: {seconds:.3} s (load {load})");
            figures.warm.0.push(seconds);
            figures.toolchains = report
                .toolchains
                .iter()
                .filter(|toolchain| toolchain.rustc.is_some())
                .map(|toolchain| {
                    let verdict = toolchain.verdict.word();
                    match &toolchain.release_text {
                        Some(release) if *release != toolchain.id => {
                            format!("{} = {release} ({verdict})", toolchain.id)
                        }
                        _ => format!("{} ({verdict})", toolchain.id),
                    }
                })
                .collect();
        }
        for _ in 0..runs {
            let (seconds, output) = timed(cmd!(sh, "{xtask} --help"))?;
            if !output.status.success() {
                bail!("`xtask --help` failed: {}", stderr_tail(&output));
            }
            figures.startup.0.push(seconds);
        }
        eprintln!(
            "bench: xtask start-up (`--help`): median {:.3} s",
            figures.startup.median()
        );

        let table = markdown(&figures, &plain, cores, &self.toolchain);
        print!("{table}");
        let table_path = bench_directory.join("results.md");
        sh.write_file(&table_path, &table)?;
        eprintln!("bench: the table is also in {}", table_path.display());
        if matrix_failed {
            eprintln!(
                "bench: warning: the matrix reported failures, so it may have skipped steps the plain run did"
            );
        }
        let ratio = figures.cold.median() / figures.plain.median();
        Ok(if ratio <= TARGET_RATIO && !matrix_failed {
            Verdict::Success
        } else {
            Verdict::Failure
        })
    }
}

/// The results as Markdown, ready for BENCHMARKS.md.
fn markdown(figures: &Figures, plain: &PlainRun, cores: usize, selection: &[String]) -> String {
    let runs = figures.cold.0.len();
    let selection_flags: String = selection
        .iter()
        .map(|spec| format!(" --toolchain {}", shell_quote(spec)))
        .collect();
    let runs_flag = if runs == DEFAULT_RUNS {
        String::new()
    } else {
        format!(" --runs {runs}")
    };
    let mut text = format!(
        "Measured by `cargo xtask bench{runs_flag}{selection_flags}` on {cores} cores ({}); {} \
         matrix steps; plain run: {} jobs, {} processes, {} waves; toolchains: {}.\n\n",
        cpu_model(),
        figures.steps,
        plain.jobs(),
        plain.processes,
        plain.waves.len(),
        figures.toolchains.join(", ")
    );
    text.push_str("| Measurement | Command | Runs | Min (s) | Median (s) | Max (s) |\n");
    text.push_str("|---|---|---:|---:|---:|---:|\n");
    let rows: [(&str, String, &Samples); 4] = [
        (
            "Cold matrix",
            format!("`xtask matrix -j {cores} --no-cache{selection_flags}`"),
            &figures.cold,
        ),
        (
            "Plain parallel run",
            format!("`sh target/kshim/bench/plain.sh` (`xargs -P {cores}`)"),
            &figures.plain,
        ),
        (
            "Warm matrix",
            format!("`xtask matrix -j {cores}{selection_flags}`"),
            &figures.warm,
        ),
        ("xtask start-up", "`xtask --help`".into(), &figures.startup),
    ];
    for (name, command, samples) in rows {
        let [min, median, max] = samples.min_median_max();
        let runs = samples.0.len();
        let _ = writeln!(
            text,
            "| {name} | {command} | {runs} | {min:.3} | {median:.3} | {max:.3} |"
        );
    }
    let ratio = figures.cold.median() / figures.plain.median();
    let verdict = if ratio <= TARGET_RATIO {
        "met".to_string()
    } else {
        format!("missed by {:.0} %", (ratio / TARGET_RATIO - 1.0) * 100.0)
    };
    let by_run: Vec<String> = figures
        .cold
        .0
        .iter()
        .zip(&figures.plain.0)
        .map(|(cold, plain)| format!("{:.3}", cold / plain))
        .collect();
    let _ = writeln!(
        text,
        "\n- Cold matrix / plain parallel run (medians): **{ratio:.3}** (target at most \
         {TARGET_RATIO}: {verdict}); run by run: {}.",
        by_run.join(", ")
    );
    let _ = writeln!(
        text,
        "- Of the cold matrix, discovery and planning (`rustc -vV` of every compiler and the \
         plan; the bench's own `plan_run`, timed before each cold run): median {:.3} s.",
        figures.planning.median()
    );
    let _ = writeln!(
        text,
        "- Warm matrix minus start-up (medians): **{:.3} s**.",
        figures.warm.median() - figures.startup.median()
    );
    let _ = writeln!(
        text,
        "- One-minute load average before each cold and plain run: {}.",
        figures.loads.join(", ")
    );
    text
}

#[cfg(test)]
mod tests;
