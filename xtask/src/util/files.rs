// SPDX-License-Identifier: GPL-2.0
//! Files in and out: reading one that the user or an earlier run names (a report, a pin file, a
//! cache entry, a source to hash) only if it is a regular file and never past a limit, so that
//! a FIFO, a device or a directory is refused at once instead of hanging the xtask; and writing
//! one atomically, so that a reader never sees it torn.

use anyhow::{ensure, Context};
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Opens `path` for reading if it is a regular file (after symbolic links), with its metadata.
///
/// The file is opened without blocking and checked afterwards, so that a FIFO put in its place
/// between a check and the open cannot stall the caller either.
pub(crate) fn open_regular(path: &Path) -> anyhow::Result<(File, Metadata)> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let metadata = file.metadata()?;
    let kind = kind_of(metadata.file_type());
    ensure!(metadata.is_file(), "it is {kind}, not a regular file");
    Ok((file, metadata))
}

/// What a file that is not a regular one is, as the refusals say it: "a FIFO".
fn kind_of(kind: fs::FileType) -> &'static str {
    let kinds = [
        (kind.is_dir(), "a directory"),
        (kind.is_fifo(), "a FIFO"),
        (kind.is_char_device(), "a character device"),
        (kind.is_block_device(), "a block device"),
        (kind.is_socket(), "a socket"),
        (kind.is_symlink(), "a symbolic link"),
    ];
    let named = kinds.into_iter().find_map(|(is, name)| is.then_some(name));
    named.unwrap_or("something other than a file")
}

/// The contents of the regular file at `path`, refused if it holds more than `limit` bytes.
pub(crate) fn read_bytes(path: &Path, limit: u64) -> anyhow::Result<Vec<u8>> {
    let (file, metadata) = open_regular(path)?;
    let size = describe_size(limit);
    let too_large = format!("it is larger than {size}, the most this reader takes");
    ensure!(metadata.len() <= limit, "{too_large}");
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    // One byte past the limit tells a file that grew while it was read.
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    ensure!(bytes.len() as u64 <= limit, "{too_large}");
    Ok(bytes)
}

/// [`read_bytes`] for a file that must be UTF-8 text.
pub(crate) fn read_text(path: &Path, limit: u64) -> anyhow::Result<String> {
    String::from_utf8(read_bytes(path, limit)?).context("it is not UTF-8 text")
}

/// A size in the largest binary unit that keeps it whole: "64 MiB", "1000 bytes".
fn describe_size(bytes: u64) -> String {
    for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
}

/// Writes a file so that readers see the old contents or the new, never a torn mix: a
/// temporary file in the same directory, then a rename over the target.
///
/// A target that exists must be a regular file (or a symbolic link, which the rename replaces
/// and whose own target it leaves alone): a rename replaces whatever the name is, and a run as
/// root would put a file in the place of `/dev/null` or a FIFO that another process reads.
pub(crate) fn write_atomically(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let shown = path.display();
    if let Ok(metadata) = fs::symlink_metadata(path) {
        let kind = metadata.file_type();
        let what = kind_of(kind);
        ensure!(
            kind.is_file() || kind.is_symlink(),
            "not writing {shown}: it is {what}, not a regular file"
        );
    }
    let directory = path
        .parent()
        .with_context(|| format!("{shown} has no parent directory"))?;
    fs::create_dir_all(directory).with_context(|| format!("creating {}", directory.display()))?;
    let (pid, count) = (std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
    let file_name = path.file_name().unwrap_or_default().to_string_lossy();
    let temporary = directory.join(format!(".{file_name}.{pid}.{count}.tmp"));
    fs::write(&temporary, contents).with_context(|| format!("writing {}", temporary.display()))?;
    fs::rename(&temporary, path).with_context(|| {
        let _ = fs::remove_file(&temporary);
        format!("renaming {} to {}", temporary.display(), path.display())
    })
}

/// The paths of the entries of `dir`, sorted; none where it cannot be read.
pub(crate) fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(dir).into_iter().flatten();
    let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    paths.sort();
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(result: anyhow::Result<impl std::fmt::Debug>) -> String {
        format!("{:#}", result.unwrap_err())
    }

    #[test]
    fn only_regular_files_are_read_within_the_limit_or_replaced() {
        let directory = crate::project_root().join("target/kshim/unit-tests/files");
        let _ = std::fs::remove_dir_all(&directory);
        std::fs::create_dir_all(&directory).unwrap();
        let file = directory.join("small.txt");
        std::fs::write(&file, "four").unwrap();
        assert_eq!(read_text(&file, 4).unwrap(), "four");
        assert_eq!(
            message(read_text(&file, 3)),
            "it is larger than 3 bytes, the most this reader takes"
        );
        assert_eq!(
            message(read_text(&directory, 1 << 20)),
            "it is a directory, not a regular file"
        );
        assert_eq!(
            message(read_bytes(Path::new("/dev/zero"), 1 << 20)),
            "it is a character device, not a regular file"
        );
        let fifo = directory.join("fifo");
        let name = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap();
        // SAFETY: `name` is a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        assert_eq!(
            message(read_text(&fifo, 1 << 20)),
            "it is a FIFO, not a regular file"
        );
        std::fs::write(&file, [0xff, 0xfe]).unwrap();
        assert!(message(read_text(&file, 1 << 20)).starts_with("it is not UTF-8 text"));
        // Renamed over before targets were checked: the FIFO became a regular file.
        assert_eq!(
            message(write_atomically(&fifo, b"x")),
            format!(
                "not writing {}: it is a FIFO, not a regular file",
                fifo.display()
            )
        );
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
        assert_eq!(
            message(write_atomically(Path::new("/dev/null"), b"x")),
            "not writing /dev/null: it is a character device, not a regular file"
        );
        assert_eq!(
            message(write_atomically(&directory, b"x")),
            format!(
                "not writing {}: it is a directory, not a regular file",
                directory.display()
            )
        );
        write_atomically(&file, b"five!").unwrap();
        assert_eq!(read_text(&file, 5).unwrap(), "five!");
        assert_eq!(describe_size(64 << 20), "64 MiB");
    }
}
