// SPDX-License-Identifier: GPL-2.0
//! What a libtest binary reported, read from its JSON events (`--format json -Z
//! unstable-options`): the counts and each test's result, with a failing test's own output
//! kept inside its event, where it cannot be mistaken for results.

use crate::util::json::{self, Value};

/// The arguments that make a test binary report JSON events; stable-built binaries accept
/// them with `RUSTC_BOOTSTRAP=1` in their environment.
pub const JSON_ARGS: [&str; 4] = ["--format", "json", "-Z", "unstable-options"];

/// The counts of libtest's closing `suite` event, and each test's own result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TestSummary {
    pub passed: u64,
    pub failed: u64,
    pub ignored: u64,
    /// Each test's full path and its result (`ok`, `failed`, `ignored`), in output order.
    pub tests: Vec<(String, String)>,
    /// Each failing test's path and what it printed (its panic message among it).
    pub failures: Vec<(String, String)>,
}

impl TestSummary {
    /// Reads a test binary's standard output; `None` without the closing `suite` event (the
    /// binary crashed or was killed before the end). Lines that are not libtest's events are
    /// passed over.
    pub fn parse(stdout: &str) -> Option<TestSummary> {
        let mut summary = TestSummary::default();
        let mut finished = false;
        for line in stdout.lines().filter(|line| line.starts_with('{')) {
            let Ok(event) = json::parse(line) else {
                continue;
            };
            let text = |key: &str| event.get(key).and_then(Value::as_str);
            let count = |key: &str| event.get(key).and_then(Value::as_u64).unwrap_or(0);
            match (text("type"), text("event")) {
                (Some("suite"), Some("ok" | "failed")) => {
                    finished = true;
                    summary.passed = count("passed");
                    summary.failed = count("failed");
                    summary.ignored = count("ignored");
                }
                (Some("test"), Some(result @ ("ok" | "failed" | "ignored"))) => {
                    let name = text("name").unwrap_or_default().to_string();
                    if result == "failed" {
                        let output = text("stdout").unwrap_or_default().to_string();
                        summary.failures.push((name.clone(), output));
                    }
                    summary.tests.push((name, result.to_string()));
                }
                _ => {}
            }
        }
        finished.then_some(summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // What `rustc --test` 1.95.0's binary printed, run with JSON_ARGS and RUSTC_BOOTSTRAP=1,
    // for tests `a` (passes), `b` (prints a fake summary, then panics) and `c` (ignored).
    const EVENTS: &str = r#"{ "type": "suite", "event": "started", "test_count": 3 }
{ "type": "test", "event": "started", "name": "a" }
{ "type": "test", "event": "started", "name": "b" }
{ "type": "test", "name": "a", "event": "ok" }
{ "type": "test", "event": "started", "name": "c" }
{ "type": "test", "name": "c", "event": "ignored" }
{ "type": "test", "name": "b", "event": "failed", "stdout": "test result: ok. 7 passed\n\nthread 'b' (5377) panicked at t.rs:2:57:\nboom\n" }
{ "type": "suite", "event": "failed", "passed": 1, "failed": 1, "ignored": 1, "measured": 0, "filtered_out": 0, "exec_time": 0.25 }
"#;

    #[test]
    fn reads_libtest_events() {
        let summary = TestSummary::parse(EVENTS).unwrap();
        assert_eq!((summary.passed, summary.failed, summary.ignored), (1, 1, 1));
        assert_eq!(summary.tests[0], ("a".into(), "ok".into()));
        assert_eq!(summary.tests[1], ("c".into(), "ignored".into()));
        assert_eq!(summary.failures.len(), 1);
        assert!(summary.failures[0].1.contains("panicked at t.rs:2:57"));
    }

    #[test]
    fn a_test_that_prints_results_cannot_fake_them() {
        let printed = "test result: ok. 7 passed; 0 failed\nrunning 9 tests\n";
        assert_eq!(TestSummary::parse(printed), None);
        let summary = TestSummary::parse(&format!("{printed}{EVENTS}")).unwrap();
        assert_eq!((summary.passed, summary.failed), (1, 1));
    }

    #[test]
    fn an_unfinished_run_has_no_summary() {
        let cut = EVENTS.lines().take(4).collect::<Vec<_>>().join("\n");
        assert_eq!(TestSummary::parse(&cut), None);
    }
}
