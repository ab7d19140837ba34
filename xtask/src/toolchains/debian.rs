// SPDX-License-Identifier: GPL-2.0
//! Debian's compilers: the `SUITE:PACKAGE[=VERSION]` that names one, and provisioning it into a
//! prefix of its own under `target/toolchains/debian/` through the private apt, installed only
//! once it has answered `-vV`.

use crate::toolchains::apt::{self, AptIndex, HostLibraries, PrivateApt};
use crate::toolchains::digests;
use crate::toolchains::extracted::{self, Extracted, Marker, Wanted};
use crate::toolchains::loader::Launch;
use crate::toolchains::version::{parse_verbose_version, RustcVersion};
use crate::util::run_lock::{self, RunLock};
use anyhow::{anyhow, bail, ensure, Context};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use xshell::Shell;

/// Where provisioned tools live: `target/toolchains/` at the repository root, whatever
/// `CARGO_TARGET_DIR` says.
pub(crate) fn toolchains_dir() -> PathBuf {
    crate::project_root().join("target").join("toolchains")
}

/// Whether a compiler that is not there may be provisioned (`--dry-run` refuses, before the
/// private apt, the network or `target/toolchains/` is touched).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provisioning {
    Allowed,
    Refused,
}

/// The file that says a compiler's prefix is complete: the exact [`DebianSource`], then one line
/// per package.
pub(crate) const MARKER: &str = "kshim-provisioned.txt";

const CHECK_TIMEOUT: Duration = Duration::from_secs(60);
const LISTS_MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);

/// A Debian compiler package in a suite: `trixie:rustc=1.85.1+dfsg1-1+deb13u1`, or without a
/// version (`bookworm:rustc-web`) for the newest build of the release wanted.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DebianSource {
    pub suite: String,
    pub package: String,
    pub version: Option<String>,
}

impl DebianSource {
    /// Parses `SUITE:PACKAGE[=VERSION]`, each part checked so that none can reach apt as an
    /// option or a pattern.
    pub fn parse(text: &str) -> anyhow::Result<DebianSource> {
        let usage = "SUITE:PACKAGE or SUITE:PACKAGE=VERSION, such as \
                     `trixie:rustc=1.85.1+dfsg1-1+deb13u1`";
        let Some((suite, rest)) = text.split_once(':') else {
            bail!("`{}` names no suite; write {usage}", text.escape_debug());
        };
        let (package, version) = rest
            .split_once('=')
            .map_or((rest, None), |(package, version)| (package, Some(version)));
        let checked = apt::checked_suite(suite)
            .and(apt::checked_package(package))
            .and(version.map_or(Ok(""), apt::checked_version));
        checked.map_err(|error| anyhow!("{error}; write {usage}"))?;
        Ok(DebianSource {
            suite: suite.to_owned(),
            package: package.to_owned(),
            version: version.map(str::to_owned),
        })
    }

    pub fn suites(&self) -> Vec<String> {
        suite_family(&self.suite)
    }

    /// Whether `self` (a provisioned build) is a build of `wanted`: the same suite and package,
    /// at `wanted`'s version or, without one, of `release`.
    pub(crate) fn is_build_of(&self, wanted: &DebianSource, release: Option<&str>) -> bool {
        let version = self.version.as_deref().unwrap_or_default();
        self.suite == wanted.suite
            && self.package == wanted.package
            && match &wanted.version {
                Some(wanted) => wanted == version,
                None => release.is_some_and(|release| upstream_version(version) == release),
            }
    }
}

impl fmt::Display for DebianSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.suite, self.package)?;
        match &self.version {
            Some(version) => write!(f, "={version}"),
            None => Ok(()),
        }
    }
}

/// The suites a compiler of `suite` takes its packages from, in order of preference: a release
/// with its security and point-release updates, backports on top of its release,
/// `experimental` on top of `sid` (it holds only what differs from it).
pub(crate) fn suite_family(suite: &str) -> Vec<String> {
    let base = ["-security", "-updates", "-backports"]
        .iter()
        .find_map(|suffix| suite.strip_suffix(suffix))
        .unwrap_or(suite);
    match base {
        "sid" | "unstable" => vec![base.to_owned()],
        "experimental" | "rc-buggy" => vec![base.to_owned(), "sid".to_owned()],
        _ => {
            let backports = suite.ends_with("-backports").then(|| suite.to_owned());
            let release = [
                format!("{base}-security"),
                format!("{base}-updates"),
                base.into(),
            ];
            backports.into_iter().chain(release).collect()
        }
    }
}

/// The upstream part of a Debian version: `1.85.0` for `1.85.0+dfsg3-1~deb12u3`.
pub(crate) fn upstream_version(version: &str) -> &str {
    let without_epoch = version.split_once(':').map_or(version, |(_, rest)| rest);
    let mut parts = without_epoch.split(['+', '-', '~']);
    parts.next().unwrap_or(without_epoch)
}

/// The prefix a package is unpacked into: `debian/PACKAGE-VERSION` (an epoch's `:` escaped, as
/// library paths are `:`-separated lists).
pub(crate) fn prefix_of(root: &Path, package: &str, version: &str) -> PathBuf {
    root.join("debian")
        .join(format!("{package}-{}", version.replace(':', "%3a")))
}

/// The prefix a compiler is unpacked into with its closure: `debian/SUITE_PACKAGE-VERSION` (no
/// part holds `_`). Prefixes are found by their markers, whatever their names.
pub(crate) fn compiler_prefix(root: &Path, source: &DebianSource) -> PathBuf {
    let package = format!("{}_{}", source.suite, source.package);
    prefix_of(root, &package, source.version.as_deref().unwrap_or(""))
}

/// The compiler a provisioned prefix holds, from its marker; `None` if it is not complete.
pub(crate) fn read_marker(prefix: &Path) -> Option<DebianSource> {
    let marker = std::fs::read_to_string(prefix.join(MARKER)).ok()?;
    let first = marker.lines().next()?.trim();
    DebianSource::parse(first)
        .ok()
        .filter(|source| source.version.is_some())
}

/// A compiler that is unpacked and answered `-vV`.
#[derive(Debug, Clone)]
pub(crate) struct Provisioned {
    pub prefix: PathBuf,
    /// The package, with its exact version.
    pub source: DebianSource,
    pub launch: Launch,
    /// `None` if it was already there; else how many packages it took, bytes fetched from the
    /// registry, bytes of all its packages and the seconds it took.
    pub unpacked: Option<(usize, u64, u64, f64)>,
}

/// Provisions Debian compilers through one private apt, whose lists are fetched at most once per
/// run, and only when a compiler is not there yet.
pub(crate) struct Provisioner<'a> {
    sh: &'a Shell,
    root: PathBuf,
    suites: Vec<String>,
    apt: Option<PrivateApt>,
    update_problems: BTreeMap<String, String>,
    log: &'a mut dyn FnMut(&str),
    verify: bool,
    provisioning: Provisioning,
    /// The run lock of the checkout it writes into, until it is taken before the first write
    /// (`held` stays `None` while a lock this process holds covers it).
    lock: Option<PathBuf>,
    held: Option<RunLock>,
}

impl<'a> Provisioner<'a> {
    /// A provisioner under `root` for compilers of `suites`, saying what it does through `log`.
    /// Under [`toolchains_dir`] it takes this checkout's run lock before it first writes, unless
    /// this process holds it (the lock `matrix --root OTHER` holds is OTHER's).
    pub(crate) fn new(
        sh: &'a Shell,
        root: PathBuf,
        suites: Vec<String>,
        log: &'a mut dyn FnMut(&str),
    ) -> Provisioner<'a> {
        Provisioner {
            sh,
            suites,
            apt: None,
            update_problems: BTreeMap::new(),
            lock: (root == toolchains_dir()).then(|| run_lock::of_checkout(&crate::project_root())),
            root,
            log,
            verify: false,
            provisioning: Provisioning::Allowed,
            held: None,
        }
    }

    /// Checks every file of a prefix against its recorded digest before taking it as there
    /// already, as `toolchains install` does (about a second per compiler: too much for every
    /// discovery).
    pub(crate) fn verifying(mut self) -> Self {
        self.verify = true;
        self
    }

    pub(crate) fn with(mut self, provisioning: Provisioning) -> Self {
        self.provisioning = provisioning;
        self
    }

    /// Whether `prefix` (holding `what`) may be taken as it is: always unless this provisioner
    /// verifies, else when every file matches its recorded digest. Says why not.
    pub(crate) fn intact(&mut self, prefix: &Path, what: &str) -> bool {
        if !self.verify {
            return true;
        }
        let why = match digests::damaged(prefix) {
            Ok(damaged) if damaged.is_empty() => return true,
            Ok(damaged) => format!(
                "{} damaged file(s) in {} ({}{})",
                damaged.len(),
                prefix.display(),
                damaged[..damaged.len().min(3)].join(", "),
                if damaged.len() > 3 { ", ..." } else { "" }
            ),
            Err(error) => format!("{error:#}"),
        };
        (self.log)(&format!("{what}: {why}; provisioning it again"));
        false
    }

    /// Provisions `source` (without an exact version, its newest build of `release`), unless a
    /// complete copy that `accept`s its `-vV` is there; a copy `accept` refuses is never moved
    /// into place.
    pub(crate) fn provision(
        &mut self,
        source: &DebianSource,
        release: Option<&str>,
        accept: &dyn Fn(&RustcVersion) -> anyhow::Result<()>,
    ) -> anyhow::Result<Provisioned> {
        let started = Instant::now();
        if let Some(found) = self.already_there(source, release, accept) {
            return Ok(found);
        }
        let suites = source.suites();
        let (apt, version) =
            self.apt_and_version(&source.package, source.version.as_deref(), &suites, release)?;
        let exact = DebianSource {
            version: Some(version.clone()),
            ..source.clone()
        };
        // Without a version, the newest one had to be asked for first; it may be there.
        if source.version.is_none() {
            if let Some(found) = self.already_there(&exact, release, accept) {
                return Ok(found);
            }
        }
        let mut index = AptIndex::new(self.sh, &apt);
        let mut closure = |host| apt::closure(&mut index, &source.package, &version, &suites, host);
        let with_host = closure(HostLibraries::Reuse)
            .map_err(|error| self.with_update_problems(error, &suites))?;
        // Every Debian build of rustc (`rustc`, `rustc-web`, `rustc-1.NN`) depends on its
        // standard library's package; checked from the index, before anything is fetched.
        ensure!(
            with_host
                .iter()
                .any(|package| package.name.starts_with("libstd-rust")),
            "{exact} is no Rust compiler: it does not depend on a libstd-rust package, as every \
             Debian build of rustc does; nothing was fetched"
        );
        // A closure that needs a newer C library than the host's brings its own loader, and
        // then everything it loads comes from the suites.
        let needs_own_c_library = with_host
            .iter()
            .any(|package| package.source == apt::C_LIBRARY_SOURCE);
        let packages = if needs_own_c_library {
            closure(HostLibraries::Never)?
        } else {
            with_host
        };
        let total: u64 = packages.iter().map(|package| package.size).sum();
        (self.log)(&format!(
            "{exact}: {} packages, {:.1} MB, {}",
            packages.len(),
            total as f64 / 1e6,
            if needs_own_c_library {
                "with its own C library and loader (the host's glibc is older than it needs)"
            } else {
                "under the host's loader"
            }
        ));
        let downloaded = apt.download(self.sh, &packages, &self.root.join("debian/downloads"))?;
        if downloaded.fetched > 0 {
            (self.log)(&format!(
                "{exact}: fetched {} packages, {:.1} MB, in {:.1}s",
                downloaded.fetched,
                downloaded.fetched_bytes as f64 / 1e6,
                downloaded.seconds
            ));
        }
        let prefix = compiler_prefix(&self.root, &exact);
        let marker: String = std::iter::once(exact.to_string())
            .chain(packages.iter().map(ToString::to_string))
            .map(|line| line + "\n")
            .collect();
        apt::unpack_atomically(self.sh, &downloaded.files, &prefix, |staging| {
            std::fs::write(staging.join(MARKER), &marker)
                .with_context(|| format!("writing the marker in {}", staging.display()))?;
            answer(staging, accept)?;
            digests::record(staging).map(drop)
        })
        .with_context(|| format!("unpacking {exact} into {}", prefix.display()))?;
        Ok(Provisioned {
            launch: Launch::for_prefix(&prefix)?,
            prefix,
            source: exact,
            unpacked: Some((
                packages.len(),
                downloaded.fetched_bytes,
                total,
                started.elapsed().as_secs_f64(),
            )),
        })
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Extracts `wanted` into its prefix, unless a complete prefix of the package (at the
    /// version wanted, if one is named) is there already. `check` runs on the staging directory
    /// before it takes the prefix's place, and returns the marker's fields.
    pub(crate) fn extract(
        &mut self,
        wanted: &Wanted<'_>,
        check: impl FnOnce(&Path) -> anyhow::Result<Vec<(String, String)>>,
    ) -> anyhow::Result<Extracted> {
        let (package, suites, prefix) = (wanted.package, wanted.suites, wanted.prefix.clone());
        if let Some(marker) = Marker::read(&prefix).filter(|marker| {
            marker.package == package
                && wanted
                    .version
                    .is_none_or(|version| version == marker.version)
                && self.intact(&prefix, &marker.identity())
        }) {
            return Ok(Extracted {
                prefix,
                marker,
                already: true,
                ..Default::default()
            });
        }
        let (apt, version) = self.apt_and_version(package, wanted.version, suites, None)?;
        let mut index = AptIndex::new(self.sh, &apt);
        let resolved = apt::closure(&mut index, package, &version, suites, HostLibraries::Reuse)
            .map_err(|error| self.with_update_problems(error, suites))?
            .into_iter()
            .find(|resolved| resolved.name == package)
            .with_context(|| format!("the closure of {package}={version} lacks it"))?;
        let cache = self.root.join("debian/downloads");
        let downloaded = apt.download(self.sh, std::slice::from_ref(&resolved), &cache)?;
        let deb = cache.join(resolved.deb_file_name());
        let started = Instant::now();
        let members = apt::list_members(&deb)
            .and_then(|members| (wanted.select)(&members))
            .with_context(|| format!("choosing what to extract from {resolved}"))?;
        let mut marker = Marker {
            package: resolved.name.clone(),
            version: resolved.version.clone(),
            suite: resolved.suite.clone(),
            sha256: resolved.sha256.clone(),
            fields: Vec::new(),
        };
        let mut extracted_bytes = 0;
        apt::extract_atomically(&deb, &members, &prefix, |staging| {
            marker.fields = check(staging)?;
            std::fs::write(staging.join(extracted::MARKER), marker.render())
                .with_context(|| format!("writing the marker in {}", staging.display()))?;
            extracted_bytes = digests::record(staging)?;
            Ok(())
        })
        .with_context(|| format!("extracting {resolved} into {}", prefix.display()))?;
        Ok(Extracted {
            prefix,
            marker,
            already: false,
            fetched_bytes: downloaded.fetched_bytes,
            deb_bytes: resolved.size,
            extracted_bytes,
            seconds: (downloaded.seconds, started.elapsed().as_secs_f64()),
        })
    }

    /// A complete prefix of a build of `source` whose compiler answers and is accepted.
    fn already_there(
        &mut self,
        source: &DebianSource,
        release: Option<&str>,
        accept: &dyn Fn(&RustcVersion) -> anyhow::Result<()>,
    ) -> Option<Provisioned> {
        // Another suite's build of the same version holds another suite's libraries.
        let prefixes = provisioned_prefixes(&self.root)
            .into_iter()
            .filter(|(_, found)| found.is_build_of(source, release));
        for (prefix, found) in prefixes {
            if !self.intact(&prefix, &found.to_string()) {
                continue;
            }
            match answer(&prefix, accept) {
                Ok(launch) => {
                    return Some(Provisioned {
                        prefix,
                        source: found,
                        launch,
                        unpacked: None,
                    })
                }
                Err(error) => (self.log)(&format!(
                    "{found}: the copy in {} does not work ({error:#}); unpacking it again",
                    prefix.display()
                )),
            }
        }
        None
    }

    /// The private apt, created on first use with every suite it has listed before and this
    /// run's, its lists fetched when older than a day or lacking a suite.
    fn apt(&mut self) -> anyhow::Result<PrivateApt> {
        if let Some(apt) = &self.apt {
            return Ok(apt.clone());
        }
        if self.provisioning == Provisioning::Refused {
            bail!(
                "not provisioned: this run changes nothing (--dry-run: no apt-get update, no \
                 download, no unpacking); `cargo xtask toolchains install` or the same run \
                 without --dry-run provisions it"
            );
        }
        if let Some(lock) = self.lock.clone() {
            let (log, root) = (&mut *self.log, &self.root);
            self.held = RunLock::acquire_unless_held(&lock, &mut |message| {
                log(&format!("to write into {}: {message}", root.display()))
            })?;
            self.lock = None;
        }
        let dir = self.root.join("apt");
        let mut suites = PrivateApt::listed_suites(&dir);
        for suite in &self.suites {
            crate::push_once(&mut suites, suite.clone());
        }
        let mut apt = PrivateApt::create(self.sh, &dir, &suites)?;
        let stamp = dir.join("updated");
        let fresh = std::fs::read_to_string(&stamp).is_ok_and(|listed| listed == suites.join(" "))
            && std::fs::metadata(&stamp)
                .and_then(|meta| meta.modified())
                .is_ok_and(|modified| modified.elapsed().is_ok_and(|age| age < LISTS_MAX_AGE));
        if !fresh {
            let started = Instant::now();
            (self.log)(&format!(
                "apt-get update of {} suites in {}",
                suites.len(),
                apt.dir().display()
            ));
            self.update_problems = apt.update(self.sh)?;
            for (suite, problem) in &self.update_problems {
                (self.log)(&format!("apt-get update: {suite}: {problem}"));
            }
            (self.log)(&format!(
                "apt-get update took {:.1}s",
                started.elapsed().as_secs_f64()
            ));
            if self.update_problems.is_empty() {
                std::fs::write(&stamp, suites.join(" "))
                    .with_context(|| format!("writing {}", stamp.display()))?;
            } else {
                // A suite that could not be listed (a typo such as `bookwrom`, a suite gone
                // from the mirror) is not kept: every later run would update it again. A run
                // that needs it adds it back.
                suites.retain(|suite| !self.update_problems.contains_key(suite));
                apt = PrivateApt::create(self.sh, &dir, &suites)?;
                let left_out: Vec<&str> = self.update_problems.keys().map(String::as_str).collect();
                (self.log)(&format!(
                    "apt: {} left out of {} until a run needs them again",
                    left_out.join(", "),
                    dir.join("sources.list").display()
                ));
            }
        }
        self.apt = Some(apt.clone());
        Ok(apt)
    }

    /// The private apt, and `version` or else the newest version of `package` in `suites`
    /// whose upstream version is `release` (any, without a release).
    fn apt_and_version(
        &mut self,
        package: &str,
        version: Option<&str>,
        suites: &[String],
        release: Option<&str>,
    ) -> anyhow::Result<(PrivateApt, String)> {
        let apt = self.apt()?;
        if let Some(version) = version {
            return Ok((apt, version.to_owned()));
        }
        let mut served = apt.madison(self.sh, package)?;
        served.retain(|entry| suites.contains(&entry.suite));
        let best = served
            .iter()
            .filter(|entry| {
                release.is_none_or(|release| upstream_version(&entry.version) == release)
            })
            .max_by(|a, b| apt::compare_versions(&a.version, &b.version));
        if let Some(best) = best {
            return Ok((apt, best.version.clone()));
        }
        let listed: Vec<String> = served
            .iter()
            .map(|entry| format!("{} ({})", entry.version, entry.suite))
            .collect();
        let error = anyhow::anyhow!(
            "the suites {} serve {}, but no {} of release {}",
            suites.join(", "),
            if listed.is_empty() {
                format!("no {package} at all")
            } else {
                format!("{package} {}", listed.join(", "))
            },
            package,
            release.unwrap_or("any")
        );
        Err(self.with_update_problems(error, suites))
    }

    /// `error`, with what `apt-get update` said about `suites` if it failed for any of them.
    fn with_update_problems(&self, error: anyhow::Error, suites: &[String]) -> anyhow::Error {
        let problems: Vec<String> = suites
            .iter()
            .filter_map(|suite| {
                self.update_problems
                    .get(suite)
                    .map(|problem| format!("{suite}: {problem}"))
            })
            .collect();
        if problems.is_empty() {
            error
        } else {
            error.context(format!("apt-get update failed for {}", problems.join("; ")))
        }
    }
}

fn answer(
    prefix: &Path,
    accept: &dyn Fn(&RustcVersion) -> anyhow::Result<()>,
) -> anyhow::Result<Launch> {
    let launch = Launch::for_prefix(prefix)?;
    accept(&parse_verbose_version(
        &launch.run(&["-vV"], CHECK_TIMEOUT)?,
    )?)?;
    Ok(launch)
}

/// Every complete compiler prefix under `root`'s `debian/`, with its marker's compiler, sorted.
pub(crate) fn provisioned_prefixes(root: &Path) -> Vec<(PathBuf, DebianSource)> {
    crate::util::files::sorted_entries(&root.join("debian"))
        .into_iter()
        // Not a staging directory (`.NAME.partial-PID`), whose marker is written before its check.
        .filter(|prefix| {
            !prefix
                .file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with('.'))
        })
        .filter_map(|prefix| read_marker(&prefix).map(|source| (prefix, source)))
        .collect()
}

#[cfg(test)]
mod tests;
