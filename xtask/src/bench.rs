//! `cargo xtask bench`: how long the matrix takes cold and warm, next to the very same rustc
//! commands run by `xargs -P <cores>` with no orchestration at all.
//!
//! Every figure is the wall-clock time of a whole process, taken with [`Instant`] around it:
//!
//! - the cold matrix: `xtask matrix -j <cores> --no-cache`, after `target/kshim/matrix/` (every
//!   output directory) is removed; its own summary line must say that nothing came from the
//!   cache, or the bench stops;
//! - the plain parallel run: `sh target/kshim/bench/plain.sh`, a script made from
//!   `xtask matrix --dry-run` by [`PlainRun::from_dry_run`], also after the output
//!   directories are removed;
//! - the warm matrix: `xtask matrix -j <cores>` once everything is cached (after one untimed
//!   run that refreshes the cache); its summary line must say that every step came from it;
//! - the xtask's start-up: `xtask --help`, which parses the flags and exits.
//!
//! Cold and plain runs alternate, so that a change in the machine's background load falls on
//! both. The xtask binary is the one running the bench, so no `cargo run` is timed.

use crate::json;
use crate::plan::Layout;
use crate::process::shell_quote;
use crate::{flags, project_root, Verdict};
use anyhow::{bail, Context};
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::Path;
use std::process::Output;
use std::time::Instant;
use xshell::{cmd, Shell};

/// How many times each measurement runs unless `--runs` says otherwise.
pub const DEFAULT_RUNS: usize = 3;

/// The target: the cold matrix within this factor of the plain parallel run.
pub const TARGET_RATIO: f64 = 1.2;

/// Splits one line of the dry-run script into shell words.
///
/// It reads what [`shell_quote`] writes: plain words, single-quoted words and backslash
/// escapes; anything that would need a real shell to expand (`"`, `$`, backquotes) is refused
/// rather than guessed at.
pub fn split_words(line: &str) -> anyhow::Result<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(quoted) => word.push(quoted),
                        None => bail!("unterminated single quote in: {line}"),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(
                    chars
                        .next()
                        .with_context(|| format!("a backslash ends the line: {line}"))?,
                );
            }
            '"' | '$' | '`' => bail!("`{c}` needs a shell to expand it, in: {line}"),
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// Whether a shell word is a variable assignment (`NAME=value`) in front of a command.
fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The file a rustc command line writes, from its `-o`, or its `--out-dir`, `--crate-name`,
/// `--crate-type`, `--test` and `--emit` arguments; `None` if it names no output.
fn rustc_output(args: &[String]) -> Option<String> {
    let mut out_dir = None;
    let mut file = None;
    let mut crate_name = None;
    let mut crate_type = None;
    let mut test = false;
    let mut metadata_only = false;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-o" => file = args.next(),
            "--out-dir" => out_dir = args.next(),
            "--crate-name" => crate_name = args.next(),
            "--crate-type" => crate_type = args.next(),
            "--test" => test = true,
            emit if emit.starts_with("--emit=") => metadata_only = !emit.contains("link"),
            _ => {}
        }
    }
    if let Some(file) = file {
        return Some(file.clone());
    }
    let (directory, name) = (out_dir?, crate_name?);
    Some(if test || crate_type.map(String::as_str) == Some("bin") {
        format!("{directory}/{name}")
    } else if metadata_only {
        format!("{directory}/lib{name}.rmeta")
    } else {
        format!("{directory}/lib{name}.rlib")
    })
}

/// The dry-run script rearranged for `xargs -P`: the same commands, grouped into jobs and
/// waves.
///
/// - Setup lines (`mkdir`, `printf ... > file`) run first, one after another.
/// - A job is one rustc command line followed, joined by `&&`, by every line that executes
///   what it built (a test binary, an example's binary): one `sh -c` each.
/// - A job that reads another's output (`--extern kernel=.../libkernel.rlib`) waits for it:
///   its wave is one more than its producer's. Jobs that nothing waits for all go into the
///   last wave, so that the first waves hold only what later ones need (the shim's rlibs)
///   and as little time as possible is lost at the barrier between waves.
/// - Within a wave, jobs keep the dry-run's order.
/// - A metadata-only compile that no job reads (the feature probe) is followed by `|| true`:
///   the matrix classifies its diagnostics and ignores its exit status, and a compiler that
///   does not know every probed feature (1.63.0) exits 1 on it. Any other failing job makes
///   the script exit 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlainRun {
    /// Lines that run first, in order.
    pub setup: Vec<String>,
    /// Each wave's jobs, each job as one shell command line.
    pub waves: Vec<Vec<String>>,
}

impl PlainRun {
    /// Groups the lines of `xtask matrix --dry-run` into setup, jobs and waves.
    pub fn from_dry_run(script: &str) -> anyhow::Result<PlainRun> {
        struct Job {
            lines: Vec<String>,
            deps: BTreeSet<usize>,
            metadata_only: bool,
        }
        let mut setup = Vec::new();
        let mut jobs: Vec<Job> = Vec::new();
        // Each output file, by the job that writes it.
        let mut producers: HashMap<String, usize> = HashMap::new();
        for line in script.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let words = split_words(line)?;
            let Some(program_index) = words.iter().position(|word| !is_assignment(word)) else {
                bail!("a dry-run line with no command: {line}");
            };
            let program = &words[program_index];
            let args = &words[program_index + 1..];
            if program == "mkdir" || program == "printf" {
                setup.push(line.to_string());
                continue;
            }
            let deps: BTreeSet<usize> = args
                .iter()
                .flat_map(|arg| {
                    // `--extern kernel=PATH` names its file after the `=`.
                    std::iter::once(arg.as_str()).chain(arg.split_once('=').map(|(_, value)| value))
                })
                .filter_map(|word| producers.get(word).copied())
                .collect();
            if let Some(&producer) = producers.get(program.as_str()) {
                let job = &mut jobs[producer];
                job.lines.push(line.to_string());
                job.deps
                    .extend(deps.into_iter().filter(|&dep| dep != producer));
                continue;
            }
            let output = rustc_output(args);
            let metadata_only = output
                .as_deref()
                .is_some_and(|output| output.ends_with(".rmeta"));
            if let Some(output) = output {
                producers.insert(output, jobs.len());
            }
            jobs.push(Job {
                lines: vec![line.to_string()],
                deps,
                metadata_only,
            });
        }
        // Dependencies point to earlier jobs only, so one pass in order finds every depth.
        let mut depth = vec![0usize; jobs.len()];
        let mut needed = vec![false; jobs.len()];
        for index in 0..jobs.len() {
            for &dep in &jobs[index].deps {
                needed[dep] = true;
                depth[index] = depth[index].max(depth[dep] + 1);
            }
        }
        let last = depth.iter().copied().max().unwrap_or(0);
        let mut waves = vec![Vec::new(); if jobs.is_empty() { 0 } else { last + 1 }];
        for (index, job) in jobs.into_iter().enumerate() {
            let wave = if needed[index] { depth[index] } else { last };
            let mut text = job.lines.join(" && ");
            if job.metadata_only && !needed[index] {
                text.push_str(" || true");
            }
            waves[wave].push(text);
        }
        Ok(PlainRun { setup, waves })
    }

    /// How many jobs there are in all.
    pub fn jobs(&self) -> usize {
        self.waves.iter().map(Vec::len).sum()
    }

    /// How many processes the jobs start (compiles and runs, not counting `sh` and `xargs`).
    pub fn processes(&self) -> usize {
        self.waves
            .iter()
            .flatten()
            .map(|job| job.trim_end_matches(" || true").matches(" && ").count() + 1)
            .sum()
    }

    /// The POSIX shell script that runs it: setup lines, then each wave through
    /// `xargs -0 -n 1 -P <parallelism> sh -c`; it exits 1 if any job failed.
    pub fn script(&self, parallelism: usize, origin: &str) -> String {
        let mut script = String::new();
        let _ = writeln!(
            script,
            "#!/bin/sh\n\
             # The plain parallel baseline of `cargo xtask bench`, generated from `{origin}`:\n\
             # the same compiles and runs as the matrix, with no scheduler, cache or report.\n\
             # Setup first; then each wave through `xargs -P {parallelism}`, one `sh -c` per job\n\
             # (a compile, then the runs of what it built, joined by &&). A wave starts when\n\
             # the one before it has finished.\n\
             set -e\n\
             unset RUSTC_BOOTSTRAP"
        );
        for line in &self.setup {
            let _ = writeln!(script, "{line}");
        }
        script.push_str("status=0\n");
        let total = self.waves.len();
        for (number, wave) in self.waves.iter().enumerate() {
            let _ = writeln!(
                script,
                "# wave {} of {total}: {} jobs\nprintf '%s\\0' \\",
                number + 1,
                wave.len()
            );
            for job in wave {
                let _ = writeln!(script, "  {} \\", shell_quote(job));
            }
            let _ = writeln!(
                script,
                "  | xargs -0 -n 1 -P {parallelism} sh -c || status=1"
            );
        }
        script.push_str("exit \"$status\"\n");
        script
    }
}

/// The wall-clock seconds of one measurement's runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Samples(pub Vec<f64>);

impl Samples {
    fn sorted(&self) -> Vec<f64> {
        let mut sorted = self.0.clone();
        sorted.sort_by(f64::total_cmp);
        sorted
    }

    /// The fastest run.
    pub fn min(&self) -> f64 {
        self.sorted().first().copied().unwrap_or(f64::NAN)
    }

    /// The slowest run.
    pub fn max(&self) -> f64 {
        self.sorted().last().copied().unwrap_or(f64::NAN)
    }

    /// The middle run (the mean of the middle two for an even count).
    pub fn median(&self) -> f64 {
        let sorted = self.sorted();
        match sorted.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => sorted[n / 2],
            n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
        }
    }
}

/// What the matrix's last stderr line says: `matrix: N steps on T toolchain(s) in S s (R from
/// the cache, -j J)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MatrixSummary {
    /// Steps planned.
    pub steps: usize,
    /// Seconds the step runner took, as the matrix measured it.
    pub seconds: f64,
    /// Steps whose result came from the cache.
    pub cached: usize,
}

impl MatrixSummary {
    /// Finds and reads the summary line in the matrix's stderr.
    pub fn parse(stderr: &str) -> Option<MatrixSummary> {
        let line = stderr
            .lines()
            .rev()
            .find(|line| line.starts_with("matrix: ") && line.contains(" from the cache"))?;
        let rest = line.strip_prefix("matrix: ")?;
        let (steps, rest) = rest.split_once(" steps on ")?;
        let (_, rest) = rest.split_once(" in ")?;
        let (seconds, rest) = rest.split_once(" s (")?;
        let (cached, _) = rest.split_once(" from the cache")?;
        Some(MatrixSummary {
            steps: steps.parse().ok()?,
            seconds: seconds.parse().ok()?,
            cached: cached.parse().ok()?,
        })
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

/// Times one process to its end; its output is kept for the checks.
/// Runs `work` holding the matrix's run lock, so no `cargo xtask matrix` shares the outputs.
fn with_run_lock<T>(
    layout: &Layout,
    work: impl FnOnce() -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let _lock = crate::cache::RunLock::acquire(&layout.lock(), &mut |message| {
        eprintln!("bench: {message}")
    })?;
    work()
}

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

/// The toolchains the last matrix run used: `id release (verdict)` for each found one.
fn toolchains_in_report(report: &Path) -> anyhow::Result<Vec<String>> {
    let text = std::fs::read_to_string(report)
        .with_context(|| format!("reading the matrix report {}", report.display()))?;
    let report = json::parse(&text)
        .map_err(|error| anyhow::anyhow!("reading {}: {error}", report.display()))?;
    Ok(report
        .get("toolchains")
        .and_then(json::Value::as_array)
        .into_iter()
        .flatten()
        .filter(|toolchain| {
            toolchain
                .get("rustc")
                .and_then(json::Value::as_str)
                .is_some()
        })
        .map(|toolchain| {
            let field = |name: &str| {
                toolchain
                    .get(name)
                    .and_then(json::Value::as_str)
                    .unwrap_or("?")
            };
            let (id, release) = (field("id"), field("release"));
            if id == release {
                format!("{id} ({})", field("verdict"))
            } else {
                format!("{id} = {release} ({})", field("verdict"))
            }
        })
        .collect())
}

/// Everything one bench run measured.
struct Figures {
    cold: Samples,
    plain: Samples,
    warm: Samples,
    startup: Samples,
    /// The matrix's own step-runner seconds in the cold runs.
    cold_runner: Samples,
    steps: usize,
    loads: Vec<String>,
}

impl flags::Bench {
    /// Runs `cargo xtask bench`.
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
        let selection: Vec<String> = self
            .toolchain
            .iter()
            .flat_map(|spec| ["--toolchain".to_string(), spec.clone()])
            .collect();
        let selection_args = &selection;
        let jobs = cores.to_string();

        let dry_run = cmd!(sh, "{xtask} matrix -j {jobs} --dry-run {selection_args...}")
            .quiet()
            .read()
            .context("running `xtask matrix --dry-run`")?;
        let plain = PlainRun::from_dry_run(&dry_run)?;
        let origin = format!(
            "xtask matrix -j {cores} --dry-run{}",
            selection
                .iter()
                .map(|word| format!(" {}", shell_quote(word)))
                .collect::<String>()
        );
        let script_path = bench_directory.join("plain.sh");
        sh.create_dir(&bench_directory)?;
        sh.write_file(&script_path, plain.script(cores, &origin))?;
        eprintln!(
            "bench: plain run {}: {} setup lines, {} jobs ({} processes) in {} waves",
            script_path.display(),
            plain.setup.len(),
            plain.jobs(),
            plain.processes(),
            plain.waves.len()
        );

        let mut figures = Figures {
            cold: Samples::default(),
            plain: Samples::default(),
            warm: Samples::default(),
            startup: Samples::default(),
            cold_runner: Samples::default(),
            steps: 0,
            loads: Vec::new(),
        };
        let mut matrix_failed = false;
        for run in 1..=runs {
            // The matrix's own run lock guards the outputs while the bench, not a matrix,
            // touches them; the timed matrix takes that lock itself.
            with_run_lock(&layout, || Ok(sh.remove_path(&outputs)?))?;
            let load = load_average();
            let (seconds, output) = timed(cmd!(
                sh,
                "{xtask} matrix -j {jobs} --no-cache {selection_args...}"
            ))?;
            let summary = self.check_matrix("cold", &output)?;
            if summary.cached != 0 {
                bail!(
                    "the cold matrix took {} of {} results from the cache: not a cold run",
                    summary.cached,
                    summary.steps
                );
            }
            matrix_failed |= output.status.code() != Some(0);
            eprintln!(
                "bench: cold matrix, run {run} of {runs}: {seconds:.2} s ({} steps; load {load})",
                summary.steps
            );
            figures.cold.0.push(seconds);
            figures.cold_runner.0.push(summary.seconds);
            figures.steps = summary.steps;
            figures.loads.push(load);

            let load = load_average();
            let (seconds, output) = with_run_lock(&layout, || {
                sh.remove_path(&outputs)?;
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
        let (_, output) = timed(cmd!(sh, "{xtask} matrix -j {jobs} {selection_args...}"))?;
        self.check_matrix("refresh", &output)?;
        for run in 1..=runs {
            let load = load_average();
            let (seconds, output) =
                timed(cmd!(sh, "{xtask} matrix -j {jobs} {selection_args...}"))?;
            let summary = self.check_matrix("warm", &output)?;
            if summary.cached != summary.steps {
                bail!(
                    "the warm matrix ran {} of {} steps again: not a warm run",
                    summary.steps - summary.cached,
                    summary.steps
                );
            }
            eprintln!("bench: warm matrix, run {run} of {runs}: {seconds:.3} s (load {load})");
            figures.warm.0.push(seconds);
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

        let toolchains = toolchains_in_report(&layout.report())?;
        let table = markdown(&figures, &plain, cores, &toolchains, &self.toolchain);
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

    /// Reads a matrix run's summary line, failing when the matrix stopped with an error.
    fn check_matrix(&self, what: &str, output: &Output) -> anyhow::Result<MatrixSummary> {
        if !matches!(output.status.code(), Some(0 | 1)) {
            bail!(
                "the {what} matrix stopped ({}):\n{}",
                output.status,
                stderr_tail(output)
            );
        }
        MatrixSummary::parse(&String::from_utf8_lossy(&output.stderr)).with_context(|| {
            format!(
                "the {what} matrix printed no summary line:\n{}",
                stderr_tail(output)
            )
        })
    }
}

/// The results as Markdown, ready for BENCHMARKS.md.
fn markdown(
    figures: &Figures,
    plain: &PlainRun,
    cores: usize,
    toolchains: &[String],
    selection: &[String],
) -> String {
    let runs = figures.cold.0.len();
    let selection_flags: String = selection
        .iter()
        .map(|spec| format!(" --toolchain {}", shell_quote(spec)))
        .collect();
    let mut text = String::new();
    let _ = writeln!(
        text,
        "Measured by `cargo xtask bench{}{selection_flags}` on {cores} cores ({}); {} matrix steps; \
         plain run: {} jobs, {} processes, {} waves; toolchains: {}.\n",
        if runs == DEFAULT_RUNS {
            String::new()
        } else {
            format!(" --runs {runs}")
        },
        cpu_model(),
        figures.steps,
        plain.jobs(),
        plain.processes(),
        plain.waves.len(),
        toolchains.join(", ")
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
        let _ = writeln!(
            text,
            "| {name} | {command} | {} | {:.3} | {:.3} | {:.3} |",
            samples.0.len(),
            samples.min(),
            samples.median(),
            samples.max()
        );
    }
    let ratio = figures.cold.median() / figures.plain.median();
    let verdict = if ratio <= TARGET_RATIO {
        "met".to_string()
    } else {
        format!("missed by {:.0} %", (ratio / TARGET_RATIO - 1.0) * 100.0)
    };
    let _ = writeln!(
        text,
        "\n- Cold matrix / plain parallel run (medians): **{ratio:.3}** (target at most \
         {TARGET_RATIO}: {verdict}); run by run: {}.",
        figures
            .cold
            .0
            .iter()
            .zip(&figures.plain.0)
            .map(|(cold, plain)| format!("{:.3}", cold / plain))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        text,
        "- Of the cold matrix, the step runner itself (the matrix's own figure): median {:.3} s; \
         the rest is discovery (`rustc -vV` of every compiler), planning, hashing and the report.",
        figures.cold_runner.median()
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
mod tests {
    use super::*;
    use crate::process::Invocation;

    #[test]
    fn splits_what_shell_quote_writes() {
        let invocation = Invocation {
            program: "/r/rustc".into(),
            args: vec![
                "--check-cfg".into(),
                "cfg(kshim_kernel_mode)".into(),
                "it's".into(),
                String::new(),
            ],
            env: vec![("LD_LIBRARY_PATH".into(), "/a b/lib".into())],
            env_remove: Vec::new(),
        };
        assert_eq!(
            split_words(&invocation.shell_line()).unwrap(),
            [
                "LD_LIBRARY_PATH=/a b/lib",
                "/r/rustc",
                "--check-cfg",
                "cfg(kshim_kernel_mode)",
                "it's",
                ""
            ]
        );
        assert!(split_words("echo \"$HOME\"").is_err());
        assert!(split_words("echo 'open").is_err());
    }

    #[test]
    fn finds_what_rustc_writes() {
        let words = |line: &str| split_words(line).unwrap();
        assert_eq!(
            rustc_output(&words(
                "--crate-name kernel --crate-type rlib --emit=link lib.rs --out-dir /o"
            ))
            .as_deref(),
            Some("/o/libkernel.rlib")
        );
        assert_eq!(
            rustc_output(&words("--crate-name m --crate-type bin m.rs --out-dir /o")).as_deref(),
            Some("/o/m")
        );
        assert_eq!(
            rustc_output(&words("--crate-name m --test m.rs -o /o/m-test")).as_deref(),
            Some("/o/m-test")
        );
        assert_eq!(
            rustc_output(&words(
                "--crate-name p --crate-type lib --emit=metadata p.rs --out-dir /o"
            ))
            .as_deref(),
            Some("/o/libp.rmeta")
        );
        assert_eq!(rustc_output(&words("--version")), None);
    }

    /// A dry-run of one toolchain with one example, in the matrix's order.
    const DRY_RUN: &str = "\
mkdir -p /t/matrix
printf '%s\\n' 'fn main() {}' > /t/matrix/probe.rs
mkdir -p /t/k /t/p
RUSTC_BOOTSTRAP=1 /r/rustc --crate-name kshim_probe --crate-type lib --emit=metadata /t/matrix/probe.rs --out-dir /t/p
RUSTC_BOOTSTRAP=1 /r/rustc --crate-name kernel --crate-type rlib --emit=link lib.rs --out-dir /t/k
RUSTC_BOOTSTRAP=1 /r/rustc --crate-name kernel --test lib.rs -o /t/k/kernel-test
/t/k/kernel-test
RUSTC_BOOTSTRAP=1 /r/rustc --crate-name m --crate-type bin m.rs --extern kernel=/t/k/libkernel.rlib --out-dir /t/k
/t/k/m
RUSTC_BOOTSTRAP=1 /r/rustc --crate-name m --test m.rs --extern kernel=/t/k/libkernel.rlib -o /t/k/m-test
/t/k/m-test
";

    #[test]
    fn groups_the_dry_run_into_jobs_and_waves() {
        let plain = PlainRun::from_dry_run(DRY_RUN).unwrap();
        assert_eq!(plain.setup.len(), 3);
        assert!(plain.setup[1].starts_with("printf"));
        // Only the shim's rlib is needed by others; everything else waits for the last wave,
        // and each binary runs right after its own compile.
        assert_eq!(
            plain.waves,
            [
                vec!["RUSTC_BOOTSTRAP=1 /r/rustc --crate-name kernel --crate-type rlib --emit=link lib.rs --out-dir /t/k".to_string()],
                vec![
                    "RUSTC_BOOTSTRAP=1 /r/rustc --crate-name kshim_probe --crate-type lib --emit=metadata /t/matrix/probe.rs --out-dir /t/p || true".to_string(),
                    "RUSTC_BOOTSTRAP=1 /r/rustc --crate-name kernel --test lib.rs -o /t/k/kernel-test && /t/k/kernel-test".to_string(),
                    "RUSTC_BOOTSTRAP=1 /r/rustc --crate-name m --crate-type bin m.rs --extern kernel=/t/k/libkernel.rlib --out-dir /t/k && /t/k/m".to_string(),
                    "RUSTC_BOOTSTRAP=1 /r/rustc --crate-name m --test m.rs --extern kernel=/t/k/libkernel.rlib -o /t/k/m-test && /t/k/m-test".to_string(),
                ],
            ]
        );
        assert_eq!(plain.jobs(), 5);
        // Every compile and every run of the dry-run, none lost and none added.
        assert_eq!(plain.processes(), 8);
    }

    #[test]
    fn a_chain_of_dependencies_makes_one_wave_per_link() {
        let plain = PlainRun::from_dry_run(
            "/r/rustc --crate-name a --crate-type rlib a.rs --out-dir /o\n\
             /r/rustc --crate-name b --crate-type rlib b.rs --extern a=/o/liba.rlib --out-dir /o\n\
             /r/rustc --crate-name c --crate-type bin c.rs --extern b=/o/libb.rlib --out-dir /o\n\
             /r/rustc --crate-name d --crate-type bin d.rs --extern a=/o/liba.rlib --out-dir /o\n",
        )
        .unwrap();
        let names: Vec<Vec<&str>> = plain
            .waves
            .iter()
            .map(|wave| {
                wave.iter()
                    .map(|job| job.split_whitespace().nth(2).unwrap())
                    .collect()
            })
            .collect();
        assert_eq!(names, [vec!["a"], vec!["b"], vec!["c", "d"]]);
        assert!(PlainRun::from_dry_run("").unwrap().waves.is_empty());
    }

    #[test]
    fn the_script_runs_each_wave_through_xargs() {
        let plain = PlainRun::from_dry_run(DRY_RUN).unwrap();
        let script = plain.script(2, "xtask matrix --dry-run");
        assert!(script.starts_with("#!/bin/sh\n"), "{script}");
        assert!(script.contains("unset RUSTC_BOOTSTRAP\nmkdir -p /t/matrix\n"));
        assert_eq!(
            script
                .matches("| xargs -0 -n 1 -P 2 sh -c || status=1")
                .count(),
            2
        );
        assert!(script.contains(
            "  'RUSTC_BOOTSTRAP=1 /r/rustc --crate-name m --test m.rs --extern kernel=/t/k/libkernel.rlib -o /t/k/m-test && /t/k/m-test' \\\n"
        ));
        assert!(script.ends_with("exit \"$status\"\n"));
    }

    #[test]
    fn statistics_of_the_runs() {
        let samples = Samples(vec![3.0, 1.0, 2.0]);
        assert_eq!(
            (samples.min(), samples.median(), samples.max()),
            (1.0, 2.0, 3.0)
        );
        assert_eq!(Samples(vec![4.0, 1.0, 2.0, 3.0]).median(), 2.5);
        assert!(Samples::default().median().is_nan());
    }

    #[test]
    fn reads_the_matrix_summary_line() {
        let stderr = "matrix: 3 of 380: nightly: build kernel (kernel): pass in 0.4 s\n\
            matrix: 380 steps on 5 toolchain(s) in 27.4 s (0 from the cache, -j 2)\n";
        assert_eq!(
            MatrixSummary::parse(stderr),
            Some(MatrixSummary {
                steps: 380,
                seconds: 27.4,
                cached: 0
            })
        );
        assert_eq!(MatrixSummary::parse("matrix: 3 of 380: x\n"), None);
    }
}
