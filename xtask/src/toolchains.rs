// SPDX-License-Identifier: GPL-2.0
//! The compilers and the tools provisioned beside them: the pin file, Debian's packages through
//! a private apt, which installed compiler satisfies which pin, each compiler's own `library/`,
//! qemu's user-mode emulators, and installing them all (`cargo xtask toolchains install`).

pub(crate) mod apt;
pub(crate) mod debian;
pub(crate) mod digests;
pub(crate) mod discovery;
pub(crate) mod emulators;
pub(crate) mod extracted;
pub(crate) mod library_sources;
pub(crate) mod loader;
pub(crate) mod pins;
pub(crate) mod provision;
pub(crate) mod version;

use std::path::{Path, PathBuf};

/// The paths of the entries of `dir`, sorted; none where it cannot be read.
pub(crate) fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(dir).into_iter().flatten();
    let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    paths.sort();
    paths
}
