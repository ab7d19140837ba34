//! Running the step graph: at most N processes at once, each step after the steps it needs,
//! results from the cache where nothing changed.
//!
//! Processes are spawned with `std::process` rather than xshell: the worker threads each need
//! their own environment per process, a kill after `--timeout`, and both output streams
//! captured, which xshell's single-threaded `Shell` does not offer.

use crate::cache::{file_stamp, Cache, Key, StableHasher};
use crate::expect::Outcome;
use crate::plan::{Invocation, Kind, Step};
use crate::probe::{self, Status};
use crate::report::json::Value;
use std::io::Read;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{mpsc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// What a finished process left behind.
#[derive(Clone, Debug)]
pub struct ProcessOutput {
    /// Its exit status; `None` if it was killed for running too long.
    pub status: Option<ExitStatus>,
    /// Everything it wrote to stdout.
    pub stdout: String,
    /// Everything it wrote to stderr.
    pub stderr: String,
    /// How long it ran.
    pub seconds: f64,
}

impl ProcessOutput {
    /// Whether it exited with status 0.
    pub fn success(&self) -> bool {
        self.status.is_some_and(|status| status.success())
    }
}

/// Runs one process to its end, or kills it after `timeout`.
pub fn run(invocation: &Invocation, timeout: Duration) -> std::io::Result<ProcessOutput> {
    let start = Instant::now();
    let mut child = invocation
        .command()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    // Both pipes are drained on their own threads so that neither can fill and block the
    // child while we wait on the other. Each thread says when its pipe closes: when both have,
    // the child has almost always exited, so the wait below wakes at once instead of polling.
    let (closed, pipe_closed) = mpsc::channel::<()>();
    let drain = |stream: Option<Box<dyn Read + Send>>| {
        let closed = closed.clone();
        thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut stream) = stream {
                let _ = stream.read_to_end(&mut bytes);
            }
            let _ = closed.send(());
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    drop(closed);
    let deadline = start + timeout;
    let mut timed_out = false;
    for _ in 0..2 {
        match pipe_closed.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(()) => {}
            Err(mpsc::RecvTimeoutError::Timeout) => {
                timed_out = true;
                break;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    // A child that closed its pipes but runs on is polled until the deadline.
    let mut pause = Duration::from_millis(1);
    let status = loop {
        if !timed_out {
            if let Some(status) = child.try_wait()? {
                break Some(status);
            }
        }
        if timed_out || Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    };
    Ok(ProcessOutput {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The first error a failed rustc printed, with its location: `error[E0658]: ... (at
/// examples/x.rs:3:5)`.
pub fn first_rustc_error(stderr: &str) -> Option<String> {
    let mut lines = stderr.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("error") && !line.starts_with("error: aborting due to") {
            let location = lines
                .clone()
                .take(3)
                .find_map(|next| next.trim_start().strip_prefix("--> "));
            return Some(match location {
                Some(location) => format!("{line} (at {location})"),
                None => line.to_string(),
            });
        }
    }
    stderr
        .lines()
        .find(|line| !line.trim().is_empty())
        .map(str::to_string)
}

/// The counts libtest prints in its `test result:` line, and each test's own line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TestSummary {
    /// Tests that passed.
    pub passed: u64,
    /// Tests that failed.
    pub failed: u64,
    /// Tests marked `#[ignore]`.
    pub ignored: u64,
    /// Each test's full path and its result word (`ok`, `FAILED`, `ignored`), in output order.
    pub tests: Vec<(String, String)>,
}

impl TestSummary {
    /// Reads libtest's standard output; `None` if it has no `test result:` line (the binary
    /// crashed before the end).
    pub fn parse(stdout: &str) -> Option<TestSummary> {
        let mut summary = TestSummary::default();
        let mut saw_result = false;
        for line in stdout.lines() {
            if let Some(rest) = line.strip_prefix("test ") {
                if let Some((name, result)) = rest.rsplit_once(" ... ") {
                    summary
                        .tests
                        .push((name.to_string(), result.trim().to_string()));
                    continue;
                }
            }
            let Some(counts) = line.strip_prefix("test result: ") else {
                continue;
            };
            saw_result = true;
            for part in counts.split(';') {
                let mut words = part.split_whitespace().rev();
                let (Some(label), Some(number)) = (words.next(), words.next()) else {
                    continue;
                };
                let number: u64 = number.parse().unwrap_or(0);
                match label {
                    "passed" => summary.passed += number,
                    "failed" => summary.failed += number,
                    "ignored" => summary.ignored += number,
                    _ => {}
                }
            }
        }
        saw_result.then_some(summary)
    }

    /// Whether a test whose path ends in `name` ran and printed `ok`.
    pub fn passed_test(&self, name: &str) -> bool {
        self.tests.iter().any(|(path, result)| {
            (path == name || path.ends_with(&format!("::{name}"))) && result == "ok"
        })
    }
}

/// How a step came out.
#[derive(Clone, Debug)]
pub struct StepResult {
    /// Passed, failed, or did not run.
    pub outcome: Outcome,
    /// The first error, for failures and skips.
    pub first_error: Option<String>,
    /// Wall-clock seconds of the run that produced this result (a cached result keeps the
    /// original's).
    pub seconds: f64,
    /// Whether it came from the cache.
    pub cached: bool,
    /// For tests that ran: libtest's counts (names are not kept).
    pub tests: Option<(u64, u64, u64)>,
    /// For the probe: one status per catalog feature, or why the probe failed.
    pub probe: Option<Result<Vec<Status>, String>>,
    /// For an example's run: the module log it printed.
    pub log: Option<String>,
}

impl StepResult {
    fn skipped(reason: String) -> Self {
        StepResult {
            outcome: Outcome::Skipped,
            first_error: Some(reason),
            seconds: 0.0,
            cached: false,
            tests: None,
            probe: None,
            log: None,
        }
    }

    fn to_cache_entry(&self, artifact: Option<(u64, u128)>) -> Value {
        let probe = match &self.probe {
            None => Value::Null,
            Some(Ok(statuses)) => Value::Array(
                statuses
                    .iter()
                    .map(|status| {
                        Value::String(match status.stable_since() {
                            Some(since) => format!("stable {since}"),
                            None => status.word().to_string(),
                        })
                    })
                    .collect(),
            ),
            Some(Err(error)) => Value::Object(vec![("error".into(), Value::String(error.clone()))]),
        };
        Value::Object(vec![
            ("outcome".into(), Value::String(self.outcome.word().into())),
            (
                "first_error".into(),
                Value::opt_string(self.first_error.clone()),
            ),
            ("seconds".into(), Value::Number(self.seconds)),
            (
                "tests".into(),
                self.tests.map_or(Value::Null, |(passed, failed, ignored)| {
                    Value::Array(vec![
                        Value::Number(passed as f64),
                        Value::Number(failed as f64),
                        Value::Number(ignored as f64),
                    ])
                }),
            ),
            ("probe".into(), probe),
            ("log".into(), Value::opt_string(self.log.clone())),
            (
                "artifact".into(),
                artifact.map_or(Value::Null, |(size, modified)| {
                    Value::String(format!("{size} {modified}"))
                }),
            ),
        ])
    }

    fn from_cache_entry(entry: &Value, artifact: Option<&Path>) -> Option<Self> {
        if let Some(path) = artifact {
            let (size, modified) = file_stamp(path)?;
            if entry.get("artifact")?.as_str()? != format!("{size} {modified}") {
                return None;
            }
        }
        let probe = match entry.get("probe")? {
            Value::Null => None,
            Value::Array(words) => Some(Ok(words
                .iter()
                .map(|word| {
                    let word = word.as_str()?;
                    Some(match word.strip_prefix("stable ") {
                        Some(since) => Status::Stable(crate::catalog::Release::parse(since)?),
                        None => [Status::Gated, Status::Unknown, Status::Removed]
                            .into_iter()
                            .find(|status| status.word() == word)?,
                    })
                })
                .collect::<Option<Vec<_>>>()?)),
            error => Some(Err(error.get("error")?.as_str()?.to_string())),
        };
        let tests = match entry.get("tests")? {
            Value::Null => None,
            counts => {
                let counts = counts.as_array()?;
                Some((
                    counts.first()?.as_u64()?,
                    counts.get(1)?.as_u64()?,
                    counts.get(2)?.as_u64()?,
                ))
            }
        };
        Some(StepResult {
            outcome: Outcome::from_word(entry.get("outcome")?.as_str()?)?,
            first_error: entry.get("first_error")?.as_str().map(String::from),
            seconds: entry.get("seconds")?.as_f64()?,
            cached: true,
            tests,
            probe,
            log: entry.get("log")?.as_str().map(String::from),
        })
    }
}

/// Computes every step's cache key: the compiler's identity, the command lines, the inputs'
/// contents and the keys of the steps it needs (so a changed shim reruns everything built on
/// it).
pub fn cache_keys(
    steps: &[Step],
    compiler_identity: &dyn Fn(usize) -> Key,
    file_hash: &mut dyn FnMut(&Path) -> anyhow::Result<Key>,
) -> anyhow::Result<Vec<Key>> {
    let mut keys: Vec<Key> = Vec::with_capacity(steps.len());
    for step in steps {
        let mut hasher = StableHasher::new();
        hasher
            .field("kshim matrix step v2")
            .field(step.kind.word())
            .number(compiler_identity(step.toolchain).0);
        for invocation in std::iter::once(&step.compile).chain(&step.run) {
            hasher.field(invocation.program.to_string_lossy().as_bytes());
            hasher.number(invocation.args.len() as u128);
            for arg in &invocation.args {
                hasher.field(arg);
            }
            for (name, value) in &invocation.env {
                hasher.field("set").field(name).field(value);
            }
            for name in &invocation.env_remove {
                hasher.field("remove").field(name);
            }
        }
        for input in &step.inputs {
            hasher
                .field(input.to_string_lossy().as_bytes())
                .number(file_hash(input)?.0);
        }
        for &dep in &step.deps {
            hasher.number(keys[dep].0);
        }
        keys.push(hasher.finish());
    }
    Ok(keys)
}

/// What the runner reports while it works.
pub trait Progress: Sync {
    /// A step is about to run (not called for cache hits).
    fn started(&self, index: usize, step: &Step);
    /// A step finished; `done` steps of the total are finished now.
    fn finished(&self, index: usize, step: &Step, result: &StepResult, done: usize);
}

/// Runs a step's processes (or reads its cached result).
fn run_step(step: &Step, key: Key, cache: &Cache, timeout: Duration) -> StepResult {
    if let Some(result) = cache
        .load(key)
        .and_then(|entry| StepResult::from_cache_entry(&entry, step.artifact.as_deref()))
    {
        return result;
    }
    for directory in &step.directories {
        if let Err(error) = std::fs::create_dir_all(directory) {
            return StepResult {
                outcome: Outcome::Fail,
                first_error: Some(format!("creating {}: {error}", directory.display())),
                ..StepResult::skipped(String::new())
            };
        }
    }
    let mut result = StepResult::skipped(String::new());
    result.first_error = None;
    let mut cacheable = true;
    let failed = |message: String| (Outcome::Fail, Some(message));
    let compile = run(&step.compile, timeout);
    let (outcome, first_error) = match &compile {
        Err(error) => {
            cacheable = false;
            failed(format!(
                "cannot run {}: {error}",
                step.compile.program.display()
            ))
        }
        Ok(output) if output.status.is_none() => {
            cacheable = false;
            failed(format!(
                "{} killed after {} s (--timeout)",
                step.compile.program.display(),
                timeout.as_secs()
            ))
        }
        Ok(output) if step.kind == Kind::Probe => {
            result.seconds = output.seconds;
            let classified = probe::classify(&output.stderr);
            let outcome = match &classified {
                Ok(_) => (Outcome::Pass, None),
                Err(error) => failed(error.clone()),
            };
            result.probe = Some(classified);
            outcome
        }
        Ok(output) if step.kind == Kind::Run => {
            result.seconds = output.seconds;
            if !output.success() {
                let status = output
                    .status
                    .map_or_else(|| "no status".to_string(), |status| status.to_string());
                let first = output
                    .stderr
                    .lines()
                    .find(|line| !line.trim().is_empty())
                    .unwrap_or("no output on stderr");
                failed(format!("the module exited with {status}: {first}"))
            } else if output.stdout.trim().is_empty() {
                failed("the module logged nothing".into())
            } else {
                result.log = Some(output.stdout.clone());
                (Outcome::Pass, None)
            }
        }
        Ok(output) if !output.success() => {
            result.seconds = output.seconds;
            failed(
                first_rustc_error(&output.stderr)
                    .unwrap_or_else(|| "rustc failed and printed nothing".into()),
            )
        }
        Ok(output) => {
            result.seconds = output.seconds;
            match &step.run {
                None => (Outcome::Pass, None),
                Some(run_invocation) => match run(run_invocation, timeout) {
                    Err(error) => {
                        cacheable = false;
                        failed(format!(
                            "cannot run {}: {error}",
                            run_invocation.program.display()
                        ))
                    }
                    Ok(tested) => {
                        result.seconds += tested.seconds;
                        let summary = TestSummary::parse(&tested.stdout);
                        result.tests = summary
                            .as_ref()
                            .map(|summary| (summary.passed, summary.failed, summary.ignored));
                        match (&tested.status, summary) {
                            (None, _) => {
                                cacheable = false;
                                failed(format!(
                                    "test binary killed after {} s (--timeout)",
                                    timeout.as_secs()
                                ))
                            }
                            (Some(status), Some(summary))
                                if status.success() && summary.failed == 0 =>
                            {
                                (Outcome::Pass, None)
                            }
                            (Some(status), summary) => {
                                failed(test_failure(status, summary, &tested))
                            }
                        }
                    }
                },
            }
        }
    };
    result.outcome = outcome;
    result.first_error = first_error;
    if cacheable {
        let artifact = step.artifact.as_deref().and_then(file_stamp);
        // A cache that cannot be written costs a rerun next time, nothing more.
        let _ = cache.store(key, &result.to_cache_entry(artifact));
    }
    result
}

/// The first line that explains a failed test run: the failing tests' names, or the panic.
fn test_failure(
    status: &ExitStatus,
    summary: Option<TestSummary>,
    output: &ProcessOutput,
) -> String {
    if let Some(summary) = summary {
        let failing: Vec<&str> = summary
            .tests
            .iter()
            .filter(|(_, result)| result == "FAILED")
            .map(|(name, _)| name.as_str())
            .collect();
        if !failing.is_empty() {
            // Since Rust 1.73 the panic message is on the line after `panicked at FILE:LINE:COL:`.
            let lines: Vec<&str> = output.stdout.lines().chain(output.stderr.lines()).collect();
            let panic = lines
                .iter()
                .position(|line| line.contains("panicked at"))
                .map(|index| {
                    let mut text = lines[index].trim().to_string();
                    if text.ends_with(':') {
                        if let Some(message) = lines.get(index + 1) {
                            text.push(' ');
                            text.push_str(message.trim());
                        }
                    }
                    format!(": {text}")
                })
                .unwrap_or_default();
            return format!(
                "{} of {} tests failed ({}){panic}",
                summary.failed,
                summary.passed + summary.failed,
                failing.join(", ")
            );
        }
    }
    let last = output
        .stderr
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("no output");
    format!("test binary exited with {status}: {last}")
}

/// Runs every step with at most `jobs` at once, each after the steps it depends on; a step
/// whose dependency did not pass is skipped with the reason.
pub fn execute(
    steps: &[Step],
    keys: &[Key],
    cache: &Cache,
    jobs: usize,
    timeout: Duration,
    progress: &dyn Progress,
) -> Vec<StepResult> {
    struct State {
        started: Vec<bool>,
        results: Vec<Option<StepResult>>,
        done: usize,
    }
    let state = Mutex::new(State {
        started: vec![false; steps.len()],
        results: vec![None; steps.len()],
        done: 0,
    });
    let wake = Condvar::new();
    let worker = || loop {
        let mut guard = state.lock().unwrap_or_else(|poison| poison.into_inner());
        // The lowest-numbered step whose dependencies are finished: the plan puts the steps
        // that others wait for first.
        let next = loop {
            if guard.done == steps.len() {
                return;
            }
            let ready = (0..steps.len()).find(|&index| {
                !guard.started[index]
                    && steps[index]
                        .deps
                        .iter()
                        .all(|&dep| guard.results[dep].is_some())
            });
            match ready {
                Some(index) => break index,
                None => {
                    guard = wake
                        .wait(guard)
                        .unwrap_or_else(|poison| poison.into_inner())
                }
            }
        };
        guard.started[next] = true;
        let step = &steps[next];
        let blocked = step.deps.iter().find_map(|&dep| {
            let result = guard.results[dep].as_ref()?;
            (result.outcome != Outcome::Pass).then(|| {
                format!(
                    "not run: {} {}",
                    steps[dep].label(),
                    if result.outcome == Outcome::Fail {
                        "failed"
                    } else {
                        "did not run"
                    }
                )
            })
        });
        drop(guard);
        let result = match blocked {
            Some(reason) => StepResult::skipped(reason),
            None => {
                progress.started(next, step);
                run_step(step, keys[next], cache, timeout)
            }
        };
        let mut guard = state.lock().unwrap_or_else(|poison| poison.into_inner());
        guard.done += 1;
        progress.finished(next, step, &result, guard.done);
        guard.results[next] = Some(result);
        drop(guard);
        wake.notify_all();
    };
    thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(worker);
        }
    });
    state
        .into_inner()
        .unwrap_or_else(|poison| poison.into_inner())
        .results
        .into_iter()
        .map(|result| result.unwrap_or_else(|| StepResult::skipped("not run".into())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_libtest_output() {
        let stdout = "\nrunning 3 tests\n\
            test sync::tests::gated_matches_replacement_unsize ... ok\n\
            test tests::slow ... ignored\n\
            test tests::broken ... FAILED\n\n\
            test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
        let summary = TestSummary::parse(stdout).unwrap();
        assert_eq!((summary.passed, summary.failed, summary.ignored), (1, 1, 1));
        assert!(summary.passed_test("gated_matches_replacement_unsize"));
        assert!(!summary.passed_test("broken"));
        assert!(!summary.passed_test("replacement_unsize"));
        assert_eq!(TestSummary::parse("running 1 test\n"), None);
    }

    #[test]
    fn finds_the_first_rustc_error_and_its_place() {
        let stderr = "warning: unused\n --> a.rs:1:1\n\
            error[E0658]: use of unstable library feature\n  --> examples/x.rs:3:5\n   |\n\
            error: aborting due to 1 previous error\n";
        assert_eq!(
            first_rustc_error(stderr).unwrap(),
            "error[E0658]: use of unstable library feature (at examples/x.rs:3:5)"
        );
    }

    #[test]
    fn cache_entries_round_trip() {
        let result = StepResult {
            outcome: Outcome::Pass,
            first_error: None,
            seconds: 1.5,
            cached: false,
            log: Some("[info] m: init\n".into()),
            tests: Some((12, 0, 1)),
            probe: Some(Ok(vec![
                Status::Stable(crate::catalog::Release::new(1, 79, 0)),
                Status::Gated,
                Status::Unknown,
            ])),
        };
        let entry = result.to_cache_entry(None);
        let back = StepResult::from_cache_entry(&entry, None).unwrap();
        assert!(back.cached);
        assert_eq!(back.tests, result.tests);
        assert_eq!(back.probe, result.probe);
        assert_eq!(back.log, result.log);
        assert_eq!(back.outcome, Outcome::Pass);
        // An artifact that is gone makes the entry stale.
        assert!(StepResult::from_cache_entry(
            &result.to_cache_entry(Some((1, 2))),
            Some(Path::new("/nonexistent/libkernel.rlib"))
        )
        .is_none());
    }
}
