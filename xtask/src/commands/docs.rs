// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask docs`: regenerates (or with `--check` compares) every generated file through
//! [`crate::docs`], and with `--screenshot` takes the page's picture.

use crate::commands::flags;
use crate::docs::{page, regenerate};
use crate::{project_root, Verdict};
use anyhow::bail;
use std::path::Path;
use xshell::Shell;

impl flags::Docs {
    pub fn run(&self, _sh: &Shell) -> anyhow::Result<Verdict> {
        let root = project_root();
        let verdict = regenerate(
            &root,
            self.report.as_deref(),
            self.usage.as_deref(),
            self.check,
        )?;
        if self.screenshot && !self.check {
            take_screenshot(&root)?;
        }
        Ok(verdict)
    }
}

/// Where the page's screenshot is written, relative to the repository root.
pub const SCREENSHOT: &str = "docs/compat.png";

/// Takes [`SCREENSHOT`] of the generated page with headless chromium.
fn take_screenshot(root: &Path) -> anyhow::Result<()> {
    let page = root.join(page::PAGE);
    if !page.is_file() {
        bail!(
            "no {} to take a picture of: record a report first (`cargo xtask docs --report FILE`)",
            page::PAGE
        );
    }
    let scratch = root.join("target/kshim");
    let png = root.join(SCREENSHOT);
    crate::util::browser::screenshot(&crate::util::browser::file_url(&page), &png, &scratch)?;
    eprintln!("docs: wrote {SCREENSHOT}");
    Ok(())
}
