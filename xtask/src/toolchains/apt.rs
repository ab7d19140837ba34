// SPDX-License-Identifier: GPL-2.0
//! A private apt under `target/` that reaches any Debian suite without touching the system's
//! apt or dpkg state, and what is built on it: a compiler's shared-library closure, verified
//! downloads and atomic unpacking.

mod closure;
mod private;
mod syntax;
#[cfg(test)]
mod tests;
mod unpack;

pub(crate) use closure::{closure, HostLibraries, PackageIndex, Resolved};
pub(crate) use private::{AptIndex, PrivateApt};
pub(crate) use syntax::{
    compare_versions, parse_madison_entries, parse_relations, parse_reverse_provides,
    parse_stanzas, Relation, Served, Stanza,
};
pub(crate) use unpack::{extract_atomically, list_members, unpack_atomically};

use anyhow::ensure;

pub(crate) const ARCHIVE_KEYRING: &str = "/usr/share/keyrings/debian-archive-keyring.gpg";

/// The machine's own sources, whose URIs the private apt reuses.
pub(crate) const HOST_SOURCES: &str = "/etc/apt/sources.list.d/debian.sources";

/// The source package of the C library: a package built from it can only run under its own
/// loader, so a closure that needs it cannot borrow the host's loader.
pub(crate) const C_LIBRARY_SOURCE: &str = "glibc";

/// Whether `name` is a Debian package name: `[a-z0-9][a-z0-9+.-]+` (Policy 5.6.1).
pub(crate) fn is_package_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    bytes.len() >= 2
        && (bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit())
        && bytes
            .iter()
            .all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"+.-".contains(&b))
}

/// Whether `version` is a Debian version, `[epoch:]upstream[-revision]` (Policy 5.6.12).
pub(crate) fn is_version(version: &str) -> bool {
    let (epoch, rest) = version
        .split_once(':')
        .map_or((None, version), |(epoch, rest)| (Some(epoch), rest));
    if epoch.is_some_and(|epoch| epoch.is_empty() || !epoch.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    let (upstream, revision) = rest
        .rsplit_once('-')
        .map_or((rest, None), |(upstream, revision)| {
            (upstream, Some(revision))
        });
    let allowed = |b: u8| b.is_ascii_alphanumeric() || b"+.~".contains(&b);
    // Upstream may hold a `:` only after an epoch and a `-` only before a revision.
    let in_upstream =
        |b: u8| allowed(b) || (b == b':' && epoch.is_some()) || (b == b'-' && revision.is_some());
    upstream.as_bytes().first().is_some_and(u8::is_ascii_digit)
        && upstream.bytes().all(in_upstream)
        && revision.is_none_or(|revision| !revision.is_empty() && revision.bytes().all(allowed))
}

/// Whether `suite` is a suite or codename as the archive names them: `bookworm-security`.
pub(crate) fn is_suite(suite: &str) -> bool {
    let bytes = suite.as_bytes();
    !bytes.is_empty()
        && bytes[0].is_ascii_lowercase()
        && bytes
            .iter()
            .all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-.".contains(&b))
}

/// `text` if it is `valid` and at most `max` bytes long: what may reach apt as an argument.
fn checked<'a>(text: &'a str, valid: bool, max: usize, what: &str) -> anyhow::Result<&'a str> {
    ensure!(
        valid && text.len() <= max,
        "`{}` is not a Debian {what}",
        text.escape_debug()
    );
    Ok(text)
}

pub(crate) fn checked_package(name: &str) -> anyhow::Result<&str> {
    let what = "package name (lowercase letters, digits, `+`, `-`, `.`; at least two)";
    checked(name, is_package_name(name), 100, what)
}

pub(crate) fn checked_version(version: &str) -> anyhow::Result<&str> {
    let what = "version ([epoch:]upstream[-revision], upstream starting with a digit)";
    checked(version, is_version(version), 100, what)
}

pub(crate) fn checked_suite(suite: &str) -> anyhow::Result<&str> {
    let what = "suite name (such as `trixie` or `bookworm-security`)";
    checked(suite, is_suite(suite), 64, what)
}
