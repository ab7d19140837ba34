// SPDX-License-Identifier: GPL-2.0
//! How an audit is written: the table, one summary line per toolchain and the conclusions
//! across them, for a terminal, as Markdown, or as the JSON report whose layout docs/audit.md
//! documents.

use super::summary::{self, Conditional, Finding};
use super::{AuditReport, Column, Probed};
use crate::catalog::Release;
use crate::features::cfg::Query;
use crate::features::expect::ToolchainVerdict;
use crate::features::status::Status;
use crate::util::json::{json, Value};
use crate::util::output::{Style, Table};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// 2: `never_stable` became `gated_on_newest`, with `newest`.
pub const SCHEMA_VERSION: u32 = 2;

/// `a (if `c`), b (if `d` or `e`)`.
fn conditional_list(items: &[Conditional]) -> String {
    items
        .iter()
        .map(|(name, conditions)| format!("{name} (if {})", conditions.join(" or ")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A table's legend: each marker it shows with what it means; `None` if it shows none.
fn legend(shown: &BTreeSet<&str>) -> Option<String> {
    const MEANINGS: [(&str, &str); 3] = [
        (
            " (off)",
            "its cfg_attr condition does not hold on that compiler",
        ),
        (
            " (other target)",
            "it holds only for another target than the one probed",
        ),
        (
            " (?)",
            "the condition depends on a cfg the audit cannot derive from the compiler",
        ),
    ];
    let parts: Vec<String> = MEANINGS
        .iter()
        .filter(|(marker, _)| shown.contains(marker))
        .map(|(marker, meaning)| format!("`{}`: {meaning}", marker.trim()))
        .collect();
    (!parts.is_empty()).then(|| format!("{}.", parts.join("; ")))
}

impl AuditReport {
    /// `unknown feature asm_gotto (did you mean `asm_goto`?), removed feature x`.
    fn rejected_list(&self, items: &[(String, Status)]) -> String {
        items
            .iter()
            .map(|(name, status)| {
                let hint = match status {
                    Status::Unknown => self.did_you_mean(name),
                    _ => String::new(),
                };
                format!("{} feature {name}{hint}", status.word())
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// ` (did you mean `asm_goto`?)` for a name no compiler knows that is close to one the
    /// catalog or a compiler here knows; empty otherwise.
    fn did_you_mean(&self, name: &str) -> String {
        let answers: Vec<&summary::Answer> =
            self.columns.iter().filter_map(Column::answer).collect();
        let known_here = self.input.names().into_iter().filter(|other| {
            answers.iter().any(|answer| {
                matches!(
                    answer.status(&self.input, other),
                    Some(Status::Gated | Status::Stable(_))
                )
            })
        });
        let catalog = crate::catalog::FEATURES.iter().map(|feature| feature.name);
        let candidates = catalog
            .chain(known_here)
            .filter(|candidate| *candidate != name);
        let candidates = crate::distinct(candidates.map(String::from));
        crate::closest(name, &candidates)
            .map(|closest| format!(" (did you mean `{closest}`?)"))
            .unwrap_or_default()
    }

    /// One line per toolchain: what its answer means for the crate.
    pub fn summary_line(&self, index: usize) -> String {
        let column = &self.columns[index];
        let label = column.label();
        let answer = match &column.probed {
            Probed::Answered(answer) => answer,
            Probed::Failed(error) => return format!("{label}: the probe failed: {error}"),
            Probed::Unavailable => return format!("{label}: {}", column.entry.verdict.describe()),
        };
        let summary = summary::summarize(&self.input, &self.decider, answer);
        let below = match column.entry.verdict {
            ToolchainVerdict::TooOld => "below the kernel's minimum, for information: ",
            _ => "",
        };
        let (inactive, other) = (summary.inactive, &summary.other_target);
        let off = [
            (inactive > 0).then(|| format!("{inactive} switched off by their cfg_attr")),
            (!other.is_empty())
                .then(|| format!("{} for another target: {}", other.len(), other.join(", "))),
        ];
        let off: Vec<String> = off.into_iter().flatten().collect();
        let off = (!off.is_empty()).then(|| format!(" ({})", off.join("; ")));
        let undecided = conditional_list(&summary.undecided_gated);
        let needs = &summary.needs_bootstrap;
        let also = match (needs.is_empty(), undecided.is_empty()) {
            (_, true) => String::new(),
            (true, false) => format!(" unless a condition it cannot decide holds: {undecided}"),
            _ => format!(", and if conditions it cannot decide hold, also {undecided}"),
        };
        let verb = if needs.len() == 1 { "needs" } else { "need" };
        let mut parts = vec![match needs.len() {
            0 => format!("needs no RUSTC_BOOTSTRAP{also}"),
            count => format!(
                "{count} still {verb} RUSTC_BOOTSTRAP ({}){also}",
                needs.join(", ")
            ),
        }];
        if !summary.errors.is_empty() {
            let list = self.rejected_list(&summary.errors);
            parts.push(format!("build errors on it: {list}"));
        }
        if !summary.undecided_errors.is_empty() {
            let list = conditional_list(&summary.undecided_errors);
            parts.push(format!(
                "build errors on it if their conditions hold: {list}"
            ));
        }
        parts.extend(answer.breakers.iter().map(|(name, error)| {
            format!("{name} fails a plain crate ({error}), so it was probed alone")
        }));
        format!(
            "{label}: {below}{} active feature(s){}, {} stable; {}",
            summary.active,
            off.unwrap_or_default(),
            summary.stable,
            parts.join("; ")
        )
    }

    /// The lines about all toolchains together.
    fn conclusions(&self) -> Vec<String> {
        let cross = &self.cross;
        if self.input.entries.is_empty() {
            return vec![
                "It enables no feature: needs no unstable feature on any compiler.".into(),
            ];
        }
        let answers = self.columns.iter().filter_map(Column::answer);
        let Some(lowest) = answers.map(|answer| answer.release).min() else {
            return vec!["No compiler answered: nothing can be concluded.".into()];
        };
        let newest = cross.newest.unwrap_or(lowest);
        let mut lines = Vec::new();
        let conditions = cross.depends_on.join(" or ");
        let depends = if conditions.is_empty() {
            String::new()
        } else {
            format!(" unless {conditions} holds")
        };
        // A build error comes first, and the stable-Rust verdict then speaks only of the rest,
        // so the summary never reads as a clean bill next to a crate that does not build.
        let apart = if cross.rejected_by_newest.is_empty() {
            "Needs"
        } else {
            lines.push(format!(
                "Build errors on the newest compiler, not features waiting for stabilization: {}.",
                self.rejected_list(&cross.rejected_by_newest)
            ));
            "Apart from those build errors, needs"
        };
        match cross.stable_from {
            Some(release) if release == lowest => lines.push(format!(
                "{apart} only stable Rust on every release probed, from {release} on{depends}."
            )),
            Some(release) => lines.push(format!(
                "{apart} only stable Rust from release {release} on{depends}."
            )),
            None if cross.gated_on_newest.is_empty() => {}
            None => lines.push(format!(
                "Needs RUSTC_BOOTSTRAP on every release probed, up to {newest}: it still calls \
                 {} gated.",
                cross.gated_on_newest.join(", ")
            )),
        }
        if !conditions.is_empty() {
            match cross.stable_from_if_conditions_hold {
                Some(release) => lines.push(format!(
                    "If {conditions} holds: needs only stable Rust from release {release} on."
                )),
                None => lines.push(format!(
                    "If {conditions} holds: needs RUSTC_BOOTSTRAP on every release probed, up \
                     to {newest}, since it still calls {} gated.",
                    cross.gated_on_newest_if.join(", ")
                )),
            }
        }
        match (&cross.known_from, &cross.last_unknowing) {
            (Some(release), None) => lines.push(format!(
                "Every active feature is known from {release} on (the lowest release probed)."
            )),
            (Some(release), Some((before, names))) => lines.push(format!(
                "Every active feature is known from {release} on ({before} does not know {}).",
                names.join(", ")
            )),
            (None, Some((release, names))) => lines.push(format!(
                "No probed release knows every active feature: {release}, the newest, lacks {}.",
                names.join(", ")
            )),
            (None, None) => {}
        }
        if let Some(minimum) = self.min_rust.filter(|_| self.lint.is_empty()) {
            lines.push(format!(
                "--min-rust {minimum}: nothing to remove, no dead cfg_attr branch, no build \
                 error."
            ));
        }
        lines
    }

    /// `--min-rust`'s findings, build errors first: with the source line under each for a
    /// terminal (`snippets`), one line each for Markdown.
    fn findings(&self, snippets: bool) -> Vec<String> {
        let findings = [
            ("error", "", &self.lint.errors),
            ("removable", "", &self.lint.removable),
            ("dead", "cfg_attr branch for ", &self.lint.dead),
        ];
        // The source is read once, not once a finding: a root may repeat a line 100k times.
        // A recorded audit's relative path is read from the repository's root.
        let readable = |path: &std::path::Path| match path.is_relative() && !path.exists() {
            true => crate::project_root().join(path),
            false => path.to_path_buf(),
        };
        let text = match (&self.input.path, snippets && !self.lint.is_empty()) {
            (Some(path), true) => crate::util::files::read_text(&readable(path), 16 << 20).ok(),
            _ => None,
        };
        let source: Vec<&str> = text.iter().flat_map(|text| text.lines()).collect();
        let findings = findings.into_iter().flat_map(|(word, what, findings)| {
            findings.iter().map(move |finding| (word, what, finding))
        });
        findings
            .map(|(word, what, finding)| {
                let entry = &self.input.entries[finding.entry];
                let mut message = format!("{what}feature({}): {}", entry.name, finding.reason);
                if finding.reason.starts_with("unknown") {
                    message.push_str(&self.did_you_mean(&entry.name));
                }
                self.snippet(word, &message, entry, &source)
                    .unwrap_or_else(|| format!("{word}: {}: {message}", self.input.place(entry)))
            })
            .collect()
    }

    /// A finding as rustc shows a diagnostic: the message, where, and the source line with the
    /// feature's name underlined, from the source's `lines`; `None` for a `--features` list or
    /// an unreadable file (no lines).
    fn snippet(
        &self,
        word: &str,
        message: &str,
        entry: &super::input::Entry,
        lines: &[&str],
    ) -> Option<String> {
        let (line, column) = entry.location?;
        let source = *lines.get(line.checked_sub(1)?)?;
        let number = line.to_string();
        let pad = " ".repeat(number.len());
        // Tabs stay tabs, so that the carets line up under the name however they are shown.
        let lead: String = source
            .chars()
            .take(column.saturating_sub(1))
            .map(|character| if character == '\t' { '\t' } else { ' ' })
            .collect();
        Some(format!(
            "{word}: {message}\n{pad}--> {}\n{pad} |\n{number} | {}\n{pad} | {lead}{}",
            self.input.place(entry),
            crate::util::output::escape(source),
            "^".repeat(entry.name.chars().count())
        ))
    }

    fn heading(&self) -> String {
        let (input, count) = (&self.input, self.input.entries.len());
        let mut heading = match &input.path {
            Some(path) => format!(
                "audit of {}: {count} feature(s) in {} attribute(s)",
                path.display(),
                input.attribute_count()
            ),
            None => format!("audit of the --features list: {count} feature(s)"),
        };
        let conditional = input.conditions().count();
        if conditional > 0 {
            let _ = write!(heading, ", {conditional} under cfg_attr");
        }
        let _ = write!(heading, "; {} toolchain(s)", self.columns.len());
        heading
    }

    /// The table, and the legend of the markers it shows.
    fn table(&self, markdown: bool) -> (Table, Option<String>) {
        let shown: Vec<&Column> = self
            .columns
            .iter()
            .filter(|column| !matches!(column.probed, Probed::Unavailable))
            .collect();
        let code = |text: String| if markdown { format!("`{text}`") } else { text };
        let mut headers = vec!["line:col".to_string(), "condition".to_string()];
        headers.extend(shown.iter().map(|column| column.label()));
        let mut table = Table::new("feature", &headers);
        let mut markers = BTreeSet::new();
        for entry in &self.input.entries {
            let mut cells = vec![
                entry
                    .location
                    .map_or_else(|| "-".into(), |(line, column)| format!("{line}:{column}")),
                entry
                    .condition
                    .as_ref()
                    .map_or_else(|| "-".into(), |condition| code(condition.to_string())),
            ];
            cells.extend(shown.iter().map(|column| match &column.probed {
                Probed::Answered(answer) => {
                    let status = answer
                        .status(&self.input, &entry.name)
                        .map_or_else(|| "-".into(), |status| status.to_string());
                    let marker = self.marker(entry, answer);
                    markers.insert(marker);
                    format!("{status}{marker}")
                }
                _ => "probe failed".into(),
            }));
            let cells = cells.into_iter().map(|cell| (cell, false));
            table.rows.push((entry.name.clone(), cells.collect()));
        }
        (table, legend(&markers))
    }

    /// What a table cell adds to a status: whether the line is active on that compiler.
    fn marker(&self, entry: &super::input::Entry, answer: &summary::Answer) -> &'static str {
        let condition = entry.condition.as_ref();
        match self.decider.active_on(condition, answer.release) {
            Some(true) => "",
            Some(false) if self.decider.for_another_target(condition, answer.release) => {
                " (other target)"
            }
            Some(false) => " (off)",
            None => " (?)",
        }
    }

    /// Why a condition that names a cfg no Kconfig defines (`from: None`) is off everywhere.
    fn never_set_notes(&self) -> Vec<String> {
        let conditions = self.input.conditions();
        let leaves: Vec<Query<'_>> = conditions.flat_map(|c| summary::leaves(c, Some)).collect();
        self.decider
            .kconfig
            .iter()
            .filter(|symbol| symbol.from.is_none() && leaves.contains(&Query::Name(&symbol.cfg)))
            .map(|symbol| format!("`{}`: {}.", symbol.cfg, symbol.source))
            .collect()
    }

    /// The findings, the table, the summaries and the conclusions for a terminal laid out for
    /// `style`'s width, or as Markdown without one.
    pub fn text(&self, style: Option<&Style>) -> String {
        let markdown = style.is_none();
        let (title, item) = if markdown { ("## ", "- ") } else { ("", "") };
        let mut out = format!("{title}{}\n\n", self.heading());
        // The findings first: what to change in the crate, before the evidence.
        let findings = self.findings(!markdown);
        for line in &findings {
            let _ = writeln!(out, "{item}{line}");
        }
        if !findings.is_empty() {
            out.push('\n');
        }
        let (table, legend) = self.table(markdown);
        match style {
            Some(style) => table.render_text(&mut out, style),
            None => table.render_markdown(&mut out),
        }
        out.push('\n');
        for note in legend.into_iter().chain(self.never_set_notes()) {
            let _ = writeln!(out, "{note}\n");
        }
        if markdown {
            let _ = writeln!(out, "## Summary\n");
        }
        for index in 0..self.columns.len() {
            let _ = writeln!(out, "{item}{}", self.summary_line(index));
        }
        out.push('\n');
        for line in self.conclusions() {
            let _ = writeln!(out, "{item}{line}");
        }
        out
    }

    /// The report as JSON, in the layout docs/audit.md documents.
    pub fn to_json(&self) -> Value {
        let release = |release: Option<Release>| release.map(|release| release.to_string());
        let features = self.input.entries.iter().map(|entry| {
            let (line, column) = entry.location.unzip();
            let condition = entry.condition.as_ref().map(ToString::to_string);
            let attribute = entry
                .attribute
                .map(|(line, column)| json!({ "line": line, "column": column }));
            json!({
                "name": entry.name, "line": line, "column": column, "condition": condition,
                "attribute": attribute,
            })
        });
        let findings = |findings: &[Finding]| -> Vec<Value> {
            let findings = findings.iter().map(|finding| {
                let entry = &self.input.entries[finding.entry];
                let at = self.input.place(entry);
                json!({ "name": entry.name, "at": at, "reason": finding.reason })
            });
            findings.collect()
        };
        // Each cfg with all its values: `target_feature` has many.
        let mut target: BTreeMap<&str, Vec<Option<&str>>> = BTreeMap::new();
        for (key, value) in &self.decider.target {
            target.entry(key).or_default().push(value.as_deref());
        }
        let cross = &self.cross;
        json!({
            "schema": SCHEMA_VERSION,
            "path": self.input.path.as_ref().map(|path| path.display().to_string()),
            "min_rust": release(self.min_rust),
            "verdict": self.verdict().word(),
            "features": features.collect::<Vec<_>>(),
            "toolchains": self.columns.iter().enumerate()
                .map(|(index, column)| self.toolchain_json(index, column))
                .collect::<Vec<_>>(),
            "target": target,
            "kconfig": self.decider.kconfig.iter().map(|symbol| json!({
                "cfg": symbol.cfg, "from": release(symbol.from), "source": symbol.source,
            })).collect::<Vec<_>>(),
            "stable_from": release(cross.stable_from),
            "stable_from_if_conditions_hold": release(cross.stable_from_if_conditions_hold),
            "depends_on": cross.depends_on,
            "gated_on_newest": cross.gated_on_newest,
            "newest": release(cross.newest),
            "rejected_by_newest": cross.rejected_by_newest.iter().map(|(name, _)| name)
                .collect::<Vec<_>>(),
            "known_from": release(cross.known_from),
            "removable": findings(&self.lint.removable),
            "dead": findings(&self.lint.dead),
            "errors": findings(&self.lint.errors),
        })
    }

    /// A toolchain; the members from `features` to `probed_alone` are null where nothing
    /// answered.
    fn toolchain_json(&self, index: usize, column: &Column) -> Value {
        let error = match (&column.probed, &column.entry.verdict) {
            (Probed::Failed(error), _) => Some(error.clone()),
            (_, ToolchainVerdict::Broken(message) | ToolchainVerdict::Missing(message)) => {
                Some(message.clone())
            }
            (_, ToolchainVerdict::TooOld) => Some(column.entry.verdict.describe()),
            _ => None,
        };
        let answer = column.answer();
        let features = answer.map(|answer| {
            let per_name = self.input.names().into_iter().map(|name| {
                let status = answer.status(&self.input, name);
                let (activity, other_target) =
                    self.decider
                        .name_active_on(&self.input, name, answer.release);
                let status = json!({
                    "status": status.map(Status::word),
                    "stable_since": status.and_then(Status::stable_since).map(|r| r.to_string()),
                    "active": activity,
                    "other_target": other_target,
                });
                (name, status)
            });
            per_name.collect::<BTreeMap<_, _>>()
        });
        let summary = answer.map(|answer| summary::summarize(&self.input, &self.decider, answer));
        let alone = answer.map(|answer| {
            let alone = answer.breakers.iter();
            let alone = alone.map(|(name, error)| json!({ "name": name, "error": error }));
            alone.collect::<Vec<_>>()
        });
        json!({
            "id": column.entry.id,
            "spec": column.entry.spec,
            "source": column.entry.source.map(|source| source.word()),
            "release": column.entry.release_text,
            "label": column.label(),
            "verdict": column.entry.verdict.word(),
            "error": error,
            "features": features,
            "needs_bootstrap": summary.as_ref().map(|summary| &summary.needs_bootstrap),
            "build_errors": summary.map(|summary| {
                summary.errors.into_iter().map(|(name, _)| name).collect::<Vec<_>>()
            }),
            "probed_alone": alone,
            "summary": self.summary_line(index),
        })
    }
}
