// SPDX-License-Identifier: GPL-2.0
//! The usage report for people: per feature, the toolchains that said the same thing grouped on
//! one line, then the places; as plain text or Markdown.

use super::{UsageCell, UsageReport};
use crate::features::places::{SourcePoint, UsedPlace};
use crate::util::output::escape_markdown;
use std::fmt::Write;

/// A place as one line: `file:line:col in `item` (target)`, with the macro's call site.
pub(super) fn place_line(place: &UsedPlace) -> String {
    let mut line = point_text(&place.at);
    if let Some(item) = &place.item {
        line.push_str(&format!(" in `{item}`"));
    }
    if let Some(site) = &place.call_site {
        line.push_str(&format!(", expanded from {}", point_text(site)));
        if !place.macros.is_empty() {
            line.push_str(&format!(" through {}", place.macros.join(", ")));
        }
    }
    if !place
        .at
        .file
        .starts_with(&format!("examples/{}", place.target))
    {
        let compiled = match place.target.as_str() {
            "kernel" => "the shim",
            example => example,
        };
        line.push_str(&format!(" (compiling {compiled})"));
    }
    line
}

fn point_text(at: &SourcePoint) -> String {
    format!("{}:{}:{}", at.file, at.line, at.column)
}

/// What a cell says, in one line, without its places.
pub(crate) fn cell_summary(cell: &UsageCell) -> String {
    match cell {
        UsageCell::Used(places) => format!("{} place(s)", places.len()),
        UsageCell::Unused(attributes) if attributes.is_empty() => {
            "unused: gated, and nothing needs it".to_string()
        }
        UsageCell::Unused(attributes) => {
            let at: Vec<String> = attributes.iter().map(point_text).collect();
            format!(
                "unused: gated and enabled (at {}), and nothing needs it",
                at.join(", ")
            )
        }
        UsageCell::Stable(since) => format!("stable here (since {since}), not gated"),
        UsageCell::NotEnabled => {
            "not enabled on this release (its condition does not hold)".to_string()
        }
        UsageCell::NotGated(status) => format!("{status} here, not gated"),
        UsageCell::Failed(error, places) => {
            format!("failed ({} place(s) read): {error}", places.len())
        }
        UsageCell::NotRun(reason) => format!("not run: {reason}"),
    }
}

/// The toolchains (those at `indices`, in that order) of each distinct cell of a feature's
/// row, in the order the cells first appear.
pub(crate) fn groups<'a>(
    report: &'a UsageReport,
    cells: &'a [UsageCell],
    indices: impl IntoIterator<Item = usize>,
) -> Vec<(Vec<&'a str>, &'a UsageCell)> {
    let mut groups: Vec<(Vec<&str>, &UsageCell)> = Vec::new();
    for index in indices {
        let (label, cell) = (report.toolchains[index].label.as_str(), &cells[index]);
        match groups.iter_mut().find(|(_, seen)| *seen == cell) {
            Some((labels, _)) => labels.push(label),
            None => groups.push((vec![label], cell)),
        }
    }
    groups
}

impl UsageReport {
    /// The report as text: each feature, each group of toolchains, each place on its own line.
    pub fn human(&self) -> String {
        let mut out = String::new();
        for feature in &self.features {
            out.push_str(&feature.name);
            if !feature.shim_item.is_empty() {
                let _ = write!(out, " (shim item: {})", feature.shim_item);
            }
            out.push('\n');
            for (labels, cell) in groups(self, &feature.cells, 0..self.toolchains.len()) {
                let _ = writeln!(out, "  {}: {}", labels.join(", "), cell_summary(cell));
                for place in cell.parts().2 {
                    let _ = writeln!(out, "    {}", place_line(place));
                }
            }
        }
        out.push_str(&self.summary());
        out.push('\n');
        out
    }

    /// Whether the toolchain at `index` ran for any feature.
    pub fn ran(&self, index: usize) -> bool {
        self.features
            .iter()
            .any(|feature| !matches!(feature.cells.get(index), Some(UsageCell::NotRun(_)) | None))
    }

    /// One line: how many features each toolchain that ran found used, unused and stable.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        for (index, toolchain) in self.toolchains.iter().enumerate() {
            let count = |word: &str| {
                self.features
                    .iter()
                    .filter(|feature| feature.cells[index].word() == word)
                    .count()
            };
            if !self.ran(index) {
                continue;
            }
            let mut part = format!(
                "{}: {} used, {} unused, {} stable here",
                toolchain.label,
                count("used"),
                count("unused"),
                count("stable")
            );
            if count("failed") > 0 {
                part.push_str(&format!(", {} FAILED", count("failed")));
            }
            parts.push(part);
        }
        if parts.is_empty() {
            "no toolchain ran".to_string()
        } else {
            parts.join("; ")
        }
    }

    /// The report as Markdown: one table row per feature and group of toolchains.
    pub fn markdown(&self) -> String {
        let mut out = String::from("| Feature | Toolchains | What they say |\n|---|---|---|\n");
        for feature in &self.features {
            for (labels, cell) in groups(self, &feature.cells, 0..self.toolchains.len()) {
                let mut said = escape_markdown(&cell_summary(cell));
                for place in cell.parts().2 {
                    said.push_str("<br>");
                    said.push_str(&escape_markdown(&place_line(place)));
                }
                let labels = escape_markdown(&labels.join(", "));
                let _ = writeln!(out, "| `{}` | {labels} | {said} |", feature.name);
            }
        }
        out.push_str(&format!("\n{}\n", self.summary()));
        out
    }
}
