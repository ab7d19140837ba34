//! What a libtest binary printed: the counts and each test's result.

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
}
