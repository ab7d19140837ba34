// SPDX-License-Identifier: GPL-2.0
//! Tidy tests: the repository agrees with its catalog and its own rules.
//!
//! These read files only; they run in milliseconds and need no compiler.

mod architecture;
mod architectures;
mod ci;
mod docs;
mod features;

use crate::project_root;
use std::fs;
use std::path::{Path, PathBuf};

fn read(relative: &str) -> String {
    let path = project_root().join(relative);
    fs::read_to_string(&path).unwrap_or_else(|error| panic!("reading {}: {error}", path.display()))
}

/// Every `.rs` file below `dir`, skipping build output.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        {
            let path = entry.unwrap().path();
            if path.is_dir() {
                // Third-party crate roots are kept as published (see their README).
                let third_party = path.ends_with("xtask/tests/fixtures/audit/crates");
                if path.file_name().is_some_and(|name| name != "target") && !third_party {
                    pending.push(path);
                }
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The licence line every source file opens with, as the kernel's do.
const SPDX: &str = "// SPDX-License-Identifier: GPL-2.0";

#[test]
fn every_source_file_starts_with_its_licence_and_a_module_doc() {
    let root = project_root();
    let mut checked = 0;
    for top in ["kernel-shim", "examples", "xtask"] {
        for file in rust_files(&root.join(top)) {
            let text = fs::read_to_string(&file).unwrap();
            // Fixtures are inputs whose lines tests quote, kept as the files they copy.
            let fixture = file.starts_with(root.join("xtask/tests/fixtures"));
            let mut lines = text.lines().filter(|line| !line.trim().is_empty());
            if !fixture {
                assert_eq!(
                    lines.next(),
                    Some(SPDX),
                    "{} must open with `{SPDX}`",
                    file.display()
                );
            }
            let first = lines.next().unwrap_or("");
            assert!(
                first.starts_with("//!"),
                "{} must start with a `//!` doc comment, not {first:?}",
                file.display()
            );
            checked += 1;
        }
    }
    assert!(
        checked > 20,
        "only {checked} source files found: is the walk broken?"
    );
}

/// The most lines a source file may have (`wc -l`): past it, a file holds more than one idea.
const MOST_LINES: usize = 700;

#[test]
fn no_source_file_is_over_700_lines() {
    let root = project_root();
    let manifest = read("Cargo.toml");
    let members: Vec<&str> = manifest
        .lines()
        .find_map(|line| line.strip_prefix("members = "))
        .expect("Cargo.toml lists the workspace's members on one `members = [...]` line")
        .trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .map(|member| member.trim().trim_matches('"'))
        .collect();
    let mut checked = 0;
    let mut long = Vec::new();
    for member in members {
        for file in rust_files(&root.join(member)) {
            let lines = fs::read_to_string(&file).unwrap().lines().count();
            if lines > MOST_LINES {
                long.push(format!(
                    "{}: {lines} lines",
                    file.strip_prefix(&root).unwrap().display()
                ));
            }
            checked += 1;
        }
    }
    assert!(
        checked > 50,
        "only {checked} source files found: is the walk broken?"
    );
    assert!(
        long.is_empty(),
        "no source file may be over {MOST_LINES} lines: split these along their seams:\n{}",
        long.join("\n")
    );
}
