// SPDX-License-Identifier: GPL-2.0
//! The pinned trees (`toolchains.toml`'s `[[tree]]`s) where `cargo xtask kernel` unpacked them,
//! and the `RUSTC_HAS_*` thresholds their own `init/Kconfig` define: the table the audit decides
//! `CONFIG_RUSTC_HAS_*` with, and the source of the built-in fallback
//! ([`crate::features::kconfig::PINNED_TREES`]) for a checkout without the trees.

use crate::features::kconfig::{
    never_set, release_of_rustc_version, thresholds, trees_source, KconfigSymbol,
};
use crate::toolchains::debian::DebianSource;
use crate::toolchains::extracted::Marker;
use crate::toolchains::pins::{Pins, TreeSource};
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};

/// Where a Debian tree is unpacked under `kernel_root` (`target/kernel`).
pub(crate) fn debian_prefix(kernel_root: &Path, source: &DebianSource) -> PathBuf {
    let version = source.version.as_deref().unwrap_or("newest");
    let version = version.replace(':', "%3a");
    kernel_root
        .join("trees")
        .join(format!("{}-{version}", source.package))
}

/// The pinned trees that are there to read, in the pin file's order: `(id, tree root)`. A
/// Debian tree counts once its unpacking is complete (its marker is in place).
pub(crate) fn unpacked_trees(pins: &Pins, kernel_root: &Path) -> Vec<(String, PathBuf)> {
    pins.trees
        .iter()
        .filter_map(|pin| {
            let root = match &pin.source {
                TreeSource::Path(path) => path.clone(),
                TreeSource::Debian(source) => {
                    let prefix = debian_prefix(kernel_root, source);
                    prefix.join(Marker::read(&prefix)?.get("tree")?)
                }
            };
            root.join("init/Kconfig")
                .is_file()
                .then(|| (pin.id.clone(), root))
        })
        .collect()
}

/// One threshold and the trees that define it: `(name, RUSTC_VERSION number, [(id, line)])`.
pub(crate) type Defined = (String, u32, Vec<(String, usize)>);

/// The thresholds of the pinned trees: read from the unpacked ones' `init/Kconfig`, taken from
/// [`crate::features::kconfig::PINNED_TREES`] for the others; ordered by threshold, then name. A name
/// that two trees give different thresholds is an error that names both.
pub(crate) fn pinned_thresholds(
    pins: &Pins,
    unpacked: &[(String, PathBuf)],
) -> anyhow::Result<Vec<Defined>> {
    let mut defined: Vec<Defined> = Vec::new();
    let mut add = |name: &str, number: u32, id: &str, line: usize| -> anyhow::Result<()> {
        match defined.iter_mut().find(|entry| entry.0 == name) {
            Some(entry) if entry.1 != number => bail!(
                "{name}: {} defines it as RUSTC_VERSION >= {}, {id} as >= {number}",
                entry.2[0].0,
                entry.1
            ),
            Some(entry) => entry.2.push((id.to_string(), line)),
            None => defined.push((name.to_string(), number, vec![(id.to_string(), line)])),
        }
        Ok(())
    };
    for pin in &pins.trees {
        match unpacked.iter().find(|(id, _)| *id == pin.id) {
            Some((id, root)) => {
                let path = root.join("init/Kconfig");
                let text = crate::util::files::read_text(&path, super::MAX_FILE)
                    .with_context(|| format!("reading {}", path.display()))?;
                for (name, line, number) in thresholds(&text) {
                    if name.starts_with("RUSTC_HAS_") {
                        add(name, number, id, line)?;
                    }
                }
            }
            None => {
                for (name, number, trees) in crate::features::kconfig::PINNED_TREES {
                    for (_, line) in trees.iter().filter(|(id, _)| *id == pin.id) {
                        add(name, *number, &pin.id, *line)?;
                    }
                }
            }
        }
    }
    defined.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    Ok(defined)
}

/// The table the audit decides `CONFIG_RUSTC_HAS_*` with: the pinned trees' thresholds (see
/// [`pinned_thresholds`]), then the cfgs no Kconfig defines.
pub(crate) fn pinned_kconfig(
    pins: &Pins,
    kernel_root: &Path,
) -> anyhow::Result<Vec<KconfigSymbol>> {
    let unpacked = unpacked_trees(pins, kernel_root);
    let defined = pinned_thresholds(pins, &unpacked)?;
    Ok(defined
        .iter()
        .map(|(name, number, trees)| {
            let trees: Vec<(&str, usize)> = trees
                .iter()
                .map(|(id, line)| (id.as_str(), *line))
                .collect();
            KconfigSymbol {
                cfg: format!("CONFIG_{name}"),
                from: Some(release_of_rustc_version(*number)),
                source: trees_source(&trees),
            }
        })
        .chain(never_set())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The entries of [`crate::features::kconfig::PINNED_TREES`] as Rust source, one line each (the table
    /// is `#[rustfmt::skip]`).
    pub(crate) fn render_fallback(defined: &[Defined]) -> String {
        defined
            .iter()
            .map(|(name, number, trees)| {
                let trees: Vec<String> = trees
                    .iter()
                    .map(|(id, line)| format!("(\"{id}\", {line})"))
                    .collect();
                format!("    (\"{name}\", {number}, &[{}]),\n", trees.join(", "))
            })
            .collect()
    }

    /// The fallback table as it stands between its two markers in `features/kconfig.rs`.
    fn fallback_source() -> String {
        let path = crate::project_root().join("xtask/src/features/kconfig.rs");
        let text = std::fs::read_to_string(path).unwrap();
        let start = "    // generated table: start\n";
        let from = text.find(start).unwrap() + start.len();
        let to = text.find("    // generated table: end\n").unwrap();
        text[from..to].to_string()
    }

    /// Reads the real trees where they are unpacked: each one's thresholds must be the
    /// fallback's entries that name it, line for line; with every pinned tree unpacked, the
    /// fallback must be exactly what they render to.
    #[test]
    fn the_fallback_is_what_the_pinned_trees_define() {
        let pins = Pins::load(&Pins::default_path()).unwrap();
        let kernel_root = crate::project_root().join("target/kernel");
        let unpacked = unpacked_trees(&pins, &kernel_root);
        if unpacked.is_empty() {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true and no pinned tree under target/kernel/trees: run `cargo xtask kernel`"
            );
            eprintln!("note: no pinned tree is unpacked under target/kernel/trees; skipped");
            return;
        }
        let defined = pinned_thresholds(&pins, &unpacked).unwrap();
        let rendered = render_fallback(&defined);
        assert_eq!(
            fallback_source(),
            rendered,
            "the trees {:?} say otherwise than kconfig::PINNED_TREES; its entries, generated \
             from them:\n{rendered}",
            unpacked.iter().map(|(id, _)| id).collect::<Vec<_>>()
        );
        // Each unpacked tree's own thresholds, read directly, are the entries naming it.
        for (id, root) in &unpacked {
            let text = std::fs::read_to_string(root.join("init/Kconfig")).unwrap();
            let own: Vec<(&str, usize, u32)> = thresholds(&text)
                .into_iter()
                .filter(|(name, _, _)| name.starts_with("RUSTC_HAS_"))
                .collect();
            let mut listed: Vec<(&str, usize, u32)> = crate::features::kconfig::PINNED_TREES
                .iter()
                .flat_map(|(name, number, trees)| {
                    trees
                        .iter()
                        .filter(|(tree, _)| tree == id)
                        .map(|(_, line)| (*name, *line, *number))
                })
                .collect();
            listed.sort_by_key(|entry| entry.1);
            assert_eq!(own, listed, "{id}");
        }
        // 7.3 defines the threshold the first hand-written table lacked.
        if unpacked.iter().any(|(id, _)| id == "7.3") {
            assert!(
                rendered.contains("(\"RUSTC_HAS_SUSPICIOUS_RUNTIME_SYMBOL_DEFINITIONS\", 109800")
            );
        }
    }

    #[test]
    fn the_audit_table_is_the_fallback_without_trees() {
        let pins = Pins::load(&Pins::default_path()).unwrap();
        let nowhere = crate::project_root().join("target/kshim/unit-tests/no-kernel");
        assert!(unpacked_trees(&pins, &nowhere).is_empty());
        assert_eq!(
            pinned_kconfig(&pins, &nowhere).unwrap(),
            crate::features::kconfig::tests::built_in()
        );
    }
}
