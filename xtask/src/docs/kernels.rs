// SPDX-License-Identifier: GPL-2.0
//! `docs/kernels.md`: per real kernel tree, the features its `rust/kernel/lib.rs` enables, its
//! allowed list, which compilers built it for real, and how the lists changed from one tree to
//! the next, linked to the shim's example of each feature the catalog has. Generated from the
//! committed JSON of a `cargo xtask kernel` run ([`KERNEL_REPORT`]), read as data.

use crate::catalog;
use crate::kernel::report::json::KernelJson;
use crate::util::output::{escape_markdown, markdown_code};
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
#[derive(Default)]
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

/// The trees of `report`, each with its cells.
pub(crate) fn read_trees(report: &KernelJson) -> Vec<TreeData> {
    let trees = report.trees.iter().map(|tree| {
        let mut data = TreeData {
            id: tree.id.clone(),
            version: tree.version.clone().unwrap_or_else(|| "?".into()),
            package: tree.package.clone(),
            minimum_rustc: tree.minimum_rustc.clone(),
            allowed: tree.allowed_features.clone(),
            error: tree.error.clone(),
            ..TreeData::default()
        };
        for cell in report.cells.iter().filter(|cell| cell.tree == data.id) {
            let release = cell.rustc.clone().unwrap_or_else(|| cell.toolchain.clone());
            let reason = cell
                .first_error
                .clone()
                .unwrap_or_else(|| cell.reason.clone());
            if cell.is_finding() {
                let predicted = cell.predicted.clone().unwrap_or_else(|| "?".into());
                data.findings
                    .push((release.clone(), predicted, cell.real.clone()));
            }
            data.real.push((cell.real.clone(), release.clone(), reason));
            for krate in &cell.crates {
                if krate.root == KERNEL_CRATE || krate.features.is_empty() {
                    continue;
                }
                // A prediction lists each feature of a crate once.
                match data.others.iter_mut().find(|(root, _)| *root == krate.root) {
                    Some((_, features)) => {
                        for feature in &krate.features {
                            crate::push_once(features, feature.clone());
                        }
                    }
                    None => data
                        .others
                        .push((krate.root.clone(), krate.features.clone())),
                }
            }
            let Some(kernel) = cell.crates.iter().find(|krate| krate.root == KERNEL_CRATE) else {
                continue;
            };
            data.probed.push(release.clone());
            for feature in &kernel.features {
                match data.features.iter_mut().find(|(name, _)| name == feature) {
                    Some((_, releases)) => releases.push(release.clone()),
                    None => data.features.push((feature.clone(), vec![release.clone()])),
                }
            }
        }
        data
    });
    trees.collect()
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

/// A crate root other than the kernel crate and its features, each the catalog excludes with
/// the reason (a whole crate's once, after its name).
fn other_root_line(root: &str, features: &[String]) -> String {
    let names: Vec<String> = features
        .iter()
        .map(|feature| {
            let excluded = catalog::EXCLUDED
                .iter()
                .find(|exclusion| exclusion.feature.is_some() && exclusion.covers(feature, root));
            match excluded {
                Some(exclusion) => {
                    format!(
                        "{} (not taught: {})",
                        markdown_code(feature),
                        exclusion.reason
                    )
                }
                None => markdown_code(feature),
            }
        })
        .collect();
    let whole = catalog::EXCLUDED
        .iter()
        .find(|exclusion| exclusion.feature.is_none() && exclusion.crate_root == root);
    match whole {
        Some(exclusion) => format!(
            "- {} (not taught: {}): {}",
            markdown_code(root),
            exclusion.reason,
            names.join(", ")
        ),
        None => format!("- {}: {}", markdown_code(root), names.join(", ")),
    }
}

fn code_list(names: &[String]) -> String {
    if names.is_empty() {
        return "none".into();
    }
    names
        .iter()
        .map(|name| markdown_code(name))
        .collect::<Vec<_>>()
        .join(", ")
}

fn tree_section(page: &mut String, data: &TreeData) {
    let _ = writeln!(
        page,
        "## Linux {} ({})\n",
        escape_markdown(&data.version),
        markdown_code(&data.id)
    );
    if let Some(error) = &data.error {
        let _ = writeln!(page, "Not read in that run: {}.\n", escape_markdown(error));
        return;
    }
    if let Some(package) = &data.package {
        let _ = writeln!(page, "- Debian package: {}.", markdown_code(package));
    }
    let _ = writeln!(
        page,
        "- Minimum rustc (x86_64, `scripts/min-tool-version.sh`): {}.",
        escape_markdown(data.minimum_rustc.as_deref().unwrap_or("?"))
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
        let releases: Vec<String> = data
            .real
            .iter()
            .filter(|(real, _, _)| real == word)
            .map(|(_, release, _)| escape_markdown(release))
            .collect();
        if !releases.is_empty() {
            built.push(format!("{label} {}", releases.join(", ")));
        }
    }
    let not_run: Vec<String> = data
        .real
        .iter()
        .filter(|(word, _, _)| word == "not run")
        .map(|(_, release, reason)| {
            format!("{} ({})", escape_markdown(release), escape_markdown(reason))
        })
        .collect();
    if !not_run.is_empty() {
        built.push(format!("not built: {}", not_run.join("; ")));
    }
    for (release, predicted, real) in &data.findings {
        built.push(format!(
            "**finding**: with {} the probes predicted {}, the real build said {}",
            escape_markdown(release),
            escape_markdown(predicted),
            escape_markdown(real)
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
            let without: Vec<&str> = data
                .probed
                .iter()
                .filter(|release| !releases.contains(release))
                .map(String::as_str)
                .collect();
            escape_markdown(&format!(
                "{} (not {})",
                releases.join(", "),
                without.join(", ")
            ))
        };
        let allowed = if data.allowed.contains(feature) {
            "yes"
        } else {
            "no"
        };
        let _ = writeln!(
            page,
            "| {} | {with} | {allowed} | {} |",
            markdown_code(feature),
            in_the_shim(feature)
        );
    }
    let only_allowed: Vec<String> = data
        .allowed
        .iter()
        .filter(|name| !data.features.iter().any(|(feature, _)| feature == *name))
        .map(|name| format!("{} ({})", markdown_code(name), in_the_shim(name)))
        .collect();
    if !only_allowed.is_empty() {
        let _ = writeln!(
            page,
            "\nAllowed for drivers but not enabled by `{KERNEL_CRATE}`: {}.",
            only_allowed.join(", ")
        );
    }
    if !data.others.is_empty() {
        let _ = writeln!(
            page,
            "\nThe other crate roots that enable features (on some compiler probed):\n"
        );
        for (root, features) in &data.others {
            let _ = writeln!(page, "{}", other_root_line(root, features));
        }
    }
    page.push('\n');
}

/// The names `after` dropped from `before`, and those it added.
fn difference(before: &[String], after: &[String]) -> (Vec<String>, Vec<String>) {
    let missing = |from: &[String], to: &[String]| -> Vec<String> {
        from.iter()
            .filter(|name| !to.contains(name))
            .cloned()
            .collect()
    };
    (missing(before, after), missing(after, before))
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
        escape_markdown(&before.id),
        escape_markdown(&after.id),
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
    catalog::check_lists(catalog::FEATURES, catalog::EXCLUDED)
        .map_err(|error| anyhow::anyhow!("kernel-shim/src/catalog.rs: {error}"))?;
    let mut page = String::from(
        "# The real kernel trees\n\n\
         <!-- Generated by `cargo xtask docs` from docs/kernel-report.json, the JSON of a \
         `cargo xtask kernel` run; do not edit. -->\n\n\
         What each real kernel tree asks of the Rust compiler, as its own files say \
         (`scripts/min-tool-version.sh`, `scripts/Makefile.build`, `init/Kconfig`, its crate \
         roots), and what real compilers did with it: the probes of its feature attributes and \
         its own Kbuild build of `rust/`, the samples and the drivers. A feature the shim shows \
         links to its example; the others, which the catalog lacks (newer ones, and older ones \
         such as 6.1's `core_ffi_c`), say \"not in the shim\": growing the catalog is a later \
         step.\n\n",
    );
    let Some(report) = report else {
        let _ = writeln!(
            page,
            "No `cargo xtask kernel` report is recorded yet: run `cargo xtask kernel --format \
             json > {KERNEL_REPORT}`, then `cargo xtask docs`."
        );
        return Ok(page);
    };
    let trees = read_trees(&KernelJson::read(report, file)?);
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
    let report = super::read_optional(&file)?;
    Ok((
        root.join(KERNELS_PAGE),
        kernels_page(report.as_deref(), &file)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::kernel::report::json::{CellJson, CrateJson, TreeJson};

    fn tree(id: &str, version: Option<&str>, allowed: &[&str], error: Option<&str>) -> TreeJson {
        TreeJson {
            id: id.into(),
            version: version.map(Into::into),
            package: version.map(|version| format!("linux-source-6.12={version}-1")),
            source: None,
            sha256: None,
            minimum_rustc: version.map(|_| "1.78.0".into()),
            allowed_features: allowed.iter().map(|name| name.to_string()).collect(),
            error: error.map(Into::into),
        }
    }

    fn cell(toolchain: &str, rustc: Option<&str>, real: &str, reason: &str) -> CellJson {
        CellJson {
            tree: "6.12".into(),
            toolchain: toolchain.into(),
            rustc: rustc.map(Into::into),
            minimum_met: rustc.map(|_| true),
            predicted: rustc.map(|_| "pass".into()),
            prediction_error: None,
            crates: rustc
                .iter()
                .map(|_| CrateJson {
                    root: KERNEL_CRATE.into(),
                    features: vec!["lint_reasons".into()],
                    predicted: "pass".into(),
                    needs_bootstrap: true,
                    errors: Vec::new(),
                })
                .collect(),
            real: real.into(),
            reason: reason.into(),
            first_error: None,
            warning: None,
            tools: None,
            enabled: Vec::new(),
            objects: 0,
            steps: Vec::new(),
            cached: false,
            finding: false,
        }
    }

    /// How the page reads the real results and findings of a report; the values are made up
    /// for the renderer.
    #[test]
    fn real_results_and_findings_are_shown_per_tree() {
        let mut failed = cell("debian-1.98.1", Some("1.98.1"), "fail", "make failed");
        failed.first_error = Some("error[E0000]: x".into());
        failed.finding = true;
        let report = KernelJson {
            trees: vec![
                tree("6.12", Some("6.12.118"), &["lint_reasons"], None),
                tree("5.10", Some("5.10.262"), &[], Some("no Rust support")),
            ],
            cells: vec![
                cell("1.78.0", Some("1.78.0"), "pass", "built"),
                failed,
                cell("nightly", None, "not run", "not installed"),
            ],
            tools: None,
            tools_error: None,
            seconds: 1.0,
        };
        let text = crate::util::json::to_pretty(&crate::util::json::to_value(&report));
        let page = kernels_page(Some(&text), Path::new("r.json")).unwrap();
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
        assert_eq!(
            format!("{error}"),
            "r.json: not a `cargo xtask kernel` JSON report: missing field `trees` at line 1 \
             column 2"
        );
        let none = kernels_page(None, Path::new("r.json")).unwrap();
        assert!(none.contains("No `cargo xtask kernel` report is recorded yet"));
    }
}
