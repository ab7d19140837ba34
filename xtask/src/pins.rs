//! The pin file (`toolchains.toml` at the repository root): every compiler the matrix wants,
//! by the release its `rustc -vV` must report, why it is pinned and how to install it; and
//! [`Shard`], the one rule that splits the pins between CI jobs.

use crate::version::{parse_release, Channel, RustcVersion};
use anyhow::{bail, Context};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use toml_parser::parser::{Event, EventKind, ValidateWhitespace};
use toml_parser::{ParseError, Source};

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
        let text = crate::files::read_text(path, 16 << 20)
            .with_context(|| format!("reading the pin file {}", path.display()))?;
        Pins::parse(&text, path)
    }

    /// Parses a pin file's text; `path` is only for messages.
    ///
    /// The file is TOML whose only tables are `[[pin]]`, each of string values. Keys: `id`,
    /// `release`, `role` (required); `commit-date` (required for a nightly), `rustup`, `debian`
    /// (`package` or `package=version`), `note`. Every error is `FILE:LINE: what is wrong`:
    /// bad TOML, another table, an unknown key or role, a value that is no string, a duplicated
    /// key, id or release, a release or date that is not one. The time taken is linear in the
    /// size of the file.
    pub fn parse(text: &str, path: &Path) -> anyhow::Result<Pins> {
        let file = path.display();
        let tables = read_tables(text)
            .map_err(|(line, message)| anyhow::anyhow!("{file}:{line}: {message}"))?;

        let mut pins: Vec<Pin> = Vec::new();
        let mut pin_of_id: HashMap<String, usize> = HashMap::new();
        let mut pin_of_release: HashMap<(String, Option<String>), usize> = HashMap::new();
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
            if let Some(&earlier) = pin_of_id.get(&id) {
                bail!(at(
                    id_line,
                    format!(
                        "duplicate pin id `{id}` (also on line {})",
                        pins[earlier].line
                    )
                ));
            }
            let release_key = (release.clone(), commit_date.clone());
            if let Some(&earlier) = pin_of_release.get(&release_key) {
                let earlier = &pins[earlier];
                bail!(at(
                    release_line,
                    format!(
                        "duplicate pin: `{}` (line {}) already pins {release}",
                        earlier.id, earlier.line
                    )
                ));
            }
            pin_of_id.insert(id.clone(), pins.len());
            pin_of_release.insert(release_key, pins.len());
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

/// An error at a line of the pin file.
type LineError = (usize, String);

const PIN_KEYS: &[&str] = &[
    "id",
    "release",
    "commit-date",
    "role",
    "rustup",
    "debian",
    "note",
];

/// Reads the `[[pin]]` tables of a TOML document, each with its header's line.
///
/// The first error in the file wins: a TOML syntax error, or a table, key or value this file
/// may not have. `toml_parser` checks the syntax first and leaves decoding to the reader, so an
/// error that the reader finds before the first syntax error is the first error of the file,
/// and one after it may be an echo of it.
fn read_tables(text: &str) -> Result<Vec<(usize, RawTable)>, LineError> {
    let source = Source::new(text);
    let tokens = source.lex().into_vec();
    let mut events: Vec<Event> = Vec::new();
    let mut syntax_errors: Vec<ParseError> = Vec::new();
    toml_parser::parser::parse_document(
        &tokens,
        &mut ValidateWhitespace::new(&mut events, source),
        &mut syntax_errors,
    );
    let lines = LineStarts::new(text);
    let read = TableReader {
        source,
        lines: &lines,
    }
    .read(&events);
    let first_syntax_error = syntax_errors
        .iter()
        .map(|error| (error_offset(error), error))
        .min_by_key(|(offset, _)| *offset);
    let at = |offset: usize, message: String| Err((lines.line_of(offset), message));
    match (read, first_syntax_error) {
        (Err(Misread::Invalid(offset, message)), Some((syntax, _))) if offset < syntax => {
            at(offset, message)
        }
        (Err(Misread::Syntax(offset, message)), Some((syntax, _))) if offset <= syntax => {
            at(offset, message)
        }
        (_, Some((offset, error))) => at(offset, describe_toml_error(text, error)),
        (Err(Misread::Invalid(offset, message) | Misread::Syntax(offset, message)), None) => {
            at(offset, message)
        }
        (Err(Misread::Malformed(offset)), None) => at(offset, "malformed TOML".to_owned()),
        (Ok(tables), None) => Ok(tables),
    }
}

/// Where in the text an error of `toml_parser` is.
fn error_offset(error: &ParseError) -> usize {
    error
        .unexpected()
        .or(error.context())
        .map_or(0, |span| span.start())
}

/// An error of `toml_parser` as a message: what it says, what it expected, what it found.
fn describe_toml_error(text: &str, error: &ParseError) -> String {
    let mut message = error.description().to_owned();
    if let Some(expected) = error.expected().filter(|expected| !expected.is_empty()) {
        let expected: Vec<String> = expected
            .iter()
            .map(|expected| match expected {
                toml_parser::Expected::Literal(literal) => format!("`{}`", visible(literal)),
                toml_parser::Expected::Description(description) => description.to_string(),
                _ => "something else".to_owned(),
            })
            .collect();
        message.push_str(&format!(", expected {}", expected.join(" or ")));
    }
    let offset = error_offset(error);
    // What it found: the rest of the line from the error on.
    let rest = text
        .get(offset..)
        .and_then(|rest| rest.lines().next())
        .map(str::trim)
        .unwrap_or_default();
    if !rest.is_empty() {
        message.push_str(&format!(", found `{}`", visible(rest)));
    }
    message
}

/// `text` with its control characters escaped, to quote it in a one-line message.
fn visible(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The byte offsets at which the lines of a text start, to turn offsets into line numbers.
struct LineStarts(Vec<usize>);

impl LineStarts {
    fn new(text: &str) -> LineStarts {
        let after_newlines = text.match_indices('\n').map(|(index, _)| index + 1);
        LineStarts(std::iter::once(0).chain(after_newlines).collect())
    }

    /// The 1-based line that holds the byte at `offset`.
    fn line_of(&self, offset: usize) -> usize {
        self.0.partition_point(|&start| start <= offset)
    }
}

/// Why [`TableReader`] stopped.
enum Misread {
    /// A table, key or value the pin file may not have, at a byte offset.
    Invalid(usize, String),
    /// A syntax error that `toml_parser` reports too, said with what the reader knows.
    Syntax(usize, String),
    /// Events that only come with a TOML syntax error, which `toml_parser` reports.
    Malformed(usize),
}

/// Walks `toml_parser`'s events, decoding keys and strings; errors are at byte offsets.
struct TableReader<'t, 'l> {
    source: Source<'t>,
    lines: &'l LineStarts,
}

impl TableReader<'_, '_> {
    fn read(&self, events: &[Event]) -> Result<Vec<(usize, RawTable)>, Misread> {
        let mut events = events
            .iter()
            .filter(|event| {
                !matches!(
                    event.kind(),
                    EventKind::Whitespace | EventKind::Comment | EventKind::Newline
                )
            })
            .peekable();
        let mut tables: Vec<(usize, RawTable)> = Vec::new();
        while let Some(event) = events.next() {
            let start = event.span().start();
            match event.kind() {
                EventKind::ArrayTableOpen | EventKind::StdTableOpen => {
                    let key = self.key(&mut events)?;
                    let end = match events.next() {
                        Some(close)
                            if matches!(
                                close.kind(),
                                EventKind::ArrayTableClose | EventKind::StdTableClose
                            ) =>
                        {
                            close.span().end()
                        }
                        _ => return Err(Misread::Malformed(start)),
                    };
                    if event.kind() != EventKind::ArrayTableOpen || key != ["pin"] {
                        let header = &self.source.input()[start..end];
                        return Err(Misread::Invalid(
                            start,
                            format!("unknown table `{header}`; the only table is `[[pin]]`"),
                        ));
                    }
                    tables.push((self.lines.line_of(start), BTreeMap::new()));
                }
                EventKind::SimpleKey => {
                    let mut key = vec![self.simple_key(event)?];
                    key.extend(self.key(&mut events)?);
                    let key = key.join(".");
                    if events
                        .next_if(|event| event.kind() == EventKind::KeyValSep)
                        .is_none()
                    {
                        let line = self.source.input()[start..].lines().next();
                        return Err(Misread::Syntax(
                            start,
                            format!(
                                "expected `key = \"value\"`, found `{}`",
                                visible(line.unwrap_or_default().trim())
                            ),
                        ));
                    }
                    let value = self.string_value(&key, &mut events)?;
                    if let Some(first) = events.next_if(|event| event.kind() == EventKind::Error) {
                        // `toml_parser` marks each token up to the end of the line.
                        let mut end = first.span().end();
                        while let Some(more) =
                            events.next_if(|event| event.kind() == EventKind::Error)
                        {
                            end = more.span().end();
                        }
                        let extra = &self.source.input()[first.span().start()..end];
                        return Err(Misread::Syntax(
                            first.span().start(),
                            format!(
                                "unexpected text `{}` after the value of `{key}`",
                                visible(extra)
                            ),
                        ));
                    }
                    let Some((_, table)) = tables.last_mut() else {
                        return Err(Misread::Invalid(
                            start,
                            format!(
                                "`{key}` is outside any `[[pin]]` table; start each pin with \
                                 `[[pin]]`"
                            ),
                        ));
                    };
                    if !PIN_KEYS.contains(&key.as_str()) {
                        return Err(Misread::Invalid(
                            start,
                            format!("unknown key `{key}`; a pin has {}", PIN_KEYS.join(", ")),
                        ));
                    }
                    if let Some((first_line, _)) = table.get(&key) {
                        return Err(Misread::Invalid(
                            start,
                            format!("duplicate key `{key}` (first set on line {first_line})"),
                        ));
                    }
                    table.insert(key, (self.lines.line_of(start), value));
                }
                _ => return Err(Misread::Malformed(start)),
            }
        }
        Ok(tables)
    }

    /// The parts of a key after its first (`.b.c` of `a.b.c`), or all of a table header's.
    fn key<'e>(
        &self,
        events: &mut std::iter::Peekable<impl Iterator<Item = &'e Event>>,
    ) -> Result<Vec<String>, Misread> {
        let mut parts = Vec::new();
        while let Some(event) =
            events.next_if(|event| matches!(event.kind(), EventKind::SimpleKey | EventKind::KeySep))
        {
            if event.kind() == EventKind::SimpleKey {
                parts.push(self.simple_key(event)?);
            }
        }
        Ok(parts)
    }

    fn simple_key(&self, event: &Event) -> Result<String, Misread> {
        let raw = self.raw(event);
        let mut key = String::new();
        let mut errors: Vec<ParseError> = Vec::new();
        raw.decode_key(&mut key, &mut errors);
        match errors.first() {
            Some(error) => Err(Misread::Invalid(
                error_offset(error),
                describe_toml_error(self.source.input(), error),
            )),
            None => Ok(key),
        }
    }

    /// Reads a value, which must be a string, and decodes it.
    fn string_value<'e>(
        &self,
        key: &str,
        events: &mut std::iter::Peekable<impl Iterator<Item = &'e Event>>,
    ) -> Result<String, Misread> {
        let Some(event) = events.next() else {
            return Err(Misread::Malformed(self.source.input().len()));
        };
        let start = event.span().start();
        let not_a_string = |end: usize| {
            let found = &self.source.input()[start..end];
            Misread::Invalid(
                start,
                format!("the value of `{key}` must be a string, found `{found}`"),
            )
        };
        match event.kind() {
            EventKind::Scalar => {
                let mut value = String::new();
                let mut errors: Vec<ParseError> = Vec::new();
                let kind = self.raw(event).decode_scalar(&mut value, &mut errors);
                if let Some(error) = errors.first() {
                    let offset = error_offset(error);
                    // The decoder reports a missing closing quote at the string's end, which
                    // for a multi-line string is the end of the file.
                    if offset == event.span().end() {
                        return Err(Misread::Invalid(
                            start,
                            format!("the string value of `{key}` is not closed"),
                        ));
                    }
                    let message = format!(
                        "in the value of `{key}`: {}",
                        describe_toml_error(self.source.input(), error)
                    );
                    return Err(Misread::Invalid(offset, message));
                }
                if kind != toml_parser::decoder::ScalarKind::String {
                    return Err(not_a_string(event.span().end()));
                }
                Ok(value)
            }
            EventKind::ArrayOpen | EventKind::InlineTableOpen => {
                // Skip to the matching close, to quote the whole value.
                let mut depth = 1;
                let mut end = event.span().end();
                for inner in events.by_ref() {
                    end = inner.span().end();
                    match inner.kind() {
                        EventKind::ArrayOpen | EventKind::InlineTableOpen => depth += 1,
                        EventKind::ArrayClose | EventKind::InlineTableClose => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 {
                        break;
                    }
                }
                Err(not_a_string(end))
            }
            _ => Err(Misread::Malformed(start)),
        }
    }

    fn raw(&self, event: &Event) -> toml_parser::Raw<'_> {
        self.source
            .get(event)
            .expect("toml_parser's events lie within its source")
    }
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
            "pins.toml:5: the value of `rustup` must be a string, found `1.85`"
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
            error_of(&with_line("note = \"tab\\q\"")),
            "pins.toml:5: in the value of `note`: missing escaped value, expected `b` or `e` or \
             `f` or `n` or `r` or `\\` or `\"` or `x` or `u` or `U`, found `q\"`"
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

    /// Parses `text` and expects its one pin's `note`.
    fn note_of(text: &str) -> String {
        let pins = parse(&with_line(text)).unwrap_or_else(|error| panic!("{text:?}: {error:#}"));
        pins.pins[0].note.clone().unwrap()
    }

    #[test]
    fn toml_strings_are_decoded() {
        assert_eq!(
            note_of(r#"note = "tab\t, \"quote\", \\, \u00e9\U0001F980""#),
            "tab\t, \"quote\", \\, é🦀"
        );
        assert_eq!(note_of(r"note = 'C:\no\escapes'"), r"C:\no\escapes");
        assert_eq!(note_of("note = \"\"\"\none\ntwo\"\"\""), "one\ntwo");
        assert_eq!(note_of("note = \"\"\"one \\\n    two\"\"\""), "one two");
        assert_eq!(note_of("note = '''\n'quoted' \\n'''"), "'quoted' \\n");
        assert_eq!(note_of("note = \"a\tb\""), "a\tb");
        assert_eq!(note_of("\"note\" = 'quoted key'"), "quoted key");
        assert_eq!(note_of("'note' = \"literal key\""), "literal key");
        assert_eq!(
            note_of("note = \"x\" # comment with \"quotes\" and 'apostrophes'"),
            "x"
        );
        // A multi-line value counts its lines: the next error is on the right one.
        assert_eq!(
            error_of(&with_line("note = \"\"\"\n\n\"\"\"\nchannel = \"x\"")),
            "pins.toml:8: unknown key `channel`; a pin has id, release, commit-date, role, \
             rustup, debian, note"
        );
    }

    #[test]
    fn raw_control_characters_and_bad_toml_are_refused() {
        assert_eq!(
            error_of(&with_line("note = \"a\u{1}b\"")),
            "pins.toml:5: in the value of `note`: invalid basic string, expected \
             non-double-quote visible characters or `\\`, found `\\u{1}b\"`"
        );
        assert!(error_of(&with_line("note = 'a\u{7f}b'"))
            .starts_with("pins.toml:5: in the value of `note`: invalid literal string"));
        assert!(error_of(&with_line("note = \"\"\"a\u{0}b\"\"\""))
            .starts_with("pins.toml:5: in the value of `note`: invalid multi-line basic string"));
        assert!(error_of(&with_line("# a \u{1b} in a comment"))
            .starts_with("pins.toml:5: invalid comment character"));
        assert!(error_of(&with_line("note = \"x\"\rrustup = \"y\""))
            .starts_with("pins.toml:5: carriage return must be followed by newline"));
        assert!(error_of(&with_line("note = \"bad \\q escape\""))
            .starts_with("pins.toml:5: in the value of `note`: missing escaped value"));
        assert!(error_of(&with_line("note = \"\\u00\""))
            .starts_with("pins.toml:5: in the value of `note`: too few unicode value digits"));
        assert!(error_of(&with_line("note = \"\\uD800\""))
            .starts_with("pins.toml:5: in the value of `note`: "));
        assert_eq!(
            error_of(&with_line("note = '''never closed")),
            "pins.toml:5: the string value of `note` is not closed"
        );
        assert_eq!(
            error_of(&with_line("note = [\"a\", \"b\"]")),
            "pins.toml:5: the value of `note` must be a string, found `[\"a\", \"b\"]`"
        );
        assert_eq!(
            error_of(&with_line("note = { text = \"a\" }")),
            "pins.toml:5: the value of `note` must be a string, found `{ text = \"a\" }`"
        );
        assert_eq!(
            error_of(&with_line("note = true")),
            "pins.toml:5: the value of `note` must be a string, found `true`"
        );
        assert_eq!(
            error_of(&with_line("[[pin]")),
            "pins.toml:5: unclosed array table, expected `]`"
        );
        assert_eq!(
            error_of(&with_line("[[pins]]")),
            "pins.toml:5: unknown table `[[pins]]`; the only table is `[[pin]]`"
        );
        assert_eq!(
            error_of(&with_line("[[pin.extra]]")),
            "pins.toml:5: unknown table `[[pin.extra]]`; the only table is `[[pin]]`"
        );
        assert_eq!(
            error_of(&with_line("note.text = \"a\"")),
            "pins.toml:5: unknown key `note.text`; a pin has id, release, commit-date, role, \
             rustup, debian, note"
        );
        // The same key, quoted or not, is one key.
        assert_eq!(
            error_of(&with_line("\"role\" = \"debian\"")),
            "pins.toml:5: duplicate key `role` (first set on line 4)"
        );
        // The first error of the file wins, whatever its kind.
        assert_eq!(
            error_of(&with_line("channel = \"x\"\nnote = \"a\u{1}b\"\nrustup 1")),
            "pins.toml:5: unknown key `channel`; a pin has id, release, commit-date, role, \
             rustup, debian, note"
        );
        assert_eq!(
            error_of(&with_line("rustup 1\nchannel = \"x\"")),
            "pins.toml:5: expected `key = \"value\"`, found `rustup 1`"
        );
    }

    #[test]
    fn commit_dates_must_be_days_of_the_calendar() {
        for bad in [
            "2026-13-45",
            "2026-02-30",
            "2025-02-29",
            "2026-04-31",
            "2026-00-10",
        ] {
            assert_eq!(
                error_of(&with_line(&format!("commit-date = \"{bad}\""))),
                format!("pins.toml:5: the commit date `{bad}` is not YYYY-MM-DD")
            );
        }
        let leap_day = parse(&with_line("commit-date = \"2024-02-29\"")).unwrap();
        assert_eq!(leap_day.pins[0].commit_date.as_deref(), Some("2024-02-29"));
    }

    #[test]
    fn unusual_but_legal_toml_reads_as_the_plain_file() {
        // GOOD, line for line, with a byte order mark, CRLF line ends, quoted keys, literal
        // and multi-line strings, escapes, tabs, and comments in odd places.
        let unusual = "\u{feff}# A comment line.\r\n\
                       [[ \"pin\" ]]\r\n\
                       \"id\" = '1.85.0'#\r\n\
                       'release'=\"1.85\\u002E0\"\r\n\
                       \trole\t=\t\"debian\"   \r\n\
                       debian = \"\"\"rustc-web\"\"\"\r\n\
                       rustup = '''1.85.0'''\r\n\
                       note = 'a \"quoted\" word and a # that is not a comment'\r\n\
                       \t\r\n\
                       [[pin]]#[[pin]]\r\n\
                       id = \"\\u006Eightly\"\r\n\
                       release = \"1.97.0-nightly\"\r\n\
                       \"commit-date\" = \"2026-05-19\"\r\n\
                       role = \"\\U0000006Eightly\"\r\n\
                       debian = \"\"\"\\\r\n      rustc=1.63.0+dfsg1-2\"\"\"\r\n";
        let plain = parse(GOOD).unwrap();
        let unusual = parse(unusual).unwrap_or_else(|error| panic!("{error:#}"));
        assert_eq!(unusual.pins, plain.pins);
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
