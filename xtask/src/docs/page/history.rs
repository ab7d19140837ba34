// SPDX-License-Identifier: GPL-2.0
//! How the list moves: each feature against the real kernel trees, and a view by release (what
//! each Rust release brought, and what each tree began or stopped asking for).

use super::{escape_html, feature_link, feature_links, grid_head};
use crate::catalog::{Release, FEATURES, MINIMUM_RELEASE};
use crate::docs::kernels::{across_trees, changes_by_compiler, difference, release_key, TreeData};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Each feature against the trees the kernel report read.
pub(super) fn trees_section(trees: &[TreeData]) -> String {
    let (read, features) = across_trees(trees);
    if read.len() < 2 {
        return String::new();
    }
    let mut columns = String::new();
    for tree in &read {
        let (id, version) = (escape_html(&tree.id), escape_html(&tree.version));
        let _ = write!(
            columns,
            "<th class=\"col\">{id}<small>{version}</small></th>"
        );
    }
    let mut html = grid_head(
        "<h2 id=\"tree-by-tree\">Each feature, tree by tree</h2><p class=\"muted\">Where each \
         real tree asks for a feature: <i>rust/kernel</i> when its \
         <code>rust/kernel/lib.rs</code> enables it (from the compiler named, where not on every \
         one probed), <i>drivers</i> when its <code>rust_allowed_features</code> lets a driver \
         enable it.</p>",
        "grid trees",
        "feature",
        &(columns + "<th class=\"col\">trees</th>"),
    );
    for feature in &features {
        let _ = write!(
            html,
            "<tr><th class=\"row\">{}</th>",
            feature_link(&feature.name)
        );
        for (tree, asked) in read.iter().zip(&feature.asked) {
            let class = match (asked.kernel, asked.drivers) {
                (true, true) => "as-both",
                (true, false) => "as-kernel",
                (false, true) => "as-drivers",
                (false, false) => "as-none",
            };
            let _ = write!(
                html,
                "<td class=\"cell {class}\" data-asked=\"{}/{}\">{}</td>",
                escape_html(&tree.id),
                escape_html(&feature.name),
                escape_html(&asked.words())
            );
        }
        let _ = writeln!(
            html,
            "<td class=\"history\">{}</td></tr>",
            escape_html(&feature.history(&read))
        );
    }
    html.push_str("</tbody></table></div></section>\n");
    html
}

/// The view by release: per Rust release what the catalog and the trees say it brought, then
/// per kernel tree what it began and stopped asking for against the tree before it.
pub(super) fn by_release_section(trees: &[TreeData]) -> String {
    let mut rows: BTreeMap<Release, Vec<String>> = BTreeMap::new();
    let mut add = |release: Release, text: String| rows.entry(release).or_default().push(text);
    add(
        MINIMUM_RELEASE,
        "the shim's minimum, the kernel's from 6.11".to_string(),
    );
    for feature in FEATURES {
        if let Some(since) = feature.stable_since {
            add(since, format!("made {} stable", feature_link(feature.name)));
        }
        if let Some(since) = feature.known_since {
            add(since, format!("first knows {}", feature_link(feature.name)));
        }
    }
    let (read, features) = across_trees(trees);
    for tree in &read {
        if let Some((false, Some(release))) = tree.minimum_rustc.as_deref().map(release_key) {
            add(
                release,
                format!("the minimum of Linux {}", escape_html(&tree.version)),
            );
        }
    }
    for change in changes_by_compiler(trees) {
        let Some(at) = release_key(&change.release).1 else {
            continue;
        };
        let mut text = format!(
            "{}'s <code>rust/kernel</code> (probed: by {}, not on {})",
            escape_html(&change.tree),
            escape_html(&change.release),
            escape_html(&change.before)
        );
        for (verb, names) in [("begins", &change.began), ("stops", &change.stopped)] {
            if !names.is_empty() {
                let _ = write!(text, " {verb} {}", feature_links(names, "none"));
            }
        }
        add(at, text);
    }
    let mut html = String::from(
        "<section><h2 id=\"by-release\">By release</h2><h3>Rust releases</h3><div class=\"scroll\">\
         <table class=\"list\"><thead><tr><th>Rust</th><th>what it brought, from the catalog \
         and the trees</th></tr></thead><tbody>\n",
    );
    for (release, texts) in &rows {
        let _ = writeln!(
            html,
            "<tr><th>{}.{}</th><td>{}</td></tr>",
            release.major,
            release.minor,
            texts.join("; ")
        );
    }
    html.push_str("</tbody></table></div>");
    if read.len() >= 2 {
        html.push_str(
            "<h3>Kernel trees, each against the one before</h3><div class=\"scroll\">\
             <table class=\"list\"><thead><tr><th>Linux</th>\
             <th>minimum Rust</th><th>began asking for</th><th>stopped asking for</th></tr>\
             </thead><tbody>\n",
        );
        let asked = |at: usize| -> Vec<String> {
            let asking = features.iter().filter(|feature| feature.asked[at].any());
            asking.map(|feature| feature.name.clone()).collect()
        };
        for (index, tree) in read.iter().enumerate() {
            let (stopped, began) = match index {
                0 => (Vec::new(), asked(0)),
                _ => difference(&asked(index - 1), &asked(index)),
            };
            let _ = writeln!(
                html,
                "<tr><th>{} <small>{}</small></th><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape_html(&tree.id),
                escape_html(&tree.version),
                escape_html(tree.minimum_rustc.as_deref().unwrap_or("?")),
                feature_links(&began, "none"),
                if index == 0 {
                    "<span class=\"muted\">(the first tree)</span>".to_string()
                } else {
                    feature_links(&stopped, "none")
                },
            );
        }
        html.push_str("</tbody></table></div>");
    }
    html.push_str("</section>\n");
    html
}
