//! `cargo xtask merge`: the JSON reports of `matrix --shard K/N` joined into one whole run's,
//! printed with the same tables, summaries and exit status, once the shards are shown to fit
//! together exactly.

use crate::output::Format;
use crate::pins::{Pins, Shard};
use crate::report::Report;
use crate::{flags, Verdict};
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use xshell::Shell;

/// Joins shard reports, checked against the pins they were run from, into one report.
pub fn merge(reports: &[(PathBuf, Report)], pins: &Pins, strict: bool) -> anyhow::Result<Report> {
    if reports.is_empty() {
        bail!("give the JSON reports of every `cargo xtask matrix --shard K/N` run to merge");
    }
    let mut shards: Vec<(Shard, &Path, &Report)> = Vec::new();
    for (path, report) in reports {
        let Some(text) = &report.shard else {
            bail!(
                "{} is a whole run's report, not a shard's: merge joins the reports of \
                 `cargo xtask matrix --shard K/N --format json`",
                path.display()
            );
        };
        let shard = Shard::parse(text)
            .with_context(|| format!("{}: its shard {text:?}", path.display()))?;
        shards.push((shard, path, report));
    }
    let count = shards[0].0.count;
    if let Some((other, path, _)) = shards.iter().find(|(shard, _, _)| shard.count != count) {
        bail!(
            "the reports are from different splits: {} is shard {}, {} is shard {other}",
            shards[0].1.display(),
            shards[0].0,
            path.display()
        );
    }
    for index in 1..=count {
        let holders: Vec<&Path> = shards
            .iter()
            .filter(|(shard, _, _)| shard.index == index)
            .map(|(_, path, _)| *path)
            .collect();
        match holders.as_slice() {
            [_] => {}
            [] => bail!("shard {index}/{count} is missing: give the reports of all {count} shards"),
            [first, second, ..] => bail!(
                "shard {index}/{count} is given twice: {} and {}",
                first.display(),
                second.display()
            ),
        }
    }
    // Overlap first: it names both reports, which says more than "not this shard's pin".
    for (position, (_, path, report)) in shards.iter().enumerate() {
        for toolchain in &report.toolchains {
            if let Some((_, other, _)) = shards[position + 1..]
                .iter()
                .find(|(_, _, other)| other.toolchains.iter().any(|t| t.id == toolchain.id))
            {
                bail!(
                    "toolchain {} is in two reports, {} and {}: the shards overlap",
                    toolchain.id,
                    path.display(),
                    other.display()
                );
            }
        }
    }
    for (shard, path, report) in &shards {
        let assigned: Vec<&str> = shard
            .pins(&pins.pins)
            .iter()
            .map(|pin| pin.id.as_str())
            .collect();
        for toolchain in &report.toolchains {
            match toolchain.pin.as_deref() {
                None => bail!(
                    "{}: toolchain {} was given with --toolchain, not taken from the pin file; \
                     merge joins shards of the pinned toolchains",
                    path.display(),
                    toolchain.id
                ),
                Some(pin) if !assigned.contains(&pin) => {
                    let owner = pins.pins.iter().position(|candidate| candidate.id == pin);
                    match owner {
                        Some(position) => bail!(
                            "{} (shard {shard}) has pin {pin}, which the pin file gives to shard {}/{count}",
                            path.display(),
                            position % count + 1
                        ),
                        None => bail!(
                            "{} (shard {shard}) has pin {pin}, which is not in the pin file {} \
                             (give merge the --pins the shards were run with)",
                            path.display(),
                            pins.path.display()
                        ),
                    }
                }
                Some(_) => {}
            }
        }
        let missing: Vec<&str> = assigned
            .iter()
            .copied()
            .filter(|pin| {
                !report
                    .toolchains
                    .iter()
                    .any(|t| t.pin.as_deref() == Some(*pin))
            })
            .collect();
        if !missing.is_empty() {
            bail!(
                "{} (shard {shard}) lacks the toolchain(s) the pin file gives it: {}; \
                 was it run from another pin file?",
                path.display(),
                missing.join(", ")
            );
        }
    }

    // Pin-file order, as one whole run lists them.
    let mut merged = Report {
        toolchains: Vec::new(),
        features: vec![Vec::new(); crate::catalog::FEATURES.len()],
        builds: Vec::new(),
        strict: strict || shards.iter().any(|(_, _, report)| report.strict),
        shard: None,
    };
    for pin in &pins.pins {
        let found = shards.iter().find_map(|(_, _, report)| {
            let index = report
                .toolchains
                .iter()
                .position(|t| t.pin.as_deref() == Some(pin.id.as_str()))?;
            Some((report, index))
        });
        let Some((report, index)) = found else {
            // Checked above: every pin is in its shard's report.
            bail!("pin {} is in no report", pin.id);
        };
        let new_index = merged.toolchains.len();
        merged.toolchains.push(report.toolchains[index].clone());
        for (cells, shard_cells) in merged.features.iter_mut().zip(&report.features) {
            cells.push(shard_cells[index].clone());
        }
        merged.builds.extend(
            report
                .builds
                .iter()
                .filter(|build| build.toolchain == index)
                .map(|build| {
                    let mut build = build.clone();
                    build.toolchain = new_index;
                    build
                }),
        );
    }
    Ok(merged)
}

impl flags::Merge {
    /// Runs `cargo xtask merge`.
    pub fn run(&self, _sh: &Shell) -> anyhow::Result<Verdict> {
        let format = Format::parse(self.format.as_deref().unwrap_or("human"))?;
        let pins_path = self.pins.clone().unwrap_or_else(Pins::default_path);
        let pins = Pins::load(&pins_path)?;
        let reports = self
            .reports
            .iter()
            .map(|path| Ok((path.clone(), Report::read(path)?)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let report = merge(&reports, &pins, self.strict)?;
        format.print(
            || report.to_json(),
            || report.markdown(),
            |colour| report.human(colour),
        );
        Ok(report.verdict())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::FEATURES;
    use crate::expect::{Outcome, ToolchainVerdict};
    use crate::plan::{Kind, Mode};
    use crate::report::{BuildCell, FeatureCell, Observed, ToolchainEntry};

    fn pins(ids: &[&str]) -> Pins {
        let text: String = ids
            .iter()
            .map(|id| format!("[[pin]]\nid = \"{id}\"\nrelease = \"{id}\"\nrole = \"feature\"\nrustup = \"{id}\"\n\n"))
            .collect();
        Pins::parse(&text, Path::new("pins.toml")).unwrap()
    }

    /// A shard's report with a missing toolchain per pin id, and one build cell each.
    fn shard(text: Option<&str>, ids: &[&str]) -> Report {
        Report {
            toolchains: ids
                .iter()
                .map(|id| ToolchainEntry {
                    id: id.to_string(),
                    spec: format!("pin:{id}"),
                    source: None,
                    pin: Some(id.to_string()),
                    rustc: None,
                    release_text: Some(id.to_string()),
                    release: None,
                    channel: None,
                    commit_date: None,
                    host: None,
                    verdict: ToolchainVerdict::Missing(format!("rustup toolchain install {id}")),
                })
                .collect(),
            features: FEATURES
                .iter()
                .map(|_| {
                    ids.iter()
                        .map(|_| FeatureCell {
                            observed: Observed::NotProbed,
                            expected: None,
                        })
                        .collect()
                })
                .collect(),
            builds: (0..ids.len())
                .map(|toolchain| BuildCell {
                    toolchain,
                    target: "kernel".into(),
                    mode: Mode::Kernel,
                    kind: Kind::Build,
                    outcome: Outcome::Skipped,
                    expected: Outcome::Skipped,
                    first_error: Some(format!("build {toolchain}")),
                    seconds: 0.0,
                    cached: false,
                    tests: None,
                })
                .collect(),
            strict: false,
            shard: text.map(String::from),
        }
    }

    fn reports(list: &[(&str, Report)]) -> Vec<(PathBuf, Report)> {
        list.iter()
            .map(|(path, report)| (PathBuf::from(path), report.clone()))
            .collect()
    }

    fn error(list: &[(&str, Report)], pin_ids: &[&str]) -> String {
        format!(
            "{:#}",
            merge(&reports(list), &pins(pin_ids), false).unwrap_err()
        )
    }

    const PINS: [&str; 3] = ["1.78.0", "1.85.0", "1.95.0"];

    #[test]
    fn shards_join_in_pin_order_with_their_build_cells() {
        let merged = merge(
            &reports(&[
                ("b.json", shard(Some("2/2"), &["1.85.0"])),
                ("a.json", shard(Some("1/2"), &["1.78.0", "1.95.0"])),
            ]),
            &pins(&PINS),
            false,
        )
        .unwrap();
        let ids: Vec<&str> = merged.toolchains.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, PINS);
        assert_eq!(merged.shard, None);
        let builds: Vec<(usize, &str)> = merged
            .builds
            .iter()
            .map(|build| (build.toolchain, build.first_error.as_deref().unwrap()))
            .collect();
        assert_eq!(builds, [(0, "build 0"), (1, "build 0"), (2, "build 1")]);
        assert_eq!(merged.verdict(), crate::Verdict::Success);
        let strict = merge(
            &reports(&[
                ("a.json", shard(Some("1/2"), &["1.78.0", "1.95.0"])),
                ("b.json", shard(Some("2/2"), &["1.85.0"])),
            ]),
            &pins(&PINS),
            true,
        )
        .unwrap();
        assert_eq!(
            strict.verdict(),
            crate::Verdict::Failure,
            "--strict fails on missing pins"
        );
    }

    #[test]
    fn overlapping_missing_and_mixed_shards_are_refused() {
        let overlap = error(
            &[
                ("a.json", shard(Some("1/2"), &["1.78.0", "1.95.0"])),
                ("b.json", shard(Some("2/2"), &["1.85.0", "1.95.0"])),
            ],
            &PINS,
        );
        assert_eq!(
            overlap,
            "toolchain 1.95.0 is in two reports, a.json and b.json: the shards overlap"
        );
        let missing_shard = error(
            &[("a.json", shard(Some("1/2"), &["1.78.0", "1.95.0"]))],
            &PINS,
        );
        assert_eq!(
            missing_shard,
            "shard 2/2 is missing: give the reports of all 2 shards"
        );
        let twice = error(
            &[
                ("a.json", shard(Some("1/2"), &["1.78.0", "1.95.0"])),
                ("c.json", shard(Some("1/2"), &["1.78.0", "1.95.0"])),
            ],
            &PINS,
        );
        assert_eq!(twice, "shard 1/2 is given twice: a.json and c.json");
        let mixed = error(
            &[
                ("a.json", shard(Some("1/2"), &["1.78.0", "1.95.0"])),
                ("b.json", shard(Some("2/3"), &["1.85.0"])),
            ],
            &PINS,
        );
        assert_eq!(
            mixed,
            "the reports are from different splits: a.json is shard 1/2, b.json is shard 2/3"
        );
        let whole = error(&[("w.json", shard(None, &PINS))], &PINS);
        assert!(
            whole.starts_with("w.json is a whole run's report"),
            "{whole}"
        );
        let lacking = error(
            &[
                ("a.json", shard(Some("1/2"), &["1.78.0"])),
                ("b.json", shard(Some("2/2"), &["1.85.0"])),
            ],
            &PINS,
        );
        assert_eq!(
            lacking,
            "a.json (shard 1/2) lacks the toolchain(s) the pin file gives it: 1.95.0; \
             was it run from another pin file?"
        );
        let misplaced = error(
            &[
                (
                    "a.json",
                    shard(Some("1/2"), &["1.78.0", "1.85.0", "1.95.0"]),
                ),
                ("b.json", shard(Some("2/2"), &[])),
            ],
            &PINS,
        );
        assert_eq!(
            misplaced,
            "a.json (shard 1/2) has pin 1.85.0, which the pin file gives to shard 2/2"
        );
        assert!(error(&[], &PINS).starts_with("give the JSON reports"));
    }

    #[test]
    fn garbage_is_not_a_report() {
        let directory = crate::project_root().join("target/kshim/unit-tests/merge");
        let _ = std::fs::remove_dir_all(&directory);
        std::fs::create_dir_all(&directory).unwrap();
        let garbage = directory.join("garbage.json");
        std::fs::write(&garbage, "matrix: 3 of 4 builds pass\n").unwrap();
        let error = format!("{:#}", Report::read(&garbage).unwrap_err());
        assert!(
            error.ends_with("garbage.json is not a matrix report (written by `cargo xtask matrix --format json`): expected value at line 1 column 1"),
            "{error}"
        );
        let other = directory.join("other.json");
        std::fs::write(&other, "{\"schema\": 1, \"include\": []}").unwrap();
        let error = format!("{:#}", Report::read(&other).unwrap_err());
        assert!(
            error.ends_with("other.json is not a matrix report: the report has no `failures`"),
            "{error}"
        );
        let error = format!(
            "{:#}",
            Report::read(&directory.join("absent.json")).unwrap_err()
        );
        assert!(error.contains("cannot read the report"), "{error}");
    }
}
