// SPDX-License-Identifier: GPL-2.0
//! The feature x compiler grid, each cell opening the places where the usage report says the
//! feature is needed.

use super::{below_class, column_headers, escape_html, Popups};
use crate::catalog::FEATURES;
use crate::features::places::SourcePoint;
use crate::features::status::Status;
use crate::report::usage::text::cell_summary;
use crate::report::usage::{UsageCell, UsageReport};
use crate::report::{FeatureCell, Observed, Report};
use std::fmt::Write;

/// What a feature status says, spelled out for a legend, a title or a popup.
fn status_words(observed: &Observed) -> String {
    match observed {
        Observed::Status(Status::Stable(since)) => match since.patch {
            0 => format!("stable since {}.{}", since.major, since.minor),
            patch => format!("stable since {}.{}.{patch}", since.major, since.minor),
        },
        Observed::Status(Status::Gated) => "gated: needs RUSTC_BOOTSTRAP".into(),
        Observed::Status(Status::Unknown) => "unknown to this compiler".into(),
        Observed::Status(Status::Removed) => "removed from this compiler".into(),
        Observed::NotProbed => "not probed".into(),
        Observed::ProbeFailed(_) => "the probe failed".into(),
        Observed::NotRecorded => {
            "not recorded: the report was made before the catalog had it".into()
        }
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
        Observed::NotRecorded => "not recorded".into(),
    }
}

/// The feature x compiler grid, each cell opening the places the usage report has for it.
pub(super) fn feature_grid(
    report: &Report,
    usage: Option<&UsageReport>,
    found: &[usize],
    popups: &mut Popups,
) -> String {
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
                escape_html(&toolchain.id),
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
                None if cell.observed == Observed::NotRecorded => {}
                None => detail.push_str(
                    "<p class=\"muted\">Below the kernel's minimum: probed for information, \
                     not predicted.</p>",
                ),
            }
            if let Observed::ProbeFailed(error) = &cell.observed {
                let _ = write!(detail, "<pre>{}</pre>", escape_html(error));
            }
            let usage_cell = usage.and_then(|usage| {
                let column = usage.toolchains.iter().position(|t| t.id == toolchain.id)?;
                let row = usage.features.iter().find(|f| f.name == feature.name)?;
                row.cells.get(column)
            });
            detail.extend(usage_cell.map(usage_html));
            let id = popups.add(&format!("{} on {}", feature.name, toolchain.id), &detail);
            let _ = write!(
                html,
                "<td class=\"cell st-{}{}{}\" data-cell=\"feature/{}/{}\"><a href=\"#{id}\" \
                 title=\"{}\">{}</a></td>",
                cell.observed.word(),
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

/// A source point as a link from `docs/` for a repository file, or as text relative to the
/// compiler's library sources (`library/core/src/...`) for a file of theirs.
fn point_html(at: &SourcePoint) -> String {
    if let Some(library) = at.library_path() {
        return format!(
            "<code>{}:{}</code> <span class=\"muted\">(the compiler's library sources)</span>",
            escape_html(library),
            at.line
        );
    }
    let (file, line) = (escape_html(&at.file), at.line);
    let inside = !at.file.starts_with('/') && !at.file.split('/').any(|part| part == "..");
    if inside {
        format!("<a href=\"../{file}#L{line}\"><code>{file}:{line}</code></a>")
    } else {
        format!("<code>{file}:{line}</code>")
    }
}
