// SPDX-License-Identifier: GPL-2.0
//! The Kbuild cells: per toolchain, what a driver built as Kbuild builds it gets when it enables
//! an allowed feature itself (`inside_allow_list`) and when it enables one outside the list
//! (`outside_allow_list`), as the codes of the compiler's errors next to the catalog's
//! prediction ([`crate::features::expect::expected_kbuild_error`]).

use super::{id_of, Failure, ToolchainEntry};
use crate::run::plan::KBUILD_FIXTURES;
use crate::util::json::{self, Deserialize, Serialize};
use crate::util::output::Table;

/// One fixture compiled by one toolchain.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KbuildCell {
    #[serde(skip)]
    pub toolchain: usize,
    /// The fixture, `xtask/programs/kbuild/NAME.rs`.
    pub fixture: String,
    /// The error code the catalog predicts; `None` where nothing is built (the toolchain is
    /// too old or broken).
    #[serde(deserialize_with = "json::nullable")]
    pub expected: Option<String>,
    /// The codes of the compiler's errors, each once, in order (empty: it built); `None` when
    /// the compile did not run or said nothing readable.
    #[serde(deserialize_with = "json::nullable")]
    pub observed: Option<Vec<String>>,
    /// The compiler's first error, or why the cell has no codes.
    #[serde(deserialize_with = "json::nullable")]
    pub first_error: Option<String>,
    /// Wall-clock seconds of the run that produced the result.
    #[serde(serialize_with = "super::milliseconds")]
    pub seconds: f64,
    pub cached: bool,
}

impl KbuildCell {
    /// Whether the compiler gave exactly the predicted error, or nothing ran where nothing
    /// was predicted.
    pub fn ok(&self) -> bool {
        match (&self.expected, &self.observed) {
            (Some(expected), Some(codes)) => codes.len() == 1 && codes[0] == *expected,
            (None, None) => true,
            _ => false,
        }
    }

    /// What the compiler gave, as one word for tables and failures.
    pub fn observed_word(&self) -> String {
        match &self.observed {
            None => "not run".into(),
            Some(codes) if codes.is_empty() => "builds".into(),
            Some(codes) => codes.join("+"),
        }
    }
}

/// The cells that differ from their prediction, as failures.
pub fn kbuild_failures(cells: &[KbuildCell], toolchains: &[ToolchainEntry]) -> Vec<Failure> {
    cells
        .iter()
        .filter(|cell| !cell.ok())
        .map(|cell| Failure {
            toolchain: id_of(toolchains, cell.toolchain),
            cell: format!("kbuild {}", cell.fixture),
            expected: cell.expected.clone().unwrap_or_else(|| "not run".into()),
            observed: cell.observed_word(),
            first_error: cell.first_error.clone(),
        })
        .collect()
}

/// Adds a row per fixture to `table`, a cell per toolchain in `shown`: the codes the compiler
/// gave, flagged where they differ from the prediction.
pub fn kbuild_rows(cells: &[KbuildCell], shown: &[usize], table: &mut Table) {
    for fixture in KBUILD_FIXTURES {
        let row = shown
            .iter()
            .map(|&index| {
                let cell = cells
                    .iter()
                    .find(|cell| cell.toolchain == index && cell.fixture == fixture);
                match cell {
                    Some(cell) if cell.expected.is_none() && cell.observed.is_none() => {
                        ("skip".to_string(), false)
                    }
                    Some(cell) => (cell.observed_word(), !cell.ok()),
                    None => ("-".to_string(), false),
                }
            })
            .collect();
        table.rows.push((format!("kbuild {fixture}"), row));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Release;
    use crate::features::expect::{expected_kbuild_error, ToolchainVerdict};
    use anyhow::anyhow;

    fn cell(expected: Option<&str>, observed: Option<&[&str]>) -> KbuildCell {
        KbuildCell {
            toolchain: 0,
            fixture: "inside_allow_list".into(),
            expected: expected.map(String::from),
            observed: observed.map(|codes| codes.iter().map(|code| code.to_string()).collect()),
            first_error: None,
            seconds: 0.25,
            cached: false,
        }
    }

    #[test]
    fn only_exactly_the_predicted_error_is_ok() {
        assert!(cell(Some("E0636"), Some(&["E0636"])).ok());
        assert!(cell(None, None).ok());
        for wrong in [
            cell(Some("E0636"), Some(&["duplicate_features"])),
            cell(Some("E0636"), Some(&[])),
            cell(Some("E0636"), Some(&["E0636", "E0725"])),
            cell(Some("E0636"), None),
            cell(None, Some(&["E0636"])),
        ] {
            assert!(!wrong.ok(), "{wrong:?}");
        }
        assert_eq!(cell(Some("E0636"), Some(&[])).observed_word(), "builds");
        assert_eq!(cell(None, None).observed_word(), "not run");
    }

    #[test]
    fn predictions_follow_the_release() {
        let release = |text| Release::parse(text).unwrap();
        assert_eq!(
            expected_kbuild_error("inside_allow_list", release("1.95.0")),
            Some("E0636")
        );
        assert_eq!(
            expected_kbuild_error("inside_allow_list", release("1.96.0")),
            Some("duplicate_features")
        );
        assert_eq!(
            expected_kbuild_error("outside_allow_list", release("1.78.0")),
            Some("E0725")
        );
        assert_eq!(expected_kbuild_error("other", release("1.78.0")), None);
    }

    #[test]
    fn cells_round_trip_through_json() {
        let toolchains = [ToolchainEntry {
            id: "t".into(),
            spec: "t".into(),
            source: None,
            pin: None,
            rustc: None,
            release_text: None,
            release: None,
            channel: None,
            commit_date: None,
            host: None,
            verdict: ToolchainVerdict::Ok,
        }];
        let cells = vec![
            cell(Some("E0636"), Some(&["E0636"])),
            cell(Some("E0636"), Some(&["duplicate_features"])),
            cell(None, None),
        ];
        let listed = crate::report::listed(&cells, &toolchains, |cell| (cell.toolchain, cell.ok()));
        let text = json::to_pretty(&json::to_value(&listed));
        let index_of = |id: &str, what: &str| {
            (id == "t")
                .then_some(0)
                .ok_or_else(|| anyhow!("{what}: no toolchain {id}"))
        };
        let read = |text: &str| -> anyhow::Result<Vec<KbuildCell>> {
            let mut cells: Vec<KbuildCell> = json::read(text)?;
            let keys: Vec<crate::report::Key> = json::read(text)?;
            crate::report::read_listed(
                &mut cells,
                &keys,
                "kbuild",
                &index_of,
                |cell, toolchain, _| {
                    cell.toolchain = toolchain;
                    Ok(cell.ok())
                },
            )?;
            Ok(cells)
        };
        assert_eq!(read(&text).unwrap(), cells);
        // An `ok` that contradicts the codes is refused.
        let tampered = text.replacen("\"ok\": true", "\"ok\": false", 1);
        assert_eq!(
            read(&tampered).unwrap_err().to_string(),
            "kbuild[0]: `ok` is false, but what was observed and what was expected say true"
        );
    }
}
