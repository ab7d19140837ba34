// SPDX-License-Identifier: GPL-2.0
//! The run driver under every command that compiles (`audit --usage` hands its own steps to
//! [`execute`]): `-j` and `--timeout`, the lock, plan, cache keys, scheduler, Ctrl-C and
//! progress, handing back every step's result as data.

use crate::run::cache::{
    compiler_identity, keys_by_identity, remove_stale_temporaries, Cache, Key,
};
use crate::run::judge::StepResult;
use crate::run::plan::{
    plan_run, plan_shim, plan_usage, Kind, Layout, Mode, PlannedRun, Selection, Step, UsageCompile,
};
use crate::run::runner;
use crate::run::schedule::{self, Progress};
use crate::toolchains::debian::Provisioning;
use crate::toolchains::discovery::Availability;
use crate::util::files::write_atomically;
use crate::util::interrupt::{self, Interrupted};
use crate::util::output::{self, Output, Verbosity};
use crate::util::run_lock::RunLock;
use crate::{features::expect::Outcome, features::probe, util::process};
use anyhow::{bail, Context};
use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use xshell::Shell;

pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// `-j`: at least 1, one per core without the flag; more than four per core makes timeouts
/// fire for the machine's sake rather than the compiler's, so it is lowered, and `command` says so.
pub fn jobs(command: &str, flag: Option<usize>) -> anyhow::Result<usize> {
    let cores = cores();
    match flag {
        None => Ok(cores),
        Some(0) => bail!("-j/--jobs must be at least 1"),
        Some(jobs) if jobs > 4 * cores => {
            eprintln!(
                "{command}: -j {jobs} lowered to {}, four per core of the host",
                4 * cores
            );
            Ok(4 * cores)
        }
        Some(jobs) => Ok(jobs),
    }
}

/// `--timeout`: from one second to a day; without the flag, `default`.
pub fn timeout(flag: Option<u64>, default: Duration) -> anyhow::Result<Duration> {
    match flag {
        None => Ok(default),
        Some(0) => bail!("--timeout must be at least 1 second"),
        Some(seconds) if seconds > MAX_TIMEOUT.as_secs() => bail!(
            "--timeout {seconds} is more than a day ({} seconds): no single rustc, test or make \
             process should run that long",
            MAX_TIMEOUT.as_secs()
        ),
        Some(seconds) => Ok(Duration::from_secs(seconds)),
    }
}

/// Which steps a run takes: the whole matrix, the usage compiles, or `msrv`'s ([`plan_shim`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    Matrix,
    Usage,
    Shim,
}

impl Work {
    /// The command's name, which starts its lines on stderr.
    pub fn word(self) -> &'static str {
        match self {
            Work::Matrix => "matrix",
            Work::Usage => "usage",
            Work::Shim => "msrv",
        }
    }

    pub fn report(self, layout: &Layout) -> PathBuf {
        layout.kshim.join(format!("{}-report.json", self.word()))
    }
}

/// How a run treats its processes and says what it does.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub jobs: usize,
    /// Any one process is killed after this long.
    pub timeout: Duration,
    /// Whether cached results may be used (they are stored either way).
    pub use_cache: bool,
    /// The progress and the closing summary on stderr (a line for cached steps too with `-v`).
    pub progress: Verbosity,
}

impl Settings {
    /// From `command`'s `-j`, `--timeout`, `--no-cache` and `-q`/`-v` flags.
    pub fn new(
        command: &str,
        jobs: Option<usize>,
        timeout: Option<u64>,
        no_cache: bool,
        output: Output,
    ) -> anyhow::Result<Settings> {
        Ok(Settings {
            jobs: self::jobs(command, jobs)?,
            timeout: self::timeout(timeout, process::DEFAULT_TIMEOUT)?,
            use_cache: !no_cache,
            progress: output.verbosity,
        })
    }
}

pub struct Driven {
    /// The toolchains found and the plan, its `steps` being the steps this run took.
    pub planned: PlannedRun,
    pub compiles: Vec<UsageCompile>,
    pub results: Vec<StepResult>,
    /// Seconds spent discovering the toolchains and planning.
    pub planning: f64,
}

/// Takes the run lock of `layout` (saying on stderr, as `who`, whom it waits for), then readies
/// the outputs, removed first when `fresh` (a cold run).
pub fn lock(layout: &Layout, who: &str, fresh: bool) -> anyhow::Result<RunLock> {
    let lock = RunLock::acquire(&layout.lock(), &mut |message| eprintln!("{who}: {message}"))?;
    let outputs = layout.kshim.join("matrix");
    if fresh && outputs.exists() {
        std::fs::remove_dir_all(&outputs)
            .with_context(|| format!("cannot remove {}", outputs.display()))?;
    }
    for directory in [layout.cache(), outputs] {
        std::fs::create_dir_all(&directory)
            .with_context(|| format!("cannot create {}", directory.display()))?;
        remove_stale_temporaries(&directory);
    }
    remove_stale_temporaries(&layout.kshim);
    let source = probe::probe_source();
    let path = layout.probe_source();
    if std::fs::read_to_string(&path).ok().as_deref() != Some(source.as_str()) {
        write_atomically(&path, source.as_bytes())?;
    }
    Ok(lock)
}

/// Discovers the toolchains and plans the run: `planned.steps` are the steps `work` takes.
pub fn plan(
    sh: &Shell,
    layout: &Layout,
    selection: &Selection,
    work: Work,
    timeout: Duration,
) -> anyhow::Result<(PlannedRun, Vec<UsageCompile>)> {
    let selection = Selection {
        targets: match work {
            Work::Matrix => selection.targets.clone(),
            // The host alone: where code needs a feature, or whether the shim builds, does not
            // depend on the target.
            Work::Usage | Work::Shim => Some(Vec::new()),
        },
        ..selection.clone()
    };
    let mut planned = plan_run(sh, layout, &selection, timeout, Provisioning::Allowed)?;
    let compiles = match work {
        Work::Matrix => Vec::new(),
        Work::Shim => {
            let (toolchains, examples) = (&planned.planned, &planned.examples);
            planned.steps = plan_shim(layout, toolchains, examples, &Mode::ALL)?;
            Vec::new()
        }
        Work::Usage => {
            let (steps, compiles) = plan_usage(layout, &planned.planned, &planned.examples)?;
            planned.steps = steps;
            compiles
        }
    };
    Ok((planned, compiles))
}

/// Runs `work` on the selected toolchains under the run lock, and returns every step's result.
pub fn drive(
    layout: &Layout,
    selection: &Selection,
    work: Work,
    settings: Settings,
) -> anyhow::Result<Driven> {
    let start = Instant::now();
    let command = work.word();
    let lock = lock(layout, command, false)?;
    let sh = Shell::new()?;
    sh.change_dir(&layout.root);
    let (planned, compiles) = plan(&sh, layout, selection, work, settings.timeout)?;
    let steps = &planned.steps;
    if work == Work::Matrix {
        check_linker(steps)?;
    }
    let planning = start.elapsed().as_secs_f64();
    if let Some(signal) = interrupt::interrupted() {
        eprintln!(
            "{command}: {} while checking the toolchains; nothing was built",
            Interrupted { signal }
        );
        return Err(Interrupted { signal }.into());
    }
    let identities: Vec<Option<Key>> = planned
        .availabilities
        .iter()
        .map(|availability| match availability {
            Availability::Found { toolchain, version } => {
                Some(compiler_identity(&toolchain.launch, version))
            }
            _ => None,
        })
        .collect();
    let keys = keys_by_identity(steps, &|index| identities[index], &layout.root)?;
    let name = |step: &Step, what: String| {
        format!("{}: {what}", planned.availabilities[step.toolchain].id())
    };
    let mut names: Vec<String> = steps.iter().map(|step| name(step, step.label())).collect();
    for compile in &compiles {
        let what = format!("{} without {}", compile.target, compile.feature);
        names[compile.step] = name(&steps[compile.step], what);
    }
    let ran = Run {
        command,
        steps,
        keys: &keys,
        names,
        report: Some(work.report(layout)),
    };
    let results = execute(&lock, layout, &ran, settings, start)?;
    Ok(Driven {
        planned,
        compiles,
        results,
        planning,
    })
}

/// Planned steps as [`execute`] takes them.
pub struct Run<'a> {
    pub command: &'static str,
    pub steps: &'a [Step],
    pub keys: &'a [Key],
    /// Per step, `toolchain: what`, for the progress lines.
    pub names: Vec<String>,
    /// Where the command writes its report, named when an interrupt stops it from writing it.
    pub report: Option<PathBuf>,
}

/// Runs planned steps on `settings.jobs` workers while `lock` is held (taken by [`lock`] at
/// `start`), showing progress and a closing summary, and returns every step's result; if the
/// run is interrupted, it says which steps had completed and fails with [`Interrupted`].
pub fn execute(
    lock: &RunLock,
    layout: &Layout,
    run: &Run,
    settings: Settings,
    start: Instant,
) -> anyhow::Result<Vec<StepResult>> {
    let (command, steps) = (run.command, run.steps);
    let cache = Cache::new(layout.cache(), settings.use_cache);
    let display = Display {
        command,
        enabled: settings.progress > Verbosity::Quiet,
        cached_too: settings.progress == Verbosity::Verbose,
        terminal: output::updating_terminal(),
        columns: output::terminal_columns(),
        names: run.names.clone(),
        done: AtomicUsize::new(0),
    };
    let fd = Some(lock.descriptor());
    let results = schedule::execute(steps, settings.jobs, &display, &|index| {
        runner::run_step(&steps[index], run.keys[index], &cache, settings.timeout, fd)
    });
    display.clear();
    if let Some(signal) = interrupt::interrupted() {
        let completed: Vec<(&String, &StepResult)> = display
            .names
            .iter()
            .zip(&results)
            .filter(|(_, result)| !result.interrupted)
            .collect();
        let cached = completed.iter().filter(|(_, result)| result.cached).count();
        let mut text = format!(
            "{command}: {} after {:.1} s; its running processes were killed\n\
             {command}: {} of {} steps had completed ({cached} from the cache); they are cached, \
             so the next run starts from them:\n",
            Interrupted { signal },
            start.elapsed().as_secs_f64(),
            completed.len(),
            steps.len(),
        );
        for (name, result) in &completed {
            let error = result
                .first_error
                .as_ref()
                .filter(|_| result.outcome != Outcome::Pass);
            let error = error.map_or(String::new(), |error| format!(": {error}"));
            let line = format!("{name}: {}{error}", result.outcome.word());
            let _ = writeln!(text, "  {}", output::escape(&line));
        }
        let last = run.report.as_ref().map_or(String::new(), |report| {
            format!(" ({} is the last complete run's)", report.display())
        });
        let _ = writeln!(
            text,
            "{command}: {} steps did not complete; no report was written{last}",
            steps.len() - completed.len(),
        );
        eprint!("{text}");
        return Err(Interrupted { signal }.into());
    }
    if settings.progress > Verbosity::Quiet {
        let toolchains: HashSet<usize> = steps.iter().map(|step| step.toolchain).collect();
        let reused = results.iter().filter(|result| result.cached).count();
        let usage_kinds = [Kind::Usage, Kind::CrateUsage, Kind::CargoUsage];
        let usage_compiles = steps.iter().filter(|step| usage_kinds.contains(&step.kind));
        let usage = match usage_compiles.count() {
            0 => String::new(),
            count => format!(" ({count} usage compiles)"),
        };
        eprintln!(
            "{command}: {} steps{usage} on {} toolchain(s) in {:.1} s ({reused} from the cache, \
             -j {})",
            steps.len(),
            toolchains.len(),
            start.elapsed().as_secs_f64(),
            settings.jobs
        );
    }
    Ok(results)
}

/// Fails when a step must link and no `cc`, rustc's linker for the host, is on `PATH`: one
/// error instead of a failed build per cell.
fn check_linker(steps: &[Step]) -> anyhow::Result<()> {
    if steps.iter().any(|step| step.kind != Kind::Probe) && process::which("cc").is_none() {
        let path = std::env::var_os("PATH").unwrap_or_default();
        bail!(
            "no `cc` on PATH ({}): rustc links the tests and examples with it; install a C \
             compiler (gcc or clang) or put one on PATH as `cc`",
            output::escape(&path.to_string_lossy())
        );
    }
    Ok(())
}

/// The progress on stderr: a line for every step that finishes, except those taken from the
/// cache (shown with `-v`); nothing with `-q`. A terminal shows them on one line redrawn in
/// place, with the step that just started until the next one finishes.
struct Display {
    command: &'static str,
    enabled: bool,
    cached_too: bool,
    terminal: bool,
    /// The terminal's width in columns, which the redrawn line never reaches.
    columns: usize,
    names: Vec<String>,
    /// Steps finished so far, for the line shown when a step starts.
    done: AtomicUsize,
}

impl Display {
    /// Through `eprint!`, which libtest captures, unlike a write to `std::io::stderr()`.
    fn show(&self, text: &str) {
        let text = output::escape(text);
        if self.terminal {
            let shown: String = text.chars().take(self.columns.saturating_sub(1)).collect();
            eprint!("\r\x1b[K{shown}");
        } else {
            eprintln!("{text}");
        }
    }

    fn clear(&self) {
        if self.enabled && self.terminal {
            eprint!("\r\x1b[K");
        }
    }
}

impl Progress for Display {
    fn started(&self, index: usize, _step: &Step) {
        if self.enabled && self.terminal {
            let done = self.done.load(Ordering::Relaxed);
            let (command, total, name) = (self.command, self.names.len(), &self.names[index]);
            self.show(&format!("{command}: {done} of {total} done: {name} ..."));
        }
    }

    fn finished(&self, index: usize, _step: &Step, result: &StepResult, done: usize) {
        self.done.store(done, Ordering::Relaxed);
        if !self.enabled || (result.cached && !self.cached_too) {
            return;
        }
        let how = if result.cached {
            "cached".to_string()
        } else {
            format!("{} in {:.1} s", result.outcome.word(), result.seconds)
        };
        let (command, total, name) = (self.command, self.names.len(), &self.names[index]);
        self.show(&format!("{command}: {done} of {total}: {name}: {how}"));
    }
}
