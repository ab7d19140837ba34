// SPDX-License-Identifier: GPL-2.0
//! The page's first answers: the findings, a sentence each, and a row per compiler: whether it
//! builds the shim, what kernel mode needs `RUSTC_BOOTSTRAP` for on it, which trees it builds.

use super::{escape_html, feature_link, feature_links, mark, release_note, Column};
use crate::docs::kernels::TreeData;
use crate::features::expect::ToolchainVerdict;
use crate::report::{Observed, Report, ToolchainEntry};
use crate::run::plan::{Kind, Mode};
use std::fmt::Write;

/// Every finding, a sentence each: cells that differ from the catalog, and kernel builds or
/// boots that went against the prediction.
pub(super) fn findings(report: &Report, trees: &[TreeData]) -> String {
    let mut sentences = vec![match report.failures().len() {
        0 => "No compiler disagreed with the catalog.".to_string(),
        count => format!(
            "<b class=\"bad\">{count} cell(s) differ from the catalog</b>, framed in red \
             (<a href=\"#failures\">the list</a>)."
        ),
    }];
    let (mut builds, mut boots) = (Vec::new(), Vec::new());
    for tree in trees {
        let against = |toolchain: &str, what: String| {
            format!(
                "Linux {} with <code>{}</code>: {what}",
                escape_html(&tree.version),
                escape_html(toolchain),
            )
        };
        for (_, predicted, real, toolchain) in &tree.findings {
            let what = format!("predicted {predicted}, the real build said {real}");
            builds.push(against(toolchain, escape_html(&what)));
        }
        for boot in tree.boots.iter().filter(|boot| boot.finding) {
            let what = escape_html(&boot.short());
            let what = format!("built, so predicted to boot and pass, but {what}");
            boots.push(against(&boot.toolchain, what));
        }
    }
    let counts: Vec<String> = [
        (builds.len(), "real kernel build", "real kernel builds"),
        (boots.len(), "boot under QEMU", "boots under QEMU"),
    ]
    .iter()
    .filter(|(count, ..)| *count > 0)
    .map(|(count, one, many)| match count {
        1 => format!("one {one}"),
        count => format!("{count} {many}"),
    })
    .collect();
    if !counts.is_empty() {
        let mut counts = counts.join(" and ");
        counts[..1].make_ascii_uppercase();
        sentences.push(format!(
            "<b class=\"bad\">{counts} went against the prediction</b> from the tree's own \
             rules (a build that passes is predicted to boot and pass), framed with a dashed \
             line in <a href=\"#kernel-trees\">Kernel trees</a>: {}.",
            [builds, boots].concat().join("; ")
        ));
    }
    sentences.join(" ")
}

/// The trees `toolchain` built for real, and those it did not, as the kernel report says.
fn trees_built(trees: &[TreeData], toolchain: &ToolchainEntry) -> String {
    let (mut built, mut not) = (Vec::new(), Vec::new());
    for tree in trees {
        let Some((real, ..)) = tree.real.iter().find(|cell| cell.3 == toolchain.id) else {
            continue;
        };
        match real.as_str() {
            "pass" => built.push(escape_html(&tree.id)),
            "not run" => {}
            other => not.push(format!("{} {}", escape_html(&tree.id), escape_html(other))),
        }
    }
    let mut text = match (built.is_empty(), not.is_empty()) {
        (true, true) => return "<span class=\"muted\">not run</span>".to_string(),
        (true, false) => "none".to_string(),
        (false, _) => built.join(", "),
    };
    if !not.is_empty() {
        let _ = write!(text, " <small>({})</small>", not.join(", "));
    }
    text
}

/// One row per compiler that ran, in release order, then a line for those not in the run.
pub(super) fn verdict_table(
    report: &Report,
    trees: &[TreeData],
    found: &[Column],
    missing: &[Column],
) -> String {
    let mut html = String::from(
        "<section><h2 id=\"verdicts\">Each compiler in one row</h2>\
         <div class=\"cards\"><table class=\"list verdicts\"><thead><tr>\
         <th class=\"row\">compiler</th><th>builds the shim<br><small>kernel \u{b7} stable \
         mode</small></th><th>kernel mode needs <code>RUSTC_BOOTSTRAP</code> for<br><small>what \
         the kernel's block enables on it that it does not call stable</small></th>\
         <th>real kernel trees built</th></tr></thead><tbody>\n",
    );
    for &(index, toolchain) in found {
        let id = escape_html(&toolchain.id);
        let note = release_note(&toolchain.id, toolchain.release_text.as_deref());
        let note = if note.is_empty() {
            note
        } else {
            format!(" {note}")
        };
        let too_old = toolchain.verdict == ToolchainVerdict::TooOld;
        let builds = if too_old {
            format!(
                "<span class=\"muted\">not built: below the minimum ({})</span>",
                crate::catalog::MINIMUM_RELEASE
            )
        } else {
            let shim = |mode| {
                let build = report.builds.iter().find(|build| {
                    (
                        build.toolchain,
                        build.target.as_str(),
                        build.kind,
                        build.mode,
                    ) == (index, "kernel", Kind::Build, mode)
                });
                let (class, text) = mark(build.map(|build| build.outcome));
                let mode = Mode::word(mode);
                format!("<span class=\"sq {class}\" title=\"{mode} mode\">{text}</span>")
            };
            Mode::ALL.into_iter().map(shim).collect()
        };
        let gated = match toolchain.release {
            Some(release) if !too_old => {
                feature_links(&report.still_gated(index, release), "nothing")
            }
            _ => "<span class=\"muted\">\u{2013}</span>".to_string(),
        };
        let _ = writeln!(
            html,
            "<tr class=\"{}\" data-verdict=\"{id}\"><th class=\"row\"><code>{id}</code>{note}</th>\
             <td data-label=\"builds the shim (kernel, stable)\"><span>{builds}</span></td>\
             <td class=\"needs\" data-label=\"RUSTC_BOOTSTRAP for\"><span>{gated}</span></td>\
             <td data-label=\"kernel trees built\"><span>{}</span></td></tr>",
            if too_old { "below" } else { "" },
            trees_built(trees, toolchain),
        );
    }
    html.push_str("</tbody></table></div>");
    // A feature added after the run has no cell to count: say so rather than leave it out.
    let not_recorded: Vec<String> = crate::catalog::FEATURES
        .iter()
        .zip(&report.features)
        .filter(|(_, cells)| {
            cells
                .iter()
                .all(|cell| cell.observed == Observed::NotRecorded)
        })
        .map(|(feature, _)| feature_link(feature.name))
        .collect();
    if !not_recorded.is_empty() {
        let _ = write!(
            html,
            "<p class=\"muted\">Not recorded in this run, so in no list above: {} (the catalog \
             gained them after the report was made).</p>",
            not_recorded.join(", ")
        );
    }
    if !missing.is_empty() {
        let names: Vec<String> = missing
            .iter()
            .map(|(_, toolchain)| {
                let word = escape_html(toolchain.verdict.word());
                format!("<code>{}</code> ({word})", escape_html(&toolchain.id))
            })
            .collect();
        let _ = write!(
            html,
            "<p class=\"muted\">Not in this run: {}; see <a href=\"#compilers\">the \
             compilers</a>.</p>",
            names.join(", ")
        );
    }
    html.push_str("</section>\n");
    html
}
