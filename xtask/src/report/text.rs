// SPDX-License-Identifier: GPL-2.0
//! The report as tables and summary lines for people, and as Markdown to paste into an issue.

use super::{failure_line, BuildCell, Report};
use crate::catalog::FEATURES;
use crate::features::expect::{Outcome, ToolchainVerdict};
use crate::run::plan::{Kind, Mode};
use crate::util::output::{escape, escape_markdown, paint_red, Format, Output, Style, Table};
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

impl Report {
    /// The feature table and the build-and-test table, as rows of cells; a cell's flag says
    /// whether it differs from the prediction.
    ///
    /// Columns are in release order; missing toolchains have no column: their summary line
    /// says how to install them.
    fn tables(&self) -> (Table, Table, Option<Table>) {
        let shown: Vec<usize> = super::release_order(&self.toolchains)
            .into_iter()
            .filter(|&index| {
                !matches!(self.toolchains[index].verdict, ToolchainVerdict::Missing(_))
            })
            .collect();
        let headers: Vec<String> = shown
            .iter()
            .map(|&index| self.toolchains[index].label())
            .collect();
        let mut features = Table::new("feature", &headers);
        for (feature, cells) in FEATURES.iter().zip(&self.features) {
            let row = shown
                .iter()
                .map(|&index| (cells[index].observed.cell(), !cells[index].ok()));
            features
                .rows
                .push((feature.name.to_string(), row.collect()));
        }
        let mut builds = Table::new("build / run / test (kernel mode / stable mode)", &headers);
        // Rows in the order the builds first name them; cells found through an index, so
        // that the table takes time linear in the report.
        let mut row_keys: Vec<(&str, Kind)> = Vec::new();
        let mut cells: HashMap<(usize, &str, Kind, Mode), &BuildCell> = HashMap::new();
        let mut seen = HashSet::new();
        for build in &self.builds {
            let target = build.target.as_str();
            cells
                .entry((build.toolchain, target, build.kind, build.mode))
                .or_insert(build);
            if seen.insert((target, build.kind)) {
                row_keys.push((target, build.kind));
            }
        }
        for (target, kind) in row_keys {
            let row = shown
                .iter()
                .map(|&index| {
                    let cell = |mode: Mode| {
                        let build = cells.get(&(index, target, kind, mode));
                        build.map(|build| (build.outcome, build.ok()))
                    };
                    outcome_cell(&Mode::ALL.map(cell))
                })
                .collect();
            builds
                .rows
                .push((format!("{} {}", kind.word(), target), row));
        }
        super::kbuild::kbuild_rows(&self.kbuild, &shown, &mut builds);
        let targets = self.targets.table(&shown, &headers);
        (features, builds, targets)
    }

    /// Prints the report in `format` (nothing for a quiet success) and returns its verdict: what
    /// `matrix`, `merge` and `show` end with.
    pub fn print(&self, format: Format, output: Output) -> crate::Verdict {
        format.print_report(
            self.verdict(),
            output,
            || self.to_json(),
            || self.markdown(),
            |style| self.human_in(style),
        )
    }

    /// The tables, the failures and the summary lines for a terminal or a log, the tables laid
    /// out for `style`'s width.
    pub fn human_in(&self, style: &Style) -> String {
        let (features, builds, targets) = self.tables();
        let mut out = String::new();
        features.render_text(&mut out, style);
        out.push('\n');
        builds.render_text(&mut out, style);
        if let Some(targets) = targets {
            out.push('\n');
            targets.render_text(&mut out, style);
            for note in self.targets.notes(&self.toolchains) {
                let _ = writeln!(out, "  {}", escape(&note));
            }
        }
        out.push_str("\n`!` marks a cell that differs from the catalog's prediction.\n");
        let failures = self.failures();
        if !failures.is_empty() {
            let _ = writeln!(out, "\n{} failure(s):", failures.len());
            for failure in &failures {
                let line = escape(&failure_line(failure)).into_owned();
                let _ = writeln!(out, "  {}", paint_red(&line, style.colour));
            }
        }
        out.push('\n');
        for summary in self.summary_lines_by_release() {
            let _ = writeln!(out, "{}", escape(&summary));
        }
        out
    }

    /// The same tables, failures and summaries as Markdown.
    pub fn markdown(&self) -> String {
        let (features, builds, targets) = self.tables();
        let mut out = String::from("## Features\n\n");
        features.render_markdown(&mut out);
        out.push_str("\n## Builds, runs and tests (kernel mode / stable mode)\n\n");
        builds.render_markdown(&mut out);
        if let Some(targets) = targets {
            out.push_str("\n## Kernel targets (kernel mode / stable mode)\n\n");
            targets.render_markdown(&mut out);
            out.push('\n');
            for note in self.targets.notes(&self.toolchains) {
                let _ = writeln!(out, "- {}", escape_markdown(&note));
            }
        }
        out.push_str("\n`!` marks a cell that differs from the catalog's prediction.\n");
        let failures = self.failures();
        if !failures.is_empty() {
            out.push_str("\n## Failures\n\n");
            for failure in &failures {
                let line = escape_markdown(&failure_line(failure));
                let _ = writeln!(out, "- {line}");
            }
        }
        out.push_str("\n## Summary\n\n");
        for summary in self.summary_lines_by_release() {
            let _ = writeln!(out, "- {}", escape(&summary));
        }
        out
    }

    /// [`Report::summary_lines`] in release order, as the tables' columns.
    fn summary_lines_by_release(&self) -> Vec<String> {
        let lines = self.summary_lines();
        super::release_order(&self.toolchains)
            .into_iter()
            .map(|index| lines[index].clone())
            .collect()
    }
}

/// Cells' `(outcome, ok)`, one per mode, as one table cell (`pass/FAIL`, `-` for no cell),
/// flagged when any differs from its prediction.
pub(super) fn outcome_cell(cells: &[Option<(Outcome, bool)>]) -> (String, bool) {
    let words: Vec<&str> = cells
        .iter()
        .map(|cell| match cell.map(|(outcome, _)| outcome) {
            Some(Outcome::Pass) => "pass",
            Some(Outcome::Fail) => "FAIL",
            Some(Outcome::Skipped) => "skip",
            None => "-",
        })
        .collect();
    let differs = cells.iter().any(|cell| cell.is_some_and(|(_, ok)| !ok));
    (words.join("/"), differs)
}
