//! Unpacking `.deb` files into a directory that either does not exist or is complete.

use anyhow::Context;
use std::path::{Path, PathBuf};
use xshell::{cmd, Shell};

/// Unpacks `debs` into `destination` so that it either does not exist or is complete: they
/// go into a staging directory beside it, `check` runs on that (it may write a marker), and
/// only then does the staging directory take `destination`'s place. On any failure the
/// staging directory is removed.
pub(crate) fn unpack_atomically(
    sh: &Shell,
    debs: &[PathBuf],
    destination: &Path,
    check: impl FnOnce(&Path) -> anyhow::Result<()>,
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
        for deb in debs {
            cmd!(sh, "dpkg-deb --extract {deb} {staging}")
                .quiet()
                .run()
                .with_context(|| format!("unpacking {}", deb.display()))?;
        }
        check(&staging)?;
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

/// Removes staging directories of `name` left by runs that were killed (their process is
/// gone).
fn remove_abandoned_staging(parent: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let file_name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = [".partial-", ".old-"].iter().find_map(|kind| {
            file_name
                .strip_prefix(&format!(".{name}{kind}"))
                .and_then(|pid| pid.parse::<libc::pid_t>().ok())
        }) else {
            continue;
        };
        // SAFETY: kill with signal 0 only asks whether the process exists; it sends nothing.
        let alive = unsafe { libc::kill(pid, 0) } == 0;
        if !alive {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
