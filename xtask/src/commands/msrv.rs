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
use crate::run::driver::{self, Settings};
use crate::run::plan::{Layout, Selection};
use crate::toolchains::pins::with_range;
use crate::util::output::{self, Format, Output};
use crate::util::process;
use crate::{project_root, Verdict};
use answer::{Answer, BOTH_MODES};
use anyhow::{bail, Context};
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
            (Some(root), None) => {
                if !root.is_file() && !root.is_dir() {
                    bail!(
                        "--root {}: no such file or directory",
                        output::escape(&root.to_string_lossy())
                    );
                }
                let scratch = project_root().join("target/kshim/msrv");
                let (input, rows) = crate::util::interrupt::run_interruptible(|| {
                    root::rows(root, &toolchains, self.pins.as_deref(), &scratch)
                })?;
                let path = input.path.unwrap_or_else(|| root.clone());
                let subject = format!(
                    "the crate root {} ({} feature names)",
                    path.display(),
                    input.entries.len()
                );
                let note = "each compiler probed the names it enables and compiled the root \
                            alone, in its package's edition, once per mode";
                Answer::new(
                    (subject, "crate-root"),
                    &BOTH_MODES,
                    rows,
                    vec![note.into()],
                )
            }
            (None, Some(tree)) => tree::answer(sh, tree, &toolchains, self.pins.as_deref())?,
            (None, None) => {
                let settings = Settings {
                    jobs: driver::jobs("msrv", self.jobs)?,
                    timeout: driver::timeout(self.timeout, process::DEFAULT_TIMEOUT)?,
                    use_cache: !self.no_cache,
                    progress: output.verbosity,
                };
                let selection = Selection {
                    toolchains,
                    pins: self.pins.clone(),
                    // The host alone: whether the shim builds, not the target axis.
                    targets: Some(Vec::new()),
                    ..Selection::default()
                };
                let layout = Layout::new(&project_root());
                let (rows, note) = crate::util::interrupt::run_interruptible(|| {
                    shim::rows(&layout, &selection, settings)
                })?;
                let subject = "the shim (kernel-shim/src/lib.rs)".to_string();
                let answer = Answer::new((subject, "shim"), &BOTH_MODES, rows, vec![note]);
                let path = driver::Work::Shim.report(&layout);
                crate::util::files::write_atomically(
                    &path,
                    crate::util::json::to_pretty(&answer.to_json()).as_bytes(),
                )
                .with_context(|| format!("writing {}", path.display()))?;
                answer
            }
        };
        if self.no_cache && self.tree.is_some() {
            eprintln!("msrv: --no-cache does not apply to --tree, which only reads results");
        }
        Ok(format.print_report(
            answer.verdict(),
            output,
            || answer.to_json(),
            || answer.markdown(),
            |style| answer.human(style),
        ))
    }
}
