// SPDX-License-Identifier: GPL-2.0
//! Which compilers build any crate root: per compiler the audit's probe of the names it enables
//! ([`Prober`]), then the root compiled alone ([`Compile::Root`]) in stable and in kernel mode.
//! A crate with dependencies fails on the first `use` of one, which the answer shows.

use super::answer::{Answer, Built, Row, BOTH_MODES};
use crate::features::status::Status;
use crate::project_root;
use crate::run::crate_root::compile::Compile;
use crate::run::crate_root::input::{read_crate_root, Input};
use crate::run::crate_root::probing::Prober;
use crate::run::plan::{directory_name, Rustc};
use crate::toolchains::debian::Provisioning;
use crate::toolchains::discovery::{discover, Availability, VERSION_TIMEOUT};
use crate::util::diagnostics::{error_diagnostics, error_line, first_rustc_error};
use crate::util::output::escape;
use crate::util::process::{self, DEFAULT_TIMEOUT};
use anyhow::bail;
use std::path::Path;
use xshell::Shell;

/// The answer for the crate root `root`, each compiler's compiles made under `target/kshim/msrv`,
/// on the toolchains `sh` finds (a relative path is from the project root, as for `matrix`).
pub fn answer(
    sh: &Shell,
    root: &Path,
    toolchains: &[String],
    pins: Option<&Path>,
) -> anyhow::Result<Answer> {
    if !root.is_file() && !root.is_dir() {
        bail!(
            "--root {}: no such file or directory",
            escape(&root.to_string_lossy())
        );
    }
    let input = read_crate_root(root)?;
    let path = input.path.clone().unwrap_or_else(|| root.to_path_buf());
    let compile = Compile::Root(path.clone(), input.kind);
    let availabilities = discover(sh, pins, toolchains, VERSION_TIMEOUT, Provisioning::Allowed)?;
    let scratch = project_root().join(format!("target/kshim/msrv/{}", std::process::id()));
    let rows = crate::in_parallel(&availabilities, |index, availability| {
        let directory = scratch.join(format!("{index}-{}", directory_name(availability.id())));
        row(availability, &input, &compile, &directory)
    });
    let _ = std::fs::remove_dir_all(&scratch);
    let subject = format!(
        "the crate root {} ({} feature names)",
        path.display(),
        input.entries.len()
    );
    let note = "each compiler probed the names it enables and compiled the root alone, in its \
                package's edition, once per mode";
    Ok(Answer::new(
        (subject, "crate-root"),
        &BOTH_MODES,
        rows,
        vec![note.into()],
    ))
}

fn row(availability: &Availability, input: &Input, compile: &Compile, directory: &Path) -> Row {
    Row::of(availability, |toolchain, version| {
        let rustc = Rustc::of(toolchain, version.release);
        let names = input.names();
        let probe_directory = directory.join("probe");
        let gated: Vec<String> =
            match Prober::for_input(&rustc, input, &probe_directory).probe(&names) {
                Ok(answer) => names
                    .iter()
                    .zip(&answer.statuses)
                    .filter(|(_, status)| **status == Status::Gated)
                    .map(|(name, _)| name.to_string())
                    .collect(),
                // The compiles say what is wrong; the probe only names what needs the variable.
                Err(_) => Vec::new(),
            };
        let stable = build(compile, &rustc, None, &directory.join("stable"));
        let kernel = build(compile, &rustc, Some(&names), &directory.join("kernel"));
        ([stable, kernel], gated, false)
    })
}

/// One compile of the crate: whether it built, and its first error if not.
fn build(compile: &Compile, rustc: &Rustc, allowed: Option<&[&str]>, scratch: &Path) -> Built {
    let run = || {
        std::fs::create_dir_all(scratch)
            .map_err(|error| format!("cannot create {}: {error}", scratch.display()))?;
        let invocation = compile
            .invocation(rustc, allowed, scratch)
            .map_err(|error| format!("{error:#}"))?;
        process::run(&invocation, DEFAULT_TIMEOUT)
            .map_err(|error| process::describe_spawn_error(&invocation.program, &error))
    };
    let output = match run() {
        Ok(output) => output,
        Err(why) => return Built::Unknown(why),
    };
    let ending = || format!("the compile {}", output.describe_ending(DEFAULT_TIMEOUT));
    if output.success() {
        return Built::Builds;
    }
    if output.status.is_err() {
        return Built::Unknown(ending());
    }
    let diagnostics = compile.kind().diagnostics(&output);
    let first = error_diagnostics(&diagnostics)
        .into_iter()
        .next()
        .map(|(code, message)| error_line(&code, &message))
        .or_else(|| first_rustc_error(&output.stderr))
        .unwrap_or_else(ending);
    Built::Fails(first)
}
