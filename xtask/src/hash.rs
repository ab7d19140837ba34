//! Stable hashes and cheap file stamps: FNV-1a-128 over length-prefixed fields, the same on
//! every machine and every build of the xtask, for the cache's keys and the names of output
//! directories; a file's contents hashed; a file's stat stamp.

use crate::files;
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

/// The largest input or compiler file hashed.
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
