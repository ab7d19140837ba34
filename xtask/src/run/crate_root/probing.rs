// SPDX-License-Identifier: GPL-2.0
//! Asking one compiler about a crate's feature names: the one-call probe of
//! [`crate::features::probe`], built as the audited crate is (a library or a proc-macro crate),
//! narrowed down by halves when some name breaks it (`staged_api`), and the target's `--print cfg`.

use super::input::{CrateKind, Input};
use crate::catalog::Release;
use crate::features::probe::{self, Diagnostics};
use crate::features::status::Status;
use crate::run::plan::Rustc;
use crate::util::diagnostics::first_rustc_error;
use crate::util::process::{self, DEFAULT_TIMEOUT};
use anyhow::{bail, ensure, Context as _};
use std::path::Path;

/// A target's cfgs, as `rustc --print cfg` lists them: `("target_arch", Some("x86_64"))`,
/// `("unix", None)`.
pub type TargetCfgs = Vec<(String, Option<String>)>;

/// One compiler's answer for every distinct name, in [`Input::names`] order.
#[derive(Clone, Debug)]
pub struct Answer {
    pub release: Release,
    pub statuses: Vec<Status>,
    /// Names that made a plain probe crate fail (`staged_api`), each with the error; they were
    /// probed alone, and the others without them.
    pub breakers: Vec<(String, String)>,
}

impl Answer {
    pub fn status(&self, input: &Input, name: &str) -> Option<Status> {
        self.statuses.get(input.position(name)?).copied()
    }
}

pub struct Prober<'a> {
    pub rustc: &'a Rustc,
    pub kind: CrateKind,
    pub loads_proc_macro: bool,
    /// Where the probes are written and compiled (created; the caller removes it).
    pub directory: &'a Path,
}

/// A status per name and the names that broke the one-call probe.
type Statuses = (Vec<Status>, Vec<(String, String)>);

impl<'a> Prober<'a> {
    /// A prober for an input, as its crate is built.
    pub fn for_input(rustc: &'a Rustc, input: &Input, directory: &'a Path) -> Self {
        Prober {
            rustc,
            kind: input.kind,
            loads_proc_macro: input.loads_proc_macro || input.kind == CrateKind::ProcMacro,
            directory,
        }
    }

    /// Compiles one probe crate enabling `names` and reads its diagnostics; a crash, a kill or
    /// a failure without any diagnostic is an error.
    fn run(&self, names: &[&str]) -> anyhow::Result<Diagnostics> {
        let directory = self.directory;
        std::fs::create_dir_all(directory)
            .with_context(|| format!("cannot create {}", directory.display()))?;
        let source = directory.join("kshim_audit_probe.rs");
        let extern_crates: &[&str] = if self.loads_proc_macro {
            &["proc_macro"]
        } else {
            &[]
        };
        let mut text = probe::probe_source_with(names, "cargo xtask audit", extern_crates);
        if names.is_empty() {
            // The baseline: the same crate without any feature.
            text = text.replace("#![feature()]\n", "");
        }
        std::fs::write(&source, text)
            .with_context(|| format!("cannot write {}", source.display()))?;
        let mut invocation = self.rustc.probe(&source, directory);
        if self.kind == CrateKind::ProcMacro {
            let args = &mut invocation.args;
            let index = args.iter().position(|arg| arg == "--crate-type");
            if let Some(value) = index.and_then(|index| args.get_mut(index + 1)) {
                *value = "proc-macro".into();
            }
        }
        let output = process::run(&invocation, DEFAULT_TIMEOUT)
            .with_context(|| format!("cannot run {}", self.rustc.launch.rustc.display()))?;
        if output.status.is_err() {
            bail!("the probe was killed after {} s", DEFAULT_TIMEOUT.as_secs());
        }
        let diagnostics = probe::read_diagnostics(&output.stderr, names)?;
        // A probe fails because of a name's status or another error it prints; a failure
        // with neither (a crash) is no answer at all.
        let explained = diagnostics
            .statuses
            .iter()
            .any(|status| matches!(status, Status::Unknown | Status::Removed));
        if !output.success() && !explained && diagnostics.other_errors.is_empty() {
            bail!(first_rustc_error(&output.stderr)
                .unwrap_or_else(|| "the probe failed and printed nothing".into()));
        }
        Ok(diagnostics)
    }

    /// Probes every name, in one call when it works; when an error that is about no name's
    /// status fails it, finds the names that cause it by halves: each keeps the status its own
    /// diagnostics give (E0635 if unknown), with the error beside it.
    ///
    /// A name a crate without `proc_macro` does not know is asked again with `proc_macro`
    /// loaded: a `proc_macro` library feature (`proc_macro_span`) is known only there, and a
    /// crate enabling one loads it, whatever the root shows.
    pub fn probe(&self, names: &[&str]) -> anyhow::Result<Answer> {
        let (mut statuses, breakers) = self.probe_as_built(names)?;
        let unknown: Vec<usize> = (0..names.len())
            .filter(|&index| statuses.get(index) == Some(&Status::Unknown))
            .collect();
        if !self.loads_proc_macro && !unknown.is_empty() {
            let with_proc_macro = Prober {
                loads_proc_macro: true,
                ..*self
            };
            let again: Vec<&str> = unknown.iter().map(|&index| names[index]).collect();
            let (answers, _) = with_proc_macro.probe_as_built(&again)?;
            for (index, status) in unknown.into_iter().zip(answers) {
                statuses[index] = status;
            }
        }
        Ok(Answer {
            release: self.rustc.release,
            statuses,
            breakers,
        })
    }

    fn probe_as_built(&self, names: &[&str]) -> anyhow::Result<Statuses> {
        let whole = self.run(names)?;
        if !whole.other_errors.is_empty() {
            if let Some(error) = self.run(&[])?.other_errors.into_iter().next() {
                // The crate fails without any feature: nothing here is about the names.
                bail!(error);
            }
        }
        self.narrow(names, whole)
    }

    /// The statuses `diagnostics` give `names`; where another error is among them, each half
    /// probed again, down to the single names that cause it.
    fn narrow(&self, names: &[&str], diagnostics: Diagnostics) -> anyhow::Result<Statuses> {
        match (names, diagnostics.other_errors.is_empty()) {
            (_, true) => Ok((diagnostics.statuses, Vec::new())),
            ([name], false) => {
                let breaker = (name.to_string(), diagnostics.other_errors.join("; "));
                Ok((diagnostics.statuses, vec![breaker]))
            }
            _ => {
                let (mut statuses, mut breakers) = (Vec::new(), Vec::new());
                let (left, right) = names.split_at(names.len() / 2);
                for half in [left, right] {
                    let (more, broke) = self.narrow(half, self.run(half)?)?;
                    statuses.extend(more);
                    breakers.extend(broke);
                }
                Ok((statuses, breakers))
            }
        }
    }
}

/// The compiler's cfgs for its host target (`rustc --print cfg`), or why it gave none.
pub fn print_cfg(rustc: &Rustc) -> anyhow::Result<TargetCfgs> {
    let mut invocation = rustc.print("cfg");
    invocation.env_remove.push("RUSTC_BOOTSTRAP".into());
    let output = process::run(&invocation, DEFAULT_TIMEOUT)
        .with_context(|| format!("cannot run {}", rustc.launch.rustc.display()))?;
    ensure!(output.success(), process::last_line(&output.stderr));
    Ok(read_print_cfg(&output.stdout))
}

/// Reads `rustc --print cfg`: one `name` or `key="value"` per line.
pub fn read_print_cfg(text: &str) -> TargetCfgs {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(|line| match line.split_once('=') {
            Some((key, value)) => (key.to_string(), Some(value.trim_matches('"').to_string())),
            None => (line.to_string(), None),
        })
        .collect()
}
