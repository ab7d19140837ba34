// SPDX-License-Identifier: GPL-2.0
//! Stable hashes and cheap file stamps: FNV-1a-128 over length-prefixed fields, the same on
//! every machine and every build of the xtask, for the cache's keys and the names of output
//! directories; a file's contents hashed; a file's stat stamp.

use crate::util::files;
use anyhow::Context;
use std::fmt;
use std::fs;
use std::path::Path;

/// A 128-bit FNV-1a hash of a sequence of length-prefixed fields.
#[derive(Clone, Debug)]
pub struct StableHasher {
    state: u128,
}

const FNV_OFFSET_BASIS: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
const FNV_PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;

impl StableHasher {
    pub fn new() -> Self {
        Self {
            state: FNV_OFFSET_BASIS,
        }
    }

    fn raw(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.state ^= u128::from(byte);
            self.state = self.state.wrapping_mul(FNV_PRIME);
        }
    }

    /// Adds one field; the length prefix keeps `("ab", "c")` apart from `("a", "bc")`.
    pub fn field(&mut self, bytes: impl AsRef<[u8]>) -> &mut Self {
        let bytes = bytes.as_ref();
        self.raw(&(bytes.len() as u64).to_le_bytes());
        self.raw(bytes);
        self
    }

    pub fn number(&mut self, number: u128) -> &mut Self {
        self.field(number.to_le_bytes())
    }

    pub fn finish(&self) -> Key {
        Key(self.state)
    }
}

/// A cache key: the hash of a step's inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key(pub u128);

impl fmt::Display for Key {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{:032x}", self.0)
    }
}

const HASHED_FILE_LIMIT: u64 = 1 << 30;

/// Hashes a file's contents, naming the file in the error; only a regular file, of at most
/// [`HASHED_FILE_LIMIT`].
pub fn hash_file(path: &Path) -> anyhow::Result<Key> {
    let bytes = files::read_bytes(path, HASHED_FILE_LIMIT)
        .with_context(|| format!("reading {}", path.display()))?;
    Ok(StableHasher::new().field(&bytes).finish())
}

/// A file's size and modification time, which say cheaply whether it was replaced.
pub fn file_stamp(path: &Path) -> Option<(u64, u128)> {
    let metadata = fs::metadata(path).ok()?;
    let modified = metadata
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some((metadata.len(), modified.as_nanos()))
}

/// A file's stat stamp: its device, inode, size, and modification and change times. No write
/// keeps all of them: rewriting a file in place changes its change time (which no system call
/// sets back), replacing it changes its inode. Cheap enough for every file of a sysroot or of
/// the library sources on each run, where contents would cost seconds; what a stamp cannot
/// tell (that the bytes are the ones Debian shipped) `cargo xtask toolchains verify` does.
pub fn stat_stamp(path: &Path) -> std::io::Result<Key> {
    use std::os::unix::fs::MetadataExt;
    let metadata = fs::metadata(path)?;
    let stamp = StableHasher::new()
        .number(u128::from(metadata.dev()))
        .number(u128::from(metadata.ino()))
        .number(u128::from(metadata.size()))
        .number(metadata.mtime() as u128)
        .number(metadata.mtime_nsec() as u128)
        .number(metadata.ctime() as u128)
        .number(metadata.ctime_nsec() as u128)
        .finish();
    Ok(stamp)
}

/// The running xtask's [`stat_stamp`], taken once per process through `/proc/self/exe`, which
/// still names the binary after a rebuild replaced it: a `cargo build` during a long run must
/// neither fail the rest of the run nor change its keys half-way (an unlink changes the ctime).
pub fn running_xtask_stamp() -> std::io::Result<Key> {
    static STAMP: std::sync::OnceLock<Result<Key, String>> = std::sync::OnceLock::new();
    STAMP
        .get_or_init(|| {
            stat_stamp(Path::new("/proc/self/exe"))
                .or_else(|_| std::env::current_exe().and_then(|exe| stat_stamp(&exe)))
                .map_err(|error| error.to_string())
        })
        .clone()
        .map_err(std::io::Error::other)
}

/// The stamp of a directory tree: the relative path and [`stat_stamp`] of every file below
/// `directory`, in name order, so that a file added, removed, renamed or rewritten changes it.
pub fn tree_stamp(directory: &Path) -> anyhow::Result<Key> {
    let mut hasher = StableHasher::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(current) = pending.pop() {
        let mut entries: Vec<_> = fs::read_dir(&current)
            .and_then(|entries| entries.collect())
            .with_context(|| format!("reading {}", current.display()))?;
        entries.sort_by_key(|entry| entry.file_name());
        for entry in entries {
            let path = entry.path();
            let relative = path.strip_prefix(directory).unwrap_or(&path);
            hasher.field(relative.to_string_lossy().as_bytes());
            if entry.file_type()?.is_dir() {
                pending.push(path);
            } else {
                let stamp =
                    stat_stamp(&path).with_context(|| format!("reading {}", path.display()))?;
                hasher.number(stamp.0);
            }
        }
    }
    Ok(hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_binary_is_stamped_after_a_rebuild_removed_it() {
        assert_eq!(
            running_xtask_stamp().unwrap(),
            running_xtask_stamp().unwrap()
        );
        // What `running_xtask_stamp` relies on, shown on a child: a process's `exe` link is
        // still stamped after its file was removed, as `cargo build` removes the old xtask.
        let directory = crate::project_root().join("target/kshim/unit-tests/hash-exe");
        let _ = fs::remove_dir_all(&directory);
        fs::create_dir_all(&directory).unwrap();
        let copy = directory.join("sleep");
        fs::copy("/bin/sleep", &copy).unwrap();
        let mut child = std::process::Command::new(&copy).arg("30").spawn().unwrap();
        let link = std::path::PathBuf::from(format!("/proc/{}/exe", child.id()));
        fs::remove_file(&copy).unwrap();
        let stamped = stat_stamp(&link);
        let _ = child.kill();
        let _ = child.wait();
        assert!(stat_stamp(&copy).is_err());
        assert!(stamped.is_ok(), "{stamped:?}");
    }

    #[test]
    fn no_write_keeps_a_stamp() {
        let directory = crate::project_root().join("target/kshim/unit-tests/hash-stamps");
        let _ = fs::remove_dir_all(&directory);
        fs::create_dir_all(directory.join("src")).unwrap();
        let file = directory.join("src/lib.rs");
        fs::write(&file, "pub fn f() {}\n").unwrap();
        let before = (stat_stamp(&file).unwrap(), tree_stamp(&directory).unwrap());
        let modified = fs::metadata(&file).unwrap().modified().unwrap();
        // The same size, the modification time set back: only the change time tells.
        std::thread::sleep(std::time::Duration::from_millis(20));
        fs::write(&file, "pub fn g() {}\n").unwrap();
        fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        assert_eq!(fs::metadata(&file).unwrap().len(), 14);
        assert_ne!(stat_stamp(&file).unwrap(), before.0);
        assert_ne!(tree_stamp(&directory).unwrap(), before.1);
        let after = tree_stamp(&directory).unwrap();
        fs::write(directory.join("src/new.rs"), "").unwrap();
        assert_ne!(tree_stamp(&directory).unwrap(), after, "an added file");
    }

    #[test]
    fn fnv1a_128_matches_the_reference_values() {
        // Reference values of FNV-1a 128 for "" and "a" (from the FNV authors' test suite),
        // computed on the raw bytes without the length prefix `field` adds.
        let mut empty = StableHasher::new();
        empty.raw(b"");
        assert_eq!(
            empty.finish().to_string(),
            "6c62272e07bb014262b821756295c58d"
        );
        let mut a = StableHasher::new();
        a.raw(b"a");
        assert_eq!(a.finish().to_string(), "d228cb696f1a8caf78912b704e4a8964");
    }

    #[test]
    fn fields_are_length_prefixed() {
        let split =
            |first: &str, second: &str| StableHasher::new().field(first).field(second).finish();
        assert_ne!(split("ab", "c"), split("a", "bc"));
        assert_eq!(split("ab", "c"), split("ab", "c"));
    }
}
