//! `cargo xtask audit`: which of a crate's `#![feature]` lines each toolchain still needs.
//!
//! The feature names come from a crate root ([`input::read_crate_root`], `cfg_attr` conditions
//! included) or from `--features a,b,c`. Every toolchain the matrix would use (the pins, or
//! the `--toolchain` specs) is asked about all of them in one rustc call, the matrix's probe
//! ([`crate::probe::probe_source_for`]): stable since which release, unstable, or unknown.
//! [`summary`] turns the answers into what they mean for the crate, and `--min-rust` into a
//! lint. Missing, broken and too-old toolchains are reported, never fatal.
//!
//! # The JSON report (`--format json`)
//!
//! ```text
//! {
//!   "schema": 1,
//!   "path": "kernel-shim/src/lib.rs",  // null for --features
//!   "min_rust": "1.85.0",              // or null
//!   "verdict": "failure",              // "failure" (exit 1): --min-rust found something, or
//!                                      // no compiler answered
//!   "features": [{"name": "inline_const", "line": 23, "column": 1,   // null for --features
//!                 "condition": "kshim_kernel_mode"}],                 // null: unconditional
//!   "toolchains": [{
//!     "id": "1.95.0", "spec": "rustup:1.95.0", "release": "1.95.0",  // release null if unknown
//!     "verdict": "ok",                 // "ok" | "too-old" | "broken" | "missing"
//!     "error": null,                   // why it was not probed, or how its probe failed
//!     "features": {"inline_const": {"status": "stable", "stable_since": "1.79.0",
//!                                   "active": true}},  // active: true | false | null (undecided)
//!     "needs_bootstrap": ["arbitrary_self_types"],     // active and still unstable
//!     "summary": "1.95.0: ..."
//!   }],
//!   "stable_from": null,               // from this release on, only stable Rust is needed
//!   "never_stable": ["arbitrary_self_types"],
//!   "known_from": "1.63.0",            // lowest probed release knowing every active feature
//!   "removable": [{"name": "inline_const", "at": "kernel-shim/src/lib.rs:23", "reason": "..."}],
//!   "dead": [{"name": "coerce_unsized", "at": "...", "reason": "..."}]
//! }
//! ```

pub mod attributes;
pub mod input;
pub mod summary;

use crate::catalog::Release;
use crate::diagnostics::first_rustc_error;
use crate::expect::ToolchainVerdict;
use crate::json::{self, Value};
use crate::output::{Format, Table};
use crate::plan::Rustc;
use crate::probe;
use crate::process;
use crate::status::Status;
use crate::toolchain::{discover, Availability, VERSION_TIMEOUT};
use crate::{flags, project_root, Verdict};
use anyhow::{bail, Context};
use input::Input;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;
use summary::{Answer, CrossSummary, Finding};
use xshell::Shell;

/// The version of the JSON layout above.
pub const SCHEMA_VERSION: u32 = 1;

/// Everything an audit needs, as the flags give it.
#[derive(Clone, Debug)]
pub struct Options {
    /// The feature names and where they come from.
    pub input: Input,
    /// `--toolchain` specs; empty means every pin.
    pub toolchains: Vec<String>,
    /// `--pins`.
    pub pins: Option<PathBuf>,
    /// `--min-rust`.
    pub min_rust: Option<Release>,
    /// Where the probes are written and compiled: a fresh directory per toolchain under it,
    /// removed afterwards.
    pub scratch: PathBuf,
    /// A probe running longer than this is killed.
    pub timeout: Duration,
}

impl Options {
    /// The defaults for an input: every pin, no lint, probes under `target/kshim/audit/`.
    pub fn new(input: Input) -> Self {
        Self {
            input,
            toolchains: Vec::new(),
            pins: None,
            min_rust: None,
            scratch: project_root().join("target/kshim/audit"),
            timeout: process::DEFAULT_TIMEOUT,
        }
    }
}

/// Reads `--min-rust`: `1.85` or `1.85.0`.
pub fn parse_min_rust(text: &str) -> anyhow::Result<Release> {
    let full = if text.matches('.').count() == 1 {
        format!("{text}.0")
    } else {
        text.to_string()
    };
    Release::parse(&full)
        .with_context(|| format!("--min-rust takes a release such as 1.85 or 1.85.0, not {text:?}"))
}

/// What became of one toolchain's probe.
#[derive(Clone, Debug)]
pub enum Probed {
    /// The compiler answered.
    Answered(Answer),
    /// The probe ran but could not be read, or did not run (the message says which).
    Failed(String),
    /// The toolchain is missing or broken; its verdict says why.
    NotProbed,
}

/// One toolchain of the audit.
#[derive(Clone, Debug)]
pub struct Column {
    /// The id, as in the matrix.
    pub id: String,
    /// What was asked for, or how it was found.
    pub spec: String,
    /// The release as `rustc -vV` (or, for a missing pin, the pin file) writes it.
    pub release_text: Option<String>,
    /// Whether it can take part.
    pub verdict: ToolchainVerdict,
    /// Its answer.
    pub probed: Probed,
}

impl Column {
    /// The column header: the id, with the release if the id does not already say it.
    pub fn label(&self) -> String {
        match &self.release_text {
            Some(release) if !self.id.ends_with(release.as_str()) => {
                format!("{} ({release})", self.id)
            }
            _ => self.id.clone(),
        }
    }

    fn answer(&self) -> Option<&Answer> {
        match &self.probed {
            Probed::Answered(answer) => Some(answer),
            _ => None,
        }
    }
}

/// Everything one audit found.
#[derive(Clone, Debug)]
pub struct AuditReport {
    /// What was audited.
    pub input: Input,
    /// The toolchains, in discovery order.
    pub columns: Vec<Column>,
    /// `--min-rust`.
    pub min_rust: Option<Release>,
    /// What the answers mean across toolchains.
    pub cross: CrossSummary,
    /// `--min-rust`: lines that can go.
    pub removable: Vec<Finding>,
    /// `--min-rust`: `cfg_attr` branches that can no longer be taken.
    pub dead: Vec<Finding>,
}

/// Runs rustc once on a probe of `names` and reads its answer, in `names` order.
///
/// The probe is written to, and compiled in, `directory` (created, and removed afterwards).
pub fn probe_names(
    rustc: &Rustc,
    names: &[&str],
    directory: &Path,
    timeout: Duration,
) -> Result<Vec<Status>, String> {
    std::fs::create_dir_all(directory)
        .map_err(|error| format!("cannot create {}: {error}", directory.display()))?;
    let source = directory.join("kshim_audit_probe.rs");
    let result = std::fs::write(&source, probe::probe_source_for(names, "cargo xtask audit"))
        .map_err(|error| format!("cannot write {}: {error}", source.display()))
        .and_then(|()| {
            process::run(&rustc.probe(&source, directory), timeout)
                .map_err(|error| format!("cannot run {}: {error}", rustc.path.display()))
        })
        .and_then(|output| {
            if output.status.is_none() {
                return Err(format!(
                    "the probe was killed after {} s",
                    timeout.as_secs()
                ));
            }
            let statuses = probe::classify_names(&output.stderr, names)?;
            // A probe fails only because some name is unknown or removed; a failure without
            // such an answer (a crash, an unreadable flag) is no answer at all.
            let explained = statuses
                .iter()
                .any(|status| matches!(status, Status::Unknown | Status::Removed));
            if !output.success() && !explained {
                return Err(first_rustc_error(&output.stderr)
                    .unwrap_or_else(|| "the probe failed and printed nothing".into()));
            }
            Ok(statuses)
        });
    let _ = std::fs::remove_dir_all(directory);
    result
}

/// Discovers the toolchains, probes each that runs (in parallel), and sums up.
pub fn run_audit(options: &Options) -> anyhow::Result<AuditReport> {
    let sh = Shell::new()?;
    let availabilities = discover(
        &sh,
        options.pins.as_deref(),
        &options.toolchains,
        VERSION_TIMEOUT,
    )?;
    let names = options.input.names();
    let scratch = options.scratch.join(std::process::id().to_string());
    let columns: Vec<Column> = std::thread::scope(|scope| {
        let handles: Vec<_> = availabilities
            .into_iter()
            .enumerate()
            .map(|(index, availability)| {
                let names = &names;
                let directory = scratch.join(format!(
                    "{index}-{}",
                    crate::plan::directory_name(availability.id())
                ));
                scope.spawn(move || column(availability, names, &directory, options.timeout))
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("a probe thread panicked"))
            .collect()
    });
    let _ = std::fs::remove_dir(&scratch);
    let answers: Vec<Answer> = columns.iter().filter_map(Column::answer).cloned().collect();
    let cross = summary::cross_summary(&options.input, &answers);
    let (removable, dead) = match options.min_rust {
        Some(minimum) => summary::lint(&options.input, &answers, minimum),
        None => (Vec::new(), Vec::new()),
    };
    Ok(AuditReport {
        input: options.input.clone(),
        columns,
        min_rust: options.min_rust,
        cross,
        removable,
        dead,
    })
}

fn column(
    availability: Availability,
    names: &[&str],
    directory: &Path,
    timeout: Duration,
) -> Column {
    match availability {
        Availability::Found { toolchain, version } => {
            let rustc = Rustc {
                path: toolchain.rustc.clone(),
                env: toolchain.env.clone(),
                release: version.release,
            };
            let probed = match probe_names(&rustc, names, directory, timeout) {
                Ok(statuses) => Probed::Answered(Answer {
                    release: version.release,
                    statuses,
                }),
                Err(error) => Probed::Failed(error),
            };
            Column {
                id: toolchain.id,
                spec: toolchain.spec,
                release_text: Some(version.release_string()),
                verdict: ToolchainVerdict::for_release(version.release),
                probed,
            }
        }
        Availability::Broken { toolchain, error } => Column {
            id: toolchain.id,
            spec: toolchain.spec,
            release_text: None,
            verdict: ToolchainVerdict::Broken(error),
            probed: Probed::NotProbed,
        },
        Availability::Missing { pin, install_hint } => Column {
            id: pin.id.clone(),
            spec: format!("pin:{}", pin.id),
            release_text: Some(pin.release.clone()),
            verdict: ToolchainVerdict::Missing(install_hint),
            probed: Probed::NotProbed,
        },
    }
}

fn list(names: &[String]) -> String {
    names.join(", ")
}

impl AuditReport {
    /// Failure when `--min-rust` found something, or when no compiler answered.
    pub fn verdict(&self) -> Verdict {
        let answered = self.columns.iter().any(|column| column.answer().is_some());
        if answered && self.removable.is_empty() && self.dead.is_empty() {
            Verdict::Success
        } else {
            Verdict::Failure
        }
    }

    /// One line per toolchain: what its answer means for the crate.
    pub fn summary_line(&self, index: usize) -> String {
        let column = &self.columns[index];
        let label = column.label();
        let answer = match (&column.probed, &column.verdict) {
            (Probed::Answered(answer), _) => answer,
            (Probed::Failed(error), _) => return format!("{label}: the probe failed: {error}"),
            (Probed::NotProbed, verdict) => return format!("{label}: {}", verdict.describe()),
        };
        let summary = summary::summarize(&self.input, answer);
        let mut line = format!("{label}: ");
        if column.verdict == ToolchainVerdict::TooOld {
            line.push_str("below the kernel's minimum, for information: ");
        }
        let _ = write!(line, "{} active feature(s)", summary.active);
        if summary.inactive > 0 {
            let _ = write!(
                line,
                " ({} switched off by their cfg_attr)",
                summary.inactive
            );
        }
        let _ = write!(line, ", {} stable", summary.stable);
        if summary.needs_bootstrap.is_empty() {
            line.push_str("; needs no RUSTC_BOOTSTRAP");
        } else {
            let count = summary.needs_bootstrap.len();
            let verb = if count == 1 { "needs" } else { "need" };
            let _ = write!(
                line,
                "; {count} still {verb} RUSTC_BOOTSTRAP ({})",
                list(&summary.needs_bootstrap)
            );
        }
        if !summary.undecided_gated.is_empty() {
            let _ = write!(
                line,
                "; {} more if conditions the audit cannot decide hold ({})",
                summary.undecided_gated.len(),
                list(&summary.undecided_gated)
            );
        }
        if !summary.unknown.is_empty() {
            let _ = write!(line, "; unknown to it: {}", list(&summary.unknown));
        }
        if !summary.removed.is_empty() {
            let _ = write!(line, "; removed from it: {}", list(&summary.removed));
        }
        line
    }

    /// The lines about all toolchains together, and the lint's findings.
    fn conclusions(&self) -> Vec<String> {
        let mut lines = Vec::new();
        let cross = &self.cross;
        if self.columns.iter().all(|column| column.answer().is_none()) {
            lines.push("No compiler answered: nothing can be concluded.".to_string());
            return lines;
        }
        match cross.stable_from {
            Some(release) => {
                let mut line = format!("Needs only stable Rust from release {release} on");
                if !cross.assumed_active.is_empty() {
                    let _ = write!(
                        line,
                        " (assuming the undecided conditions of {} may hold)",
                        list(&cross.assumed_active)
                    );
                }
                line.push('.');
                lines.push(line);
            }
            None => lines.push(format!(
                "Needs RUSTC_BOOTSTRAP on every release the compilers speak of: no compiler calls {} stable.",
                list(&cross.never_stable)
            )),
        }
        match (&cross.known_from, &cross.last_unknowing) {
            (Some(release), None) => lines.push(format!(
                "Every active feature is known from {release} on (the lowest release probed)."
            )),
            (Some(release), Some((before, names))) => lines.push(format!(
                "Every active feature is known from {release} on ({before} does not know {}).",
                list(names)
            )),
            (None, Some((release, names))) => lines.push(format!(
                "No probed release knows every active feature: {release}, the newest, lacks {}.",
                list(names)
            )),
            (None, None) => {}
        }
        if let Some(minimum) = self.min_rust {
            if self.removable.is_empty() && self.dead.is_empty() {
                lines.push(format!(
                    "--min-rust {minimum}: nothing to remove, no dead cfg_attr branch."
                ));
            }
            for finding in &self.removable {
                let entry = &self.input.entries[finding.entry];
                lines.push(format!(
                    "removable: {}: feature({}): {}",
                    self.input.place(entry),
                    entry.name,
                    finding.reason
                ));
            }
            for finding in &self.dead {
                let entry = &self.input.entries[finding.entry];
                lines.push(format!(
                    "dead: {}: cfg_attr branch for feature({}): {}",
                    self.input.place(entry),
                    entry.name,
                    finding.reason
                ));
            }
        }
        lines
    }

    fn heading(&self) -> String {
        let conditional = self
            .input
            .entries
            .iter()
            .filter(|entry| entry.condition.is_some())
            .count();
        let source = match &self.input.path {
            Some(path) => path.display().to_string(),
            None => "the --features list".to_string(),
        };
        let mut heading = format!(
            "audit of {source}: {} feature line(s)",
            self.input.entries.len()
        );
        if conditional > 0 {
            let _ = write!(heading, ", {conditional} under cfg_attr");
        }
        let _ = write!(heading, "; {} toolchain(s)", self.columns.len());
        heading
    }

    fn table(&self, markdown: bool) -> Table {
        let shown: Vec<&Column> = self
            .columns
            .iter()
            .filter(|column| !matches!(column.probed, Probed::NotProbed))
            .collect();
        let code = |text: String| if markdown { format!("`{text}`") } else { text };
        let mut headers = vec!["line".to_string(), "condition".to_string()];
        headers.extend(shown.iter().map(|column| column.label()));
        let mut table = Table::new("feature", &headers);
        for entry in &self.input.entries {
            let mut cells = vec![
                entry
                    .location
                    .map_or_else(|| "-".into(), |(line, _)| line.to_string()),
                entry
                    .condition
                    .as_ref()
                    .map_or_else(|| "-".into(), |condition| code(condition.to_string())),
            ];
            for column in &shown {
                let cell = match &column.probed {
                    Probed::Answered(answer) => {
                        let status = answer
                            .status(&self.input, &entry.name)
                            .map_or_else(|| "-".into(), |status| status.to_string());
                        match summary::active_on(entry.condition.as_ref(), answer.release) {
                            Some(true) => status,
                            Some(false) => format!("{status} (off)"),
                            None => format!("{status} (?)"),
                        }
                    }
                    _ => "probe failed".into(),
                };
                cells.push(cell);
            }
            table.rows.push((
                entry.name.clone(),
                cells.into_iter().map(|c| (c, false)).collect(),
            ));
        }
        table
    }

    const LEGEND: &'static str = "`(off)`: its cfg_attr condition does not hold on that compiler; \
         `(?)`: the condition depends on a cfg the audit cannot derive from the compiler.";

    /// The table, the summaries and the findings for a terminal or a log.
    pub fn human(&self, colour: bool) -> String {
        let mut out = self.heading();
        out.push_str("\n\n");
        self.table(false).render_text(&mut out, colour);
        let _ = writeln!(out, "\n{}\n", Self::LEGEND);
        for index in 0..self.columns.len() {
            let _ = writeln!(out, "{}", self.summary_line(index));
        }
        out.push('\n');
        for line in self.conclusions() {
            let _ = writeln!(out, "{line}");
        }
        out
    }

    /// The same as Markdown.
    pub fn markdown(&self) -> String {
        let mut out = format!("## {}\n\n", self.heading());
        self.table(true).render_markdown(&mut out);
        let _ = writeln!(out, "\n{}\n\n## Summary\n", Self::LEGEND);
        for index in 0..self.columns.len() {
            let _ = writeln!(out, "- {}", self.summary_line(index));
        }
        out.push('\n');
        for line in self.conclusions() {
            let _ = writeln!(out, "- {line}");
        }
        out
    }

    /// The report as JSON, in the layout documented at the top of this module.
    pub fn to_json(&self) -> Value {
        let string = |text: &str| Value::String(text.to_string());
        let release = |release: Option<Release>| json::opt_string(release.map(|r| r.to_string()));
        let names = |names: &[String]| Value::Array(names.iter().map(|n| string(n)).collect());
        let features = self
            .input
            .entries
            .iter()
            .map(|entry| {
                let (line, column) = entry.location.unzip();
                let number = |n: Option<usize>| n.map_or(Value::Null, Value::from);
                json::object(vec![
                    ("name".into(), string(&entry.name)),
                    ("line".into(), number(line)),
                    ("column".into(), number(column)),
                    (
                        "condition".into(),
                        json::opt_string(entry.condition.as_ref().map(ToString::to_string)),
                    ),
                ])
            })
            .collect();
        let toolchains = self
            .columns
            .iter()
            .enumerate()
            .map(|(index, column)| {
                let error = match (&column.probed, &column.verdict) {
                    (Probed::Failed(error), _) => Some(error.clone()),
                    (_, ToolchainVerdict::Broken(message) | ToolchainVerdict::Missing(message)) => {
                        Some(message.clone())
                    }
                    (_, ToolchainVerdict::TooOld) => Some(column.verdict.describe()),
                    _ => None,
                };
                let (features, needs_bootstrap) = match column.answer() {
                    Some(answer) => {
                        let per_name = self
                            .input
                            .names()
                            .into_iter()
                            .map(|name| {
                                let status = answer.status(&self.input, name);
                                let lines: Vec<&input::Entry> = self
                                    .input
                                    .entries
                                    .iter()
                                    .filter(|entry| entry.name == name)
                                    .collect();
                                let activity = summary::name_active_on(&lines, answer.release);
                                (
                                    name.to_string(),
                                    json::object(vec![
                                        (
                                            "status".into(),
                                            json::opt_string(status.map(Status::word)),
                                        ),
                                        (
                                            "stable_since".into(),
                                            release(status.and_then(Status::stable_since)),
                                        ),
                                        (
                                            "active".into(),
                                            activity.map_or(Value::Null, Value::Bool),
                                        ),
                                    ]),
                                )
                            })
                            .collect();
                        let summary = summary::summarize(&self.input, answer);
                        (Value::Object(per_name), names(&summary.needs_bootstrap))
                    }
                    None => (Value::Null, Value::Null),
                };
                json::object(vec![
                    ("id".into(), string(&column.id)),
                    ("spec".into(), string(&column.spec)),
                    (
                        "release".into(),
                        json::opt_string(column.release_text.clone()),
                    ),
                    ("verdict".into(), string(column.verdict.word())),
                    ("error".into(), json::opt_string(error)),
                    ("features".into(), features),
                    ("needs_bootstrap".into(), needs_bootstrap),
                    ("summary".into(), string(&self.summary_line(index))),
                ])
            })
            .collect();
        let findings = |findings: &[Finding]| {
            Value::Array(
                findings
                    .iter()
                    .map(|finding| {
                        let entry = &self.input.entries[finding.entry];
                        json::object(vec![
                            ("name".into(), string(&entry.name)),
                            ("at".into(), string(&self.input.place(entry))),
                            ("reason".into(), string(&finding.reason)),
                        ])
                    })
                    .collect(),
            )
        };
        let verdict = match self.verdict() {
            Verdict::Success => "success",
            Verdict::Failure => "failure",
        };
        json::object(vec![
            ("schema".into(), Value::from(SCHEMA_VERSION)),
            (
                "path".into(),
                json::opt_string(self.input.path.as_ref().map(|p| p.display().to_string())),
            ),
            ("min_rust".into(), release(self.min_rust)),
            ("verdict".into(), string(verdict)),
            ("features".into(), Value::Array(features)),
            ("toolchains".into(), Value::Array(toolchains)),
            ("stable_from".into(), release(self.cross.stable_from)),
            ("never_stable".into(), names(&self.cross.never_stable)),
            ("known_from".into(), release(self.cross.known_from)),
            ("removable".into(), findings(&self.removable)),
            ("dead".into(), findings(&self.dead)),
        ])
    }
}

impl flags::Audit {
    /// Reads the flags into [`Options`] and the output format, rejecting bad values.
    pub fn options(&self) -> anyhow::Result<(Options, Format)> {
        let format = Format::parse(self.format.as_deref().unwrap_or("human"))?;
        let input = match (&self.path, &self.features) {
            (Some(_), Some(_)) => bail!("give a crate root or --features, not both"),
            (None, None) => bail!(
                "give a crate root (`cargo xtask audit path/to/lib.rs`) or a list \
                 (`cargo xtask audit --features a,b,c`)"
            ),
            (Some(path), None) => input::read_crate_root(path)?,
            (None, Some(list)) => input::read_feature_list(list)?,
        };
        let mut options = Options::new(input);
        options.toolchains = self.toolchain.clone();
        options.pins = self.pins.clone();
        options.min_rust = self.min_rust.as_deref().map(parse_min_rust).transpose()?;
        Ok((options, format))
    }

    /// Runs `cargo xtask audit`.
    pub fn run(&self, _sh: &Shell) -> anyhow::Result<Verdict> {
        let (options, format) = self.options()?;
        let report = run_audit(&options)?;
        format.print(
            || report.to_json(),
            || report.markdown(),
            |colour| report.human(colour),
        );
        Ok(report.verdict())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use input::read_feature_list;

    fn stable(text: &str) -> Status {
        Status::Stable(Release::parse(text).unwrap())
    }

    /// The kernel's allowed list on a fake 1.85.0, a fake 1.63.0, a missing pin and a failed
    /// probe.
    fn sample(min_rust: Option<&str>) -> AuditReport {
        let input =
            read_feature_list("asm_const,asm_goto,arbitrary_self_types,lint_reasons,raw_ref_op")
                .unwrap();
        let answered = |id: &str, release: &str, statuses: Vec<Status>| Column {
            id: id.into(),
            spec: format!("rustup:{id}"),
            release_text: Some(release.into()),
            verdict: ToolchainVerdict::for_release(Release::parse(release).unwrap()),
            probed: Probed::Answered(Answer {
                release: Release::parse(release).unwrap(),
                statuses,
            }),
        };
        let columns = vec![
            answered(
                "debian-1.85.0",
                "1.85.0",
                vec![
                    stable("1.82.0"),
                    Status::Gated,
                    Status::Gated,
                    stable("1.81.0"),
                    stable("1.82.0"),
                ],
            ),
            answered(
                "debian-1.63.0",
                "1.63.0",
                vec![
                    Status::Gated,
                    Status::Unknown,
                    Status::Gated,
                    Status::Gated,
                    Status::Gated,
                ],
            ),
            Column {
                id: "1.78.0".into(),
                spec: "pin:1.78.0".into(),
                release_text: Some("1.78.0".into()),
                verdict: ToolchainVerdict::Missing("rustup toolchain install 1.78.0".into()),
                probed: Probed::NotProbed,
            },
            Column {
                id: "odd".into(),
                spec: "/opt/odd/rustc".into(),
                release_text: Some("1.90.0".into()),
                verdict: ToolchainVerdict::Ok,
                probed: Probed::Failed("error[E0463]: can't find crate for `core`".into()),
            },
        ];
        let answers: Vec<Answer> = columns.iter().filter_map(Column::answer).cloned().collect();
        let min_rust = min_rust.map(|text| parse_min_rust(text).unwrap());
        let (removable, dead) = match min_rust {
            Some(minimum) => summary::lint(&input, &answers, minimum),
            None => (Vec::new(), Vec::new()),
        };
        AuditReport {
            cross: summary::cross_summary(&input, &answers),
            input,
            columns,
            min_rust,
            removable,
            dead,
        }
    }

    #[test]
    fn summaries_name_what_still_needs_bootstrap_and_what_is_missing() {
        let report = sample(None);
        assert_eq!(
            report.summary_line(0),
            "debian-1.85.0: 5 active feature(s), 3 stable; 2 still need RUSTC_BOOTSTRAP \
             (asm_goto, arbitrary_self_types)"
        );
        assert_eq!(
            report.summary_line(1),
            "debian-1.63.0: below the kernel's minimum, for information: 5 active feature(s), \
             0 stable; 4 still need RUSTC_BOOTSTRAP (asm_const, arbitrary_self_types, \
             lint_reasons, raw_ref_op); unknown to it: asm_goto"
        );
        assert_eq!(
            report.summary_line(2),
            "1.78.0: missing; install it with: rustup toolchain install 1.78.0"
        );
        assert_eq!(
            report.summary_line(3),
            "odd (1.90.0): the probe failed: error[E0463]: can't find crate for `core`"
        );
        let text = report.human(false);
        assert!(
            text.contains("Needs RUSTC_BOOTSTRAP on every release the compilers speak of: no compiler calls asm_goto, arbitrary_self_types stable."),
            "{text}"
        );
        assert!(
            text.contains(
                "Every active feature is known from 1.85.0 on (1.63.0 does not know asm_goto)."
            ),
            "{text}"
        );
        // The missing pin has no column; the failed probe has one.
        assert!(!text.contains("1.78.0  "), "{text}");
        assert!(text.contains("probe failed"), "{text}");
        assert_eq!(report.verdict(), Verdict::Success);
    }

    #[test]
    fn min_rust_makes_it_a_lint_that_fails() {
        let report = sample(Some("1.85"));
        assert_eq!(report.verdict(), Verdict::Failure);
        let text = report.markdown();
        for expected in [
            "- removable: --features asm_const: feature(asm_const): stable since 1.82.0, at or before 1.85.0",
            "- removable: --features lint_reasons: feature(lint_reasons): stable since 1.81.0, at or before 1.85.0",
            "- removable: --features raw_ref_op: feature(raw_ref_op): stable since 1.82.0, at or before 1.85.0",
        ] {
            assert!(text.contains(expected), "{expected}\n{text}");
        }
        assert!(!text.contains("removable: --features asm_goto"), "{text}");
        let quiet = sample(Some("1.80.0"));
        assert_eq!(quiet.verdict(), Verdict::Success);
        assert!(quiet
            .human(false)
            .contains("--min-rust 1.80.0: nothing to remove, no dead cfg_attr branch."));
        assert!(parse_min_rust("1.85.x").is_err());
        assert!(parse_min_rust("185").is_err());
    }

    #[test]
    fn json_has_the_documented_shape() {
        let report = sample(Some("1.85.0"));
        let value = crate::json::parse(&json::to_pretty(&report.to_json())).unwrap();
        assert_eq!(value.get("schema").and_then(Value::as_u64), Some(1));
        assert_eq!(value.get("path"), Some(&Value::Null));
        assert_eq!(
            value.get("verdict").and_then(Value::as_str),
            Some("failure")
        );
        let toolchains = value.get("toolchains").and_then(Value::as_array).unwrap();
        assert_eq!(toolchains.len(), 4);
        let asm_goto = toolchains[0]
            .get("features")
            .and_then(|features| features.get("asm_goto"))
            .unwrap();
        assert_eq!(
            asm_goto.get("status").and_then(Value::as_str),
            Some("gated")
        );
        assert_eq!(asm_goto.get("active").and_then(Value::as_bool), Some(true));
        assert_eq!(
            toolchains[0]
                .get("needs_bootstrap")
                .and_then(Value::as_array)
                .map(Vec::len),
            Some(2)
        );
        assert_eq!(
            toolchains[2].get("verdict").and_then(Value::as_str),
            Some("missing")
        );
        assert_eq!(
            toolchains[3].get("error").and_then(Value::as_str),
            Some("error[E0463]: can't find crate for `core`")
        );
        assert_eq!(
            value.get("known_from").and_then(Value::as_str),
            Some("1.85.0")
        );
        assert_eq!(value.get("stable_from"), Some(&Value::Null));
        assert_eq!(
            value
                .get("removable")
                .and_then(Value::as_array)
                .map(Vec::len),
            Some(3)
        );
    }
}
