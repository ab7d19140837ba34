// SPDX-License-Identifier: GPL-2.0
//! Reading a booted kernel's serial console: its lines without the `PRINTK_TIME` stamps, the
//! KUnit results in KTAP (suites, their cases, each failure with the lines it printed), a KTAP
//! line that does not parse, and how the boot ended (the reboot `kunit_shutdown=reboot` asks
//! for, a panic, an oops, a `BUG:`, or nothing: a console cut short).

/// The console's lines, each without its trailing `\r` (a serial line's) and its
/// `[    0.418530] ` stamp.
pub(crate) fn lines(console: &str) -> Vec<&str> {
    let is_time = |stamp: &str| {
        let stamp = stamp.trim_start();
        !stamp.is_empty() && stamp.chars().all(|c| c.is_ascii_digit() || c == '.')
    };
    console
        .lines()
        .map(|line| {
            let line = line.trim_end_matches('\r');
            match line
                .strip_prefix('[')
                .and_then(|rest| rest.split_once("] "))
            {
                Some((stamp, after)) if is_time(stamp) => after,
                _ => line,
            }
        })
        .collect()
}

/// How one test or suite ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Pass,
    Fail,
    Skip,
}

/// A KUnit case (a test one level below its suite).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Case {
    pub name: String,
    pub outcome: Outcome,
    /// What it printed between the previous result and its own (its diagnostics, a failed
    /// expectation's place and values).
    pub output: Vec<String>,
}

/// A KUnit suite: its plan, its cases and its own result line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Suite {
    pub name: String,
    pub plan: Option<usize>,
    pub cases: Vec<Case>,
    pub result: Option<Outcome>,
}

/// All the KTAP a console holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Ktap {
    /// Whether a `KTAP version` (or `TAP version`) line was seen at all.
    pub started: bool,
    /// The top level's `1..N`.
    pub plan: Option<usize>,
    pub suites: Vec<Suite>,
    /// Lines that look like KTAP's own (a result, a plan, a version) but do not parse, or
    /// break its order.
    pub unparsed: Vec<String>,
}

/// One line's content as KTAP reads it, after its indentation.
#[derive(Debug, PartialEq, Eq)]
enum Line<'a> {
    Version,
    Plan(usize),
    /// `ok 3 name # SKIP why` or `not ok 1 name`: the number, the name and the outcome.
    Result(usize, String, Outcome),
    Subtest(&'a str),
    /// Not KTAP's own: a diagnostic (`# ...`), kernel log, or the text of a test's message.
    Other,
    /// Looks like KTAP's own and does not parse.
    Bad,
}

fn classify(content: &str) -> Line<'_> {
    if content.starts_with("KTAP version ") || content.starts_with("TAP version ") {
        let number = content.rsplit(' ').next().unwrap_or("");
        return number.parse::<u32>().map_or(Line::Bad, |_| Line::Version);
    }
    if let Some(count) = content.strip_prefix("1..") {
        return count.trim_end().parse().map_or(Line::Bad, Line::Plan);
    }
    if let Some(name) = content.strip_prefix("# Subtest:") {
        return Line::Subtest(name.trim());
    }
    let failed = content.starts_with("not ok");
    let Some(rest) = content.strip_prefix(if failed { "not ok" } else { "ok" }) else {
        return Line::Other;
    };
    // `okay, ...` or `ok-ish` are ordinary words, not results.
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return if failed { Line::Bad } else { Line::Other };
    }
    let rest = rest.trim_start();
    let (number, after) = rest.split_once(' ').unwrap_or((rest, ""));
    let Ok(number) = number.parse::<usize>() else {
        return Line::Bad;
    };
    let (name, directive) = after.split_once('#').unwrap_or((after, ""));
    let directive = directive.trim_start().to_ascii_uppercase();
    let outcome = match (failed, directive.starts_with("SKIP")) {
        (true, _) => Outcome::Fail,
        (false, true) => Outcome::Skip,
        (false, false) => Outcome::Pass,
    };
    Line::Result(number, name.trim().to_owned(), outcome)
}

/// Reads the KTAP in `lines` (from [`lines`]). The top level holds the suites; one level down
/// (four spaces) their cases; deeper levels (a parameterised case's runs) are counted in their
/// case, as output. Lines before the first version line are the boot's, not KTAP.
pub(crate) fn ktap(lines: &[&str]) -> Ktap {
    let mut ktap = Ktap::default();
    // The suite being read (between its header and its top-level result), and the lines
    // printed since the last case's result.
    let mut open: Option<Suite> = None;
    let mut pending: Vec<String> = Vec::new();
    for line in lines {
        let content = line.trim_start_matches(' ');
        let indent = line.len() - content.len();
        let (line, parsed) = (line.trim_end(), classify(content.trim_end()));
        if !ktap.started {
            if indent == 0 && parsed == Line::Version {
                ktap.started = true;
            }
            continue;
        }
        if parsed == Line::Bad {
            ktap.unparsed.push(line.to_owned());
            continue;
        }
        match (indent / 4, parsed) {
            (0, Line::Plan(count)) => {
                if ktap.plan.replace(count).is_some() {
                    ktap.unparsed
                        .push(format!("{line} (a second top-level plan)"));
                }
            }
            (0, Line::Result(number, name, outcome)) => {
                let mut suite = open.take().unwrap_or_default();
                if suite.name.is_empty() {
                    suite.name = name;
                }
                let expected = ktap.suites.len() + 1;
                if number != expected {
                    let unparsed = format!("{line} (suite number {expected} was expected)");
                    ktap.unparsed.push(unparsed);
                }
                suite.result = Some(outcome);
                ktap.suites.push(suite);
                pending.clear();
            }
            (0, _) => {}
            (1, Line::Version) => {
                // A suite's header starts it, unless its `# Subtest:` line came first.
                if open.as_ref().is_none_or(|suite| suite.plan.is_some()) {
                    open = Some(Suite::default());
                }
            }
            (1, Line::Subtest(name)) => {
                let suite = open.get_or_insert_with(Suite::default);
                if suite.plan.is_some() || !suite.name.is_empty() {
                    *suite = Suite::default();
                }
                suite.name = name.to_owned();
            }
            (1, Line::Plan(count)) => {
                let suite = open.get_or_insert_with(Suite::default);
                if suite.plan.replace(count).is_some() {
                    ktap.unparsed
                        .push(format!("{line} (a second plan in its suite)"));
                }
            }
            (1, Line::Result(number, name, outcome)) => {
                let suite = open.get_or_insert_with(Suite::default);
                let expected = suite.cases.len() + 1;
                if number != expected {
                    let unparsed = format!("{line} (case number {expected} was expected)");
                    ktap.unparsed.push(unparsed);
                }
                suite.cases.push(Case {
                    name,
                    outcome,
                    output: std::mem::take(&mut pending),
                });
            }
            _ => pending.push(line.to_owned()),
        }
    }
    if let Some(suite) = open {
        // A suite whose result never came: kept, so that the end can name it.
        ktap.suites.push(suite);
    }
    ktap
}

impl Ktap {
    /// What is missing for the KTAP to be whole: no KTAP, a plan not met, a suite without its
    /// result line.
    pub(crate) fn incomplete(&self) -> Vec<String> {
        if !self.started {
            return vec!["no KTAP output (KUnit never started)".to_owned()];
        }
        let mut missing = Vec::new();
        let finished = self.suites.iter().filter(|s| s.result.is_some()).count();
        match self.plan {
            None => missing.push("no top-level KTAP plan".to_owned()),
            Some(plan) if plan != finished => missing.push(format!(
                "the top-level plan is 1..{plan}, {finished} suites reported a result"
            )),
            Some(_) => {}
        }
        for suite in &self.suites {
            let name = Some(suite.name.as_str()).filter(|name| !name.is_empty());
            let name = name.unwrap_or("(unnamed)");
            if suite.result.is_none() {
                missing.push(format!(
                    "suite {name} has no result line ({} cases reported)",
                    suite.cases.len()
                ));
            }
            match suite.plan {
                Some(plan) if plan != suite.cases.len() => missing.push(format!(
                    "suite {name}: plan 1..{plan}, {} cases reported",
                    suite.cases.len()
                )),
                // A suite reported with no subtests at all (its plan-less `ok N name`).
                None if !suite.cases.is_empty() => {
                    missing.push(format!("suite {name} has no plan"))
                }
                _ => {}
            }
        }
        missing
    }

    /// The cases of every suite, with their suite's name.
    pub(crate) fn cases(&self) -> impl Iterator<Item = (&str, &Case)> {
        self.suites.iter().flat_map(|suite| {
            suite
                .cases
                .iter()
                .map(move |case| (suite.name.as_str(), case))
        })
    }
}

/// How the kernel's run ended, read from its console.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Ending {
    /// The first panic, oops or `BUG:` line.
    pub crash: Option<String>,
    /// Whether `reboot: Restarting system` came (after the last KTAP line).
    pub rebooted: bool,
}

/// The line `kernel_restart()` prints (`kernel/reboot.c`, with its `reboot: ` prefix) when
/// `kunit_shutdown=reboot` ends the run.
pub(crate) const REBOOT_LINE: &str = "reboot: Restarting system";

/// How the boot ended: a crash anywhere, and the reboot after the KTAP.
pub(crate) fn ending(lines: &[&str]) -> Ending {
    let crash = lines
        .iter()
        .find(|line| is_crash(line))
        .map(|line| line.trim().to_owned());
    let last_ktap = lines
        .iter()
        .rposition(|line| matches!(classify(line.trim()), Line::Result(..) | Line::Plan(_)))
        .unwrap_or(0);
    let rebooted = lines[last_ktap..]
        .iter()
        .any(|line| line.trim() == REBOOT_LINE);
    Ending { crash, rebooted }
}

fn is_crash(line: &str) -> bool {
    let line = line.trim_start();
    let starts = ["Kernel panic", "BUG:", "Oops", "KVM internal error"];
    starts.iter().any(|start| line.starts_with(start)) || line.contains("] Oops:")
}

/// The last `count` lines of the console, stamps and all, for a reader.
pub(crate) fn tail(console: &str, count: usize) -> String {
    let lines: Vec<&str> = console
        .lines()
        .map(|line| line.trim_end_matches('\r'))
        .filter(|line| !line.trim().is_empty())
        .collect();
    lines[lines.len().saturating_sub(count)..].join("\n")
}
