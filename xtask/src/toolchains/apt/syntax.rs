// SPDX-License-Identifier: GPL-2.0
//! Debian's control-file syntax as apt prints it: versions compared as dpkg does, `Depends`
//! relations, stanzas, and `apt-cache madison`/`showpkg` listings.

use std::cmp::Ordering;
use std::fmt;

/// Compares two Debian versions as dpkg does (epoch, then upstream, then revision, `~`
/// sorting before everything, even the end of the string).
pub(crate) fn compare_versions(a: &str, b: &str) -> Ordering {
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

/// dpkg's `verrevcmp`: alternating runs of non-digits, compared byte by byte by weight (the
/// end of a run weighing 0), and of digits, compared as numbers.
fn compare_fragment(mut a: &[u8], mut b: &[u8]) -> Ordering {
    fn weight(c: Option<&u8>) -> i32 {
        match c.copied() {
            None => 0,
            Some(c) if c.is_ascii_alphabetic() => i32::from(c),
            Some(b'~') => -1,
            Some(c) => i32::from(c) + 256,
        }
    }
    /// Takes the leading run of digits (or of non-digits) off `s`.
    fn run<'a>(s: &mut &'a [u8], digits: bool) -> &'a [u8] {
        let end = s.iter().position(|c| c.is_ascii_digit() != digits);
        let (run, rest) = s.split_at(end.unwrap_or(s.len()));
        *s = rest;
        run
    }
    fn number<'a>(s: &mut &'a [u8]) -> &'a [u8] {
        let digits = run(s, true);
        &digits[digits.iter().take_while(|&&c| c == b'0').count()..]
    }
    while !a.is_empty() || !b.is_empty() {
        let (text_a, text_b) = (run(&mut a, false), run(&mut b, false));
        let texts = (0..text_a.len().max(text_b.len()))
            .map(|i| weight(text_a.get(i)).cmp(&weight(text_b.get(i))));
        let (number_a, number_b) = (number(&mut a), number(&mut b));
        let numbers = number_a
            .len()
            .cmp(&number_b.len())
            .then(number_a.cmp(number_b));
        if let Some(order) = texts.chain([numbers]).find(|order| order.is_ne()) {
            return order;
        }
    }
    Ordering::Equal
}

/// Each version relation as written and as Debian writes it now (`<` and `>` are obsolete forms
/// of `<=` and `>=`); longer symbols first, as they are matched by prefix.
const OPERATORS: [(&str, &str); 7] = [
    ("<<", "<<"),
    ("<=", "<="),
    (">=", ">="),
    (">>", ">>"),
    ("=", "="),
    ("<", "<="),
    (">", ">="),
];

/// One alternative of a dependency: `libc6 (>= 2.34)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Relation {
    /// The package (or virtual package) name, without an architecture qualifier.
    pub name: String,
    /// The relation (`<<`, `<=`, `=`, `>=` or `>>`) and the version.
    pub constraint: Option<(&'static str, String)>,
}

impl Relation {
    pub(crate) fn accepts(&self, version: &str) -> bool {
        let Some((operator, wanted)) = &self.constraint else {
            return true;
        };
        let order = compare_versions(version, wanted);
        match *operator {
            "<<" => order.is_lt(),
            "<=" => order.is_le(),
            ">=" => order.is_ge(),
            ">>" => order.is_gt(),
            _ => order.is_eq(),
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
/// alternatives (`a | b`).
pub(crate) fn parse_relations(value: &str) -> Vec<Vec<Relation>> {
    let entries = value.split(',').map(|entry| {
        let alternatives = entry.split('|').filter_map(parse_alternative);
        alternatives.collect::<Vec<_>>()
    });
    entries
        .filter(|alternatives| !alternatives.is_empty())
        .collect()
}

/// One alternative of a dependency, its architecture qualifier (`:any`), restrictions
/// (`[amd64]`) and build profiles (`<!nocheck>`) dropped.
fn parse_alternative(alternative: &str) -> Option<Relation> {
    // Restrictions and build profiles follow the name and the version relation.
    let after = alternative.find(')').unwrap_or(0);
    let end = alternative[after..].find(['[', '<']);
    let alternative = alternative[..end.map_or(alternative.len(), |at| after + at)].trim();
    let (name, constraint) = match alternative.split_once('(') {
        Some((name, constraint)) => (name.trim(), Some(constraint.trim_end_matches(')').trim())),
        None => (alternative, None),
    };
    let name = name.split(':').next()?.trim();
    let constraint = constraint.and_then(|text| {
        OPERATORS.iter().find_map(|&(symbol, operator)| {
            Some((operator, text.strip_prefix(symbol)?.trim().to_owned()))
        })
    });
    (!name.is_empty()).then(|| Relation {
        name: name.to_owned(),
        constraint,
    })
}

/// One stanza of a control file (an `apt-cache show` record, a deb822 sources entry).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Stanza {
    fields: Vec<(String, String)>,
}

impl Stanza {
    /// The value of `name` (field names are case-insensitive), continuation lines joined
    /// with newlines.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// Parses control-file text into stanzas; `#` comment lines are skipped.
pub(crate) fn parse_stanzas(text: &str) -> Vec<Stanza> {
    let mut stanzas = Vec::new();
    let mut current = Stanza::default();
    for line in text.lines().filter(|line| !line.starts_with('#')) {
        if line.trim().is_empty() {
            if !current.fields.is_empty() {
                stanzas.push(std::mem::take(&mut current));
            }
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

/// One version of a package, as `apt-cache madison` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Served {
    pub version: String,
    /// The suite that serves it: `bookworm-security`.
    pub suite: String,
}

/// Parses `apt-cache madison` lines into every binary version of `package` and its suite:
/// ` rustc-web | 1.85.0+dfsg3-1~deb12u3 | http://deb.debian.org/debian bookworm/main amd64 Packages`.
pub(crate) fn parse_madison_entries(listing: &str, package: &str) -> Vec<Served> {
    let entries = listing.lines().filter_map(|line| {
        let mut columns = line.split('|').map(str::trim);
        let (name, version, source) = (columns.next()?, columns.next()?, columns.next()?);
        // Source packages are listed too ("... Sources"); only binaries can be downloaded.
        if name != package || source.ends_with("Sources") {
            return None;
        }
        let suite = source.split_whitespace().nth(1)?.split('/').next()?;
        Some(Served {
            version: version.to_owned(),
            suite: suite.to_owned(),
        })
    });
    crate::distinct(entries)
}

/// Parses the `Reverse Provides:` section of `apt-cache showpkg` into `(package, version)`.
pub(crate) fn parse_reverse_provides(showpkg: &str) -> Vec<(String, String)> {
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
