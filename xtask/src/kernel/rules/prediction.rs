// SPDX-License-Identifier: GPL-2.0
//! What one compiler's probes say about a tree: per crate root, a metadata-only compile of a
//! probe crate that enables the features the root enables for that compiler (its `cfg_attr`
//! conditions decided by [`crate::features::cfg`] with the tree's Kconfig and `rust/Makefile`
//! cfgs), with the flags Kbuild gives it and the feature lints Kbuild's flags deny (as `#![deny]`,
//! which an older compiler that lacks a lint only warns about), once with `RUSTC_BOOTSTRAP=1` (as
//! the kernel's Makefile exports it) and once without, to say whether the bootstrap matters.

use super::{Build, CrateRoot, Tree};
use crate::catalog::Release;
use crate::features::cfg::Query;
use crate::features::status::Status;
use crate::run::plan::Rustc;
use crate::util::json::{Deserialize, Serialize};
use crate::util::process::{self, Invocation};
use anyhow::Context;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Predicted {
    Pass,
    Fail,
    Refused,
}

impl Predicted {
    pub fn word(self) -> &'static str {
        match self {
            Predicted::Pass => "pass",
            Predicted::Fail => "fail",
            Predicted::Refused => "refused",
        }
    }

    /// A tree's prediction: refused below its minimum (the tree's own check refuses the
    /// compiler), else pass when every crate root's probe builds.
    pub fn of_tree(minimum_met: bool, crates: &[CratePrediction]) -> Predicted {
        let every_probe_builds = crates
            .iter()
            .all(|krate| krate.predicted == Predicted::Pass);
        match (minimum_met, every_probe_builds) {
            (false, _) => Predicted::Refused,
            (true, true) => Predicted::Pass,
            (true, false) => Predicted::Fail,
        }
    }
}

/// What the probes predict for one tree and one compiler.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prediction {
    /// Whether the compiler's release is at least the tree's minimum for the host architecture.
    pub minimum_met: bool,
    /// [`Predicted::of_tree`].
    pub predicted: Predicted,
    /// One per crate root, in the tree's order.
    pub crates: Vec<CratePrediction>,
}

/// What one crate root's probe said.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CratePrediction {
    pub root: String,
    /// The features it enables for this compiler (conditions decided), in its order.
    pub features: Vec<String>,
    /// `Pass` or `Fail` (with `RUSTC_BOOTSTRAP=1`).
    pub predicted: Predicted,
    /// Whether the probe fails without `RUSTC_BOOTSTRAP=1` where it builds with it.
    pub needs_bootstrap: bool,
    /// The probe's errors, each naming the feature and the code: `unknown feature `x` (E0635)`.
    pub errors: Vec<String>,
}

/// Cfg names the compiler sets from the target and the codegen flags, not Kbuild.
const COMPILER_NAMES: &[&str] = &[
    "debug_assertions",
    "overflow_checks",
    "ub_checks",
    "unix",
    "windows",
];

/// Cfg keys the compiler sets (besides every `target_*`).
const COMPILER_KEYS: &[&str] = &["panic", "relocation_model", "sanitize"];

/// The features `krate` enables on a compiler of `release`, and those left undecided.
pub(crate) fn enabled_features(
    tree: &Tree,
    krate: &CrateRoot,
    release: Release,
) -> (Vec<String>, Vec<String>) {
    let cfg_set = |name: &str| {
        krate
            .cfgs
            .iter()
            .any(|(cfg, from)| cfg == name && from.is_none_or(|from| release >= from))
    };
    let lookup = |query: Query<'_>| match query {
        Query::Name(name) if cfg_set(name) => Some(true),
        Query::Name(name) if name.starts_with("CONFIG_") => match tree.symbol(name) {
            Some(symbol) => Some(symbol.from.is_some_and(|from| release >= from)),
            // A `RUSTC_HAS_*` that the tree's Kconfig does not define is never set.
            None if name.starts_with("CONFIG_RUSTC_HAS_") => Some(false),
            None => None,
        },
        // What the compiler sets for the kernel's target and flags is left to the target.
        Query::Name(name) if COMPILER_NAMES.contains(&name) => None,
        // Kbuild passes no other cfg to these crates: `doc`, `test`, `feature = "std"` are off.
        Query::Name(_) => Some(false),
        Query::KeyValue(key, value) if cfg_set(&format!("{key}=\"{value}\"")) => Some(true),
        Query::KeyValue(key, _) if key.starts_with("target_") || COMPILER_KEYS.contains(&key) => {
            None
        }
        Query::KeyValue(..) => Some(false),
        Query::Version(wanted) => Some(release >= wanted),
    };
    let mut enabled: Vec<String> = Vec::new();
    let mut undecided = Vec::new();
    for feature in &krate.features {
        match feature
            .condition()
            .map_or(Some(true), |c| c.evaluate(&lookup))
        {
            Some(true) => crate::push_once(&mut enabled, feature.name.clone()),
            Some(false) => {}
            None => undecided.push(feature.name.clone()),
        }
    }
    (enabled, undecided)
}

/// Predicts how `rustc` fares with `tree`: one probe per crate root (identical probes compiled
/// once), in `directory` (created; the caller removes it). An error is a probe that could not
/// be run or judged (a crash, a kill), never a compiler's verdict.
pub fn predict(
    tree: &Tree,
    rustc: &Rustc,
    directory: &Path,
    timeout: Duration,
) -> anyhow::Result<Prediction> {
    std::fs::create_dir_all(directory)
        .with_context(|| format!("creating {}", directory.display()))?;
    let minimum_met = rustc.release >= tree.minimum.rustc;
    let mut seen: BTreeMap<Probe, (bool, Vec<String>)> = BTreeMap::new();
    let mut crates = Vec::new();
    for krate in &tree.crates {
        // A feature under a condition the tree's files cannot decide is left out of the probe.
        let (features, _undecided) = enabled_features(tree, krate, rustc.release);
        let flags = match krate.build {
            Build::Library => Vec::new(),
            Build::Kbuild => tree.driver_flags.clone(),
        };
        // The crate's own `#![allow]` overrides the command line's level.
        let denied: Vec<String> = tree
            .denied_lints
            .iter()
            .filter(|lint| !krate.allowed_lints.contains(lint))
            .cloned()
            .collect();
        let mut outcome = |bootstrap| -> anyhow::Result<(bool, Vec<String>)> {
            let key = Probe {
                features: features.clone(),
                flags: flags.clone(),
                denied: denied.clone(),
                loads_proc_macro: krate.loads_proc_macro,
                bootstrap,
            };
            if let Some(outcome) = seen.get(&key) {
                return Ok(outcome.clone());
            }
            let outcome = compile(rustc, &key, directory, timeout)
                .with_context(|| format!("probing {} with {}", krate.root, rustc.release))?;
            seen.insert(key, outcome.clone());
            Ok(outcome)
        };
        let ((builds, errors), (without, _)) = (outcome(true)?, outcome(false)?);
        crates.push(CratePrediction {
            root: krate.root.clone(),
            features,
            predicted: if builds {
                Predicted::Pass
            } else {
                Predicted::Fail
            },
            needs_bootstrap: builds && !without,
            errors,
        });
    }
    Ok(Prediction {
        minimum_met,
        predicted: Predicted::of_tree(minimum_met, &crates),
        crates,
    })
}

/// One probe: a library enabling `features` with the feature lints `denied`, compiled with
/// `flags`, loading `proc_macro` when asked, with or without `RUSTC_BOOTSTRAP=1`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Probe {
    features: Vec<String>,
    flags: Vec<String>,
    denied: Vec<String>,
    loads_proc_macro: bool,
    bootstrap: bool,
}

fn compile(
    rustc: &Rustc,
    probe: &Probe,
    directory: &Path,
    timeout: Duration,
) -> anyhow::Result<(bool, Vec<String>)> {
    let names: Vec<&str> = probe.features.iter().map(String::as_str).collect();
    let extern_crates: &[&str] = if probe.loads_proc_macro {
        &["proc_macro"]
    } else {
        &[]
    };
    let mut source =
        crate::features::probe::probe_source_with(&names, "cargo xtask kernel", extern_crates);
    if names.is_empty() {
        source = source.replace("#![feature()]\n", "");
    }
    if names.contains(&"staged_api") {
        // A crate with `staged_api` on must say its own stability, as 6.1's vendored `alloc`
        // does; without it the empty probe fails for a reason of its own.
        source.push_str("#![unstable(feature = \"kshim_kernel_probe\", issue = \"none\")]\n");
    }
    if !probe.denied.is_empty() {
        // Among the inner attributes, before any `extern crate`: after the header line.
        let at = source.find('\n').map_or(0, |end| end + 1);
        source.insert_str(at, &format!("#![deny({})]\n", probe.denied.join(", ")));
    }
    let path = directory.join("kshim_kernel_probe.rs");
    std::fs::write(&path, source).with_context(|| format!("writing {}", path.display()))?;
    let mut invocation: Invocation = rustc.probe(&path, directory);
    invocation.args.extend(probe.flags.iter().cloned());
    if !probe.bootstrap {
        invocation.env.retain(|(name, _)| name != "RUSTC_BOOTSTRAP");
        invocation.env_remove.push("RUSTC_BOOTSTRAP".into());
    }
    let output = process::run(&invocation, timeout)
        .with_context(|| format!("running {}", rustc.launch.rustc.display()))?;
    anyhow::ensure!(
        output.status.is_ok(),
        "the probe {}",
        output.describe_ending(timeout)
    );
    // The features `-Zcrate-attr=feature(...)` turns on are classified as the source's are.
    let mut classified = names.clone();
    for flag in &probe.flags {
        if let Some(list) = flag
            .strip_prefix("-Zcrate-attr=feature(")
            .and_then(|rest| rest.strip_suffix(')'))
        {
            classified.extend(list.split(',').map(str::trim).filter(|n| !n.is_empty()));
        }
    }
    let diagnostics = crate::features::probe::read_diagnostics(&output.stderr, &classified)?;
    let stable_denied = probe.denied.iter().any(|lint| lint == "stable_features");
    let mut seen = std::collections::BTreeSet::new();
    let mut errors: Vec<String> = classified
        .iter()
        .zip(&diagnostics.statuses)
        .filter(|(name, _)| seen.insert(**name))
        .filter_map(|(name, status)| match status {
            Status::Unknown => Some(format!("unknown feature `{name}` (E0635)")),
            Status::Stable(since) if stable_denied => Some(format!(
                "feature `{name}` has been stable since {since} (`stable_features`, denied)"
            )),
            Status::Removed => Some(format!("feature `{name}` has been removed (E0557)")),
            _ => None,
        })
        .collect();
    errors.extend(diagnostics.other_errors);
    if !output.success() && errors.is_empty() {
        errors.push(
            crate::util::diagnostics::first_rustc_error(&output.stderr).unwrap_or_else(|| {
                format!("the probe failed: {}", process::last_line(&output.stderr))
            }),
        );
    }
    Ok((output.success(), errors))
}
