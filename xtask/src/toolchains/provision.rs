// SPDX-License-Identifier: GPL-2.0
//! Installing pinned toolchains: Debian's compilers under `target/toolchains/debian/`, and
//! rustup for official releases, each installed only once it answers `-vV` with the pinned
//! release; beside them, the library sources of every Debian compiler and qemu's user-mode
//! emulators, whose absence is reported but fails nothing.

use crate::toolchains::debian::{self, Provisioner};
use crate::toolchains::discovery::{
    is_meant_for, rustup_toolchain, verify, Availability, Source, Toolchain, VERSION_TIMEOUT,
};
use crate::toolchains::emulators;
use crate::toolchains::extracted::Extracted;
use crate::toolchains::library_sources;
use crate::toolchains::pins::{DebianSource, Pin};
use crate::toolchains::version::RustcVersion;
use anyhow::{bail, ensure, Context};
use std::path::{Path, PathBuf};
use std::time::Instant;
use xshell::{cmd, Shell};

/// What `install` provisions beside the pins' compilers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Beside {
    /// The library sources of every Debian compiler under the root, and the emulators.
    Everything,
    /// The library sources of the pins' own Debian compilers, and the emulators (a shard).
    PinsAndEmulators,
    /// The library sources of the pins' own Debian compilers alone (`--only`).
    PinsAlone,
}

/// What `install` did for one pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Installation {
    AlreadyThere,
    /// Installed: the text says how and where.
    Installed(String),
    /// The text says what was tried and why each attempt failed.
    Failed(String),
    /// Left out by `--no-rustup` (a pin only rustup provides).
    Skipped,
}

/// Installs into `root` every pin of `wanted` that `availability` (discovered on the same pins)
/// reports missing or broken, then what `beside` says, printing progress; one pin's failure
/// does not stop the others.
pub(crate) fn install(
    sh: &Shell,
    root: PathBuf,
    wanted: &[&Pin],
    availability: &[Availability],
    use_rustup: bool,
    beside: Beside,
) -> anyhow::Result<Vec<(String, Installation)>> {
    // The emulators' suites, unless `beside` leaves them out (the host's codename may be unknown).
    let qemu = (beside != Beside::PinsAlone)
        .then(|| emulators::host_codename().map(|codename| emulators::qemu_suites(&codename)));
    let others = match beside {
        Beside::Everything => debian::provisioned_prefixes(&root),
        _ => Vec::new(),
    };
    let suites: Vec<String> = wanted
        .iter()
        .filter_map(|pin| pin.debian.as_ref())
        .flat_map(DebianSource::suites)
        .chain(others.iter().flat_map(|(_, source)| source.suites()))
        .chain(qemu.iter().flatten().flatten().cloned())
        .collect();
    let mut log = |line: &str| println!("  {line}");
    let mut provisioner = Provisioner::new(sh, root, suites, &mut log).verifying();
    let mut outcomes = Vec::new();
    // The Debian compilers the pins end up with, whose library sources go beside them.
    let mut compilers: Vec<DebianSource> = Vec::new();
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
            let prefix = toolchain.launch.rustc.ancestors().nth(3);
            !matches!(toolchain.source, Source::Debian { .. })
                || (pin.debian.is_none() || is_meant_for(pin, toolchain))
                    && prefix.is_some_and(|prefix| provisioner.intact(prefix, &pin.id))
        });
        let outcome = if satisfied {
            if let Some(Source::Debian { package }) = found.map(|toolchain| &toolchain.source) {
                compilers.push(package.clone());
            }
            Installation::AlreadyThere
        } else {
            install_pin(sh, &mut provisioner, pin, use_rustup, &mut compilers)
        };
        outcomes.push((pin.id.clone(), outcome));
    }
    compilers.extend(others.into_iter().map(|(_, compiler)| compiler));
    compilers.sort_by_key(ToString::to_string);
    compilers.dedup();
    for compiler in compilers {
        let outcome = library_sources::provision_sources(&mut provisioner, &compiler);
        let what = format!("{compiler}: library sources");
        report_extracted(&what, outcome);
    }
    let emulators = "qemu's user-mode emulators";
    match qemu {
        None => println!("  {emulators}: left as they are (--only)"),
        Some(suites) => {
            let outcome =
                suites.and_then(|suites| emulators::provision_qemu(&mut provisioner, &suites));
            report_extracted(emulators, outcome);
        }
    }
    Ok(outcomes)
}

/// Installs a pin that is not there: from Debian first, since that changes nothing outside
/// `target/`, then through rustup; a Debian compiler installed joins `compilers`.
fn install_pin(
    sh: &Shell,
    provisioner: &mut Provisioner<'_>,
    pin: &Pin,
    use_rustup: bool,
    compilers: &mut Vec<DebianSource>,
) -> Installation {
    println!(
        "{}: {} is not here; installing",
        pin.id,
        pin.describe_release()
    );
    let installed = |done: String| {
        println!("  {}: installed: {done}", pin.id);
        Installation::Installed(done)
    };
    let failed = |what: &str, error: anyhow::Error| {
        println!("  {}: {what}: failed: {error:#}", pin.id);
        format!("{what}: {error:#}")
    };
    let mut failures = Vec::new();
    if let Some(package) = &pin.debian {
        match provision_debian(provisioner, pin, package) {
            Ok((done, compiler)) => {
                compilers.push(compiler);
                return installed(done);
            }
            Err(error) => failures.push(failed(&format!("Debian {package}"), error)),
        }
    }
    match &pin.rustup {
        Some(_) if !use_rustup && pin.debian.is_none() => return Installation::Skipped,
        Some(_) if !use_rustup => failures.push("rustup: skipped (--no-rustup)".to_string()),
        Some(name) => match install_rustup(sh, pin, name) {
            Ok(done) => return installed(done),
            Err(error) => failures.push(failed("rustup", error)),
        },
        None if failures.is_empty() => {
            failures.push("the pin names no rustup toolchain and no Debian package".into())
        }
        None => {}
    }
    Installation::Failed(failures.join("; "))
}

/// Says, as the provisioner's log does, what became of `what`.
fn report_extracted(what: &str, outcome: anyhow::Result<Extracted>) {
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
    println!("  {line}");
}

/// Runs `rustup toolchain install` and checks that the result satisfies the pin.
fn install_rustup(sh: &Shell, pin: &Pin, name: &str) -> anyhow::Result<String> {
    // The target axis and the kernel build `core` from the compiler's own library sources.
    println!("  rustup: rustup toolchain install {name} --profile minimal --component rust-src");
    let started = Instant::now();
    let output = cmd!(
        sh,
        "rustup toolchain install {name} --profile minimal --component rust-src"
    )
    .env("RUST_BACKTRACE", "0")
    .quiet()
    .ignore_status()
    .output()
    .context("running rustup (is it installed?)")?;
    if !output.status.success() {
        bail!(
            "`rustup toolchain install {name}` exited with {}: {}",
            output.status,
            crate::util::process::error_and_cause(&String::from_utf8_lossy(&output.stderr))
        );
    }
    let rustc = cmd!(sh, "rustup which rustc --toolchain {name}")
        .quiet()
        .read()
        .with_context(|| {
            format!("finding the rustc of the toolchain rustup just installed as {name}")
        })?;
    let version = verified(pin, rustup_toolchain(name, Path::new(rustc.trim())))?;
    Ok(format!(
        "rustup toolchain {name}: {} ({:.1}s)",
        version.summary(),
        started.elapsed().as_secs_f64()
    ))
}

/// Provisions the pin's Debian compiler and checks it as discovery will.
fn provision_debian(
    provisioner: &mut Provisioner<'_>,
    pin: &Pin,
    package: &DebianSource,
) -> anyhow::Result<(String, DebianSource)> {
    let accept = |version: &RustcVersion| satisfies(pin, version);
    let provisioned = provisioner.provision(package, Some(&pin.release), &accept)?;
    let loader = match provisioned.launch.loader {
        Some(_) => "through its own loader",
        None => "under the host's loader",
    };
    let debian = Source::Debian {
        package: provisioned.source.clone(),
    };
    let toolchain = Toolchain::launched(pin.id.clone(), debian, provisioned.launch.clone());
    let version = verified(pin, toolchain)?;
    let (source, prefix) = (&provisioned.source, provisioned.prefix.display());
    let summary = version.summary();
    let said = match provisioned.unpacked {
        None => format!("Debian {source} already unpacked in {prefix}: {summary}, {loader}"),
        Some((packages, fetched, total, seconds)) => format!(
            "Debian {source} unpacked in {prefix}: {summary}, {loader} ({packages} packages, \
             {:.1} of {:.1} MB fetched, {seconds:.1}s)",
            fetched as f64 / 1e6,
            total as f64 / 1e6,
        ),
    };
    Ok((said, provisioned.source))
}

fn verified(pin: &Pin, toolchain: Toolchain) -> anyhow::Result<RustcVersion> {
    let version = verify(&toolchain, VERSION_TIMEOUT)?;
    satisfies(pin, &version)?;
    Ok(version)
}

fn satisfies(pin: &Pin, version: &RustcVersion) -> anyhow::Result<()> {
    ensure!(
        pin.is_satisfied_by(version),
        "it reports {} ({}), not the pinned {}",
        version.release_string(),
        version.first_line,
        pin.describe_release()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchains::extracted::Marker;
    use crate::toolchains::pins::Pins;
    use crate::toolchains::version::parse_verbose_version;

    /// Library sources at `version` under `root` whose files no digest vouches for: an install
    /// that looks at them provisions them again.
    fn unvouched_sources(root: &Path, version: &str) -> PathBuf {
        let prefix = debian::prefix_of(root, "rust-src", version);
        std::fs::create_dir_all(&prefix).unwrap();
        let marker = Marker {
            package: "rust-src".into(),
            version: version.into(),
            suite: "sid".into(),
            sha256: "ab".repeat(32),
            fields: vec![("library".into(), "library".into())],
        };
        std::fs::write(
            prefix.join(crate::toolchains::extracted::MARKER),
            marker.render(),
        )
        .unwrap();
        library_sources::unavailable_note(&prefix)
    }

    /// `install --only A` (a pin whose Debian compiler is there, intact) looks at A's library
    /// sources and at nothing else under the root: not the sources of another compiler there
    /// (which it used to provide again), not the emulators. Nothing can be fetched here: the
    /// private apt's place is a file, so each provisioning tried leaves its failure noted.
    #[test]
    fn install_only_provisions_the_library_sources_of_the_pins_it_names() {
        let root = crate::project_root().join("target/kshim/unit-tests/install-only");
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("apt"), "not a directory: nothing is fetched\n").unwrap();
        let sh = Shell::new().unwrap();
        let real = crate::tests::support::current_rustc();
        let said = crate::tests::support::read_quietly(cmd!(sh, "{real} -vV"));
        let version = parse_verbose_version(&said).unwrap();
        let release = version.release_string();
        let (a, b) = (
            format!("sid:rustc={release}+dfsg1-1"),
            format!("trixie:rustc={release}+dfsg1-2"),
        );
        let pins = Pins::parse(
            &format!(
                "[[pin]]\nid = \"a\"\nrelease = \"{release}\"\nrole = \"debian\"\n\
                 debian = \"{a}\"\n"
            ),
            Path::new("toolchains.toml"),
        )
        .unwrap();
        // Both compilers provisioned, each with its sources; A's prefix vouched for by digests.
        let mut toolchain = None;
        for spec in [&a, &b] {
            let source = DebianSource::parse(spec).unwrap();
            let prefix = debian::compiler_prefix(&root, &source);
            std::fs::create_dir_all(prefix.join("usr/bin")).unwrap();
            std::os::unix::fs::symlink(&real, prefix.join("usr/bin/rustc")).unwrap();
            std::fs::write(prefix.join(debian::MARKER), format!("{source}\n")).unwrap();
            crate::toolchains::digests::record(&prefix).unwrap();
            toolchain.get_or_insert_with(|| Toolchain {
                id: "a".into(),
                spec: format!("debian:{source}"),
                source: Source::Debian { package: source },
                launch: crate::toolchains::loader::Launch {
                    rustc: prefix.join("usr/bin/rustc"),
                    env: Vec::new(),
                    loader: None,
                },
                pin: Some("a".into()),
            });
        }
        let (a_version, b_version) = (format!("{release}+dfsg1-1"), format!("{release}+dfsg1-2"));
        let a_note = unvouched_sources(&root, &a_version);
        let b_note = unvouched_sources(&root, &b_version);
        let found = [Availability::Found {
            toolchain: toolchain.unwrap(),
            version,
        }];
        let outcomes = install(
            &sh,
            root.clone(),
            &[&pins.pins[0]],
            &found,
            false,
            Beside::PinsAlone,
        )
        .unwrap();
        assert_eq!(outcomes, [("a".to_owned(), Installation::AlreadyThere)]);
        assert!(
            a_note.is_file(),
            "the sources of the pin's compiler were not looked at"
        );
        assert!(
            !b_note.exists(),
            "--only a provisioned another compiler's sources: {}",
            std::fs::read_to_string(&b_note).unwrap_or_default()
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
