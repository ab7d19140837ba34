// SPDX-License-Identifier: GPL-2.0
//! Parts of one Debian package extracted into a prefix of their own, such as a compiler's
//! library sources or qemu's emulators: complete only once the marker that names the package,
//! its suite and its `.deb`'s SHA-256 is in place.

use crate::toolchains::apt;
use crate::toolchains::debian::Provisioner;
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub(crate) const MARKER: &str = "kshim-extracted.txt";

/// What an extracted prefix's marker says: `NAME=VERSION (SUITE)` on its first line, then
/// `KEY: VALUE` lines, `sha256` among them.
#[derive(Debug, Clone, PartialEq, Eq)]
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
#[derive(Debug, Clone)]
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

impl Extracted {
    pub(crate) fn already(prefix: PathBuf, marker: Marker) -> Extracted {
        Extracted {
            prefix,
            marker,
            already: true,
            fetched_bytes: 0,
            deb_bytes: 0,
            extracted_bytes: 0,
            seconds: (0.0, 0.0),
        }
    }
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

/// Extracts `wanted` into its prefix, unless a complete prefix of the package (at the version
/// wanted, if one is named) is there already. `check` runs on the staging directory before it
/// takes the prefix's place, and returns the marker's fields.
pub(crate) fn provision(
    provisioner: &mut Provisioner<'_>,
    wanted: &Wanted<'_>,
    check: impl FnOnce(&Path) -> anyhow::Result<Vec<(String, String)>>,
) -> anyhow::Result<Extracted> {
    if let Some(marker) = Marker::read(&wanted.prefix).filter(|marker| {
        marker.package == wanted.package
            && wanted
                .version
                .is_none_or(|version| version == marker.version)
            && provisioner.intact(&wanted.prefix, &marker.identity())
    }) {
        return Ok(Extracted::already(wanted.prefix.clone(), marker));
    }
    let (deb, resolved, downloaded) =
        provisioner.fetch_one(wanted.package, wanted.version, wanted.suites)?;
    let started = Instant::now();
    let members = apt::list_members(&deb)
        .and_then(|members| (wanted.select)(&members))
        .with_context(|| format!("choosing what to extract from {resolved}"))?;
    let mut marker = Marker {
        package: resolved.name.clone(),
        version: resolved.version.clone(),
        suite: resolved.suite.clone(),
        sha256: resolved.sha256.clone(),
        fields: Vec::new(),
    };
    let mut extracted_bytes = 0;
    apt::extract_atomically(&deb, &members, &wanted.prefix, |staging| {
        marker.fields = check(staging)?;
        std::fs::write(staging.join(MARKER), marker.render())
            .with_context(|| format!("writing the marker in {}", staging.display()))?;
        extracted_bytes = crate::toolchains::digests::record(staging)?;
        Ok(())
    })
    .with_context(|| format!("extracting {resolved} into {}", wanted.prefix.display()))?;
    Ok(Extracted {
        prefix: wanted.prefix.clone(),
        marker,
        already: false,
        fetched_bytes: downloaded.fetched_bytes,
        deb_bytes: resolved.size,
        extracted_bytes,
        seconds: (downloaded.seconds, started.elapsed().as_secs_f64()),
    })
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
