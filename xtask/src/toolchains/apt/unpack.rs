// SPDX-License-Identifier: GPL-2.0
//! Unpacking `.deb` files, whole or only some of their members, into a directory that either
//! does not exist or is complete.

use anyhow::{ensure, Context};
use std::path::{Path, PathBuf};
use xshell::{cmd, Shell};

/// Unpacks `debs` into `destination`, `check` run on the staging directory (it may write a
/// marker) before it takes `destination`'s place.
pub(crate) fn unpack_atomically(
    sh: &Shell,
    debs: &[PathBuf],
    destination: &Path,
    check: impl FnOnce(&Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    replace_atomically(destination, |staging| {
        for deb in debs {
            // Its complaint belongs in the error, not on the terminal of whoever runs this.
            let output = cmd!(sh, "dpkg-deb --extract {deb} {staging}")
                .quiet()
                .ignore_status()
                .output()
                .with_context(|| format!("unpacking {}", deb.display()))?;
            ensure!(
                output.status.success(),
                "unpacking {}: dpkg-deb exited with {}: {}",
                deb.display(),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        check(staging)
    })
}

/// Extracts from `deb` only the `members` named (as [`list_members`] names them; a directory
/// brings everything under it) into `destination`, as [`unpack_atomically`]; a member the
/// package lacks is an error.
pub(crate) fn extract_atomically(
    deb: &Path,
    members: &[String],
    destination: &Path,
    check: impl FnOnce(&Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let sh = Shell::new()?;
    replace_atomically(destination, |staging| {
        let tar = cmd!(
            sh,
            "tar -x --no-wildcards -C {staging} -f - -- {members...}"
        );
        data_through(&sh, deb, tar)?;
        check(staging)
    })
    .with_context(|| format!("extracting from {}", deb.display()))
}

/// Every member of `deb`'s data, as tar names them: `./usr/bin/qemu-aarch64-static`,
/// directories with a trailing `/`.
pub(crate) fn list_members(deb: &Path) -> anyhow::Result<Vec<String>> {
    let sh = Shell::new()?;
    let listing = data_through(&sh, deb, cmd!(sh, "tar -t -f -"))?;
    Ok(listing.lines().map(str::to_owned).collect())
}

/// Runs `tar` on the data archive of `deb` (from `dpkg-deb --fsys-tarfile`, piped) and returns
/// what it prints; either failing is an error that says what it printed.
fn data_through(sh: &Shell, deb: &Path, tar: xshell::Cmd<'_>) -> anyhow::Result<String> {
    let [data, tar] = crate::util::process::pipe(cmd!(sh, "dpkg-deb --fsys-tarfile {deb}"), tar)
        .with_context(|| {
            format!(
                "reading the data of {} through tar (is this a Debian-like system?)",
                deb.display()
            )
        })?;
    // tar first: when it stops early, dpkg-deb only fails with a broken pipe; when dpkg-deb
    // fails, tar only says that what it read is no archive.
    let dpkg_deb = format!("`dpkg-deb --fsys-tarfile {}`", deb.display());
    let failures: Vec<String> = [("tar", &tar), (&dpkg_deb, &data)]
        .into_iter()
        .filter(|(_, output)| !output.status.success())
        .map(|(program, output)| {
            let said = String::from_utf8_lossy(&output.stderr);
            format!("{program} exited with {}: {}", output.status, said.trim())
        })
        .collect();
    ensure!(failures.is_empty(), "{}", failures.join("; "));
    Ok(String::from_utf8_lossy(&tar.stdout).into_owned())
}

/// Fills a staging directory beside `destination` with `fill` and only then lets it take
/// `destination`'s place; on any failure the staging directory is removed.
fn replace_atomically(
    destination: &Path,
    fill: impl FnOnce(&Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let parent = destination
        .parent()
        .with_context(|| format!("{} has no parent directory", destination.display()))?;
    let name = destination
        .file_name()
        .with_context(|| format!("{} has no file name", destination.display()))?
        .to_string_lossy()
        .into_owned();
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    remove_abandoned_staging(parent, &name);
    let staging = parent.join(format!(".{name}.partial-{}", std::process::id()));
    if staging.exists() {
        std::fs::remove_dir_all(&staging)
            .with_context(|| format!("removing {}", staging.display()))?;
    }
    std::fs::create_dir(&staging).with_context(|| format!("creating {}", staging.display()))?;
    let result = (|| {
        fill(&staging)?;
        if destination.exists() {
            let old = parent.join(format!(".{name}.old-{}", std::process::id()));
            std::fs::rename(destination, &old)
                .with_context(|| format!("moving the old {} aside", destination.display()))?;
            std::fs::remove_dir_all(&old).with_context(|| format!("removing {}", old.display()))?;
        }
        std::fs::rename(&staging, destination)
            .with_context(|| format!("moving {} to {}", staging.display(), destination.display()))
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    result
}

/// Removes staging directories of `name` whose process is gone.
fn remove_abandoned_staging(parent: &Path, name: &str) {
    for entry in crate::util::files::sorted_entries(parent) {
        let file_name = entry.file_name().unwrap_or_default().to_string_lossy();
        let pid = [".partial-", ".old-"].iter().find_map(|kind| {
            let pid = file_name.strip_prefix(&format!(".{name}{kind}"))?;
            pid.parse::<u32>().ok()
        });
        if pid.is_some_and(|pid| !crate::util::process::is_running(pid)) {
            let _ = std::fs::remove_dir_all(&entry);
        }
    }
}
