// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask matrix`: every pinned compiler probed, the shim and every example built, run and
//! tested with it in both modes, each cell compared with the catalog's prediction; this module
//! only orchestrates (plan, cache keys, scheduler, report) and answers Ctrl-C.

use crate::features::expect::ToolchainVerdict;
use crate::features::probe;
pub use crate::report::runs::{run_matrix, Options};
use crate::run::driver::Settings;
use crate::run::plan::{plan_run, Layout, Step};
use crate::targets::parse_targets;
use crate::toolchains::debian::Provisioning;
use crate::toolchains::discovery::Availability;
use crate::toolchains::pins::Shard;
use crate::util::interrupt;
use crate::util::output::{self, Format, Output};
use crate::util::process::shell_quote;
use crate::{commands::flags, project_root, Verdict};
use anyhow::{ensure, Context};
use std::collections::BTreeSet;
use std::path::PathBuf;
use xshell::Shell;

impl flags::Matrix {
    pub fn run(&self, sh: &Shell, output: Output) -> anyhow::Result<Verdict> {
        let format = Format::parse(self.format.as_deref().unwrap_or("human"))?;
        let settings = Settings::new("matrix", self.jobs, self.timeout, self.no_cache, output)?;
        let shard = self.shard.as_deref().map(Shard::parse).transpose()?;
        let targets = (!self.target.is_empty())
            .then(|| parse_targets(&self.target))
            .transpose()?;
        let root = match &self.root {
            Some(root) => {
                let root = std::fs::canonicalize(root)
                    .with_context(|| format!("--root {}", root.display()))?;
                // Refused before anything is created under it.
                for part in ["kernel-shim/src/lib.rs", "examples/Cargo.toml"] {
                    ensure!(
                        root.join(part).is_file(),
                        "--root {}: not a kshim checkout (it has no {part})",
                        output::escape(&root.to_string_lossy())
                    );
                }
                root
            }
            None => project_root(),
        };
        // A checkout given by `--root` has its own pin file, from which the range selects.
        let pins = self
            .pins
            .clone()
            .or_else(|| self.root.as_ref().map(|_| root.join("toolchains.toml")));
        let toolchains = crate::toolchains::pins::with_range(
            &self.toolchain,
            pins.as_deref(),
            self.version_range.as_deref(),
        )?;
        let mut options = Options::new(toolchains);
        options.selection.pins = pins;
        options.selection.shard = shard;
        options.selection.targets = targets;
        options.settings = settings;
        options.strict = self.strict;
        let layout = Layout::new(&root);
        if self.dry_run {
            let (selection, timeout) = (&options.selection, options.settings.timeout);
            let planned = plan_run(sh, &layout, selection, timeout, Provisioning::Refused)?;
            print_dry_run_toolchains(&planned.availabilities);
            print_dry_run(&layout, &planned.steps, &probe::probe_source());
            return Ok(Verdict::Success);
        }
        let report = interrupt::run_interruptible(|| run_matrix(&layout, &options))?;
        let verdict = report.print(format, output);
        // A pin the user named and does not have is their question left unanswered, even
        // where the report of the others passes.
        let mut named_missing = false;
        for entry in &report.toolchains {
            if let ToolchainVerdict::Missing(hint) = &entry.verdict {
                if self.toolchain.contains(&entry.id) {
                    named_missing = true;
                    eprintln!(
                        "error: --toolchain {}: not installed, so nothing ran for it; to provision it: {}",
                        output::escape(&entry.id),
                        output::escape(hint)
                    );
                }
            }
        }
        Ok(Verdict::failure_if(
            named_missing || verdict == Verdict::Failure,
        ))
    }
}

/// Prints every command the run would execute, each runnable in a POSIX shell as it stands.
/// Says, as shell comments before the commands, which compiler each pin or spec would use and
/// where it comes from, and which pins are not provisioned and how to provision them: the
/// matrix itself installs nothing for a pin.
fn print_dry_run_toolchains(availabilities: &[Availability]) {
    println!("# Toolchains of this run:");
    for availability in availabilities {
        let id = output::escape(availability.id()).into_owned();
        let line = match availability {
            Availability::Found { toolchain, version } => format!(
                "{id}: {} {} ({})",
                toolchain.source.kind().word(),
                output::escape(&toolchain.launch.rustc.to_string_lossy()),
                version.release_string()
            ),
            Availability::Broken { error, .. } => {
                let first = error.lines().next().unwrap_or_default();
                format!("{id}: broken, skipped: {}", output::escape(first))
            }
            Availability::Missing { install_hint, .. } => format!(
                "{id}: not provisioned, so listed as missing; to provision it: {}",
                output::escape(install_hint)
            ),
        };
        println!("#   {line}");
    }
}

fn print_dry_run(layout: &Layout, steps: &[Step], probe_source: &str) {
    let directories: BTreeSet<&PathBuf> = steps.iter().flat_map(|step| &step.directories).collect();
    let probe_path = layout.probe_source();
    // Shown once rather than on every line, so that each line stays short and readable.
    println!(
        "# The matrix gives each command only PATH and TMPDIR from its own environment, plus the \
         variables shown; to run these lines exactly so: env -i PATH=\"$PATH\" sh -e FILE"
    );
    if let Some(parent) = probe_path.parent() {
        println!("mkdir -p {}", shell_quote(&parent.to_string_lossy()));
    }
    let lines: Vec<String> = probe_source.lines().map(shell_quote).collect();
    println!(
        "printf '%s\\n' {} > {}",
        lines.join(" "),
        shell_quote(&probe_path.to_string_lossy())
    );
    if !directories.is_empty() {
        let quoted: Vec<String> = directories
            .iter()
            .map(|directory| shell_quote(&directory.to_string_lossy()))
            .collect();
        println!("mkdir -p {}", quoted.join(" "));
    }
    for step in steps {
        for invocation in &step.processes {
            println!("{invocation}");
        }
    }
}
