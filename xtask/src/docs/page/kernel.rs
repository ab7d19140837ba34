// SPDX-License-Identifier: GPL-2.0
//! The kernel's side: a driver against Kbuild's rules, and the real kernel trees built by each
//! compiler.

use super::{below_class, column_headers, escape_html, grid_head, release_note, Column, Popups};
use crate::docs::kernels::boot::CellBoot;
use crate::docs::kernels::{release_key, TreeData};
use crate::report::Report;
use std::fmt::Write;

/// What a driver gets from each compiler when it breaks Kbuild's rules: its errors' codes per
/// fixture of `xtask/programs/kbuild/`.
pub(super) fn kbuild_grid(report: &Report, found: &[Column], popups: &mut Popups) -> String {
    if report.kbuild.is_empty() {
        return String::new();
    }
    let fixtures = crate::distinct(report.kbuild.iter().map(|cell| cell.fixture.as_str()));
    let mut html = grid_head(
        "<h2 id=\"kbuild\">A driver against Kbuild's rules</h2><p class=\"muted\">Each fixture \
         compiled as Kbuild compiles a driver (<code>-Zallow-features</code> and \
         <code>-Zcrate-attr=feature(…)</code> with the kernel's list): \
         <code>inside_allow_list</code> enables an allowed feature itself, \
         <code>outside_allow_list</code> uses one outside the list. The cell shows the codes of \
         the compiler's errors.</p>",
        "grid",
        "fixture",
        &column_headers(found),
    );
    for fixture in fixtures {
        let _ = write!(
            html,
            "<tr><th class=\"row\"><code>{}</code></th>",
            escape_html(fixture)
        );
        for &(index, toolchain) in found {
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
            let link = popups.link(
                &format!("{fixture} on {}", toolchain.id),
                &body,
                &escape_html(&shown),
            );
            let class = if cell.ok() {
                "kb-expected"
            } else {
                "kb-unexpected differs"
            };
            let _ = write!(
                html,
                "<td class=\"cell {class}{}\" data-cell=\"kbuild/{}/{}\" title=\"{}\">{link}</td>",
                below_class(toolchain),
                escape_html(fixture),
                escape_html(&toolchain.id),
                escape_html(&predicted),
            );
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table></div></section>\n");
    html
}

/// The kernel report's compilers in the page's order: the matrix report's release order, then
/// any the matrix did not run, by release.
fn kernel_columns<'a>(report: &Report, trees: &'a [TreeData]) -> Vec<&'a str> {
    let cells = trees.iter().flat_map(|tree| &tree.real);
    let mut ids = crate::distinct(cells.clone().map(|cell| cell.3.as_str()));
    let order = crate::report::release_order(&report.toolchains);
    let rank = |id: &str| {
        order
            .iter()
            .position(|&index| report.toolchains[index].id == id)
    };
    let release = |id: &str| {
        let cell = cells.clone().find(|cell| cell.3 == id);
        cell.map(|cell| release_key(&cell.1))
    };
    ids.sort_by_key(|id| (rank(id).is_none(), rank(id), release(id)));
    ids
}

/// Which compiler built which real kernel tree's Rust, with the boot of a cell that built,
/// framed where the tree's rules predicted otherwise or the boot failed; the compilers no tree
/// was built with share one column.
pub(super) fn kernel_trees_section(
    report: &Report,
    trees: &[TreeData],
    popups: &mut Popups,
) -> String {
    if trees.is_empty() {
        return "<section><h2 id=\"kernel-trees\">Kernel trees</h2><p class=\"muted\">Which \
                compiler builds which kernel tree's Rust: no <code>cargo xtask kernel</code> \
                report is recorded (<code>docs/kernel-report.json</code>).</p></section>\n"
            .into();
    }
    let columns = kernel_columns(report, trees).into_iter();
    let cell = |tree: &'_ TreeData, id: &str| tree.real.iter().find(|cell| cell.3 == id).cloned();
    let (ran, idle): (Vec<&str>, Vec<&str>) = columns.partition(|id| {
        trees
            .iter()
            .any(|tree| cell(tree, id).is_some_and(|cell| cell.0 != "not run"))
    });
    let mut headers = String::new();
    for id in &ran {
        let release = trees
            .iter()
            .find_map(|tree| cell(tree, id))
            .map(|cell| cell.1);
        let note = release_note(id, release.as_deref());
        let _ = write!(headers, "<th class=\"col\">{}{note}</th>", escape_html(id));
    }
    if !idle.is_empty() {
        let _ = write!(
            headers,
            "<th class=\"col idle\" title=\"{}\">not run<small>{} compilers</small></th>",
            escape_html(&idle.join(", ")),
            idle.len()
        );
    }
    let mut html = grid_head(
        "<h2 id=\"kernel-trees\">Kernel trees</h2><p class=\"muted\">Each real kernel tree's \
         Rust built with each compiler by the tree's own Kbuild (<code>cargo xtask \
         kernel</code>): <i>refused</i> is the tree's own <code>make rustavailable</code> saying \
         no. Beside a build that passed, its boot under QEMU (<code>--boot</code>): KUnit's cases \
         passed/failed/skipped, <i>not recorded</i> where the report has no boot for it. A \
         dashed frame marks a real result that the prediction from the tree's rules did not \
         expect, or a boot that failed where the build passed. Details: \
         <a href=\"kernels.md\">docs/kernels.md</a>.</p>",
        "grid",
        "tree",
        &headers,
    );
    for tree in trees {
        let _ = write!(
            html,
            "<tr><th class=\"row\">{} <small>{}</small></th>",
            escape_html(&tree.id),
            escape_html(&tree.version)
        );
        for id in &ran {
            let Some((real, release, reason, _)) = cell(tree, id) else {
                html.push_str("<td></td>");
                continue;
            };
            let finding = tree.findings.iter().find(|finding| finding.3 == **id);
            let boot = tree.boots.iter().find(|boot| boot.toolchain == **id);
            let mut body = format!(
                "<p>{}</p>",
                escape_html(if reason.is_empty() { &real } else { &reason })
            );
            if let Some((_, predicted, ..)) = finding {
                let said = escape_html(&format!(
                    "Predicted {predicted}, the real build says {real}."
                ));
                let _ = write!(body, "<p class=\"bad\">{said}</p>");
            }
            let (mut shown, mut title, mut classes) = (escape_html(&real), reason, String::new());
            if let Some(boot) = boot {
                body.push_str(&boot_body(boot));
                let short = escape_html(&boot.short());
                let _ = write!(shown, "<small class=\"boot\"> \u{b7} {short}</small>");
                let _ = write!(title, "; {}", boot.long());
                let _ = write!(classes, " boot-{}", boot.word().replace(' ', "-"));
            }
            if finding.is_some() || boot.is_some_and(|boot| boot.finding) {
                classes.push_str(" finding");
            }
            let title_of = format!("Linux {} with {id} ({release})", tree.version);
            let link = popups.link(&title_of, &body, &shown);
            let _ = write!(
                html,
                "<td class=\"cell kt-{}{classes}\" data-cell=\"kernel/{}/{}\" title=\"{}\">\
                 {link}</td>",
                real.replace(' ', "-"),
                escape_html(&tree.id),
                escape_html(id),
                escape_html(&title),
            );
        }
        if !idle.is_empty() {
            let mut body = String::from("<ul>");
            let mut keys = Vec::new();
            for id in &idle {
                if let Some((_, _, reason, _)) = cell(tree, id) {
                    let (id, reason) = (escape_html(id), escape_html(&reason));
                    let _ = write!(body, "<li><code>{id}</code>: {reason}</li>");
                    keys.push(id);
                }
            }
            body.push_str("</ul>");
            let link = popups.link(
                &format!("Linux {}: not run", tree.version),
                &body,
                "not run",
            );
            let _ = write!(
                html,
                "<td class=\"cell kt-not-run idle\" data-collapsed=\"kernel/{}\" \
                 data-compilers=\"{}\">{link}</td>",
                escape_html(&tree.id),
                keys.join(" "),
            );
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table></div></section>\n");
    html
}

/// A boot's part of its cell's popup: a failure with each failed KUnit case's output, else the
/// console's last lines.
fn boot_body(boot: &CellBoot) -> String {
    let mut body = format!("<p>{}</p>", escape_html(&boot.long()));
    let Some(json) = boot.boot.as_ref().filter(|_| boot.finding) else {
        return body;
    };
    body.push_str(
        "<p class=\"bad\">Finding: the build passed, so the boot was predicted to pass; it \
         failed.</p>",
    );
    let failures: Vec<_> = json
        .kunit
        .iter()
        .flat_map(|kunit| &kunit.failures)
        .collect();
    for failure in &failures {
        let _ = write!(
            body,
            "<p><code>{}.{}</code> failed:</p><pre>{}</pre>",
            escape_html(&failure.suite),
            escape_html(&failure.test),
            escape_html(&failure.output)
        );
    }
    if let (true, Some(tail)) = (failures.is_empty(), &json.console_tail) {
        let _ = write!(
            body,
            "<p>The console's last lines:</p><pre>{}</pre>",
            escape_html(tail)
        );
    }
    body
}
