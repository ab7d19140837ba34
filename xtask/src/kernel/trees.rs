// SPDX-License-Identifier: GPL-2.0
//! The kernel trees `cargo xtask kernel` builds: Debian's `linux-source-X`, unpacked under
//! `target/kernel/trees/` by [`Provisioner::extract`] (complete only once its marker, with the
//! `.deb`'s SHA-256, is in place), or a local checkout used where it is.

use crate::toolchains::debian::Provisioner;
use crate::toolchains::extracted::{Marker, Wanted};
use crate::toolchains::pins::{Pins, TreePin, TreeSource};
use anyhow::{anyhow, ensure, Context};
use std::path::{Path, PathBuf};
use xshell::{cmd, Shell};

/// A kernel tree ready to be read and built.
#[derive(Clone, Debug)]
pub(crate) struct Tree {
    pub root: PathBuf,
    /// Where it comes from, exactly: `linux-source-6.12=6.12.118-1 (trixie-security)`, or the
    /// path of a local tree.
    pub identity: String,
    /// The Debian package, with its version, when it is one.
    pub package: Option<String>,
    pub sha256: Option<String>,
    /// What providing it cost: (fetch seconds, unpack seconds, bytes fetched); zero when it was
    /// there already.
    pub cost: (f64, f64, u64),
}

impl Tree {
    /// A local checkout at `root`, used where it is.
    pub(crate) fn local(root: PathBuf) -> Tree {
        Tree {
            identity: format!("local tree {}", root.display()),
            root,
            package: None,
            sha256: None,
            cost: (0.0, 0.0, 0),
        }
    }

    /// A Debian tree unpacked under `prefix`, as its `marker` says; `None` when the marker names
    /// no directory.
    pub(crate) fn unpacked(prefix: &Path, marker: &Marker, cost: (f64, f64, u64)) -> Option<Tree> {
        Some(Tree {
            root: prefix.join(marker.get("tree")?),
            identity: marker.identity(),
            package: Some(format!("{}={}", marker.package, marker.version)),
            sha256: Some(marker.sha256.clone()),
            cost,
        })
    }
}

/// The refusal of a `--tree` that names no tree pin and no directory.
pub(crate) fn no_such_tree(pins: &Pins, wanted: &str) -> anyhow::Error {
    let ids: Vec<&str> = pins.trees.iter().map(|pin| pin.id.as_str()).collect();
    anyhow!(
        "--tree {}: no such tree pin (the pins are {}) and no such directory",
        crate::util::output::escape(wanted),
        ids.join(", ")
    )
}

/// Provides the tree `pin` names: unpacks a Debian tree (once; a complete copy is reused), or
/// checks that a local path is a kernel tree.
pub(crate) fn provide(provisioner: &mut Provisioner<'_>, pin: &TreePin) -> anyhow::Result<Tree> {
    match &pin.source {
        TreeSource::Path(path) => {
            let root = std::fs::canonicalize(path)
                .with_context(|| format!("the tree `{}`: {}", pin.id, path.display()))?;
            check_kernel_tree(&root)?;
            Ok(Tree::local(root))
        }
        TreeSource::Debian(source) => {
            let suites = source.suites();
            let version = source.version.as_deref();
            let prefix = crate::kernel::rules::pinned::debian_prefix(provisioner.root(), source);
            let tarball = format!("./usr/src/{}.tar.xz", source.package);
            let select = |members: &[String]| -> anyhow::Result<Vec<String>> {
                ensure!(members.contains(&tarball), "the package holds no {tarball}");
                Ok(vec![tarball.clone()])
            };
            let wanted = Wanted {
                package: &source.package,
                version,
                suites: &suites,
                prefix: prefix.clone(),
                select: &select,
            };
            let extracted =
                provisioner.extract(&wanted, |staging| unpack_tarball(staging, &source.package))?;
            let (fetch, unpack) = extracted.seconds;
            let cost = (fetch, unpack, extracted.fetched_bytes);
            let tree = Tree::unpacked(&extracted.prefix, &extracted.marker, cost)
                .context("the tree's marker names no directory")?;
            check_kernel_tree(&tree.root)?;
            Ok(tree)
        }
    }
}

/// Unpacks the package's tarball in the staging directory and removes it: xz's checksums and
/// tar's exit status verify it, and a tree without its top `Makefile` is refused.
fn unpack_tarball(staging: &Path, top: &str) -> anyhow::Result<Vec<(String, String)>> {
    let tarball = staging.join("usr/src").join(format!("{top}.tar.xz"));
    let sh = Shell::new()?;
    let output = cmd!(sh, "tar -xJf {tarball} -C {staging}")
        .quiet()
        .ignore_status()
        .output()
        .context("running tar")?;
    ensure!(
        output.status.success(),
        "unpacking {}: tar {}: {}",
        tarball.display(),
        output.status,
        crate::util::process::last_line(&String::from_utf8_lossy(&output.stderr))
    );
    std::fs::remove_file(&tarball).with_context(|| format!("removing {}", tarball.display()))?;
    check_kernel_tree(&staging.join(top))?;
    Ok(vec![("tree".to_owned(), top.to_owned())])
}

/// Fails unless `root` is a kernel tree: a top `Makefile` that sets `VERSION` and `PATCHLEVEL`,
/// and `scripts/config`.
pub(crate) fn check_kernel_tree(root: &Path) -> anyhow::Result<()> {
    let makefile = root.join("Makefile");
    let text = crate::util::files::read_text(&makefile, 1 << 20)
        .with_context(|| format!("{} is no kernel tree", root.display()))?;
    let sets = |name: &str| {
        text.lines()
            .any(|line| line.split('=').next().map(str::trim) == Some(name))
    };
    ensure!(
        sets("VERSION") && sets("PATCHLEVEL") && root.join("scripts/config").is_file(),
        "{} is no kernel tree: its Makefile sets no VERSION and PATCHLEVEL, or it has no \
         scripts/config",
        root.display()
    );
    Ok(())
}
