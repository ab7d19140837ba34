// SPDX-License-Identifier: GPL-2.0
//! The packages that unpacked together make a compiler run: its shared-library closure, read
//! from the packages' `Depends` within the suites named, never from a hand list.

use super::{
    checked_package, checked_suite, checked_version, compare_versions, parse_relations, Relation,
    Served, Stanza,
};
use anyhow::{bail, ensure, Context};
use std::collections::BTreeMap;
use std::fmt;

/// A package chosen for a closure, with what downloading and checking it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub name: String,
    pub version: String,
    pub suite: String,
    /// The architecture of its `.deb` (`amd64`, `all`).
    pub architecture: String,
    /// Its source package (`glibc`).
    pub source: String,
    pub size: u64,
    /// The SHA-256 of its `.deb`, as the signed index lists it.
    pub sha256: String,
}

impl Resolved {
    /// The file name `apt-get download` gives its `.deb` (the epoch's `:` escaped).
    pub(crate) fn deb_file_name(&self) -> String {
        let version = self.version.replace(':', "%3a");
        format!("{}_{version}_{}.deb", self.name, self.architecture)
    }
}

impl fmt::Display for Resolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={} ({})", self.name, self.version, self.suite)
    }
}

/// What the closure may take from the machine itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HostLibraries {
    /// A library the host has at a version that satisfies the dependency is the host's: the
    /// compiler runs under the host's loader with `LD_LIBRARY_PATH`, which the programs it
    /// starts (`cc`, the linker) inherit, so they must keep finding the host's own copies.
    /// Safe as Debian's shared-library packages keep their ABI within a soname.
    Reuse,
    /// Nothing comes from the host: the compiler runs under the loader unpacked beside it.
    Never,
}

/// What the closure needs to know about packages (the private apt, or fixed records in tests).
pub(crate) trait PackageIndex {
    /// Every binary version of `name` the suites serve (none for a virtual package).
    fn served(&mut self, name: &str) -> anyhow::Result<Vec<Served>>;
    fn record(&mut self, name: &str, version: &str) -> anyhow::Result<Stanza>;
    /// The real packages that provide the virtual package `name`, as `(package, version)`.
    fn providers(&mut self, name: &str) -> anyhow::Result<Vec<(String, String)>>;
    /// The version of `name` installed on the machine.
    fn installed(&mut self, name: &str) -> anyhow::Result<Option<String>>;
}

/// The packages that unpacked together make `package` at `version` run: the package itself,
/// and recursively every dependency that is a shared library (section `libs` or `oldlibs`)
/// or built from the compiler's own source package; programs it only starts (gcc) and files
/// it does not load (libc6-dev) stay the host's.
///
/// A dependency takes the newest fitting version in the first of `suites` that has one. With
/// [`HostLibraries::Reuse`], a library the host satisfies is left out (never one of the
/// compiler's own packages, which must sit beside it).
pub(crate) fn closure(
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
    let Some((_, root_suite)) = best_in_suites(&served, suites, |served| served == version) else {
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
    // Every package chosen or queued, at its version: a later dependency on it must fit it.
    let mut taken = BTreeMap::from([(package.to_owned(), version.to_owned())]);
    let mut queue = vec![(package.to_owned(), version.to_owned(), root_suite)];
    while let Some((name, version, suite)) = queue.pop() {
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
        };
        chosen.insert(name.clone(), resolved);
        let relations = ["Pre-Depends", "Depends"]
            .iter()
            .filter_map(|key| record.get(key))
            .flat_map(parse_relations);
        for alternatives in relations {
            let described: Vec<String> = alternatives.iter().map(Relation::to_string).collect();
            let described = described.join(" | ");
            let dependent = format!("{name}={version} depends on {described}");
            let fitted = alternatives
                .iter()
                .find_map(|relation| Some((relation, taken.get(&relation.name)?)));
            if let Some((relation, taken_version)) = fitted {
                ensure!(
                    relation.accepts(taken_version),
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
            if !is_own && !matches!(section, "libs" | "oldlibs") {
                continue;
            }
            if !is_own && host == HostLibraries::Reuse && on_host(index, &alternatives)? {
                continue;
            }
            taken.insert(candidate.clone(), candidate_version.clone());
            queue.push((candidate, candidate_version, candidate_suite));
        }
    }
    Ok(chosen.into_values().collect())
}

/// The first alternative the suites serve at a fitting version, as `(package, version, suite)`;
/// a virtual package is replaced by a real package that provides it.
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

/// Whether the machine has one of `alternatives` installed at a version that fits.
fn on_host(index: &mut dyn PackageIndex, alternatives: &[Relation]) -> anyhow::Result<bool> {
    for relation in alternatives {
        if (index.installed(&relation.name)?).is_some_and(|version| relation.accepts(&version)) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The newest accepted version in the first of `suites` that has one.
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
