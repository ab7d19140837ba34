// SPDX-License-Identifier: GPL-2.0
//! What an installed compiler answered to `-vV` and `--print sysroot`, kept under
//! `target/toolchains/answers/` with the stamps of its files, so that a warm run starts no
//! compiler just to ask again; any changed stamp asks again.

use crate::toolchains::version::{parse_verbose_version, RustcVersion};
use crate::util::files::{read_text, write_atomically};
use crate::util::json::{self, Deserialize, Serialize};
use std::hash::{Hash, Hasher};
use std::path::PathBuf;

/// The file for these stamps: its name only spreads the entries, the stamps inside decide.
fn path(stamps: &str) -> PathBuf {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    stamps.hash(&mut hasher);
    crate::toolchains::debian::toolchains_dir()
        .join("answers")
        .join(format!("{:016x}.json", hasher.finish()))
}

/// What is kept: the answers and the stamps they were given for.
#[derive(Serialize, Deserialize)]
struct Answers {
    stamps: String,
    verbose_version: String,
    sysroot: PathBuf,
}

/// The kept answers for exactly these stamps, if there are any.
pub(super) fn load(stamps: &str) -> Option<(RustcVersion, PathBuf)> {
    let entry: Answers = json::read(&read_text(&path(stamps), 1 << 20).ok()?).ok()?;
    if entry.stamps != stamps {
        return None;
    }
    Some((
        parse_verbose_version(&entry.verbose_version).ok()?,
        entry.sysroot,
    ))
}

/// Keeps the answers for these stamps; one that cannot be written costs a question next time.
pub(super) fn store(stamps: &str, version: &RustcVersion, sysroot: &std::path::Path) {
    let entry = Answers {
        stamps: stamps.to_string(),
        verbose_version: version.raw.clone(),
        sysroot: sysroot.to_path_buf(),
    };
    let _ = write_atomically(
        &path(stamps),
        json::to_pretty(&json::to_value(&entry)).as_bytes(),
    );
}
