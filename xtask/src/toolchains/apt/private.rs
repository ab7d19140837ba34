// SPDX-License-Identifier: GPL-2.0
//! The private apt itself: the machine's mirrors and reachability settings, its own sources
//! list, lists, caches and empty dpkg status under one directory, and the queries and
//! verified downloads made through it.

use super::{
    checked_package, checked_suite, checked_version, parse_madison_entries, parse_reverse_provides,
    parse_stanzas, PackageIndex, Resolved, Served, Stanza, ARCHIVE_KEYRING, HOST_SOURCES,
};
use crate::util::process::last_line;
use anyhow::{bail, ensure, Context};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;
use xshell::{cmd, Shell};

/// Where the machine's apt fetches Debian from: the archive's and the security archive's URIs,
/// and the components to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mirrors {
    pub archive: String,
    pub security: String,
    pub components: Vec<String>,
}

impl Mirrors {
    /// The mirrors that a deb822 sources file names: the URI of its `-security` suites is the
    /// security archive's, the other one the archive's.
    pub(crate) fn from_deb822(text: &str) -> anyhow::Result<Mirrors> {
        let mut archive = None;
        let mut security = None;
        let mut components = Vec::new();
        for stanza in parse_stanzas(text) {
            let words = |name: &str| stanza.get(name).unwrap_or_default().split_whitespace();
            let enabled = stanza.get("Enabled").is_none_or(|value| value != "no");
            let is_deb = words("Types").any(|kind| kind == "deb");
            let uri = words("URIs").next();
            let (Some(uri), Some(suites), true) = (uri, stanza.get("Suites"), enabled && is_deb)
            else {
                continue;
            };
            let secure = suites
                .split_whitespace()
                .any(|suite| suite.ends_with("-security"));
            let slot = if secure { &mut security } else { &mut archive };
            slot.get_or_insert_with(|| uri.trim_end_matches('/').to_owned());
            let listed = stanza.get("Components").unwrap_or("main");
            for component in listed.split_whitespace() {
                crate::push_once(&mut components, component.to_owned());
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

    /// The one-line sources list for `suites`, every suite signed by [`ARCHIVE_KEYRING`].
    pub(crate) fn sources_list(&self, suites: &[String]) -> String {
        let (archive, security) = (&self.archive, &self.security);
        let components = self.components.join(" ");
        suites
            .iter()
            .map(|suite| {
                let secure = suite.ends_with("-security");
                let uri = if secure { security } else { archive };
                format!("deb [signed-by={ARCHIVE_KEYRING}] {uri} {suite} {components}\n")
            })
            .collect()
    }
}

/// The settings of the machine's apt that say how to reach the registry (proxies, whether an
/// expired `Valid-Until` is accepted), from `apt-config dump`, to pass on to the private apt.
pub(crate) fn reachability_settings(dump: &str) -> Vec<(String, String)> {
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

/// A private apt: nothing of the system's apt or dpkg state is read for decisions or written.
#[derive(Debug, Clone)]
pub(crate) struct PrivateApt {
    dir: PathBuf,
    suites: Vec<String>,
    options: Vec<(String, String)>,
}

impl PrivateApt {
    /// Creates (or reuses) the private apt in `dir` for `suites`, with the machine's mirrors
    /// (from [`HOST_SOURCES`]) and its [`reachability_settings`].
    pub(crate) fn create(sh: &Shell, dir: &Path, suites: &[String]) -> anyhow::Result<PrivateApt> {
        let sources = std::fs::read_to_string(HOST_SOURCES)
            .with_context(|| format!("reading the machine's apt sources {HOST_SOURCES}"))?;
        let mirrors =
            Mirrors::from_deb822(&sources).with_context(|| format!("reading {HOST_SOURCES}"))?;
        let dump = cmd!(sh, "apt-config dump").quiet().read();
        let dump = dump.context("running apt-config (is this a Debian-like system?)")?;
        let architecture = cmd!(sh, "dpkg --print-architecture").quiet().read();
        let architecture = architecture.context("running dpkg --print-architecture")?;
        let architecture = architecture.trim();
        ensure!(
            Path::new(ARCHIVE_KEYRING).is_file(),
            "{ARCHIVE_KEYRING} is missing: install the debian-archive-keyring package"
        );
        let named = |b: u8| b.is_ascii_alphanumeric() || b == b'-';
        ensure!(
            !architecture.is_empty() && architecture.bytes().all(named),
            "`{architecture}` is not a Debian architecture"
        );
        for suite in suites {
            checked_suite(suite)?;
        }
        let dir = std::path::absolute(dir)
            .with_context(|| format!("making {} absolute", dir.display()))?;
        for sub in "lists/partial cache/archives/partial state log empty".split(' ') {
            let path = dir.join(sub);
            std::fs::create_dir_all(&path)
                .with_context(|| format!("creating {}", path.display()))?;
        }
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
        };
        write("sources.list", &mirrors.sources_list(suites))?;
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
        let options = apt_options(&dir, architecture, &reachability_settings(&dump));
        Ok(PrivateApt {
            dir,
            suites: suites.to_vec(),
            options,
        })
    }

    /// The suites the sources list in `dir` names, if [`PrivateApt::create`] set it up before.
    pub(crate) fn listed_suites(dir: &Path) -> Vec<String> {
        let text = std::fs::read_to_string(dir.join("sources.list")).unwrap_or_default();
        text.lines()
            .filter_map(|line| {
                let words: Vec<&str> = line.split_whitespace().collect();
                let suite = match words.as_slice() {
                    ["deb", options, _uri, suite, ..] if options.starts_with('[') => suite,
                    ["deb", _uri, suite, ..] => suite,
                    _ => return None,
                };
                super::is_suite(suite).then(|| suite.to_string())
            })
            .collect()
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// `program` with the `-o KEY=VALUE` arguments every apt command gets.
    fn apt<'a>(&self, sh: &'a Shell, program: &str) -> xshell::Cmd<'a> {
        let options = self
            .options
            .iter()
            .flat_map(|(key, value)| ["-o".to_owned(), format!("{key}={value}")]);
        cmd!(sh, "{program} {options...}")
            .env("APT_CONFIG", self.dir.join("apt.conf"))
            .env("LC_ALL", "C")
            .quiet()
    }

    /// Runs `apt-get update`: fetches and verifies every suite's index. A suite that fails
    /// (not served, bad signature, cut short) keeps what it had; the result says, per suite,
    /// what went wrong, and the index is usable for the others.
    pub(crate) fn update(&self, sh: &Shell) -> anyhow::Result<BTreeMap<String, String>> {
        let output = self
            .apt(sh, "apt-get")
            .arg("update")
            .ignore_status()
            .output();
        let output = output.context("running apt-get update (is this a Debian-like system?)")?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        let lists = crate::util::files::sorted_entries(&self.dir.join("lists"));
        // A verified `InRelease` of `suite` in the lists.
        let has_index = |suite: &str| {
            let wanted = format!("_dists_{suite}_InRelease");
            lists
                .iter()
                .any(|path| path.to_string_lossy().ends_with(&wanted))
        };
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
            } else if !has_index(suite) {
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

    /// What `apt-cache QUERY ARGUMENT` prints on stdout (`showpkg`'s whatever its exit status).
    fn apt_cache(&self, sh: &Shell, query: &str, argument: &str) -> xshell::Result<String> {
        let mut cmd = self.apt(sh, "apt-cache").args([query, argument]);
        cmd.set_ignore_stderr(true);
        cmd.set_ignore_status(query == "showpkg");
        cmd.read()
    }

    /// The binary versions of `package` the suites serve.
    pub(crate) fn madison(&self, sh: &Shell, package: &str) -> anyhow::Result<Vec<Served>> {
        let listing = self
            .apt_cache(sh, "madison", checked_package(package)?)
            .with_context(|| format!("running apt-cache madison {package}"))?;
        Ok(parse_madison_entries(&listing, package))
    }

    /// Downloads `packages` into `cache`, reusing a `.deb` with the SHA-256 the signed index
    /// lists. apt fetches into a fresh directory beside the cache, and a file moves into the
    /// cache only once its SHA-256 matches, so a cut-short download is never taken for complete.
    pub(crate) fn download(
        &self,
        sh: &Shell,
        packages: &[Resolved],
        cache: &Path,
    ) -> anyhow::Result<Downloaded> {
        std::fs::create_dir_all(cache).with_context(|| format!("creating {}", cache.display()))?;
        let names: Vec<String> = packages
            .iter()
            .map(Resolved::deb_file_name)
            .filter(|name| cache.join(name).is_file())
            .collect();
        let cached = crate::toolchains::digests::digests_of(cache, &names)?;
        let missing: Vec<&Resolved> = packages
            .iter()
            .filter(|package| cached.get(&package.deb_file_name()) != Some(&package.sha256))
            .collect();
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
        let download = self.apt(sh, "apt-get").arg("download").args(&specs);
        let output = download
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
            let digests =
                crate::toolchains::digests::digests_of(incoming, &[package.deb_file_name()])?;
            let actual = &digests[&package.deb_file_name()];
            ensure!(
                *actual == package.sha256,
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
pub(crate) fn apt_options(
    dir: &Path,
    architecture: &str,
    carried: &[(String, String)],
) -> Vec<(String, String)> {
    let at = |sub: &str| dir.join(sub).display().to_string();
    [
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
    .chain(carried.iter().cloned())
    .collect()
}

/// What [`PrivateApt::download`] did: every `.deb` in the order asked, how many were fetched
/// (the others were in the cache) and their bytes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Downloaded {
    pub files: Vec<PathBuf>,
    pub fetched: usize,
    pub fetched_bytes: u64,
    pub seconds: f64,
}

/// The [`PackageIndex`] of a [`PrivateApt`], with answers kept for the run.
pub(crate) struct AptIndex<'a> {
    sh: &'a Shell,
    apt: &'a PrivateApt,
    served: BTreeMap<String, Vec<Served>>,
    records: BTreeMap<(String, String), Stanza>,
}

impl<'a> AptIndex<'a> {
    pub(crate) fn new(sh: &'a Shell, apt: &'a PrivateApt) -> AptIndex<'a> {
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
        if !self.served.contains_key(name) {
            let served = self.apt.madison(self.sh, name)?;
            self.served.insert(name.to_owned(), served);
        }
        Ok(self.served[name].clone())
    }

    fn record(&mut self, name: &str, version: &str) -> anyhow::Result<Stanza> {
        let key = (name.to_owned(), version.to_owned());
        if !self.records.contains_key(&key) {
            let spec = format!("{}={}", checked_package(name)?, checked_version(version)?);
            let shown = self
                .apt
                .apt_cache(self.sh, "show", &spec)
                .with_context(|| format!("reading the registry's record of {spec}"))?;
            let record = parse_stanzas(&shown)
                .into_iter()
                .next()
                .with_context(|| format!("the registry has no record of {spec}"))?;
            self.records.insert(key.clone(), record);
        }
        Ok(self.records[&key].clone())
    }

    fn providers(&mut self, name: &str) -> anyhow::Result<Vec<(String, String)>> {
        let shown = self
            .apt
            .apt_cache(self.sh, "showpkg", checked_package(name)?)
            .with_context(|| format!("running apt-cache showpkg {name}"))?;
        Ok(parse_reverse_provides(&shown))
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
