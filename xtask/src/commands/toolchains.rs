// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask toolchains [install]`: every pin with the compiler that satisfies it (or the
//! command that installs it, or why its compiler does not work), exit 1 when one is broken;
//! `install` provisions what it can through [`crate::toolchains::provision`] and exits 1 when a pin
//! is still missing.

use crate::catalog;
use crate::run::plan::Layout;
use crate::toolchains::debian::Provisioning;
use crate::toolchains::discovery::{discover, Availability, Source, Toolchain, VERSION_TIMEOUT};
use crate::toolchains::pins::{Pin, Pins, Shard};
use crate::toolchains::provision::{self, Installation};
use crate::toolchains::{digests, emulators, library_sources};
use crate::util::output::{escape, fit, pad, Output, Width};
use crate::util::run_lock::RunLock;
use crate::{commands::flags, Verdict};
use std::fmt::Write;
use std::path::Path;
use std::time::Instant;
use xshell::Shell;

impl flags::Toolchains {
    pub fn run(&self, sh: &Shell, output: Output) -> anyhow::Result<Verdict> {
        let pins_path = self.pins.clone().unwrap_or_else(Pins::default_path);
        match self.subcommand {
            flags::ToolchainsCmd::List(_) => {
                let found = found(sh, &pins_path, &self.toolchain)?;
                let list = list_text(&Pins::load(&pins_path)?, &found, !self.toolchain.is_empty());
                print!("{}", fit(&list, output.width));
                let broken = found
                    .iter()
                    .any(|entry| matches!(entry, Availability::Broken { .. }));
                Ok(Verdict::failure_if(broken))
            }
            flags::ToolchainsCmd::Install(ref install_flags) => {
                anyhow::ensure!(
                    self.toolchain.is_empty(),
                    "`toolchains install` installs the pins; --toolchain only names compilers \
                     that are already there"
                );
                install(sh, &pins_path, install_flags, output.width)
            }
            flags::ToolchainsCmd::Verify(_) => Ok(verify(&digests::provisioned_prefixes(
                &crate::toolchains::debian::toolchains_dir(),
                &crate::project_root().join("target/kernel"),
            ))),
        }
    }
}

/// The pins of `pins_path` (or the compilers `specs` name), each found, broken or missing.
fn found(sh: &Shell, pins_path: &Path, specs: &[String]) -> anyhow::Result<Vec<Availability>> {
    discover(
        sh,
        Some(pins_path),
        specs,
        VERSION_TIMEOUT,
        Provisioning::Allowed,
    )
}

/// Checks every provisioned prefix against its digests, printing one line per prefix and one
/// per damaged file.
fn verify(prefixes: &[std::path::PathBuf]) -> Verdict {
    let started = Instant::now();
    let mut bad = 0;
    for prefix in prefixes {
        match digests::damaged(prefix) {
            Ok(damaged) if damaged.is_empty() => println!("intact   {}", prefix.display()),
            Ok(damaged) => {
                bad += 1;
                println!("DAMAGED  {}", prefix.display());
                for file in damaged {
                    println!("         {file}");
                }
            }
            Err(error) => {
                bad += 1;
                println!("UNKNOWN  {}: {error:#}", prefix.display());
            }
        }
    }
    println!(
        "{} of {} provisioned prefixes intact ({:.1}s)",
        prefixes.len() - bad,
        prefixes.len(),
        started.elapsed().as_secs_f64()
    );
    if bad > 0 {
        println!(
            "repair: `cargo xtask toolchains install --no-rustup` provisions every damaged or \
             unchecked prefix under target/toolchains/ again (from the download cache where it \
             can); one under target/kernel/, removed, is unpacked again by `cargo xtask kernel`"
        );
    }
    Verdict::failure_if(bad > 0)
}

/// The pins `--only` and `--shard` select, in file order; an id that names no pin is an error.
fn selected<'p>(pins: &'p Pins, flags: &flags::Install) -> anyhow::Result<Vec<&'p Pin>> {
    let pinned = |id: &String| pins.pins.iter().any(|pin| &pin.id == id);
    if let Some(id) = flags.only.iter().find(|id| !pinned(id)) {
        anyhow::bail!(
            "--only {}: {} has no pin of that id",
            id.escape_debug(),
            pins.path.display()
        );
    }
    let mut selected = match flags.shard.as_deref().map(Shard::parse).transpose()? {
        Some(shard) => {
            shard.check(pins.pins.len())?;
            shard.pins(&pins.pins)
        }
        None => pins.pins.iter().collect(),
    };
    selected.retain(|pin| flags.only.is_empty() || flags.only.contains(&pin.id));
    Ok(selected)
}

fn install(
    sh: &Shell,
    pins_path: &Path,
    flags: &flags::Install,
    width: Width,
) -> anyhow::Result<Verdict> {
    let started = Instant::now();
    // A matrix on this checkout runs the compilers this would replace: the two take turns. The
    // lock comes first, so that what is read below is not changing under a running matrix.
    let _lock = RunLock::acquire(
        &Layout::new(&crate::project_root()).lock(),
        &mut |message| eprintln!("toolchains install: {message}"),
    )?;
    let pins = Pins::load(pins_path)?;
    let wanted = selected(&pins, flags)?;
    let before = found(sh, pins_path, &[])?;
    let beside = if !flags.only.is_empty() {
        provision::Beside::PinsAlone
    } else if flags.shard.is_some() {
        provision::Beside::PinsAndEmulators
    } else {
        provision::Beside::Everything
    };
    let outcomes = provision::install(
        sh,
        crate::toolchains::debian::toolchains_dir(),
        &wanted,
        &before,
        !flags.no_rustup,
        beside,
    )?;
    let mut summary = format!(
        "\nInstall summary ({:.1}s):\n",
        started.elapsed().as_secs_f64()
    );
    let (mut failed, mut skipped) = (0, Vec::new());
    for (id, outcome) in &outcomes {
        let said = match outcome {
            Installation::Skipped => {
                skipped.push(id.as_str());
                continue;
            }
            Installation::AlreadyThere => "already there".to_owned(),
            Installation::Installed(how) => format!("installed: {how}"),
            Installation::Failed(why) => {
                failed += 1;
                format!("NOT installed: {why}")
            }
        };
        let _ = writeln!(summary, "  {id}: {said}");
    }
    if !skipped.is_empty() {
        let _ = writeln!(
            summary,
            "  left out by --no-rustup (rustup provides them): {}",
            skipped.join(", ")
        );
    }
    print!("{}", fit(&summary, width));
    println!();
    let mut after = found(sh, pins_path, &[])?;
    // `--only` asked about those pins: the rest of the list is not news.
    after.retain(|entry| flags.only.is_empty() || flags.only.iter().any(|id| id == entry.id()));
    print!("{}", fit(&list_text(&pins, &after, false), width));
    if failed > 0 {
        let pins = outcomes.len();
        println!("\n{failed} of {pins} pins could not be installed (see above).");
    }
    Ok(Verdict::failure_if(failed > 0))
}

/// The list of pins (or of the compilers `--toolchain` gave) as text.
fn list_text(pins: &Pins, found: &[Availability], specs: bool) -> String {
    let mut out = String::new();
    let count =
        |wanted: fn(&Availability) -> bool| found.iter().filter(|entry| wanted(entry)).count();
    let found_count = count(|entry| matches!(entry, Availability::Found { .. }));
    let missing_count = count(|entry| matches!(entry, Availability::Missing { .. }));
    let broken_count = count(|entry| matches!(entry, Availability::Broken { .. }));
    if specs {
        let _ = writeln!(
            out,
            "Compilers given with --toolchain: {} ({found_count} found, {broken_count} broken)",
            found.len()
        );
    } else {
        let _ = writeln!(
            out,
            "Pins in {}: {} ({found_count} found, {missing_count} missing, {broken_count} broken)",
            pins.path.display(),
            found.len()
        );
    }
    // Formatting widths stop at 65535; `output::pad` takes any.
    let ids = found.iter().map(|entry| entry.id().chars().count());
    let id_width = ids.max().unwrap_or(0);
    let blank = pad("", id_width);
    let details_of = |toolchain: &Toolchain| -> Vec<String> {
        let pin = pins
            .pins
            .iter()
            .find(|pin| toolchain.pin == Some(pin.id.clone()));
        pin.map(|pin| format!("pin: {}", describe_pin(pin)))
            .into_iter()
            .collect()
    };
    for entry in found {
        let (state, head, details) = match entry {
            Availability::Found { toolchain, version } => {
                let mut below = String::new();
                if version.release < catalog::MINIMUM_RELEASE {
                    below = format!(", below the minimum {}", catalog::MINIMUM_RELEASE);
                }
                let how = match &toolchain.source {
                    Source::Rustup { .. } | Source::Debian { .. } => toolchain.spec.as_str(),
                    Source::Path => "path",
                };
                let (launch, mut details) = (&toolchain.launch, details_of(toolchain));
                details.push(format!("{how}: {}", launch.rustc.display()));
                if let Some(loader) = &launch.loader {
                    let loader = loader.program.display();
                    details.push(format!("through its own loader: {loader}"));
                }
                for (key, value) in &launch.env {
                    details.push(format!("with {key}={value}"));
                }
                details.push(version.first_line.clone());
                details.push(match library_sources::library_sources(toolchain, version) {
                    Ok(sources) => format!(
                        "library sources: {} (core edition {})",
                        sources.identity, sources.core_edition
                    ),
                    Err(missing) => missing.to_string(),
                });
                ("found", format!("{}{below}", version.summary()), details)
            }
            Availability::Broken { toolchain, error } => {
                let mut details = details_of(toolchain);
                details.extend(error.lines().map(str::to_owned));
                (
                    "BROKEN",
                    toolchain.launch.rustc.display().to_string(),
                    details,
                )
            }
            Availability::Missing { pin, install_hint } => {
                let details = vec![format!("install: {install_hint}")];
                ("missing", describe_pin(pin), details)
            }
        };
        let shown = pad(&escape(entry.id()), id_width);
        let _ = writeln!(out, "  {shown}  {state:7}  {head}");
        for line in details {
            // Under the entry's first line, aligned with its detail.
            let _ = writeln!(out, "  {blank}           {line}");
        }
    }
    let qemu = emulators::provisioned_qemu();
    let hint = "not provisioned; run `cargo xtask toolchains install`";
    let qemu = qemu.unwrap_or_else(|| hint.into());
    let _ = writeln!(out, "qemu's user-mode emulators: {qemu}");
    out
}

/// "1.84.0, role feature: derive_coerce_pointee first appears, CONFIG_RUSTC_HAS_COERCE_POINTEE".
fn describe_pin(pin: &Pin) -> String {
    let catalog_facts = crate::toolchains::version::parse_release(&pin.release)
        .ok()
        .map(|(release, _)| crate::features::expect::catalog_facts(release))
        .unwrap_or_default();
    let about = if catalog_facts.is_empty() {
        pin.role.description().to_owned()
    } else {
        catalog_facts.join(", ")
    };
    let mut text = format!("{}, role {}: {about}", pin.describe_release(), pin.role);
    if let Some(note) = &pin.note {
        // A note is free text: its control characters are shown, never sent to the terminal.
        text.push_str(&format!(" ({})", escape(note)));
    }
    text
}
