// SPDX-License-Identifier: GPL-2.0
//! A real kernel tree's Rust rules, read from its own files, and what a compiler's probes of
//! them predict: the layer below `cargo xtask kernel`.
//!
//! [`read`] reads the rules ([`Tree`]) from the top `Makefile`, the tree's own
//! `scripts/min-tool-version.sh` (run), `scripts/Makefile.build`, the x86_64 defconfig,
//! `init/Kconfig` and every crate root ([`makefiles`]); [`predict`] compiles one probe per crate
//! root with a given compiler ([`prediction`]).

mod makefiles;
pub(crate) mod pinned;
mod prediction;
#[cfg(test)]
pub(crate) mod tests;

#[cfg(test)]
pub(crate) use prediction::enabled_features;
pub use prediction::{predict, CratePrediction, Predicted, Prediction};

use crate::catalog::Release;
use crate::features::attributes::{read_allowed, read_features, FeatureAttribute};
use crate::features::kconfig::{read_kconfig, KconfigSymbol};
use crate::util::process::{self, Invocation};
use anyhow::{ensure, Context};
use std::path::{Path, PathBuf};

/// The architecture the predictions and real builds are for (Kbuild's `ARCH`, `SRCARCH`).
pub const HOST_ARCH: (&str, &str) = ("x86_64", "x86");

/// How long `min-tool-version.sh` may take: it only prints a version.
const SCRIPT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The biggest file the reader takes: far above what it reads (crate roots of a few to a few
/// hundred kilobytes, `init/Kconfig` about 70 KB), far below what would hurt.
const MAX_FILE: u64 = 16 << 20;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tree {
    pub root: PathBuf,
    /// The version as its Makefile says: `6.12.118`, `7.3.0-rc7`.
    pub version: String,
    /// The minimum tool versions for [`HOST_ARCH`].
    pub minimum: Minimum,
    /// `rust_allowed_features` of `scripts/Makefile.build`, in its order.
    pub allowed_features: Vec<String>,
    /// The words of `rust_common_cmd` that decide which features a crate outside `rust/` may
    /// use (`-Zallow-features=...`, `-Zcrate-attr=...`), with the allowed list put in.
    pub driver_flags: Vec<String>,
    /// The feature lints ([`makefiles::FEATURE_LINTS`]) Kbuild's flags make errors for every
    /// crate: 6.1's `-Dwarnings` makes `stable_features` one.
    pub denied_lints: Vec<String>,
    /// Every `config RUSTC_HAS_X` of `init/Kconfig` that is `def_bool RUSTC_VERSION >= N`.
    pub kconfig: Vec<KconfigSymbol>,
    /// Every crate root, `rust/`'s first (in `rust/Makefile`'s order), then the others by path.
    pub crates: Vec<CrateRoot>,
}

/// What `scripts/min-tool-version.sh` says for one architecture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Minimum {
    pub rustc: Release,
    pub bindgen: Release,
}

/// How Kbuild compiles a crate root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Build {
    /// Under `rust/`, by `rust/Makefile`: no `-Zallow-features`, its own `#![feature]` lines.
    Library,
    /// Anywhere else (samples, drivers), by `scripts/Makefile.build`'s `rust_common_cmd`: the
    /// allowed list is both the limit and already on ([`Tree::driver_flags`]).
    Kbuild,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrateRoot {
    /// Its path in the tree: `rust/kernel/lib.rs`.
    pub root: String,
    /// The crate's name: `kernel`, `pin_init`, `rust_minimal`.
    pub name: String,
    pub build: Build,
    /// The `--cfg`s `rust/Makefile` gives it (`NAME-cfgs`), each with the release from which it
    /// is given (`$(if $(call rustc-min-version,N),...)`), or `None` when always.
    pub cfgs: Vec<(String, Option<Release>)>,
    /// Whether it loads `proc_macro` (a proc-macro crate, or one that names the crate).
    pub loads_proc_macro: bool,
    /// Every feature its inner attributes enable, conditions included.
    pub features: Vec<FeatureAttribute>,
    /// The feature lints its own `#![allow(...)]` allows (6.12's `compiler_builtins` allows
    /// `internal_features`).
    pub allowed_lints: Vec<String>,
}

impl Tree {
    /// The tree's Kconfig symbol named `cfg` (`CONFIG_RUSTC_HAS_X`), if its Kconfig has it.
    pub fn symbol(&self, cfg: &str) -> Option<&KconfigSymbol> {
        self.kconfig.iter().find(|symbol| symbol.cfg == cfg)
    }
}

/// Reads a kernel tree's Rust rules; an error says what is missing (not a kernel tree, no Rust
/// support, a `Makefile.build` without an allowed list).
pub fn read(root: &Path) -> anyhow::Result<Tree> {
    let not_a_tree = |why: &str| format!("{} is not a kernel tree: {why}", root.display());
    let text = read_text(&root.join("Makefile"))
        .with_context(|| not_a_tree("it has no readable top Makefile"))?;
    let version = makefiles::version(&text)
        .with_context(|| not_a_tree("its Makefile sets no VERSION, PATCHLEVEL and SUBLEVEL"))?;
    let build = root.join("scripts/Makefile.build");
    ensure!(
        build.is_file() && root.join("init/Kconfig").is_file(),
        not_a_tree("it has no scripts/Makefile.build or init/Kconfig")
    );
    ensure!(
        root.join("rust/Makefile").is_file(),
        "the kernel tree {} ({version}) has no Rust support: it has no rust/Makefile \
         (Rust arrived in Linux 6.1)",
        root.display()
    );
    let build_text = read_text(&build)?;
    let allowed_features = makefiles::allowed_features(&build_text).with_context(|| {
        format!(
            "{}: it sets no `rust_allowed_features`, so it says nothing about which features \
             a driver may use",
            build.display()
        )
    })?;
    let driver_flags = makefiles::rust_common_cmd(&build_text)
        .and_then(|command| makefiles::driver_flags(&command, &allowed_features))
        .with_context(|| format!("{}: reading `rust_common_cmd`", build.display()))?;
    // The real build starts from this defconfig, which sets `CONFIG_WERROR` from 6.1 on.
    let defconfig = root.join(format!(
        "arch/{}/configs/{}_defconfig",
        HOST_ARCH.1, HOST_ARCH.0
    ));
    let werror = defconfig.is_file()
        && read_text(&defconfig)?
            .lines()
            .any(|line| line == "CONFIG_WERROR=y");
    let mut warn = String::new();
    for name in ["scripts/Makefile.extrawarn", "scripts/Makefile.warn"] {
        if root.join(name).is_file() {
            warn.push_str(&read_text(&root.join(name))?);
        }
    }
    let denied_lints = makefiles::denied_feature_lints(&text, &warn, werror);
    let kconfig = read_kconfig(&read_text(&root.join("init/Kconfig"))?, "init/Kconfig");
    let minimum = minimum(root, HOST_ARCH.0, HOST_ARCH.1)?;
    let rust_makefile = read_text(&root.join("rust/Makefile"))?;
    let mut crates = Vec::new();
    for (path, build) in makefiles::crate_roots(root, &rust_makefile)? {
        let text = read_text(&root.join(&path))?;
        let features = read_features(&text).map_err(|error| anyhow::anyhow!("{path}:{error}"))?;
        let allowed_lints = read_allowed(&text)
            .map_err(|error| anyhow::anyhow!("{path}:{error}"))?
            .into_iter()
            .filter(|allow| allow.conditions.is_empty())
            .map(|allow| allow.name)
            .filter(|name| makefiles::FEATURE_LINTS.contains(&name.as_str()))
            .collect();
        let name = makefiles::crate_name(&path);
        let cfgs = match build {
            Build::Library => makefiles::crate_cfgs(&rust_makefile, &name),
            Build::Kbuild => Vec::new(),
        };
        crates.push(CrateRoot {
            loads_proc_macro: text.contains("proc_macro"),
            allowed_lints,
            root: path,
            name,
            build,
            cfgs,
            features,
        });
    }
    Ok(Tree {
        root: root.to_path_buf(),
        version,
        minimum,
        allowed_features,
        driver_flags,
        denied_lints,
        kconfig,
        crates,
    })
}

/// Runs the tree's `scripts/min-tool-version.sh` for rustc and bindgen as Kbuild runs it: under
/// `sh`, with `ARCH` and `SRCARCH` in the environment.
fn minimum(root: &Path, arch: &str, srcarch: &str) -> anyhow::Result<Minimum> {
    let script = root.join("scripts/min-tool-version.sh");
    let ask = |tool: &str| -> anyhow::Result<Release> {
        let args = vec![script.display().to_string(), tool.to_string()];
        let env = [("ARCH", arch), ("SRCARCH", srcarch)];
        let env = env.map(|(name, value)| (name.to_owned(), value.to_owned()));
        let invocation = Invocation::new("/bin/sh", args).with_env(env.to_vec());
        let output = process::run(&invocation, SCRIPT_TIMEOUT)
            .with_context(|| format!("running {invocation}"))?;
        ensure!(
            output.success(),
            "{invocation}: {}: {}",
            output.describe_ending(SCRIPT_TIMEOUT),
            process::last_line(&output.stderr)
        );
        Release::parse(output.stdout.trim()).with_context(|| {
            format!(
                "{invocation} printed `{}`, not a version",
                output.stdout.trim()
            )
        })
    };
    Ok(Minimum {
        rustc: ask("rustc")?,
        bindgen: ask("bindgen")?,
    })
}

/// Every file or link under `dir` whose name `wanted` takes, in no particular order; what
/// cannot be listed is skipped.
pub(crate) fn files_under(dir: &Path, wanted: &dyn Fn(&str) -> bool, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => files_under(&path, wanted, into),
            Ok(_) if wanted(&entry.file_name().to_string_lossy()) => into.push(path),
            _ => {}
        }
    }
}

fn read_text(path: &Path) -> anyhow::Result<String> {
    crate::util::files::read_text(path, MAX_FILE)
}
