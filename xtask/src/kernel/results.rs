// SPDX-License-Identifier: GPL-2.0
//! The real results `cargo xtask kernel` keeps under `target/kernel/results/` (read by its
//! `--dry-run` and `msrv --tree` too), keyed by the tree, the compiler, its `library/`
//! (`RUST_LIB_SRC`, provided or only looked for here), the tools and the configuration; and the
//! compilers' predictions, kept beside them.

use crate::kernel::build::{self, Built, Real};
use crate::kernel::rules::{self, Prediction};
use crate::kernel::stamps::{self, TreeKey};
use crate::kernel::trees::Tree;
use crate::run::cache::{Key, StableHasher};
use crate::run::plan::Rustc;
use crate::toolchains::debian::Provisioner;
use crate::toolchains::discovery::{Source, Toolchain};
use crate::toolchains::extracted::{Marker, Wanted};
use crate::toolchains::library_sources::{library_in, library_member, library_sources, sources_of};
use crate::toolchains::version::RustcVersion;
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The file under `results` that holds the real result of a tree built with a compiler (by its
/// [`crate::run::cache::compiler_identity`]), with those library sources and tools.
pub(crate) fn result_entry(
    results: &Path,
    tree: TreeKey,
    compiler: Key,
    library_identity: &str,
    tools_identity: &str,
) -> PathBuf {
    let mut hasher = StableHasher::new();
    hasher
        .field("kernel result v2")
        .number(tree.0)
        .number(compiler.0)
        .field(library_identity.as_bytes())
        .field(tools_identity)
        .field(build::CONFIG_RECIPE);
    results.join(format!("{}.json", hasher.finish()))
}

/// A compiler's prediction for a tree: the one kept under `dir/results/` when `use_cache`, else
/// what its probes (under `dir/probes/`, removed after; the rules read into `rules` once) say,
/// kept for the next run. `say` hears that it predicts, and a prediction that was not kept.
pub(crate) fn prediction(
    dir: &Path,
    (tree_id, tree, tree_key): (&str, &Tree, TreeKey),
    rules: &mut Option<rules::Tree>,
    (toolchain_id, rustc, compiler): (&str, &Rustc, Key),
    use_cache: bool,
    say: &dyn Fn(&str),
) -> Result<Prediction, String> {
    let entry = stamps::prediction_entry(&dir.join("results"), tree_key, compiler);
    let readable = entry.as_ref().ok().filter(|_| use_cache);
    if let Some(kept) = readable.and_then(|entry| stamps::read_entry(entry, 16 << 20)) {
        return Ok(kept);
    }
    say("predicting");
    let rules = match rules {
        Some(rules) => rules,
        None => rules.insert(rules::read(&tree.root).map_err(|e| format!("{e:#}"))?),
    };
    let probes = dir.join("probes").join(tree_id).join(toolchain_id);
    let prediction = rules::predict(rules, rustc, &probes, Duration::from_secs(120))
        .map_err(|error| format!("{error:#}"));
    let _ = std::fs::remove_dir_all(&probes);
    // Only a prediction the probes really made is kept, never an error.
    if let Ok(prediction) = &prediction {
        let kept = entry.and_then(|entry| stamps::write_entry(&entry, prediction));
        if let Err(error) = kept {
            say(&format!("the prediction was not kept: {error:#}"));
        }
    }
    prediction
}

/// A result under `results/`, if it is a well-formed one that is not `not run`, with the step
/// times of the build that stored it.
pub(crate) fn read_result(entry: &Path) -> Option<Built> {
    let built: Built = stamps::read_entry(entry, 1 << 20)?;
    (built.real != Real::NotRun).then_some(built)
}

/// A cached real result, as a run takes it: without the step times of the build that stored it.
pub(crate) fn load_result(entry: &Path) -> Option<Built> {
    read_result(entry).map(|built| Built {
        cacheable: true,
        steps: Vec::new(),
        ..built
    })
}

/// Where a Debian compiler's whole `library/` is extracted, for `RUST_LIB_SRC`.
pub(crate) fn library_prefix(dir: &Path, package: &str, version: &str) -> PathBuf {
    dir.join("library")
        .join(format!("{package}-{}", version.replace(':', "%3a")))
}

/// The Debian package a compiler came from, if it is one of Debian's.
pub(crate) fn debian_compiler(
    toolchain: &Toolchain,
    version: &RustcVersion,
) -> Option<crate::toolchains::pins::DebianSource> {
    match &toolchain.source {
        Source::Debian { package } => Some(package.clone()),
        Source::Path => version
            .sysroot
            .as_deref()
            .and_then(Path::parent)
            .and_then(crate::toolchains::debian::read_marker),
        Source::Rustup { .. } => None,
    }
}

/// A compiler's library sources for `RUST_LIB_SRC`, as they are now (nothing is extracted).
pub(crate) enum Library {
    /// There, with the identity a result is keyed with.
    There(String),
    /// A Debian compiler's, which a run extracts first (`package=version`).
    ToExtract(String),
    /// A rustup compiler's that is not there (no `rust-src`): the cell is not run.
    Unavailable(String),
}

/// A compiler's library sources under `dir` (`target/kernel/`), looked for, never provided.
pub(crate) fn library(dir: &Path, toolchain: &Toolchain, version: &RustcVersion) -> Library {
    let found = match debian_compiler(toolchain, version) {
        None => library_sources(toolchain, version).map(|sources| Library::There(sources.identity)),
        Some(compiler) => sources_of(&compiler).map(|(package, version)| {
            match Marker::read(&library_prefix(dir, &package, version)) {
                Some(marker) => Library::There(whole_identity(&marker)),
                None => Library::ToExtract(format!("{package}={version}")),
            }
        }),
    };
    found.unwrap_or_else(|error| Library::Unavailable(format!("{error:#}")))
}

/// The identity of a Debian compiler's extracted `library/`.
fn whole_identity(marker: &Marker) -> String {
    format!("{} (whole library/)", marker.identity())
}

/// The `library/` the kernel builds `core` (and before 6.13 `alloc`) from, and its identity: a
/// Debian compiler's source package extracted whole under `dir/library/`, or rustup's `rust-src`.
pub(crate) fn kernel_library(
    provisioner: &mut Provisioner<'_>,
    dir: &Path,
    toolchain: &Toolchain,
    version: &RustcVersion,
) -> anyhow::Result<(PathBuf, String)> {
    let Some(compiler) = debian_compiler(toolchain, version) else {
        let sources = library_sources(toolchain, version)?;
        return Ok((sources.library, sources.identity));
    };
    let (package, version_wanted) = sources_of(&compiler)?;
    let suites = compiler.suites();
    let select =
        |members: &[String]| -> anyhow::Result<Vec<String>> { Ok(vec![library_member(members)?]) };
    let wanted = Wanted {
        package: &package,
        version: Some(version_wanted),
        suites: &suites,
        prefix: library_prefix(dir, &package, version_wanted),
        select: &select,
    };
    let extracted = provisioner.extract(&wanted, |staging| {
        let library = library_in(staging).context("no library/core/src/lib.rs was extracted")?;
        Ok(vec![("library".to_owned(), library)])
    })?;
    let library = extracted
        .prefix
        .join(extracted.marker.get("library").unwrap_or("library"));
    Ok((library, whole_identity(&extracted.marker)))
}
