// SPDX-License-Identifier: GPL-2.0
//! `docs/kernels.md`: per real kernel tree, the features its `rust/kernel/lib.rs` enables, its
//! allowed list, which compilers built it for real and how each build booted ([`boot`]), and
//! how the lists changed from one tree to the next, linked to the shim's example of each feature
//! the catalog has. Generated from the committed JSON of a `cargo xtask kernel` run
//! ([`KERNEL_REPORT`]), read as data.

pub mod boot;

use self::boot::CellBoot;
use crate::catalog::{self, Release};
use crate::kernel::build::why;
use crate::kernel::report::{filed, json::KernelJson};
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
    /// (real result, rustc release, reason, toolchain id) per cell, in release order.
    pub real: Vec<(String, String, String, String)>,
    /// The cells whose prediction the real build contradicted: (release, predicted, real,
    /// toolchain id).
    pub findings: Vec<(String, String, String, String)>,
    /// The boot of each cell that built, in release order.
    pub boots: Vec<CellBoot>,
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
            let toolchain = cell.toolchain.clone();
            if let Some(predicted) = cell.predicted.clone().filter(|_| cell.is_finding()) {
                let real = cell.real.clone();
                data.findings
                    .push((release.clone(), predicted, real, toolchain.clone()));
            }
            data.boots.extend(CellBoot::of(cell, &release));
            let reason = why(&cell.real, &cell.reason, cell.first_error.as_deref());
            data.real
                .push((cell.real.clone(), release.clone(), reason, toolchain));
            for krate in &cell.crates {
                if krate.root == KERNEL_CRATE {
                    data.probed.push(release.clone());
                    for feature in &krate.features {
                        filed(&mut data.features, feature.clone()).push(release.clone());
                    }
                } else if !krate.features.is_empty() {
                    let features = filed(&mut data.others, krate.root.clone());
                    for feature in &krate.features {
                        crate::push_once(features, feature.clone());
                    }
                }
            }
        }
        data.real
            .sort_by_key(|(_, release, _, toolchain)| (release_key(release), toolchain.clone()));
        data.boots
            .sort_by_key(|boot| (release_key(&boot.release), boot.toolchain.clone()));
        data
    });
    trees.collect()
}

/// The order of a compiler's release text (`1.85.0`, `1.97.0-nightly`), as the matrix orders
/// its columns: by release, those without one last.
pub(crate) fn release_key(text: &str) -> (bool, Option<Release>) {
    let release = crate::toolchains::version::parse_release(text)
        .ok()
        .map(|(release, _)| release);
    (release.is_none(), release)
}

/// Where one tree asks for a feature: its `rust/kernel/lib.rs` enables it (on the compilers
/// probed from `from` on, `None` for every one), and its allowed list lets drivers enable it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Asked {
    pub kernel: bool,
    pub from: Option<String>,
    pub drivers: bool,
}

impl Asked {
    pub fn any(&self) -> bool {
        self.kernel || self.drivers
    }

    /// `rust/kernel`, `drivers` or both, with the first compiler probed that enables it where
    /// not every one does.
    pub fn words(&self) -> String {
        let places = [(self.kernel, "rust/kernel"), (self.drivers, "drivers")];
        let places = places.map(|(asked, place)| asked.then_some(place));
        let places = places.into_iter().flatten().collect::<Vec<_>>().join(", ");
        match &self.from {
            Some(from) if self.any() => format!("{places} (from {from})"),
            _ => places,
        }
    }
}

/// One feature the trees ask for, with where each readable tree asks for it.
pub struct AcrossTrees {
    pub name: String,
    pub asked: Vec<Asked>,
}

impl AcrossTrees {
    /// Which tree first asked for it and which dropped it, or that the last still does.
    pub fn history(&self, trees: &[&TreeData]) -> String {
        let first = self.asked.iter().position(Asked::any);
        let Some((first, last)) = first.zip(self.asked.iter().rposition(Asked::any)) else {
            return String::new();
        };
        let (first, last_id) = (&trees[first].id, &trees[last].id);
        match (last + 1 == trees.len(), first == last_id) {
            (true, true) => format!("new in {first}"),
            (true, false) => format!("from {first}, still in {last_id}"),
            (false, _) => format!("from {first}, gone after {last_id}"),
        }
    }
}

/// The trees that were read, in the report's order, and every feature their `rust/kernel` or
/// allowed list asks for, in the order the trees first ask for them.
pub fn across_trees(trees: &[TreeData]) -> (Vec<&TreeData>, Vec<AcrossTrees>) {
    let read: Vec<&TreeData> = trees.iter().filter(|tree| tree.error.is_none()).collect();
    let mut names: Vec<String> = Vec::new();
    for tree in &read {
        let kernel = tree.features.iter().map(|(name, _)| name);
        for name in kernel.chain(&tree.allowed) {
            crate::push_once(&mut names, name.clone());
        }
    }
    let features = names
        .into_iter()
        .map(|name| {
            let asked = read
                .iter()
                .map(|tree| {
                    let releases = tree.features.iter().find(|(feature, _)| *feature == name);
                    let releases = releases.map(|(_, releases)| releases);
                    let not_all = releases.filter(|releases| releases.len() < tree.probed.len());
                    Asked {
                        kernel: releases.is_some(),
                        from: not_all.and_then(|not_all| {
                            not_all.iter().min_by_key(|r| release_key(r)).cloned()
                        }),
                        drivers: tree.allowed.contains(&name),
                    }
                })
                .collect();
            AcrossTrees { name, asked }
        })
        .collect();
    (read, features)
}

/// Where a tree's `rust/kernel/lib.rs` asks for another list on a newer compiler: between the
/// last release probed `before` and `release`, the features it `began` and `stopped` asking for.
pub struct CompilerChange {
    pub tree: String,
    pub before: String,
    pub release: String,
    pub began: Vec<String>,
    pub stopped: Vec<String>,
}

/// Every tree's [`CompilerChange`]s, in release order.
pub fn changes_by_compiler(trees: &[TreeData]) -> Vec<CompilerChange> {
    let mut changes = Vec::new();
    for tree in trees.iter().filter(|tree| tree.error.is_none()) {
        let mut probed = tree.probed.clone();
        probed.sort_by_key(|release| release_key(release));
        probed.dedup();
        let list = |release: &String| -> Vec<String> {
            let enabled = tree
                .features
                .iter()
                .filter(|(_, releases)| releases.contains(release));
            enabled.map(|(name, _)| name.clone()).collect()
        };
        for pair in probed.windows(2) {
            let (stopped, began) = difference(&list(&pair[0]), &list(&pair[1]));
            if !began.is_empty() || !stopped.is_empty() {
                changes.push(CompilerChange {
                    tree: tree.id.clone(),
                    before: pair[0].clone(),
                    release: pair[1].clone(),
                    began,
                    stopped,
                });
            }
        }
    }
    changes.sort_by_key(|change| release_key(&change.release));
    changes
}

/// Each feature against the trees, as a Markdown table.
fn across_trees_section(page: &mut String, trees: &[TreeData]) {
    let (read, features) = across_trees(trees);
    if read.len() < 2 {
        return;
    }
    let _ = write!(
        page,
        "## Each feature, tree by tree\n\n\
         Where each tree asks for a feature: `rust/kernel` when its `{KERNEL_CRATE}` enables it \
         (on the compilers probed from the one named, where not on all), drivers when its \
         `rust_allowed_features` lets them.\n\n| Feature |"
    );
    for tree in &read {
        let _ = write!(page, " {} |", escape_markdown(&tree.id));
    }
    let _ = writeln!(
        page,
        " Trees | In the shim |\n|---|{}---|---|",
        "---|".repeat(read.len())
    );
    for feature in &features {
        let _ = write!(page, "| {} |", markdown_code(&feature.name));
        for asked in &feature.asked {
            let _ = write!(page, " {} |", escape_markdown(&asked.words()));
        }
        let _ = writeln!(
            page,
            " {} | {} |",
            escape_markdown(&feature.history(&read)),
            in_the_shim(&feature.name)
        );
    }
    page.push('\n');
    let changes = changes_by_compiler(trees);
    if !changes.is_empty() {
        page.push_str(
            "On a newer compiler, a tree's `rust/kernel` asks for another list where its \
             `cfg_attr`s follow the compiler (`init/Kconfig`'s `RUSTC_HAS_*`); between the \
             compilers probed:\n\n",
        );
        for change in &changes {
            let _ = writeln!(
                page,
                "- {}: by {} (not on {}), begins {}, stops {}.",
                escape_markdown(&change.tree),
                escape_markdown(&change.release),
                escape_markdown(&change.before),
                code_list(&change.began),
                code_list(&change.stopped)
            );
        }
        page.push('\n');
    }
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
    let excluded = |excluded: &dyn Fn(&catalog::excluded::Exclusion) -> bool, name: &str| {
        let code = markdown_code(name);
        match catalog::EXCLUDED
            .iter()
            .find(|exclusion| excluded(exclusion))
        {
            Some(exclusion) => format!("{code} (not taught: {})", exclusion.reason),
            None => code,
        }
    };
    let names: Vec<String> = features
        .iter()
        .map(|feature| excluded(&|e| e.feature.is_some() && e.covers(feature, root), feature))
        .collect();
    let whole = excluded(&|e| e.feature.is_none() && e.crate_root == root, root);
    format!("- {whole}: {}", names.join(", "))
}

/// The names `names` as code, or `none`.
fn code_list(names: &[String]) -> String {
    let codes: Vec<String> = names.iter().map(|name| markdown_code(name)).collect();
    if codes.is_empty() {
        "none".into()
    } else {
        codes.join(", ")
    }
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
        "- Minimum rustc (x86_64, `scripts/min-tool-version.sh`): {}.\n\
         - Allowed outside `rust/` (`rust_allowed_features`, on for every driver through \
         `-Zcrate-attr`): {}.",
        escape_markdown(data.minimum_rustc.as_deref().unwrap_or("?")),
        code_list(&data.allowed)
    );
    let mut built = Vec::new();
    for (word, label, separator) in [
        ("pass", "built for real by", ", "),
        ("refused", "refused by the tree's own check", ", "),
        ("fail", "failed to build with", ", "),
        ("not run", "not built:", "; "),
    ] {
        let releases: Vec<String> = data
            .real
            .iter()
            .filter(|(real, ..)| real == word)
            .map(|(_, release, reason, _)| match word {
                "not run" => format!("{} ({})", escape_markdown(release), escape_markdown(reason)),
                _ => escape_markdown(release),
            })
            .collect();
        if !releases.is_empty() {
            built.push(format!("{label} {}", releases.join(separator)));
        }
    }
    for (release, predicted, real, _) in &data.findings {
        built.push(format!(
            "**finding**: with {} the probes predicted {}, the real build said {}",
            escape_markdown(release),
            escape_markdown(predicted),
            escape_markdown(real)
        ));
    }
    if built.is_empty() {
        built.push("none in that run".into());
    }
    let _ = writeln!(page, "- Compilers: {}.", built.join("; "));
    if let Some(line) = boot::boot_line(&data.boots) {
        let _ = writeln!(page, "{line}");
    }
    page.push('\n');
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
            let (without, _) = difference(&data.probed, releases);
            let with = format!("{} (not {})", releases.join(", "), without.join(", "));
            escape_markdown(&with)
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
pub(crate) fn difference(before: &[String], after: &[String]) -> (Vec<String>, Vec<String>) {
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
         its own Kbuild build of `rust/`, the samples and the drivers, and the boot under QEMU \
         of each build that passed (`cargo xtask kernel --boot`: KUnit's cases passed/failed/\
         skipped, the samples' init lines seen). A feature the shim shows \
         links to its example; one the catalog leaves out on purpose gives the reason it is \
         not taught, and any other would say \"not in the shim\" (a test fails on it).\n\n",
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
    across_trees_section(&mut page, &trees);
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
    let page = page.trim_end().to_string() + "\n";
    Ok(super::machine_paths::without_machine_paths(&page))
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
pub(crate) mod tests;
