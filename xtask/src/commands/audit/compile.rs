// SPDX-License-Identifier: GPL-2.0
//! `audit PATH --usage`: where any crate needs each gated feature it enables, as each compiler
//! says: one compile ([`Compile`]) per toolchain and feature with that feature left out of
//! `-Zallow-features`, its places read and shown as the usage run's are
//! ([`crate::features::places`], [`crate::report::usage`]).

use super::input::{package_manifest, Input};
use super::{AuditReport, Column};
use crate::features::places::{read_gate_errors, GateErrors, PlaceReader, SourcePoint};
use crate::features::status::Status;
use crate::report::usage::{FeatureUsage, UsageCell, UsageReport, UsageToolchain};
pub use crate::run::crate_root::compile::Compile;
use crate::run::plan::Rustc;
use crate::util::process::{self, DEFAULT_TIMEOUT};
use anyhow::{anyhow, bail, Context};
use std::path::Path;

impl Compile {
    /// The compile for an audited crate root: `rustc_args` if given, else its Cargo package
    /// where the root lies in one (`Cargo.toml` up to two directories above it), else the root.
    pub fn for_input(input: &Input, rustc_args: Option<&Path>) -> anyhow::Result<Compile> {
        if let Some(file) = rustc_args {
            let (kept, left_out) = read_rustc_args(file)?;
            if !left_out.is_empty() {
                eprintln!(
                    "audit: --rustc-args {}: left out {}; the compiles write metadata under the \
                     audit's scratch directory",
                    file.display(),
                    left_out.join(", ")
                );
            }
            return Ok(Compile::ArgFile(kept));
        }
        let Some(root) = &input.path else {
            bail!("--usage needs a crate root or a Cargo package, not a --features list");
        };
        Ok(match package_manifest(root) {
            Some(manifest) => Compile::Cargo(manifest),
            None => Compile::Root(root.clone(), input.kind),
        })
    }
}

/// Reads a `--rustc-args` file (one argument a line): the arguments the audit's compiles pass
/// on, and those it leaves out, each as written with why: an output path (`-o`, `--out-dir`,
/// `--emit`, `-C incremental`, `-Z temps-dir`: the compiles write metadata under the audit's
/// scratch directory), a linker, a plugin (`-Z llvm-plugins`, `-Z codegen-backend`) or another
/// argument file (`@FILE`). Its own `--error-format` and `-Z allow-features` go silently: the
/// audit sets both.
pub fn read_rustc_args(file: &Path) -> anyhow::Result<(Vec<String>, Vec<String>)> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("--rustc-args: cannot read {}", file.display()))?;
    let lines: Vec<&str> = text.lines().collect();
    let (mut kept, mut left_out) = (Vec::new(), Vec::new());
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        // A flag and its value, whether written as one argument or two.
        let codegen = line.strip_prefix("-C").or(line.strip_prefix("--codegen="));
        let (flag, value, width) = match (line, lines.get(index + 1)) {
            (
                "-o" | "--out-dir" | "--emit" | "-C" | "--codegen" | "-Z" | "--error-format",
                Some(next),
            ) => (line, *next, 2),
            _ => match (codegen, line.strip_prefix("-Z")) {
                (Some(value), _) => ("-C", value, 1),
                (None, Some(value)) => ("-Z", value, 1),
                (None, None) => (line, "", 1),
            },
        };
        let option = |name: &str| value == name || value.starts_with(&format!("{name}="));
        let why = match flag {
            "-o" | "--out-dir" | "--emit" => Some("an output path"),
            _ if line.starts_with("-o")
                || line.starts_with("--out-dir=")
                || line.starts_with("--emit=") =>
            {
                Some("an output path")
            }
            "-C" | "--codegen" if option("linker") => Some("a linker"),
            "-C" | "--codegen" if option("incremental") => Some("an output path"),
            "-Z" if option("temps-dir") => Some("an output path"),
            "-Z" if option("llvm-plugins") || option("codegen-backend") => Some("a plugin"),
            "-Z" if option("allow-features") => Some(""),
            _ if line.starts_with("--error-format") => Some(""),
            _ if line.starts_with('@') => Some("another argument file"),
            _ => None,
        };
        let written = lines[index..index + width].join(" ");
        match why {
            Some("") => {}
            Some(why) => left_out.push(format!("`{written}` ({why})")),
            None => kept.extend(lines[index..index + width].iter().map(|s| s.to_string())),
        }
        index += width;
    }
    Ok((kept, left_out))
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
    let invocation = compile.invocation(rustc, Some(&allowed), scratch)?;
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
        if let Err(error) = compile_without(compile, rustc, &allowed, "", scratch) {
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
    use std::path::PathBuf;

    #[test]
    fn an_argument_file_gets_our_allow_list_and_json_diagnostics_only() {
        let scratch = crate::project_root().join("target/kshim/unit-tests/audit-usage");
        std::fs::create_dir_all(&scratch).unwrap();
        let file = scratch.join("given.args");
        std::fs::write(
            &file,
            "--edition=2021\n-Z\nallow-features=a,b\n-Zallow-features=a\n--error-format=short\n\
             --error-format\nshort\nlib.rs",
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
        let invocation = Compile::ArgFile(read_rustc_args(&file).unwrap().0)
            .invocation(&rustc, Some(&["a", "c"]), &scratch)
            .unwrap();
        let derived = std::fs::read_to_string(scratch.join("rustc-args")).unwrap();
        assert_eq!(derived, "--edition=2021\nlib.rs");
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
