// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask docs --record`: runs the matrix and the usage run on the compilers this
//! checkout has (every pin by default: one that cannot be had is recorded as missing, as the
//! matrix reports it), takes both reports as the data the runs return and write, never as
//! printed text, and regenerates every file from them, recording them under `docs/`.

use crate::driver::{self, Work};
use crate::matrix::{run_matrix, Options};
use crate::plan::{Layout, Selection};
use crate::usage::run_usage;
use crate::Verdict;
use std::path::Path;

/// Records both reports from `toolchains` (every pin when empty) and regenerates the docs;
/// the verdict is the matrix's where the docs were written.
pub fn record(root: &Path, toolchains: &[String]) -> anyhow::Result<Verdict> {
    let layout = Layout::new(root);
    let options = Options::new(toolchains.to_vec());
    let settings = driver::Settings {
        progress: true,
        ..options.settings
    };
    let options = Options {
        settings,
        ..options
    };
    let (matrix, _usage) = crate::interrupt::run_interruptible(|| {
        let matrix = run_matrix(&layout, &options)?;
        let usage_selection = Selection {
            // Where the code needs each feature does not depend on the target.
            targets: Some(Vec::new()),
            ..options.selection.clone()
        };
        let usage = run_usage(&layout, &usage_selection, settings)?;
        Ok((matrix, usage))
    })?;
    let written = super::regenerate(
        root,
        Some(&layout.report()),
        Some(&Work::Usage.report(&layout)),
        false,
    )?;
    Ok(match written {
        Verdict::Success => matrix.verdict(),
        failure => failure,
    })
}
