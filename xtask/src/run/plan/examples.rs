// SPDX-License-Identifier: GPL-2.0
//! The shim's and the examples' sources: the `[[example]]` tables of `examples/Cargo.toml`,
//! every file a build reads, and the check that the catalog names only examples that exist.

use crate::catalog::Feature;
use anyhow::Context;
use std::fs;
use std::path::{Path, PathBuf};

/// Every file of the shim's source tree, sorted: all of them can change the build.
pub fn shim_inputs(root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let (mut files, mut directories) = (Vec::new(), vec![root.join("kernel-shim/src")]);
    while let Some(directory) = directories.pop() {
        let entries = fs::read_dir(&directory);
        for entry in entries.with_context(|| format!("reading {}", directory.display()))? {
            let path = entry?.path();
            match path.is_dir() {
                true => directories.push(path),
                false => files.push(path),
            }
        }
    }
    files.sort();
    Ok(files)
}

/// One `[[example]]` of `examples/Cargo.toml`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Example {
    /// Its name, also its crate name.
    pub name: String,
    /// Its source file, by absolute path.
    pub path: PathBuf,
}

/// Reads the `[[example]]` tables of `examples/Cargo.toml`.
pub fn examples(root: &Path) -> anyhow::Result<Vec<Example>> {
    let manifest = root.join("examples/Cargo.toml");
    let text =
        fs::read_to_string(&manifest).with_context(|| format!("reading {}", manifest.display()))?;
    parse_examples(&text, &root.join("examples"))
        .with_context(|| format!("reading the [[example]] tables of {}", manifest.display()))
}

/// Reads `[[example]]` tables from a manifest's text; paths are relative to `directory`.
pub fn parse_examples(text: &str, directory: &Path) -> anyhow::Result<Vec<Example>> {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let headers = (0..lines.len()).filter(|&index| lines[index] == "[[example]]");
    headers
        .map(|header| {
            // A table runs to the next table's header.
            let body = lines[header + 1..]
                .iter()
                .take_while(|line| !line.starts_with('['));
            let (mut name, mut path) = (None, None);
            for (index, line) in (header + 1..).zip(body) {
                let Some((key, value)) = line.split_once('=') else {
                    continue;
                };
                let value = value.trim();
                let unquoted = value
                    .strip_prefix('"')
                    .and_then(|value| value.strip_suffix('"'));
                match (key.trim(), unquoted) {
                    ("name", Some(value)) => name = Some(value.to_string()),
                    ("path", Some(value)) => path = Some(value.to_string()),
                    ("name" | "path", None) => {
                        anyhow::bail!("line {}: expected a plain string, got {value}", index + 1)
                    }
                    _ => {}
                }
            }
            let line = header + 1;
            let name =
                name.with_context(|| format!("the [[example]] on line {line} has no name"))?;
            let path = directory.join(path.unwrap_or_else(|| format!("{name}.rs")));
            Ok(Example { name, path })
        })
        .collect()
}

/// Checks that every example the catalog names is an `[[example]]` of `manifest` whose source
/// file exists; the error names the line to fix, in `manifest` or in `catalog`.
pub fn check_catalog_examples(
    features: &[Feature],
    examples: &[Example],
    manifest: &Path,
    catalog: &Path,
) -> anyhow::Result<()> {
    let line_of = |file: &Path, needle: &str| {
        fs::read_to_string(file).ok().and_then(|text| {
            text.lines()
                .position(|line| line.contains(needle))
                .map(|index| format!("{}:{}", file.display(), index + 1))
        })
    };
    for feature in features {
        let name = feature.example;
        let Some(example) = examples.iter().find(|example| example.name == name) else {
            let place = line_of(catalog, &format!("example: \"{name}\""))
                .unwrap_or_else(|| format!("the catalog ({})", catalog.display()));
            anyhow::bail!(
                "{place}: the feature `{}` names the example `{name}`, but {} declares no \
                 [[example]] named `{name}`",
                feature.name,
                manifest.display()
            );
        };
        if !example.path.is_file() {
            let place = line_of(manifest, &format!("name = \"{name}\""))
                .unwrap_or_else(|| manifest.display().to_string());
            anyhow::bail!(
                "{place}: the [[example]] `{name}` (which the catalog names for the feature \
                 `{}`) has no source file: {} does not exist",
                feature.name,
                example.path.display()
            );
        }
    }
    Ok(())
}

/// The files an example's build reads: the example and its out-of-line modules, found through
/// `#[path = "..."]` attributes and `mod name;` declarations, transitively.
pub fn example_inputs(example: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = vec![example.to_path_buf()];
    let mut next = 0;
    while next < files.len() {
        let file = files[next].clone();
        next += 1;
        let text =
            fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
        let directory = file.parent().unwrap_or(Path::new("."));
        let mut explicit_path: Option<String> = None;
        for line in text.lines().map(str::trim) {
            if let Some(rest) = line.strip_prefix("#[path") {
                explicit_path = rest.split('"').nth(1).map(String::from);
                continue;
            }
            let declaration = line
                .strip_prefix("pub ")
                .or_else(|| line.strip_prefix("pub(crate) "))
                .unwrap_or(line);
            let Some(name) = declaration
                .strip_prefix("mod ")
                .and_then(|rest| rest.strip_suffix(';'))
            else {
                if !line.starts_with("#[") {
                    explicit_path = None;
                }
                continue;
            };
            let candidates = match explicit_path.take() {
                Some(path) => vec![directory.join(path)],
                None => vec![
                    directory.join(format!("{}.rs", name.trim())),
                    directory.join(name.trim()).join("mod.rs"),
                ],
            };
            for candidate in candidates {
                if candidate.is_file() && !files.contains(&candidate) {
                    files.push(candidate);
                }
            }
        }
    }
    Ok(files)
}
