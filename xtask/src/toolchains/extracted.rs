// SPDX-License-Identifier: GPL-2.0
//! Parts of one Debian package extracted into a prefix of their own, such as a compiler's
//! library sources or qemu's emulators: complete only once the marker that names the package,
//! its suite and its `.deb`'s SHA-256 is in place.

use crate::toolchains::apt;
use std::path::{Path, PathBuf};

pub(crate) const MARKER: &str = "kshim-extracted.txt";

/// What an extracted prefix's marker says: `NAME=VERSION (SUITE)` on its first line, then
/// `KEY: VALUE` lines, `sha256` among them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Marker {
    pub package: String,
    pub version: String,
    pub suite: String,
    pub sha256: String,
    /// Facts about what was extracted, such as where the sources' `library/` is.
    pub fields: Vec<(String, String)>,
}

impl Marker {
    /// `NAME=VERSION (SUITE)`: the package exactly, as reports and cache keys name it.
    pub(crate) fn identity(&self) -> String {
        format!("{}={} ({})", self.package, self.version, self.suite)
    }

    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        let (_, value) = self.fields.iter().find(|(name, _)| name == key)?;
        Some(value)
    }

    pub(crate) fn render(&self) -> String {
        let mut text = format!("{}\nsha256: {}\n", self.identity(), self.sha256);
        for (key, value) in &self.fields {
            text.push_str(&format!("{key}: {value}\n"));
        }
        text
    }

    /// Reads a marker's text; `None` unless it names a package, an exact version, a suite and
    /// a SHA-256.
    pub(crate) fn parse(text: &str) -> Option<Marker> {
        let mut lines = text.lines();
        let (spec, suite) = lines.next()?.trim().split_once(" (")?;
        let suite = suite.strip_suffix(')')?;
        let (package, version) = spec.split_once('=')?;
        if !apt::is_package_name(package) || !apt::is_version(version) || !apt::is_suite(suite) {
            return None;
        }
        let fields = lines.map(|line| {
            let (key, value) = line.split_once(": ")?;
            Some((key.to_owned(), value.to_owned()))
        });
        let fields: Vec<(String, String)> = fields.collect::<Option<_>>()?;
        let (hashes, fields): (Vec<_>, _) =
            fields.into_iter().partition(|(key, _)| key == "sha256");
        let (_, sha256) = hashes.into_iter().next_back()?;
        let lower_hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
        if sha256.len() != 64 || !sha256.bytes().all(lower_hex) {
            return None;
        }
        Some(Marker {
            package: package.to_owned(),
            version: version.to_owned(),
            suite: suite.to_owned(),
            sha256,
            fields,
        })
    }

    pub(crate) fn read(prefix: &Path) -> Option<Marker> {
        Marker::parse(&std::fs::read_to_string(prefix.join(MARKER)).ok()?)
    }
}

/// An extracted prefix, and what making it cost: bytes fetched (0 from the download cache), of
/// the `.deb` and of the files extracted, and the seconds fetching and extracting took.
#[derive(Debug, Clone, Default)]
pub(crate) struct Extracted {
    pub prefix: PathBuf,
    pub marker: Marker,
    /// Whether it was already there (nothing fetched or extracted).
    pub already: bool,
    pub fetched_bytes: u64,
    pub deb_bytes: u64,
    pub extracted_bytes: u64,
    pub seconds: (f64, f64),
}

/// What to extract from which package (at `version`, or the newest `suites` serve), and where.
pub(crate) struct Wanted<'a> {
    pub package: &'a str,
    pub version: Option<&'a str>,
    pub suites: &'a [String],
    pub prefix: PathBuf,
    /// Chooses the members to extract from every member the package has (as
    /// [`apt::list_members`] names them), or says why the package will not do.
    pub select: &'a dyn Fn(&[String]) -> anyhow::Result<Vec<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_round_trip_and_refuse_what_is_incomplete() {
        let marker = Marker {
            package: "rust-web-src".into(),
            version: "1.96.0+dfsg1-1~deb12u2".into(),
            suite: "bookworm-security".into(),
            sha256: "0123456789abcdef".repeat(4),
            fields: vec![("library".into(), "usr/src/rustc-1.96.0/library".into())],
        };
        let text = marker.render();
        assert!(text.starts_with("rust-web-src=1.96.0+dfsg1-1~deb12u2 (bookworm-security)\n"));
        assert_eq!(Marker::parse(&text), Some(marker.clone()));
        assert_eq!(marker.get("library"), Some("usr/src/rustc-1.96.0/library"));
        let without_hash: String = text
            .lines()
            .filter(|line| !line.starts_with("sha256"))
            .map(|line| format!("{line}\n"))
            .collect();
        assert_eq!(Marker::parse(&without_hash), None);
        for bad in [
            "",
            "rust-src (sid)\n",
            "rust-src=1.97.1 sid\n",
            "rust-src=--help (sid)\n",
            "rust-src=1.97.1 (Sid)\n",
        ] {
            let text = format!("{bad}sha256: {}\n", "a".repeat(64));
            assert_eq!(Marker::parse(&text), None, "{bad:?}");
        }
        let short_hash = text.replace(&marker.sha256, "abc");
        assert_eq!(Marker::parse(&short_hash), None);
    }
}
