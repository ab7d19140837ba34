// SPDX-License-Identifier: GPL-2.0
//! What a step's processes mean: [`judge`] reads what they printed and how they ended, and
//! says whether the step passed, with what else the step found out; it runs nothing.

use crate::features::expect::Outcome;
use crate::features::places::{read_gate_errors, GateErrors};
use crate::features::probe;
use crate::features::status::Status;
use crate::run::plan::{Kind, Step};
use crate::targets::parse_target_list;
use crate::util::diagnostics::{error_diagnostics, error_line, first_rustc_error, json_errors};
use crate::util::json::{self, Deserialize, Serialize};
use crate::util::libtest::TestSummary;
use crate::util::process::{describe_status, missing_library, Killed, ProcessOutput};
use anyhow::{anyhow, bail, Context as _};
use std::time::Duration;

/// A step's result; the cache stores it as serde writes it, `cached` and `interrupted` left out
/// (an entry may lack `usage`, `targets` and `error_codes`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct StepResult {
    pub outcome: Outcome,
    /// The first error, for failures and skips.
    #[serde(deserialize_with = "json::nullable")]
    pub first_error: Option<String>,
    /// Wall-clock seconds of the run that produced this result.
    pub seconds: f64,
    #[serde(skip)]
    pub cached: bool,
    /// For tests that ran: libtest's counts (names are not kept).
    #[serde(deserialize_with = "json::nullable")]
    pub tests: Option<(u64, u64, u64)>,
    /// For the probe: one status per catalog feature, or why the probe failed.
    #[serde(with = "crate::run::cache::probe")]
    pub probe: Option<Result<Vec<Status>, String>>,
    /// For an example's run: the module log it printed.
    #[serde(deserialize_with = "json::nullable")]
    pub log: Option<String>,
    /// For a usage compile: where the code needs the feature left out, and where it enables it.
    pub usage: Option<GateErrors>,
    /// For the target-list probe: every target the compiler knows.
    pub targets: Option<Vec<String>>,
    /// For a Kbuild fixture's compile: the codes of its errors, in order, each once (rustc's
    /// `E0636`, or a lint's name).
    pub error_codes: Option<Vec<String>>,
    /// Whether the run was interrupted before this step could finish (never cached or reported).
    #[serde(skip)]
    pub interrupted: bool,
}

impl StepResult {
    /// A step that did not run, and why.
    pub fn skipped(reason: String) -> Self {
        StepResult {
            first_error: Some(reason),
            ..StepResult::default()
        }
    }

    /// A step that failed before or outside its processes.
    pub fn failed(message: String) -> Self {
        StepResult {
            outcome: Outcome::Fail,
            ..StepResult::skipped(message)
        }
    }

    /// A step the run's interrupt cut short.
    pub fn interrupted() -> Self {
        StepResult {
            interrupted: true,
            ..StepResult::skipped("not run to its end: the run was interrupted".into())
        }
    }
}

/// Judges a step from the outputs of its processes, in the order of [`Step::processes`];
/// `timeout` only words the failure of a process killed by `--timeout`.
pub fn judge(step: &Step, outputs: &[ProcessOutput], timeout: Duration) -> StepResult {
    let mut result = StepResult {
        outcome: Outcome::Pass,
        seconds: outputs.iter().map(|output| output.seconds).sum(),
        ..StepResult::default()
    };
    if let Err(message) = judge_outputs(step, outputs, timeout, &mut result) {
        result.outcome = Outcome::Fail;
        result.first_error = Some(format!("{message:#}"));
    }
    result
}

fn judge_outputs(
    step: &Step,
    outputs: &[ProcessOutput],
    timeout: Duration,
    result: &mut StepResult,
) -> anyhow::Result<()> {
    let first = outputs.first().context("no process ran")?;
    let ending = |output: &ProcessOutput| output.describe_ending(timeout);
    let said = first_line_or(&first.stderr, "no output on stderr");
    let crate_usage = matches!(step.kind, Kind::CrateUsage | Kind::CargoUsage);
    if first.status == Err(Killed::Timeout) && !crate_usage {
        bail!("{} {}", step.processes[0].program.display(), ending(first));
    }
    if let Some(index) = outputs.iter().position(|output| !output.complete) {
        // What was read may lack its end, so it cannot be judged.
        bail!(
            "the output of {} could not be read to its end: something it started left its \
             process group and kept the pipe open",
            step.processes[index].program.display()
        );
    }
    // These compiles are judged by their diagnostics; one that failed without any (a crash, a
    // wrapper's own failure) said nothing.
    let by_diagnostics = matches!(step.kind, Kind::Probe | Kind::Usage | Kind::Kbuild);
    if by_diagnostics && !first.success() && json_errors(&first.stderr).next().is_none() {
        bail!("rustc {} without a diagnostic: {said}", ending(first));
    }
    match step.kind {
        Kind::Probe => {
            let classified = probe::classify(&first.stderr);
            let probe = classified.as_ref().cloned();
            result.probe = Some(probe.map_err(|error| format!("{error:#}")));
            classified.map(|_| ())
        }
        Kind::Run => {
            if !first.success() {
                Err(anyhow!("the module {}: {said}", ending(first)))
            } else if first.stdout.trim().is_empty() {
                Err(anyhow!("the module logged nothing"))
            } else {
                result.log = Some(first.stdout.clone());
                Ok(())
            }
        }
        Kind::Usage | Kind::CrateUsage | Kind::CargoUsage => {
            let read = read_gate_errors(&step.kind.diagnostics(first));
            // Any error but a gate error makes the places incomplete.
            let other = read.other_error.clone();
            if crate_usage
                && !first.success()
                && read.places.is_empty()
                && read.attributes.is_empty()
            {
                // rustc's own error where it gave one, else Cargo's first error line.
                let said = other.unwrap_or_else(|| {
                    let lines = || first.stderr.lines().chain(first.stdout.lines());
                    lines()
                        .find(|line| line.starts_with("error"))
                        .or_else(|| lines().find(|line| !line.trim().is_empty()))
                        .unwrap_or("it printed nothing")
                        .to_string()
                });
                bail!("the compile {}: {said}", ending(first));
            }
            result.usage = Some(read);
            other.map_or(Ok(()), |error| Err(anyhow!(error)))
        }
        Kind::Kbuild => {
            // The compile is expected to fail: what counts is which errors it gave.
            let errors = error_diagnostics(&first.stderr);
            let codes = errors.iter().map(|(code, _)| code.clone());
            result.error_codes = Some(crate::distinct(codes.filter(|code| !code.is_empty())));
            match errors.first() {
                None => Ok(()),
                Some((code, message)) => Err(anyhow!(error_line(code, message))),
            }
        }
        Kind::Targets => {
            if !first.success() {
                bail!("rustc --print target-list {}: {said}", ending(first));
            }
            // Every name, not only the table's: a row added later must find its answer cached.
            result.targets = Some(parse_target_list(&first.stdout));
            Ok(())
        }
        Kind::Build | Kind::Test | Kind::Core | Kind::Objects | Kind::Emulate
            if !first.success() =>
        {
            // rustc's own error when it printed one; otherwise how it ended (a crash, a
            // wrapper's failure, a missing library) and the first thing it said.
            let said_error = first.stderr.lines().any(|line| line.starts_with("error"))
                && missing_library(&first.stderr).is_none()
                && first.code().is_some();
            let printed = first_line_or(&first.stderr, "it printed nothing");
            let error = first_rustc_error(&first.stderr).filter(|_| said_error);
            let ended = || anyhow!("rustc {}: {printed}", ending(first));
            Err(error.map_or_else(ended, anyhow::Error::msg))
        }
        Kind::Build | Kind::Core | Kind::Objects => Ok(()),
        Kind::Emulate => {
            let Some(ran) = outputs.get(1) else {
                return Ok(());
            };
            if ran.success() {
                // Exit status 0 is also what a runner says that never ran the program: only the
                // program's own last line, with its checks counted, says it ran to the end.
                completed_checks(&ran.stdout).with_context(|| {
                    format!(
                        "{} exited 0, but the test program did not say it completed",
                        step.processes[1].program.display()
                    )
                })?;
                result.log = Some(ran.stdout.clone());
                return Ok(());
            }
            let said = ran
                .stdout
                .lines()
                .chain(ran.stderr.lines())
                .rfind(|line| !line.trim().is_empty())
                .unwrap_or("no output");
            Err(anyhow!("the test program {}: {said}", ending(ran)))
        }
        Kind::Test => {
            let Some(tested) = outputs.get(1) else {
                return Ok(());
            };
            if tested.status == Err(Killed::Timeout) {
                bail!("{} {}", step.processes[1].program.display(), ending(tested));
            }
            let summary = TestSummary::parse(&tested.stdout);
            result.tests = summary
                .as_ref()
                .map(|summary| (summary.passed, summary.failed, summary.ignored));
            match (tested.status, summary) {
                (Ok(status), Some(summary)) if status.success() && summary.failed == 0 => Ok(()),
                (Ok(_), summary) => Err(anyhow!(test_failure(summary, tested))),
                (Err(_), _) => Err(anyhow!("the test binary {}", ending(tested))),
            }
        }
    }
}

/// The number of checks the test program (`xtask/programs/run.rs`) made: its last line must be
/// `ok: N checks`, N the number of `  pass: ` lines before it, and more than none.
pub fn completed_checks(stdout: &str) -> anyhow::Result<usize> {
    let last = stdout
        .lines()
        .rfind(|line| !line.trim().is_empty())
        .context("it printed nothing")?;
    let count = last
        .strip_prefix("ok: ")
        .and_then(|rest| rest.strip_suffix(" checks"))
        .and_then(|count| count.parse::<usize>().ok())
        .ok_or_else(|| anyhow!("its last line is {last:?}, not `ok: N checks`"))?;
    let passed = stdout
        .lines()
        .filter(|line| line.starts_with("  pass: "))
        .count();
    if count == 0 || count != passed {
        bail!("it says `{last}` after printing {passed} passed checks");
    }
    Ok(count)
}

fn first_line_or<'a>(text: &'a str, otherwise: &'a str) -> &'a str {
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or(otherwise)
}

/// The line that explains a failed test run: the failing tests, and the first one's panic.
fn test_failure(summary: Option<TestSummary>, output: &ProcessOutput) -> String {
    if let Some(summary) = summary.filter(|summary| !summary.failures.is_empty()) {
        let failing: Vec<&str> = summary
            .failures
            .iter()
            .map(|(name, _)| name.as_str())
            .collect();
        // Since Rust 1.73 the panic message is on the line after `panicked at FILE:LINE:COL:`.
        let first = &summary.failures[0].1;
        let mut lines = first
            .lines()
            .skip_while(|line| !line.contains("panicked at"));
        let panic = lines.next().map(str::trim).map_or(String::new(), |line| {
            match lines.next().filter(|_| line.ends_with(':')) {
                Some(message) => format!(": {line} {}", message.trim()),
                None => format!(": {line}"),
            }
        });
        return format!(
            "{} of {} tests failed ({}){panic}",
            summary.failed,
            summary.passed + summary.failed,
            failing.join(", ")
        );
    }
    let last = output
        .stderr
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("no output");
    let ending = output
        .status
        .map_or_else(|_| "no exit status".to_string(), describe_status);
    format!("the test binary ended with {ending}: {last}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_test_run_is_named_with_its_first_panic() {
        let output = ProcessOutput {
            status: Err(Killed::Timeout),
            stdout: String::new(),
            stderr: String::new(),
            complete: true,
            seconds: 0.0,
        };
        let summary = |said: &str| TestSummary {
            passed: 1,
            failed: 1,
            failures: vec![("t::b".into(), said.into())],
            ..TestSummary::default()
        };
        let since_1_73 = "noise\nthread 'b' panicked at t.rs:2:57:\n  boom  \nmore\n";
        assert_eq!(
            test_failure(Some(summary(since_1_73)), &output),
            "1 of 2 tests failed (t::b): thread 'b' panicked at t.rs:2:57: boom"
        );
        let before = "thread 'b' panicked at 'boom', t.rs:2:57\nnote: backtrace\n";
        assert_eq!(
            test_failure(Some(summary(before)), &output),
            "1 of 2 tests failed (t::b): thread 'b' panicked at 'boom', t.rs:2:57"
        );
        let last = "thread 'b' panicked at t.rs:2:57:\n";
        assert_eq!(
            test_failure(Some(summary(last)), &output),
            "1 of 2 tests failed (t::b): thread 'b' panicked at t.rs:2:57:"
        );
        assert_eq!(
            test_failure(Some(summary("no panic\n")), &output),
            "1 of 2 tests failed (t::b)"
        );
    }
}
