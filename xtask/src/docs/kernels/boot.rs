// SPDX-License-Identifier: GPL-2.0
//! A cell's boot under QEMU (`cargo xtask kernel --boot`) as `docs/kernels.md` and the page
//! show it: passed (KUnit's counts, the samples' lines seen of those checked), failed (a
//! finding where the build passed), not run (and why), or not recorded: a cell that built in a
//! report with no `boot` for it (one made without `--boot`).

use crate::kernel::report::json::{BootJson, CellJson, BOOT_PASS};
use crate::kernel::report::{boot_finding, boot_summary};
use crate::util::output::escape_markdown;

/// What the pages say of a cell's boot, for each cell that built or has a boot.
#[derive(Clone, Debug, PartialEq)]
pub struct CellBoot {
    pub toolchain: String,
    pub release: String,
    /// `None`: the report has no boot for this cell.
    pub boot: Option<BootJson>,
    /// Built, predicted to boot and pass, and the boot failed.
    pub finding: bool,
}

/// The word of a boot that is not in the report.
pub const NOT_RECORDED: &str = "not recorded";

impl CellBoot {
    /// The boot of `cell` (`release` its compiler's), if the pages show one: a cell whose build
    /// did not pass has none to show unless the report gives one.
    pub fn of(cell: &CellJson, release: &str) -> Option<CellBoot> {
        (cell.real == "pass" || cell.boot.is_some()).then(|| CellBoot {
            toolchain: cell.toolchain.clone(),
            release: release.to_owned(),
            boot: cell.boot.clone(),
            finding: boot_finding(cell),
        })
    }

    /// `pass`, `fail`, `not run` or [`NOT_RECORDED`].
    pub fn word(&self) -> &str {
        self.boot
            .as_ref()
            .map_or(NOT_RECORDED, |boot| boot.result.as_str())
    }

    /// In a few words: `boot pass (KUnit 390/1 skipped)`, `boot fail (KUnit 388/2 failed)`,
    /// `boot not run`, `boot not recorded`.
    pub fn short(&self) -> String {
        let Some(kunit) = self.boot.as_ref().and_then(|boot| boot.kunit.as_ref()) else {
            return format!("boot {}", self.word());
        };
        let mut counts = format!("KUnit {}", kunit.passed);
        for (count, word) in [(kunit.failed, "failed"), (kunit.skipped, "skipped")] {
            if count > 0 {
                counts.push_str(&format!("/{count} {word}"));
            }
        }
        format!("boot {} ({counts})", self.word())
    }

    /// Everything the report says of it in one line: the accelerator, the time, KUnit's counts,
    /// the samples' lines seen, then why (a failure's or a boot not run's reason).
    pub fn long(&self) -> String {
        let Some(boot) = &self.boot else {
            return format!(
                "boot {NOT_RECORDED}: the report has no boot for this cell (made without \
                 --boot)"
            );
        };
        let mut text = format!("boot {}", boot_summary(boot));
        if boot.result != BOOT_PASS {
            text.push_str(&format!(": {}", boot.reason));
        }
        text
    }
}

/// The Markdown line of a tree's boots, `None` when no cell built: each boot recorded in a few
/// words with its samples' lines, why one failed or was not run, each failure as a finding, and
/// the cells with no boot in the report together.
pub fn boot_line(boots: &[CellBoot]) -> Option<String> {
    if boots.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    let mut not_recorded = Vec::new();
    for cell in boots {
        let release = escape_markdown(&cell.release);
        let Some(boot) = &cell.boot else {
            not_recorded.push(release);
            continue;
        };
        let mut part = format!("{release} {}", escape_markdown(&cell.short()));
        // The samples' lines are counted where the boot read a console.
        if boot.kunit.is_some() {
            let (checked, seen) = boot.sample_lines();
            part.push_str(&format!(", samples' lines seen {seen} of {checked}"));
        }
        if boot.result != BOOT_PASS {
            part.push_str(&format!(": {}", escape_markdown(&boot.reason)));
        }
        if cell.finding {
            part = format!("**finding**: {part} (built, so predicted to boot and pass)");
        }
        parts.push(part);
    }
    if !not_recorded.is_empty() {
        parts.push(format!(
            "{NOT_RECORDED} for {} (the report has no boot for these cells that built)",
            not_recorded.join(", ")
        ));
    }
    Some(format!(
        "- Booted under QEMU (`cargo xtask kernel --boot`): {}.",
        parts.join("; ")
    ))
}
