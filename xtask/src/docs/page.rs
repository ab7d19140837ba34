// SPDX-License-Identifier: GPL-2.0
//! `docs/compat.html`: the compatibility page, one self-contained file (inline style, no script,
//! no external asset, readable from a `file:` URL) generated from a matrix report and a usage
//! report: the feature, target and host-build grids, the compilers, and a popup per cell.
//!
//! Every cell that stands for one of the report's cells carries `data-cell` (its key) and a
//! class naming what was observed; a cell that differs from the catalog's prediction also has
//! the class `differs`, so the browser test can count them against the report's failures.

use super::kernels::TreeData;
use crate::catalog::{FEATURES, MINIMUM_RELEASE};
use crate::expect::{Outcome, ToolchainVerdict};
use crate::places::SourcePoint;
use crate::plan::{Kind, Mode};
use crate::report::platforms::{CrossCell, STAGES};
use crate::report::{cell_kinds, release_order, FeatureCell, Observed, Report, ToolchainEntry};
use crate::status::Status;
use crate::usage_report::text::cell_summary;
use crate::usage_report::{UsageCell, UsageReport};
use std::collections::HashMap;
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

/// The class a build or cross cell gets for its outcome.
pub fn outcome_class(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Pass => "out-pass",
        Outcome::Fail => "out-fail",
        Outcome::Skipped => "out-skipped",
    }
}

/// The class a "listed" cell gets for what `rustc --print target-list` said.
pub fn known_class(observed: Option<bool>, failed: bool) -> &'static str {
    match (observed, failed) {
        (_, true) => "kn-failed",
        (Some(true), _) => "kn-known",
        (Some(false), _) => "kn-unknown",
        (None, _) => "kn-none",
    }
}

/// The class of a compiler's verdict cell.
pub fn verdict_class(verdict: &ToolchainVerdict) -> String {
    format!("v-{}", verdict.word())
}

/// One name per compiler, the same in every grid, table and popup: its id.
fn name(toolchain: &ToolchainEntry) -> &str {
    &toolchain.id
}

/// A path the report recorded, shown without the machine it ran on: from `target/` for
/// compilers this project unpacked, from `~/.rustup/` for rustup's.
fn shown_path(path: &str) -> String {
    for marker in ["/target/toolchains/", "/.rustup/"] {
        if let Some(at) = path.find(marker) {
            let prefix = if marker == "/.rustup/" { "~" } else { "" };
            return format!("{prefix}{}", &path[at..].trim_start_matches('/'))
                .replace("~.rustup", "~/.rustup");
        }
    }
    path.to_string()
}

/// A source point as a link from `docs/` for a repository file, or as text relative to the
/// compiler's library sources (`library/core/src/...`) for a file of theirs.
fn point_html(at: &SourcePoint) -> String {
    if let Some(at_library) = at
        .file
        .find("/library/")
        .filter(|_| at.file.starts_with('/'))
    {
        let relative = &at.file[at_library + 1..];
        return format!(
            "<code>{}:{}</code> <span class=\"muted\">(the compiler's library sources)</span>",
            escape_html(relative),
            at.line
        );
    }
    let inside = !at.file.starts_with('/') && !at.file.split('/').any(|part| part == "..");
    if inside {
        format!(
            "<a href=\"../{0}#L{1}\"><code>{2}:{1}</code></a>",
            escape_html(&at.file),
            at.line,
            escape_html(&at.file)
        )
    } else {
        format!("<code>{}:{}</code>", escape_html(&at.file), at.line)
    }
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

/// What a feature status says, spelled out for a legend, a title or a popup.
fn status_words(observed: &Observed) -> String {
    match observed {
        Observed::Status(Status::Stable(since)) => {
            format!("stable since {}.{}", since.major, since.minor)
                + &if since.patch == 0 {
                    String::new()
                } else {
                    format!(".{}", since.patch)
                }
        }
        Observed::Status(Status::Gated) => "gated: needs RUSTC_BOOTSTRAP".into(),
        Observed::Status(Status::Unknown) => "unknown to this compiler".into(),
        Observed::Status(Status::Removed) => "removed from this compiler".into(),
        Observed::NotProbed => "not probed".into(),
        Observed::ProbeFailed(_) => "the probe failed".into(),
    }
}

/// The short text inside a feature cell.
fn status_short(observed: &Observed) -> String {
    match observed {
        Observed::Status(Status::Stable(since)) => {
            format!("since {}.{}", since.major, since.minor)
        }
        Observed::Status(Status::Gated) => "gated".into(),
        Observed::Status(Status::Unknown) => "unknown".into(),
        Observed::Status(Status::Removed) => "removed".into(),
        Observed::NotProbed => "\u{2013}".into(),
        Observed::ProbeFailed(_) => "failed".into(),
    }
}

fn outcome_words(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Pass => "passed",
        Outcome::Fail => "failed",
        Outcome::Skipped => "skipped",
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

/// The feature x compiler grid, each cell opening the places the usage report has for it.
fn feature_grid(
    report: &Report,
    usage: Option<&UsageReport>,
    found: &[usize],
    popups: &mut Popups,
) -> String {
    let usage_cells: HashMap<(&str, &str), &UsageCell> = usage
        .map(|usage| {
            usage
                .features
                .iter()
                .flat_map(|feature| {
                    usage
                        .toolchains
                        .iter()
                        .zip(&feature.cells)
                        .map(|(toolchain, cell)| {
                            ((feature.name.as_str(), toolchain.id.as_str()), cell)
                        })
                })
                .collect()
        })
        .unwrap_or_default();
    let mut html = format!(
        "<section><h2 id=\"features\">Features</h2>\
         <p class=\"muted\">What each compiler says when a <code>#![feature]</code> attribute \
         names the feature, with <code>RUSTC_BOOTSTRAP=1</code>.</p>\
         <table class=\"grid\"><thead><tr><th class=\"corner\">feature</th>{}</tr></thead><tbody>\n",
        column_headers(report, found)
    );
    for (feature, cells) in FEATURES.iter().zip(&report.features) {
        let _ = write!(
            html,
            "<tr><th class=\"row\"><code>{}</code></th>",
            feature.name
        );
        for &index in found {
            let toolchain = &report.toolchains[index];
            let cell: &FeatureCell = &cells[index];
            let words = status_words(&cell.observed);
            let mut detail = format!(
                "<p><b>{}</b> on <b>{}</b>: {}.</p>",
                feature.name,
                escape_html(name(toolchain)),
                escape_html(&words)
            );
            match cell.expected {
                Some(expected) if !cell.ok() => {
                    let _ = write!(
                        detail,
                        "<p class=\"bad\">The catalog predicts {}.</p>",
                        escape_html(&status_words(&Observed::Status(expected)))
                    );
                }
                Some(_) => detail.push_str("<p class=\"muted\">As the catalog predicts.</p>"),
                None => detail.push_str(
                    "<p class=\"muted\">Below the kernel's minimum: probed for information, \
                     not predicted.</p>",
                ),
            }
            if let Observed::ProbeFailed(error) = &cell.observed {
                let _ = write!(detail, "<pre>{}</pre>", escape_html(error));
            }
            if let Some(usage_cell) = usage_cells.get(&(feature.name, toolchain.id.as_str())) {
                detail.push_str(&usage_html(usage_cell));
            }
            let id = popups.add(&format!("{} on {}", feature.name, name(toolchain)), &detail);
            let _ = write!(
                html,
                "<td class=\"cell {}{}{}\" data-cell=\"feature/{}/{}\"><a href=\"#{id}\" \
                 title=\"{}\">{}</a></td>",
                feature_class(&cell.observed),
                if cell.ok() { "" } else { " differs" },
                below_class(toolchain),
                feature.name,
                escape_html(&toolchain.id),
                escape_html(&words),
                escape_html(&status_short(&cell.observed)),
            );
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table></section>\n");
    html
}

/// Where the usage report says a feature is needed, or why it says nowhere.
fn usage_html(cell: &UsageCell) -> String {
    match cell {
        UsageCell::Used(places) | UsageCell::Failed(_, places) if !places.is_empty() => {
            let mut html = String::from("<p>Where this compiler says it is needed:</p><ul>");
            for place in places {
                let _ = write!(html, "<li>{}", point_html(&place.at));
                if let Some(item) = &place.item {
                    let _ = write!(html, " in <code>{}</code>", escape_html(item));
                }
                if let Some(site) = &place.call_site {
                    let _ = write!(html, ", expanded at {}", point_html(site));
                }
                html.push_str("</li>");
            }
            html.push_str("</ul>");
            if let UsageCell::Failed(error, _) = cell {
                let _ = write!(
                    html,
                    "<p class=\"bad\">A compile failed, so this may be incomplete:</p><pre>{}</pre>",
                    escape_html(error)
                );
            }
            html
        }
        other => format!(
            "<p class=\"muted\">Usage: {}.</p>",
            escape_html(&cell_summary(other))
        ),
    }
}

/// One atomic build or cross cell: a small square with a popup where there is more to say.
fn outcome_square(
    label: &str,
    key: &str,
    letter: &str,
    outcome: Outcome,
    expected: Outcome,
    extra: &[Option<&str>],
    popups: &mut Popups,
) -> String {
    let ok = outcome == expected;
    let mut title = format!("{label}: {}", outcome_words(outcome));
    if !ok {
        let _ = write!(
            title,
            " (the catalog predicts: {})",
            outcome_words(expected)
        );
    } else if outcome == Outcome::Fail {
        title.push_str(" (as the catalog predicts)");
    }
    let texts: Vec<&str> = extra.iter().flatten().copied().collect();
    let inner = if texts.is_empty() {
        format!("<span title=\"{}\">{letter}</span>", escape_html(&title))
    } else {
        let mut detail = format!("<p>{}.</p>", escape_html(&title));
        for text in &texts {
            let _ = write!(detail, "<pre>{}</pre>", escape_html(text));
        }
        let id = popups.add(label, &detail);
        format!(
            "<a href=\"#{id}\" title=\"{}\">{letter}</a>",
            escape_html(&format!("{title}: {}", texts[0]))
        )
    };
    format!(
        "<span class=\"sq {}{}{}\" data-cell=\"{}\">{inner}</span>",
        outcome_class(outcome),
        if ok { "" } else { " differs" },
        if expected == Outcome::Fail {
            " predicted-fail"
        } else {
            ""
        },
        escape_html(key),
    )
}

/// The target x compiler grid: per kernel target, whether each compiler lists it, then its
/// stages (`core`, `compiler_builtins`, the shim, the static-key objects, the test program
/// under the emulator), per mode where built per mode.
fn target_grid(report: &Report, found: &[usize], popups: &mut Popups) -> String {
    let platforms = &report.platforms;
    if platforms.triples.is_empty() {
        return "<section><h2 id=\"targets\">Kernel targets</h2><p>This run had no target \
                axis (<code>--target none</code>).</p></section>\n"
            .into();
    }
    let cross: HashMap<(usize, &str, &str, Option<Mode>), &CrossCell> = platforms
        .cross
        .iter()
        .map(|cell| {
            (
                (
                    cell.toolchain,
                    cell.triple.as_str(),
                    cell.target.as_str(),
                    cell.mode,
                ),
                cell,
            )
        })
        .collect();
    let mut html = format!(
        "<section><h2 id=\"targets\">Kernel targets</h2>\
         <p class=\"muted\">Per target: listed by <code>rustc --print target-list</code>; \
         <code>core</code> and <code>compiler_builtins</code> built from the compiler's own \
         library sources; the shim built; every static-branch site of a sample's object \
         checked; a freestanding test program that patches its keys run under qemu.</p>\
         <table class=\"grid\"><thead><tr><th class=\"corner\">target and stage</th>{}</tr>\
         </thead><tbody>\n",
        column_headers(report, found)
    );
    for triple in &platforms.triples {
        let _ = write!(
            html,
            "<tr class=\"group\"><th class=\"row\"><code>{}</code> listed</th>",
            escape_html(triple)
        );
        for &index in found {
            let toolchain = &report.toolchains[index];
            let cell = platforms
                .known
                .iter()
                .find(|cell| cell.toolchain == index && &cell.triple == triple);
            match cell {
                Some(cell) => {
                    let class = known_class(cell.observed, cell.error.is_some());
                    let text = match (cell.observed, &cell.error) {
                        (_, Some(_)) => "failed",
                        (Some(true), _) => "\u{2713}",
                        (Some(false), _) => "no",
                        (None, _) => "\u{2013}",
                    };
                    let inner = match &cell.error {
                        Some(error) => {
                            let id = popups.add(
                                &format!("{triple} on {}", name(toolchain)),
                                &format!("<pre>{}</pre>", escape_html(error)),
                            );
                            format!("<a href=\"#{id}\">{text}</a>")
                        }
                        None => text.to_string(),
                    };
                    let _ = write!(
                        html,
                        "<td class=\"cell {class}{}{}\" data-cell=\"known/{}/{}\">{inner}</td>",
                        if cell.ok() { "" } else { " differs" },
                        below_class(toolchain),
                        escape_html(triple),
                        escape_html(&toolchain.id),
                    );
                }
                None => {
                    let _ = write!(
                        html,
                        "<td class=\"cell none{}\"></td>",
                        below_class(toolchain)
                    );
                }
            }
        }
        html.push_str("</tr>\n");
        for (target, kind, moded) in STAGES {
            let stage = match kind {
                Kind::Build => "build the shim".to_string(),
                Kind::Objects => "check static-key objects".to_string(),
                Kind::Emulate => "run test program".to_string(),
                _ => format!("build {target}"),
            };
            let _ = write!(html, "<tr><th class=\"row stage\">{stage}</th>");
            for &index in found {
                let toolchain = &report.toolchains[index];
                let modes: &[Option<Mode>] = if moded {
                    &[Some(Mode::Kernel), Some(Mode::Stable)]
                } else {
                    &[None]
                };
                let mut squares = String::new();
                for &mode in modes {
                    let Some(cell) = cross.get(&(index, triple.as_str(), target, mode)) else {
                        continue;
                    };
                    let letter = match mode {
                        Some(Mode::Kernel) => "k",
                        Some(Mode::Stable) => "s",
                        None => match cell.outcome {
                            Outcome::Pass => "\u{2713}",
                            Outcome::Fail => "\u{2717}",
                            Outcome::Skipped => "\u{2013}",
                        },
                    };
                    let key = format!(
                        "cross/{triple}/{target}/{}/{}",
                        mode.map_or("-", Mode::word),
                        toolchain.id
                    );
                    squares.push_str(&outcome_square(
                        &format!("{} on {}", cell.label(), name(toolchain)),
                        &key,
                        letter,
                        cell.outcome,
                        cell.expected,
                        &[cell.first_error.as_deref(), cell.detail.as_deref()],
                        popups,
                    ));
                }
                let _ = write!(
                    html,
                    "<td class=\"cell squares{}\">{squares}</td>",
                    below_class(toolchain)
                );
            }
            html.push_str("</tr>\n");
        }
    }
    html.push_str("</tbody></table>");
    let notes = platforms.notes(&report.toolchains);
    if !notes.is_empty() {
        html.push_str("<ul class=\"notes\">");
        for note in notes {
            let _ = write!(html, "<li>{}</li>", escape_html(&note));
        }
        html.push_str("</ul>");
    }
    html.push_str("</section>\n");
    html
}

/// The host grid: per target (the shim and every example), build, run and test in both modes
/// on each compiler, in a `<details>` that is open where a cell differs.
fn host_grid(report: &Report, found: &[usize], popups: &mut Popups) -> String {
    let mut targets: Vec<&str> = Vec::new();
    for build in &report.builds {
        if !targets.contains(&build.target.as_str()) {
            targets.push(&build.target);
        }
    }
    let cells: HashMap<(usize, &str, Mode, Kind), _> = report
        .builds
        .iter()
        .map(|build| {
            (
                (
                    build.toolchain,
                    build.target.as_str(),
                    build.mode,
                    build.kind,
                ),
                build,
            )
        })
        .collect();
    // Per compiler that built: how many cells passed; those below the minimum are named once.
    let mut passes: Vec<(usize, usize, &str)> = Vec::new();
    let mut below: Vec<&str> = Vec::new();
    for &index in found {
        let toolchain = &report.toolchains[index];
        if toolchain.verdict == ToolchainVerdict::TooOld {
            below.push(name(toolchain));
            continue;
        }
        let builds: Vec<_> = report
            .builds
            .iter()
            .filter(|build| build.toolchain == index)
            .collect();
        let passed = builds
            .iter()
            .filter(|build| build.outcome == Outcome::Pass)
            .count();
        passes.push((passed, builds.len(), name(toolchain)));
    }
    let mut counts: Vec<String> = match passes.first() {
        Some(&(passed, total, _)) if passes.iter().all(|&(p, t, _)| (p, t) == (passed, total)) => {
            vec![format!(
                "{passed} of {total} pass on each of the {} compilers from the minimum on",
                passes.len()
            )]
        }
        _ => passes
            .iter()
            .map(|(passed, total, id)| format!("{passed} of {total} on {id}"))
            .collect(),
    };
    if !below.is_empty() {
        counts.push(format!(
            "not built on {} (below the minimum)",
            below.join(", ")
        ));
    }
    let differs = report.builds.iter().any(|build| !build.ok());
    let mut html = format!(
        "<section><h2 id=\"host\">Host builds, runs and tests</h2>\
         <details{}><summary>The shim and every example built, run and tested on the x86-64 \
         host, in kernel mode and stable mode: {}.</summary>\
         <table class=\"grid\"><thead><tr><th class=\"corner\">target \
         (k: b r t / s: b r t)</th>{}</tr></thead><tbody>\n",
        if differs { " open" } else { "" },
        if counts.is_empty() {
            "no compiler built anything".to_string()
        } else {
            counts.join("; ")
        },
        column_headers(report, found)
    );
    for target in &targets {
        let _ = write!(
            html,
            "<tr><th class=\"row\"><code>{}</code></th>",
            escape_html(target)
        );
        for &index in found {
            let toolchain = &report.toolchains[index];
            let mut squares = String::new();
            for mode in [Mode::Kernel, Mode::Stable] {
                for &kind in cell_kinds(target) {
                    let Some(build) = cells.get(&(index, *target, mode, kind)) else {
                        continue;
                    };
                    let letter = &kind.word()[..1];
                    let key = format!(
                        "build/{target}/{}/{}/{}",
                        kind.word(),
                        mode.word(),
                        toolchain.id
                    );
                    let tests = build.tests.map(|(passed, failed, ignored)| {
                        format!("{passed} passed, {failed} failed, {ignored} ignored")
                    });
                    squares.push_str(&outcome_square(
                        &format!(
                            "{} {target} ({}) on {}",
                            kind.word(),
                            mode.word(),
                            name(toolchain)
                        ),
                        &key,
                        letter,
                        build.outcome,
                        build.expected,
                        &[build.first_error.as_deref(), tests.as_deref()],
                        popups,
                    ));
                }
                if mode == Mode::Kernel {
                    squares.push_str("<span class=\"gap\"></span>");
                }
            }
            let _ = write!(
                html,
                "<td class=\"cell squares{}\">{squares}</td>",
                below_class(toolchain)
            );
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table></details></section>\n");
    html
}

/// The kernel trees x compilers grid's place: `cargo xtask kernel`'s report fills it once that
/// command exists; until then the page says there is none rather than showing anything.
/// What a driver gets from each compiler when it breaks Kbuild's rules: the codes of its
/// errors per fixture of `tests/fixtures/`, framed where they are not the catalog's prediction.
fn kbuild_grid(report: &Report, found: &[usize], popups: &mut Popups) -> String {
    if report.kbuild.is_empty() {
        return String::new();
    }
    let mut fixtures: Vec<&str> = Vec::new();
    for cell in &report.kbuild {
        if !fixtures.contains(&cell.fixture.as_str()) {
            fixtures.push(&cell.fixture);
        }
    }
    let mut html = format!(
        "<section><h2 id=\"kbuild\">A driver against Kbuild's rules</h2>\
         <p class=\"muted\">Each fixture compiled as Kbuild compiles a driver \
         (<code>-Zallow-features</code> and <code>-Zcrate-attr=feature(…)</code> with the kernel's \
         list): <code>inside_allow_list</code> enables an allowed feature itself, \
         <code>outside_allow_list</code> uses one outside the list. The cell shows the codes of \
         the compiler's errors.</p>\
         <table class=\"grid\"><thead><tr><th class=\"corner\">fixture</th>{}</tr></thead>\
         <tbody>\n",
        column_headers(report, found)
    );
    for fixture in fixtures {
        let _ = write!(
            html,
            "<tr><th class=\"row\"><code>{}</code></th>",
            escape_html(fixture)
        );
        for &index in found {
            let toolchain = &report.toolchains[index];
            let Some(cell) = report
                .kbuild
                .iter()
                .find(|cell| cell.toolchain == index && cell.fixture == fixture)
            else {
                html.push_str("<td></td>");
                continue;
            };
            let shown = match &cell.observed {
                Some(codes) if codes.is_empty() => "built".to_string(),
                Some(codes) => codes.join(", "),
                None => "\u{2013}".to_string(),
            };
            let predicted = match &cell.expected {
                Some(code) => format!("The catalog predicts {}.", escape_html(code)),
                None => "Nothing is built on this compiler.".to_string(),
            };
            let body = format!(
                "<p>{}</p><p class=\"muted\">{predicted}</p>",
                escape_html(cell.first_error.as_deref().unwrap_or(&shown)),
            );
            let id = popups.add(&format!("{fixture} on {}", name(toolchain)), &body);
            let _ = write!(
                html,
                "<td class=\"cell {}{}{}\" data-cell=\"kbuild/{}/{}\" title=\"{}\">\
                 <a href=\"#{id}\">{}</a></td>",
                if cell.ok() {
                    "kb-expected"
                } else {
                    "kb-unexpected"
                },
                if cell.ok() { "" } else { " differs" },
                below_class(toolchain),
                escape_html(fixture),
                escape_html(&toolchain.id),
                escape_html(&predicted),
                escape_html(&shown),
            );
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table></section>\n");
    html
}

/// Which compiler built which real kernel tree's Rust, from the recorded `cargo xtask kernel`
/// report: the real result per tree and compiler, framed (`finding`) where the prediction from
/// the tree's own rules said otherwise.
fn kernel_trees_section(trees: &[TreeData], popups: &mut Popups) -> String {
    if trees.is_empty() {
        return "<section><h2 id=\"kernel-trees\">Kernel trees</h2><p class=\"muted\">Which \
                compiler builds which kernel tree's Rust: no <code>cargo xtask kernel</code> \
                report is recorded (<code>docs/kernel-report.json</code>).</p></section>\n"
            .into();
    }
    let mut releases: Vec<&str> = Vec::new();
    for tree in trees {
        for (_, release, _) in &tree.real {
            if !releases.contains(&release.as_str()) {
                releases.push(release);
            }
        }
    }
    releases.sort_by_key(|release| crate::catalog::Release::parse(release));
    let mut html = String::from(
        "<section><h2 id=\"kernel-trees\">Kernel trees</h2><p class=\"muted\">Each real kernel \
         tree's Rust built with each compiler by the tree's own Kbuild (<code>cargo xtask \
         kernel</code>): <i>refused</i> is the tree's own <code>make rustavailable</code> saying \
         no. A frame marks a real result that the prediction from the tree's rules did not \
         expect. Details: <a href=\"kernels.md\">docs/kernels.md</a>.</p>\
         <table class=\"grid\"><thead><tr><th class=\"corner\">tree</th>",
    );
    for release in &releases {
        let _ = write!(html, "<th>{}</th>", escape_html(release));
    }
    html.push_str("</tr></thead><tbody>\n");
    for tree in trees {
        let _ = write!(
            html,
            "<tr><th class=\"row\">{} <small>{}</small></th>",
            escape_html(&tree.id),
            escape_html(&tree.version)
        );
        for release in &releases {
            let Some((real, _, reason)) = tree.real.iter().find(|(_, r, _)| r == release) else {
                html.push_str("<td></td>");
                continue;
            };
            let finding = tree.findings.iter().find(|(r, _, _)| r == release);
            let mut body = format!(
                "<p>{}</p>",
                escape_html(if reason.is_empty() { real } else { reason })
            );
            if let Some((_, predicted, _)) = finding {
                let _ = write!(
                    body,
                    "<p class=\"bad\">Predicted {}, the real build says {}.</p>",
                    escape_html(predicted),
                    escape_html(real)
                );
            }
            let id = popups.add(&format!("Linux {} with {release}", tree.version), &body);
            let _ = write!(
                html,
                "<td class=\"cell kt-{}{}\" data-cell=\"kernel/{}/{}\" title=\"{}\">\
                 <a href=\"#{id}\">{}</a></td>",
                real.replace(' ', "-"),
                if finding.is_some() { " finding" } else { "" },
                escape_html(&tree.id),
                escape_html(release),
                escape_html(reason),
                escape_html(real),
            );
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table></section>\n");
    html
}

/// The compilers, by release: exact version, where each came from, and its verdict.
fn compilers_table(
    report: &Report,
    found: &[usize],
    missing: &[usize],
    popups: &mut Popups,
) -> String {
    let mut html = String::from(
        "<section><h2 id=\"compilers\">The compilers</h2><table class=\"list\"><thead><tr>\
         <th>compiler</th><th>version</th><th>from</th><th>verdict</th><th>summary</th>\
         </tr></thead><tbody>\n",
    );
    let summaries = report.summary_lines();
    for &index in found.iter().chain(missing) {
        let toolchain = &report.toolchains[index];
        let found = !matches!(toolchain.verdict, ToolchainVerdict::Missing(_));
        let version = match (&toolchain.release_text, &toolchain.channel) {
            (Some(release), channel) if found => {
                let mut text = format!("rustc {release}");
                if let Some(date) = &toolchain.commit_date {
                    let _ = write!(text, " ({date})");
                }
                if let Some(channel) = channel {
                    let _ = write!(text, ", {channel}");
                }
                if let Some(host) = &toolchain.host {
                    let _ = write!(text, ", {host}");
                }
                text
            }
            _ => "\u{2013}".into(),
        };
        let from = match (toolchain.source, &toolchain.rustc) {
            (Some(kind), Some(rustc)) => format!(
                "{} (<code>{}</code>)<br><small><code>{}</code></small>",
                kind.word(),
                escape_html(&shown_path(&toolchain.spec)),
                escape_html(&shown_path(rustc))
            ),
            _ => format!("pin <code>{}</code>", escape_html(&toolchain.spec)),
        };
        let failed = matches!(toolchain.verdict, ToolchainVerdict::Broken(_))
            || (report.strict && matches!(toolchain.verdict, ToolchainVerdict::Missing(_)));
        let verdict = match &toolchain.verdict {
            ToolchainVerdict::Broken(message) | ToolchainVerdict::Missing(message) => {
                let id = popups.add(
                    &format!("{}: {}", name(toolchain), toolchain.verdict.word()),
                    &format!("<pre>{}</pre>", escape_html(message)),
                );
                format!(
                    "<a href=\"#{id}\">{}</a>",
                    escape_html(toolchain.verdict.word())
                )
            }
            other => escape_html(other.word()),
        };
        let summary = summaries[index]
            .split_once(": ")
            .map_or(summaries[index].as_str(), |(_, rest)| rest);
        let _ = writeln!(
            html,
            "<tr class=\"{}\"><th><code>{}</code></th><td>{}</td><td>{from}</td>\
             <td class=\"cell {}{}\" data-cell=\"toolchain/{}\">{verdict}</td><td>{}</td></tr>",
            below_class(toolchain).trim(),
            escape_html(name(toolchain)),
            escape_html(&version),
            verdict_class(&toolchain.verdict),
            if failed { " differs" } else { "" },
            escape_html(&toolchain.id),
            escape_html(summary),
        );
    }
    html.push_str("</tbody></table></section>\n");
    html
}

/// The page's whole style sheet.
const STYLE: &str = "\
:root { --fg: #1d2330; --muted: #5d6675; --line: #d8dde6; --bg: #fbfcfd;
  --stable: #cdebd3; --stable-fg: #145a26; --gated: #ffe4b8; --gated-fg: #7a4a00;
  --unknown: #e9ecf1; --unknown-fg: #58606e; --fail: #f6b3b3; --fail-fg: #8a1111;
  --bad: #d0021b; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px 48px; font: 14px/1.45 system-ui, -apple-system, \"Segoe UI\",
  \"DejaVu Sans\", sans-serif; color: var(--fg); background: var(--bg); }
h1 { font-size: 24px; margin: 0 0 6px; }
h2 { font-size: 18px; margin: 28px 0 8px; }
h3 { font-size: 14px; margin: 0 0 6px; padding-right: 24px; }
code { font: 12.5px/1.3 ui-monospace, \"DejaVu Sans Mono\", monospace; }
.lede { margin: 0; max-width: 70em; }
.muted { color: var(--muted); }
.bad { color: var(--bad); }
.legend .keys { display: flex; flex-wrap: wrap; gap: 6px 18px; }
.legend .keys span { display: inline-flex; align-items: center; gap: 6px; }
.sw { display: inline-block; min-width: 46px; padding: 1px 6px; text-align: center;
  font-style: normal; font-size: 12px; border-radius: 4px; }
table.grid { border-collapse: separate; border-spacing: 2px; }
table.grid th.col { font-weight: 600; font-size: 12px; padding: 4px 6px; vertical-align: bottom;
  text-align: center; white-space: nowrap; }
table.grid th.col small { display: block; font-weight: 400; color: var(--muted); }
table.grid th.row { text-align: left; font-weight: 400; padding: 2px 10px 2px 0;
  white-space: nowrap; }
table.grid th.stage { padding-left: 18px; color: var(--muted); }
table.grid th.corner { text-align: left; color: var(--muted); font-weight: 400; font-size: 12px;
  vertical-align: bottom; }
table.grid tr.group th.row { padding-top: 10px; }
td.cell { text-align: center; font-size: 12px; min-width: 74px; height: 24px; border-radius: 4px;
  padding: 0 4px; }
td.cell a, .sq a { color: inherit; text-decoration: none; display: block; }
td.cell a:hover, .sq a:hover { text-decoration: underline; }
.st-stable { background: var(--stable); color: var(--stable-fg); }
.st-gated { background: var(--gated); color: var(--gated-fg); }
.st-unknown, .st-not-probed { background: var(--unknown); color: var(--unknown-fg); }
.st-removed { background: #e5d9f2; color: #4b2a73; }
.st-probe-failed, .kn-failed { background: var(--fail); color: var(--fail-fg); }
.kn-known { background: var(--stable); color: var(--stable-fg); }
.kn-unknown, .kn-none { background: var(--unknown); color: var(--unknown-fg); }
td.squares { background: transparent; white-space: nowrap; }
.sq { display: inline-block; width: 20px; height: 20px; line-height: 20px; margin: 0 1px;
  border-radius: 3px; font-size: 11px; text-align: center; vertical-align: middle; }
.sq .gap, .gap { display: inline-block; width: 6px; }
.out-pass { background: var(--stable); color: var(--stable-fg); }
.out-fail { background: var(--fail); color: var(--fail-fg); font-weight: 700; }
.out-skipped { background: var(--unknown); color: var(--unknown-fg); }
.sw.out-pass, .sw.out-fail, .sw.out-skipped { min-width: 22px; }
.differs { outline: 3px solid var(--bad); outline-offset: -1px; }
.finding { outline: 3px dashed var(--bad); outline-offset: -1px; }
.kt-pass, .kb-expected { background: var(--stable); color: var(--stable-fg); }
.kt-fail, .kb-unexpected { background: var(--fail); color: var(--fail-fg); font-weight: 700; }
.kt-refused { background: var(--gated); color: var(--gated-fg); }
.below { opacity: .45; }
table.grid th.col.below { opacity: .45; }
details summary { cursor: pointer; margin-bottom: 8px; }
table.list { border-collapse: collapse; }
table.list th, table.list td { border-bottom: 1px solid var(--line); padding: 5px 10px;
  text-align: left; vertical-align: top; font-size: 13px; }
table.list th { white-space: nowrap; }
table.list td.cell { text-align: left; border-radius: 0; }
table.list tr.below { opacity: .6; }
.v-ok { color: var(--stable-fg); } .v-too-old { color: var(--muted); }
.v-broken { color: var(--bad); font-weight: 700; } .v-missing { color: var(--muted); }
.pop { display: none; }
.pop:target { display: block; position: fixed; right: 24px; bottom: 24px; width: min(640px, 90vw);
  max-height: 70vh; overflow: auto; background: #fff; border: 1px solid var(--line);
  border-radius: 8px; box-shadow: 0 8px 28px rgba(20, 30, 50, .25); padding: 14px 16px; }
.pop .close { position: absolute; top: 6px; right: 12px; font-size: 20px; color: var(--muted);
  text-decoration: none; }
.pop pre { white-space: pre-wrap; background: #f3f5f8; padding: 8px; border-radius: 4px;
  font-size: 12px; }
.pop ul { padding-left: 18px; }
ul.notes { color: var(--muted); font-size: 12.5px; max-width: 80em; padding-left: 18px; }
footer { margin-top: 32px; color: var(--muted); font-size: 12px; }
";
