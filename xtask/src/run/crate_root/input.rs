// SPDX-License-Identifier: GPL-2.0
//! The feature names an audit starts from: a crate root's `#![feature]` lines, or a list.

use crate::features::attributes::read_features;
use crate::features::cfg::Predicate;
use anyhow::{bail, Context};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// One feature the audited crate enables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    /// The `cfg_attr` condition it stands under, or `None` when unconditional.
    pub condition: Option<Predicate>,
    /// Where its name stands (1-based line and column); `None` for a `--features` list.
    pub location: Option<(usize, usize)>,
    /// Where its attribute's `#!` stands; `None` for a `--features` list.
    pub attribute: Option<(usize, usize)>,
}

/// What kind of crate the names are probed in, as the audited crate is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrateKind {
    /// A library (or binary): `--crate-type lib`.
    Library,
    /// A procedural-macro crate: `--crate-type proc-macro`, which loads `proc_macro`.
    ProcMacro,
}

/// The distinct names in order, and for each its position and the indices of its entries.
pub type Distinct = (Vec<String>, HashMap<String, (usize, Vec<usize>)>);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    /// The crate root that was read, or `None` for a `--features` list.
    pub path: Option<PathBuf>,
    /// Every feature, in the order the file (or list) gives them.
    pub entries: Vec<Entry>,
    pub kind: CrateKind,
    /// Whether the crate loads `proc_macro` (`extern crate proc_macro`), whose library
    /// features a plain crate does not know; a `--features` list may name them, so it does.
    pub loads_proc_macro: bool,
    /// The distinct names, each with its position among them and the entries that enable it,
    /// worked out once: a crate root may repeat one name, or name thousands.
    pub distinct: OnceLock<Distinct>,
}

impl Input {
    /// The distinct names, in order of first appearance: what the probe asks about.
    pub fn names(&self) -> Vec<&str> {
        self.distinct().0.iter().map(String::as_str).collect()
    }

    /// Where `name` stands among [`Input::names`].
    pub fn position(&self, name: &str) -> Option<usize> {
        self.distinct().1.get(name).map(|(position, _)| *position)
    }

    /// The entries that enable `name`, in order.
    pub fn lines_of(&self, name: &str) -> Vec<&Entry> {
        self.distinct()
            .1
            .get(name)
            .map(|(_, lines)| lines.iter().map(|&index| &self.entries[index]).collect())
            .unwrap_or_default()
    }

    fn distinct(&self) -> &Distinct {
        self.distinct.get_or_init(|| {
            let mut names = Vec::new();
            let mut found: HashMap<String, (usize, Vec<usize>)> = HashMap::new();
            for (index, entry) in self.entries.iter().enumerate() {
                let next = names.len();
                let (_, lines) = found.entry(entry.name.clone()).or_insert_with(|| {
                    names.push(entry.name.clone());
                    (next, Vec::new())
                });
                lines.push(index);
            }
            (names, found)
        })
    }

    /// The `cfg_attr` conditions of the entries, in order.
    pub fn conditions(&self) -> impl Iterator<Item = &Predicate> {
        self.entries
            .iter()
            .filter_map(|entry| entry.condition.as_ref())
    }

    /// `path:line:column` for an entry, or the name alone for a list entry.
    pub fn place(&self, entry: &Entry) -> String {
        match (&self.path, entry.location) {
            (Some(path), Some((line, column))) => format!("{}:{line}:{column}", path.display()),
            _ => format!("--features {}", entry.name),
        }
    }

    /// How many attributes the entries come from (a `--features` list: one per name).
    pub fn attribute_count(&self) -> usize {
        let attributes: HashSet<Result<(usize, usize), usize>> = self
            .entries
            .iter()
            .enumerate()
            .map(|(index, entry)| entry.attribute.ok_or(index))
            .collect();
        attributes.len()
    }
}

/// Whether `name` can stand in `#![feature(...)]`: a plain identifier.
fn is_feature_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Reads a comma-separated list, as the kernel's `rust_allowed_features`.
pub fn read_feature_list(list: &str) -> anyhow::Result<Input> {
    let mut entries = Vec::new();
    for (position, name) in list.split(',').map(str::trim).enumerate() {
        if name.is_empty() {
            bail!(
                "--features {list:?}: entry {} is empty; give names separated by single commas, \
                 such as --features asm_const,asm_goto",
                position + 1
            );
        }
        if !is_feature_name(name) {
            bail!("--features: `{name}` is not a feature name (letters, digits and `_`)");
        }
        entries.push(Entry {
            name: name.to_string(),
            condition: None,
            location: None,
            attribute: None,
        });
    }
    Ok(Input {
        path: None,
        entries,
        kind: CrateKind::Library,
        loads_proc_macro: true,
        distinct: OnceLock::new(),
    })
}

/// The crate root for a path: the file itself, or a crate directory's `src/lib.rs` (then
/// `src/main.rs`).
fn crate_root(path: &Path) -> anyhow::Result<PathBuf> {
    let shown = path.display();
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            bail!("no such file: {shown}")
        }
        Err(error) => return Err(error).with_context(|| format!("cannot read {shown}")),
    };
    if metadata.is_dir() {
        let roots = ["src/lib.rs", "src/main.rs"].map(|root| path.join(root));
        let root = roots.into_iter().find(|root| root.is_file());
        return root.with_context(|| {
            format!(
                "{shown} is a directory without src/lib.rs or src/main.rs; give the crate \
                 root file"
            )
        });
    }
    Ok(path.to_path_buf())
}

/// Reads every `#![feature]` of a crate root, `cfg_attr` conditions included; a root that
/// enables none is valid (it has no entries).
pub fn read_crate_root(path: &Path) -> anyhow::Result<Input> {
    let root = crate_root(path)?;
    let shown = root.display();
    if root.extension().and_then(|extension| extension.to_str()) != Some("rs") {
        bail!("{shown} is not Rust source: a crate root is a `.rs` file");
    }
    let bytes = crate::util::files::read_bytes(&root, 64 << 20)
        .with_context(|| format!("cannot read {shown}"))?;
    let text = match String::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => text,
        _ => bail!("{shown} is not Rust source: it is not UTF-8 text"),
    };
    let features = read_features(&text).map_err(|error| {
        let at = format!("{shown}:{}:{}", error.line, error.column);
        anyhow::anyhow!("{at}: malformed attribute: {}", error.message)
    })?;
    let entries = features.into_iter().map(Entry::from).collect();
    Ok(Input {
        kind: crate_kind(&root, &text),
        loads_proc_macro: text.contains("extern crate proc_macro"),
        path: Some(root),
        entries,
        distinct: OnceLock::new(),
    })
}

impl From<crate::features::attributes::FeatureAttribute> for Entry {
    fn from(feature: crate::features::attributes::FeatureAttribute) -> Self {
        Entry {
            condition: feature.condition(),
            location: Some((feature.line, feature.column)),
            attribute: Some(feature.attribute),
            name: feature.name,
        }
    }
}

/// The `Cargo.toml` of the package a crate root lies in: up to two directories above it.
pub fn package_manifest(root: &Path) -> Option<PathBuf> {
    root.ancestors()
        .skip(1)
        .take(3)
        .map(|directory| directory.join("Cargo.toml"))
        .find(|manifest| manifest.is_file())
}

/// A procedural-macro crate defines `#[proc_macro...]` functions in its root, or says
/// `proc-macro = true` in its package's `Cargo.toml`.
fn crate_kind(root: &Path, text: &str) -> CrateKind {
    let manifest = package_manifest(root)
        .and_then(|manifest| std::fs::read_to_string(manifest).ok())
        .unwrap_or_default();
    let says_proc_macro = manifest.lines().any(|line| {
        let line: String = line.chars().filter(|c| !c.is_whitespace()).collect();
        line == "proc-macro=true" || line == "proc_macro=true"
    });
    if says_proc_macro || text.contains("#[proc_macro") {
        CrateKind::ProcMacro
    } else {
        CrateKind::Library
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let directory = crate::project_root()
            .join("target/kshim/unit-tests/audit-input")
            .join(name);
        let _ = std::fs::remove_dir_all(&directory);
        std::fs::create_dir_all(&directory).unwrap();
        directory
    }

    #[test]
    fn lists_are_names_separated_by_commas() {
        let input = read_feature_list("asm_const, asm_goto,raw_ref_op").unwrap();
        assert_eq!(input.names(), ["asm_const", "asm_goto", "raw_ref_op"]);
        assert_eq!(input.place(&input.entries[1]), "--features asm_goto");
        let empty = read_feature_list("a,,b").unwrap_err().to_string();
        assert!(empty.contains("entry 2 is empty"), "{empty}");
        let bad = read_feature_list("asm-goto").unwrap_err().to_string();
        assert!(bad.contains("`asm-goto` is not a feature name"), "{bad}");
        assert!(read_feature_list("").is_err());
    }

    #[test]
    fn bad_files_get_clear_errors() {
        let directory = scratch("bad-files");
        let missing = read_crate_root(&directory.join("nope.rs"))
            .unwrap_err()
            .to_string();
        assert!(missing.starts_with("no such file: "), "{missing}");

        let toml = directory.join("Cargo.toml");
        std::fs::write(&toml, "[package]\n").unwrap();
        let not_rust = read_crate_root(&toml).unwrap_err().to_string();
        assert!(not_rust.contains("is not Rust source"), "{not_rust}");

        let binary = directory.join("binary.rs");
        std::fs::write(&binary, [0xff, 0xfe, 0x00, 0x01]).unwrap();
        let not_text = read_crate_root(&binary).unwrap_err().to_string();
        assert!(not_text.contains("not UTF-8 text"), "{not_text}");

        let malformed = directory.join("malformed.rs");
        std::fs::write(
            &malformed,
            "#![no_std]\n#![cfg_attr(not(a, b), feature(x))]\n",
        )
        .unwrap();
        let error = read_crate_root(&malformed).unwrap_err().to_string();
        assert!(
            error.ends_with(
                "malformed.rs:2:16: malformed attribute: `not` takes exactly one predicate"
            ),
            "{error}"
        );

        // A root that enables no feature is valid (memchr's), not an error.
        let plain = directory.join("plain.rs");
        std::fs::write(&plain, "#![no_std]\npub fn f() {}\n").unwrap();
        assert!(read_crate_root(&plain).unwrap().entries.is_empty());

        let no_root = read_crate_root(&directory).unwrap_err().to_string();
        assert!(no_root.contains("without src/lib.rs"), "{no_root}");
    }

    #[test]
    fn a_crate_directory_means_its_root_and_conditions_are_kept() {
        let directory = scratch("crate");
        std::fs::create_dir_all(directory.join("src")).unwrap();
        std::fs::write(
            directory.join("src/lib.rs"),
            "#![feature(a)]\n#![cfg_attr(CONFIG_X, feature(b, a))]\n",
        )
        .unwrap();
        let input = read_crate_root(&directory).unwrap();
        assert_eq!(input.names(), ["a", "b"]);
        assert_eq!(input.entries.len(), 3);
        assert_eq!(
            input.entries[1].condition,
            Some(Predicate::Name("CONFIG_X".into()))
        );
        assert!(input
            .place(&input.entries[2])
            .ends_with("crate/src/lib.rs:2:34"));
        assert_eq!(input.attribute_count(), 2);
        assert_eq!(input.kind, CrateKind::Library);
        std::fs::write(directory.join("Cargo.toml"), "[lib]\nproc-macro = true\n").unwrap();
        assert_eq!(
            read_crate_root(&directory).unwrap().kind,
            CrateKind::ProcMacro
        );
    }
}
