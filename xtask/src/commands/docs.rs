// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask docs`: regenerates (or with `--check` compares) every generated file through
//! [`crate::docs`], with `--record` from both reports made anew; `--screenshot` takes the page's.

use crate::commands::flags;
use crate::docs::{page, regenerate};
use crate::report::runs::{run_matrix, run_usage, Options};
use crate::run::driver::Work;
use crate::run::plan::Layout;
use crate::util::output::Verbosity;
use crate::{project_root, Verdict};
use anyhow::bail;
use std::path::Path;
use xshell::Shell;

impl flags::Docs {
    pub fn run(&self, _sh: &Shell, progress: Verbosity) -> anyhow::Result<Verdict> {
        let root = project_root();
        if self.record && (self.check || self.report.is_some() || self.usage.is_some()) {
            bail!("--record makes both reports itself: it takes no --check, --report or --usage");
        }
        if !self.record && !self.toolchain.is_empty() {
            bail!("--toolchain chooses the compilers of --record");
        }
        let verdict = if self.record {
            record(&root, &self.toolchain, progress)?
        } else {
            regenerate(
                &root,
                self.report.as_deref(),
                self.usage.as_deref(),
                self.check,
            )?
        };
        if self.screenshot && !self.check {
            take_screenshot(&root)?;
        }
        Ok(verdict)
    }
}

/// Takes [`page::SCREENSHOT`] of the generated page with headless chromium, stamped with the
/// digest of the page it shows, which `docs --check` compares with the page's.
fn take_screenshot(root: &Path) -> anyhow::Result<()> {
    let page = root.join(page::PAGE);
    if !page.is_file() {
        bail!(
            "no {} to take a picture of: record a report first (`cargo xtask docs --report FILE`)",
            page::PAGE
        );
    }
    let scratch = root.join("target/kshim");
    std::fs::create_dir_all(&scratch)?;
    let taken = scratch.join("compat.png");
    crate::util::browser::screenshot(&crate::util::browser::file_url(&page), &taken, &scratch)?;
    let html = std::fs::read_to_string(&page)?;
    let png = crate::util::png::with_text(
        &std::fs::read(&taken)?,
        page::SCREENSHOT_STAMP,
        &page::digest(&html),
    )?;
    crate::util::files::write_atomically(&root.join(page::SCREENSHOT), &png)?;
    eprintln!("docs: wrote {}", page::SCREENSHOT);
    Ok(())
}

/// Runs the matrix and the usage run on `toolchains` (every pin when empty), then regenerates
/// every file from the reports they write; the verdict is the matrix's once the files are.
fn record(root: &Path, toolchains: &[String], progress: Verbosity) -> anyhow::Result<Verdict> {
    let layout = Layout::new(root);
    let mut options = Options::new(toolchains.to_vec());
    options.settings.progress = progress;
    let matrix = crate::util::interrupt::run_interruptible(|| {
        let matrix = run_matrix(&layout, &options)?;
        run_usage(&layout, &options.selection, options.settings)?;
        Ok(matrix)
    })?;
    let usage = Work::Usage.report(&layout);
    match regenerate(root, Some(&layout.report()), Some(&usage), false)? {
        Verdict::Success => Ok(matrix.verdict()),
        failure => Ok(failure),
    }
}
