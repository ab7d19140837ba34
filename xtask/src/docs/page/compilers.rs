// SPDX-License-Identifier: GPL-2.0
//! The compilers, by release: exact version, where each came from, and its verdict.

use super::{below_class, escape_html, Column, Popups};
use crate::docs::machine_paths::without_machine_paths;
use crate::features::expect::ToolchainVerdict;
use crate::report::Report;
use std::fmt::Write;

/// A row per compiler, those in the run first.
pub(super) fn compilers_table(
    report: &Report,
    found: &[Column],
    missing: &[Column],
    popups: &mut Popups,
) -> String {
    let mut html = String::from(
        "<section><h2 id=\"compilers\">The compilers</h2><div class=\"scroll\"><table class=\"list\"><thead><tr>\
         <th>compiler</th><th>version</th><th>from</th><th>verdict</th><th>summary</th>\
         </tr></thead><tbody>\n",
    );
    let summaries = report.summary_lines();
    for &(index, toolchain) in found.iter().chain(missing) {
        let found = !matches!(toolchain.verdict, ToolchainVerdict::Missing(_));
        let version = match &toolchain.release_text {
            Some(release) if found => {
                let mut text = format!("rustc {release}");
                if let Some(date) = &toolchain.commit_date {
                    let _ = write!(text, " ({date})");
                }
                for part in [&toolchain.channel, &toolchain.host].into_iter().flatten() {
                    let _ = write!(text, ", {part}");
                }
                text
            }
            _ => "\u{2013}".into(),
        };
        let from = match (toolchain.source, &toolchain.rustc) {
            (Some(kind), Some(rustc)) => format!(
                "{} (<code>{}</code>)<br><small><code>{}</code></small>",
                kind.word(),
                escape_html(&without_machine_paths(&toolchain.spec)),
                escape_html(&without_machine_paths(rustc))
            ),
            _ => format!("pin <code>{}</code>", escape_html(&toolchain.spec)),
        };
        let failed = matches!(toolchain.verdict, ToolchainVerdict::Broken(_))
            || (report.strict && matches!(toolchain.verdict, ToolchainVerdict::Missing(_)));
        let verdict = match &toolchain.verdict {
            ToolchainVerdict::Broken(message) | ToolchainVerdict::Missing(message) => popups.link(
                &format!("{}: {}", toolchain.id, toolchain.verdict.word()),
                &format!("<pre>{}</pre>", escape_html(message)),
                &escape_html(toolchain.verdict.word()),
            ),
            other => escape_html(other.word()),
        };
        let summary = summaries[index]
            .split_once(": ")
            .map_or(summaries[index].as_str(), |(_, rest)| rest);
        let _ = writeln!(
            html,
            "<tr class=\"{}\"><th><code>{}</code></th><td>{}</td><td>{from}</td>\
             <td class=\"cell v-{}{}\" data-cell=\"toolchain/{}\">{verdict}</td><td>{}</td></tr>",
            below_class(toolchain).trim(),
            escape_html(&toolchain.id),
            escape_html(&version),
            toolchain.verdict.word(),
            if failed { " differs" } else { "" },
            escape_html(&toolchain.id),
            escape_html(summary),
        );
    }
    html.push_str("</tbody></table></div></section>\n");
    html
}
