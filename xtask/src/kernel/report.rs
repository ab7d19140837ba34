// SPDX-License-Identifier: GPL-2.0
//! What `cargo xtask kernel` found, per tree and per (tree, compiler) cell, as text for a
//! terminal, Markdown, and the JSON documented in docs/kernel.md.

use super::build::{Built, Real};
use crate::kernel_report::{CellJson, CrateJson, KernelJson, StepJson, TreeJson};
use crate::kernel_tree::{Predicted, Prediction};

/// One (tree, compiler) cell.
#[derive(Clone, Debug)]
pub(crate) struct Cell {
    pub tree: String,
    pub toolchain: String,
    /// The compiler's release, "1.78.0"; `None` when it was not found.
    pub rustc: Option<String>,
    /// The prediction, or why there is none.
    pub prediction: Result<Prediction, String>,
    pub built: Built,
    /// Whether the real result came from the cache.
    pub cached: bool,
}

impl Cell {
    /// Whether the prediction and the real result disagree: a finding.
    pub(crate) fn disagrees(&self) -> bool {
        // The prediction's three words are three of the real result's.
        self.prediction.as_ref().is_ok_and(|prediction| {
            self.built.real != Real::NotRun && self.built.real.word() != prediction.predicted.word()
        })
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Report {
    /// The trees, in pin order.
    pub trees: Vec<TreeJson>,
    /// The cells, tree by tree, compilers in pin order.
    pub cells: Vec<Cell>,
    /// The build tools, or why they are missing.
    pub tools: Result<String, String>,
    /// Wall time of the run.
    pub seconds: f64,
}

impl Report {
    /// The tools the cells' builds really ran with, each once, with the trees that used them
    /// ("...; bindgen 0.56.0 ... (6.1) | ...; bindgen 0.71.1 ... (6.12, 7.3)"); when no build
    /// ran, the tools found, or why they are missing.
    pub(crate) fn tools_used(&self) -> Result<String, String> {
        let mut used: Vec<(&str, Vec<&str>)> = Vec::new();
        for cell in &self.cells {
            let Some(tools) = cell.built.tools.as_deref() else {
                continue;
            };
            match used.iter_mut().find(|(seen, _)| *seen == tools) {
                Some((_, trees)) if trees.contains(&cell.tree.as_str()) => {}
                Some((_, trees)) => trees.push(&cell.tree),
                None => used.push((tools, vec![&cell.tree])),
            }
        }
        if used.is_empty() {
            return self.tools.clone();
        }
        Ok(used
            .iter()
            .map(|(tools, trees)| format!("{tools} ({})", trees.join(", ")))
            .collect::<Vec<_>>()
            .join(" | "))
    }

    /// The cells whose prediction the real build contradicts.
    pub(crate) fn findings(&self) -> Vec<&Cell> {
        self.cells.iter().filter(|cell| cell.disagrees()).collect()
    }

    pub(crate) fn to_json(&self) -> KernelJson {
        let cells = self.cells.iter().map(|cell| {
            let prediction = cell.prediction.as_ref();
            let crates = prediction.map(|prediction| &prediction.crates[..]);
            CellJson {
                tree: cell.tree.clone(),
                toolchain: cell.toolchain.clone(),
                rustc: cell.rustc.clone(),
                minimum_met: prediction.ok().map(|prediction| prediction.minimum_met),
                predicted: (prediction.ok()).map(|prediction| prediction.predicted.word().into()),
                prediction_error: prediction.err().cloned(),
                crates: (crates.unwrap_or_default().iter())
                    .map(CrateJson::from)
                    .collect(),
                real: cell.built.real.word().into(),
                reason: cell.built.reason.clone(),
                first_error: cell.built.first_error.clone(),
                warning: cell.built.warning.clone(),
                tools: cell.built.tools.clone(),
                enabled: cell.built.enabled.clone(),
                objects: cell.built.objects,
                steps: (cell.built.steps.iter())
                    .map(|(step, seconds)| StepJson {
                        step: step.clone(),
                        seconds: *seconds,
                    })
                    .collect(),
                cached: cell.cached,
                finding: cell.disagrees(),
            }
        });
        KernelJson {
            trees: self.trees.clone(),
            cells: cells.collect(),
            tools: self.tools_used().ok(),
            tools_error: self.tools.as_ref().err().cloned(),
            seconds: self.seconds,
        }
    }

    fn rows(&self) -> Vec<[String; 7]> {
        self.cells
            .iter()
            .map(|cell| {
                let (minimum, predicted) = match &cell.prediction {
                    Ok(prediction) => (
                        if prediction.minimum_met { "yes" } else { "no" }.to_owned(),
                        prediction.predicted.word().to_owned(),
                    ),
                    Err(_) => ("?".into(), "no prediction".into()),
                };
                let mut why = cell
                    .built
                    .first_error
                    .clone()
                    .unwrap_or_else(|| cell.built.reason.clone());
                if cell.cached {
                    why = format!("(cached) {why}");
                }
                if let Ok(prediction) = &cell.prediction {
                    let failing: Vec<String> = prediction
                        .crates
                        .iter()
                        .filter(|krate| krate.predicted == Predicted::Fail)
                        .map(|krate| format!("{}: {}", krate.root, krate.errors.join("; ")))
                        .collect();
                    if !failing.is_empty() {
                        why = format!("{why}; probes fail: {}", failing.join(" | "));
                    }
                }
                // A cell not run says why already; the prediction's error is then the same.
                if let (Err(error), false) = (&cell.prediction, cell.built.real == Real::NotRun) {
                    why = format!("{why}; no prediction: {error}");
                }
                [
                    cell.tree.clone(),
                    cell.toolchain.clone(),
                    cell.rustc.clone().unwrap_or_else(|| "-".into()),
                    minimum,
                    predicted,
                    format!(
                        "{}{}",
                        cell.built.real.word(),
                        if cell.disagrees() { " (FINDING)" } else { "" }
                    ),
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

    pub(crate) fn human(&self) -> String {
        let mut text = String::new();
        for line in self.tree_lines() {
            text.push_str(&format!("{line}\n"));
        }
        let tools = self.tools_used().unwrap_or_else(|error| error);
        text.push_str(&format!("tools: {tools}\n"));
        text.push('\n');
        let header = [
            "tree",
            "toolchain",
            "rustc",
            "minimum",
            "predicted",
            "real",
            "why",
        ];
        let rows: Vec<[String; 7]> = std::iter::once(header.map(String::from))
            .chain(self.rows())
            .collect();
        // Every column but the last (`why`) is padded to its widest value.
        let mut widths = [0; 6];
        for row in &rows {
            for (width, value) in widths.iter_mut().zip(row) {
                *width = (*width).max(value.len());
            }
        }
        for row in &rows {
            let mut line: String = (widths.iter().zip(row))
                .map(|(width, value)| format!("{value:<width$}  "))
                .collect();
            line.push_str(&row[6]);
            text.push_str(&format!("{}\n", line.trim_end()));
        }
        for cell in self
            .cells
            .iter()
            .filter(|cell| !cell.built.steps.is_empty())
        {
            let steps: Vec<String> = cell
                .built
                .steps
                .iter()
                .map(|(step, seconds)| format!("{step} {seconds:.1} s"))
                .collect();
            text.push_str(&format!(
                "\n{} with {}: {}",
                cell.tree,
                cell.toolchain,
                steps.join(", ")
            ));
        }
        for cell in &self.cells {
            if let Some(warning) = &cell.built.warning {
                text.push_str(&format!(
                    "\n{} with {}: the tree's check warned: {warning}",
                    cell.tree, cell.toolchain
                ));
            }
        }
        let findings = self.findings();
        text.push_str(&format!(
            "\nkernel: {} cells, {} pass, {} fail, {} refused, {} not run; {} findings \
             (prediction contradicted by the real build); {:.0} s\n",
            self.cells.len(),
            self.count(Real::Pass),
            self.count(Real::Fail),
            self.count(Real::Refused),
            self.count(Real::NotRun),
            findings.len(),
            self.seconds
        ));
        for cell in findings {
            text.push_str(&format!(
                "finding: {} with {}: predicted {}, really {}: {}\n",
                cell.tree,
                cell.toolchain,
                cell.prediction
                    .as_ref()
                    .map_or("?", |prediction| prediction.predicted.word()),
                cell.built.real.word(),
                cell.built
                    .first_error
                    .as_deref()
                    .unwrap_or(&cell.built.reason)
            ));
        }
        text
    }

    fn count(&self, real: Real) -> usize {
        self.cells
            .iter()
            .filter(|cell| cell.built.real == real)
            .count()
    }

    pub(crate) fn markdown(&self) -> String {
        let escape = |text: &str| crate::output::markdown_cell(&text.replace('\n', " "));
        let mut text = String::from("## Kernel trees\n\n");
        for line in self.tree_lines() {
            text.push_str(&format!("- {}\n", escape(&line)));
        }
        text.push_str(
            "\n| tree | toolchain | rustc | minimum met | predicted | real | why |\n|---|---|---|---|---|---|---|\n",
        );
        for row in self.rows() {
            let cells: Vec<String> = row.iter().map(|value| escape(value)).collect();
            text.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        text
    }
}
