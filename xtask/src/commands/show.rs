// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask show REPORT.json`: a saved matrix (or `merge`) report or `kernel` report printed
//! again as its command printed it, read through the readers `merge` and `docs` use, with the
//! report's own exit status.

use crate::commands::flags;
use crate::kernel::report::json::KernelJson;
use crate::report::Report;
use crate::util::json;
use crate::util::output::{escape, Format, Output};
use crate::Verdict;
use anyhow::{bail, Context};
use xshell::Shell;

impl flags::Show {
    pub fn run(&self, _sh: &Shell, output: Output) -> anyhow::Result<Verdict> {
        let format = Format::parse(self.format.as_deref().unwrap_or("human"))?;
        let path = &self.report;
        let text = crate::util::files::read_text(path, crate::report::REPORT_LIMIT)
            .with_context(|| format!("cannot read the report {}", path.display()))?;
        let value = json::parse(&text).with_context(|| {
            format!(
                "{} is not JSON, so neither a matrix nor a kernel report",
                path.display()
            )
        })?;
        // A matrix report carries its schema; a kernel report is its trees and cells.
        let member = |name: &str| value.get(name).is_some();
        if member("schema") && member("features") && member("builds") {
            let report = Report::read(path)?;
            Ok(report.print(format, output))
        } else if member("trees") && member("cells") {
            let report = KernelJson::read(&text, path)?.with_tools_used();
            Ok(format.print_report(
                report.verdict(false),
                output,
                || json::to_value(&report),
                || report.markdown(),
                |style| report.human_in(style),
            ))
        } else {
            let members = value
                .as_object()
                .into_iter()
                .flat_map(|members| members.keys());
            let members: Vec<&str> = members.map(String::as_str).take(6).collect();
            bail!(
                "{} is neither a matrix report (`matrix --format json`: `schema`, `features`, \
                 `builds`) nor a kernel report (`kernel --format json`: `trees`, `cells`); it \
                 has {}",
                path.display(),
                if members.is_empty() {
                    "no members".to_owned()
                } else {
                    format!("the members {}", escape(&members.join(", ")))
                }
            )
        }
    }
}
