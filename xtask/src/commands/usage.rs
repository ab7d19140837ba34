// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask usage`: where each feature is used, as each compiler says; the run is
//! [`crate::run::driver::drive`]'s (on the matrix's lock, outputs and cache), the report
//! [`crate::report::usage`]'s.

pub use crate::report::runs::run_usage;
use crate::run::driver::Settings;
use crate::run::plan::{Layout, Selection};
use crate::util::output::{Format, Output};
use crate::{commands::flags, project_root, Verdict};
use xshell::Shell;

impl flags::Usage {
    pub fn run(&self, _sh: &Shell, output: Output) -> anyhow::Result<Verdict> {
        let format = Format::parse(self.format.as_deref().unwrap_or("human"))?;
        let settings = Settings::new("usage", self.jobs, self.timeout, self.no_cache, output)?;
        let selection = Selection {
            toolchains: crate::toolchains::pins::with_range(
                &self.toolchain,
                self.pins.as_deref(),
                self.version_range.as_deref(),
            )?,
            pins: self.pins.clone(),
            ..Selection::default()
        };
        let layout = Layout::new(&project_root());
        let report =
            crate::util::interrupt::run_interruptible(|| run_usage(&layout, &selection, settings))?;
        Ok(format.print_report(
            report.verdict(),
            output,
            || report.to_json(),
            || report.markdown(),
            |_| report.human(),
        ))
    }
}
