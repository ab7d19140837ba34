// SPDX-License-Identifier: GPL-2.0
//! `audit PATH --usage`: where any crate needs each gated feature it enables, as each compiler
//! says: one compile ([`Compile`]) per toolchain and feature with that feature left out of
//! `-Zallow-features`, its places read and shown as the usage run's are
//! ([`crate::features::places`], [`crate::report::usage`]).

use super::input::{package_manifest, CrateKind, Input};
use super::rustc_args::read_rustc_args;
use super::{AuditReport, Column};
use crate::features::places::{read_gate_errors, GateErrors, PlaceReader, SourcePoint};
use crate::features::status::Status;
use crate::report::usage::{FeatureUsage, UsageCell, UsageReport, UsageToolchain};
use crate::run::plan::Rustc;
use crate::util::json;
use crate::util::process::{self, Invocation, DEFAULT_TIMEOUT};
use anyhow::{anyhow, bail, Context};
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Compile {
    /// A Cargo package, by its manifest: `cargo rustc --lib --profile check`.
    Cargo(PathBuf),
    /// `--rustc-args`: rustc's arguments, one a line, as rustc's `@FILE` reads them, the way
    /// Kbuild compiles a crate.
    ArgFile(PathBuf),
    /// The crate root alone, as a library (or proc-macro) crate of edition 2021.
    Root(PathBuf, CrateKind),
}

impl Compile {
    /// The compile for an audited crate root: `rustc_args` if given, else its Cargo package
    /// where the root lies in one (`Cargo.toml` up to two directories above it), else the root.
    pub fn for_input(input: &Input, rustc_args: Option<&Path>) -> anyhow::Result<Compile> {
        if let Some(file) = rustc_args {
            let (_, left_out) = read_rustc_args(file)?;
            if !left_out.is_empty() {
                eprintln!(
                    "audit: --rustc-args {}: left out {}; the compiles pass on only the flags \
                     `cargo xtask audit --help` lists and write only metadata under the audit's \
                     scratch directory",
                    file.display(),
                    left_out.join(", ")
                );
            }
            return Ok(Compile::ArgFile(file.to_path_buf()));
        }
        let Some(root) = &input.path else {
            bail!("--usage needs a crate root or a Cargo package, not a --features list");
        };
        Ok(match package_manifest(root) {
            Some(manifest) => Compile::Cargo(manifest),
            None => Compile::Root(root.clone(), input.kind),
        })
    }

    /// The directory that relative file names in diagnostics start from.
    fn base(&self) -> PathBuf {
        match self {
            Compile::Cargo(manifest) => {
                manifest.parent().map(Path::to_path_buf).unwrap_or_default()
            }
            _ => std::env::current_dir().unwrap_or_default(),
        }
    }

    /// The compile that allows only `allowed`, writing under `scratch`.
    fn invocation(
        &self,
        rustc: &Rustc,
        allowed: &[&str],
        scratch: &Path,
    ) -> anyhow::Result<Invocation> {
        let allow = format!("-Zallow-features={}", allowed.join(","));
        let mut env = rustc.launch.env.clone();
        env.push(("RUSTC_BOOTSTRAP".into(), "1".into()));
        // rustc itself (through its own loader where it has one), writing only metadata and
        // JSON diagnostics.
        let rustc_metadata = |mut args: Vec<String>| {
            let out_dir = scratch.to_string_lossy().into_owned();
            args.extend(["--emit=metadata".into(), "--out-dir".into(), out_dir]);
            args.extend(["--error-format=json".into(), allow.clone()]);
            rustc.launch.invocation(args, env.clone())
        };
        Ok(match self {
            Compile::Cargo(manifest) => {
                let real = &rustc.launch.rustc;
                let cargo = real.with_file_name("cargo");
                if !cargo.is_file() {
                    bail!("no Cargo beside {}", real.display());
                }
                let mut env = env.clone();
                env.push(("RUSTC".into(), real.to_string_lossy().into_owned()));
                // Cargo finds its registry and configuration from these; the process starts
                // with a cleared environment.
                for name in ["HOME", "CARGO_HOME"] {
                    if let Ok(value) = std::env::var(name) {
                        env.push((name.into(), value));
                    }
                }
                let args = [
                    "rustc",
                    "--lib",
                    "--profile",
                    "check",
                    "--message-format=json",
                    "--manifest-path",
                    &manifest.to_string_lossy(),
                    "--target-dir",
                    &scratch.to_string_lossy(),
                    "--",
                    &allow,
                ]
                .map(String::from)
                .to_vec();
                Invocation::new(cargo, args).with_env(env)
            }
            Compile::ArgFile(file) => {
                let (args, _) = read_rustc_args(file)?;
                let derived = scratch.join("rustc-args");
                std::fs::create_dir_all(scratch)
                    .with_context(|| format!("creating {}", scratch.display()))?;
                std::fs::write(&derived, args.join("\n"))
                    .with_context(|| format!("writing {}", derived.display()))?;
                rustc_metadata(vec![format!("@{}", derived.display())])
            }
            Compile::Root(root, kind) => {
                let crate_type = match kind {
                    CrateKind::Library => "lib",
                    CrateKind::ProcMacro => "proc-macro",
                };
                let root = root.to_string_lossy();
                rustc_metadata(
                    ["--edition", "2021", "--crate-type", crate_type, &root]
                        .map(String::from)
                        .to_vec(),
                )
            }
        })
    }

    /// Refuses a compile of the crate root that wrote no metadata under `scratch`: it compiled
    /// nothing, so no place could have been found.
    fn wrote_metadata(&self, scratch: &Path) -> anyhow::Result<()> {
        if let Compile::Cargo(_) = self {
            return Ok(());
        }
        let entries =
            std::fs::read_dir(scratch).with_context(|| format!("reading {}", scratch.display()))?;
        let rmeta = |name: &std::ffi::OsStr| Path::new(name).extension() == Some("rmeta".as_ref());
        if entries.flatten().any(|entry| rmeta(&entry.file_name())) {
            return Ok(());
        }
        bail!("the compile wrote no metadata, so it compiled nothing and no place could be found")
    }

    /// rustc's JSON diagnostics, one a line, from what the compile printed (Cargo wraps them
    /// in its own messages on stdout).
    fn diagnostics(&self, stdout: &str, stderr: &str) -> String {
        match self {
            Compile::Cargo(_) => stdout
                .lines()
                .filter_map(|line| json::parse(line).ok())
                .filter(|message| message["reason"] == "compiler-message")
                .map(|message| message["message"].to_string())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => stderr.to_string(),
        }
    }
}

/// What one compile without `feature` (of the `allowed` names) found, or why it could not say.
fn compile_without(
    compile: &Compile,
    rustc: &Rustc,
    active: &[&str],
    feature: &str,
    scratch: &Path,
) -> anyhow::Result<GateErrors> {
    let allowed: Vec<&str> = active
        .iter()
        .copied()
        .filter(|name| *name != feature)
        .collect();
    let invocation = compile.invocation(rustc, &allowed, scratch)?;
    let output = process::run(&invocation, DEFAULT_TIMEOUT)
        .map_err(|error| anyhow!(process::describe_spawn_error(&invocation.program, &error)))?;
    let read = read_gate_errors(&compile.diagnostics(&output.stdout, &output.stderr));
    if !output.success() && read.places.is_empty() && read.attributes.is_empty() {
        // rustc's own error where it gave one, else Cargo's first error line.
        let said = read.other_error.clone().unwrap_or_else(|| {
            let lines = || output.stderr.lines().chain(output.stdout.lines());
            lines()
                .find(|line| line.starts_with("error"))
                .or_else(|| lines().find(|line| !line.trim().is_empty()))
                .unwrap_or("it printed nothing")
                .to_string()
        });
        bail!(
            "the compile {}: {said}",
            output.describe_ending(DEFAULT_TIMEOUT)
        );
    }
    match &read.other_error {
        Some(error) => bail!(error.clone()),
        None => Ok(read),
    }
}

impl AuditReport {
    /// The usage of every feature the audited crate enables, on every toolchain that answered
    /// the probe: a feature the probe calls gated and whose line is active there is compiled
    /// without.
    pub fn usage(&self, compile: &Compile, scratch: &Path) -> UsageReport {
        let names = self.input.names();
        let cells: Vec<Vec<UsageCell>> = super::in_parallel(&self.columns, |index, column| {
            let scratch = scratch.join(format!("usage-{index}"));
            self.column_cells(column, &names, compile, &scratch)
        });
        UsageReport {
            toolchains: self
                .columns
                .iter()
                .map(|column| UsageToolchain::of(&column.entry, column.label()))
                .collect(),
            features: names
                .iter()
                .enumerate()
                .map(|(index, name)| FeatureUsage {
                    name: name.to_string(),
                    shim_item: String::new(),
                    cells: cells.iter().map(|column| column[index].clone()).collect(),
                })
                .collect(),
            date: None,
        }
    }

    fn column_cells(
        &self,
        column: &Column,
        names: &[&str],
        compile: &Compile,
        scratch: &Path,
    ) -> Vec<UsageCell> {
        let (Some(answer), Some(rustc)) = (column.answer(), column.rustc.as_ref()) else {
            return vec![UsageCell::NotRun(column.entry.verdict.describe()); names.len()];
        };
        // `None` where a line's condition is one the audit cannot decide (a build script's cfg,
        // a Cargo feature).
        let activity = |name: &str| {
            self.decider
                .name_active_on(&self.input.lines_of(name), answer.release)
        };
        // Allowing a name the build does not enable is harmless; leaving out one it does
        // (behind a condition the audit cannot decide) would break every compile.
        let allowed: Vec<&str> = names
            .iter()
            .copied()
            .filter(|name| activity(name) != Some(false))
            .collect();
        let baseline = compile_without(compile, rustc, &allowed, "", scratch)
            .and_then(|_| compile.wrote_metadata(scratch));
        if let Err(error) = baseline {
            let error = format!("with every feature allowed, {error:#}");
            return vec![UsageCell::Failed(error, Vec::new()); names.len()];
        }
        let base = compile.base();
        let mut reader = PlaceReader::new(&base);
        names
            .iter()
            .map(|name| {
                let undecided = "its line's condition is undecided, so it is left out";
                match (activity(name), answer.status(&self.input, name)) {
                    (Some(false), _) => return UsageCell::NotEnabled,
                    (None, _) => return UsageCell::NotRun(undecided.into()),
                    (_, Some(Status::Stable(since))) => {
                        return UsageCell::Stable(since.to_string())
                    }
                    (_, Some(Status::Gated)) => {}
                    (_, Some(other)) => return UsageCell::NotGated(other.word().into()),
                    (_, None) => return UsageCell::NotGated("unanswered".into()),
                }
                match compile_without(compile, rustc, &allowed, name, scratch) {
                    Err(error) => UsageCell::Failed(format!("{error:#}"), Vec::new()),
                    Ok(read) => UsageCell::found(
                        read.places
                            .iter()
                            .map(|place| reader.place("crate", place))
                            .collect(),
                        read.attributes
                            .iter()
                            .map(|at| SourcePoint::of(at, &base))
                            .collect(),
                    ),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_argument_file_gets_our_allow_list_and_json_diagnostics_only() {
        let scratch = crate::project_root().join("target/kshim/unit-tests/audit-usage");
        std::fs::create_dir_all(&scratch).unwrap();
        let file = scratch.join("given.args");
        let root = scratch.join("lib.rs");
        std::fs::write(&root, "").unwrap();
        std::fs::write(
            &file,
            format!(
                "--edition=2021\n-Z\nallow-features=a,b\n-Zallow-features=a\n--error-format=short\n\
                 --error-format\nshort\n{}",
                root.display()
            ),
        )
        .unwrap();
        let rustc = Rustc {
            launch: crate::toolchains::loader::Launch {
                rustc: PathBuf::from("/usr/bin/rustc"),
                env: Vec::new(),
                loader: None,
            },
            release: crate::catalog::Release::new(1, 95, 0),
        };
        let invocation = Compile::ArgFile(file)
            .invocation(&rustc, &["a", "c"], &scratch)
            .unwrap();
        let derived = std::fs::read_to_string(scratch.join("rustc-args")).unwrap();
        assert_eq!(derived, format!("--edition=2021\n{}", root.display()));
        assert_eq!(
            invocation.args[1..],
            [
                "--emit=metadata",
                "--out-dir",
                &scratch.to_string_lossy(),
                "--error-format=json",
                "-Zallow-features=a,c"
            ]
        );
        assert!(invocation
            .env
            .contains(&("RUSTC_BOOTSTRAP".to_string(), "1".to_string())));
    }
}
