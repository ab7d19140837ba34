// SPDX-License-Identifier: GPL-2.0
//! What every provisioned prefix held when it was made: the SHA-256 of each of its regular
//! files, recorded before the prefix took its place, and checked by `toolchains install`
//! (before it says "already there") and `toolchains verify`. The matrix's cache keys them by
//! stat stamps only; this is where their bytes are checked.

use crate::util::files::sorted_entries;
use anyhow::Context;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use xshell::{cmd, Shell};

pub(crate) const DIGESTS: &str = "kshim-digests.txt";

/// Files per `sha256sum`.
const BATCH: usize = 256;

/// Records the digest of every regular file under `prefix` (not following links) in its
/// [`DIGESTS`]; the bytes of them all, the list included.
pub(crate) fn record(prefix: &Path) -> anyhow::Result<u64> {
    let files = regular_files(prefix)?;
    let text: String = digests_of(prefix, &files)?
        .iter()
        .map(|(file, digest)| format!("{digest}  {file}\n"))
        .collect();
    std::fs::write(prefix.join(DIGESTS), &text)
        .with_context(|| format!("writing {}", prefix.join(DIGESTS).display()))?;
    let size = |file: &String| prefix.join(file).symlink_metadata().map(|meta| meta.len());
    Ok(files.iter().filter_map(|file| size(file).ok()).sum::<u64>() + text.len() as u64)
}

/// The files of `prefix` that differ from its [`DIGESTS`], each with what is wrong ("changed",
/// "missing"); an error when it has no such list, so that nothing is trusted unchecked.
pub(crate) fn damaged(prefix: &Path) -> anyhow::Result<Vec<String>> {
    let list = prefix.join(DIGESTS);
    let text = std::fs::read_to_string(&list).with_context(|| {
        format!(
            "{} has no record of its files' digests ({} is missing or unreadable)",
            prefix.display(),
            DIGESTS
        )
    })?;
    let mut recorded = BTreeMap::new();
    for line in text.lines() {
        let (digest, file) = line
            .split_once("  ")
            .with_context(|| format!("{}: a line that is no `DIGEST  FILE`", list.display()))?;
        recorded.insert(file.to_owned(), digest.to_owned());
    }
    let is_file = |file: &String| {
        let meta = prefix.join(file).symlink_metadata();
        meta.is_ok_and(|meta| meta.is_file())
    };
    let (present, missing): (Vec<String>, _) = recorded.keys().cloned().partition(is_file);
    let digests = digests_of(prefix, &present)?;
    let changed = present
        .iter()
        .filter(|file| digests.get(*file) != recorded.get(*file));
    let mut damaged: Vec<String> = changed.map(|file| format!("{file}: changed")).collect();
    damaged.extend(missing.iter().map(|file| format!("{file}: missing")));
    damaged.sort();
    Ok(damaged)
}

/// Every provisioned prefix: each under `toolchains`' `debian/`, qemu's, and the kernel trees
/// and library sources `cargo xtask kernel` extracted under `kernel`.
pub(crate) fn provisioned_prefixes(toolchains: &Path, kernel: &Path) -> Vec<PathBuf> {
    let debian = sorted_entries(&toolchains.join("debian")).into_iter();
    debian
        .filter(|path| !path.ends_with("downloads"))
        .chain([toolchains.join("qemu")])
        .chain(
            ["trees", "library"]
                .map(|kind| sorted_entries(&kernel.join(kind)))
                .concat(),
        )
        .filter(|path| path.is_dir())
        .collect()
}

/// Every regular file below `prefix`, relative to it, in name order, [`DIGESTS`] left out.
fn regular_files(prefix: &Path) -> anyhow::Result<Vec<String>> {
    let mut files = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        let directory = prefix.join(&relative);
        let entries = std::fs::read_dir(&directory)
            .with_context(|| format!("reading {}", directory.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("reading {}", directory.display()))?;
            let path = relative.join(entry.file_name());
            let kind = entry.file_type()?;
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file() && path != Path::new(DIGESTS) {
                files.push(path.to_string_lossy().into_owned());
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The SHA-256 of each of `files` (relative to `prefix`), by `sha256sum` in batches.
pub(crate) fn digests_of(
    prefix: &Path,
    files: &[String],
) -> anyhow::Result<BTreeMap<String, String>> {
    let mut digests = BTreeMap::new();
    let sh = Shell::new()?;
    sh.change_dir(prefix);
    for batch in files.chunks(BATCH) {
        let output = cmd!(sh, "sha256sum -- {batch...}")
            .quiet()
            .ignore_status()
            .output()
            .context("running sha256sum")?;
        anyhow::ensure!(
            output.status.success(),
            "sha256sum in {} failed: {}",
            prefix.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
        // One line per file, in the order given.
        for (line, file) in String::from_utf8_lossy(&output.stdout).lines().zip(batch) {
            let digest = line.split_whitespace().next().unwrap_or_default();
            digests.insert(file.clone(), digest.to_owned());
        }
    }
    Ok(digests)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_or_missing_file_is_found_and_an_unrecorded_prefix_is_refused() {
        let prefix = crate::project_root().join("target/kshim/unit-tests/digests");
        let _ = std::fs::remove_dir_all(&prefix);
        std::fs::create_dir_all(prefix.join("usr/bin")).unwrap();
        std::fs::write(prefix.join("usr/bin/qemu-aarch64"), "an emulator").unwrap();
        std::fs::write(prefix.join("lib.rs"), "pub fn f() {}").unwrap();
        assert!(
            damaged(&prefix).is_err(),
            "a prefix with no digests was trusted"
        );
        record(&prefix).unwrap();
        assert_eq!(damaged(&prefix).unwrap(), Vec::<String>::new());
        std::fs::write(prefix.join("lib.rs"), "").unwrap();
        std::fs::remove_file(prefix.join("usr/bin/qemu-aarch64")).unwrap();
        assert_eq!(
            damaged(&prefix).unwrap(),
            ["lib.rs: changed", "usr/bin/qemu-aarch64: missing"]
        );
    }

    /// `toolchains verify` did not cover `target/kernel/`: a tree changed after it was
    /// unpacked went unnoticed.
    #[test]
    fn the_kernel_trees_and_library_sources_are_prefixes_too() {
        let kernel = crate::project_root().join("target/kshim/unit-tests/digests-kernel");
        let _ = std::fs::remove_dir_all(&kernel);
        let tree = kernel.join("trees/linux-source-6.12-6.12.118-1");
        let script = tree.join("linux-source-6.12/scripts/min-tool-version.sh");
        std::fs::create_dir_all(script.parent().unwrap()).unwrap();
        std::fs::write(&script, "rustc)\n\techo 1.78.0\n").unwrap();
        let library = kernel.join("library/rust-src-1.98.1");
        std::fs::create_dir_all(&library).unwrap();
        std::fs::write(kernel.join("kernel.lock"), "").unwrap();
        let toolchains = kernel.join("no-toolchains");
        assert_eq!(
            provisioned_prefixes(&toolchains, &kernel),
            [tree.clone(), library]
        );
        record(&tree).unwrap();
        std::fs::write(&script, "rustc)\n\techo 1.99.0\n").unwrap();
        assert_eq!(
            damaged(&tree).unwrap(),
            ["linux-source-6.12/scripts/min-tool-version.sh: changed"]
        );
        std::fs::remove_dir_all(kernel).unwrap();
    }
}
