// SPDX-License-Identifier: GPL-2.0
//! The target axis of a report read back, checked against the catalog: every prediction (which
//! targets a release knows, what each target cell is expected to do) recomputed from the report's
//! own toolchains, their library sources and LLVM, and a recorded one that differs refused.

use super::{expected_cell, known_word, Sources, TargetAxis, TargetCell};
use crate::features::expect::Outcome;
use crate::report::ToolchainEntry;
use crate::targets::{broken_jump_tables, kernel_target};
use crate::util::output::escape;
use anyhow::{bail, Context as _};

impl TargetAxis {
    /// Fails, naming the cell, unless every target-axis cell expects what the catalog predicts
    /// of its toolchain and is not a result of a step that cannot have run. Two things only the
    /// run knew are taken from the report: whether the test program could run there, and, in
    /// reports written before the LLVM version was recorded, whether that LLVM writes
    /// static-branch entries wrongly.
    pub(in crate::report) fn check_predictions(
        &self,
        toolchains: &[ToolchainEntry],
    ) -> anyhow::Result<()> {
        for cell in &self.known {
            let toolchain = &toolchains[cell.toolchain];
            let target = kernel_target(&cell.triple);
            let predicted = toolchain
                .release
                .zip(target)
                .and_then(|(release, target)| target.known_on(release));
            if cell.expected != predicted {
                bail!(
                    "the target list of {} for {}: it expects `{}`, but the catalog predicts \
                     `{}` of release {}",
                    escape(&toolchain.id),
                    cell.triple,
                    known_word(cell.expected),
                    known_word(predicted),
                    toolchain.release_text.as_deref().map_or("?".into(), escape)
                );
            }
        }
        for cell in &self.cells {
            let toolchain = &toolchains[cell.toolchain];
            self.check_cell(cell, toolchain)
                .with_context(|| format!("{} on {}", cell.label(), escape(&toolchain.id)))?;
        }
        Ok(())
    }

    fn check_cell(&self, cell: &TargetCell, toolchain: &ToolchainEntry) -> anyhow::Result<()> {
        let Some(target) = kernel_target(&cell.triple) else {
            bail!("not a kernel target");
        };
        let missing = match self.sources.get(cell.toolchain) {
            Some(Some(Sources::Identity(_))) => None,
            Some(Some(Sources::Missing(why))) => Some(why.as_str()),
            _ => bail!("no library sources were looked for on that toolchain, so it has no cells"),
        };
        // Without a recorded LLVM, either answer of `broken_jump_tables` may be the run's.
        let llvm: Vec<Option<u32>> = match &self.llvm {
            Some(llvm) => vec![llvm.get(cell.toolchain).copied().flatten()],
            None => vec![None, Some(0)],
        };
        let mut allowed = Vec::new();
        for &llvm in &llvm {
            for not_run in [None, Some("")] {
                let (expected, why_not) = expected_cell(
                    toolchain,
                    (missing, llvm),
                    target,
                    (cell.kind, cell.mode),
                    not_run,
                );
                // Why no step runs there, unless it is only that the run had no emulator.
                allowed.push((expected, why_not.filter(|_| not_run.is_none())));
            }
        }
        if let Some((_, why_not)) = allowed
            .iter()
            .find(|(expected, _)| *expected == cell.expected)
        {
            if why_not.is_some() && cell.outcome != Outcome::Skipped {
                bail!(
                    "its outcome is `{}`, but no step runs there: {}",
                    cell.outcome.word(),
                    escape(cell.first_error.as_deref().unwrap_or("the catalog says so"))
                );
            }
            return Ok(());
        }
        // The first answer: the recorded LLVM's (or none), where the test program runs.
        let (predicted, why_not) = allowed.swap_remove(0);
        let why = why_not
            .or_else(|| {
                broken_jump_tables(target, llvm[0])
                    .filter(|_| predicted == Outcome::Fail)
                    .map(String::from)
            })
            .map(|why| format!(" ({})", escape(&why)))
            .unwrap_or_default();
        bail!(
            "it expects `{}`, but the catalog predicts `{}`{why}",
            cell.expected.word(),
            predicted.word()
        )
    }
}
