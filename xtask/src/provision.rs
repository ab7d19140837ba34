// SPDX-License-Identifier: GPL-2.0
//! Installing pinned toolchains: Debian's compilers, unpacked under `target/toolchains/debian/`
//! by [`crate::debian`] without touching the system, and rustup for official releases; each
//! counts as installed only once it answers `-vV` with the pinned release. Beside them, the
//! library sources of every Debian compiler ([`crate::library_sources`]) and qemu's user-mode
//! emulators ([`crate::emulators`]), whose absence is reported but fails nothing.

use crate::debian::{self, Provisioner};
use crate::emulators;
use crate::extracted::Extracted;
use crate::library_sources;
use crate::pins::{DebianSource, Pin};
use crate::toolchain::{is_meant_for, verify, Availability, Source, Toolchain, VERSION_TIMEOUT};
use anyhow::{bail, Context};
use std::path::PathBuf;
use std::time::Instant;
use xshell::{cmd, Shell};

/// What `install` did for one pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Installation {
    /// A working compiler already satisfied the pin; nothing was done.
    AlreadyThere,
    /// It was installed; the text says how and where.
    Installed(String),
    /// It could not be installed; the text says what was tried and why each attempt failed.
    Failed(String),
}

/// Installs every pin of `wanted` that `availability` (from [`crate::toolchain::discover`] on
/// the same pins) reports missing or broken, printing progress, and says for each what became
/// of it.
///
/// A pin with a Debian package is provisioned from Debian first, since that changes nothing
/// outside `target/`; rustup is tried when there is no Debian package or it failed. One pin's
/// failure does not stop the others. With `use_rustup` false, rustup is never run.
pub(crate) fn install(
    sh: &Shell,
    wanted: &[&Pin],
    availability: &[Availability],
    use_rustup: bool,
) -> anyhow::Result<Vec<(String, Installation)>> {
    let root = debian::toolchains_dir();
    let qemu_suites = emulators::host_codename()
        .map(|codename| emulators::qemu_suites(&codename))
        .unwrap_or_default();
    let suites: Vec<String> = wanted
        .iter()
        .filter_map(|pin| pin.debian.as_ref())
        .flat_map(DebianSource::suites)
        .chain(
            debian::provisioned_prefixes(&root)
                .iter()
                .flat_map(|(_, source)| source.suites()),
        )
        .chain(qemu_suites.iter().cloned())
        .collect();
    let mut log = |line: &str| println!("  {line}");
    let mut provisioner = Provisioner::new(sh, root, suites, &mut log).verifying();
    let mut outcomes = Vec::new();
    for pin in wanted {
        let found = availability.iter().find_map(|entry| match entry {
            Availability::Found { toolchain, .. } if toolchain.pin.as_deref() == Some(&pin.id) => {
                Some(toolchain)
            }
            _ => None,
        });
        // A Debian compiler is there only if its files are the ones unpacked, and, for a pin
        // with a Debian source, only if it is that source (not another suite's build).
        let satisfied = found.is_some_and(|toolchain| {
            !matches!(toolchain.source, Source::Debian { .. })
                || (pin.debian.is_none() || is_meant_for(pin, toolchain))
                    && toolchain
                        .rustc
                        .ancestors()
                        .nth(3)
                        .is_some_and(|prefix| provisioner.intact(prefix, &pin.id))
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
        if let Some(package) = &pin.debian {
            match provision_debian(&mut provisioner, pin, package) {
                Ok(done) => installed = Some(done),
                Err(error) => {
                    println!("  {}: Debian {package}: failed: {error:#}", pin.id);
                    failures.push(format!("Debian {package}: {error:#}"));
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
                        println!("  {}: rustup: failed: {error:#}", pin.id);
                        failures.push(format!("rustup: {error:#}"));
                    }
                }
            }
        }
        let outcome = match installed {
            Some(done) => {
                println!("  {}: installed: {done}", pin.id);
                Installation::Installed(done)
            }
            None if failures.is_empty() => Installation::Failed(
                "the pin names no rustup toolchain and no Debian package".into(),
            ),
            None => Installation::Failed(failures.join("; ")),
        };
        outcomes.push((pin.id.clone(), outcome));
    }
    provision_extras(&mut provisioner);
    Ok(outcomes)
}

/// Provisions the library sources of every Debian compiler under `target/toolchains/debian/`
/// and qemu's emulators, saying for each what was done or why it could not be.
fn provision_extras(provisioner: &mut Provisioner<'_>) {
    let compilers = debian::provisioned_prefixes(provisioner.root());
    for (_, compiler) in compilers {
        let outcome = library_sources::provision_sources(provisioner, &compiler);
        report_extracted(
            provisioner,
            &format!("{compiler}: library sources"),
            outcome,
        );
    }
    let outcome = emulators::host_codename().and_then(|codename| {
        emulators::provision_qemu(provisioner, &emulators::qemu_suites(&codename))
    });
    report_extracted(provisioner, "qemu's user-mode emulators", outcome);
}

fn report_extracted(
    provisioner: &mut Provisioner<'_>,
    what: &str,
    outcome: anyhow::Result<Extracted>,
) {
    let line = match outcome {
        Ok(done) if done.already => format!(
            "{what}: {} already in {}",
            done.marker.identity(),
            done.prefix.display()
        ),
        Ok(done) => {
            let fetched = if done.fetched_bytes == 0 {
                "from the download cache".to_owned()
            } else {
                format!(
                    "{:.1} MB fetched in {:.1}s",
                    done.fetched_bytes as f64 / 1e6,
                    done.seconds.0
                )
            };
            format!(
                "{what}: {} extracted into {} ({:.1} MB of a {:.1} MB package, {fetched}; \
                 extracted in {:.1}s)",
                done.marker.identity(),
                done.prefix.display(),
                done.extracted_bytes as f64 / 1e6,
                done.deb_bytes as f64 / 1e6,
                done.seconds.1
            )
        }
        Err(error) => format!("{what}: not provisioned (nothing else depends on it): {error:#}"),
    };
    provisioner.say(&line);
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
    let toolchain = Toolchain {
        id: pin.id.clone(),
        spec: format!("rustup:{name}"),
        source: Source::Rustup {
            name: name.to_owned(),
        },
        rustc: PathBuf::from(rustc.trim()),
        env: Vec::new(),
        loader: None,
        pin: Some(pin.id.clone()),
    };
    let version = verified(pin, toolchain)?;
    Ok(format!(
        "rustup toolchain {name}: {} ({:.1}s)",
        version.summary(),
        started.elapsed().as_secs_f64()
    ))
}

/// Provisions the pin's Debian compiler and checks it as discovery will: it reports the
/// pinned release and has `core` in its sysroot.
fn provision_debian(
    provisioner: &mut Provisioner<'_>,
    pin: &Pin,
    package: &DebianSource,
) -> anyhow::Result<String> {
    let accept = |version: &crate::version::RustcVersion| {
        if pin.is_satisfied_by(version) {
            Ok(())
        } else {
            bail!(
                "it reports {} ({}), not the pinned {}",
                version.release_string(),
                version.first_line,
                pin.describe_release()
            )
        }
    };
    let provisioned = provisioner.provision(package, Some(&pin.release), &accept)?;
    let loader = match provisioned.launch.loader {
        Some(_) => "through its own loader",
        None => "under the host's loader",
    };
    let toolchain = Toolchain {
        id: pin.id.clone(),
        spec: format!("debian:{}", provisioned.source),
        source: Source::Debian {
            package: provisioned.source.clone(),
        },
        rustc: provisioned.launch.rustc.clone(),
        env: provisioned.launch.env.clone(),
        loader: provisioned.launch.loader.clone(),
        pin: Some(pin.id.clone()),
    };
    let version = verified(pin, toolchain)?;
    let (fetched, total) = provisioned.bytes;
    Ok(if provisioned.already {
        format!(
            "Debian {} already unpacked in {}: {}, {loader}",
            provisioned.source,
            provisioned.prefix.display(),
            version.summary()
        )
    } else {
        format!(
            "Debian {} unpacked in {}: {}, {loader} ({} packages, {:.1} of {:.1} MB fetched, {:.1}s)",
            provisioned.source,
            provisioned.prefix.display(),
            version.summary(),
            provisioned.packages,
            fetched as f64 / 1e6,
            total as f64 / 1e6,
            provisioned.seconds
        )
    })
}

/// Runs the compiler and checks that it reports the pinned release.
fn verified(pin: &Pin, toolchain: Toolchain) -> anyhow::Result<crate::version::RustcVersion> {
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
