// SPDX-License-Identifier: GPL-2.0
//! `docs/compat.html`: the compatibility page, one self-contained file (inline style, no script,
//! no external asset, readable from a `file:` URL) generated from a matrix report and a usage
//! report: the feature, target and host-build grids, the compilers, and a popup per cell.
//!
//! Every cell that stands for one of the report's cells carries `data-cell` (its key) and a
//! class naming what was observed; a cell that differs from the catalog's prediction also has
//! the class `differs`, so the browser test can count them against the report's failures.

mod builds;
mod compilers;
mod features;
mod kernel;

use self::builds::{host_grid, target_grid};
use self::compilers::compilers_table;
use self::features::feature_grid;
use self::kernel::{kbuild_grid, kernel_trees_section};
use super::kernels::TreeData;
use crate::catalog::MINIMUM_RELEASE;
use crate::expect::ToolchainVerdict;
use crate::report::usage::UsageReport;
use crate::report::{release_order, Observed, Report, ToolchainEntry};
use crate::status::Status;
use std::fmt::Write;

/// Where the page is written, relative to the repository root.
pub const PAGE: &str = "docs/compat.html";

/// `text` with HTML's special characters escaped, for element text and quoted attributes.
pub fn escape_html(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            other => escaped.push(other),
        }
    }
    escaped
}

/// The class a feature cell gets for what the compiler said.
pub fn feature_class(observed: &Observed) -> &'static str {
    match observed {
        Observed::Status(Status::Stable(_)) => "st-stable",
        Observed::Status(Status::Gated) => "st-gated",
        Observed::Status(Status::Unknown) => "st-unknown",
        Observed::Status(Status::Removed) => "st-removed",
        Observed::NotProbed => "st-not-probed",
        Observed::ProbeFailed(_) => "st-probe-failed",
    }
}

/// One name per compiler, the same in every grid, table and popup: its id.
fn name(toolchain: &ToolchainEntry) -> &str {
    &toolchain.id
}

/// The popups the page's cells open (`<a href="#p12">`), collected while the grids are written
/// and put at the end of the page.
#[derive(Default)]
struct Popups {
    html: String,
    count: usize,
}

impl Popups {
    /// Adds a popup with `title` and `body` (HTML), returning its id.
    fn add(&mut self, title: &str, body: &str) -> String {
        self.count += 1;
        let id = format!("p{}", self.count);
        let _ = writeln!(
            self.html,
            "<div class=\"pop\" id=\"{id}\"><a class=\"close\" href=\"#_\" title=\"close\">\u{d7}</a>\
             <h3>{}</h3>{body}</div>",
            escape_html(title)
        );
        id
    }
}

/// The page for `report`, with the places of `usage` where given, dated `date` (the report's).
pub fn compat_page(
    report: &Report,
    usage: Option<&UsageReport>,
    kernel_trees: &[TreeData],
    date: &str,
) -> String {
    let order = release_order(&report.toolchains);
    let (found, missing): (Vec<usize>, Vec<usize>) = order.into_iter().partition(|&index| {
        matches!(
            report.toolchains[index].verdict,
            ToolchainVerdict::Ok | ToolchainVerdict::TooOld
        )
    });
    let mut popups = Popups::default();
    let failures = report.failures();
    let mut body = String::new();

    let _ = writeln!(
        body,
        "<header><h1>Which compiler takes which kernel feature</h1>\
         <p class=\"lede\">Every cell is what a real compiler said in one <code>cargo xtask \
         matrix</code> run, dated <b>{date}</b>, on {} compilers, next to what the catalog \
         (<code>kernel-shim/src/catalog.rs</code>) predicts. {}</p></header>",
        found.len(),
        if failures.is_empty() {
            "No compiler disagreed with the catalog.".to_string()
        } else {
            format!(
                "<b class=\"bad\">{} cell(s) differ from the catalog</b>, framed in red.",
                failures.len()
            )
        },
        date = escape_html(date),
    );
    body.push_str(&legend());
    body.push_str(&feature_grid(report, usage, &found, &mut popups));
    body.push_str(&target_grid(report, &found, &mut popups));
    body.push_str(&host_grid(report, &found, &mut popups));
    body.push_str(&kbuild_grid(report, &found, &mut popups));
    body.push_str(&kernel_trees_section(kernel_trees, &mut popups));
    body.push_str(&compilers_table(report, &found, &missing, &mut popups));
    if !failures.is_empty() {
        body.push_str("<section><h2 id=\"failures\">Where the compilers disagree</h2><ul>");
        for failure in &failures {
            let _ = write!(
                body,
                "<li><code>{}</code>",
                escape_html(&crate::report::failure_line(failure))
            );
        }
        body.push_str("</ul></section>\n");
    }
    let _ = writeln!(
        body,
        "<footer>Generated by <code>cargo xtask docs</code> from <code>docs/matrix-report.json</code>{} \
         (dated {}); regenerate the reports with <code>cargo xtask matrix --format json</code> and \
         <code>cargo xtask usage --format json</code>.</footer>",
        if usage.is_some() {
            " and <code>docs/usage-report.json</code>"
        } else {
            ""
        },
        escape_html(date)
    );
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>kshim: compiler compatibility, {date}</title>\n<style>\n{STYLE}</style>\n</head>\n\
         <body>\n{body}{popups}</body>\n</html>\n",
        date = escape_html(date),
        popups = popups.html,
    )
}

/// The header cells of a grid's compiler columns.
fn column_headers(report: &Report, found: &[usize]) -> String {
    let mut row = String::new();
    for &index in found {
        let toolchain = &report.toolchains[index];
        let release = toolchain.release_text.as_deref().unwrap_or("");
        let note = if toolchain.id.ends_with(release) {
            String::new()
        } else {
            format!("<small>{}</small>", escape_html(release))
        };
        let _ = write!(
            row,
            "<th class=\"col{}\" title=\"{}\">{}{note}</th>",
            below_class(toolchain),
            escape_html(&toolchain.verdict.describe()),
            escape_html(name(toolchain)),
        );
    }
    row
}

/// ` below` for a compiler under the kernel's minimum, whose columns are faded.
fn below_class(toolchain: &ToolchainEntry) -> &'static str {
    if toolchain.verdict == ToolchainVerdict::TooOld {
        " below"
    } else {
        ""
    }
}

fn legend() -> String {
    format!(
        "<section class=\"legend\"><h2>Legend</h2><div class=\"keys\">\
         <span><i class=\"sw st-stable\">since 1.79</i> stable since 1.79</span>\
         <span><i class=\"sw st-gated\">gated</i> gated: needs RUSTC_BOOTSTRAP</span>\
         <span><i class=\"sw st-unknown\">unknown</i> unknown to this compiler</span>\
         <span><i class=\"sw out-pass\">\u{2713}</i> passed</span>\
         <span><i class=\"sw out-fail\">\u{2717}</i> failed (as predicted, unless framed)</span>\
         <span><i class=\"sw out-skipped\">\u{2013}</i> skipped</span>\
         <span><i class=\"sw st-gated differs\">gated</i> framed: the compiler disagrees with \
         the catalog</span>\
         <span class=\"below\"><i class=\"sw st-gated\">gated</i> faded: below the kernel's \
         minimum ({MINIMUM_RELEASE}), probed for information</span>\
         </div><p class=\"muted\">Columns are ordered by release. Click a cell for where the \
         feature is used or the compiler's first error; hover for a summary. \
         <b>k</b>/<b>s</b>: kernel mode (the kernel's <code>#![feature]</code> block, \
         <code>RUSTC_BOOTSTRAP=1</code>) and stable mode (no <code>#![feature]</code>).</p>\
         </section>\n"
    )
}

const STYLE: &str = include_str!("page/style.css");
