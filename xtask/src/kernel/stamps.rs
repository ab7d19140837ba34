// SPDX-License-Identifier: GPL-2.0
//! A kernel tree's key by the stamps of what its Rust build reads ([`TreeKey`]), and what is
//! cached by it under `target/kernel/results/`: the tree's facts ([`Facts`], read from its
//! rules) and each compiler's prediction. Every cache that keeps something made from a tree
//! (the real results, the facts, the predictions, a boot) puts the tree's [`TreeKey`] in its
//! own key: a file of the tree written, replaced, added or removed changes it, as
//! [`crate::util::hash::stat_stamp`] says why.
//!
//! What is stamped: [`READ_WHOLE`], the files at the top of the tree, and the directory of
//! every Rust crate the rules found outside them (a driver: its files and its modules'
//! directories) with the `Makefile`, `Kbuild` and `Kconfig` of each directory above it. Not
//! stamped: C code elsewhere that `make prepare` does not read, `Documentation/`, other
//! architectures, a Rust crate added where the rules did not find one before (a whole 7.3 tree
//! is about 90,000 files; these are 11,649). A Debian tree's every byte is checked
//! against the digests recorded when it was unpacked by `cargo xtask toolchains verify`.

use super::rules::{self, Build};
use super::trees::Tree;
use crate::util::files::{read_text, write_atomically};
use crate::util::hash::{stat_stamp, tree_stamp, Key, StableHasher};
use crate::util::json::{self, Deserialize, Serialize};
use anyhow::Context;
use std::path::{Path, PathBuf};

/// The directories a Rust build of a tree reads whole, relative to its root: Kbuild's scripts,
/// the Rust support and samples, the headers bindgen and `make prepare`'s C read, the host
/// architecture, `init/` and `kernel/` (Kconfig, `bounds.c`), and the tools `prepare` builds
/// (objtool).
pub(crate) const READ_WHOLE: &[&str] = &[
    "scripts",
    "rust",
    "samples/rust",
    "include",
    "init",
    "kernel",
    "arch/x86",
    "tools/objtool",
    "tools/lib",
    "tools/include",
    "tools/arch/x86",
    "tools/build",
    "tools/scripts",
];

/// A tree as its build reads it: its identity and path, and the stamps of every file this
/// module stamps; equal only if no stamped file changed in between.
pub(crate) type TreeKey = Key;

/// What a run needs of a tree's rules before it probes anything, kept by [`facts`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Facts {
    /// As the top Makefile says: `6.12.118`.
    pub version: String,
    /// `scripts/min-tool-version.sh`'s rustc and bindgen for the host architecture.
    pub minimum_rustc: String,
    pub minimum_bindgen: String,
    /// `rust_allowed_features`, in its order.
    pub allowed_features: Vec<String>,
    /// The directories of the tree's Rust crates outside [`READ_WHOLE`], stamped too.
    pub crate_dirs: Vec<String>,
}

impl Facts {
    fn of(rules: &rules::Tree) -> Facts {
        let mut crate_dirs = Vec::new();
        for krate in rules.crates.iter().filter(|k| k.build == Build::Kbuild) {
            let dir = Path::new(&krate.root).parent().unwrap_or(Path::new(""));
            if !READ_WHOLE.iter().any(|whole| dir.starts_with(whole)) {
                crate::push_once(&mut crate_dirs, dir.to_string_lossy().into_owned());
            }
        }
        Facts {
            version: rules.version.clone(),
            minimum_rustc: rules.minimum.rustc.to_string(),
            minimum_bindgen: rules.minimum.bindgen.to_string(),
            allowed_features: rules.allowed_features.clone(),
            crate_dirs,
        }
    }
}

/// The stamp of what every tree's build reads: [`READ_WHOLE`] and the top's files, with the
/// tree's identity and path.
fn base_stamp(tree: &Tree) -> anyhow::Result<Key> {
    let mut hasher = StableHasher::new();
    hasher
        .field("kernel tree stamps v1")
        .field(&tree.identity)
        .field(tree.root.as_os_str().as_encoded_bytes());
    let mut top: Vec<PathBuf> = std::fs::read_dir(&tree.root)
        .with_context(|| format!("reading {}", tree.root.display()))?
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_ok_and(|kind| !kind.is_dir()))
        .map(|entry| entry.path())
        .collect();
    top.sort();
    for file in top {
        stamp_file(&mut hasher, &tree.root, &file);
    }
    for whole in READ_WHOLE {
        stamp_dir(&mut hasher, &tree.root.join(whole))?;
    }
    Ok(hasher.finish())
}

/// Adds `file`'s name (relative to `root`) and stamp (none when it is not there).
fn stamp_file(hasher: &mut StableHasher, root: &Path, file: &Path) {
    let relative = file.strip_prefix(root).unwrap_or(file);
    hasher
        .field(relative.as_os_str().as_encoded_bytes())
        .number(stat_stamp(file).map_or(0, |stamp| stamp.0));
}

fn stamp_dir(hasher: &mut StableHasher, dir: &Path) -> anyhow::Result<()> {
    hasher.field(dir.as_os_str().as_encoded_bytes());
    if dir.is_dir() {
        hasher.number(tree_stamp(dir)?.0);
    }
    Ok(())
}

/// The whole key: `base` and the stamps of the crate directories of `facts`
/// ([`stamp_crate_dir`]), and the build files of every directory above each.
fn full_key(tree: &Tree, base: Key, facts: &Facts) -> anyhow::Result<TreeKey> {
    let mut hasher = StableHasher::new();
    hasher.number(base.0);
    for dir in &facts.crate_dirs {
        stamp_crate_dir(&mut hasher, &tree.root.join(dir))?;
        let above = Path::new(dir).ancestors().skip(1);
        for parent in above.filter(|parent| !parent.as_os_str().is_empty()) {
            for name in ["Makefile", "Kbuild", "Kconfig"] {
                stamp_file(&mut hasher, &tree.root, &tree.root.join(parent).join(name));
            }
        }
    }
    Ok(hasher.finish())
}

/// Stamps the directory of a crate outside [`READ_WHOLE`]: its files, and whole each
/// subdirectory where Rust looks for a module's files (`S/` beside `S.rs`, or `S/mod.rs`), not
/// the rest: `drivers/gpu/drm/` holds one Rust crate root among 8,000 files of C.
fn stamp_crate_dir(hasher: &mut StableHasher, dir: &Path) -> anyhow::Result<()> {
    hasher.field(dir.as_os_str().as_encoded_bytes());
    for path in crate::util::files::sorted_entries(dir) {
        if !path.symlink_metadata().is_ok_and(|meta| meta.is_dir()) {
            stamp_file(hasher, dir, &path);
        } else if path.with_extension("rs").is_file() || path.join("mod.rs").is_file() {
            stamp_dir(hasher, &path)?;
        }
    }
    Ok(())
}

/// The checker's part of a key: the running xtask, by a stamp every rebuild changes, so that
/// what an older xtask read or predicted is never served to a newer one.
fn reader() -> anyhow::Result<Key> {
    crate::util::hash::running_xtask_stamp()
        .context("stamping the running xtask, which reads the tree's rules")
}

/// A tree's facts, its key and, when they had to be read, its rules: from `cache` when `read`
/// and the stamps say nothing changed, else read from the tree and, when `keep`, kept. An error
/// is the rules' own (not a kernel tree, no Rust).
pub(crate) fn facts(
    cache: &Path,
    tree: &Tree,
    read: bool,
    keep: bool,
) -> anyhow::Result<(Facts, TreeKey, Option<rules::Tree>)> {
    let base = base_stamp(tree)?;
    let entry_key = StableHasher::new()
        .field("kernel tree facts v1")
        .number(base.0)
        .number(reader()?.0)
        .finish();
    let entry = cache.join(format!("tree-{entry_key}.json"));
    let kept = read.then(|| read_entry::<Kept>(&entry, 1 << 20)).flatten();
    if let Some(kept) = kept {
        let key = full_key(tree, base, &kept.facts)?;
        if kept.key == key.to_string() {
            return Ok((kept.facts, key, None));
        }
    }
    let rules = rules::read(&tree.root)?;
    let facts = Facts::of(&rules);
    let key = full_key(tree, base, &facts)?;
    // A cache that cannot be written costs the next run a read of the rules, nothing else.
    if keep {
        let kept = Kept {
            facts: facts.clone(),
            key: key.to_string(),
        };
        let _ = write_entry(&entry, &kept);
    }
    Ok((facts, key, Some(rules)))
}

/// A [`Facts`] entry with the key of the tree it was read from.
#[derive(Serialize, Deserialize)]
struct Kept {
    facts: Facts,
    key: String,
}

/// A cached entry under `target/kernel/results/` as `T`: a miss when it is not there, larger
/// than `limit` bytes or not a well-formed `T`.
pub(crate) fn read_entry<T: serde::de::DeserializeOwned>(entry: &Path, limit: u64) -> Option<T> {
    json::read(&read_text(entry, limit).ok()?).ok()
}

/// Writes a cache entry atomically, as JSON on one line.
pub(crate) fn write_entry(entry: &Path, value: &impl Serialize) -> anyhow::Result<()> {
    write_atomically(entry, json::to_value(value).to_string().as_bytes())
}

/// The entry of one compiler's prediction for a tree, by this xtask.
pub(crate) fn prediction_entry(
    cache: &Path,
    tree: TreeKey,
    compiler: Key,
) -> anyhow::Result<PathBuf> {
    let key = StableHasher::new()
        .field("kernel prediction v1")
        .number(tree.0)
        .number(compiler.0)
        .number(reader()?.0)
        .finish();
    Ok(cache.join(format!("prediction-{key}.json")))
}

#[cfg(test)]
mod tests;
