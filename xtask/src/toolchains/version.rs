// SPDX-License-Identifier: GPL-2.0
//! What a compiler says about itself: the parser for `rustc -vV` (the tests hold real outputs),
//! the one trustworthy answer to "which release is this?" however the compiler was found. The
//! first line's text after the version is free-form (distributions append such as "(built from
//! a source tarball)"), and Debian's 1.63.0 writes `unknown` for the commit.

use crate::catalog::Release;
use std::collections::HashMap;

/// The release channel, from the suffix of the `release:` line: none, `-beta[.N]`, `-nightly`,
/// or `-dev` (a compiler built from a local checkout of rust-lang/rust).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    Stable,
    Beta,
    Nightly,
    Dev,
}

impl Channel {
    pub fn name(self) -> &'static str {
        match self {
            Channel::Stable => "stable",
            Channel::Beta => "beta",
            Channel::Nightly => "nightly",
            Channel::Dev => "dev",
        }
    }
}

/// Everything `rustc -vV` reports, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RustcVersion {
    /// The release without its channel suffix: 1.97.0 for "1.97.0-nightly".
    pub release: Release,
    pub channel: Channel,
    /// `YYYY-MM-DD`, or `None` where the compiler says `unknown`.
    pub commit_date: Option<String>,
    pub host: String,
    pub llvm_version: Option<String>,
    /// The first line as printed, e.g. "rustc 1.85.0 (4d91de4e4 2025-02-17) (built from a source tarball)".
    pub first_line: String,
    /// The whole output, unchanged, so that callers can key caches on it.
    pub raw: String,
    /// `rustc --print sysroot`, once [`crate::toolchains::discovery::verify`] has checked that it
    /// has `core` for the host; `None` from the parser alone.
    pub sysroot: Option<std::path::PathBuf>,
}

impl RustcVersion {
    /// The release as `rustc -vV` writes it, suffix included: "1.97.0-nightly", "1.85.0".
    pub fn release_string(&self) -> String {
        // The parser made sure that the `release:` line says what the first line says.
        version_in(&self.first_line).map_or_else(|| self.release.to_string(), str::to_owned)
    }

    /// A one-line summary for reports: "1.85.0 stable (2025-02-17)".
    pub fn summary(&self) -> String {
        let date = self.commit_date.as_deref().unwrap_or("commit date unknown");
        format!("{} {} ({date})", self.release, self.channel.name())
    }
}

/// Why a `rustc -vV` text could not be read, quoting the text: its first 600 characters, as
/// long garbage (an error page, a binary) would drown the message.
fn unreadable(problem: String, text: &str) -> anyhow::Error {
    let shown: String = text.chars().take(600).collect();
    let more = if shown.len() < text.len() { "..." } else { "" };
    let quoted = if text.is_empty() {
        "it printed nothing".to_owned()
    } else if text.trim().is_empty() {
        format!("it printed nothing but whitespace ({text:?})")
    } else {
        format!("it printed:\n{}{more}", shown.trim_end())
    };
    anyhow::anyhow!("cannot read `rustc -vV` output: {problem}; {quoted}")
}

const KEYS: [&str; 5] = [
    "commit-hash",
    "commit-date",
    "host",
    "release",
    "LLVM version",
];

/// Parses the output of `rustc -vV`, whose lines may end in `\r\n`. The compiler's lines start
/// at `rustc VERSION ...` (a wrapper script may print lines before it), whose VERSION must agree
/// with the `release:` line, which must be present; lines that are not `key: value`, and keys it
/// does not know, are ignored: newer compilers add keys, and wrappers sometimes append notes.
pub fn parse_verbose_version(text: &str) -> anyhow::Result<RustcVersion> {
    let error = |problem: String| unreadable(problem, text);
    if text.trim().is_empty() {
        return Err(error("the output is empty".to_owned()));
    }
    let lines = text.lines().map(|line| line.trim_end_matches('\r'));
    let mut lines = lines.skip_while(|line| version_in(line).is_none());
    let first_line = lines.next().ok_or_else(|| {
        error("the first line is not `rustc VERSION ...` (nor is any later line)".to_owned())
    })?;
    let first_version = version_in(first_line).unwrap_or_default();

    let mut fields: HashMap<&str, &str> = HashMap::new();
    let pairs = lines.filter_map(|line| line.split_once(':'));
    let pairs = pairs.map(|(key, value)| (key.trim(), value.trim()));
    for (key, value) in pairs.filter(|(key, _)| KEYS.contains(key)) {
        if let Some(earlier) = fields
            .insert(key, value)
            .filter(|earlier| *earlier != value)
        {
            return Err(error(format!(
                "the key `{key}` appears twice, with `{earlier}` and `{value}`"
            )));
        }
    }
    let field = |key: &str| fields.get(key).map(|value| value.to_string());

    let release_text =
        field("release").ok_or_else(|| error("there is no `release:` line".to_owned()))?;
    if release_text != first_version {
        return Err(error(format!(
            "the first line says `{first_version}` but the `release:` line says `{release_text}`"
        )));
    }
    let (release, channel) =
        parse_release(&release_text).map_err(|problem| error(format!("{problem:#}")))?;
    let host = field("host")
        .filter(|host| !host.is_empty())
        .ok_or_else(|| error("there is no `host:` line".to_owned()))?;
    let known =
        |value: Option<String>| value.filter(|value| value != "unknown" && !value.is_empty());
    let commit_date = known(field("commit-date"));
    if let Some(date) = commit_date.as_ref().filter(|date| !is_iso_date(date)) {
        return Err(error(format!("the commit date `{date}` is not YYYY-MM-DD")));
    }
    Ok(RustcVersion {
        release,
        channel,
        commit_date,
        host,
        llvm_version: known(field("LLVM version")),
        first_line: first_line.to_owned(),
        raw: text.to_owned(),
        sysroot: None,
    })
}

/// The VERSION of a `rustc VERSION ...` line.
fn version_in(line: &str) -> Option<&str> {
    line.strip_prefix("rustc ")?.split_whitespace().next()
}

/// Parses a release as `rustc -vV` writes it: `1.85.0`, `1.86.0-beta.3`, `1.97.0-nightly`,
/// `1.90.0-dev`; the error is a sentence naming the text.
pub fn parse_release(text: &str) -> anyhow::Result<(Release, Channel)> {
    let (number, suffix) = text
        .split_once('-')
        .map_or((text, None), |(number, suffix)| (number, Some(suffix)));
    let release = Release::parse(number).ok_or_else(|| {
        anyhow::anyhow!("the release `{text}` is not MAJOR.MINOR.PATCH with an optional -beta.N, -nightly or -dev")
    })?;
    let decimal = |text: &str| !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit());
    let channel = match suffix {
        None => Channel::Stable,
        Some("nightly") => Channel::Nightly,
        Some("dev") => Channel::Dev,
        Some("beta") => Channel::Beta,
        Some(beta) if beta.strip_prefix("beta.").is_some_and(decimal) => Channel::Beta,
        Some(other) => anyhow::bail!(
            "the release `{text}` has the suffix `-{other}`, which is none of -beta.N, -nightly, -dev"
        ),
    };
    Ok((release, channel))
}

/// Whether `text` is a day of the Gregorian calendar written `YYYY-MM-DD`: `2024-02-29` is,
/// `2026-02-30` and `2026-13-01` are not.
pub fn is_iso_date(text: &str) -> bool {
    crate::util::date::check_utc_minute(&format!("{text} 00:00 UTC")).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Real outputs, pasted from the compilers on this project's machines.
    const DEBIAN_1_63: &str = "rustc 1.63.0
binary: rustc
commit-hash: unknown
commit-date: unknown
host: x86_64-unknown-linux-gnu
release: 1.63.0
LLVM version: 14.0.6
";
    const DEBIAN_1_85: &str = "rustc 1.85.0 (4d91de4e4 2025-02-17) (built from a source tarball)
binary: rustc
commit-hash: 4d91de4e48198da2e33413efdcd9cd2cc0c46688
commit-date: 2025-02-17
host: x86_64-unknown-linux-gnu
release: 1.85.0
LLVM version: 19.1.7
";
    const DEBIAN_1_96: &str = "rustc 1.96.0 (ac68faa20 2026-05-25) (built from a source tarball)
binary: rustc
commit-hash: ac68faa20c58cbccd01ee7208bf3b6e93a7d7f96
commit-date: 2026-05-25
host: x86_64-unknown-linux-gnu
release: 1.96.0
LLVM version: 22.1.8
";
    const RUSTUP_1_95: &str = "rustc 1.95.0 (59807616e 2026-04-14)
binary: rustc
commit-hash: 59807616e1fa2540724bfbac14d7976d7e4a3860
commit-date: 2026-04-14
host: x86_64-unknown-linux-gnu
release: 1.95.0
LLVM version: 22.1.2
";
    const NIGHTLY_1_97: &str = "rustc 1.97.0-nightly (e50aa6fba 2026-05-19)
binary: rustc
commit-hash: e50aa6fba4e63ab34c72bf9acfd2c307c1155d1a
commit-date: 2026-05-19
host: x86_64-unknown-linux-gnu
release: 1.97.0-nightly
LLVM version: 22.1.4
";

    fn parsed(text: &str) -> RustcVersion {
        parse_verbose_version(text).unwrap_or_else(|error| panic!("{error}"))
    }

    fn error_of(text: &str) -> String {
        match parse_verbose_version(text) {
            Ok(version) => panic!("parsed {version:?} from {text:?}"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn debian_1_63_without_commit_information() {
        let version = parsed(DEBIAN_1_63);
        assert_eq!(version.release, Release::new(1, 63, 0));
        assert_eq!(version.channel, Channel::Stable);
        assert_eq!(version.commit_date, None);
        assert_eq!(version.host, "x86_64-unknown-linux-gnu");
        assert_eq!(version.llvm_version.as_deref(), Some("14.0.6"));
        assert_eq!(version.first_line, "rustc 1.63.0");
        assert_eq!(version.summary(), "1.63.0 stable (commit date unknown)");
        assert_eq!(version.raw, DEBIAN_1_63);
    }

    #[test]
    fn debian_1_85_built_from_a_source_tarball() {
        let version = parsed(DEBIAN_1_85);
        assert_eq!(version.release, Release::new(1, 85, 0));
        assert_eq!(version.channel, Channel::Stable);
        assert_eq!(version.commit_date.as_deref(), Some("2025-02-17"));
        assert_eq!(version.llvm_version.as_deref(), Some("19.1.7"));
        assert_eq!(
            version.first_line,
            "rustc 1.85.0 (4d91de4e4 2025-02-17) (built from a source tarball)"
        );
        assert_eq!(version.summary(), "1.85.0 stable (2025-02-17)");
    }

    #[test]
    fn debian_1_96() {
        let version = parsed(DEBIAN_1_96);
        assert_eq!(version.release, Release::new(1, 96, 0));
        assert_eq!(version.commit_date.as_deref(), Some("2026-05-25"));
        assert_eq!(version.llvm_version.as_deref(), Some("22.1.8"));
        assert_eq!(version.release_string(), "1.96.0");
    }

    #[test]
    fn rustup_stable_1_95() {
        let version = parsed(RUSTUP_1_95);
        assert_eq!(version.release, Release::new(1, 95, 0));
        assert_eq!(version.channel, Channel::Stable);
        assert_eq!(version.summary(), "1.95.0 stable (2026-04-14)");
    }

    #[test]
    fn nightly_keeps_its_suffix_out_of_the_release() {
        let version = parsed(NIGHTLY_1_97);
        assert_eq!(version.release, Release::new(1, 97, 0));
        assert_eq!(version.channel, Channel::Nightly);
        assert_eq!(version.release_string(), "1.97.0-nightly");
        assert_eq!(version.commit_date.as_deref(), Some("2026-05-19"));
        assert_eq!(version.summary(), "1.97.0 nightly (2026-05-19)");
    }

    #[test]
    fn beta_with_and_without_number() {
        let text = RUSTUP_1_95
            .replace("rustc 1.95.0 ", "rustc 1.86.0-beta.3 ")
            .replace("release: 1.95.0", "release: 1.86.0-beta.3");
        let version = parsed(&text);
        assert_eq!(version.release, Release::new(1, 86, 0));
        assert_eq!(version.channel, Channel::Beta);
        assert_eq!(version.release_string(), "1.86.0-beta.3");
        assert_eq!(
            parse_release("1.86.0-beta").unwrap(),
            (Release::new(1, 86, 0), Channel::Beta)
        );
        assert!(parse_release("1.86.0-beta.").is_err());
        assert!(parse_release("1.86.0-beta.x").is_err());
    }

    #[test]
    fn dev_build() {
        let text = "rustc 1.90.0-dev\nbinary: rustc\ncommit-hash: unknown\ncommit-date: unknown\n\
                    host: aarch64-unknown-linux-gnu\nrelease: 1.90.0-dev\nLLVM version: 20.1.5\n";
        let version = parsed(text);
        assert_eq!(version.channel, Channel::Dev);
        assert_eq!(version.release, Release::new(1, 90, 0));
        assert_eq!(version.host, "aarch64-unknown-linux-gnu");
    }

    #[test]
    fn crlf_line_endings() {
        let version = parsed(&DEBIAN_1_85.replace('\n', "\r\n"));
        assert_eq!(version.release, Release::new(1, 85, 0));
        assert_eq!(version.host, "x86_64-unknown-linux-gnu");
        assert_eq!(version.commit_date.as_deref(), Some("2025-02-17"));
        assert!(!version.first_line.ends_with('\r'));
    }

    #[test]
    fn extra_lines_and_unknown_keys_are_ignored() {
        let text = format!("\n{RUSTUP_1_95}future-key: whatever\nnote from a wrapper script\n\n");
        let version = parsed(&text);
        assert_eq!(version.release, Release::new(1, 95, 0));
        assert_eq!(version.raw, text);
    }

    #[test]
    fn a_wrapper_may_print_lines_before_the_compiler() {
        let text = format!("wrapper: using the cached compiler\nrelease: 9.9.9\n{DEBIAN_1_85}");
        let version = parsed(&text);
        assert_eq!(version.release, Release::new(1, 85, 0));
        assert_eq!(
            version.first_line,
            "rustc 1.85.0 (4d91de4e4 2025-02-17) (built from a source tarball)"
        );
        assert_eq!(version.release_string(), "1.85.0");
    }

    #[test]
    fn without_llvm_line() {
        let text = RUSTUP_1_95.replace("LLVM version: 22.1.2\n", "");
        assert_eq!(parsed(&text).llvm_version, None);
    }

    #[test]
    fn empty_output() {
        let message = error_of("");
        assert!(message.contains("the output is empty"), "{message}");
        assert!(message.contains("it printed nothing"), "{message}");
        let message = error_of(" \n\n");
        assert!(message.contains("but whitespace"), "{message}");
    }

    #[test]
    fn garbage_is_quoted_in_the_error() {
        let message = error_of("Segmentation fault (core dumped)\n");
        assert!(message.contains("not `rustc VERSION ...`"), "{message}");
        assert!(
            message.contains("it printed:\nSegmentation fault (core dumped)"),
            "{message}"
        );
    }

    #[test]
    fn release_without_patch_number() {
        let text = "rustc 1.85\nhost: x86_64-unknown-linux-gnu\nrelease: 1.85\n";
        let message = error_of(text);
        assert!(
            message.contains("the release `1.85` is not MAJOR.MINOR.PATCH"),
            "{message}"
        );
        assert!(message.contains("release: 1.85"), "{message}");
    }

    #[test]
    fn missing_release_line() {
        let text = RUSTUP_1_95.replace("release: 1.95.0\n", "");
        assert!(error_of(&text).contains("there is no `release:` line"));
    }

    #[test]
    fn missing_host_line() {
        let text = RUSTUP_1_95.replace("host: x86_64-unknown-linux-gnu\n", "");
        assert!(error_of(&text).contains("there is no `host:` line"));
    }

    #[test]
    fn first_line_and_release_line_must_agree() {
        let text = RUSTUP_1_95.replace("release: 1.95.0", "release: 1.94.0");
        let message = error_of(&text);
        assert!(
            message.contains("the first line says `1.95.0` but the `release:` line says `1.94.0`"),
            "{message}"
        );
    }

    #[test]
    fn contradicting_repeated_key() {
        let text = format!("{RUSTUP_1_95}host: i686-unknown-linux-gnu\n");
        assert!(error_of(&text).contains("the key `host` appears twice"));
    }

    #[test]
    fn unknown_suffix_and_bad_date() {
        let text = RUSTUP_1_95.replace("1.95.0", "1.95.0-custom");
        assert!(error_of(&text).contains("has the suffix `-custom`"));
        let text = RUSTUP_1_95.replace("commit-date: 2026-04-14", "commit-date: 14.04.2026");
        assert!(error_of(&text).contains("the commit date `14.04.2026` is not YYYY-MM-DD"));
        let text = RUSTUP_1_95.replace("commit-date: 2026-04-14", "commit-date: 2026-04-31");
        assert!(error_of(&text).contains("the commit date `2026-04-31` is not YYYY-MM-DD"));
    }

    #[test]
    fn iso_dates_are_days_of_the_calendar() {
        for good in [
            "2026-05-19",
            "2024-02-29",
            "2000-02-29",
            "1999-12-31",
            "2026-01-01",
        ] {
            assert!(is_iso_date(good), "{good}");
        }
        for bad in [
            "2026-13-45",
            "2026-02-30",
            "2025-02-29",
            "1900-02-29",
            "2026-04-31",
            "2026-00-01",
            "2026-01-00",
            "2026-5-19",
            "2026/05/19",
            "2026-05-19 ",
            "+026-05-19",
            "",
        ] {
            assert!(!is_iso_date(bad), "{bad}");
        }
    }

    #[test]
    fn long_garbage_is_cut() {
        let message = error_of(&"x".repeat(5000));
        assert!(message.ends_with("..."), "{message}");
        assert!(message.len() < 1000, "{}", message.len());
    }
}
