// SPDX-License-Identifier: GPL-2.0
//! The grids of builds: per kernel target its stages, and on the host the shim and every
//! example built, run and tested, each cell a small square.

use super::{below_class, column_headers, escape_html, grid_head, mark, Column, Popups};
use crate::features::expect::{Outcome, ToolchainVerdict};
use crate::report::targets::STAGES;
use crate::report::{cell_kinds, Report, ToolchainEntry};
use crate::run::plan::{Kind, Mode};
use std::fmt::Write;

/// One build or target cell: a small square with a popup where `extra` has something to say.
fn outcome_square(
    label: &str,
    key: &str,
    letter: &str,
    (outcome, expected): (Outcome, Outcome),
    extra: [Option<&str>; 2],
    popups: &mut Popups,
) -> String {
    let words = |outcome| match outcome {
        Outcome::Pass => "passed",
        Outcome::Fail => "failed",
        Outcome::Skipped => "skipped",
    };
    let mut title = format!("{label}: {}", words(outcome));
    if outcome != expected {
        let _ = write!(title, " (the catalog predicts: {})", words(expected));
    } else if outcome == Outcome::Fail {
        title.push_str(" (as the catalog predicts)");
    }
    let texts: Vec<&str> = extra.into_iter().flatten().collect();
    let inner = match texts.first() {
        None => format!("<span title=\"{}\">{letter}</span>", escape_html(&title)),
        Some(first) => {
            let mut detail = format!("<p>{}.</p>", escape_html(&title));
            for text in &texts {
                let _ = write!(detail, "<pre>{}</pre>", escape_html(text));
            }
            let id = popups.add(label, &detail);
            let hover = escape_html(&format!("{title}: {first}"));
            format!("<a href=\"#{id}\" title=\"{hover}\">{letter}</a>")
        }
    };
    let differs = if outcome == expected { "" } else { " differs" };
    let predicted = if expected == Outcome::Fail {
        " predicted-fail"
    } else {
        ""
    };
    format!(
        "<span class=\"sq out-{}{differs}{predicted}\" data-cell=\"{}\">{inner}</span>",
        outcome.word(),
        escape_html(key),
    )
}

/// A grid cell holding `squares`.
fn squares_cell(toolchain: &ToolchainEntry, squares: &str) -> String {
    format!(
        "<td class=\"cell squares{}\">{squares}</td>",
        below_class(toolchain)
    )
}

/// The target x compiler grid: per kernel target, whether each compiler lists it, then its
/// stages, per mode where built per mode.
pub(super) fn target_grid(report: &Report, found: &[Column], popups: &mut Popups) -> String {
    let targets = &report.targets;
    if targets.triples.is_empty() {
        return "<section><h2 id=\"targets\">Kernel targets</h2><p>This run had no target \
                axis (<code>--target none</code>).</p></section>\n"
            .into();
    }
    let mut html = grid_head(
        "<h2 id=\"targets\">Kernel targets</h2><p class=\"muted\">Per target: listed by \
         <code>rustc --print target-list</code>; <code>core</code> and \
         <code>compiler_builtins</code> built from the compiler's own library sources; the shim \
         built; every static-branch site of a sample's object checked; a freestanding test \
         program that patches its keys run under qemu.</p>",
        "grid",
        "target and stage",
        &column_headers(found),
    );
    for triple in &targets.triples {
        let _ = write!(
            html,
            "<tr class=\"group\"><th class=\"row\"><code>{}</code> listed</th>",
            escape_html(triple)
        );
        for &(index, toolchain) in found {
            let below = below_class(toolchain);
            let cell = targets
                .known
                .iter()
                .find(|cell| cell.toolchain == index && &cell.triple == triple);
            let Some(cell) = cell else {
                let _ = write!(html, "<td class=\"cell none{below}\"></td>");
                continue;
            };
            let (class, text) = match (cell.observed, &cell.error) {
                (_, Some(_)) => ("kn-failed", "failed"),
                (Some(true), _) => ("kn-known", "\u{2713}"),
                (Some(false), _) => ("kn-unknown", "no"),
                (None, _) => ("kn-none", "\u{2013}"),
            };
            let inner = match &cell.error {
                Some(error) => popups.link(
                    &format!("{triple} on {}", toolchain.id),
                    &format!("<pre>{}</pre>", escape_html(error)),
                    text,
                ),
                None => text.to_string(),
            };
            let differs = if cell.ok() { "" } else { " differs" };
            let _ = write!(
                html,
                "<td class=\"cell {class}{differs}{below}\" data-cell=\"known/{}/{}\">{inner}</td>",
                escape_html(triple),
                escape_html(&toolchain.id),
            );
        }
        html.push_str("</tr>\n");
        for (stage, kind, modes) in STAGES {
            let label = match kind {
                Kind::Build => "build the shim".to_string(),
                Kind::Objects => "check static-key objects".to_string(),
                Kind::Emulate => "run test program".to_string(),
                _ => format!("build {stage}"),
            };
            let _ = write!(html, "<tr><th class=\"row stage\">{label}</th>");
            for &(index, toolchain) in found {
                let mut squares = String::new();
                for &mode in modes {
                    let Some(cell) = targets.cells.iter().find(|cell| {
                        (cell.toolchain, &cell.triple, cell.stage.as_str(), cell.mode)
                            == (index, triple, stage, mode)
                    }) else {
                        continue;
                    };
                    let mode_word = mode.map_or("-", Mode::word);
                    squares.push_str(&outcome_square(
                        &format!("{} on {}", cell.label(), toolchain.id),
                        &format!("target/{triple}/{stage}/{mode_word}/{}", toolchain.id),
                        mode.map_or(mark(Some(cell.outcome)).1, |mode| &mode.word()[..1]),
                        (cell.outcome, cell.expected),
                        [cell.first_error.as_deref(), cell.detail.as_deref()],
                        popups,
                    ));
                }
                html.push_str(&squares_cell(toolchain, &squares));
            }
            html.push_str("</tr>\n");
        }
    }
    html.push_str("</tbody></table></div>");
    let notes = targets.notes(&report.toolchains);
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

/// The host grid: the shim and every example built, run and tested in both modes, in a
/// `<details>` that is open where a cell differs.
pub(super) fn host_grid(report: &Report, found: &[Column], popups: &mut Popups) -> String {
    let targets = crate::distinct(report.builds.iter().map(|build| build.target.as_str()));
    // Per compiler that built: how many cells passed; those below the minimum are named once.
    let mut passes: Vec<(usize, usize, &str)> = Vec::new();
    let mut below: Vec<&str> = Vec::new();
    for &(index, toolchain) in found {
        if toolchain.verdict == ToolchainVerdict::TooOld {
            below.push(&toolchain.id);
            continue;
        }
        let builds = report
            .builds
            .iter()
            .filter(|build| build.toolchain == index);
        let passed = builds
            .clone()
            .filter(|build| build.outcome == Outcome::Pass);
        passes.push((passed.count(), builds.count(), toolchain.id.as_str()));
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
        let below = below.join(", ");
        counts.push(format!("not built on {below} (below the minimum)"));
    }
    if counts.is_empty() {
        counts.push("no compiler built anything".to_string());
    }
    let open = if report.builds.iter().any(|build| !build.ok()) {
        " open"
    } else {
        ""
    };
    let mut html = grid_head(
        &format!(
            "<h2 id=\"host\">Host builds, runs and tests</h2><details{open}><summary>The shim and \
             every example built, run and tested on the x86-64 host, in kernel mode and stable \
             mode: {}.</summary>",
            counts.join("; ")
        ),
        "grid",
        "target (k: b r t / s: b r t)",
        &column_headers(found),
    );
    for target in &targets {
        let _ = write!(
            html,
            "<tr><th class=\"row\"><code>{}</code></th>",
            escape_html(target)
        );
        for &(index, toolchain) in found {
            let mut squares = String::new();
            for mode in [Mode::Kernel, Mode::Stable] {
                for &kind in cell_kinds(target) {
                    let Some(build) = report.builds.iter().find(|build| {
                        (
                            build.toolchain,
                            build.target.as_str(),
                            build.mode,
                            build.kind,
                        ) == (index, *target, mode, kind)
                    }) else {
                        continue;
                    };
                    let (kind_word, mode_word) = (kind.word(), mode.word());
                    let tests = build.tests.map(|tests| {
                        let (passed, failed, ignored) = (tests.passed, tests.failed, tests.ignored);
                        format!("{passed} passed, {failed} failed, {ignored} ignored")
                    });
                    squares.push_str(&outcome_square(
                        &format!("{kind_word} {target} ({mode_word}) on {}", toolchain.id),
                        &format!("build/{target}/{kind_word}/{mode_word}/{}", toolchain.id),
                        &kind_word[..1],
                        (build.outcome, build.expected),
                        [build.first_error.as_deref(), tests.as_deref()],
                        popups,
                    ));
                }
                if mode == Mode::Kernel {
                    squares.push_str("<span class=\"gap\"></span>");
                }
            }
            html.push_str(&squares_cell(toolchain, &squares));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table></div></details></section>\n");
    html
}
