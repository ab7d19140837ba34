// SPDX-License-Identifier: GPL-2.0
//! The grids of builds: per kernel target its stages, and on the host the shim and every
//! example built, run and tested, each cell a small square.

use super::{below_class, column_headers, escape_html, Popups};
use crate::features::expect::{Outcome, ToolchainVerdict};
use crate::report::targets::STAGES;
use crate::report::{cell_kinds, Report};
use crate::run::plan::{Kind, Mode};
use std::fmt::Write;

fn outcome_words(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Pass => "passed",
        Outcome::Fail => "failed",
        Outcome::Skipped => "skipped",
    }
}

/// One atomic build or target cell: a small square with a popup where there is more to say.
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
        "<span class=\"sq out-{}{}{}\" data-cell=\"{}\">{inner}</span>",
        outcome.word(),
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
pub(super) fn target_grid(report: &Report, found: &[usize], popups: &mut Popups) -> String {
    let targets = &report.targets;
    if targets.triples.is_empty() {
        return "<section><h2 id=\"targets\">Kernel targets</h2><p>This run had no target \
                axis (<code>--target none</code>).</p></section>\n"
            .into();
    }
    let mut html = format!(
        "<section><h2 id=\"targets\">Kernel targets</h2>\
         <p class=\"muted\">Per target: listed by <code>rustc --print target-list</code>; \
         <code>core</code> and <code>compiler_builtins</code> built from the compiler's own \
         library sources; the shim built; every static-branch site of a sample's object \
         checked; a freestanding test program that patches its keys run under qemu.</p>\
         <div class=\"scroll\"><table class=\"grid\"><thead><tr><th class=\"corner\">target and stage</th>{}</tr>\
         </thead><tbody>\n",
        column_headers(report, found)
    );
    for triple in &targets.triples {
        let _ = write!(
            html,
            "<tr class=\"group\"><th class=\"row\"><code>{}</code> listed</th>",
            escape_html(triple)
        );
        for &index in found {
            let toolchain = &report.toolchains[index];
            let below = below_class(toolchain);
            let cell = targets
                .known
                .iter()
                .find(|cell| cell.toolchain == index && &cell.triple == triple);
            let Some(cell) = cell else {
                let _ = write!(html, "<td class=\"cell none{below}\"></td>");
                continue;
            };
            // What `rustc --print target-list` said.
            let (class, text) = match (cell.observed, &cell.error) {
                (_, Some(_)) => ("kn-failed", "failed"),
                (Some(true), _) => ("kn-known", "\u{2713}"),
                (Some(false), _) => ("kn-unknown", "no"),
                (None, _) => ("kn-none", "\u{2013}"),
            };
            let inner = match &cell.error {
                Some(error) => {
                    let id = popups.add(
                        &format!("{triple} on {}", toolchain.id),
                        &format!("<pre>{}</pre>", escape_html(error)),
                    );
                    format!("<a href=\"#{id}\">{text}</a>")
                }
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
        for (stage, kind, moded) in STAGES {
            let label = match kind {
                Kind::Build => "build the shim".to_string(),
                Kind::Objects => "check static-key objects".to_string(),
                Kind::Emulate => "run test program".to_string(),
                _ => format!("build {stage}"),
            };
            let _ = write!(html, "<tr><th class=\"row stage\">{label}</th>");
            for &index in found {
                let toolchain = &report.toolchains[index];
                let modes: &[Option<Mode>] = if moded {
                    &[Some(Mode::Kernel), Some(Mode::Stable)]
                } else {
                    &[None]
                };
                let mut squares = String::new();
                for &mode in modes {
                    let cell = targets.cells.iter().find(|cell| {
                        (cell.toolchain, &cell.triple, cell.stage.as_str(), cell.mode)
                            == (index, triple, stage, mode)
                    });
                    let Some(cell) = cell else {
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
                    let mode_word = mode.map_or("-", Mode::word);
                    let key = format!("target/{triple}/{stage}/{mode_word}/{}", toolchain.id);
                    squares.push_str(&outcome_square(
                        &format!("{} on {}", cell.label(), toolchain.id),
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

/// The host grid: per target (the shim and every example), build, run and test in both modes
/// on each compiler, in a `<details>` that is open where a cell differs.
pub(super) fn host_grid(report: &Report, found: &[usize], popups: &mut Popups) -> String {
    let targets = crate::distinct(report.builds.iter().map(|build| build.target.as_str()));
    // Per compiler that built: how many cells passed; those below the minimum are named once.
    let mut passes: Vec<(usize, usize, &str)> = Vec::new();
    let mut below: Vec<&str> = Vec::new();
    for &index in found {
        let toolchain = &report.toolchains[index];
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
         <div class=\"scroll\"><table class=\"grid\"><thead><tr><th class=\"corner\">target \
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
                    let build = report.builds.iter().find(|build| {
                        (
                            build.toolchain,
                            build.target.as_str(),
                            build.mode,
                            build.kind,
                        ) == (index, *target, mode, kind)
                    });
                    let Some(build) = build else {
                        continue;
                    };
                    let (kind_word, mode_word) = (kind.word(), mode.word());
                    let label = format!("{kind_word} {target} ({mode_word}) on {}", toolchain.id);
                    let key = format!("build/{target}/{kind_word}/{mode_word}/{}", toolchain.id);
                    let tests = build.tests.map(|(passed, failed, ignored)| {
                        format!("{passed} passed, {failed} failed, {ignored} ignored")
                    });
                    squares.push_str(&outcome_square(
                        &label,
                        &key,
                        &kind_word[..1],
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
    html.push_str("</tbody></table></div></details></section>\n");
    html
}
