// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask usage`: where each feature is used, as each compiler says; this module only
//! orchestrates (the plan's usage steps, cache keys, scheduler, the usage report) on the
//! matrix's lock, outputs and cache.

use crate::cache::{remove_stale_temporaries, run_keys, Cache};
use crate::files::write_atomically;
use crate::interrupt::{self, Interrupted};
use crate::judge::StepResult;
use crate::output::{self, Format};
use crate::plain_run::PlainRun;
use crate::plan::{plan_run, plan_usage, Layout, PlannedRun, PlannedUsage, Selection, Step};
use crate::process;
use crate::report::assemble::toolchain_entry;
use crate::report::ToolchainEntry;
use crate::run_lock::RunLock;
use crate::runner::{self, Limits};
use crate::schedule::{self, Progress};
use crate::usage_report::{self, UsageReport};
use crate::{flags, json, probe, project_root, Verdict};
use anyhow::{bail, Context};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use xshell::Shell;

/// Where a usage run writes its JSON report.
pub fn report_path(layout: &Layout) -> std::path::PathBuf {
    layout.kshim.join("usage-report.json")
}

/// A count of finished steps on one updating line on a terminal, else a line per step that
/// ran, as the matrix's progress.
struct Counter<'a> {
    total: usize,
    done: AtomicUsize,
    terminal: bool,
    columns: usize,
    toolchains: &'a [ToolchainEntry],
    features: Vec<Option<&'static str>>,
}

impl Progress for Counter<'_> {
    fn started(&self, _index: usize, _step: &Step) {}

    fn finished(&self, index: usize, step: &Step, result: &StepResult, done: usize) {
        self.done.store(done, Ordering::Relaxed);
        // Off a terminal, as the matrix does: one line per step that ran, none for the cached.
        let verbosity = crate::output::verbosity();
        if verbosity < 0 || (!self.terminal && result.cached && verbosity < 1) {
            return;
        }
        let what = match self.features[index] {
            Some(feature) => format!("{} without {feature}", step.target),
            None => step.label(),
        };
        let line = format!(
            "usage: {done} of {}: {}: {what}",
            self.total, self.toolchains[step.toolchain].id
        );
        if !self.terminal {
            let line = format!(
                "{line}: {} in {:.1} s",
                result.outcome.word(),
                result.seconds
            );
            eprintln!("{}", crate::output::escape(&line));
            return;
        }
        let shown: String = line.chars().take(self.columns.saturating_sub(1)).collect();
        let mut stderr = std::io::stderr().lock();
        let _ = write!(stderr, "\r\x1b[K{shown}");
        let _ = stderr.flush();
    }
}

impl flags::Usage {
    /// Runs `cargo xtask usage`.
    pub fn run(&self, sh: &Shell) -> anyhow::Result<Verdict> {
        let format = Format::parse(self.format.as_deref().unwrap_or("human"))?;
        let jobs = match self.jobs {
            Some(0) => bail!("-j/--jobs must be at least 1"),
            Some(jobs) => jobs,
            None => std::thread::available_parallelism().map_or(1, usize::from),
        };
        let timeout = match self.timeout {
            Some(0) => bail!("--timeout must be at least 1 second"),
            Some(seconds) => Duration::from_secs(seconds),
            None => process::DEFAULT_TIMEOUT,
        };
        let layout = Layout::new(&project_root());
        let selection = Selection {
            // Where the code needs each feature does not depend on the target.
            platforms: Some(Vec::new()),
            toolchains: crate::pins::with_range(
                &self.toolchain,
                self.pins.as_deref(),
                self.version_range.as_deref(),
            )?,
            pins: self.pins.clone(),
            shard: None,
        };
        if let Some(path) = &self.plain_script {
            let planned = plan_run(sh, &layout, &selection, timeout)?;
            let usage = plan_usage(&layout, &planned.planned, &planned.examples)?;
            let plain = PlainRun::from_steps(&usage.steps);
            write_atomically(&layout.probe_source(), probe::probe_source().as_bytes())?;
            write_atomically(path, plain.script(jobs).as_bytes())?;
            eprintln!(
                "usage: {} steps as {} jobs in {} waves written to {} (run it with `sh`)",
                usage.steps.len(),
                plain.jobs(),
                plain.waves.len(),
                path.display()
            );
            return Ok(Verdict::Success);
        }
        let report = interrupt::run_interruptible(|| {
            run_usage(&layout, &selection, jobs, timeout, !self.no_cache)
        })?;
        format.print(
            || crate::date::stamp(report.to_json()),
            || report.markdown(),
            |_colour| report.human(),
        );
        Ok(report.verdict())
    }
}

/// Runs every usage compile (and the probes and shim builds they need) on the selected
/// toolchains, holding the matrix's lock, and returns the report, which is also written to
/// [`report_path`].
pub fn run_usage(
    layout: &Layout,
    selection: &Selection,
    jobs: usize,
    timeout: Duration,
    use_cache: bool,
) -> anyhow::Result<UsageReport> {
    let start = Instant::now();
    let lock = RunLock::acquire(&layout.lock(), &mut |message| eprintln!("usage: {message}"))?;
    for directory in [layout.cache(), layout.kshim.join("matrix")] {
        std::fs::create_dir_all(&directory)
            .with_context(|| format!("cannot create {}", directory.display()))?;
        remove_stale_temporaries(&directory);
    }
    let sh = Shell::new()?;
    sh.change_dir(&layout.root);
    let PlannedRun {
        availabilities,
        planned,
        examples,
        ..
    } = plan_run(&sh, layout, selection, timeout)?;
    let columns: Vec<ToolchainEntry> = availabilities.iter().map(toolchain_entry).collect();
    let PlannedUsage { steps, compiles } = plan_usage(layout, &planned, &examples)?;
    let probe_source = probe::probe_source();
    let probe_path = layout.probe_source();
    if std::fs::read_to_string(&probe_path).ok().as_deref() != Some(probe_source.as_str()) {
        write_atomically(&probe_path, probe_source.as_bytes())?;
    }
    let keys = run_keys(&steps, &planned, &availabilities, &layout.root)?;
    let cache = Cache::new(layout.cache(), use_cache);
    let limits = Limits {
        timeout,
        lock: Some(lock.descriptor()),
    };
    let mut features = vec![None; steps.len()];
    for compile in &compiles {
        features[compile.step] = Some(compile.feature);
    }
    let counter = Counter {
        total: steps.len(),
        done: AtomicUsize::new(0),
        terminal: output::updating_terminal(),
        columns: output::terminal_columns(),
        toolchains: &columns,
        features,
    };
    let results = schedule::execute(&steps, jobs, &counter, &|index| {
        runner::run_step(&steps[index], keys[index], &cache, limits)
    });
    if counter.terminal {
        eprint!("\r\x1b[K");
    }
    if let Some(signal) = interrupt::interrupted() {
        let finished = results.iter().filter(|result| !result.interrupted).count();
        eprintln!(
            "usage: {} after {finished} of {} steps; the finished ones are cached, no report \
             was written",
            Interrupted { signal },
            steps.len()
        );
        return Err(Interrupted { signal }.into());
    }
    let reused = results.iter().filter(|result| result.cached).count();
    eprintln!(
        "usage: {} steps ({} usage compiles) on {} toolchain(s) in {:.1} s ({reused} from the \
         cache, -j {jobs})",
        steps.len(),
        compiles.len(),
        planned.iter().filter(|toolchain| toolchain.builds).count(),
        start.elapsed().as_secs_f64(),
    );
    let report = usage_report::assemble(&layout.root, &columns, &steps, &results, &compiles);
    write_atomically(
        &report_path(layout),
        json::to_pretty(&crate::date::stamp(report.to_json())).as_bytes(),
    )
    .context("writing the usage report")?;
    Ok(report)
}
