// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask matrix`: every pinned compiler probed, the shim and every example built, run and
//! tested with it in both modes, each cell compared with the catalog's prediction; this module
//! only orchestrates (plan, cache keys, scheduler, report) and answers Ctrl-C.

use crate::cache::{remove_stale_temporaries, run_keys, Cache};
use crate::expect::Outcome;
use crate::files::write_atomically;
use crate::interrupt::{self, Interrupted};
use crate::json;
use crate::judge::StepResult;
use crate::output::{self, Format};
use crate::pins::Shard;
use crate::plan::{plan_run, Kind, Layout, PlannedRun, Selection, Step};
use crate::probe;
use crate::process::{self, shell_quote};
use crate::report::assemble::{assemble, toolchain_entry};
use crate::report::platforms::PlannedPlatforms;
use crate::report::{Report, ToolchainEntry};
use crate::run_lock::RunLock;
use crate::runner::{self, Limits};
use crate::schedule::{self, Progress};
use crate::targets::{llvm_major, parse_platforms, KernelTarget};
use crate::toolchain::Availability;
use crate::{flags, project_root, Verdict};
use anyhow::{bail, Context};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use xshell::Shell;

/// The progress line on stderr: one updating line on a terminal, plain lines otherwise.
struct ProgressLine<'a> {
    enabled: bool,
    terminal: bool,
    /// The terminal's width in columns, which the updating line never exceeds.
    columns: usize,
    total: usize,
    toolchains: &'a [ToolchainEntry],
    width: Mutex<usize>,
    /// Steps finished so far, for the line shown when a step starts.
    done: AtomicUsize,
}

impl ProgressLine<'_> {
    fn show(&self, text: &str) {
        if !self.enabled {
            return;
        }
        let mut stderr = std::io::stderr().lock();
        if self.terminal {
            let mut width = self
                .width
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            // One column short of the width, so that the line never wraps.
            let shown: String = output::escape(text)
                .chars()
                .take(self.columns.saturating_sub(1))
                .collect();
            let _ = write!(stderr, "\r{}", output::pad(&shown, *width));
            *width = shown.chars().count();
        } else {
            let _ = writeln!(stderr, "{}", output::escape(text));
        }
        let _ = stderr.flush();
    }

    fn clear(&self) {
        if self.enabled && self.terminal {
            let width = *self
                .width
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            eprint!("\r{}\r", output::pad("", width));
        }
    }
}

impl Progress for ProgressLine<'_> {
    fn started(&self, _index: usize, step: &Step) {
        if self.terminal {
            let id = &self.toolchains[step.toolchain].id;
            let done = self.done.load(Ordering::Relaxed);
            self.show(&format!(
                "matrix: {done} of {} done: {id}: {} ...",
                self.total,
                step.label()
            ));
        }
    }

    fn finished(&self, _index: usize, step: &Step, result: &StepResult, done: usize) {
        self.done.store(done, Ordering::Relaxed);
        if result.cached && !self.terminal && output::verbosity() < 1 {
            return;
        }
        let id = &self.toolchains[step.toolchain].id;
        let how = if result.cached {
            "cached".to_string()
        } else {
            format!("{} in {:.1} s", result.outcome.word(), result.seconds)
        };
        self.show(&format!(
            "matrix: {done} of {}: {id}: {}: {how}",
            self.total,
            step.label()
        ));
    }
}

/// The most processes a run starts at once: four per core. More only compete for the cores
/// and the memory, and make timeouts fire for the machine's sake rather than the compiler's.
pub fn jobs_limit() -> usize {
    4 * std::thread::available_parallelism().map_or(1, usize::from)
}

/// The longest `--timeout` accepted.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// Everything a matrix run needs besides the repository, as the flags give it.
#[derive(Clone, Debug)]
pub struct Options {
    /// `--toolchain` specs; empty means every pin.
    pub toolchains: Vec<String>,
    /// `--pins`.
    pub pins: Option<PathBuf>,
    /// At most this many processes at once.
    pub jobs: usize,
    /// Any one process is killed after this long.
    pub timeout: Duration,
    /// Whether cached results may be used (`--no-cache` turns it off; results are still stored).
    pub use_cache: bool,
    /// Whether missing pins fail the run.
    pub strict: bool,
    /// `--shard K/N`: only the toolchains this shard owns, by [`Shard`]'s one rule.
    pub shard: Option<Shard>,
    /// Whether to print progress lines on stderr.
    pub progress: bool,
    /// `--target`: the kernel targets to cross-build for; `None` means all of them.
    pub platforms: Option<Vec<&'static KernelTarget>>,
}

impl Options {
    /// Which compilers the run checks.
    pub fn selection(&self) -> Selection {
        Selection {
            toolchains: self.toolchains.clone(),
            pins: self.pins.clone(),
            shard: self.shard,
            platforms: self.platforms.clone(),
        }
    }

    /// The defaults for `toolchains`: every core, the default timeout, the cache on.
    pub fn new(toolchains: Vec<String>) -> Self {
        Self {
            toolchains,
            pins: None,
            jobs: std::thread::available_parallelism().map_or(1, usize::from),
            timeout: process::DEFAULT_TIMEOUT,
            use_cache: true,
            strict: false,
            shard: None,
            progress: false,
            platforms: None,
        }
    }
}

impl flags::Matrix {
    /// Reads the flags into [`Options`] and the output format, rejecting bad values.
    pub fn options(&self) -> anyhow::Result<(Options, Format)> {
        let format = Format::parse(self.format.as_deref().unwrap_or("human"))?;
        let mut options = Options::new(crate::pins::with_range(
            &self.toolchain,
            self.pins.as_deref(),
            self.version_range.as_deref(),
        )?);
        match self.jobs {
            Some(0) => bail!("-j/--jobs must be at least 1"),
            Some(jobs) => options.jobs = jobs.min(jobs_limit()),
            None => {}
        }
        match self.timeout {
            Some(0) => bail!("--timeout must be at least 1 second"),
            Some(seconds) if seconds > MAX_TIMEOUT.as_secs() => bail!(
                "--timeout {seconds} is more than a day ({} seconds): no single rustc or test \
                 process should run that long",
                MAX_TIMEOUT.as_secs()
            ),
            Some(seconds) => options.timeout = Duration::from_secs(seconds),
            None => {}
        }
        options.shard = self.shard.as_deref().map(Shard::parse).transpose()?;
        options.pins = self.pins.clone();
        options.use_cache = !self.no_cache;
        options.strict = self.strict;
        options.progress = true;
        if !self.target.is_empty() {
            options.platforms = Some(parse_platforms(&self.target).map_err(anyhow::Error::msg)?);
        }
        Ok((options, format))
    }

    /// Runs `cargo xtask matrix`.
    ///
    /// An interrupted run (SIGINT, SIGTERM) ends the process by that same signal once it has
    /// said what completed, as a well-behaved command-line program does, so that a shell loop
    /// or `make` running it stops too.
    pub fn run(&self, sh: &Shell) -> anyhow::Result<Verdict> {
        let (mut options, format) = self.options()?;
        if let Some(jobs) = self.jobs.filter(|&jobs| jobs > options.jobs) {
            eprintln!(
                "matrix: -j {jobs} lowered to {}, four per core of this machine",
                options.jobs
            );
        }
        let root = match &self.root {
            Some(root) => {
                let root = std::fs::canonicalize(root)
                    .with_context(|| format!("--root {}", root.display()))?;
                check_checkout(&root)?;
                root
            }
            None => project_root(),
        };
        if options.pins.is_none() && self.root.is_some() {
            options.pins = Some(root.join("toolchains.toml"));
            // The range selects from the pin file the run reads.
            options.toolchains = crate::pins::with_range(
                &self.toolchain,
                options.pins.as_deref(),
                self.version_range.as_deref(),
            )?;
        }
        let layout = Layout::new(&root);
        if self.dry_run {
            crate::debian::change_nothing();
            let planned = plan_run(sh, &layout, &options.selection(), options.timeout)?;
            print_dry_run_toolchains(&planned.availabilities);
            print_dry_run(&layout, &planned.steps, &probe::probe_source());
            return Ok(Verdict::Success);
        }
        let report = interrupt::run_interruptible(|| run_matrix(&layout, &options))?;
        format.print(
            || crate::date::stamp(report.to_json()),
            || report.markdown(),
            |colour| report.human(colour),
        );
        Ok(report.verdict())
    }
}

/// Fails unless `root` holds kshim's sources, before anything is created under it.
fn check_checkout(root: &Path) -> anyhow::Result<()> {
    for part in ["kernel-shim/src/lib.rs", "examples/Cargo.toml"] {
        if !root.join(part).is_file() {
            bail!(
                "--root {}: not a kshim checkout (it has no {part})",
                output::escape(&root.to_string_lossy())
            );
        }
    }
    Ok(())
}

/// Fails when a step must link and no `cc`, the linker rustc runs for the host, is on the
/// `PATH` the processes get: one environment error instead of a failed build per cell.
fn check_linker(steps: &[Step]) -> anyhow::Result<()> {
    if steps.iter().all(|step| step.kind == Kind::Probe) {
        return Ok(());
    }
    let path = process::inherited_environment()
        .into_iter()
        .find(|(name, _)| name == "PATH")
        .map(|(_, value)| value)
        .unwrap_or_default();
    let found = std::env::split_paths(&path).any(|directory| {
        std::fs::metadata(directory.join("cc"))
            .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
    });
    if !found {
        bail!(
            "no `cc` on PATH ({}): rustc links the tests and examples with it; install a C \
             compiler (gcc or clang) or put one on PATH as `cc`",
            output::escape(&path)
        );
    }
    Ok(())
}

/// Runs the whole matrix and returns its report, which is also written (as JSON) to
/// [`Layout::report`].
///
/// It holds the directory's [`RunLock`] throughout, waiting for another run that holds it. If
/// the run is interrupted ([`interrupt::InterruptGuard`]), it prints the steps that had completed
/// and fails with [`Interrupted`], writing no report.
pub fn run_matrix(layout: &Layout, options: &Options) -> anyhow::Result<Report> {
    let start = Instant::now();
    let lock = RunLock::acquire(&layout.lock(), &mut |message| {
        eprintln!("matrix: {message}")
    })?;
    for directory in [layout.cache(), layout.kshim.join("matrix")] {
        std::fs::create_dir_all(&directory)
            .with_context(|| format!("cannot create {}", directory.display()))?;
        remove_stale_temporaries(&directory);
    }
    remove_stale_temporaries(&layout.kshim);
    let sh = Shell::new()?;
    sh.change_dir(&layout.root);
    let PlannedRun {
        availabilities,
        planned,
        examples,
        steps,
        cross,
        platforms,
        not_run,
    } = plan_run(&sh, layout, &options.selection(), options.timeout)?;
    check_linker(&steps)?;
    let columns: Vec<ToolchainEntry> = availabilities.iter().map(toolchain_entry).collect();
    if let Some(signal) = interrupt::interrupted() {
        eprintln!(
            "matrix: {} while checking the toolchains; nothing was built",
            Interrupted { signal }
        );
        return Err(Interrupted { signal }.into());
    }
    let probe_source = probe::probe_source();
    let probe_path = layout.probe_source();
    if std::fs::read_to_string(&probe_path).ok().as_deref() != Some(probe_source.as_str()) {
        write_atomically(&probe_path, probe_source.as_bytes())?;
    }
    let keys = run_keys(&steps, &planned, &availabilities, &layout.root)?;
    let cache = Cache::new(layout.cache(), options.use_cache);
    let progress = ProgressLine {
        enabled: options.progress && output::verbosity() >= 0,
        terminal: output::updating_terminal(),
        columns: output::terminal_columns(),
        total: steps.len(),
        toolchains: &columns,
        width: Mutex::new(0),
        done: AtomicUsize::new(0),
    };
    let limits = Limits {
        timeout: options.timeout,
        lock: Some(lock.descriptor()),
    };
    let results = schedule::execute(&steps, options.jobs, &progress, &|index| {
        runner::run_step(&steps[index], keys[index], &cache, limits)
    });
    progress.clear();
    if let Some(signal) = interrupt::interrupted() {
        report_interrupted(layout, &columns, &steps, &results, start, signal);
        return Err(Interrupted { signal }.into());
    }
    if options.progress {
        let reused = results.iter().filter(|result| result.cached).count();
        eprintln!(
            "matrix: {} steps on {} toolchain(s) in {:.1} s ({reused} from the cache, -j {})",
            steps.len(),
            planned.len(),
            start.elapsed().as_secs_f64(),
            options.jobs
        );
    }
    let report = assemble(
        &columns,
        &steps,
        &results,
        &examples,
        options.strict,
        options.shard.map(|shard| shard.to_string()),
        &PlannedPlatforms {
            platforms: &platforms,
            cross: &cross,
            not_run: &not_run,
            llvm: &availabilities
                .iter()
                .map(|availability| match availability {
                    Availability::Found { version, .. } => {
                        version.llvm_version.as_deref().and_then(llvm_major)
                    }
                    _ => None,
                })
                .collect::<Vec<_>>(),
        },
    );
    write_atomically(
        &layout.report(),
        json::to_pretty(&crate::date::stamp(report.to_json())).as_bytes(),
    )
    .context("writing the matrix report")?;
    Ok(report)
}

/// Says, on stderr, what an interrupted run had done: every step that completed, with its
/// outcome, and what did not.
fn report_interrupted(
    layout: &Layout,
    columns: &[ToolchainEntry],
    steps: &[Step],
    results: &[StepResult],
    start: Instant,
    signal: i32,
) {
    let completed: Vec<(&Step, &StepResult)> = steps
        .iter()
        .zip(results)
        .filter(|(_, result)| !result.interrupted)
        .collect();
    let cached = completed.iter().filter(|(_, result)| result.cached).count();
    let mut text = format!(
        "matrix: {} after {:.1} s; its running processes were killed\n\
         matrix: {} of {} steps had completed ({cached} from the cache); they are cached, so the \
         next run starts from them:\n",
        Interrupted { signal },
        start.elapsed().as_secs_f64(),
        completed.len(),
        steps.len(),
    );
    for (step, result) in &completed {
        let id = &columns[step.toolchain].id;
        let error = match &result.first_error {
            Some(error) if result.outcome != Outcome::Pass => format!(": {error}"),
            _ => String::new(),
        };
        let line = format!("{id}: {}: {}{error}", step.label(), result.outcome.word());
        text.push_str(&format!("  {}\n", output::escape(&line)));
    }
    text.push_str(&format!(
        "matrix: {} steps did not complete; no report was written ({} is the last complete \
         run's)\n",
        steps.len() - completed.len(),
        layout.report().display()
    ));
    eprint!("{text}");
}

/// Prints every command the run would execute, each runnable in a POSIX shell as it stands.
/// Says, as shell comments before the commands, which compiler each pin or spec would use and
/// where it comes from, and which pins are not provisioned and how to provision them: the
/// matrix itself installs nothing for a pin.
fn print_dry_run_toolchains(availabilities: &[Availability]) {
    println!("# Toolchains of this run:");
    for availability in availabilities {
        let id = output::escape(availability.id()).into_owned();
        let line = match availability {
            Availability::Found { toolchain, version } => format!(
                "{id}: {} {} ({})",
                toolchain.source.kind().word(),
                output::escape(&toolchain.rustc.to_string_lossy()),
                version.release_string()
            ),
            Availability::Broken { error, .. } => {
                let first = error.lines().next().unwrap_or_default();
                format!("{id}: broken, skipped: {}", output::escape(first))
            }
            Availability::Missing { install_hint, .. } => format!(
                "{id}: not provisioned, so listed as missing; to provision it: {}",
                output::escape(install_hint)
            ),
        };
        println!("#   {line}");
    }
}

fn print_dry_run(layout: &Layout, steps: &[Step], probe_source: &str) {
    let mut directories: Vec<&PathBuf> = steps.iter().flat_map(|step| &step.directories).collect();
    directories.sort();
    directories.dedup();
    let probe_path = layout.probe_source();
    // Shown once rather than on every line, so that each line stays short and readable.
    println!(
        "# The matrix gives each command only PATH and TMPDIR from its own environment, plus the \
         variables shown; to run these lines exactly so: env -i PATH=\"$PATH\" sh -e FILE"
    );
    if let Some(parent) = probe_path.parent() {
        println!("mkdir -p {}", shell_quote(&parent.to_string_lossy()));
    }
    let lines: Vec<String> = probe_source.lines().map(shell_quote).collect();
    println!(
        "printf '%s\\n' {} > {}",
        lines.join(" "),
        shell_quote(&probe_path.to_string_lossy())
    );
    if !directories.is_empty() {
        let quoted: Vec<String> = directories
            .iter()
            .map(|directory| shell_quote(&directory.to_string_lossy()))
            .collect();
        println!("mkdir -p {}", quoted.join(" "));
    }
    for step in steps {
        for invocation in &step.processes {
            println!("{}", invocation.shell_line());
        }
    }
}
