// SPDX-License-Identifier: GPL-2.0
//! The plain parallel baseline of a planned run: the same processes as the plan's steps,
//! grouped into `sh -c` jobs and dependency waves for `xargs -P`, with no scheduler, cache or
//! report.

use crate::plan::{Kind, Step};
use crate::process::shell_quote;
use std::fmt::Write as _;
use std::path::PathBuf;

/// A plan's steps rearranged for `xargs -P`: the same processes, grouped into jobs and
/// waves.
///
/// - A job is one `sh -c`: a step's processes joined by `&&` (a test binary runs only after
///   its compile), followed by any step that is the only one needing its only dependency (an
///   example's run, after its build).
/// - A job waits for the jobs of its steps' [`Step::deps`]: its wave is one more than theirs.
///   Jobs that nothing waits for all go into the last wave, so that the first waves hold only
///   what later ones need (the shim's rlibs) and little time is lost at the barriers.
/// - Within a wave, jobs keep the plan's order.
/// - The feature probe and a usage compile are followed by `|| true`: their diagnostics are
///   read and their exit status ignored (a compiler that does not know every probed feature,
///   or a compile without a feature it needs, exits 1). They always start their job, so that
///   `|| true` covers them alone. Any other failing job makes the script exit 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlainRun {
    /// The steps' directories, created first.
    pub directories: Vec<PathBuf>,
    /// Variables some steps run without, unset for all (in practice `RUSTC_BOOTSTRAP`, which
    /// each kernel-mode line sets again for itself).
    pub unset: Vec<String>,
    /// Each wave's jobs, each job as one shell command line.
    pub waves: Vec<Vec<String>>,
    /// How many processes the jobs start (compiles and runs, not counting `sh` and `xargs`).
    pub processes: usize,
}

impl PlainRun {
    /// Groups a plan's steps into jobs and waves.
    pub fn from_steps(steps: &[Step]) -> PlainRun {
        let mut dependents = vec![0usize; steps.len()];
        for &dep in steps.iter().flat_map(|step| &step.deps) {
            dependents[dep] += 1;
        }
        // Dependencies point to earlier steps only, so a step's dependency already has a job.
        let mut job_of: Vec<usize> = Vec::with_capacity(steps.len());
        let mut jobs: Vec<Vec<usize>> = Vec::new();
        for (index, step) in steps.iter().enumerate() {
            match step.deps[..] {
                [dep] if dependents[dep] == 1 && !ignores_status(step.kind) => {
                    let job = job_of[dep];
                    job_of.push(job);
                    jobs[job].push(index);
                }
                _ => {
                    job_of.push(jobs.len());
                    jobs.push(vec![index]);
                }
            }
        }
        // A job's producers come from earlier steps, so from earlier jobs: one pass finds
        // every depth.
        let mut depth = vec![0usize; jobs.len()];
        let mut needed = vec![false; jobs.len()];
        for (job, members) in jobs.iter().enumerate() {
            for &dep in members.iter().flat_map(|&member| &steps[member].deps) {
                let producer = job_of[dep];
                if producer != job {
                    needed[producer] = true;
                    depth[job] = depth[job].max(depth[producer] + 1);
                }
            }
        }
        let last = depth.iter().copied().max().unwrap_or(0);
        let mut waves = vec![Vec::new(); if jobs.is_empty() { 0 } else { last + 1 }];
        for (job, members) in jobs.iter().enumerate() {
            let lines: Vec<String> = members
                .iter()
                .map(|&member| step_line(&steps[member]))
                .collect();
            waves[if needed[job] { depth[job] } else { last }].push(lines.join(" && "));
        }
        let mut directories: Vec<PathBuf> = steps
            .iter()
            .flat_map(|step| step.directories.iter().cloned())
            .collect();
        directories.sort();
        directories.dedup();
        let processes = steps.iter().flat_map(|step| &step.processes);
        let mut unset: Vec<String> = processes
            .clone()
            .flat_map(|process| process.env_remove.iter().cloned())
            .collect();
        unset.sort();
        unset.dedup();
        PlainRun {
            directories,
            unset,
            waves,
            processes: processes.count(),
        }
    }

    /// How many jobs there are in all.
    pub fn jobs(&self) -> usize {
        self.waves.iter().map(Vec::len).sum()
    }

    /// The POSIX shell script that runs it: the directories, then each wave through
    /// `xargs -0 -n 1 -P <parallelism> sh -c`; it exits 1 if any job failed.
    pub fn script(&self, parallelism: usize) -> String {
        let mut script = format!(
            "#!/bin/sh\n\
             # The plain parallel baseline of `cargo xtask bench` and `usage`: the planned compiles\n\
             # and runs, with no scheduler, cache or report. Each wave goes through\n\
             # `xargs -P {parallelism}`, one `sh -c` per job (a step's processes, joined by &&);\n\
             # a wave starts when the one before it has finished.\n\
             set -e\n"
        );
        for name in &self.unset {
            let _ = writeln!(script, "unset {name}");
        }
        if !self.directories.is_empty() {
            let quoted: Vec<String> = self
                .directories
                .iter()
                .map(|directory| shell_quote(&directory.to_string_lossy()))
                .collect();
            let _ = writeln!(script, "mkdir -p {}", quoted.join(" "));
        }
        script.push_str("status=0\n");
        for (number, wave) in self.waves.iter().enumerate() {
            let _ = writeln!(
                script,
                "# wave {} of {}: {} jobs\nprintf '%s\\0' \\",
                number + 1,
                self.waves.len(),
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

/// Whether a step's exit status means nothing by itself: the probe's, a usage compile's and a
/// Kbuild fixture's (which fails by design), and a test program's on a kernel target, which
/// the catalog may predict to fail.
fn ignores_status(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Probe | Kind::Usage | Kind::Kbuild | Kind::Emulate
    )
}

/// One step as a shell command line: its processes joined by `&&`.
fn step_line(step: &Step) -> String {
    let processes: Vec<String> = step
        .processes
        .iter()
        .map(|process| process.shell_line())
        .collect();
    let line = processes.join(" && ");
    if ignores_status(step.kind) {
        format!("{line} || true")
    } else {
        line
    }
}
