// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask usage`: where each feature is used, as each compiler says; the run is
//! [`driver::drive`]'s (on the matrix's lock, outputs and cache), the report
//! [`crate::report::usage`]'s.

use crate::report::assemble::toolchain_entry;
use crate::report::usage::UsageReport;
use crate::report::ToolchainEntry;
use crate::run::driver::{self, Settings, Work};
use crate::run::plan::{Layout, Selection};
use crate::util::files::write_atomically;
use crate::util::output::Format;
use crate::{commands::flags, project_root, util::json, util::process, Verdict};
use anyhow::Context;
use xshell::Shell;

impl flags::Usage {
    pub fn run(&self, _sh: &Shell) -> anyhow::Result<Verdict> {
        let format = Format::parse(self.format.as_deref().unwrap_or("human"))?;
        let settings = Settings {
            jobs: driver::jobs("usage", self.jobs)?,
            timeout: driver::timeout(self.timeout, process::DEFAULT_TIMEOUT)?,
            use_cache: !self.no_cache,
            progress: true,
        };
        let selection = Selection {
            // Where the code needs each feature does not depend on the target.
            targets: Some(Vec::new()),
            toolchains: crate::toolchains::pins::with_range(
                &self.toolchain,
                self.pins.as_deref(),
                self.version_range.as_deref(),
            )?,
            pins: self.pins.clone(),
            shard: None,
        };
        let layout = Layout::new(&project_root());
        let report =
            crate::util::interrupt::run_interruptible(|| run_usage(&layout, &selection, settings))?;
        Ok(format.print_report(
            report.verdict(),
            || report.to_json(),
            || report.markdown(),
            |_colour| report.human(),
        ))
    }
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
    write_atomically(
        &Work::Usage.report(layout),
        json::to_pretty(&report.to_json()).as_bytes(),
    )
    .context("writing the usage report")?;
    Ok(report)
}
