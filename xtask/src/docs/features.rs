// SPDX-License-Identifier: GPL-2.0
//! What the catalog says of each feature, as README's table, the `kernel::features` page and
//! `docs/features.md` show it, each linking the shim's line where the gated form stands.

use super::{MATRIX_STATUS, USAGE_PLACES};
use crate::catalog::{Feature, KernelUse, FEATURES};
use crate::features::places::{identifier, item_header};
use anyhow::{bail, Context};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The README's feature table: a row per catalog feature.
pub fn feature_table(root: &Path) -> anyhow::Result<String> {
    let mut table = String::from(
        "| Feature | Kernel use | Stable since | Tracking issue | Stable replacement | Shim | Example |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for feature in FEATURES {
        let (file, line) = shim_location(root, feature.shim_item)?;
        let _ = writeln!(
            table,
            "| `{}` | {} | {} | {} | {} | [`{}`]({file}#L{line}) | [`{}`](examples/{}.rs) |",
            feature.name,
            kernel_use(feature),
            stable_since(feature),
            tracking_issue(feature),
            feature.replacement.replace('|', "\\|"),
            feature.shim_item,
            feature.example,
            feature.example,
        );
    }
    Ok(table)
}

/// Where the catalog's `shim_item` is defined: its file, relative to `root`, and the first line
/// of its attributes, so that a link lands on the gated form with its replacement below it.
///
/// `a::b::Item` is looked for in module `a::b` and then its submodules, a module `a::b` is its
/// file's first line, and an exported macro `name!` is looked for in every file of the shim.
pub(crate) fn shim_location(root: &Path, shim_item: &str) -> anyhow::Result<(String, usize)> {
    let src = root.join("kernel-shim/src");
    let module_file = |segments: &[&str]| -> Option<PathBuf> {
        if segments.is_empty() {
            return Some(src.join("lib.rs"));
        }
        let stem = src.join(segments.join("/"));
        [stem.with_extension("rs"), stem.join("mod.rs")]
            .into_iter()
            .find(|file| file.is_file())
    };
    let relative = |file: &Path| {
        file.strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string()
    };
    let macro_name = shim_item.strip_suffix('!');
    let (files, name) = match macro_name {
        Some(name) => (shim_sources(root, &src)?, name),
        None => {
            let segments: Vec<&str> = shim_item.split("::").collect();
            if let Some(file) = module_file(&segments) {
                return Ok((relative(&file), 1));
            }
            let (name, modules) = segments.split_last().context("an empty shim item")?;
            // The module's own file first, then its submodules', for a re-exported item.
            let mut files: Vec<PathBuf> = module_file(modules).into_iter().collect();
            let directory = src.join(modules.join("/"));
            if !modules.is_empty() && directory.is_dir() {
                files.extend(shim_sources(root, &directory)?);
            }
            (files, *name)
        }
    };
    for file in &files {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let lines: Vec<&str> = text.lines().collect();
        // A macro is its `macro_rules!`, not the module of the same name (`module!`).
        let found = lines.iter().position(|line| match macro_name {
            Some(_) => {
                line.trim_start()
                    .strip_prefix("macro_rules! ")
                    .map(identifier)
                    == Some(name)
            }
            None => defines(line, name),
        });
        if let Some(index) = found {
            // Back over the item's attributes (a `cfg`, a `derive`), up to its doc comment.
            let stop = |line: &&str| {
                let line = line.trim_start();
                line.is_empty() || line.starts_with("//") || line == "}"
            };
            let first = lines[..index].iter().rposition(stop);
            return Ok((relative(file), first.map_or(1, |above| above + 2)));
        }
    }
    bail!("the catalog's shim item `{shim_item}` is defined nowhere in kernel-shim/src")
}

/// Every `.rs` file under `dir` but tests, sorted, so that the first definition found is always
/// the same.
pub(super) fn shim_sources(root: &Path, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = crate::run::plan::shim_inputs(root)?;
    files.retain(|path| {
        path.starts_with(dir)
            && path.extension().is_some_and(|extension| extension == "rs")
            && path.file_stem().is_some_and(|stem| stem != "tests")
    });
    Ok(files)
}

fn defines(line: &str, name: &str) -> bool {
    item_header(line).is_some_and(|(keyword, rest)| keyword != "impl" && identifier(rest) == name)
}

fn stable_since(feature: &Feature) -> String {
    match (feature.stable_since, feature.known_since) {
        (Some(release), _) => release.to_string(),
        (None, Some(first)) => format!("not stable (exists from {first})"),
        (None, None) => "not stable".to_string(),
    }
}

fn tracking_issue(feature: &Feature) -> String {
    match feature.tracking_issue {
        Some(number) => format!("[#{number}](https://github.com/rust-lang/rust/issues/{number})"),
        None => "none".to_string(),
    }
}

fn kernel_use(feature: &Feature) -> &'static str {
    match feature.kernel_use {
        KernelUse::KernelCrate => "`rust/kernel`",
        KernelUse::AllowedOutsideRust => "allowed outside `rust/`",
        KernelUse::Both => "both",
        KernelUse::Bindings => "`rust/bindings`, `rust/uapi`",
    }
}

/// A section per feature, linked to the shim's lines in the checkout at `root`, or without one
/// by rustdoc intra-doc links (for the `kernel::features` page).
fn feature_sections(root: Option<&Path>) -> anyhow::Result<String> {
    let mut page = String::new();
    for feature in FEATURES {
        let (item, example) = match root {
            None => (
                format!("[`{0}`](crate::{0})", feature.shim_item),
                format!("`examples/{}.rs`", feature.example),
            ),
            Some(root) => {
                let (file, line) = shim_location(root, feature.shim_item)?;
                (
                    format!("[`kernel::{}`](../{file}#L{line})", feature.shim_item),
                    format!("[`examples/{0}.rs`](../examples/{0}.rs)", feature.example),
                )
            }
        };
        let has = crate::catalog::HAS_CFGS.iter().find(|name| {
            crate::catalog::has_cfg_feature(name).map(|f| f.name) == Some(feature.name)
        });
        let kernel_from = feature
            .known_since
            .map_or(String::new(), |since| format!(" from {since} on"));
        let gate = match (has, feature.cfg) {
            (Some(has), Some(cfg)) if feature.stable_since.is_some() => format!(
                "`{has}`: the gated form in kernel mode{kernel_from}, the stabilized syntax in \
                 stable mode from {} on (`{}`), the replacement elsewhere",
                cfg.from, cfg.name
            ),
            (Some(has), _) => format!(
                "`{has}`: the gated form in kernel mode{kernel_from}; stable mode always uses \
                 the replacement"
            ),
            (None, Some(cfg)) => format!(
                "`{}`, where `{}` is derived from the compiler: set from {} on",
                feature.gate, cfg.name, cfg.from
            ),
            (None, None) => format!(
                "`{}`; stable mode always uses the replacement",
                feature.gate
            ),
        };
        let _ = writeln!(
            page,
            "## `{name}`\n\n\
             {summary}.\n\n\
             - Stable since: {since}; tracking issue: {tracking}.\n\
             - Kernel use: {kernel_use}.\n\
             - In the shim: {item}.\n\
             - Selected by: {gate}.\n\
             - Stable replacement: {replacement}.\n\
             - Example: {example}.\n",
            name = feature.name,
            summary = feature.summary,
            since = stable_since(feature),
            tracking = tracking_issue(feature),
            kernel_use = kernel_use(feature),
            replacement = feature.replacement,
        );
    }
    Ok(page)
}

/// The `kernel::features` page that `cargo doc` renders.
pub fn shim_features_page() -> anyhow::Result<String> {
    Ok(format!(
        "Every unstable feature the kernel used, and where this crate shows it.\n\n\
         Generated from [`crate::catalog`] by `cargo xtask docs`; do not edit.\n\n{}\n",
        feature_sections(None)?.trim_end()
    ))
}
/// The `docs/features.md` page: the catalog's sections, then the [`MATRIX_STATUS`] region's
/// `statuses` and the [`USAGE_PLACES`] region's `places`.
pub fn features_page(root: &Path, statuses: &str, places: &str) -> anyhow::Result<String> {
    Ok(format!(
        "# The features\n\n\
         <!-- Generated by `cargo xtask docs` from kernel-shim/src/catalog.rs, and the last \
         section from a matrix run's report; do not edit. -->\n\n\
         Every unstable feature that the kernel's Rust code used in 2025, with its stable \
         replacement and the abstraction of `kernel-shim` that shows both. The last section, \
         [What the compilers say](#what-the-compilers-say), is what real compilers answered in \
         a `cargo xtask matrix` run.\n\n\
         {sections}\
         ## What the compilers say\n\n\
         {begin}{statuses}{end}\n\n\
         ## Where the compilers say each feature is used\n\n\
         {places_begin}{places}{places_end}\n",
        sections = feature_sections(Some(root))?,
        begin = MATRIX_STATUS.begin,
        end = MATRIX_STATUS.end,
        places_begin = USAGE_PLACES.begin,
        places_end = USAGE_PLACES.end,
    ))
}
