// SPDX-License-Identifier: GPL-2.0
//! Tidy tests that read the xtask's own tables: the repository agrees with its catalog and its
//! own rules. Those that need only the files are in the top-level `tests/` crate.
//!
//! These read files only; they run in milliseconds and need no compiler.

mod architecture;
mod architectures;
mod docs;
mod features;
mod one_home;

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
