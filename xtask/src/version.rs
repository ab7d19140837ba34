//! What a compiler says about itself: the parser for `rustc -vV`.
//!
//! Every way a compiler reaches the xtask (rustup, a path, a Debian package unpacked under
//! `target/`) ends in one question, "which release is this?", and the only trustworthy answer
//! is the compiler's own `rustc -vV`. The output looks like this:
//!
//! ```text
//! rustc 1.85.0 (4d91de4e4 2025-02-17) (built from a source tarball)
//! binary: rustc
//! commit-hash: 4d91de4e48198da2e33413efdcd9cd2cc0c46688
//! commit-date: 2025-02-17
//! host: x86_64-unknown-linux-gnu
//! release: 1.85.0
//! LLVM version: 19.1.7
//! ```
//!
//! The parser trusts the `release:` line for the version (the first line's text after the
//! version is free-form: distributions append things like "(built from a source tarball)"),
//! accepts `unknown` where Debian's 1.63.0 writes it, and rejects everything it cannot read
//! with an error that quotes what it got.

use crate::catalog::Release;
use std::fmt;

/// The release channel, from the suffix of the `release:` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// No suffix: `1.85.0`.
    Stable,
    /// `-beta` or `-beta.N`: `1.86.0-beta.3`.
    Beta,
    /// `-nightly`: `1.97.0-nightly`.
    Nightly,
    /// `-dev`: a compiler built from a local checkout of rust-lang/rust.
    Dev,
}

impl Channel {
    /// The channel's name as rustup and the release notes write it.
    pub fn name(self) -> &'static str {
        match self {
            Channel::Stable => "stable",
            Channel::Beta => "beta",
            Channel::Nightly => "nightly",
            Channel::Dev => "dev",
        }
    }
}

impl fmt::Display for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything `rustc -vV` reports, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RustcVersion {
    /// The release without its channel suffix: 1.97.0 for "1.97.0-nightly".
    pub release: Release,
    /// The channel, from the release's suffix.
    pub channel: Channel,
    /// The full commit hash, or `None` where the compiler says `unknown`.
    pub commit_hash: Option<String>,
    /// The commit date, `YYYY-MM-DD`, or `None` where the compiler says `unknown`.
    pub commit_date: Option<String>,
    /// The host target triple: `x86_64-unknown-linux-gnu`.
    pub host: String,
    /// The LLVM version, if the compiler reports one.
    pub llvm_version: Option<String>,
    /// The first line as printed, e.g. "rustc 1.85.0 (4d91de4e4 2025-02-17) (built from a source tarball)".
    pub first_line: String,
    /// The whole output, unchanged, so that callers can key caches on it.
    pub raw: String,
}

impl RustcVersion {
    /// The release as `rustc -vV` writes it, suffix included: "1.97.0-nightly", "1.85.0".
    pub fn release_string(&self) -> String {
        self.raw
            .lines()
            .find_map(|line| line.trim_end_matches('\r').strip_prefix("release: "))
            .map(|release| release.trim().to_owned())
            .unwrap_or_else(|| self.release.to_string())
    }

    /// A one-line summary for reports: "1.85.0 stable (2025-02-17)".
    pub fn summary(&self) -> String {
        let date = self.commit_date.as_deref().unwrap_or("commit date unknown");
        format!("{} {} ({date})", self.release, self.channel)
    }
}

/// Why a `rustc -vV` text could not be read; its message quotes the text it got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionError {
    /// What was wrong, in one sentence.
    pub problem: String,
    /// The text that was being parsed.
    pub text: String,
}

impl fmt::Display for VersionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot read `rustc -vV` output: {}; ", self.problem)?;
        if self.text.trim().is_empty() {
            write!(f, "it printed nothing")?;
            if !self.text.is_empty() {
                write!(f, " but whitespace ({:?})", self.text)?;
            }
            Ok(())
        } else {
            // Long garbage (an error page, a binary) would drown the message; what was wrong
            // shows in the first lines.
            const SHOWN: usize = 600;
            let shown: String = self.text.chars().take(SHOWN).collect();
            let more = if shown.len() < self.text.len() {
                "..."
            } else {
                ""
            };
            write!(f, "it printed:\n{}{more}", shown.trim_end())
        }
    }
}

impl std::error::Error for VersionError {}

/// Parses the output of `rustc -vV`.
///
/// Lines may end in `\n` or `\r\n`. The first non-empty line must be `rustc VERSION ...`, and
/// its VERSION must agree with the `release:` line, which must be present. Lines after the
/// first that are not `key: value` pairs, and keys it does not know, are ignored: newer
/// compilers add keys, and wrappers sometimes append notes.
///
/// # Examples
///
/// ```
/// use xtask::version::{parse_verbose_version, Channel};
///
/// let text = "rustc 1.63.0\nbinary: rustc\ncommit-hash: unknown\ncommit-date: unknown\n\
///             host: x86_64-unknown-linux-gnu\nrelease: 1.63.0\nLLVM version: 14.0.6\n";
/// let version = parse_verbose_version(text).unwrap();
/// assert_eq!(version.release.to_string(), "1.63.0");
/// assert_eq!(version.channel, Channel::Stable);
/// assert_eq!(version.commit_date, None);
/// ```
pub fn parse_verbose_version(text: &str) -> Result<RustcVersion, VersionError> {
    let error = |problem: String| VersionError {
        problem,
        text: text.to_owned(),
    };
    let mut lines = text
        .lines()
        .map(|line| line.trim_end_matches('\r'))
        .skip_while(|line| line.trim().is_empty());
    let first_line = lines
        .next()
        .ok_or_else(|| error("the output is empty".to_owned()))?;
    let first_version = first_line
        .strip_prefix("rustc ")
        .and_then(|rest| rest.split_whitespace().next())
        .ok_or_else(|| {
            error(format!(
                "the first line is not `rustc VERSION ...`: {first_line:?}"
            ))
        })?;

    let mut fields = Fields::default();
    for line in lines {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        let slot = match key.trim() {
            "commit-hash" => &mut fields.commit_hash,
            "commit-date" => &mut fields.commit_date,
            "host" => &mut fields.host,
            "release" => &mut fields.release,
            "LLVM version" => &mut fields.llvm_version,
            _ => continue,
        };
        if let Some(earlier) = slot {
            if earlier != value {
                return Err(error(format!(
                    "the key `{}` appears twice, with `{earlier}` and `{value}`",
                    key.trim()
                )));
            }
        }
        *slot = Some(value.to_owned());
    }

    let release_text = fields
        .release
        .ok_or_else(|| error("there is no `release:` line".to_owned()))?;
    if release_text != first_version {
        return Err(error(format!(
            "the first line says `{first_version}` but the `release:` line says `{release_text}`"
        )));
    }
    let (release, channel) = parse_release(&release_text).map_err(error)?;
    let host = fields
        .host
        .filter(|host| !host.is_empty())
        .ok_or_else(|| error("there is no `host:` line".to_owned()))?;
    let known =
        |value: Option<String>| value.filter(|value| value != "unknown" && !value.is_empty());
    let commit_date = known(fields.commit_date);
    if let Some(date) = &commit_date {
        if !is_iso_date(date) {
            return Err(error(format!("the commit date `{date}` is not YYYY-MM-DD")));
        }
    }
    Ok(RustcVersion {
        release,
        channel,
        commit_hash: known(fields.commit_hash),
        commit_date,
        host,
        llvm_version: known(fields.llvm_version),
        first_line: first_line.to_owned(),
        raw: text.to_owned(),
    })
}

/// Parses a release as `rustc -vV` writes it: `1.85.0`, `1.86.0-beta.3`, `1.97.0-nightly`,
/// `1.90.0-dev`.
///
/// The error is a sentence naming the text, for [`VersionError::problem`] and the pin file's
/// messages.
pub fn parse_release(text: &str) -> Result<(Release, Channel), String> {
    let (number, suffix) = match text.split_once('-') {
        Some((number, suffix)) => (number, Some(suffix)),
        None => (text, None),
    };
    let release = Release::parse(number).ok_or_else(|| {
        format!("the release `{text}` is not MAJOR.MINOR.PATCH with an optional -beta.N, -nightly or -dev")
    })?;
    let channel = match suffix {
        None => Channel::Stable,
        Some("nightly") => Channel::Nightly,
        Some("dev") => Channel::Dev,
        Some("beta") => Channel::Beta,
        Some(beta) if beta.strip_prefix("beta.").is_some_and(is_decimal) => Channel::Beta,
        Some(other) => {
            return Err(format!(
                "the release `{text}` has the suffix `-{other}`, which is none of -beta.N, -nightly, -dev"
            ))
        }
    };
    Ok((release, channel))
}

/// Whether `text` is a date written `YYYY-MM-DD` (digits in the right places; the calendar is
/// the compiler's business).
pub fn is_iso_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 10
        && bytes.iter().enumerate().all(|(index, byte)| match index {
            4 | 7 => *byte == b'-',
            _ => byte.is_ascii_digit(),
        })
}

fn is_decimal(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit())
}

#[derive(Default)]
struct Fields {
    commit_hash: Option<String>,
    commit_date: Option<String>,
    host: Option<String>,
    release: Option<String>,
    llvm_version: Option<String>,
}
