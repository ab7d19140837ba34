//! Installing pinned toolchains: Debian's packages unpacked under `target/toolchains/debian/`,
//! and rustup for official releases.
//!
//! Debian's compilers are provisioned without touching the system: the packages are fetched
//! with `apt-get download` into `target/toolchains/debian/downloads/` and unpacked with
//! `dpkg -x` into `target/toolchains/debian/<package>-<version>/`, which then holds
//! `usr/bin/rustc`, its sysroot and its shared libraries (run it with `LD_LIBRARY_PATH` set
//! to the multiarch library directory, see [`crate::toolchain::library_path_env`]). Nothing
//! about the versions is assumed: the registry is asked which versions of the pin's package it
//! serves, and the libraries to fetch are read from the packages' `Depends`.
//!
//! A directory counts as provisioned once its marker file exists; the marker is written only
//! after the unpacked compiler has run and reported the pinned release, and the directory is
//! moved into place only then, so an interrupted run leaves nothing that looks complete.
//! Downloads already present (with the SHA-256 the registry lists) are not fetched again.

use crate::apt::{is_compiler_library, parse_depends, parse_madison};
use crate::pins::{DebianPackage, Pin, Pins};
use crate::toolchain::{
    debian_upstream_version, provisioned_toolchain, toolchains_dir, verify, Availability,
    PROVISIONED_MARKER, VERSION_TIMEOUT,
};
use anyhow::{bail, Context};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};
use xshell::{cmd, Shell};

/// What `install` did for one pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installation {
    /// A working compiler already satisfied the pin; nothing was done.
    AlreadyThere,
    /// It was installed; the text says how and where.
    Installed(String),
    /// It could not be installed; the text says what was tried and why each attempt failed.
    Failed(String),
}

/// Installs every pin that `availability` (from [`crate::toolchain::discover`] on the same
/// pins) reports missing or broken, printing progress, and says for each pin what became of
/// it.
///
/// A pin with a Debian package is provisioned from Debian first, since that changes nothing
/// outside `target/`; rustup is tried when there is no Debian package or it failed. One pin's
/// failure does not stop the others. With `use_rustup` false, rustup is never run.
pub fn install(
    sh: &Shell,
    pins: &Pins,
    availability: &[Availability],
    use_rustup: bool,
) -> anyhow::Result<Vec<(String, Installation)>> {
    let mut apt = Apt::default();
    let mut outcomes = Vec::new();
    for pin in &pins.pins {
        let satisfied = availability.iter().any(|entry| match entry {
            Availability::Found { toolchain, .. } => toolchain.pin.as_deref() == Some(&pin.id),
            _ => false,
        });
        if satisfied {
            outcomes.push((pin.id.clone(), Installation::AlreadyThere));
            continue;
        }
        println!(
            "{}: {} is not here; installing",
            pin.id,
            pin.describe_release()
        );
        let mut failures = Vec::new();
        let mut installed = None;
        if let Some(debian) = &pin.debian {
            match provision_debian(sh, &mut apt, pin, debian) {
                Ok(done) => installed = Some(done),
                Err(error) => {
                    println!("  Debian: failed: {error:#}");
                    failures.push(format!("Debian: {error:#}"));
                }
            }
        }
        if installed.is_none() && !use_rustup && pin.rustup.is_some() {
            failures.push("rustup: skipped (--no-rustup)".to_string());
        } else if installed.is_none() {
            if let Some(name) = &pin.rustup {
                match install_rustup(sh, pin, name) {
                    Ok(done) => installed = Some(done),
                    Err(error) => {
                        println!("  rustup: failed: {error:#}");
                        failures.push(format!("rustup: {error:#}"));
                    }
                }
            }
        }
        let outcome = match installed {
            Some(done) => Installation::Installed(done),
            None if failures.is_empty() => Installation::Failed(
                "the pin names no rustup toolchain and no Debian package".into(),
            ),
            None => Installation::Failed(failures.join("; ")),
        };
        outcomes.push((pin.id.clone(), outcome));
    }
    Ok(outcomes)
}

/// Runs `rustup toolchain install` and checks that the result satisfies the pin.
fn install_rustup(sh: &Shell, pin: &Pin, name: &str) -> anyhow::Result<String> {
    println!("  rustup: rustup toolchain install {name} --profile minimal");
    let started = Instant::now();
    let output = cmd!(sh, "rustup toolchain install {name} --profile minimal")
        .env("RUST_BACKTRACE", "0")
        .quiet()
        .ignore_status()
        .output()
        .context("running rustup (is it installed?)")?;
    if !output.status.success() {
        bail!(
            "`rustup toolchain install {name}` exited with {}: {}",
            output.status,
            crate::process::error_and_cause(&String::from_utf8_lossy(&output.stderr))
        );
    }
    let rustc = cmd!(sh, "rustup which rustc --toolchain {name}")
        .quiet()
        .read()
        .with_context(|| {
            format!("finding the rustc of the toolchain rustup just installed as {name}")
        })?;
    let toolchain = crate::toolchain::Toolchain {
        id: pin.id.clone(),
        spec: format!("rustup:{name}"),
        source: crate::toolchain::Source::Rustup {
            name: name.to_owned(),
        },
        rustc: PathBuf::from(rustc.trim()),
        env: Vec::new(),
        pin: Some(pin.id.clone()),
    };
    let version = verified(pin, toolchain)?;
    Ok(format!(
        "rustup toolchain {name}: {} ({:.1}s)",
        version.summary(),
        started.elapsed().as_secs_f64()
    ))
}

/// Fetches and unpacks the Debian package that provides `pin`, unless a complete copy is
/// already unpacked; returns what it did.
fn provision_debian(
    sh: &Shell,
    apt: &mut Apt,
    pin: &Pin,
    debian: &DebianPackage,
) -> anyhow::Result<String> {
    let started = Instant::now();
    let package = &debian.package;
    let version = apt.version_for(sh, pin, debian)?;
    let compiler = format!("{package}={version}");
    let debian_dir = toolchains_dir().join("debian");
    let dir = debian_dir.join(format!("{package}-{version}"));
    println!("  Debian: {compiler} -> {}", dir.display());

    if dir.join(PROVISIONED_MARKER).is_file() {
        if let Some(toolchain) = provisioned_toolchain(&dir) {
            match verified(pin, toolchain) {
                Ok(version) => {
                    return Ok(format!(
                        "already unpacked in {}: {}",
                        dir.display(),
                        version.summary()
                    ))
                }
                Err(error) => {
                    println!("  the copy there does not work ({error:#}); unpacking again")
                }
            }
        }
    }

    let packages = apt.closure(sh, package, &version)?;
    let names: Vec<String> = packages.iter().map(|(name, _)| name.clone()).collect();
    println!("  packages: {}", names.join(", "));

    let downloads = debian_dir.join("downloads");
    std::fs::create_dir_all(&downloads)
        .with_context(|| format!("creating {}", downloads.display()))?;
    let mut debs = Vec::new();
    let mut to_fetch = Vec::new();
    for (name, version) in &packages {
        match existing_deb(sh, &downloads, name, version)? {
            Some(path) => debs.push(path),
            None => to_fetch.push(format!("{name}={version}")),
        }
    }
    if to_fetch.is_empty() {
        println!("  all {} packages already downloaded", packages.len());
    } else {
        println!(
            "  downloading {} package(s): {}",
            to_fetch.len(),
            to_fetch.join(" ")
        );
        let fetch_started = Instant::now();
        let _in_downloads = sh.push_dir(&downloads);
        let fetch_args = &to_fetch;
        let output = cmd!(sh, "apt-get download {fetch_args...}")
            .quiet()
            .ignore_status()
            .output()
            .context("running apt-get download (is this a Debian-like system?)")?;
        if !output.status.success() {
            bail!(
                "`apt-get download {}` exited with {}: {}",
                to_fetch.join(" "),
                output.status,
                crate::process::last_line(&String::from_utf8_lossy(&output.stderr))
            );
        }
        for spec in &to_fetch {
            let (name, version) = spec.split_once('=').unwrap_or((spec, ""));
            let path = existing_deb(sh, &downloads, name, version)?.with_context(|| {
                format!(
                    "apt-get download succeeded but no intact {name} {version} .deb is in {}",
                    downloads.display()
                )
            })?;
            debs.push(path);
        }
        println!(
            "  downloaded in {:.1}s",
            fetch_started.elapsed().as_secs_f64()
        );
    }

    // Unpack next to the final place and move it there only once it works, so that a
    // half-unpacked directory never carries the marker.
    let staging = debian_dir.join(format!(
        ".{package}-{version}.partial-{}",
        std::process::id()
    ));
    if staging.exists() {
        std::fs::remove_dir_all(&staging)
            .with_context(|| format!("removing {}", staging.display()))?;
    }
    std::fs::create_dir_all(&staging).with_context(|| format!("creating {}", staging.display()))?;
    println!("  unpacking {} .deb files", debs.len());
    for deb in &debs {
        cmd!(sh, "dpkg -x {deb} {staging}")
            .quiet()
            .run()
            .with_context(|| format!("unpacking {}", deb.display()))?;
    }
    let mut marker = format!("{compiler}\n");
    for (name, version) in &packages {
        marker.push_str(&format!("{name}={version}\n"));
    }
    std::fs::write(staging.join(PROVISIONED_MARKER), marker)
        .with_context(|| format!("writing the marker in {}", staging.display()))?;
    let toolchain =
        provisioned_toolchain(&staging).context("reading back the marker just written")?;
    let checked = verified(pin, toolchain);
    let version = match checked {
        Ok(version) => version,
        Err(error) => {
            // Keep the broken copy out of discovery's way, but leave it for inspection.
            let _ = std::fs::remove_file(staging.join(PROVISIONED_MARKER));
            return Err(error.context(format!(
                "the unpacked compiler in {} does not work",
                staging.display()
            )));
        }
    };
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    std::fs::rename(&staging, &dir)
        .with_context(|| format!("moving {} to {}", staging.display(), dir.display()))?;
    Ok(format!(
        "Debian {compiler} unpacked in {}: {} ({:.1}s)",
        dir.display(),
        version.summary(),
        started.elapsed().as_secs_f64()
    ))
}

/// Runs the compiler and checks that it reports the pinned release.
fn verified(
    pin: &Pin,
    toolchain: crate::toolchain::Toolchain,
) -> anyhow::Result<crate::version::RustcVersion> {
    match verify(&toolchain, VERSION_TIMEOUT) {
        Ok(version) if pin.is_satisfied_by(&version) => Ok(version),
        Ok(version) => bail!(
            "it reports {} ({}), not the pinned {}",
            version.release_string(),
            version.first_line,
            pin.describe_release()
        ),
        Err(error) => bail!("{error}"),
    }
}

/// The downloaded `.deb` of `name` at `version`, if it is there and its SHA-256 is the one
/// the registry lists (an interrupted download is fetched again).
fn existing_deb(
    sh: &Shell,
    downloads: &Path,
    name: &str,
    version: &str,
) -> anyhow::Result<Option<PathBuf>> {
    // apt-get download names files `name_version_arch.deb`, with the epoch's `:` escaped.
    let prefix = format!("{name}_{}_", version.replace(':', "%3a"));
    let Ok(entries) = std::fs::read_dir(downloads) else {
        return Ok(None);
    };
    let Some(path) = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .map(|file| file.to_string_lossy().into_owned())
                .is_some_and(|file| file.starts_with(&prefix) && file.ends_with(".deb"))
        })
    else {
        return Ok(None);
    };
    let spec = format!("{name}={version}");
    let listed = cmd!(sh, "apt-cache show {spec}")
        .quiet()
        .read()
        .with_context(|| format!("reading the registry's entry for {spec}"))?;
    let Some(expected) = field(&listed, "SHA256") else {
        // Without a listed hash there is nothing to check against; trust the file apt wrote.
        return Ok(Some(path));
    };
    let actual = cmd!(sh, "sha256sum {path}")
        .quiet()
        .read()
        .with_context(|| format!("hashing {}", path.display()))?;
    if actual.split_whitespace().next() == Some(expected.as_str()) {
        Ok(Some(path))
    } else {
        println!(
            "  {} is incomplete or damaged; fetching it again",
            path.display()
        );
        std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        Ok(None)
    }
}

/// The first value of `name:` in an `apt-cache show` text (its first stanza).
fn field(stanza_text: &str, name: &str) -> Option<String> {
    let stanza = stanza_text.split("\n\n").next().unwrap_or(stanza_text);
    stanza.lines().find_map(|line| {
        line.strip_prefix(name)
            .and_then(|rest| rest.strip_prefix(':'))
            .map(|value| value.trim().to_owned())
    })
}

/// The apt queries one `install` run makes, with the lists refreshed at most once.
#[derive(Default)]
struct Apt {
    refreshed: bool,
}

impl Apt {
    /// The newest version of `debian.package` whose upstream version is the pin's release (or
    /// the exact version the pin names), as the registry serves it.
    fn version_for(
        &mut self,
        sh: &Shell,
        pin: &Pin,
        debian: &DebianPackage,
    ) -> anyhow::Result<String> {
        let package = &debian.package;
        if lists_are_stale() {
            self.refresh(sh, "the package lists are missing or more than a day old");
        }
        let mut served = madison(sh, package)?;
        if served.is_empty() && !self.refreshed {
            self.refresh(sh, &format!("the package lists know no {package}"));
            served = madison(sh, package)?;
        }
        let wanted = |version: &String| match &debian.version {
            Some(exact) => version == exact,
            None => debian_upstream_version(version) == pin.release,
        };
        let mut matching: Vec<String> = served
            .iter()
            .filter(|version| wanted(version))
            .cloned()
            .collect();
        if matching.is_empty() {
            let what = match &debian.version {
                Some(exact) => format!("{package}={exact}"),
                None => format!("a {package} of release {}", pin.release),
            };
            if served.is_empty() {
                bail!(
                    "Debian's registry (as apt knows it) serves no {package} at all, so not {what}"
                );
            }
            bail!(
                "Debian's registry serves {package} {}, but not {what}",
                served.join(", ")
            );
        }
        // The newest build of the release: apt's own comparison, not a string sort.
        let mut best = matching.remove(0);
        for candidate in matching {
            let newer = cmd!(sh, "dpkg --compare-versions {candidate} gt {best}")
                .quiet()
                .ignore_status()
                .output()
                .context("running dpkg --compare-versions")?;
            if newer.status.success() {
                best = candidate;
            }
        }
        Ok(best)
    }

    /// The compiler package and every library of it ([`is_compiler_library`]) its
    /// dependencies reach, each with the version to fetch.
    fn closure(
        &mut self,
        sh: &Shell,
        package: &str,
        version: &str,
    ) -> anyhow::Result<Vec<(String, String)>> {
        let mut result: Vec<(String, String)> = Vec::new();
        let mut seen = BTreeSet::new();
        let mut queue = vec![(package.to_owned(), version.to_owned())];
        seen.insert(package.to_owned());
        while let Some((name, version)) = queue.pop() {
            let spec = format!("{name}={version}");
            let shown = cmd!(sh, "apt-cache show {spec}")
                .quiet()
                .read()
                .with_context(|| format!("reading the registry's entry for {spec}"))?;
            let mut depends = Vec::new();
            for key in ["Pre-Depends", "Depends"] {
                if let Some(value) = field(&shown, key) {
                    depends.extend(parse_depends(&value));
                }
            }
            for dependency in depends {
                if !is_compiler_library(&dependency.name) || !seen.insert(dependency.name.clone()) {
                    continue;
                }
                let version = match dependency.exact_version {
                    Some(version) => version,
                    None => candidate(sh, &dependency.name)?,
                };
                queue.push((dependency.name, version));
            }
            result.push((name, version));
        }
        result.sort();
        Ok(result)
    }

    fn refresh(&mut self, sh: &Shell, why: &str) {
        if self.refreshed {
            return;
        }
        self.refreshed = true;
        println!("  apt-get update ({why})");
        match cmd!(sh, "apt-get update").quiet().ignore_status().output() {
            Ok(output) if output.status.success() => {}
            Ok(output) => println!(
                "  apt-get update failed ({}): {}; going on with the lists there are",
                output.status,
                crate::process::last_line(&String::from_utf8_lossy(&output.stderr))
            ),
            Err(error) => println!("  cannot run apt-get update: {error}; going on"),
        }
    }
}

/// The versions of `package` the registry serves, as `apt-cache madison` lists them.
fn madison(sh: &Shell, package: &str) -> anyhow::Result<Vec<String>> {
    let listing = cmd!(sh, "apt-cache madison {package}")
        .quiet()
        .ignore_stderr()
        .read()
        .context("running apt-cache (is this a Debian-like system?)")?;
    Ok(parse_madison(&listing, package))
}

/// The version apt would install of `name`.
fn candidate(sh: &Shell, name: &str) -> anyhow::Result<String> {
    let policy = cmd!(sh, "apt-cache policy {name}")
        .quiet()
        .read()
        .with_context(|| format!("running apt-cache policy {name}"))?;
    policy
        .lines()
        .find_map(|line| line.trim().strip_prefix("Candidate:"))
        .map(str::trim)
        .filter(|version| *version != "(none)")
        .map(str::to_owned)
        .with_context(|| format!("Debian's registry (as apt knows it) has no candidate for {name}"))
}

/// Whether apt's package lists are missing or more than a day old.
fn lists_are_stale() -> bool {
    let Ok(entries) = std::fs::read_dir("/var/lib/apt/lists") else {
        return true;
    };
    let newest = entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().ends_with("InRelease"))
        .filter_map(|entry| entry.metadata().ok()?.modified().ok())
        .max();
    match newest {
        None => true,
        Some(modified) => SystemTime::now()
            .duration_since(modified)
            .is_ok_and(|age| age > Duration::from_secs(24 * 60 * 60)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_the_first_stanza() {
        let shown = "Package: libllvm19\nVersion: 1:19.1.7-3~deb12u1\nSHA256: 6edf\n\nPackage: libllvm19\nVersion: 1:19.1.6\nSHA256: 0000\n";
        assert_eq!(
            field(shown, "Version").as_deref(),
            Some("1:19.1.7-3~deb12u1")
        );
        assert_eq!(field(shown, "SHA256").as_deref(), Some("6edf"));
        assert_eq!(field(shown, "Depends"), None);
    }
}
