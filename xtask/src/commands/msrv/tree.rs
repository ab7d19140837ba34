// SPDX-License-Identifier: GPL-2.0
//! Which compilers build a kernel tree's Rust (kernel mode alone): the results `cargo xtask
//! kernel` keeps ([`crate::kernel::results`]), and for a compiler the tree was not built with,
//! the tree's own prediction. Nothing is fetched or built here.

use super::answer::{Answer, Built, Row};
use crate::kernel::build::Real;
use crate::kernel::results::{library, load_result, prediction, result_entry, Library};
use crate::kernel::rules::{self, Predicted};
use crate::kernel::stamps;
use crate::kernel::{tools, trees};
use crate::run::cache::compiler_identity;
use crate::run::plan::{Mode, Rustc};
use crate::toolchains::debian::{Provisioner, Provisioning};
use crate::toolchains::discovery::{discover, VERSION_TIMEOUT};
use crate::toolchains::extracted::Marker;
use crate::toolchains::pins::{Pins, TreePin, TreeSource};
use crate::util::output::escape;
use anyhow::bail;
use std::path::{Path, PathBuf};
use xshell::Shell;

/// The tree `wanted` names (a pin's id or a checkout's path); a pinned Debian tree must have
/// been unpacked by `cargo xtask kernel`.
fn tree_pin(pins: &Pins, wanted: &str, kernel_dir: &Path) -> anyhow::Result<TreePin> {
    if let Some(pin) = pins.trees.iter().find(|pin| pin.id == wanted) {
        if let TreeSource::Debian(source) = &pin.source {
            let prefix = rules::pinned::debian_prefix(kernel_dir, source);
            if Marker::read(&prefix).is_none() {
                bail!(
                    "--tree {}: not unpacked yet, so never built here; `cargo xtask kernel --tree \
                     {}` fetches and builds it (with `--dry-run`, what that would cost)",
                    escape(wanted),
                    escape(wanted)
                );
            }
        }
        return Ok(pin.clone());
    }
    let path = PathBuf::from(wanted);
    if !path.is_dir() {
        return Err(trees::no_such_tree(pins, wanted));
    }
    Ok(TreePin {
        id: wanted.to_string(),
        source: TreeSource::Path(path),
        note: None,
        line: 0,
    })
}

pub fn answer(
    sh: &Shell,
    wanted: &str,
    toolchains: &[String],
    pins: Option<&Path>,
) -> anyhow::Result<Answer> {
    let pins_path = pins.map_or_else(Pins::default_path, Path::to_path_buf);
    let pins = Pins::load(&pins_path)?;
    let dir = crate::project_root().join("target/kernel");
    let pin = tree_pin(&pins, wanted, &dir)?;
    let mut log = |line: &str| eprintln!("msrv: {}", escape(line));
    // A pinned tree is unpacked already (checked above): nothing is fetched.
    let mut provisioner = Provisioner::new(sh, dir.clone(), Vec::new(), &mut log);
    let tree = trees::provide(&mut provisioner, &pin)?;
    let results = dir.join("results");
    let (facts, tree_key, mut rules) = stamps::facts(&results, &tree, true, true)?;
    let tools = tools::find_tools(&dir, tools::bindgen_for(&facts));
    let found = discover(
        sh,
        Some(&pins_path),
        toolchains,
        VERSION_TIMEOUT,
        Provisioning::Allowed,
    )?;
    let mut rows = Vec::new();
    for availability in &found {
        rows.push(Row::of(availability, |toolchain, version| {
            let rustc = Rustc::of(toolchain, version.release);
            let identity = compiler_identity(&rustc.launch, version);
            let say = |line: &str| eprintln!("msrv: {} with {}: {line}", pin.id, toolchain.id);
            let prediction = prediction(
                &dir,
                (&pin.id, &tree, tree_key),
                &mut rules,
                (&toolchain.id, &rustc, identity),
                true,
                &say,
            );
            // The result's entry, or why no result can be there.
            let entry = match library(&dir, toolchain, version) {
                Library::There(library) => match &tools {
                    Ok(tools) => Ok(result_entry(
                        &results,
                        tree_key,
                        identity,
                        &library,
                        &tools.identity,
                    )),
                    Err(missing) => Err(format!("the build tools are missing: {missing:#}")),
                },
                Library::ToExtract(package) => {
                    Err(format!("RUST_LIB_SRC: {package} is not extracted yet"))
                }
                Library::Unavailable(why) => Err(format!("RUST_LIB_SRC: {why}")),
            };
            let result = entry.as_deref().ok().and_then(load_result);
            let kernel = match &result {
                Some(built) => {
                    let said = || built.first_error.clone().unwrap_or(built.reason.clone());
                    match built.real {
                        Real::Pass => Built::Builds,
                        Real::Refused => {
                            Built::Fails(format!("make rustavailable refuses it: {}", said()))
                        }
                        Real::Fail | Real::NotRun => Built::Fails(said()),
                    }
                }
                None => {
                    let predicted = match &prediction {
                        Ok(prediction) => format!("predicted {}", prediction.predicted.word()),
                        Err(error) => format!("no prediction: {error:#}"),
                    };
                    let why = entry.err().map_or(String::new(), |why| format!("; {why}"));
                    Built::Unknown(format!("not built with it yet ({predicted}{why})"))
                }
            };
            let admitted = prediction
                .iter()
                .filter(|it| it.predicted != Predicted::Refused);
            let crates = admitted.flat_map(|prediction| &prediction.crates);
            let needing = crates.filter(|krate| krate.needs_bootstrap);
            let bootstrap_for = crate::distinct(needing.flat_map(|krate| krate.features.clone()));
            let stable = Built::Unknown("a kernel tree is built in kernel mode only".into());
            ([stable, kernel], bootstrap_for, result.is_some())
        }));
    }
    let compilers = rows.iter().filter(|row| row.unavailable.is_none()).count();
    let kept = rows.iter().filter(|row| row.cached).count();
    let mut notes = vec![format!(
        "{kept} of {compilers} compilers from the results `cargo xtask kernel` kept; nothing was \
         built now"
    )];
    if kept < compilers {
        notes.push(format!(
            "to build with the others: `cargo xtask kernel --tree {} --toolchain ID` (with \
             `--dry-run`, what that would cost)",
            pin.id
        ));
    }
    let subject = format!(
        "the kernel tree {} ({}, Linux {})",
        pin.id, tree.identity, facts.version
    );
    Ok(Answer::new(
        (subject, "kernel-tree"),
        &[Mode::Kernel],
        rows,
        notes,
    ))
}
