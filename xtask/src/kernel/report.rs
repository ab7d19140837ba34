// SPDX-License-Identifier: GPL-2.0
//! What `cargo xtask kernel` found, per tree and per (tree, compiler) cell, as text for a
//! terminal, Markdown, and the JSON documented in docs/kernel.md ([`json`]).

pub(crate) mod json;

use super::build::{why, Built, Real};
use crate::kernel::rules::{Predicted, Prediction};
use crate::util::output::{escape, escape_markdown, Style, Table};
use crate::Verdict;
use json::{BootJson, CellJson, KernelJson, StepJson, BOOT_FAIL, BOOT_NOT_RUN};

/// The cell of one (tree, compiler) pair: the prediction, or why there is none, beside the real
/// build (`cached` when it came from the cache), a finding where they disagree.
pub(crate) fn cell(
    (tree, toolchain): (&str, &str),
    rustc: Option<String>,
    prediction: Result<Prediction, String>,
    (built, cached): (Built, bool),
    boot: Option<BootJson>,
) -> CellJson {
    let predicted = prediction.as_ref().ok();
    let mut cell = CellJson {
        tree: tree.to_owned(),
        toolchain: toolchain.to_owned(),
        rustc,
        minimum_met: predicted.map(|prediction| prediction.minimum_met),
        predicted: predicted.map(|prediction| prediction.predicted.word().to_owned()),
        crates: predicted
            .map(|prediction| prediction.crates.clone())
            .unwrap_or_default(),
        finding: false,
        prediction_error: prediction.err(),
        real: built.real.word().into(),
        reason: built.reason,
        first_error: built.first_error,
        warning: built.warning,
        tools: built.tools,
        enabled: built.enabled,
        objects: built.objects,
        steps: built
            .steps
            .into_iter()
            .map(|(step, seconds)| StepJson { step, seconds })
            .collect(),
        cached,
        boot,
    };
    cell.finding = cell.is_finding();
    cell
}

/// Whether a cell's boot contradicts its prediction: a cell whose build passed is predicted to
/// boot and pass every test.
pub(crate) fn boot_finding(cell: &CellJson) -> bool {
    cell.real == Real::Pass.word() && matches!(&cell.boot, Some(boot) if boot.result == BOOT_FAIL)
}

impl KernelJson {
    /// The report as a run hands it over: `tools` the tools the cells' builds really ran with,
    /// each once, with the trees that used them ("...; bindgen 0.56.0 ... (6.1) | ...; bindgen
    /// 0.71.1 ... (6.12, 7.3)"), else the tools found; `tools_error` why they are missing.
    pub(crate) fn with_tools_used(mut self) -> KernelJson {
        let error = self.tools_error.take();
        let found = self.tools.take().filter(|_| error.is_none());
        let missing = || "the report names no build tools".to_owned();
        self.tools_error = error.or_else(|| found.is_none().then(missing));
        let mut used: Vec<(&str, Vec<&str>)> = Vec::new();
        for cell in &self.cells {
            if let Some(tools) = cell.tools.as_deref() {
                crate::push_once(filed(&mut used, tools), cell.tree.as_str());
            }
        }
        let used: Vec<String> = used
            .iter()
            .map(|(tools, trees)| format!("{tools} ({})", trees.join(", ")))
            .collect();
        self.tools = Some(used.join(" | "))
            .filter(|_| !used.is_empty())
            .or(found);
        self
    }

    /// Exit 1 for a finding, and with `strict` for a cell that could not be built.
    pub(crate) fn verdict(&self, strict: bool) -> Verdict {
        let not_run = self.cells.iter().any(|cell| {
            cell.real == Real::NotRun.word()
                || matches!(&cell.boot, Some(boot) if boot.result == BOOT_NOT_RUN)
        });
        Verdict::failure_if(!self.findings().is_empty() || (strict && not_run))
    }

    /// The cells whose prediction the real build contradicts.
    pub(crate) fn findings(&self) -> Vec<&CellJson> {
        self.cells
            .iter()
            .filter(|cell| cell.is_finding() || boot_finding(cell))
            .collect()
    }

    fn rows(&self) -> Vec<[String; 7]> {
        self.cells
            .iter()
            .map(|cell| {
                let minimum = cell
                    .minimum_met
                    .map_or("?", |met| if met { "yes" } else { "no" });
                let cached = if cell.cached { "(cached) " } else { "" };
                let why = why(&cell.real, &cell.reason, cell.first_error.as_deref());
                let mut why = format!("{cached}{why}");
                let failing: Vec<String> = cell
                    .crates
                    .iter()
                    .filter(|krate| krate.predicted == Predicted::Fail)
                    .map(|krate| format!("{}: {}", krate.root, krate.errors.join("; ")))
                    .collect();
                if !failing.is_empty() {
                    why = format!("{why}; probes fail: {}", failing.join(" | "));
                }
                // A cell not run says why already; the prediction's error is then the same.
                if let (Some(error), false) =
                    (&cell.prediction_error, cell.real == Real::NotRun.word())
                {
                    why = format!("{why}; no prediction: {error}");
                }
                let finding = if cell.is_finding() { " (FINDING)" } else { "" };
                [
                    cell.tree.clone(),
                    cell.toolchain.clone(),
                    cell.rustc.clone().unwrap_or_else(|| "-".into()),
                    minimum.to_owned(),
                    cell.predicted
                        .clone()
                        .unwrap_or_else(|| "no prediction".into()),
                    format!("{}{finding}", cell.real),
                    why,
                ]
            })
            .collect()
    }

    fn tree_lines(&self) -> Vec<String> {
        self.trees
            .iter()
            .map(|tree| match &tree.error {
                Some(error) => format!("{}: {error}", tree.id),
                None => format!(
                    "{}: Linux {}, {}; minimum rustc {}; allowed features: {}",
                    tree.id,
                    tree.version.as_deref().unwrap_or("?"),
                    tree.source.as_deref().unwrap_or("?"),
                    tree.minimum_rustc.as_deref().unwrap_or("?"),
                    tree.allowed_features.join(", ")
                ),
            })
            .collect()
    }

    /// The report for a terminal, laid out for `style`'s width: every line [`escape`]d, for
    /// nearly all of it is the trees' and the compilers' text (a version from a Makefile, a
    /// build's first error).
    pub(crate) fn human_in(&self, style: &Style) -> String {
        let mut lines: Vec<String> = self.tree_lines();
        let tools = self.tools.as_ref().or(self.tools_error.as_ref());
        lines.push(format!("tools: {}", tools.map_or("", String::as_str)));
        lines.push(String::new());
        let headers = ["toolchain", "rustc", "minimum", "predicted", "real", "why"];
        let mut table = Table::new("tree", &headers.map(String::from)).with_free_last_column();
        for [tree, cells @ ..] in self.rows() {
            let cells = cells.into_iter().map(|cell| (cell, false)).collect();
            table.rows.push((tree, cells));
        }
        let mut rendered = String::new();
        table.render_text(&mut rendered, style);
        // Escaped already: escaping again when joined changes nothing.
        lines.extend(rendered.lines().map(String::from));
        lines.push(String::new());
        let about = |cell: &CellJson, what: String| {
            format!("{} with {}: {what}", cell.tree, cell.toolchain)
        };
        for cell in self.cells.iter().filter(|cell| !cell.steps.is_empty()) {
            let steps = cell.steps.iter();
            let steps: Vec<String> = steps
                .map(|step| format!("{} {:.1} s", step.step, step.seconds))
                .collect();
            lines.push(about(cell, steps.join(", ")));
        }
        lines.extend(self.cells.iter().filter_map(|cell| {
            let warning = cell.warning.as_ref()?;
            Some(about(cell, format!("the tree's check warned: {warning}")))
        }));
        lines.extend(self.cells.iter().filter_map(|cell| {
            let boot = cell.boot.as_ref()?;
            let summary = boot_summary(boot);
            Some(about(cell, format!("boot {summary}: {}", boot.reason)))
        }));
        let findings = self.findings();
        let count = |real: Real| {
            self.cells
                .iter()
                .filter(|cell| cell.real == real.word())
                .count()
        };
        lines.push(format!(
            "kernel: {} cells, {} pass, {} fail, {} refused, {} not run; {} findings \
             (prediction contradicted by the real build or the boot); {:.0} s",
            self.cells.len(),
            count(Real::Pass),
            count(Real::Fail),
            count(Real::Refused),
            count(Real::NotRun),
            findings.len(),
            self.seconds
        ));
        for cell in findings {
            if cell.is_finding() {
                lines.push(format!(
                    "finding: {} with {}: predicted {}, really {}: {}",
                    cell.tree,
                    cell.toolchain,
                    cell.predicted.as_deref().unwrap_or("?"),
                    cell.real,
                    cell.first_error.as_deref().unwrap_or(&cell.reason)
                ));
            }
            if let Some(boot) = cell.boot.as_ref().filter(|_| boot_finding(cell)) {
                lines.push(format!(
                    "finding: {} with {}: built, predicted to boot and pass, but the boot \
                     failed: {}",
                    cell.tree, cell.toolchain, boot.reason
                ));
                let failures: Vec<_> = boot.kunit.iter().flat_map(|k| &k.failures).collect();
                for failure in &failures {
                    lines.push(format!("  {}.{} failed:", failure.suite, failure.test));
                    lines.extend(failure.output.lines().map(|line| format!("    {line}")));
                }
                if let (true, Some(tail)) = (failures.is_empty(), &boot.console_tail) {
                    lines.push("  the console's last lines:".into());
                    lines.extend(tail.lines().map(|line| format!("    {line}")));
                }
            }
        }
        lines
            .iter()
            .map(|line| format!("{}\n", escape(line)))
            .collect()
    }

    pub(crate) fn markdown(&self) -> String {
        let escape = |text: &str| escape_markdown(&text.replace('\n', " "));
        let mut text = String::from("## Kernel trees\n\n");
        for line in self.tree_lines() {
            text.push_str(&format!("- {}\n", escape(&line)));
        }
        text.push_str(
            "\n| tree | toolchain | rustc | minimum met | predicted | real | why |\n|---|---|---|---|---|---|---|\n",
        );
        let row = |row: &[String]| {
            let cells: Vec<String> = row.iter().map(|value| escape(value)).collect();
            format!("| {} |\n", cells.join(" | "))
        };
        text.extend(self.rows().iter().map(|cells| row(cells)));
        let booted = self
            .cells
            .iter()
            .filter_map(|cell| Some((cell, cell.boot.as_ref()?)));
        if booted.clone().next().is_some() {
            text.push_str(
                "\n### Booted under QEMU\n\n| tree | toolchain | boot | KUnit passed | failed | skipped | samples' lines seen | why |\n|---|---|---|---|---|---|---|---|\n",
            );
        }
        for (cell, boot) in booted {
            let counts = boot.kunit.as_ref().map_or([None; 3], |kunit| {
                [kunit.passed, kunit.failed, kunit.skipped].map(Some)
            });
            let (checked, seen) = boot.sample_lines();
            let finding = if boot_finding(cell) { " (FINDING)" } else { "" };
            let mut cells = vec![
                cell.tree.clone(),
                cell.toolchain.clone(),
                format!("{}{finding}", boot.result),
            ];
            cells.extend(counts.map(|count| count.map_or("-".into(), |count| count.to_string())));
            cells.extend([format!("{seen} of {checked}"), boot.reason.clone()]);
            text.push_str(&row(&cells));
        }
        text
    }
}

/// The list filed under `key` in `lists`, a new empty one at the end where there is none yet.
pub(crate) fn filed<K: PartialEq, V>(lists: &mut Vec<(K, Vec<V>)>, key: K) -> &mut Vec<V> {
    let at = match lists.iter().position(|(filed, _)| *filed == key) {
        Some(at) => at,
        None => {
            lists.push((key, Vec::new()));
            lists.len() - 1
        }
    };
    &mut lists[at].1
}

/// A boot in a few words: `pass (tcg, 1.0 s, cached) KUnit 390 passed, 0 failed, 1 skipped;
/// samples: 12 of 12 lines seen, not checked (nothing printed at init): rust_soc, ...`.
pub(crate) fn boot_summary(boot: &BootJson) -> String {
    let seconds = boot.seconds.map(|seconds| format!("{seconds:.1} s"));
    let cached = boot.cached.then(|| "cached".to_owned());
    let parts: Vec<String> = [boot.accel.clone(), seconds, cached]
        .into_iter()
        .flatten()
        .collect();
    let mut text = boot.result.clone();
    if !parts.is_empty() {
        text.push_str(&format!(" ({})", parts.join(", ")));
    }
    if let Some(kunit) = &boot.kunit {
        let (checked, seen) = boot.sample_lines();
        let unchecked: Vec<&str> = boot
            .samples
            .iter()
            .filter(|sample| sample.expected.is_none())
            .map(|sample| sample.name.as_str())
            .collect();
        text.push_str(&format!(
            " KUnit {} passed, {} failed, {} skipped; samples: {seen} of {checked} lines seen",
            kunit.passed, kunit.failed, kunit.skipped,
        ));
        if !unchecked.is_empty() {
            text.push_str(&format!(
                ", not checked (nothing printed at init): {}",
                unchecked.join(", ")
            ));
        }
    }
    text
}
