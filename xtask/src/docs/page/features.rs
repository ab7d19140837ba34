// SPDX-License-Identifier: GPL-2.0
//! The feature x compiler grid, each cell opening where the usage report says it is needed.

use super::{below_class, column_headers, escape_html, grid_head, Column, Popups};
use crate::catalog::{Feature, FEATURES, KERNEL_MODE_CFG};
use crate::features::cfg::Predicate;
use crate::features::expect::enabled_in_kernel_mode;
use crate::features::places::SourcePoint;
use crate::features::status::Status;
use crate::report::usage::text::cell_summary;
use crate::report::usage::{UsageCell, UsageReport};
use crate::report::{FeatureCell, Observed, Report};
use std::fmt::Write;

/// What a feature status says, spelled out for a title or a popup, and in short for a cell.
fn status_words(observed: &Observed) -> (String, String) {
    let (long, short) = match observed {
        Observed::Status(Status::Stable(since)) => {
            let minor = format!("{}.{}", since.major, since.minor);
            let long = match since.patch {
                0 => format!("stable since {minor}"),
                patch => format!("stable since {minor}.{patch}"),
            };
            return (long, format!("since {minor}"));
        }
        Observed::Status(Status::Gated) => ("gated: needs RUSTC_BOOTSTRAP", "gated"),
        Observed::Status(Status::Unknown) => ("unknown to this compiler", "unknown"),
        Observed::Status(Status::Removed) => ("removed from this compiler", "removed"),
        Observed::NotProbed => ("not probed", "\u{2013}"),
        Observed::ProbeFailed(_) => ("the probe failed", "failed"),
        Observed::NotRecorded => (
            "not recorded: the report was made before the catalog had it",
            "not recorded",
        ),
    };
    (long.to_string(), short.to_string())
}

/// The condition of the kernel's block for `feature` beyond kernel mode itself
/// (`not(CONFIG_RUSTC_HAS_COERCE_POINTEE)` for `unsize`), with the release each derived cfg it
/// names is set from; `None` where the block enables it whenever it is in kernel mode.
fn block_condition(feature: &Feature) -> Option<(String, Vec<String>)> {
    let kernel = Predicate::Name(KERNEL_MODE_CFG.to_string());
    let condition = match Predicate::parse(feature.gate).ok()? {
        Predicate::All(items) => {
            let mut rest: Vec<Predicate> =
                items.into_iter().filter(|item| *item != kernel).collect();
            match rest.len() {
                0 => return None,
                1 => rest.remove(0),
                _ => Predicate::All(rest),
            }
        }
        gate if gate == kernel => return None,
        gate => gate,
    };
    let text = condition.to_string();
    let words: Vec<&str> = text
        .split(|character: char| !(character.is_alphanumeric() || character == '_'))
        .collect();
    let cfgs = FEATURES.iter().filter_map(|feature| feature.cfg);
    let named = cfgs.filter(|cfg| words.contains(&cfg.name));
    let thresholds = named.map(|cfg| format!("{} is set from {}", cfg.name, cfg.from));
    let thresholds = crate::distinct(thresholds);
    Some((text, thresholds))
}

/// The row header of a feature: its link, stability, tracking issue and the block's condition.
fn feature_header(feature: &Feature) -> String {
    let stable = match feature.stable_since {
        Some(since) => format!("stable {}.{}", since.major, since.minor),
        None => "unstable".to_string(),
    };
    let issue = match feature.tracking_issue {
        Some(number) => format!(
            " \u{b7} <a href=\"https://github.com/rust-lang/rust/issues/{number}\" \
             title=\"tracking issue\">#{number}</a>"
        ),
        None => String::new(),
    };
    let condition = match block_condition(feature) {
        Some((condition, _)) => format!(
            "<small class=\"cond\">if <code>{}</code></small>",
            escape_html(&condition)
        ),
        None => String::new(),
    };
    format!(
        "<th class=\"row\">{}<small>{stable}{issue}</small>{condition}</th>",
        super::feature_link(feature.name)
    )
}

pub(super) fn feature_grid(
    report: &Report,
    usage: Option<&UsageReport>,
    found: &[Column],
    popups: &mut Popups,
) -> String {
    let mut html = grid_head(
        "<h2 id=\"features\">Features</h2><p class=\"muted\">What each compiler says when a \
         <code>#![feature]</code> attribute names the feature, with \
         <code>RUSTC_BOOTSTRAP=1</code>.</p>",
        "grid",
        "feature",
        &column_headers(found),
    );
    for (feature, cells) in FEATURES.iter().zip(&report.features) {
        html.push_str("<tr>");
        html.push_str(&feature_header(feature));
        for &(index, toolchain) in found {
            let cell: &FeatureCell = &cells[index];
            let (mut words, short) = status_words(&cell.observed);
            let mut detail = format!(
                "<p><b>{}</b> on <b>{}</b>: {}.</p>",
                feature.name,
                escape_html(&toolchain.id),
                escape_html(&words)
            );
            // Gated, or unknown, but not asked for: the kernel's block leaves it out here.
            let off = !matches!(
                cell.observed,
                Observed::Status(Status::Stable(_)) | Observed::NotRecorded
            ) && !toolchain.release.is_none_or(|release| {
                let enabled = enabled_in_kernel_mode(release);
                enabled.iter().any(|enabled| enabled.name == feature.name)
            });
            if off {
                let (condition, thresholds) = block_condition(feature).unwrap_or_default();
                let thresholds = if thresholds.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", thresholds.join("; "))
                };
                let _ = write!(
                    detail,
                    "<p class=\"off-note\">The kernel's block does not enable it on this \
                     compiler: <code>#![cfg_attr({}, feature({}))]</code>, and <code>{}</code> \
                     does not hold{}. Kernel mode does not need <code>RUSTC_BOOTSTRAP</code> \
                     for it here.</p>",
                    escape_html(feature.gate),
                    feature.name,
                    escape_html(&condition),
                    escape_html(&thresholds),
                );
                let _ = write!(
                    words,
                    "; not enabled by the kernel's block on this compiler: its condition \
                     {condition} does not hold{thresholds}"
                );
            }
            match cell.expected {
                Some(expected) if !cell.ok() => {
                    let (predicted, _) = status_words(&Observed::Status(expected));
                    let predicted = escape_html(&predicted);
                    let _ = write!(
                        detail,
                        "<p class=\"bad\">The catalog predicts {predicted}.</p>"
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
                "<td class=\"cell st-{}{}{}{}\" data-cell=\"feature/{}/{}\"><a href=\"#{id}\" \
                 title=\"{}\">{}</a></td>",
                cell.observed.word(),
                if off { " off" } else { "" },
                if cell.ok() { "" } else { " differs" },
                below_class(toolchain),
                feature.name,
                escape_html(&toolchain.id),
                escape_html(&words),
                escape_html(if off { "not enabled" } else { &short }),
            );
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table></div></section>\n");
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

/// A source point as a link from `docs/` for a repository file, else as text.
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
