// SPDX-License-Identifier: GPL-2.0
//! What a compiler says about one feature name: stable since a release, gated, unknown or
//! removed, with the one encoding (a word and a release) that everything writes and reads.

use crate::catalog::Release;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Stable since this release: `#![feature]` is no longer needed.
    Stable(Release),
    /// Known and still unstable: usable only behind `#![feature]` with `RUSTC_BOOTSTRAP=1`.
    Gated,
    /// The compiler does not know the name (E0635).
    Unknown,
    /// The feature existed once and was removed (E0557).
    Removed,
}

impl Status {
    /// The status as one word, the report's `observed`/`expected` value.
    pub fn word(self) -> &'static str {
        match self {
            Status::Stable(_) => "stable",
            Status::Gated => "gated",
            Status::Unknown => "unknown",
            Status::Removed => "removed",
        }
    }

    /// Reads a status back from its word and release, as [`Status::word`] and
    /// [`Status::stable_since`] write it: the one encoding that the cache, the report and the
    /// docs share. `None` for an unknown word, or `stable` without a release.
    pub fn from_parts(word: &str, stable_since: Option<Release>) -> Option<Status> {
        let stable = stable_since.map(Status::Stable);
        [Status::Gated, Status::Unknown, Status::Removed]
            .into_iter()
            .chain(stable)
            .find(|status| status.word() == word)
    }

    /// The release that stabilized it, for a stable feature.
    pub fn stable_since(self) -> Option<Release> {
        match self {
            Status::Stable(since) => Some(since),
            _ => None,
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Stable(since) if since.patch == 0 => {
                write!(formatter, "stable {}.{}", since.major, since.minor)
            }
            Status::Stable(since) => write!(formatter, "stable {since}"),
            other => formatter.write_str(other.word()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_its_parts() {
        for status in [
            Status::Stable(Release::new(1, 84, 1)),
            Status::Gated,
            Status::Unknown,
            Status::Removed,
        ] {
            assert_eq!(
                Status::from_parts(status.word(), status.stable_since()),
                Some(status)
            );
        }
        assert_eq!(Status::from_parts("stable", None), None);
        assert_eq!(Status::from_parts("probe-failed", None), None);
    }
}
