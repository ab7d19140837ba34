// SPDX-License-Identifier: GPL-2.0
//! What an installed compiler answered to `-vV` and `--print sysroot`, kept under
//! `target/toolchains/answers/` with the stamps of its files, so that a warm run starts no
//! compiler just to ask again; any changed stamp asks again.

use crate::files::{read_text, write_atomically};
use crate::json::{self, Value};
use crate::version::{parse_verbose_version, RustcVersion};
use std::hash::{Hash, Hasher};
use std::path::PathBuf;

/// The file for these stamps: its name only spreads the entries, the stamps inside decide.
fn path(stamps: &str) -> PathBuf {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    stamps.hash(&mut hasher);
    crate::debian::toolchains_dir()
        .join("answers")
        .join(format!("{:016x}.json", hasher.finish()))
}

/// The kept answers for exactly these stamps, if there are any.
pub(super) fn load(stamps: &str) -> Option<(RustcVersion, PathBuf)> {
    let entry = json::parse(&read_text(&path(stamps), 1 << 20).ok()?).ok()?;
    if entry.get("stamps")?.as_str()? != stamps {
        return None;
    }
    let version = parse_verbose_version(entry.get("verbose_version")?.as_str()?).ok()?;
    let sysroot = PathBuf::from(entry.get("sysroot")?.as_str()?);
    Some((version, sysroot))
}

/// Keeps the answers for these stamps; one that cannot be written costs a question next time.
pub(super) fn store(stamps: &str, version: &RustcVersion, sysroot: &std::path::Path) {
    let entry = json::object(vec![
        ("stamps".into(), Value::from(stamps)),
        ("verbose_version".into(), Value::from(version.raw.as_str())),
        (
            "sysroot".into(),
            Value::from(sysroot.to_string_lossy().into_owned()),
        ),
    ]);
    let _ = write_atomically(&path(stamps), json::to_pretty(&entry).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_answers_need_the_very_same_stamps() {
        let text = "rustc 1.85.0 (4d91de4e4 2025-02-17)\nbinary: rustc\n\
                    commit-hash: 4d91de4e48198da2e33413efdcd9cd2cc0c46688\n\
                    commit-date: 2025-02-17\nhost: x86_64-unknown-linux-gnu\nrelease: 1.85.0\n\
                    LLVM version: 19.1.7\n";
        let version = parse_verbose_version(text).unwrap();
        let stamps = format!("/kshim/test/rustc 1 {}\n", std::process::id());
        store(&stamps, &version, std::path::Path::new("/kshim/test"));
        let (kept, sysroot) = load(&stamps).expect("the answers just kept");
        assert_eq!(kept.raw, version.raw);
        assert_eq!(sysroot, PathBuf::from("/kshim/test"));
        assert!(load(&stamps.replace(" 1 ", " 2 ")).is_none());
        let _ = std::fs::remove_file(path(&stamps));
    }
}
