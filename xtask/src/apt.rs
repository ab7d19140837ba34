//! A private apt under `target/` that reaches any Debian suite without touching the system's
//! apt or dpkg state, and what is built on it: Debian's version and relation syntax, a
//! compiler's shared-library closure read from the packages' `Depends`, verified downloads and
//! atomic unpacking.

use anyhow::{bail, ensure, Context};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};
use xshell::{cmd, Shell};

/// The keyring every suite's signature is checked against (Debian's `debian-archive-keyring`).
pub const ARCHIVE_KEYRING: &str = "/usr/share/keyrings/debian-archive-keyring.gpg";

/// The machine's own deb822 sources, whose URIs the private apt reuses.
pub const HOST_SOURCES: &str = "/etc/apt/sources.list.d/debian.sources";

/// The source package of the C library: a package built from it can only run under its own
/// loader, so a closure that needs it cannot borrow the host's loader.
pub const C_LIBRARY_SOURCE: &str = "glibc";

/// Whether `name` is a Debian package name: `[a-z0-9][a-z0-9+.-]+` (Policy 5.6.1).
pub fn is_package_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    bytes.len() >= 2
        && (bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit())
        && bytes
            .iter()
            .all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"+.-".contains(&b))
}

/// Whether `version` is a Debian version, `[epoch:]upstream[-revision]` (Policy 5.6.12).
pub fn is_version(version: &str) -> bool {
    let (epoch, rest) = match version.split_once(':') {
        Some((epoch, rest)) => (Some(epoch), rest),
        None => (None, version),
    };
    if epoch.is_some_and(|epoch| epoch.is_empty() || !epoch.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    let (upstream, revision) = match rest.rsplit_once('-') {
        Some((upstream, revision)) => (upstream, Some(revision)),
        None => (rest, None),
    };
    let allowed = |b: u8, extra: &[u8]| {
        b.is_ascii_alphanumeric() || b"+.~".contains(&b) || extra.contains(&b)
    };
    let upstream_extra: &[u8] = match (epoch.is_some(), revision.is_some()) {
        (true, true) => b":-",
        (true, false) => b":",
        (false, true) => b"-",
        (false, false) => b"",
    };
    upstream.as_bytes().first().is_some_and(u8::is_ascii_digit)
        && upstream.bytes().all(|b| allowed(b, upstream_extra))
        && revision.is_none_or(|revision| {
            !revision.is_empty() && revision.bytes().all(|b| allowed(b, b""))
        })
}

/// Whether `suite` is a suite or codename as the archive names them: `bookworm-security`,
/// `trixie-backports`, `sid`.
pub fn is_suite(suite: &str) -> bool {
    let bytes = suite.as_bytes();
    !bytes.is_empty()
        && bytes[0].is_ascii_lowercase()
        && bytes
            .iter()
            .all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-.".contains(&b))
}

fn checked_package(name: &str) -> anyhow::Result<&str> {
    ensure!(
        is_package_name(name),
        "`{name}` is not a Debian package name (lowercase letters, digits, `+`, `-`, `.`; at least two)"
    );
    Ok(name)
}

fn checked_version(version: &str) -> anyhow::Result<&str> {
    ensure!(
        is_version(version),
        "`{version}` is not a Debian version ([epoch:]upstream[-revision], upstream starting with a digit)"
    );
    Ok(version)
}

fn checked_suite(suite: &str) -> anyhow::Result<&str> {
    ensure!(
        is_suite(suite),
        "`{suite}` is not a Debian suite name (such as `trixie` or `bookworm-security`)"
    );
    Ok(suite)
}

/// Compares two Debian versions as dpkg does (epoch, then upstream, then revision, `~`
/// sorting before everything, even the end of the string).
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    fn split(version: &str) -> (u64, &str, &str) {
        let (epoch, rest) = match version.split_once(':') {
            Some((epoch, rest)) => (epoch.parse().unwrap_or(0), rest),
            None => (0, version),
        };
        let (upstream, revision) = rest.rsplit_once('-').unwrap_or((rest, ""));
        (epoch, upstream, revision)
    }
    let (epoch_a, upstream_a, revision_a) = split(a);
    let (epoch_b, upstream_b, revision_b) = split(b);
    epoch_a
        .cmp(&epoch_b)
        .then_with(|| compare_fragment(upstream_a.as_bytes(), upstream_b.as_bytes()))
        .then_with(|| compare_fragment(revision_a.as_bytes(), revision_b.as_bytes()))
}

/// dpkg's `verrevcmp`: alternating runs of non-digits (compared by [`sort_weight`]) and
/// digits (compared as numbers).
fn compare_fragment(a: &[u8], b: &[u8]) -> Ordering {
    fn sort_weight(c: Option<u8>) -> i32 {
        match c {
            None => 0,
            Some(c) if c.is_ascii_digit() => 0,
            Some(c) if c.is_ascii_alphabetic() => i32::from(c),
            Some(b'~') => -1,
            Some(c) => i32::from(c) + 256,
        }
    }
    let digit = |s: &[u8], i: usize| s.get(i).is_some_and(u8::is_ascii_digit);
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        while (i < a.len() && !digit(a, i)) || (j < b.len() && !digit(b, j)) {
            let (wa, wb) = (
                sort_weight(a.get(i).copied()),
                sort_weight(b.get(j).copied()),
            );
            if wa != wb {
                return wa.cmp(&wb);
            }
            i += 1;
            j += 1;
        }
        while a.get(i) == Some(&b'0') {
            i += 1;
        }
        while b.get(j) == Some(&b'0') {
            j += 1;
        }
        let mut first_difference = Ordering::Equal;
        while digit(a, i) && digit(b, j) {
            if first_difference == Ordering::Equal {
                first_difference = a[i].cmp(&b[j]);
            }
            i += 1;
            j += 1;
        }
        if digit(a, i) {
            return Ordering::Greater;
        }
        if digit(b, j) {
            return Ordering::Less;
        }
        if first_difference != Ordering::Equal {
            return first_difference;
        }
    }
    Ordering::Equal
}

/// A version relation of a dependency: `<<`, `<=`, `=`, `>=`, `>>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    /// `<<`
    Earlier,
    /// `<=` (also the obsolete `<`)
    EarlierOrEqual,
    /// `=`
    Exactly,
    /// `>=` (also the obsolete `>`)
    LaterOrEqual,
    /// `>>`
    Later,
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Operator::Earlier => "<<",
            Operator::EarlierOrEqual => "<=",
            Operator::Exactly => "=",
            Operator::LaterOrEqual => ">=",
            Operator::Later => ">>",
        })
    }
}

/// One alternative of a dependency: `libc6 (>= 2.34)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relation {
    /// The package (or virtual package) name, without an architecture qualifier.
    pub name: String,
    /// The version relation, if the dependency has one.
    pub constraint: Option<(Operator, String)>,
}

impl Relation {
    /// Whether `version` of this package satisfies the relation.
    pub fn accepts(&self, version: &str) -> bool {
        let Some((operator, wanted)) = &self.constraint else {
            return true;
        };
        let order = compare_versions(version, wanted);
        match operator {
            Operator::Earlier => order == Ordering::Less,
            Operator::EarlierOrEqual => order != Ordering::Greater,
            Operator::Exactly => order == Ordering::Equal,
            Operator::LaterOrEqual => order != Ordering::Less,
            Operator::Later => order == Ordering::Greater,
        }
    }
}

impl fmt::Display for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.constraint {
            Some((operator, version)) => write!(f, "{} ({operator} {version})", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// Parses a `Depends:` (or `Pre-Depends:`) value into its entries, each a list of
/// alternatives (`a | b`); architecture restrictions and build profiles are dropped.
pub fn parse_relations(value: &str) -> Vec<Vec<Relation>> {
    value
        .split(',')
        .map(|entry| {
            entry
                .split('|')
                .filter_map(|alternative| {
                    // Architecture restrictions (`[amd64]`) and build profiles (`<!nocheck>`)
                    // follow the name and the version relation.
                    let after = alternative.find(')').unwrap_or(0);
                    let end = alternative[after..]
                        .find(['[', '<'])
                        .map_or(alternative.len(), |at| after + at);
                    let alternative = alternative[..end].trim();
                    let (name, constraint) = match alternative.split_once('(') {
                        Some((name, constraint)) => {
                            (name.trim(), Some(constraint.trim_end_matches(')').trim()))
                        }
                        None => (alternative, None),
                    };
                    let name = name.split(':').next()?.trim();
                    if name.is_empty() {
                        return None;
                    }
                    let constraint = constraint.and_then(|text| {
                        let operators = [
                            ("<<", Operator::Earlier),
                            ("<=", Operator::EarlierOrEqual),
                            (">=", Operator::LaterOrEqual),
                            (">>", Operator::Later),
                            ("=", Operator::Exactly),
                            ("<", Operator::EarlierOrEqual),
                            (">", Operator::LaterOrEqual),
                        ];
                        operators.iter().find_map(|(symbol, operator)| {
                            text.strip_prefix(symbol)
                                .map(|version| (*operator, version.trim().to_owned()))
                        })
                    });
                    Some(Relation {
                        name: name.to_owned(),
                        constraint,
                    })
                })
                .collect::<Vec<_>>()
        })
        .filter(|alternatives| !alternatives.is_empty())
        .collect()
}

/// One entry of a `Depends` line: the first alternative's name, and its version if the
/// dependency pins one with `(= VERSION)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    /// The package name, without an architecture qualifier.
    pub name: String,
    /// The version required with `=`, if any.
    pub exact_version: Option<String>,
}

/// Parses a `Depends:` value: `libc6 (>= 2.34), libstd-rust-web-dev (= 1.85.0+dfsg3-1~deb12u3)`.
pub fn parse_depends(value: &str) -> Vec<Dependency> {
    parse_relations(value)
        .into_iter()
        .map(|mut alternatives| {
            let first = alternatives.swap_remove(0);
            let exact_version = match first.constraint {
                Some((Operator::Exactly, version)) => Some(version),
                _ => None,
            };
            Dependency {
                name: first.name,
                exact_version,
            }
        })
        .collect()
}

/// Whether a dependency of a Debian rustc package belongs in the unpacked copy.
///
/// The compiler runs from the unpacked directory, so it needs what it loads and links from
/// there: the standard library packages (`libstd-rust*`: the rlibs and `librustc_driver`) and
/// the LLVM it was built against (`libllvm*`). The rest of its `Depends` (libc6, libgcc-s1, gcc,
/// binutils, libc-dev) is the ordinary toolchain that a machine building Rust already has.
pub fn is_compiler_library(name: &str) -> bool {
    name.starts_with("libstd-rust") || name.starts_with("libllvm")
}

/// One stanza of a control file (an `apt-cache show` record, a deb822 sources entry).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stanza {
    fields: Vec<(String, String)>,
}

impl Stanza {
    /// The value of `name` (field names are case-insensitive), continuation lines joined
    /// with newlines.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// Parses control-file text into stanzas; `#` comment lines are skipped.
pub fn parse_stanzas(text: &str) -> Vec<Stanza> {
    let mut stanzas = Vec::new();
    let mut current = Stanza::default();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !current.fields.is_empty() {
                stanzas.push(std::mem::take(&mut current));
            }
        } else if line.starts_with('#') {
            continue;
        } else if line.starts_with([' ', '\t']) {
            if let Some((_, value)) = current.fields.last_mut() {
                value.push('\n');
                value.push_str(line.trim());
            }
        } else if let Some((key, value)) = line.split_once(':') {
            current
                .fields
                .push((key.trim().to_owned(), value.trim().to_owned()));
        }
    }
    if !current.fields.is_empty() {
        stanzas.push(current);
    }
    stanzas
}

/// Where the machine's apt fetches Debian from: the archive and the security archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mirrors {
    /// The archive's URI: `http://deb.debian.org/debian`.
    pub archive: String,
    /// The security archive's URI: `http://deb.debian.org/debian-security`.
    pub security: String,
    /// The components to list: `main`.
    pub components: Vec<String>,
}

impl Mirrors {
    /// The mirrors that a deb822 sources file names: the URI of its `-security` suites is the
    /// security archive's, the other one the archive's.
    pub fn from_deb822(text: &str) -> anyhow::Result<Mirrors> {
        let mut archive = None;
        let mut security = None;
        let mut components = Vec::new();
        for stanza in parse_stanzas(text) {
            let enabled = stanza.get("Enabled").is_none_or(|value| value != "no");
            let is_deb = stanza
                .get("Types")
                .is_some_and(|types| types.split_whitespace().any(|kind| kind == "deb"));
            let (Some(uris), Some(suites)) = (stanza.get("URIs"), stanza.get("Suites")) else {
                continue;
            };
            if !enabled || !is_deb {
                continue;
            }
            let Some(uri) = uris.split_whitespace().next() else {
                continue;
            };
            let is_security = suites
                .split_whitespace()
                .any(|suite| suite.ends_with("-security"));
            let slot = if is_security {
                &mut security
            } else {
                &mut archive
            };
            slot.get_or_insert_with(|| uri.trim_end_matches('/').to_owned());
            for component in stanza
                .get("Components")
                .unwrap_or("main")
                .split_whitespace()
            {
                if !components.iter().any(|known| known == component) {
                    components.push(component.to_owned());
                }
            }
        }
        let archive = archive.context("it names no Debian archive (a `Types: deb` stanza)")?;
        let security = security.unwrap_or_else(|| format!("{archive}-security"));
        for uri in [&archive, &security] {
            ensure!(
                (uri.starts_with("http://") || uri.starts_with("https://"))
                    && !uri.contains(char::is_whitespace),
                "the URI `{uri}` is not an http(s) URI"
            );
        }
        Ok(Mirrors {
            archive,
            security,
            components,
        })
    }

    /// Reads [`HOST_SOURCES`].
    pub fn of_host() -> anyhow::Result<Mirrors> {
        let text = std::fs::read_to_string(HOST_SOURCES)
            .with_context(|| format!("reading the machine's apt sources {HOST_SOURCES}"))?;
        Mirrors::from_deb822(&text).with_context(|| format!("reading {HOST_SOURCES}"))
    }

    /// The one-line sources list for `suites`, every suite signed by [`ARCHIVE_KEYRING`].
    pub fn sources_list(&self, suites: &[String]) -> String {
        let components = self.components.join(" ");
        suites
            .iter()
            .map(|suite| {
                let uri = if suite.ends_with("-security") {
                    &self.security
                } else {
                    &self.archive
                };
                format!("deb [signed-by={ARCHIVE_KEYRING}] {uri} {suite} {components}\n")
            })
            .collect()
    }
}

/// The settings of the machine's apt that say how to reach the registry (proxies, whether an
/// expired `Valid-Until` is accepted), from `apt-config dump`, to pass on to the private apt.
pub fn reachability_settings(dump: &str) -> Vec<(String, String)> {
    const CARRIED: &[&str] = &[
        "Acquire::Check-Valid-Until",
        "Acquire::Check-Date",
        "Acquire::Max-FutureTime",
        "Acquire::Retries",
        "Acquire::ForceIPv4",
        "Acquire::ForceIPv6",
        "Acquire::http::Proxy",
        "Acquire::https::Proxy",
        "Acquire::http::Timeout",
        "Acquire::https::Timeout",
    ];
    dump.lines()
        .filter_map(|line| {
            let (key, value) = line.trim().split_once(' ')?;
            let value = value.trim().strip_suffix(';')?.trim().trim_matches('"');
            CARRIED
                .iter()
                .any(|carried| key.eq_ignore_ascii_case(carried))
                .then(|| (key.to_owned(), value.to_owned()))
        })
        .collect()
}

/// One version of a package, as `apt-cache madison` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// The Debian version.
    pub version: String,
    /// The suite that serves it: `bookworm-security`.
    pub suite: String,
}

/// Parses `apt-cache madison` lines into every binary version of `package` and its suite:
/// ` rustc-web | 1.85.0+dfsg3-1~deb12u3 | http://deb.debian.org/debian bookworm/main amd64 Packages`.
pub fn parse_madison_entries(listing: &str, package: &str) -> Vec<Served> {
    let mut served = Vec::new();
    for line in listing.lines() {
        let mut columns = line.split('|').map(str::trim);
        let (Some(name), Some(version), Some(source)) =
            (columns.next(), columns.next(), columns.next())
        else {
            continue;
        };
        // Source packages are listed too ("... Sources"); only binaries can be downloaded.
        if name != package || source.ends_with("Sources") {
            continue;
        }
        let Some(suite) = source
            .split_whitespace()
            .nth(1)
            .and_then(|dist| dist.split('/').next())
        else {
            continue;
        };
        let entry = Served {
            version: version.to_owned(),
            suite: suite.to_owned(),
        };
        if !served.contains(&entry) {
            served.push(entry);
        }
    }
    served
}

/// Parses `apt-cache madison` lines into the versions of `package`, each once.
pub fn parse_madison(listing: &str, package: &str) -> Vec<String> {
    let mut versions: Vec<String> = Vec::new();
    for entry in parse_madison_entries(listing, package) {
        if !versions.contains(&entry.version) {
            versions.push(entry.version);
        }
    }
    versions
}

/// Parses the `Reverse Provides:` section of `apt-cache showpkg` into `(package, version)`.
pub fn parse_reverse_provides(showpkg: &str) -> Vec<(String, String)> {
    let Some((_, section)) = showpkg.split_once("Reverse Provides:") else {
        return Vec::new();
    };
    section
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            Some((words.next()?.to_owned(), words.next()?.to_owned()))
        })
        .collect()
}

/// A package chosen for a closure, with what downloading and checking it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The package name.
    pub name: String,
    /// The exact version.
    pub version: String,
    /// The suite it is taken from.
    pub suite: String,
    /// The architecture of its `.deb` (`amd64`, `all`).
    pub architecture: String,
    /// Its source package: `rustc`, `llvm-toolchain-19`, `glibc`.
    pub source: String,
    /// The size of its `.deb` in bytes.
    pub size: u64,
    /// The SHA-256 of its `.deb`, as the signed index lists it.
    pub sha256: String,
    /// Why it is in the closure: `rustc=1.85.1+dfsg1-1+deb13u1 depends on libstd-rust-dev (= ...)`.
    pub wanted_by: String,
}

impl Resolved {
    /// The file name `apt-get download` gives its `.deb` (the epoch's `:` escaped).
    pub fn deb_file_name(&self) -> String {
        format!(
            "{}_{}_{}.deb",
            self.name,
            self.version.replace(':', "%3a"),
            self.architecture
        )
    }
}

impl fmt::Display for Resolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={} ({})", self.name, self.version, self.suite)
    }
}

/// What the closure may take from the machine itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostLibraries {
    /// A library the host has installed at a version that satisfies the dependency is used
    /// from the host: the compiler then runs under the host's loader with `LD_LIBRARY_PATH`,
    /// which programs it starts (`cc`, the linker) inherit, so they must keep finding the
    /// host's own copies of what they load. Safe because Debian's shared-library packages
    /// keep their ABI within a soname and the dependency's version bound is what the
    /// compiler's binaries were checked to need.
    Reuse,
    /// Nothing comes from the host: the compiler runs under the loader unpacked beside it.
    Never,
}

/// What the closure needs to know about packages: the registry through the private apt, or
/// fixed records in tests.
pub trait PackageIndex {
    /// Every binary version of `name` the configured suites serve (none for a virtual
    /// package).
    fn served(&mut self, name: &str) -> anyhow::Result<Vec<Served>>;
    /// The record of `name` at `version`.
    fn record(&mut self, name: &str, version: &str) -> anyhow::Result<Stanza>;
    /// The real packages that provide the virtual package `name`, as `(package, version)`.
    fn providers(&mut self, name: &str) -> anyhow::Result<Vec<(String, String)>>;
    /// The version of `name` installed on the machine, if it is installed.
    fn installed(&mut self, name: &str) -> anyhow::Result<Option<String>>;
}

/// The packages that unpacked together make `package` at `version` run: the package itself,
/// and recursively every dependency that is a shared library (section `libs` or `oldlibs`)
/// or built from the compiler's own source package; programs it only starts (gcc,
/// binutils) and development files it does not load (libc6-dev) stay the host's.
///
/// Every package comes from `suites`, which are in order of preference: a dependency takes
/// the newest version that satisfies it in the first suite that has one. With
/// [`HostLibraries::Reuse`], a library the host satisfies is left out (never one of the
/// compiler's own packages, which must sit beside it).
pub fn closure(
    index: &mut dyn PackageIndex,
    package: &str,
    version: &str,
    suites: &[String],
    host: HostLibraries,
) -> anyhow::Result<Vec<Resolved>> {
    checked_package(package)?;
    checked_version(version)?;
    for suite in suites {
        checked_suite(suite)?;
    }
    let served = index.served(package)?;
    let Some(root_suite) = suites
        .iter()
        .find(|suite| {
            served
                .iter()
                .any(|entry| &entry.suite == *suite && entry.version == version)
        })
        .cloned()
    else {
        let listed: Vec<String> = served
            .iter()
            .map(|entry| format!("{} ({})", entry.version, entry.suite))
            .collect();
        bail!(
            "{} serve no {package}={version}{}",
            describe_suites(suites),
            if listed.is_empty() {
                format!("; the registry (as the private apt knows it) has no {package} at all")
            } else {
                format!("; the registry has {package} {}", listed.join(", "))
            }
        );
    };
    let root_record = index.record(package, version)?;
    let own_source = source_of(&root_record, package);
    let mut chosen: BTreeMap<String, Resolved> = BTreeMap::new();
    let mut queue = vec![(
        package.to_owned(),
        version.to_owned(),
        root_suite,
        format!("asked for ({})", describe_suites(suites)),
    )];
    while let Some((name, version, suite, wanted_by)) = queue.pop() {
        let record = index.record(&name, &version)?;
        let resolved = Resolved {
            architecture: record.get("Architecture").unwrap_or("all").to_owned(),
            source: source_of(&record, &name),
            size: record
                .get("Size")
                .and_then(|size| size.parse().ok())
                .with_context(|| format!("the record of {name}={version} has no Size"))?,
            sha256: record
                .get("SHA256")
                .with_context(|| format!("the record of {name}={version} has no SHA256"))?
                .to_owned(),
            name: name.clone(),
            version: version.clone(),
            suite,
            wanted_by,
        };
        chosen.insert(name.clone(), resolved);
        let relations = ["Pre-Depends", "Depends"]
            .iter()
            .filter_map(|key| record.get(key))
            .flat_map(parse_relations);
        for alternatives in relations {
            let described = alternatives
                .iter()
                .map(Relation::to_string)
                .collect::<Vec<_>>()
                .join(" | ");
            let dependent = format!("{name}={version} depends on {described}");
            // A package already taken (or queued) must fit this dependency too.
            let taken = alternatives.iter().find_map(|relation| {
                let version = chosen
                    .get(&relation.name)
                    .map(|resolved| resolved.version.clone())
                    .or_else(|| {
                        queue
                            .iter()
                            .find(|(queued, ..)| queued == &relation.name)
                            .map(|(_, version, ..)| version.clone())
                    })?;
                Some((relation, version))
            });
            if let Some((relation, taken_version)) = taken {
                ensure!(
                    relation.accepts(&taken_version),
                    "{dependent}, but {}={taken_version} is already taken",
                    relation.name
                );
                continue;
            }
            let Some((candidate, candidate_version, candidate_suite)) =
                choose(index, &alternatives, suites)?
            else {
                bail!(
                    "{dependent}, which {} do not serve (no package of that name or providing it, at a fitting version)",
                    describe_suites(suites)
                );
            };
            let candidate_record = index.record(&candidate, &candidate_version)?;
            let is_own = source_of(&candidate_record, &candidate) == own_source;
            let section = candidate_record.get("Section").unwrap_or("");
            let section = section.rsplit('/').next().unwrap_or(section);
            if !is_own && section != "libs" && section != "oldlibs" {
                continue;
            }
            if !is_own && host == HostLibraries::Reuse {
                let mut on_host = false;
                for relation in &alternatives {
                    if index
                        .installed(&relation.name)?
                        .is_some_and(|installed| relation.accepts(&installed))
                    {
                        on_host = true;
                        break;
                    }
                }
                if on_host {
                    continue;
                }
            }
            queue.push((candidate, candidate_version, candidate_suite, dependent));
        }
    }
    Ok(chosen.into_values().collect())
}

/// The first alternative the suites serve at a fitting version, as `(package, version,
/// suite)`; a virtual package is replaced by a real package that provides it.
fn choose(
    index: &mut dyn PackageIndex,
    alternatives: &[Relation],
    suites: &[String],
) -> anyhow::Result<Option<(String, String, String)>> {
    for relation in alternatives {
        let served = index.served(&relation.name)?;
        if let Some((version, suite)) = best_in_suites(&served, suites, |v| relation.accepts(v)) {
            return Ok(Some((relation.name.clone(), version, suite)));
        }
    }
    for relation in alternatives.iter().filter(|r| r.constraint.is_none()) {
        for (provider, provider_version) in index.providers(&relation.name)? {
            let served = index.served(&provider)?;
            if let Some((version, suite)) =
                best_in_suites(&served, suites, |v| v == provider_version)
            {
                return Ok(Some((provider, version, suite)));
            }
        }
    }
    Ok(None)
}

/// The newest accepted version in the first suite (of `suites`, in order) that has one.
fn best_in_suites(
    served: &[Served],
    suites: &[String],
    accepts: impl Fn(&str) -> bool,
) -> Option<(String, String)> {
    suites.iter().find_map(|suite| {
        served
            .iter()
            .filter(|entry| &entry.suite == suite && accepts(&entry.version))
            .max_by(|a, b| compare_versions(&a.version, &b.version))
            .map(|entry| (entry.version.clone(), suite.clone()))
    })
}

fn source_of(record: &Stanza, package: &str) -> String {
    record
        .get("Source")
        .and_then(|source| source.split_whitespace().next())
        .unwrap_or(package)
        .to_owned()
}

fn describe_suites(suites: &[String]) -> String {
    match suites {
        [one] => format!("the suite {one}"),
        _ => format!("the suites {}", suites.join(", ")),
    }
}

/// A private apt: its own sources list, package lists, caches and (empty) dpkg status under
/// one directory, so that nothing of the system's apt or dpkg state is read for decisions or
/// written.
#[derive(Debug, Clone)]
pub struct PrivateApt {
    dir: PathBuf,
    suites: Vec<String>,
    options: Vec<(String, String)>,
}

impl PrivateApt {
    /// Creates (or reuses) the private apt in `dir` for `suites`, with the machine's mirrors
    /// ([`Mirrors::of_host`]) and its [`reachability_settings`].
    pub fn create(sh: &Shell, dir: &Path, suites: &[&str]) -> anyhow::Result<PrivateApt> {
        let mirrors = Mirrors::of_host()?;
        let dump = cmd!(sh, "apt-config dump")
            .quiet()
            .read()
            .context("running apt-config (is this a Debian-like system?)")?;
        let architecture = cmd!(sh, "dpkg --print-architecture")
            .quiet()
            .read()
            .context("running dpkg --print-architecture")?;
        PrivateApt::with(
            dir,
            suites,
            &mirrors,
            architecture.trim(),
            &reachability_settings(&dump),
        )
    }

    /// [`PrivateApt::create`] with every machine fact given.
    pub fn with(
        dir: &Path,
        suites: &[&str],
        mirrors: &Mirrors,
        architecture: &str,
        carried: &[(String, String)],
    ) -> anyhow::Result<PrivateApt> {
        ensure!(
            Path::new(ARCHIVE_KEYRING).is_file(),
            "{ARCHIVE_KEYRING} is missing: install the debian-archive-keyring package"
        );
        ensure!(
            architecture
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !architecture.is_empty(),
            "`{architecture}` is not a Debian architecture"
        );
        let suites: Vec<String> = suites
            .iter()
            .map(|suite| checked_suite(suite).map(str::to_owned))
            .collect::<anyhow::Result<_>>()?;
        let dir = std::path::absolute(dir)
            .with_context(|| format!("making {} absolute", dir.display()))?;
        for sub in [
            "lists/partial",
            "cache/archives/partial",
            "state",
            "log",
            "empty",
        ] {
            let path = dir.join(sub);
            std::fs::create_dir_all(&path)
                .with_context(|| format!("creating {}", path.display()))?;
        }
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
        };
        write("sources.list", &mirrors.sources_list(&suites))?;
        write("status", "")?;
        // Read through APT_CONFIG before anything else, so that the machine's apt.conf.d (its
        // update hooks, extra index targets) is never read: `-o` comes too late for that.
        write(
            "apt.conf",
            &format!(
                "Dir::Etc::Parts \"{}\";\nDir::Etc::Main \"{}\";\n",
                dir.join("empty").display(),
                dir.join("none").display()
            ),
        )?;
        let options = apt_options(&dir, architecture, carried);
        Ok(PrivateApt {
            dir,
            suites,
            options,
        })
    }

    /// The directory everything lives in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The suites its sources list names.
    pub fn suites(&self) -> &[String] {
        &self.suites
    }

    /// The `-o KEY=VALUE` arguments every apt command gets.
    pub fn option_args(&self) -> Vec<String> {
        self.options
            .iter()
            .flat_map(|(key, value)| ["-o".to_owned(), format!("{key}={value}")])
            .collect()
    }

    fn apt<'a>(&self, sh: &'a Shell, program: &str) -> xshell::Cmd<'a> {
        let options = self.option_args();
        cmd!(sh, "{program} {options...}")
            .env("APT_CONFIG", self.dir.join("apt.conf"))
            .env("LC_ALL", "C")
            .quiet()
    }

    /// Whether every suite has a signed index, none older than `max_age`.
    pub fn is_fresh(&self, max_age: Duration) -> bool {
        self.suites.iter().all(|suite| {
            self.release_file(suite)
                .and_then(|path| std::fs::metadata(path).ok()?.modified().ok())
                .is_some_and(|modified| {
                    SystemTime::now()
                        .duration_since(modified)
                        .is_ok_and(|age| age < max_age)
                })
        })
    }

    /// The verified `InRelease` of `suite` in the lists, if apt has one.
    fn release_file(&self, suite: &str) -> Option<PathBuf> {
        let wanted = format!("_dists_{suite}_InRelease");
        std::fs::read_dir(self.dir.join("lists"))
            .ok()?
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .find(|path| {
                path.file_name()
                    .is_some_and(|name| name.to_string_lossy().ends_with(&wanted))
            })
    }

    /// Runs `apt-get update`: fetches and verifies every suite's index. A suite that fails
    /// (not served, bad signature, cut short) keeps what it had; the result says, per suite,
    /// what went wrong, and the index is usable for the others.
    pub fn update(&self, sh: &Shell) -> anyhow::Result<BTreeMap<String, String>> {
        let output = self
            .apt(sh, "apt-get")
            .arg("update")
            .ignore_status()
            .output()
            .context("running apt-get update (is this a Debian-like system?)")?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        let mut problems = BTreeMap::new();
        for suite in &self.suites {
            let marker = format!(" {suite} ");
            let marker_path = format!("/dists/{suite}/");
            let lines: Vec<&str> = stderr
                .lines()
                .filter(|line| line.starts_with("E:") || line.starts_with("W:"))
                .filter(|line| line.contains(&marker) || line.contains(&marker_path))
                .collect();
            if !lines.is_empty() {
                problems.insert(suite.clone(), lines.join(" / "));
            } else if self.release_file(suite).is_none() {
                problems.insert(
                    suite.clone(),
                    format!(
                        "apt-get update left no signed index for it ({})",
                        last_line(&stderr)
                    ),
                );
            }
        }
        if !output.status.success() && problems.is_empty() {
            bail!(
                "apt-get update exited with {}: {}",
                output.status,
                last_line(&stderr)
            );
        }
        Ok(problems)
    }

    /// The binary versions of `package` the suites serve.
    pub fn madison(&self, sh: &Shell, package: &str) -> anyhow::Result<Vec<Served>> {
        checked_package(package)?;
        let listing = self
            .apt(sh, "apt-cache")
            .args(["madison", package])
            .ignore_stderr()
            .read()
            .with_context(|| format!("running apt-cache madison {package}"))?;
        Ok(parse_madison_entries(&listing, package))
    }

    /// The record of `package` at `version`.
    pub fn show(&self, sh: &Shell, package: &str, version: &str) -> anyhow::Result<Stanza> {
        let spec = format!(
            "{}={}",
            checked_package(package)?,
            checked_version(version)?
        );
        let shown = self
            .apt(sh, "apt-cache")
            .args(["show", &spec])
            .ignore_stderr()
            .read()
            .with_context(|| format!("reading the registry's record of {spec}"))?;
        parse_stanzas(&shown)
            .into_iter()
            .next()
            .with_context(|| format!("the registry has no record of {spec}"))
    }

    /// The real packages providing the virtual package `package`.
    pub fn providers(&self, sh: &Shell, package: &str) -> anyhow::Result<Vec<(String, String)>> {
        checked_package(package)?;
        let shown = self
            .apt(sh, "apt-cache")
            .args(["showpkg", package])
            .ignore_stderr()
            .ignore_status()
            .read()
            .with_context(|| format!("running apt-cache showpkg {package}"))?;
        Ok(parse_reverse_provides(&shown))
    }

    /// Downloads every package of `packages` into `cache`, where a `.deb` with the SHA-256
    /// the signed index lists is reused; returns the files in order and what was fetched.
    ///
    /// apt fetches into a fresh directory beside the cache, and a file moves into the cache
    /// only once its SHA-256 matches, so an interrupted or cut-short download leaves nothing
    /// that a later run would take for complete.
    pub fn download(
        &self,
        sh: &Shell,
        packages: &[Resolved],
        cache: &Path,
    ) -> anyhow::Result<Downloaded> {
        std::fs::create_dir_all(cache).with_context(|| format!("creating {}", cache.display()))?;
        let mut missing = Vec::new();
        for package in packages {
            let path = cache.join(package.deb_file_name());
            if !(path.is_file() && sha256_of(sh, &path)? == package.sha256) {
                missing.push(package);
            }
        }
        let started = Instant::now();
        if !missing.is_empty() {
            let incoming = cache.join(format!(".incoming-{}", std::process::id()));
            if incoming.exists() {
                std::fs::remove_dir_all(&incoming)
                    .with_context(|| format!("removing {}", incoming.display()))?;
            }
            std::fs::create_dir_all(&incoming)
                .with_context(|| format!("creating {}", incoming.display()))?;
            let result = self.fetch_into(sh, &missing, &incoming, cache);
            let _ = std::fs::remove_dir_all(&incoming);
            result?;
        }
        Ok(Downloaded {
            files: packages
                .iter()
                .map(|package| cache.join(package.deb_file_name()))
                .collect(),
            fetched_bytes: missing.iter().map(|package| package.size).sum(),
            fetched: missing.len(),
            total_bytes: packages.iter().map(|package| package.size).sum(),
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    fn fetch_into(
        &self,
        sh: &Shell,
        missing: &[&Resolved],
        incoming: &Path,
        cache: &Path,
    ) -> anyhow::Result<()> {
        let specs: Vec<String> = missing
            .iter()
            .map(|package| {
                Ok(format!(
                    "{}={}",
                    checked_package(&package.name)?,
                    checked_version(&package.version)?
                ))
            })
            .collect::<anyhow::Result<_>>()?;
        let _in_incoming = sh.push_dir(incoming);
        let output = self
            .apt(sh, "apt-get")
            .arg("download")
            .args(&specs)
            .ignore_status()
            .output()
            .context("running apt-get download")?;
        if !output.status.success() {
            bail!(
                "`apt-get download {}` exited with {}: {}",
                specs.join(" "),
                output.status,
                last_line(&String::from_utf8_lossy(&output.stderr))
            );
        }
        for package in missing {
            let fetched = incoming.join(package.deb_file_name());
            ensure!(
                fetched.is_file(),
                "apt-get download succeeded but left no {}",
                fetched.display()
            );
            let actual = sha256_of(sh, &fetched)?;
            ensure!(
                actual == package.sha256,
                "{} has SHA-256 {actual}, but the signed index lists {}: the download is damaged or cut short",
                package,
                package.sha256
            );
            let destination = cache.join(package.deb_file_name());
            std::fs::rename(&fetched, &destination).with_context(|| {
                format!("moving {} to {}", fetched.display(), destination.display())
            })?;
        }
        Ok(())
    }
}

/// The `-o` settings that keep apt inside `dir`: sources, lists, caches, state, logs and
/// preferences are its own, the dpkg status it reads is empty (so nothing installed on the
/// machine steers a choice), downloads are not handed to the `_apt` user (who may not reach
/// `dir`), and only `architecture`'s indices are fetched, without translations.
pub fn apt_options(
    dir: &Path,
    architecture: &str,
    carried: &[(String, String)],
) -> Vec<(String, String)> {
    let at = |sub: &str| dir.join(sub).display().to_string();
    let mut options: Vec<(String, String)> = [
        ("Dir::Etc::SourceList", at("sources.list")),
        ("Dir::Etc::SourceParts", at("empty")),
        ("Dir::Etc::Preferences", at("none")),
        ("Dir::Etc::PreferencesParts", at("empty")),
        ("Dir::Etc::Trusted", at("none")),
        ("Dir::Etc::TrustedParts", at("empty")),
        ("Dir::State", at("state")),
        ("Dir::State::Lists", at("lists")),
        ("Dir::State::Status", at("status")),
        ("Dir::Cache", at("cache")),
        ("Dir::Cache::Archives", at("cache/archives")),
        ("Dir::Log", at("log")),
        ("APT::Architecture", architecture.to_owned()),
        ("APT::Architectures", architecture.to_owned()),
        ("APT::Sandbox::User", "root".to_owned()),
        ("Acquire::Languages", "none".to_owned()),
        ("Acquire::GzipIndexes", "true".to_owned()),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), value))
    .collect();
    options.extend(carried.iter().cloned());
    options
}

/// What [`PrivateApt::download`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Downloaded {
    /// Every package's `.deb`, in the order asked.
    pub files: Vec<PathBuf>,
    /// How many were fetched (the others were in the cache).
    pub fetched: usize,
    /// Bytes fetched.
    pub fetched_bytes: u64,
    /// Bytes of all the packages, fetched or not.
    pub total_bytes: u64,
    /// How long fetching took.
    pub seconds: f64,
}

/// The [`PackageIndex`] of a [`PrivateApt`], with answers kept for the run.
pub struct AptIndex<'a> {
    sh: &'a Shell,
    apt: &'a PrivateApt,
    served: BTreeMap<String, Vec<Served>>,
    records: BTreeMap<(String, String), Stanza>,
}

impl<'a> AptIndex<'a> {
    /// An index asking `apt`.
    pub fn new(sh: &'a Shell, apt: &'a PrivateApt) -> AptIndex<'a> {
        AptIndex {
            sh,
            apt,
            served: BTreeMap::new(),
            records: BTreeMap::new(),
        }
    }
}

impl PackageIndex for AptIndex<'_> {
    fn served(&mut self, name: &str) -> anyhow::Result<Vec<Served>> {
        if let Some(served) = self.served.get(name) {
            return Ok(served.clone());
        }
        let served = self.apt.madison(self.sh, name)?;
        self.served.insert(name.to_owned(), served.clone());
        Ok(served)
    }

    fn record(&mut self, name: &str, version: &str) -> anyhow::Result<Stanza> {
        let key = (name.to_owned(), version.to_owned());
        if let Some(record) = self.records.get(&key) {
            return Ok(record.clone());
        }
        let record = self.apt.show(self.sh, name, version)?;
        self.records.insert(key, record.clone());
        Ok(record)
    }

    fn providers(&mut self, name: &str) -> anyhow::Result<Vec<(String, String)>> {
        self.apt.providers(self.sh, name)
    }

    fn installed(&mut self, name: &str) -> anyhow::Result<Option<String>> {
        checked_package(name)?;
        let format = "--showformat=${db:Status-Abbrev}|${Version}\n";
        let output = cmd!(self.sh, "dpkg-query --show {format} {name}")
            .quiet()
            .ignore_status()
            .ignore_stderr()
            .output()
            .context("running dpkg-query")?;
        let text = String::from_utf8_lossy(&output.stdout);
        Ok(text.lines().find_map(|line| {
            let (status, version) = line.split_once('|')?;
            status.starts_with("ii").then(|| version.trim().to_owned())
        }))
    }
}

/// Unpacks `debs` into `destination` so that it either does not exist or is complete: they
/// go into a staging directory beside it, `check` runs on that (it may write a marker), and
/// only then does the staging directory take `destination`'s place. On any failure the
/// staging directory is removed.
pub fn unpack_atomically(
    sh: &Shell,
    debs: &[PathBuf],
    destination: &Path,
    check: impl FnOnce(&Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let parent = destination
        .parent()
        .with_context(|| format!("{} has no parent directory", destination.display()))?;
    let name = destination
        .file_name()
        .with_context(|| format!("{} has no file name", destination.display()))?
        .to_string_lossy()
        .into_owned();
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    remove_abandoned_staging(parent, &name);
    let staging = parent.join(format!(".{name}.partial-{}", std::process::id()));
    if staging.exists() {
        std::fs::remove_dir_all(&staging)
            .with_context(|| format!("removing {}", staging.display()))?;
    }
    std::fs::create_dir(&staging).with_context(|| format!("creating {}", staging.display()))?;
    let result = (|| {
        for deb in debs {
            cmd!(sh, "dpkg-deb --extract {deb} {staging}")
                .quiet()
                .run()
                .with_context(|| format!("unpacking {}", deb.display()))?;
        }
        check(&staging)?;
        if destination.exists() {
            let old = parent.join(format!(".{name}.old-{}", std::process::id()));
            std::fs::rename(destination, &old)
                .with_context(|| format!("moving the old {} aside", destination.display()))?;
            std::fs::remove_dir_all(&old).with_context(|| format!("removing {}", old.display()))?;
        }
        std::fs::rename(&staging, destination)
            .with_context(|| format!("moving {} to {}", staging.display(), destination.display()))
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    result
}

/// Removes staging directories of `name` left by runs that were killed (their process is
/// gone).
fn remove_abandoned_staging(parent: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let file_name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = [".partial-", ".old-"].iter().find_map(|kind| {
            file_name
                .strip_prefix(&format!(".{name}{kind}"))
                .and_then(|pid| pid.parse::<libc::pid_t>().ok())
        }) else {
            continue;
        };
        // SAFETY: kill with signal 0 only asks whether the process exists; it sends nothing.
        let alive = unsafe { libc::kill(pid, 0) } == 0;
        if !alive {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn sha256_of(sh: &Shell, path: &Path) -> anyhow::Result<String> {
    let output = cmd!(sh, "sha256sum {path}")
        .quiet()
        .read()
        .with_context(|| format!("hashing {}", path.display()))?;
    Ok(output
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_owned())
}

fn last_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .rfind(|line| !line.is_empty())
        .unwrap_or("(no message)")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_versions_and_suites_follow_debian_syntax() {
        for good in [
            "rustc",
            "rustc-web",
            "libstdc++6",
            "libstd-rust-1.85",
            "g++",
            "0ad",
        ] {
            assert!(is_package_name(good), "{good}");
        }
        for bad in [
            "--help",
            "-o",
            "Rustc",
            "r",
            "",
            "rustc=1",
            "rustc web",
            "a;b",
            "a/b",
        ] {
            assert!(!is_package_name(bad), "{bad}");
        }
        for good in [
            "1.85.1+dfsg1-1+deb13u1",
            "1:19.1.7-3+b1",
            "1.98.1+dfsg1-1~exp1",
            "2.41",
            "1:1.3.dfsg+really1.3.1-1+deb13u1",
            "3.1-20250104-1",
        ] {
            assert!(is_version(good), "{good}");
        }
        for bad in [
            "--help", "", "x1.0", "1.0-", ":1.0", "a:1.0", "1.0 -1", "1.0-a_b", "1:", "1.0;ls",
        ] {
            assert!(!is_version(bad), "{bad}");
        }
        for good in [
            "sid",
            "bookworm-security",
            "trixie-backports",
            "experimental",
        ] {
            assert!(is_suite(good), "{good}");
        }
        for bad in ["--help", "", "Sid", "sid/main", "../etc", "sid main"] {
            assert!(!is_suite(bad), "{bad}");
        }
        let error = checked_package("--help").unwrap_err().to_string();
        assert!(
            error.contains("`--help` is not a Debian package name"),
            "{error}"
        );
    }

    #[test]
    fn versions_compare_as_dpkg_says() {
        let ordered = [
            "1.0~rc1",
            "1.0",
            "1.0-1~bpo13+1",
            "1.0-1",
            "1.0a",
            "1.0+dfsg1-1",
            "1.2",
            "1.10",
            "1:0.1",
        ];
        for (i, a) in ordered.iter().enumerate() {
            for (j, b) in ordered.iter().enumerate() {
                assert_eq!(compare_versions(a, b), i.cmp(&j), "{a} vs {b}");
            }
        }
        assert_eq!(compare_versions("1.01", "1.1"), Ordering::Equal);
        assert_eq!(
            compare_versions("1.97.1+dfsg1-1~bpo13+1", "1.97.1+dfsg1-1"),
            Ordering::Less
        );
    }

    #[test]
    fn versions_compare_as_the_real_dpkg_does() {
        let sh = Shell::new().unwrap();
        let versions = [
            "1.85.1+dfsg1-1+deb13u1",
            "1.85.1+dfsg1-1",
            "1.85.0+dfsg3-1~deb12u3",
            "1:19.1.7-3+b1",
            "1:19.1.7-3",
            "19.1.7-3",
            "2.41-12+deb13u5",
            "2.41-12",
            "1.0~~",
            "1.0~",
            "1.0",
            "1.0.0",
        ];
        for a in versions {
            for b in versions {
                let less = cmd!(sh, "dpkg --compare-versions {a} lt {b}")
                    .quiet()
                    .ignore_status()
                    .output()
                    .unwrap()
                    .status
                    .success();
                assert_eq!(compare_versions(a, b) == Ordering::Less, less, "{a} vs {b}");
            }
        }
    }

    #[test]
    fn relations_of_real_depends_lines() {
        // libllvm19=1:19.1.7-22+b1 (sid), and libc6's first alternative syntax.
        let entries = parse_relations(
            "libc6 (>= 2.38), libedit2 (>= 2.11-20080614-0), libffi8 (>= 3.4), \
             libxml2-16 (>= 2.14.1), zlib1g (>= 1:1.2.0)",
        );
        assert_eq!(entries.len(), 5);
        assert_eq!(entries[1][0].name, "libedit2");
        assert_eq!(
            entries[1][0].constraint,
            Some((Operator::LaterOrEqual, "2.11-20080614-0".to_owned()))
        );
        assert!(entries[4][0].accepts("1:1.2.13.dfsg-1"));
        assert!(
            !entries[4][0].accepts("1.2.13.dfsg-1"),
            "no epoch sorts lower"
        );
        let entries =
            parse_relations("libc-dev | libc6-dev:amd64 (<< 3) [amd64] <!nocheck>, x (= 1)");
        assert_eq!(entries[0].len(), 2);
        assert_eq!(entries[0][1].to_string(), "libc6-dev (<< 3)");
        assert!(entries[0][1].accepts("2.36-9") && !entries[0][1].accepts("3"));
        assert!(entries[1][0].accepts("1") && !entries[1][0].accepts("1.0.1"));
        assert!(parse_relations("").is_empty());
    }

    #[test]
    fn stanzas_and_the_hosts_deb822_sources() {
        // /etc/apt/sources.list.d/debian.sources as the machine's Debian image ships it.
        let sources = "Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
# http://snapshot.debian.org/archive/debian-security/20250520T000000Z
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
";
        let mirrors = Mirrors::from_deb822(sources).unwrap();
        assert_eq!(mirrors.archive, "http://deb.debian.org/debian");
        assert_eq!(mirrors.security, "http://deb.debian.org/debian-security");
        assert_eq!(mirrors.components, ["main"]);
        let suites = ["sid".to_owned(), "trixie-security".to_owned()];
        assert_eq!(
            mirrors.sources_list(&suites),
            "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main\n\
             deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security trixie-security main\n"
        );
        let disabled = "Types: deb\nURIs: http://a/debian\nSuites: sid\nEnabled: no\n\n\
                        Types: deb-src\nURIs: http://b/debian\nSuites: sid\n";
        let error = Mirrors::from_deb822(disabled).unwrap_err().to_string();
        assert!(error.contains("names no Debian archive"), "{error}");
        let odd = "Types: deb\nURIs: file:/srv/mirror\nSuites: sid\n";
        assert!(Mirrors::from_deb822(odd).is_err());
        let continued = parse_stanzas("Description: one\n two\n\n\n# c\nA: b\n");
        assert_eq!(continued.len(), 2);
        assert_eq!(continued[0].get("description"), Some("one\ntwo"));
    }

    #[test]
    fn reachability_settings_of_the_hosts_apt_config_dump() {
        // Lines of `apt-config dump` on this machine (its 99artifact-registry), plus a proxy.
        let dump = r#"Acquire "";
Acquire::AllowInsecureRepositories "0";
Acquire::IndexTargets::deb::Packages::MetaKey "$(COMPONENT)/binary-$(ARCHITECTURE)/Packages";
Acquire::Languages:: "none";
Acquire::Check-Valid-Until "false";
Acquire::Check-Date "false";
Acquire::http::Proxy "http://proxy.example:3128";
APT::Update::Post-Invoke-Success:: "/usr/bin/test -e /x";
"#;
        assert_eq!(
            reachability_settings(dump),
            [
                ("Acquire::Check-Valid-Until".to_owned(), "false".to_owned()),
                ("Acquire::Check-Date".to_owned(), "false".to_owned()),
                (
                    "Acquire::http::Proxy".to_owned(),
                    "http://proxy.example:3128".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn every_apt_path_is_inside_the_private_directory() {
        let dir = Path::new("/work/kshim/target/toolchains/apt");
        let carried = [("Acquire::Check-Valid-Until".to_owned(), "false".to_owned())];
        let options = apt_options(dir, "amd64", &carried);
        for (key, value) in &options {
            if key.starts_with("Dir::") {
                assert!(Path::new(value).starts_with(dir), "{key}={value}");
            }
        }
        for key in [
            "Dir::Etc::SourceList",
            "Dir::Etc::SourceParts",
            "Dir::State::Lists",
            "Dir::State::Status",
            "Dir::Cache",
            "Dir::Log",
            "Dir::Etc::PreferencesParts",
        ] {
            assert!(options.iter().any(|(k, _)| k == key), "{key} is not set");
        }
        assert_eq!(options.last(), Some(&carried[0]));
    }

    #[test]
    fn madison_with_suites_and_reverse_provides() {
        // `apt-cache madison rustc` with bullseye to experimental listed.
        let listing = "     rustc | 1.98.1+dfsg1-1~exp1 | http://deb.debian.org/debian experimental/main amd64 Packages
     rustc | 1.97.1+dfsg1-1 | http://deb.debian.org/debian sid/main amd64 Packages
     rustc | 1.97.1+dfsg1-1~bpo13+1 | http://deb.debian.org/debian trixie-backports/main amd64 Packages
     rustc | 1.85.1+dfsg1-1+deb13u1 | http://deb.debian.org/debian trixie/main amd64 Packages
     rustc | 1.85.1+dfsg1-1+deb13u1 | http://deb.debian.org/debian trixie/main Sources
     rustc | 1.48.0+dfsg1-2 | http://deb.debian.org/debian bullseye/main amd64 Packages
";
        let served = parse_madison_entries(listing, "rustc");
        assert_eq!(served.len(), 5);
        assert_eq!(
            served[2],
            Served {
                version: "1.97.1+dfsg1-1~bpo13+1".into(),
                suite: "trixie-backports".into()
            }
        );
        assert_eq!(parse_madison(listing, "rustc")[4], "1.48.0+dfsg1-2");
        // `apt-cache showpkg libc-dev`, its end.
        let showpkg = "Reverse Provides: \nlibc6-dev 2.41-12+deb13u5 (= 2.41-12+deb13u5)\nlibc6-dev 2.31-13+deb11u11 (= )\n";
        assert_eq!(
            parse_reverse_provides(showpkg),
            [
                ("libc6-dev".to_owned(), "2.41-12+deb13u5".to_owned()),
                ("libc6-dev".to_owned(), "2.31-13+deb11u11".to_owned())
            ]
        );
        assert!(parse_reverse_provides("Package: x\n").is_empty());
    }

    /// A [`PackageIndex`] over a fixture captured from the registry.
    struct FixtureIndex {
        madison: String,
        providers: BTreeMap<String, String>,
        records: Vec<Stanza>,
        installed: BTreeMap<String, String>,
    }

    impl FixtureIndex {
        fn load(name: &str) -> FixtureIndex {
            let path = crate::project_root().join("tests/fixtures/apt").join(name);
            let text = std::fs::read_to_string(&path).unwrap();
            let installed = text
                .lines()
                .filter_map(|line| line.strip_prefix("# installed "))
                .filter_map(|rest| rest.split_once(' '))
                .filter(|(_, version)| *version != "-")
                .map(|(name, version)| (name.to_owned(), version.to_owned()))
                .collect();
            let (head, records) = text.split_once("## records\n").unwrap();
            let mut parts = head.split("\n## ");
            let madison = parts
                .find_map(|part| part.strip_prefix("madison\n"))
                .unwrap()
                .to_owned();
            let providers = head
                .split("\n## showpkg ")
                .skip(1)
                .filter_map(|part| part.split_once('\n'))
                .map(|(name, body)| (name.to_owned(), body.to_owned()))
                .collect();
            FixtureIndex {
                madison,
                providers,
                records: parse_stanzas(records),
                installed,
            }
        }
    }

    impl PackageIndex for FixtureIndex {
        fn served(&mut self, name: &str) -> anyhow::Result<Vec<Served>> {
            Ok(parse_madison_entries(&self.madison, name))
        }
        fn record(&mut self, name: &str, version: &str) -> anyhow::Result<Stanza> {
            self.records
                .iter()
                .find(|record| {
                    record.get("Package") == Some(name) && record.get("Version") == Some(version)
                })
                .cloned()
                .with_context(|| format!("the fixture has no record of {name}={version}"))
        }
        fn providers(&mut self, name: &str) -> anyhow::Result<Vec<(String, String)>> {
            Ok(self
                .providers
                .get(name)
                .map(|text| parse_reverse_provides(text))
                .unwrap_or_default())
        }
        fn installed(&mut self, name: &str) -> anyhow::Result<Option<String>> {
            Ok(self.installed.get(name).cloned())
        }
    }

    fn suites(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| name.to_string()).collect()
    }

    fn names(closure: &[Resolved]) -> Vec<String> {
        closure
            .iter()
            .map(|package| format!("{}={}", package.name, package.version))
            .collect()
    }

    #[test]
    fn bullseye_rustc_web_borrows_what_the_bookworm_host_has() {
        let mut index = FixtureIndex::load("closure-bullseye.txt");
        let bullseye = suites(&["bullseye-security", "bullseye-updates", "bullseye"]);
        let closure = closure(
            &mut index,
            "rustc-web",
            "1.78.0+dfsg1-2~deb11u3",
            &bullseye,
            HostLibraries::Reuse,
        )
        .unwrap();
        assert_eq!(
            names(&closure),
            [
                "libffi7=3.3-6",
                "libllvm16=1:16.0.6-15~deb11u2",
                "libstd-rust-web-1.78=1.78.0+dfsg1-2~deb11u3",
                "libstd-rust-web-dev=1.78.0+dfsg1-2~deb11u3",
                "rustc-web=1.78.0+dfsg1-2~deb11u3",
            ]
        );
        let ffi = &closure[0];
        assert_eq!(ffi.deb_file_name(), "libffi7_3.3-6_amd64.deb");
        assert!(
            ffi.wanted_by
                .starts_with("libllvm16=1:16.0.6-15~deb11u2 depends on libffi7"),
            "{}",
            ffi.wanted_by
        );
        assert_eq!(
            closure[1].deb_file_name(),
            "libllvm16_1%3a16.0.6-15~deb11u2_amd64.deb"
        );
        assert!(closure
            .iter()
            .all(|package| package.source != C_LIBRARY_SOURCE));
    }

    #[test]
    fn trixie_rustc_brings_its_own_c_library() {
        let mut index = FixtureIndex::load("closure-trixie.txt");
        let trixie = suites(&["trixie-security", "trixie-updates", "trixie"]);
        let closure = closure(
            &mut index,
            "rustc",
            "1.85.1+dfsg1-1+deb13u1",
            &trixie,
            HostLibraries::Never,
        )
        .unwrap();
        let taken = names(&closure);
        for wanted in [
            "libc6=2.41-12+deb13u5",
            "libllvm19=1:19.1.7-3+b1",
            "libstd-rust-dev=1.85.1+dfsg1-1+deb13u1",
            "libstdc++6=14.2.0-19",
            "zlib1g=1:1.3.dfsg+really1.3.1-1+deb13u1",
        ] {
            assert!(
                taken.contains(&wanted.to_owned()),
                "{wanted} not in {taken:?}"
            );
        }
        assert_eq!(closure.len(), 18, "{taken:?}");
        // Programs rustc starts (gcc, binutils) and files it does not load (libc6-dev) stay the
        // host's.
        assert!(
            !taken.iter().any(|name| name.starts_with("gcc=")
                || name.starts_with("binutils=")
                || name.starts_with("libc6-dev=")),
            "{taken:?}"
        );
        let zlib = closure
            .iter()
            .find(|package| package.name == "zlib1g")
            .unwrap();
        assert_eq!(
            zlib.suite, "trixie-security",
            "the first suite that serves a fitting version"
        );
        let total: u64 = closure.iter().map(|package| package.size).sum();
        assert!(total > 100_000_000, "{total}");
    }

    #[test]
    fn what_cannot_be_resolved_is_named() {
        let mut index = FixtureIndex::load("closure-trixie.txt");
        let trixie = suites(&["trixie"]);
        let error = closure(
            &mut index,
            "rustc",
            "1.85.0+dfsg1-1",
            &trixie,
            HostLibraries::Never,
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("the suite trixie serve no rustc=1.85.0+dfsg1-1; the registry has rustc 1.85.1+dfsg1-1+deb13u1 (trixie)"), "{error}");
        let error = closure(
            &mut index,
            "rustc",
            "1.85.1+dfsg1-1+deb13u1",
            &suites(&["sid"]),
            HostLibraries::Never,
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("the suite sid serve no rustc=1.85.1"),
            "{error}"
        );
        let error = closure(&mut index, "rustc", "--help", &trixie, HostLibraries::Never)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("`--help` is not a Debian version"),
            "{error}"
        );
        // A library the suites do not serve stops the closure, naming who needs it.
        index.madison = index
            .madison
            .lines()
            .filter(|line| !line.contains(" libffi8 "))
            .collect::<Vec<_>>()
            .join("\n");
        let error = closure(
            &mut index,
            "rustc",
            "1.85.1+dfsg1-1+deb13u1",
            &suites(&["trixie-security", "trixie"]),
            HostLibraries::Never,
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("libllvm19=1:19.1.7-3+b1 depends on libffi8 (>= 3.4), which the suites trixie-security, trixie do not serve"), "{error}");
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = crate::project_root()
            .join("target/kshim/test-scratch/apt")
            .join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Builds a real `.deb` holding `usr/share/kshim/NAME.txt`.
    fn build_deb(sh: &Shell, dir: &Path, name: &str) -> PathBuf {
        let root = dir.join(format!("{name}-root"));
        std::fs::create_dir_all(root.join("DEBIAN")).unwrap();
        std::fs::create_dir_all(root.join("usr/share/kshim")).unwrap();
        std::fs::write(
            root.join("DEBIAN/control"),
            format!("Package: {name}\nVersion: 1.0\nArchitecture: all\nMaintainer: kshim <kshim@localhost>\nDescription: test\n"),
        )
        .unwrap();
        std::fs::write(root.join(format!("usr/share/kshim/{name}.txt")), name).unwrap();
        let deb = dir.join(format!("{name}.deb"));
        cmd!(sh, "dpkg-deb --root-owner-group --build {root} {deb}")
            .quiet()
            .ignore_stdout()
            .run()
            .unwrap();
        deb
    }

    #[test]
    fn unpacking_is_all_or_nothing() {
        let sh = Shell::new().unwrap();
        let dir = scratch("unpack");
        let debs = [
            build_deb(&sh, &dir, "first"),
            build_deb(&sh, &dir, "second"),
        ];
        let destination = dir.join("prefix");
        unpack_atomically(&sh, &debs, &destination, |staging| {
            assert!(staging.join("usr/share/kshim/second.txt").is_file());
            Ok(())
        })
        .unwrap();
        assert!(destination.join("usr/share/kshim/first.txt").is_file());

        // A check that fails leaves the complete copy alone and no staging behind.
        let error = unpack_atomically(&sh, &debs[..1], &destination, |_| {
            bail!("it will not start")
        })
        .unwrap_err();
        assert_eq!(error.to_string(), "it will not start");
        assert!(destination.join("usr/share/kshim/second.txt").is_file());
        // So does a package cut short.
        let bytes = std::fs::read(&debs[1]).unwrap();
        let cut = dir.join("cut.deb");
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        let error = unpack_atomically(&sh, &[debs[0].clone(), cut], &dir.join("other"), |_| Ok(()))
            .unwrap_err();
        assert!(format!("{error:#}").contains("unpacking"), "{error:#}");
        assert!(!dir.join("other").exists());
        let leftovers: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(Result::ok)
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    /// Provisions Debian's 1.78.0 (bullseye's rustc-web) for real: the private apt, the
    /// closure, the download and the unpacking, and the compiler's own `-vV`.
    #[test]
    #[ignore = "downloads about 85 MB from Debian's registry; run with `cargo test -p xtask -- --ignored`"]
    fn provisions_rustc_web_1_78_0_from_bullseye() {
        let sh = Shell::new().unwrap();
        let root = crate::project_root().join("target/kshim/test-scratch/apt-network");
        let bullseye = ["bullseye-security", "bullseye-updates", "bullseye"];
        let apt = PrivateApt::create(&sh, &root.join("apt"), &bullseye).unwrap();
        let problems = apt.update(&sh).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        let mut index = AptIndex::new(&sh, &apt);
        let version = "1.78.0+dfsg1-2~deb11u3";
        let suites = suites(&bullseye);
        let packages = closure(
            &mut index,
            "rustc-web",
            version,
            &suites,
            HostLibraries::Reuse,
        )
        .unwrap();
        assert!(packages
            .iter()
            .any(|package| package.name.starts_with("libllvm16")));
        let downloaded = apt.download(&sh, &packages, &root.join("debs")).unwrap();
        assert!(downloaded.total_bytes > 50_000_000, "{downloaded:?}");
        let prefix = root.join("rustc-web-1.78.0");
        unpack_atomically(&sh, &downloaded.files, &prefix, |staging| {
            crate::loader::Launch::for_prefix(staging)?.run(&["-vV"], Duration::from_secs(60))?;
            Ok(())
        })
        .unwrap();
        let launch = crate::loader::Launch::for_prefix(&prefix).unwrap();
        assert_eq!(launch.kind, crate::loader::LoaderKind::Host);
        let said = launch.run(&["-vV"], Duration::from_secs(60)).unwrap();
        assert!(said.contains("release: 1.78.0"), "{said}");
    }
    #[test]
    fn depends_of_rustc_web() {
        // `apt-cache show rustc-web=1.85.0+dfsg3-1~deb12u3`, and libstd-rust-web-1.85's.
        let depends = parse_depends(
            "libc6 (>= 2.34), libgcc-s1 (>= 3.0), libstd-rust-web-dev (= 1.85.0+dfsg3-1~deb12u3), \
             gcc, libc-dev, binutils (>= 2.26)",
        );
        let names: Vec<&str> = depends.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "libc6",
                "libgcc-s1",
                "libstd-rust-web-dev",
                "gcc",
                "libc-dev",
                "binutils"
            ]
        );
        assert_eq!(
            depends[2].exact_version.as_deref(),
            Some("1.85.0+dfsg3-1~deb12u3")
        );
        assert_eq!(depends[0].exact_version, None);
        let libraries: Vec<String> =
            parse_depends("libc6 (>= 2.34), libgcc-s1 (>= 4.2), libllvm19, libstdc++6 (>= 11)")
                .into_iter()
                .filter(|dependency| is_compiler_library(&dependency.name))
                .map(|dependency| dependency.name)
                .collect();
        assert_eq!(libraries, ["libllvm19"]);
    }

    #[test]
    fn depends_with_alternatives_and_architectures() {
        let depends = parse_depends("libc-dev | libc6-dev:amd64 (>= 2), python3:any");
        assert_eq!(
            depends,
            [
                Dependency {
                    name: "libc-dev".into(),
                    exact_version: None
                },
                Dependency {
                    name: "python3".into(),
                    exact_version: None
                },
            ]
        );
        assert!(parse_depends("").is_empty());
    }

    #[test]
    fn madison_listing() {
        let listing = " rustc-web | 1.96.0+dfsg1-1~deb12u2 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
 rustc-web | 1.85.0+dfsg3-1~deb12u3 | http://deb.debian.org/debian bookworm/main amd64 Packages
 rustc-web | 1.85.0+dfsg3-1~deb12u3 | http://deb.debian.org/debian bookworm/main Sources
 rustc-web-doc | 1.85.0+dfsg3-1~deb12u3 | http://deb.debian.org/debian bookworm/main amd64 Packages
";
        assert_eq!(
            parse_madison(listing, "rustc-web"),
            ["1.96.0+dfsg1-1~deb12u2", "1.85.0+dfsg3-1~deb12u3"]
        );
        assert!(parse_madison("", "rustc").is_empty());
    }
}
