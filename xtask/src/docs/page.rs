// SPDX-License-Identifier: GPL-2.0
//! `docs/compat.html`: the compatibility page, one self-contained file (inline style, no script,
//! no external asset) from the recorded reports, with a popup per cell. A cell that stands for
//! one of the report's carries `data-cell` (its key), and the class `differs` where it is not
//! the catalog's prediction, so the browser test can count them against the report's failures.

mod builds;
mod compilers;
mod features;
mod history;
mod kernel;
mod verdicts;

use self::builds::{host_grid, target_grid};
use self::compilers::compilers_table;
use self::features::feature_grid;
use self::history::{by_release_section, trees_section};
use self::kernel::{kbuild_grid, kernel_trees_section};
use self::verdicts::{findings, verdict_table};
use super::kernels::TreeData;
use crate::catalog::MINIMUM_RELEASE;
use crate::features::expect::{Outcome, ToolchainVerdict};
use crate::report::usage::UsageReport;
use crate::report::{release_order, Report, ToolchainEntry};
use anyhow::Context;
use std::fmt::Write;

/// Where the page is written, relative to the repository root.
pub const PAGE: &str = "docs/compat.html";

/// The page's picture for the README, taken by `cargo xtask docs --screenshot`.
pub const SCREENSHOT: &str = "docs/compat.png";

/// The keyword of the screenshot's PNG text chunk that holds [`digest`] of the page it shows.
pub const SCREENSHOT_STAMP: &str = "kshim-page-digest";

/// The digest a screenshot is stamped with: of the page's text, the same on every machine.
pub fn digest(html: &str) -> String {
    crate::util::hash::StableHasher::new()
        .field(html)
        .finish()
        .to_string()
}

/// Why the committed screenshot does not show the page `html`, if it does not.
pub fn stale_screenshot(root: &std::path::Path, html: &str) -> anyhow::Result<Option<String>> {
    let path = root.join(SCREENSHOT);
    let reading = || format!("reading {SCREENSHOT}");
    let png = match std::fs::read(&path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        png => png.with_context(reading)?,
    };
    let stamp = crate::util::png::text(&png, SCREENSHOT_STAMP).with_context(reading)?;
    Ok(match stamp {
        Some(stamp) if stamp == digest(html) => None,
        Some(_) => Some(format!(
            "{SCREENSHOT} was taken from another page than {PAGE}"
        )),
        None => Some(format!(
            "{SCREENSHOT} does not say which page it was taken from"
        )),
    })
}

pub use crate::util::output::escape_html;

/// A compiler's column: its index among the report's toolchains, and its entry.
type Column<'a> = (usize, &'a ToolchainEntry);

/// The popups the page's cells open (`<a href="#p12">`), put at the end of the page.
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

    /// `text` (HTML) as a link to a new popup with `title` and `body`.
    fn link(&mut self, title: &str, body: &str, text: &str) -> String {
        format!("<a href=\"#{}\">{text}</a>", self.add(title, body))
    }
}

/// A grid's start, up to its body: `heading` above the table of `class`, whose header row is
/// `corner` and `columns`.
fn grid_head(heading: &str, class: &str, corner: &str, columns: &str) -> String {
    format!(
        "<section>{heading}<div class=\"scroll\"><table class=\"{class}\"><thead><tr>\
         <th class=\"corner\">{corner}</th>{columns}</tr></thead><tbody>\n"
    )
}

/// The class and the sign of an outcome's square (no outcome: skipped).
fn mark(outcome: Option<Outcome>) -> (String, &'static str) {
    let outcome = outcome.unwrap_or(Outcome::Skipped);
    let sign = match outcome {
        Outcome::Pass => "\u{2713}",
        Outcome::Fail => "\u{2717}",
        Outcome::Skipped => "\u{2013}",
    };
    (format!("out-{}", outcome.word()), sign)
}

/// A compiler's release after its `id`, where it has one and the id does not end with it.
fn release_note(id: &str, release: Option<&str>) -> String {
    match release {
        Some(release) if !id.ends_with(release) => {
            format!("<small>{}</small>", escape_html(release))
        }
        _ => String::new(),
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
    let columns = order
        .into_iter()
        .map(|index| (index, &report.toolchains[index]));
    let (found, missing): (Vec<Column>, Vec<Column>) = columns.partition(|(_, toolchain)| {
        matches!(
            toolchain.verdict,
            ToolchainVerdict::Ok | ToolchainVerdict::TooOld
        )
    });
    let mut popups = Popups::default();
    let failures = report.failures();
    let mut body = String::new();
    let date = escape_html(date);

    let _ = writeln!(
        body,
        "<header><h1>Which compiler takes which kernel feature</h1>\
         <p class=\"lede\">Every cell is what a real compiler said in one <code>cargo xtask \
         matrix</code> run, dated <b>{date}</b>, on {} compilers, next to what the catalog \
         (<code>kernel-shim/src/catalog.rs</code>) predicts, and what the real kernel trees' \
         own Kbuild did with them. {}</p></header>",
        found.len(),
        findings(report, kernel_trees),
    );
    body.push_str(&verdict_table(report, kernel_trees, &found, &missing));
    body.push_str(&legend());
    body.push_str(&feature_grid(report, usage, &found, &mut popups));
    body.push_str(&kernel_trees_section(report, kernel_trees, &mut popups));
    body.push_str(&trees_section(kernel_trees));
    body.push_str(&by_release_section(kernel_trees));
    body.push_str(&target_grid(report, &found, &mut popups));
    body.push_str(&host_grid(report, &found, &mut popups));
    body.push_str(&kbuild_grid(report, &found, &mut popups));
    body.push_str(&compilers_table(report, &found, &missing, &mut popups));
    if !failures.is_empty() {
        body.push_str("<section><h2 id=\"failures\">Where the compilers disagree</h2><ul>");
        for failure in &failures {
            let line = escape_html(&crate::report::failure_line(failure));
            let _ = write!(body, "<li><code>{line}</code>");
        }
        body.push_str("</ul></section>\n");
    }
    let _ = writeln!(
        body,
        "<footer>Generated by <code>cargo xtask docs</code> from <code>docs/matrix-report.json</code>{} \
         (dated {date}); regenerate the reports with <code>cargo xtask matrix --format json</code> and \
         <code>cargo xtask usage --format json</code>.</footer>",
        if usage.is_some() {
            " and <code>docs/usage-report.json</code>"
        } else {
            ""
        },
    );
    let page = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>kshim: compiler compatibility, {date}</title>\n<style>\n{STYLE}</style>\n</head>\n\
         <body>\n{body}{popups}</body>\n</html>\n",
        popups = popups.html,
    );
    super::machine_paths::without_machine_paths(&page)
}

/// A feature's name linked to its entry in `docs/features.md`, where the catalog has it.
fn feature_link(name: &str) -> String {
    match crate::catalog::feature(name) {
        Some(feature) => format!(
            "<a class=\"feature\" href=\"features.md#{}\"><code>{}</code></a>",
            feature.name,
            // A narrow column breaks a long name after an underscore, not inside a word.
            feature.name.replace('_', "_<wbr>")
        ),
        None => format!("<code>{}</code>", escape_html(name)),
    }
}

/// The features `names` linked, or `none` where there are none.
fn feature_links(names: &[impl AsRef<str>], none: &str) -> String {
    let links: Vec<String> = names
        .iter()
        .map(|name| feature_link(name.as_ref()))
        .collect();
    if links.is_empty() {
        none.to_string()
    } else {
        links.join(", ")
    }
}

/// The header cells of a grid's compiler columns.
fn column_headers(found: &[Column]) -> String {
    let headers = found.iter().map(|(_, toolchain)| {
        format!(
            "<th class=\"col{}\" title=\"{}\">{}{}</th>",
            below_class(toolchain),
            escape_html(&toolchain.verdict.describe()),
            escape_html(&toolchain.id),
            release_note(&toolchain.id, toolchain.release_text.as_deref()),
        )
    });
    headers.collect()
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
         <span><i class=\"sw st-gated off\">not enabled</i> gated or unknown, but the \
         kernel's block leaves it out on this compiler: the condition under the feature's name \
         does not hold</span>\
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
