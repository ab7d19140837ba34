// SPDX-License-Identifier: GPL-2.0
//! `--toolchain` specs resolved to compilers: rustup names from one `rustup toolchain list -v`,
//! paths (through their own loader if their prefix has one), and Debian packages provisioned
//! on the spot; each distinct spec once, so a thousand of them take linear time.

use super::{
    host_launch, probe_all, rustup_name_is, rustup_toolchain, rustup_toolchains, Availability,
    Source, Toolchain, NOT_CHECKED,
};
use crate::toolchains::debian::{self, DebianSource, Provisioner, Provisioning};
use crate::toolchains::loader::Launch;
use crate::toolchains::pins::{Pin, Pins};
use crate::util::interrupt::interrupted;
use anyhow::{anyhow, Context as _};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::time::Duration;
use xshell::Shell;

/// Resolves `specs`, in their order: a path, an installed rustup toolchain or a
/// `debian:SUITE:PACKAGE` spec as such, and a pin's id as the pin is found without them (so a
/// pin id names the same compiler to every command). A spec that is none of these is bad
/// input: the error lists what would have been accepted.
pub(super) fn discover_specs(
    sh: &Shell,
    pins: &Pins,
    specs: &[String],
    timeout: Duration,
    provisioning: Provisioning,
) -> anyhow::Result<Vec<Availability>> {
    let installed = rustup_toolchains(sh);
    let is_rustup = |spec: &str| installed.iter().any(|(name, _)| rustup_name_is(name, spec));
    let is_named = |spec: &str| spec.starts_with("debian:") || is_path(sh, spec) || is_rustup(spec);
    let pin_of = |spec: &str| {
        let named = is_named(spec);
        pins.pins.iter().find(|pin| !named && pin.id == spec)
    };
    if let Some(spec) = specs
        .iter()
        .find(|spec| !is_named(spec) && pin_of(spec).is_none())
    {
        let ids: Vec<&str> = pins.pins.iter().map(|pin| pin.id.as_str()).collect();
        anyhow::bail!(
            "--toolchain `{}` names no toolchain: it is no pin id of {} ({}), no installed rustup \
             toolchain ({}), no path to a rustc and no `debian:SUITE:PACKAGE` spec",
            spec.escape_debug(),
            pins.path.display(),
            ids.join(", "),
            names_of(&installed)
        );
    }
    // Input that can name no compiler is refused before anything is probed or fetched.
    let mut debian_suites = Vec::new();
    for spec in specs {
        if let Some(text) = spec.strip_prefix("debian:") {
            let source = DebianSource::parse(text)
                .with_context(|| format!("--toolchain `{}`", spec.escape_debug()))?;
            debian_suites.extend(source.suites());
        }
    }
    let mut unique = HashSet::new();
    let distinct = specs
        .iter()
        .map(String::as_str)
        .filter(|spec| unique.insert(*spec));
    let (named, others): (Vec<&str>, Vec<&str>) = distinct.partition(|spec| pin_of(spec).is_some());
    let mut answers: HashMap<&str, Availability> = HashMap::new();
    if !named.is_empty() {
        let named_pins: Vec<Pin> = named
            .iter()
            .filter_map(|spec| pin_of(spec).cloned())
            .collect();
        let found = super::discover_pins(sh, &named_pins, timeout);
        answers.extend(named.into_iter().zip(found));
    }
    let mut log = |line: &str| eprintln!("toolchain: {line}");
    let mut provisioner =
        Provisioner::new(sh, debian::toolchains_dir(), debian_suites, &mut log).with(provisioning);
    let found = resolve_specs(sh, pins, &others, timeout, &installed, &mut provisioner);
    answers.extend(others.into_iter().zip(found));
    let mut results: Vec<Availability> = specs
        .iter()
        .map(|spec| answers[spec.as_str()].clone())
        .collect();
    // Two specs may derive the same id (two paths to 1.85.0 compilers): number the later ones.
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for availability in &mut results {
        if let Availability::Found { toolchain, .. } | Availability::Broken { toolchain, .. } =
            availability
        {
            let count = seen.entry(toolchain.id.clone()).or_insert(0);
            *count += 1;
            if *count > 1 {
                toolchain.id = format!("{}#{count}", toolchain.id);
            }
        }
    }
    Ok(results)
}

/// Resolves distinct specs that are paths, rustup toolchains (among `installed`) or Debian specs.
fn resolve_specs(
    sh: &Shell,
    pins: &Pins,
    distinct: &[&str],
    timeout: Duration,
    installed: &[(String, PathBuf)],
    provisioner: &mut Provisioner<'_>,
) -> Vec<Availability> {
    let resolved: Vec<anyhow::Result<Toolchain>> = distinct
        .iter()
        .map(|spec| match interrupted() {
            Some(_) => Err(anyhow!(NOT_CHECKED)),
            None => spec_toolchain(sh, spec, installed, provisioner),
        })
        .collect();
    let runnable: Vec<Toolchain> = resolved
        .iter()
        .filter_map(|result| result.as_ref().ok().cloned())
        .collect();
    let mut probed = probe_all(runnable, timeout).into_iter();
    let mut results: Vec<Availability> = resolved
        .into_iter()
        .zip(distinct)
        .map(|(result, spec)| match result {
            Ok(_) => probed.next().expect("one probe per runnable spec"),
            // A name that is neither a file nor a rustup toolchain is broken like any other.
            Err(error) => {
                let launch = Launch {
                    rustc: PathBuf::from(spec),
                    loader: None,
                    env: Vec::new(),
                };
                let toolchain = Toolchain::launched(spec.to_string(), Source::Path, launch);
                let error = format!("{error:#}");
                Availability::Broken { toolchain, error }
            }
        })
        .collect();
    for availability in &mut results {
        if let Availability::Found { toolchain, version } = availability {
            // The pin of its release, one of its commit date before one of any date.
            let satisfied = pins.pins.iter().filter(|pin| pin.is_satisfied_by(version));
            let pin = satisfied.max_by_key(|pin| pin.commit_date.is_some());
            toolchain.pin = pin.map(|pin| pin.id.clone());
            if matches!(toolchain.source, Source::Path | Source::Debian { .. }) {
                toolchain.id = version.release_string();
            }
        }
    }
    results
}

/// Turns one `--toolchain` spec into a toolchain: `debian:SUITE:PACKAGE[=VERSION]` provisioned
/// on the spot, a path if it has a `/` or names a file, otherwise a rustup toolchain name
/// (looked up among the `installed` ones).
fn spec_toolchain(
    sh: &Shell,
    spec: &str,
    installed: &[(String, PathBuf)],
    provisioner: &mut Provisioner<'_>,
) -> anyhow::Result<Toolchain> {
    if let Some(text) = spec.strip_prefix("debian:") {
        let package = DebianSource::parse(text)?;
        let provisioned = provisioner
            .provision(&package, None, &|_| Ok(()))
            .with_context(|| format!("provisioning {package}"))?;
        let source = Source::Debian {
            package: provisioned.source,
        };
        return Ok(Toolchain::launched(
            spec.to_owned(),
            source,
            provisioned.launch,
        ));
    }
    if is_path(sh, spec) {
        // One that does not exist is reported broken by the probe, with the others going on.
        let rustc = sh.current_dir().join(spec);
        let own_loader = rustc
            .parent()
            .filter(|bin| bin.ends_with("usr/bin"))
            .and_then(|bin| bin.parent()?.parent())
            .and_then(|prefix| Launch::for_prefix(prefix).ok())
            .filter(|launch| launch.loader.is_some() && launch.rustc == rustc);
        let launch = own_loader.unwrap_or_else(|| host_launch(rustc));
        return Ok(Toolchain::launched(spec.to_owned(), Source::Path, launch));
    }
    let found = installed.iter().find(|(name, _)| name == spec).or_else(|| {
        installed
            .iter()
            .find(|(name, _)| rustup_name_is(name, spec))
    });
    let (_, rustc) = found.with_context(|| {
        format!(
            "`{}` is no rustc file and no installed rustup toolchain (installed: {})",
            spec.escape_debug(),
            names_of(installed)
        )
    })?;
    Ok(rustup_toolchain(spec, rustc))
}

fn is_path(sh: &Shell, spec: &str) -> bool {
    spec.contains(std::path::MAIN_SEPARATOR) || sh.current_dir().join(spec).is_file()
}

fn names_of(installed: &[(String, PathBuf)]) -> String {
    if installed.is_empty() {
        return "none, or rustup is not there".to_owned();
    }
    let names: Vec<&str> = installed.iter().map(|(name, _)| name.as_str()).collect();
    names.join(", ")
}
