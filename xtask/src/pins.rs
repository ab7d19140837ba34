//! The pin file (`toolchains.toml` at the repository root): every compiler the matrix wants,
//! by the release its `rustc -vV` must report, why it is pinned and how to install it; and
//! [`Shard`], the one rule that splits the pins between CI jobs.

use crate::version::{parse_release, Channel, RustcVersion};
use anyhow::{bail, Context};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Why a release is pinned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PinRole {
    /// The oldest release the kernel supports.
    Minimum,
    /// A release at which a catalog feature stabilized or first appeared.
    Feature,
    /// A compiler Debian ships.
    Debian,
    /// The release `rust-toolchain.toml` pins.
    RustToolchain,
    /// The nightly the project is checked with.
    Nightly,
}

impl PinRole {
    /// Every role, in the order messages list them.
    pub const ALL: [PinRole; 5] = [
        PinRole::Minimum,
        PinRole::Feature,
        PinRole::Debian,
        PinRole::RustToolchain,
        PinRole::Nightly,
    ];

    /// The word the pin file and the output use: `minimum`, `rust-toolchain`.
    pub fn word(self) -> &'static str {
        match self {
            PinRole::Minimum => "minimum",
            PinRole::Feature => "feature",
            PinRole::Debian => "debian",
            PinRole::RustToolchain => "rust-toolchain",
            PinRole::Nightly => "nightly",
        }
    }

    /// The role that `word` names, if any.
    pub fn from_word(word: &str) -> Option<PinRole> {
        PinRole::ALL.into_iter().find(|role| role.word() == word)
    }

    /// What the role means, for people reading `cargo xtask toolchains`.
    pub fn description(self) -> &'static str {
        match self {
            PinRole::Minimum => "the oldest release the kernel supports",
            PinRole::Feature => "a release at which a catalog feature stabilized or first appeared",
            PinRole::Debian => "a compiler Debian ships",
            PinRole::RustToolchain => "the release rust-toolchain.toml pins",
            PinRole::Nightly => "the nightly the project is checked with",
        }
    }
}

impl fmt::Display for PinRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// A Debian package that provides a pinned release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DebianPackage {
    /// The compiler package: `rustc` or `rustc-web`.
    pub package: String,
    /// An exact Debian version, if the pin asks for one; otherwise the newest version the
    /// registry serves whose upstream part is the pin's release.
    pub version: Option<String>,
}

impl fmt::Display for DebianPackage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.version {
            Some(version) => write!(f, "{}={version}", self.package),
            None => f.write_str(&self.package),
        }
    }
}

/// One pinned toolchain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// Its unique id, used in reports.
    pub id: String,
    /// The release as `rustc -vV` must report it: "1.85.0", "1.97.0-nightly".
    pub release: String,
    /// The commit date `rustc -vV` must report, `YYYY-MM-DD`; required for nightlies.
    pub commit_date: Option<String>,
    /// Why it is pinned.
    pub role: PinRole,
    /// The rustup toolchain name that installs it.
    pub rustup: Option<String>,
    /// The Debian package that provides it.
    pub debian: Option<DebianPackage>,
    /// A free-form note for people reading reports.
    pub note: Option<String>,
    /// The line of its `[[pin]]` header in the pin file.
    pub line: usize,
}

impl Pin {
    /// Whether a compiler that printed `version` satisfies this pin.
    pub fn is_satisfied_by(&self, version: &RustcVersion) -> bool {
        version.release_string() == self.release
            && match &self.commit_date {
                Some(date) => version.commit_date.as_deref() == Some(date.as_str()),
                None => true,
            }
    }

    /// The release, with the commit date for pins that have one: "1.97.0-nightly (2026-05-19)".
    pub fn describe_release(&self) -> String {
        match &self.commit_date {
            Some(date) => format!("{} ({date})", self.release),
            None => self.release.clone(),
        }
    }

    /// The exact command that would install a compiler satisfying this pin.
    pub fn install_hint(&self) -> String {
        let rustup = self
            .rustup
            .as_ref()
            .map(|name| format!("rustup toolchain install {name} --profile minimal"));
        let debian = self.debian.as_ref().map(|debian| {
            format!("cargo xtask toolchains install (unpacks Debian's {debian} under target/toolchains/)")
        });
        match (rustup, debian) {
            (Some(rustup), Some(debian)) => format!("{debian}, or {rustup}"),
            (Some(one), None) | (None, Some(one)) => one,
            (None, None) => "no install source in the pin file; install it by hand, then use \
                             --toolchain PATH"
                .to_owned(),
        }
    }
}

/// The pin file, parsed.
#[derive(Debug, Clone)]
pub struct Pins {
    /// The pins, in file order.
    pub pins: Vec<Pin>,
    /// The file they were read from.
    pub path: PathBuf,
}

impl Pins {
    /// The default pin file: `toolchains.toml` at the repository root.
    pub fn default_path() -> PathBuf {
        crate::project_root().join("toolchains.toml")
    }

    /// Reads and parses a pin file; errors name the file and the line.
    pub fn load(path: &Path) -> anyhow::Result<Pins> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the pin file {}", path.display()))?;
        Pins::parse(&text, path)
    }

    /// Parses a pin file's text; `path` is only for messages.
    ///
    /// The file is the TOML subset that pins need: comment lines and trailing comments, blank
    /// lines, `[[pin]]` table headers, and `key = "basic string"` lines (escapes `\"` and `\\`
    /// only). Keys: `id`, `release`, `role` (required); `commit-date` (required for a
    /// nightly), `rustup`, `debian` (`package` or `package=version`), `note`. Every error is
    /// `FILE:LINE: what is wrong`: bad syntax, an unknown key or role, a duplicated key, id or
    /// release, a release or date that is not one.
    pub fn parse(text: &str, path: &Path) -> anyhow::Result<Pins> {
        let file = path.display();
        let mut tables: Vec<(usize, RawTable)> = Vec::new();
        for (index, raw_line) in text.lines().enumerate() {
            let line_number = index + 1;
            let fail = |message: String| anyhow::anyhow!("{file}:{line_number}: {message}");
            let line = raw_line.trim_end_matches('\r').trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if line.starts_with('[') {
                if before_comment(line).trim_end() != "[[pin]]" {
                    return Err(fail(format!(
                        "unknown table `{line}`; the only table is `[[pin]]`"
                    )));
                }
                tables.push((line_number, BTreeMap::new()));
                continue;
            }
            let (key, value) = parse_key_value(line).map_err(fail)?;
            let Some((_, table)) = tables.last_mut() else {
                return Err(fail(format!(
                    "`{key}` is outside any `[[pin]]` table; start each pin with `[[pin]]`"
                )));
            };
            if !PIN_KEYS.contains(&key.as_str()) {
                return Err(fail(format!(
                    "unknown key `{key}`; a pin has {}",
                    PIN_KEYS.join(", ")
                )));
            }
            if let Some((first_line, _)) = table.get(&key) {
                return Err(fail(format!(
                    "duplicate key `{key}` (first set on line {first_line})"
                )));
            }
            table.insert(key, (line_number, value));
        }

        let mut pins: Vec<Pin> = Vec::new();
        for (header_line, mut table) in tables {
            let mut take = |key: &str| table.remove(key);
            let required = |value: Option<(usize, String)>, key: &str| {
                value
                    .ok_or_else(|| anyhow::anyhow!("{file}:{header_line}: this pin has no `{key}`"))
            };
            let (id_line, id) = required(take("id"), "id")?;
            let (release_line, release) = required(take("release"), "release")?;
            let (role_line, role) = required(take("role"), "role")?;
            let commit_date = take("commit-date");
            let rustup = take("rustup");
            let debian = take("debian");
            let note = take("note").map(|(_, note)| note);

            let at = |line: usize, message: String| anyhow::anyhow!("{file}:{line}: {message}");
            if id.is_empty()
                || !id
                    .bytes()
                    .all(|byte| byte.is_ascii_alphanumeric() || b".-_".contains(&byte))
            {
                bail!(at(
                    id_line,
                    format!("the id `{id}` is not a short name of letters, digits, `.`, `-`, `_`")
                ));
            }
            let (_, channel) = parse_release(&release).map_err(|error| at(release_line, error))?;
            let Some(role) = PinRole::from_word(&role) else {
                let words: Vec<&str> = PinRole::ALL.iter().map(|role| role.word()).collect();
                bail!(at(
                    role_line,
                    format!("unknown role `{role}`; the roles are {}", words.join(", "))
                ));
            };
            if let Some((line, date)) = &commit_date {
                if !crate::version::is_iso_date(date) {
                    bail!(at(
                        *line,
                        format!("the commit date `{date}` is not YYYY-MM-DD")
                    ));
                }
            }
            if channel == Channel::Nightly && commit_date.is_none() {
                bail!(at(
                    release_line,
                    format!(
                        "the nightly `{release}` needs a `commit-date`: every nightly of a \
                         cycle reports the same release"
                    )
                ));
            }
            if let Some((line, name)) = &rustup {
                if name.is_empty() || name.contains(char::is_whitespace) {
                    bail!(at(
                        *line,
                        format!("the rustup name `{name}` is not a toolchain name")
                    ));
                }
            }
            let debian = match debian {
                Some((line, value)) => Some(parse_debian(&value).map_err(|error| at(line, error))?),
                None => None,
            };
            let commit_date = commit_date.map(|(_, date)| date);
            if let Some(earlier) = pins.iter().find(|pin| pin.id == id) {
                bail!(at(
                    id_line,
                    format!("duplicate pin id `{id}` (also on line {})", earlier.line)
                ));
            }
            if let Some(earlier) = pins
                .iter()
                .find(|pin| pin.release == release && pin.commit_date == commit_date)
            {
                bail!(at(
                    release_line,
                    format!(
                        "duplicate pin: `{}` (line {}) already pins {release}",
                        earlier.id, earlier.line
                    )
                ));
            }
            pins.push(Pin {
                id,
                release,
                commit_date,
                role,
                rustup: rustup.map(|(_, name)| name),
                debian,
                note,
                line: header_line,
            });
        }
        if pins.is_empty() {
            bail!("{file}: no `[[pin]]` tables");
        }
        Ok(Pins {
            pins,
            path: path.to_owned(),
        })
    }
}

/// One `[[pin]]` table as read: each key's line and string value.
type RawTable = BTreeMap<String, (usize, String)>;

const PIN_KEYS: &[&str] = &[
    "id",
    "release",
    "commit-date",
    "role",
    "rustup",
    "debian",
    "note",
];

/// Parses `key = "value"` with an optional trailing comment.
fn parse_key_value(line: &str) -> Result<(String, String), String> {
    let Some((key, rest)) = line.split_once('=') else {
        return Err(format!("expected `key = \"value\"`, found `{line}`"));
    };
    let key = key.trim();
    if key.is_empty()
        || !key
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
    {
        return Err(format!(
            "`{key}` is not a bare key (letters, digits, `-`, `_`)"
        ));
    }
    let rest = rest.trim_start();
    let Some(body) = rest.strip_prefix('"') else {
        return Err(format!(
            "the value of `{key}` must be a double-quoted string, found `{rest}`"
        ));
    };
    let mut value = String::new();
    let mut chars = body.chars();
    loop {
        match chars.next() {
            None => return Err(format!("the string value of `{key}` is not closed")),
            Some('"') => break,
            Some('\\') => match chars.next() {
                Some(escaped @ ('"' | '\\')) => value.push(escaped),
                Some(other) => {
                    return Err(format!(
                        "unsupported escape `\\{other}` in `{key}`; only `\\\"` and `\\\\` are"
                    ))
                }
                None => return Err(format!("the string value of `{key}` is not closed")),
            },
            Some(other) => value.push(other),
        }
    }
    let after = before_comment(chars.as_str()).trim();
    if !after.is_empty() {
        return Err(format!(
            "unexpected text `{after}` after the value of `{key}`"
        ));
    }
    Ok((key.to_owned(), value))
}

/// The part of a line (outside any string) before a `#` comment.
fn before_comment(text: &str) -> &str {
    text.split_once('#')
        .map_or(text, |(before, _comment)| before)
}

fn parse_debian(value: &str) -> Result<DebianPackage, String> {
    let (package, version) = match value.split_once('=') {
        Some((package, version)) => (package, Some(version)),
        None => (value, None),
    };
    let is_package_name = |name: &str| {
        name.len() >= 2
            && name.bytes().all(|byte| {
                byte.is_ascii_lowercase() || byte.is_ascii_digit() || b"+-.".contains(&byte)
            })
    };
    if !is_package_name(package) {
        return Err(format!(
            "`{value}` is not a Debian package (`package` or `package=version`)"
        ));
    }
    if let Some(version) = version {
        if version.is_empty() || !version.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(format!("`{version}` in `{value}` is not a Debian version"));
        }
    }
    Ok(DebianPackage {
        package: package.to_owned(),
        version: version.map(str::to_owned),
    })
}

/// One shard of the matrix: the `K` in `--shard K/N`, 1-based, out of `count`.
///
/// Pins are dealt out in file order, round robin, so shard sizes differ by at most one and
/// the split depends only on the pin file; `matrix --shard`, `ci-matrix` and `merge` all use
/// this one rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Which shard, from 1 to `count`.
    pub index: usize,
    /// How many shards there are.
    pub count: usize,
}

impl Shard {
    /// Parses `K/N`, with `1 <= K <= N`.
    pub fn parse(text: &str) -> anyhow::Result<Shard> {
        let usage = || format!("--shard takes K/N with 1 <= K <= N (such as 2/5), not {text:?}");
        let (index, count) = text.split_once('/').with_context(usage)?;
        let index: usize = index.trim().parse().ok().with_context(usage)?;
        let count: usize = count.trim().parse().ok().with_context(usage)?;
        if index == 0 || index > count {
            anyhow::bail!(usage());
        }
        Ok(Shard { index, count })
    }

    /// Whether the pin at `position` (0-based, in file order) belongs to this shard.
    pub fn owns(&self, position: usize) -> bool {
        position % self.count == self.index - 1
    }

    /// This shard's pins, in file order.
    pub fn pins<'a>(&self, pins: &'a [Pin]) -> Vec<&'a Pin> {
        pins.iter()
            .enumerate()
            .filter(|(position, _)| self.owns(*position))
            .map(|(_, pin)| pin)
            .collect()
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::catalog::{self, Release};
    use crate::version::parse_verbose_version;

    /// A pin file with two pins, one of them a nightly.
    pub(crate) const GOOD: &str = r#"# A comment line.
[[pin]]
id = "1.85.0"   # a trailing comment
release = "1.85.0"
role = "debian"
debian = "rustc-web"
rustup = "1.85.0"
note = "a \"quoted\" word and a # that is not a comment"

[[pin]]  # comment after a header
id = "nightly"
release = "1.97.0-nightly"
commit-date = "2026-05-19"
role = "nightly"
debian = "rustc=1.63.0+dfsg1-2"
"#;

    fn parse(text: &str) -> anyhow::Result<Pins> {
        Pins::parse(text, Path::new("pins.toml"))
    }

    fn error_of(text: &str) -> String {
        match parse(text) {
            Ok(pins) => panic!("parsed {pins:?}"),
            Err(error) => format!("{error:#}"),
        }
    }

    /// A one-pin file with `line` added to the pin (which starts on line 1).
    fn with_line(line: &str) -> String {
        format!("[[pin]]\nid = \"a\"\nrelease = \"1.85.0\"\nrole = \"feature\"\n{line}\n")
    }

    #[test]
    fn good_file() {
        let pins = parse(GOOD).unwrap();
        assert_eq!(pins.path, Path::new("pins.toml"));
        assert_eq!(
            pins.pins[0],
            Pin {
                id: "1.85.0".into(),
                release: "1.85.0".into(),
                commit_date: None,
                role: PinRole::Debian,
                rustup: Some("1.85.0".into()),
                debian: Some(DebianPackage {
                    package: "rustc-web".into(),
                    version: None
                }),
                note: Some("a \"quoted\" word and a # that is not a comment".into()),
                line: 2,
            }
        );
        let nightly = &pins.pins[1];
        assert_eq!(nightly.line, 10);
        assert_eq!(nightly.commit_date.as_deref(), Some("2026-05-19"));
        assert_eq!(
            nightly.debian,
            Some(DebianPackage {
                package: "rustc".into(),
                version: Some("1.63.0+dfsg1-2".into())
            })
        );
        assert_eq!(nightly.describe_release(), "1.97.0-nightly (2026-05-19)");
    }

    #[test]
    fn crlf_file() {
        let pins = parse(&GOOD.replace('\n', "\r\n")).unwrap();
        assert_eq!(pins.pins.len(), 2);
        assert_eq!(pins.pins[1].role, PinRole::Nightly);
    }

    #[test]
    fn syntax_errors_name_file_and_line() {
        assert_eq!(
            error_of(&with_line("rustup 1.85.0")),
            "pins.toml:5: expected `key = \"value\"`, found `rustup 1.85.0`"
        );
        assert_eq!(
            error_of(&with_line("rustup = 1.85")),
            "pins.toml:5: the value of `rustup` must be a double-quoted string, found `1.85`"
        );
        assert_eq!(
            error_of(&with_line("rustup = \"1.85.0")),
            "pins.toml:5: the string value of `rustup` is not closed"
        );
        assert_eq!(
            error_of(&with_line("rustup = \"1.85.0\" extra")),
            "pins.toml:5: unexpected text `extra` after the value of `rustup`"
        );
        assert_eq!(
            error_of(&with_line("note = \"tab\\t\"")),
            "pins.toml:5: unsupported escape `\\t` in `note`; only `\\\"` and `\\\\` are"
        );
        assert_eq!(
            error_of(&with_line("[pin]")),
            "pins.toml:5: unknown table `[pin]`; the only table is `[[pin]]`"
        );
        assert_eq!(
            error_of("id = \"a\"\n"),
            "pins.toml:1: `id` is outside any `[[pin]]` table; start each pin with `[[pin]]`"
        );
        assert_eq!(error_of("# nothing\n"), "pins.toml: no `[[pin]]` tables");
    }

    #[test]
    fn unknown_and_duplicate_keys() {
        assert_eq!(
            error_of(&with_line("channel = \"stable\"")),
            "pins.toml:5: unknown key `channel`; a pin has id, release, commit-date, role, \
             rustup, debian, note"
        );
        assert_eq!(
            error_of(&with_line("role = \"debian\"")),
            "pins.toml:5: duplicate key `role` (first set on line 4)"
        );
        assert_eq!(
            error_of("[[pin]]\nid = \"a\"\nrole = \"feature\"\n"),
            "pins.toml:1: this pin has no `release`"
        );
    }

    #[test]
    fn values_that_are_not_what_they_claim() {
        let bad_release = "[[pin]]\nid = \"a\"\nrelease = \"1.85\"\nrole = \"feature\"\n";
        assert!(error_of(bad_release)
            .starts_with("pins.toml:3: the release `1.85` is not MAJOR.MINOR.PATCH"));
        let bad_release = bad_release.replace("1.85", "one.eighty-five");
        assert!(error_of(&bad_release).starts_with("pins.toml:3: the release `one.eighty-five`"));
        assert_eq!(
            error_of(&with_line("commit-date = \"May 19\"")),
            "pins.toml:5: the commit date `May 19` is not YYYY-MM-DD"
        );
        assert_eq!(
            error_of(&with_line("debian = \"Rustc Web\"")),
            "pins.toml:5: `Rustc Web` is not a Debian package (`package` or `package=version`)"
        );
        assert_eq!(
            error_of(&with_line("rustup = \"1.85 .0\"")),
            "pins.toml:5: the rustup name `1.85 .0` is not a toolchain name"
        );
        let bad_role = "[[pin]]\nid = \"a\"\nrelease = \"1.85.0\"\nrole = \"oldest\"\n";
        assert_eq!(
            error_of(bad_role),
            "pins.toml:4: unknown role `oldest`; the roles are minimum, feature, debian, \
             rust-toolchain, nightly"
        );
        let nightly = "[[pin]]\nid = \"n\"\nrelease = \"1.97.0-nightly\"\nrole = \"nightly\"\n";
        assert!(error_of(nightly)
            .starts_with("pins.toml:3: the nightly `1.97.0-nightly` needs a `commit-date`"));
        let bad_id = "[[pin]]\nid = \"a b\"\nrelease = \"1.85.0\"\nrole = \"feature\"\n";
        assert!(error_of(bad_id).starts_with("pins.toml:2: the id `a b` is not a short name"));
    }

    #[test]
    fn duplicate_pins() {
        let two = |second_id: &str, second_release: &str| {
            format!(
                "[[pin]]\nid = \"a\"\nrelease = \"1.85.0\"\nrole = \"feature\"\n\n\
                 [[pin]]\nid = \"{second_id}\"\nrelease = \"{second_release}\"\nrole = \"feature\"\n"
            )
        };
        assert_eq!(
            error_of(&two("a", "1.86.0")),
            "pins.toml:7: duplicate pin id `a` (also on line 1)"
        );
        assert_eq!(
            error_of(&two("b", "1.85.0")),
            "pins.toml:8: duplicate pin: `a` (line 1) already pins 1.85.0"
        );
        // The same release at two commit dates is two different nightlies.
        let nightlies = "[[pin]]\nid = \"a\"\nrelease = \"1.97.0-nightly\"\ncommit-date = \"2026-05-19\"\nrole = \"nightly\"\n\
                         [[pin]]\nid = \"b\"\nrelease = \"1.97.0-nightly\"\ncommit-date = \"2026-05-20\"\nrole = \"nightly\"\n";
        assert_eq!(parse(nightlies).unwrap().pins.len(), 2);
    }

    #[test]
    fn load_names_a_missing_file() {
        let error = Pins::load(Path::new("/nonexistent/pins.toml")).unwrap_err();
        assert!(format!("{error:#}").starts_with("reading the pin file /nonexistent/pins.toml: "));
    }

    #[test]
    fn satisfaction_needs_release_and_commit_date() {
        let pins = parse(GOOD).unwrap();
        let version = |release: &str, date: &str| {
            parse_verbose_version(&format!(
                "rustc {release} (0 {date})\ncommit-date: {date}\nhost: x86_64-unknown-linux-gnu\nrelease: {release}\n"
            ))
            .unwrap()
        };
        assert!(pins.pins[0].is_satisfied_by(&version("1.85.0", "2025-02-17")));
        assert!(!pins.pins[0].is_satisfied_by(&version("1.85.1", "2025-02-17")));
        assert!(pins.pins[1].is_satisfied_by(&version("1.97.0-nightly", "2026-05-19")));
        assert!(!pins.pins[1].is_satisfied_by(&version("1.97.0-nightly", "2026-05-18")));
        assert!(!pins.pins[1].is_satisfied_by(&version("1.97.0", "2026-05-19")));
    }
    fn repository_pins() -> Pins {
        Pins::load(&Pins::default_path()).unwrap_or_else(|error| panic!("{error:#}"))
    }

    fn pinned(pins: &Pins, release: Release, role: PinRole) -> bool {
        pins.pins
            .iter()
            .any(|pin| pin.release == release.to_string() && pin.role == role)
    }

    #[test]
    fn every_release_the_catalog_names_is_pinned() {
        let pins = repository_pins();
        assert!(
            pinned(&pins, catalog::MINIMUM_RELEASE, PinRole::Minimum),
            "toolchains.toml has no `minimum` pin for {}",
            catalog::MINIMUM_RELEASE
        );
        let mut releases: Vec<Release> = catalog::FEATURES
            .iter()
            .flat_map(|feature| [feature.stable_since, feature.known_since])
            .flatten()
            .chain([catalog::HAS_COERCE_POINTEE.from])
            .collect();
        releases.sort();
        releases.dedup();
        for release in releases {
            assert!(
                pinned(&pins, release, PinRole::Feature),
                "the catalog names {release} but toolchains.toml has no `feature` pin for it"
            );
        }
        for pin in pins.pins.iter().filter(|pin| pin.role == PinRole::Feature) {
            let (release, _) = parse_release(&pin.release).unwrap();
            assert!(
                !crate::expect::catalog_facts(release).is_empty(),
                "toolchains.toml:{}: pin `{}` has role `feature` but the catalog names no \
                 feature at {release}",
                pin.line,
                pin.id
            );
        }
    }

    #[test]
    fn the_rust_toolchain_pin_is_rust_toolchain_toml_channel() {
        let pins = repository_pins();
        let file = crate::project_root().join("rust-toolchain.toml");
        let text = std::fs::read_to_string(&file).unwrap();
        let channel = text
            .lines()
            .find_map(|line| line.trim().strip_prefix("channel = \""))
            .and_then(|rest| rest.strip_suffix('"'))
            .unwrap_or_else(|| panic!("no channel in {}", file.display()));
        let pin = pins
            .pins
            .iter()
            .find(|pin| pin.role == PinRole::RustToolchain)
            .expect("toolchains.toml has no `rust-toolchain` pin");
        assert_eq!(pin.release, channel, "toolchains.toml:{}", pin.line);
        assert_eq!(
            pin.rustup.as_deref(),
            Some(channel),
            "toolchains.toml:{}",
            pin.line
        );
    }

    #[test]
    fn the_repository_pins_what_the_project_needs() {
        let pins = repository_pins();
        let releases: Vec<(&str, &str)> = pins
            .pins
            .iter()
            .map(|pin| (pin.release.as_str(), pin.role.word()))
            .collect();
        for wanted in [
            ("1.63.0", "debian"),
            ("1.85.0", "debian"),
            ("1.96.0", "debian"),
            ("1.97.0-nightly", "nightly"),
        ] {
            assert!(releases.contains(&wanted), "{wanted:?} is not pinned");
        }
        let nightly = pins
            .pins
            .iter()
            .find(|pin| pin.role == PinRole::Nightly)
            .unwrap();
        assert_eq!(nightly.commit_date.as_deref(), Some("2026-05-19"));
    }

    /// The pins of a file of `count` pins, `1.0.0` to `1.{count - 1}.0`, each with its rustup
    /// name.
    pub(crate) fn numbered_pins(count: usize) -> Pins {
        let text: String = (0..count)
            .map(|n| format!("[[pin]]\nid = \"1.{n}.0\"\nrelease = \"1.{n}.0\"\nrole = \"feature\"\nrustup = \"1.{n}.0\"\n\n"))
            .collect();
        Pins::parse(&text, Path::new("test.toml")).unwrap()
    }

    #[test]
    fn shards_are_balanced_disjoint_and_complete() {
        let pins = numbered_pins(11);
        for count in 1..=11 {
            let mut seen = Vec::new();
            let mut sizes = Vec::new();
            for index in 1..=count {
                let members = Shard { index, count }.pins(&pins.pins);
                sizes.push(members.len());
                seen.extend(members.iter().map(|pin| pin.id.clone()));
            }
            seen.sort();
            let mut all: Vec<String> = pins.pins.iter().map(|pin| pin.id.clone()).collect();
            all.sort();
            assert_eq!(
                seen, all,
                "{count} shards must cover every pin exactly once"
            );
            let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            assert!(max - min <= 1, "{count} shards are unbalanced: {sizes:?}");
        }
    }

    #[test]
    fn shard_syntax() {
        assert_eq!(Shard::parse("2/5").unwrap(), Shard { index: 2, count: 5 });
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", ""] {
            let error = Shard::parse(bad).unwrap_err().to_string();
            assert!(error.contains("K/N"), "{bad:?}: {error}");
        }
    }
}
