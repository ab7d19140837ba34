// SPDX-License-Identifier: GPL-2.0
//! A matrix run and a usage run, each through [`driver::drive`], handed back as their reports
//! (and written as JSON under `target/kshim/`): what `matrix`, `usage` and `docs --record`
//! share, so no command runs another.

use crate::report::assemble::{assemble, toolchain_entry};
use crate::report::targets::PlannedTargetAxis;
use crate::report::usage::UsageReport;
use crate::report::{Report, ToolchainEntry};
use crate::run::driver::{self, Settings, Work};
use crate::run::plan::{Layout, Selection};
use crate::targets::llvm_major;
use crate::toolchains::discovery::Availability;
use crate::util::files::write_atomically;
use crate::util::output::Verbosity;
use crate::util::{json, process};
use anyhow::Context;
use std::path::Path;

/// Everything a matrix run needs besides the repository, as the flags give it.
#[derive(Clone, Debug)]
pub struct Options {
    pub selection: Selection,
    pub settings: Settings,
    /// Whether missing pins fail the run.
    pub strict: bool,
}

impl Options {
    /// The defaults for `toolchains`: every core, the default timeout, the cache on, no
    /// progress.
    pub fn new(toolchains: Vec<String>) -> Self {
        Self {
            selection: Selection {
                toolchains,
                ..Selection::default()
            },
            settings: Settings {
                jobs: driver::cores(),
                timeout: process::DEFAULT_TIMEOUT,
                use_cache: true,
                progress: Verbosity::Quiet,
            },
            strict: false,
        }
    }
}

/// Runs the whole matrix through [`driver::drive`] and returns its report, which is also
/// written (as JSON) to [`Layout::report`]; an interrupted run writes none.
pub fn run_matrix(layout: &Layout, options: &Options) -> anyhow::Result<Report> {
    let driven = driver::drive(layout, &options.selection, Work::Matrix, options.settings)?;
    let run = &driven.planned;
    let columns: Vec<ToolchainEntry> = run.availabilities.iter().map(toolchain_entry).collect();
    let report = assemble(
        &columns,
        &run.steps,
        &driven.results,
        &run.examples,
        options.strict,
        options.selection.shard.map(|shard| shard.to_string()),
        &PlannedTargetAxis {
            targets: &run.targets,
            library_sources: &run.library_sources,
            not_run: &run.not_run,
            llvm: &run
                .availabilities
                .iter()
                .map(|availability| match availability {
                    Availability::Found { version, .. } => {
                        version.llvm_version.as_deref().and_then(llvm_major)
                    }
                    _ => None,
                })
                .collect::<Vec<_>>(),
        },
    );
    write_json(&layout.report(), &report.to_json(), "matrix")?;
    Ok(report)
}

/// Runs every usage compile (and the probes and shim builds they need) on the selected
/// toolchains through [`driver::drive`], and returns the report, which is also written to
/// [`Work::report`].
pub fn run_usage(
    layout: &Layout,
    selection: &Selection,
    settings: Settings,
) -> anyhow::Result<UsageReport> {
    let driven = driver::drive(layout, selection, Work::Usage, settings)?;
    let run = &driven.planned;
    let columns: Vec<ToolchainEntry> = run.availabilities.iter().map(toolchain_entry).collect();
    let report = crate::report::usage::assemble(
        &layout.root,
        &columns,
        &run.steps,
        &driven.results,
        &driven.compiles,
    );
    write_json(&Work::Usage.report(layout), &report.to_json(), "usage")?;
    Ok(report)
}

fn write_json(path: &Path, report: &json::Value, what: &str) -> anyhow::Result<()> {
    let text = json::to_pretty(report);
    write_atomically(path, text.as_bytes()).with_context(|| format!("writing the {what} report"))
}
