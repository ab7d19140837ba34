// SPDX-License-Identifier: GPL-2.0
//! `docs/kernels.md`: per real kernel tree, the features its `rust/kernel/lib.rs` enables, its
//! allowed list, which compilers built it for real, and how the lists changed from one tree to
//! the next, linked to the shim's example of each feature the catalog has. Generated from the
//! committed JSON of a `cargo xtask kernel` run ([`KERNEL_REPORT`]), read as data.

use crate::catalog;
use crate::json::{self, Value};
use anyhow::{bail, Context};
use std::fmt::Write;
use std::path::Path;

/// The committed report the page is made from, relative to the repository's root.
pub const KERNEL_REPORT: &str = "docs/kernel-report.json";

/// The page itself, relative to the repository's root.
pub const KERNELS_PAGE: &str = "docs/kernels.md";

/// The comparison shown first, when the report has both trees: 6.12, the first long-term tree
/// with a minimum rustc rather than one exact release, and 7.3, the newest.
const HEADLINE: (&str, &str) = ("6.12", "7.3");

/// The crate root whose features the page lists: the one the shim stands for.
const KERNEL_CRATE: &str = "rust/kernel/lib.rs";

/// One tree as the pages need it.
pub struct TreeData {
    pub id: String,
    pub version: String,
    pub package: Option<String>,
    pub minimum_rustc: Option<String>,
    pub allowed: Vec<String>,
    /// Each feature `rust/kernel/lib.rs` enables on some compiler, with the releases that
    /// enable it, and all the releases probed.
    pub features: Vec<(String, Vec<String>)>,
    pub probed: Vec<String>,
    /// Every other crate root that enables a feature on some compiler, with those features.
    pub others: Vec<(String, Vec<String>)>,
    /// (real result, rustc release, reason) per cell.
    pub real: Vec<(String, String, String)>,
    /// The cells whose prediction the real build contradicted: (release, predicted, real).
    pub findings: Vec<(String, String, String)>,
    pub error: Option<String>,
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_string)
}

/// Reads the report's trees and cells; a report without them is an error naming the file.
pub fn read_trees(report: &Value, file: &Path) -> anyhow::Result<Vec<TreeData>> {
    let (Some(trees), Some(cells)) = (
        report.get("trees").and_then(Value::as_array),
        report.get("cells").and_then(Value::as_array),
    ) else {
        bail!(
            "{}: not a `cargo xtask kernel` JSON report (no `trees` and `cells`)",
            file.display()
        );
    };
    let mut result = Vec::new();
    for tree in trees {
        let id =
            text(tree, "id").with_context(|| format!("{}: a tree without id", file.display()))?;
        let mut data = TreeData {
            version: text(tree, "version").unwrap_or_else(|| "?".into()),
            package: text(tree, "package"),
            minimum_rustc: text(tree, "minimum_rustc"),
            allowed: strings(tree.get("allowed_features")),
            features: Vec::new(),
            probed: Vec::new(),
            others: Vec::new(),
            findings: Vec::new(),
            real: Vec::new(),
            error: text(tree, "error"),
            id,
        };
        for cell in cells
            .iter()
            .filter(|cell| text(cell, "tree").as_deref() == Some(&data.id))
        {
            let release = text(cell, "rustc")
                .or_else(|| text(cell, "toolchain"))
                .unwrap_or_else(|| "?".into());
            let reason = text(cell, "first_error")
                .or_else(|| text(cell, "reason"))
                .unwrap_or_default();
            let real = text(cell, "real").unwrap_or_else(|| "not run".into());
            if cell.get("finding").and_then(Value::as_bool) == Some(true) {
                let predicted = text(cell, "predicted").unwrap_or_else(|| "?".into());
                data.findings
                    .push((release.clone(), predicted, real.clone()));
            }
            data.real.push((real, release.clone(), reason));
            let crates = cell
                .get("crates")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            for krate in crates {
                let Some(root) = text(krate, "root") else {
                    continue;
                };
                if root == KERNEL_CRATE {
                    continue;
                }
                let features = strings(krate.get("features"));
                if features.is_empty() {
                    continue;
                }
                let index = match data.others.iter().position(|(known, _)| *known == root) {
                    Some(index) => index,
                    None => {
                        data.others.push((root, Vec::new()));
                        data.others.len() - 1
                    }
                };
                for feature in features {
                    if !data.others[index].1.contains(&feature) {
                        data.others[index].1.push(feature);
                    }
                }
            }
            let kernel = crates
                .iter()
                .find(|krate| text(krate, "root").as_deref() == Some(KERNEL_CRATE));
            let Some(kernel) = kernel else {
                continue;
            };
            data.probed.push(release.clone());
            for feature in strings(kernel.get("features")) {
                match data.features.iter_mut().find(|(name, _)| *name == feature) {
                    Some((_, releases)) => releases.push(release.clone()),
                    None => data.features.push((feature, vec![release.clone()])),
                }
            }
        }
        result.push(data);
    }
    Ok(result)
}

/// Where the shim shows `feature`, or that it does not.
fn in_the_shim(feature: &str) -> String {
    match catalog::feature(feature) {
        Some(known) => format!(
            "[`examples/{0}.rs`](../examples/{0}.rs), [`{1}`](features.md#{1})",
            known.example, known.name
        ),
        None => "not in the shim".to_string(),
    }
}

fn code_list(names: &[String]) -> String {
    if names.is_empty() {
        return "none".into();
    }
    names
        .iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn releases_with(data: &TreeData, real: &str) -> Vec<String> {
    data.real
        .iter()
        .filter(|(word, _, _)| word == real)
        .map(|(_, release, _)| release.clone())
        .collect()
}

fn tree_section(page: &mut String, data: &TreeData) {
    let _ = writeln!(page, "## Linux {} (`{}`)\n", data.version, data.id);
    if let Some(error) = &data.error {
        let _ = writeln!(
            page,
            "Not read in that run: {}.\n",
            super::escape_markdown(error)
        );
        return;
    }
    if let Some(package) = &data.package {
        let _ = writeln!(page, "- Debian package: `{package}`.");
    }
    let _ = writeln!(
        page,
        "- Minimum rustc (x86_64, `scripts/min-tool-version.sh`): {}.",
        data.minimum_rustc.as_deref().unwrap_or("?")
    );
    let _ = writeln!(
        page,
        "- Allowed outside `rust/` (`rust_allowed_features`, on for every driver through \
         `-Zcrate-attr`): {}.",
        code_list(&data.allowed)
    );
    let mut built = Vec::new();
    for (word, label) in [
        ("pass", "built for real by"),
        ("refused", "refused by the tree's own check"),
        ("fail", "failed to build with"),
    ] {
        let releases = releases_with(data, word);
        if !releases.is_empty() {
            built.push(format!("{label} {}", releases.join(", ")));
        }
    }
    let not_run: Vec<String> = data
        .real
        .iter()
        .filter(|(word, _, _)| word == "not run")
        .map(|(_, release, reason)| format!("{release} ({})", super::escape_markdown(reason)))
        .collect();
    if !not_run.is_empty() {
        built.push(format!("not built: {}", not_run.join("; ")));
    }
    for (release, predicted, real) in &data.findings {
        built.push(format!(
            "**finding**: with {release} the probes predicted {predicted}, the real build said \
             {real}"
        ));
    }
    let _ = writeln!(
        page,
        "- Compilers: {}.\n",
        if built.is_empty() {
            "none in that run".to_string()
        } else {
            built.join("; ")
        }
    );
    if data.features.is_empty() {
        let _ = writeln!(
            page,
            "No compiler's probe of `{KERNEL_CRATE}` is in that run.\n"
        );
        return;
    }
    let _ = writeln!(
        page,
        "| Feature `{KERNEL_CRATE}` enables | With | Allowed outside `rust/` | In the shim |\n\
         |---|---|---|---|"
    );
    for (feature, releases) in &data.features {
        let with = if releases.len() == data.probed.len() {
            "every compiler probed".to_string()
        } else {
            let without: Vec<&String> = data
                .probed
                .iter()
                .filter(|release| !releases.contains(release))
                .collect();
            format!(
                "{} (not {})",
                releases.join(", "),
                without
                    .iter()
                    .map(|release| release.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let allowed = if data.allowed.contains(feature) {
            "yes"
        } else {
            "no"
        };
        let _ = writeln!(
            page,
            "| `{feature}` | {with} | {allowed} | {} |",
            in_the_shim(feature)
        );
    }
    let only_allowed: Vec<String> = data
        .allowed
        .iter()
        .filter(|name| !data.features.iter().any(|(feature, _)| feature == *name))
        .cloned()
        .collect();
    if !only_allowed.is_empty() {
        let _ = writeln!(
            page,
            "\nAllowed for drivers but not enabled by `{KERNEL_CRATE}`: {}.",
            only_allowed
                .iter()
                .map(|name| format!("`{name}` ({})", in_the_shim(name)))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if !data.others.is_empty() {
        let _ = writeln!(
            page,
            "\nThe other crate roots that enable features (on some compiler probed):\n"
        );
        for (root, features) in &data.others {
            let _ = writeln!(page, "- `{root}`: {}", code_list(features));
        }
    }
    page.push('\n');
}

fn difference(before: &[String], after: &[String]) -> (Vec<String>, Vec<String>) {
    let dropped = before
        .iter()
        .filter(|name| !after.contains(name))
        .cloned()
        .collect();
    let added = after
        .iter()
        .filter(|name| !before.contains(name))
        .cloned()
        .collect();
    (dropped, added)
}

fn change_section(page: &mut String, before: &TreeData, after: &TreeData) {
    let names = |data: &TreeData| -> Vec<String> {
        data.features.iter().map(|(name, _)| name.clone()).collect()
    };
    let (dropped, added) = difference(&names(before), &names(after));
    let (allowed_dropped, allowed_added) = difference(&before.allowed, &after.allowed);
    let _ = writeln!(
        page,
        "### From {} to {}\n\n\
         - `{KERNEL_CRATE}`: {} features, then {}; dropped {}; added {}.\n\
         - `rust_allowed_features`: {}, then {}; dropped {}; added {}.\n",
        before.id,
        after.id,
        before.features.len(),
        after.features.len(),
        code_list(&dropped),
        code_list(&added),
        before.allowed.len(),
        after.allowed.len(),
        code_list(&allowed_dropped),
        code_list(&allowed_added),
    );
}

/// The page for the report text `report` (`None`: no report committed yet).
pub fn kernels_page(report: Option<&str>, file: &Path) -> anyhow::Result<String> {
    let mut page = String::from(
        "# The real kernel trees\n\n\
         <!-- Generated by `cargo xtask docs` from docs/kernel-report.json, the JSON of a \
         `cargo xtask kernel` run; do not edit. -->\n\n\
         What each real kernel tree asks of the Rust compiler, as its own files say \
         (`scripts/min-tool-version.sh`, `scripts/Makefile.build`, `init/Kconfig`, its crate \
         roots), and what real compilers did with it: the probes of its feature attributes and \
         its own Kbuild build of `rust/`, the samples and the drivers. A feature the shim shows \
         links to its example; the others (newer than the catalog) say \"not in the shim\": \
         growing the catalog is a later step.\n\n",
    );
    let Some(report) = report else {
        let _ = writeln!(
            page,
            "No `cargo xtask kernel` report is recorded yet: run `cargo xtask kernel --format \
             json > {KERNEL_REPORT}`, then `cargo xtask docs`."
        );
        return Ok(page);
    };
    let value =
        json::parse(report).map_err(|error| anyhow::anyhow!("{}: {error}", file.display()))?;
    let trees = read_trees(&value, file)?;
    for data in &trees {
        tree_section(&mut page, data);
    }
    let readable: Vec<&TreeData> = trees
        .iter()
        .filter(|data| data.error.is_none() && !data.features.is_empty())
        .collect();
    if readable.len() >= 2 {
        page.push_str("## How the lists changed\n\n");
        let find = |id: &str| readable.iter().copied().find(|data| data.id == id);
        let (from, to) = HEADLINE;
        if let (Some(before), Some(after)) = (find(from), find(to)) {
            change_section(&mut page, before, after);
        }
        for pair in readable.windows(2) {
            if (pair[0].id.as_str(), pair[1].id.as_str()) != HEADLINE {
                change_section(&mut page, pair[0], pair[1]);
            }
        }
    }
    Ok(page.trim_end().to_string() + "\n")
}

/// The page's path and contents for the repository at `root`.
pub fn generated(root: &Path) -> anyhow::Result<(std::path::PathBuf, String)> {
    let file = root.join(KERNEL_REPORT);
    let report = match std::fs::read_to_string(&file) {
        Ok(text) => Some(text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(error).with_context(|| format!("reading {}", file.display())),
    };
    Ok((
        root.join(KERNELS_PAGE),
        kernels_page(report.as_deref(), &file)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How the page reads the real results and findings of a report; the layout is
    /// `cargo xtask kernel`'s JSON (docs/kernel.md), the values made up for the renderer.
    #[test]
    fn real_results_and_findings_are_shown_per_tree() {
        let report = r#"{
          "trees": [
            {"id": "6.12", "version": "6.12.118", "package": "linux-source-6.12=6.12.118-1",
             "minimum_rustc": "1.78.0", "allowed_features": ["lint_reasons"], "error": null},
            {"id": "5.10", "version": "5.10.262", "package": null, "minimum_rustc": null,
             "allowed_features": [], "error": "no Rust support"}
          ],
          "cells": [
            {"tree": "6.12", "toolchain": "1.78.0", "rustc": "1.78.0", "predicted": "pass",
             "crates": [{"root": "rust/kernel/lib.rs", "features": ["lint_reasons"]}],
             "real": "pass", "reason": "built", "first_error": null, "finding": false},
            {"tree": "6.12", "toolchain": "debian-1.98.1", "rustc": "1.98.1",
             "predicted": "pass",
             "crates": [{"root": "rust/kernel/lib.rs", "features": ["lint_reasons"]}],
             "real": "fail", "reason": "make failed", "first_error": "error[E0000]: x",
             "finding": true},
            {"tree": "6.12", "toolchain": "nightly", "rustc": null, "predicted": null,
             "crates": [], "real": "not run", "reason": "not installed", "finding": false}
          ]
        }"#;
        let page = kernels_page(Some(report), Path::new("r.json")).unwrap();
        assert!(
            page.contains(
                "- Compilers: built for real by 1.78.0; failed to build with 1.98.1; not built: \
                 nightly (not installed); **finding**: with 1.98.1 the probes predicted pass, \
                 the real build said fail."
            ),
            "{page}"
        );
        assert!(
            page.contains("## Linux 5.10.262 (`5.10`)\n\nNot read in that run: no Rust support.")
        );
        assert!(page.contains("| `lint_reasons` | every compiler probed | yes | [`examples/"));
        let error = kernels_page(Some("{}"), Path::new("r.json")).unwrap_err();
        assert!(format!("{error}").contains("not a `cargo xtask kernel` JSON report"));
        let none = kernels_page(None, Path::new("r.json")).unwrap();
        assert!(none.contains("No `cargo xtask kernel` report is recorded yet"));
    }
}
