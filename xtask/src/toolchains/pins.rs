// SPDX-License-Identifier: GPL-2.0
//! The pin file (`toolchains.toml` at the repository root): every compiler the matrix wants,
//! by the release its `rustc -vV` must report, why it is pinned and how to install it; the
//! kernel trees `cargo xtask kernel` builds ([`TreePin`]); and [`Shard`], the one rule that
//! splits the pins between CI jobs.

mod toml;

#[cfg(test)]
pub(crate) mod tests;

use crate::catalog::Release;
pub use crate::toolchains::debian::DebianSource;
use crate::toolchains::version::{is_iso_date, parse_release, Channel, RustcVersion};
use anyhow::{anyhow, bail, ensure, Context};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Why a release is pinned: what each role means is its [`PinRole::description`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PinRole {
    Minimum,
    Feature,
    Debian,
    RustToolchain,
    Nightly,
}

/// Each role, in declaration order, with its word in the pin file and the output and its meaning.
const ROLES: [(PinRole, &str, &str); 5] = [
    (
        PinRole::Minimum,
        "minimum",
        "the oldest release the kernel supports",
    ),
    (
        PinRole::Feature,
        "feature",
        "a release at which a catalog feature stabilized or first appeared",
    ),
    (PinRole::Debian, "debian", "a compiler Debian ships"),
    (
        PinRole::RustToolchain,
        "rust-toolchain",
        "the release rust-toolchain.toml pins",
    ),
    (
        PinRole::Nightly,
        "nightly",
        "the nightly the project is checked with",
    ),
];

impl PinRole {
    pub fn word(self) -> &'static str {
        ROLES[self as usize].1
    }

    pub fn from_word(word: &str) -> Option<PinRole> {
        ROLES.iter().find(|role| role.1 == word).map(|role| role.0)
    }

    pub fn description(self) -> &'static str {
        ROLES[self as usize].2
    }
}

impl fmt::Display for PinRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// The longest pin id: ids name directories and report columns.
pub const MAX_ID_LENGTH: usize = 64;

/// The largest pin file read (about 150000 pins); a bigger file, `/dev/zero` or a FIFO is
/// refused before it is read.
pub const MAX_PIN_FILE_BYTES: u64 = 16 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// Its unique id, used in reports and as a directory name: letters, digits, `.`, `-`,
    /// `_`, at most [`MAX_ID_LENGTH`] of them, starting with a letter or digit.
    pub id: String,
    /// The release as `rustc -vV` must report it: "1.85.0", "1.97.0-nightly".
    pub release: String,
    /// The commit date `rustc -vV` must report, `YYYY-MM-DD`; required for nightlies.
    pub commit_date: Option<String>,
    pub role: PinRole,
    /// The rustup toolchain that installs it: a checked [`is_rustup_toolchain_name`].
    pub rustup: Option<String>,
    pub debian: Option<DebianSource>,
    pub note: Option<String>,
    /// The line of its `[[pin]]` header.
    pub line: usize,
}

impl Pin {
    pub fn is_satisfied_by(&self, version: &RustcVersion) -> bool {
        version.release_string() == self.release
            && (self.commit_date.is_none() || version.commit_date == self.commit_date)
    }

    /// The release, with the commit date for pins that have one: "1.97.0-nightly (2026-05-19)".
    pub fn describe_release(&self) -> String {
        match &self.commit_date {
            Some(date) => format!("{} ({date})", self.release),
            None => self.release.clone(),
        }
    }

    /// The exact command that would install a compiler satisfying this pin; every value in it
    /// was checked when the pin file was read, so it holds nothing a shell would expand.
    pub fn install_hint(&self) -> String {
        let rustup = self
            .rustup
            .as_ref()
            .map(|name| format!("rustup toolchain install {name} --profile minimal"));
        let debian = self.debian.as_ref().map(|debian| {
            format!(
                "cargo xtask toolchains install --only {} (unpacks Debian's {debian} under \
                 target/toolchains/)",
                self.id
            )
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

/// Whether `id` may name a pin ([`Pin::id`]): never a path step (`..`) or an option.
pub fn is_pin_id(id: &str) -> bool {
    id.len() <= MAX_ID_LENGTH && id.starts_with(|c: char| c.is_ascii_alphanumeric()) && is_name(id)
}

/// Whether `name` is letters, digits, `.`, `-` and `_` only.
fn is_name(name: &str) -> bool {
    name.bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || b".-_".contains(&byte))
}

/// Whether `name` is a rustup toolchain name: a channel (`stable`, `beta`, `nightly`) or a
/// release (`1.85.0`, `1.85`), optionally with a date (`nightly-2026-05-20`) and a host triple,
/// in letters, digits, `.`, `-` and `_` only.
pub fn is_rustup_toolchain_name(name: &str) -> bool {
    let channel_or_release = ["stable", "beta", "nightly"]
        .iter()
        .any(|channel| name == *channel || name.starts_with(&format!("{channel}-")))
        || name.starts_with(|c: char| c.is_ascii_digit());
    name.len() <= 100 && channel_or_release && is_name(name)
}

/// Where a pinned kernel tree comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeSource {
    /// Debian's `linux-source-X` package (`SUITE:linux-source-X=VERSION`), whose tarball is
    /// unpacked under `target/kernel/trees/`.
    Debian(DebianSource),
    /// A kernel tree already on disk (a developer's checkout), used where it is and never
    /// written to: builds go to a directory of their own (`make O=`).
    Path(PathBuf),
}

/// One pinned kernel tree: a `[[tree]]` table, its id as a [`Pin`]'s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreePin {
    pub id: String,
    pub source: TreeSource,
    pub note: Option<String>,
    pub line: usize,
}

/// The pin file at `path`, parsed, in file order.
#[derive(Debug, Clone)]
pub struct Pins {
    pub pins: Vec<Pin>,
    pub trees: Vec<TreePin>,
    pub path: PathBuf,
}

impl Pins {
    pub fn default_path() -> PathBuf {
        crate::project_root().join("toolchains.toml")
    }

    /// Reads and parses a regular file of at most [`MAX_PIN_FILE_BYTES`].
    pub fn load(path: &Path) -> anyhow::Result<Pins> {
        let text = crate::util::files::read_text(path, MAX_PIN_FILE_BYTES)
            .with_context(|| format!("reading the pin file {}", path.display()))?;
        Pins::parse(&text, path)
    }

    /// Parses a pin file's text (`path` is for messages); every error (bad TOML, another table
    /// or key, a duplicate, a bad value) is `FILE:LINE: what is wrong`. Linear time.
    pub fn parse(text: &str, path: &Path) -> anyhow::Result<Pins> {
        let file = path.display().to_string();
        let tables = toml::read_tables(text)
            .map_err(|(line, message)| anyhow!("{file}:{line}: {message}"))?;
        let mut pins: Vec<Pin> = Vec::new();
        let mut trees: Vec<TreePin> = Vec::new();
        let mut pin_of_id: HashMap<String, usize> = HashMap::new();
        let mut pin_of_release: HashMap<(String, Option<String>), usize> = HashMap::new();
        for (kind, header_line, table) in tables {
            if kind == toml::TableKind::Tree {
                let tree = parse_tree(&file, header_line, table)?;
                if let Some(earlier) = trees.iter().find(|earlier| earlier.id == tree.id) {
                    let (id, line) = (&tree.id, earlier.line);
                    bail!("{file}:{header_line}: duplicate tree id `{id}` (also on line {line})");
                }
                trees.push(tree);
                continue;
            }
            let (pin, id_line, release_line) = parse_pin(&file, header_line, table)?;
            if let Some(earlier) = pin_of_id.insert(pin.id.clone(), pins.len()) {
                let (id, line) = (&pin.id, pins[earlier].line);
                bail!("{file}:{id_line}: duplicate pin id `{id}` (also on line {line})");
            }
            let release_key = (pin.release.clone(), pin.commit_date.clone());
            if let Some(earlier) = pin_of_release.insert(release_key, pins.len()) {
                let (id, line, release) = (&pins[earlier].id, pins[earlier].line, &pin.release);
                bail!(
                    "{file}:{release_line}: duplicate pin: `{id}` (line {line}) already pins \
                     {release}"
                );
            }
            pins.push(pin);
        }
        ensure!(!pins.is_empty(), "{file}: no `[[pin]]` tables");
        Ok(Pins {
            pins,
            trees,
            path: path.to_owned(),
        })
    }
}

/// Refuses an `id` (of a pin or, as `what` says, a tree) that [`is_pin_id`] refuses.
fn check_id(file: &str, line: usize, what: &str, id: &str) -> anyhow::Result<()> {
    ensure!(
        is_pin_id(id),
        "{file}:{line}: the {what} `{}` is not a short name: at most {MAX_ID_LENGTH} letters, \
         digits, `.`, `-`, `_`, starting with a letter or digit",
        id.escape_debug()
    );
    Ok(())
}

/// One `[[pin]]` table, with the lines of its `id` and `release` (for duplicates).
fn parse_pin(
    file: &str,
    header_line: usize,
    mut table: toml::RawTable,
) -> anyhow::Result<(Pin, usize, usize)> {
    let mut required = |key: &str| {
        table
            .remove(key)
            .with_context(|| format!("{file}:{header_line}: this pin has no `{key}`"))
    };
    let (id_line, id) = required("id")?;
    let (release_line, release) = required("release")?;
    let (role_line, role) = required("role")?;
    check_id(file, id_line, "id", &id)?;
    let at = |line: usize| move |error: anyhow::Error| anyhow!("{file}:{line}: {error}");
    let (number, channel) = parse_release(&release).map_err(at(release_line))?;
    ensure!(
        number.to_string() == release.split('-').next().unwrap_or_default(),
        "{file}:{release_line}: the release `{release}` is not one rustc prints: it writes \
         `{number}`"
    );
    let role = PinRole::from_word(&role).with_context(|| {
        let words: Vec<&str> = ROLES.iter().map(|role| role.1).collect();
        let (role, words) = (role.escape_debug(), words.join(", "));
        format!("{file}:{role_line}: unknown role `{role}`; the roles are {words}")
    })?;
    let commit_date = table.remove("commit-date");
    if let Some((line, date)) = commit_date.as_ref().filter(|(_, date)| !is_iso_date(date)) {
        bail!(
            "{file}:{line}: the commit date `{}` is not YYYY-MM-DD",
            date.escape_debug()
        );
    }
    ensure!(
        channel != Channel::Nightly || commit_date.is_some(),
        "{file}:{release_line}: the nightly `{release}` needs a `commit-date`: every nightly of \
         a cycle reports the same release"
    );
    let rustup = table.remove("rustup");
    if let Some((line, name)) = &rustup {
        ensure!(
            is_rustup_toolchain_name(name),
            "{file}:{line}: the rustup name `{}` is not a toolchain name (a channel or release, \
             such as `1.85.0` or `nightly-2026-05-20`, in letters, digits, `.`, `-`, `_`)",
            name.escape_debug()
        );
    }
    let debian = match table.remove("debian") {
        Some((line, value)) => Some(DebianSource::parse(&value).map_err(at(line))?),
        None => None,
    };
    if let Some((debian, Some(version))) = debian.as_ref().map(|debian| (debian, &debian.version)) {
        let upstream = crate::toolchains::debian::upstream_version(version);
        ensure!(
            upstream == release,
            "{file}:{header_line}: the Debian package `{debian}` is of release {upstream}, \
             not {release}"
        );
    }
    let pin = Pin {
        id,
        release,
        commit_date: commit_date.map(|(_, date)| date),
        role,
        rustup: rustup.map(|(_, name)| name),
        debian,
        note: table.remove("note").map(|(_, note)| note),
        line: header_line,
    };
    Ok((pin, id_line, release_line))
}

/// One `[[tree]]` table: `id`, exactly one of `debian` and `path`, and `note`.
fn parse_tree(
    file: &str,
    header_line: usize,
    mut table: toml::RawTable,
) -> anyhow::Result<TreePin> {
    let (id_line, id) = table
        .remove("id")
        .with_context(|| format!("{file}:{header_line}: this tree has no `id`"))?;
    check_id(file, id_line, "tree id", &id)?;
    let source = match (table.remove("debian"), table.remove("path")) {
        (Some((line, value)), None) => {
            let source =
                DebianSource::parse(&value).map_err(|error| anyhow!("{file}:{line}: {error}"))?;
            ensure!(
                source.package.starts_with("linux-source-"),
                "{file}:{line}: `{}` is not a kernel source package (`linux-source-X`)",
                source.package
            );
            TreeSource::Debian(source)
        }
        (None, Some((line, value))) => {
            ensure!(
                !value.is_empty() && !value.contains('\0'),
                "{file}:{line}: the tree's `path` is empty"
            );
            TreeSource::Path(PathBuf::from(value))
        }
        _ => bail!(
            "{file}:{header_line}: a tree has exactly one of `debian` \
             (SUITE:linux-source-X=VERSION) and `path`"
        ),
    };
    Ok(TreePin {
        id,
        source,
        note: table.remove("note").map(|(_, note)| note),
        line: header_line,
    })
}

/// One shard of the matrix: the `K` in `--shard K/N`, 1-based, out of `count`.
///
/// Pins are dealt out in file order, round robin, so shard sizes differ by at most one and
/// the split depends only on the pin file; `matrix --shard`, `ci-matrix` and `merge` all use
/// this one rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    pub fn parse(text: &str) -> anyhow::Result<Shard> {
        let usage = || format!("--shard takes K/N with 1 <= K <= N (such as 2/5), not {text:?}");
        let (index, count) = text.split_once('/').with_context(usage)?;
        let index: usize = index.trim().parse().ok().with_context(usage)?;
        let count: usize = count.trim().parse().ok().with_context(usage)?;
        ensure!(index >= 1 && index <= count, usage());
        Ok(Shard { index, count })
    }

    /// Refuses more shards than there are toolchains (`count`): some would run nothing.
    pub fn check(&self, count: usize) -> anyhow::Result<()> {
        ensure!(
            self.count <= count,
            "--shard {self} splits {count} toolchains into {} shards; at most {count} can each \
             have one",
            self.count
        );
        Ok(())
    }

    /// Whether the pin at 0-based `position` belongs to this shard.
    pub fn owns(&self, position: usize) -> bool {
        position % self.count == self.index - 1
    }

    pub fn pins<'a>(&self, pins: &'a [Pin]) -> Vec<&'a Pin> {
        pins.iter()
            .skip(self.index - 1)
            .step_by(self.count)
            .collect()
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}/{}", self.index, self.count)
    }
}

/// A release range as cargo-hack's `--version-range` spells it: `1.78..`, `1.78..1.85` (end
/// excluded), `1.78..=1.85`, `..1.85`, `..=1.85`; a bound is `MAJOR.MINOR` (any patch) or
/// `MAJOR.MINOR.PATCH`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReleaseRange {
    pub from: Option<Release>,
    /// The first release past the range.
    pub until: Option<Release>,
}

impl ReleaseRange {
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let bad = || {
            anyhow::anyhow!(
                "--version-range `{}` is no release range: write `1.78..`, `1.78..1.85` (end \
                 excluded), `1.78..=1.85` or `..=1.85`",
                text.escape_debug()
            )
        };
        let (start, end) = text.split_once("..").ok_or_else(bad)?;
        let bound = |text: &str| -> anyhow::Result<Option<(Release, bool)>> {
            if text.is_empty() {
                return Ok(None);
            }
            let exact = Release::parse(text).map(|release| (release, true));
            let minor = || Release::parse(&format!("{text}.0")).map(|release| (release, false));
            exact.or_else(minor).map(Some).ok_or_else(bad)
        };
        let from = bound(start)?.map(|(release, _)| release);
        let until = match end.strip_prefix('=') {
            Some(end) => {
                let (last, exact) = bound(end)?.ok_or_else(bad)?;
                Some(match exact {
                    true => Release::new(last.major, last.minor, last.patch + 1),
                    false => Release::new(last.major, last.minor + 1, 0),
                })
            }
            None => bound(end)?.map(|(release, _)| release),
        };
        Ok(ReleaseRange { from, until })
    }

    pub fn contains(&self, release: Release) -> bool {
        self.from.is_none_or(|from| release >= from)
            && self.until.is_none_or(|until| release < until)
    }
}

/// `specs` and the ids of the pins of `pins_path` (default: [`Pins::default_path`]) whose
/// release lies in `range`, for `--version-range`; a range that selects no pin is bad input.
pub fn with_range(
    specs: &[String],
    pins_path: Option<&Path>,
    range: Option<&str>,
) -> anyhow::Result<Vec<String>> {
    let Some(text) = range else {
        return Ok(specs.to_vec());
    };
    let range = ReleaseRange::parse(text)?;
    let path = pins_path.map_or_else(Pins::default_path, Path::to_path_buf);
    let pins = Pins::load(&path)?;
    let selected: Vec<String> = pins
        .pins
        .iter()
        .filter(|pin| Release::parse(&pin.release).is_some_and(|release| range.contains(release)))
        .map(|pin| pin.id.clone())
        .collect();
    ensure!(
        !selected.is_empty(),
        "--version-range `{}` selects no pin of {}",
        text.escape_debug(),
        path.display()
    );
    let mut all = specs.to_vec();
    all.extend(selected.into_iter().filter(|id| !specs.contains(id)));
    Ok(all)
}
