//! The matrix's result cache: one small JSON file per step under `target/kshim/cache/`, named by
//! a stable hash of everything that can change the step's result.
//!
//! The key covers the compiler's identity (path, size, modification time and its whole
//! `rustc -vV` text), the exact command line and environment, the contents of every input
//! file, and the keys of the steps it depends on. std's `DefaultHasher` is not stable across
//! Rust releases, so the hash is FNV-1a with 128 bits, written out here.

use crate::report::json::Value;
use anyhow::Context;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A 128-bit FNV-1a hash of a sequence of length-prefixed fields.
#[derive(Clone, Debug)]
pub struct StableHasher {
    state: u128,
}

const FNV_OFFSET_BASIS: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
const FNV_PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;

impl Default for StableHasher {
    fn default() -> Self {
        Self::new()
    }
}

impl StableHasher {
    /// A hasher in its initial state.
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

    /// Adds a number as one field.
    pub fn number(&mut self, number: u128) -> &mut Self {
        self.field(number.to_le_bytes())
    }

    /// The hash of everything added so far.
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

/// Hashes a file's contents, naming the file in the error.
pub fn hash_file(path: &Path) -> anyhow::Result<Key> {
    let bytes = fs::read(path).with_context(|| format!("reading {}", path.display()))?;
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

/// Writes a file so that readers see the old contents or the new, never a torn mix: a
/// temporary file in the same directory, then a rename over the target.
pub fn write_atomically(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let directory = path
        .parent()
        .with_context(|| format!("{} has no parent directory", path.display()))?;
    fs::create_dir_all(directory).with_context(|| format!("creating {}", directory.display()))?;
    let file_name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = directory.join(format!(
        ".{file_name}.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    fs::write(&temporary, contents).with_context(|| format!("writing {}", temporary.display()))?;
    fs::rename(&temporary, path).with_context(|| {
        let _ = fs::remove_file(&temporary);
        format!("renaming {} to {}", temporary.display(), path.display())
    })
}

/// The cache directory and whether reading from it is allowed (`--no-cache` still writes).
#[derive(Clone, Debug)]
pub struct Cache {
    directory: PathBuf,
    read: bool,
}

impl Cache {
    /// A cache in `directory`; with `read` false, lookups always miss.
    pub fn new(directory: PathBuf, read: bool) -> Self {
        Self { directory, read }
    }

    fn path(&self, key: Key) -> PathBuf {
        self.directory.join(format!("{key}.json"))
    }

    /// The stored entry for `key`, if reading is allowed and a well-formed entry exists.
    pub fn load(&self, key: Key) -> Option<Value> {
        if !self.read {
            return None;
        }
        let text = fs::read_to_string(self.path(key)).ok()?;
        // A damaged entry is a miss; the rerun overwrites it.
        crate::report::json::parse(&text).ok()
    }

    /// Stores an entry for `key`, atomically.
    pub fn store(&self, key: Key, entry: &Value) -> anyhow::Result<()> {
        write_atomically(&self.path(key), entry.to_string().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
