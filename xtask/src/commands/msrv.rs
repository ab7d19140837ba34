// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask msrv`: which compilers build the shim ([`shim`]), a crate root ([`root`]) or a
//! kernel tree ([`tree`]), in which mode; [`answer`] decides and writes the answer.

pub mod answer;
pub mod root;
pub mod shim;
pub mod tree;

#[cfg(test)]
mod tests;

use crate::commands::flags;
use crate::run::driver::Settings;
use crate::run::plan::Selection;
use crate::toolchains::pins::with_range;
use crate::util::output::{Format, Output};
use crate::Verdict;
use anyhow::bail;
use xshell::Shell;

impl flags::Msrv {
    pub fn run(&self, sh: &Shell, output: Output) -> anyhow::Result<Verdict> {
        let format = Format::parse(self.format.as_deref().unwrap_or("human"))?;
        let toolchains = with_range(
            &self.toolchain,
            self.pins.as_deref(),
            self.version_range.as_deref(),
        )?;
        let answer = match (&self.root, &self.tree) {
            (Some(_), Some(_)) => {
                bail!("ask about a crate root (--root) or a tree (--tree), not both")
            }
            (Some(root), None) => crate::util::interrupt::run_interruptible(|| {
                root::answer(sh, root, &toolchains, self.pins.as_deref())
            })?,
            (None, Some(tree)) => tree::answer(sh, tree, &toolchains, self.pins.as_deref())?,
            (None, None) => {
                let settings =
                    Settings::new("msrv", self.jobs, self.timeout, self.no_cache, output)?;
                let selection = Selection {
                    toolchains,
                    pins: self.pins.clone(),
                    ..Selection::default()
                };
                crate::util::interrupt::run_interruptible(|| shim::answer(&selection, settings))?
            }
        };
        if self.no_cache && self.tree.is_some() {
            eprintln!("msrv: --no-cache does not apply to --tree, which only reads results");
        }
        Ok(format.print_report(
            answer.verdict(),
            output,
            || answer.to_json(),
            || answer.text(None),
            |style| answer.text(Some(style)),
        ))
    }
}
