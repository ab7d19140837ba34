// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask merge`: the JSON reports of `matrix --shard K/N` joined into one whole run's,
//! printed with the same tables, summaries and exit status, once the shards are shown to fit
//! together exactly.

use crate::features::expect::ToolchainVerdict;
use crate::report::targets::TargetAxis;
use crate::report::Report;
use crate::toolchains::pins::{Pins, Shard};
use crate::util::output::{escape, Format, Output};
use crate::{commands::flags, Verdict};
use anyhow::{anyhow, bail, ensure, Context};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use xshell::Shell;

/// Joins shard reports, each whole and consistent ([`Report::check_complete`]), that together
/// hold every pin exactly once, in the shard the pin file gives it. Time and memory are linear
/// in the size of the reports and the pin file.
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
            .with_context(|| format!("{}: its shard {:?}", path.display(), escape(text)))?;
        report
            .check_complete()
            .with_context(|| format!("{} is not a whole report", path.display()))?;
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
    // The shards given, lowest first (a stable sort keeps the reports' order within one): the
    // lowest shard that is missing or given twice is named, whatever the order of the reports.
    let mut given: Vec<(usize, &Path)> = shards
        .iter()
        .map(|(shard, path, _)| (shard.index, *path))
        .collect();
    given.sort_by_key(|&(index, _)| index);
    let missing =
        |index| anyhow!("shard {index}/{count} is missing: give the reports of all {count} shards");
    for (position, &(index, path)) in given.iter().enumerate() {
        if position > 0 && given[position - 1].0 == index {
            let first = given[position - 1].1.display();
            bail!(
                "shard {index}/{count} is given twice: {first} and {}",
                path.display()
            );
        }
        ensure!(index == position + 1, missing(position + 1));
    }
    ensure!(given.len() == count, missing(given.len() + 1));
    // Overlap first: it names both reports, which says more than "not this shard's pin".
    let mut holder_of_id: HashMap<&str, &Path> = HashMap::new();
    for (_, path, report) in &shards {
        for toolchain in &report.toolchains {
            if let Some(other) = holder_of_id.insert(&toolchain.id, path) {
                bail!(
                    "toolchain {} is in two reports, {} and {}: the shards overlap",
                    escape(&toolchain.id),
                    other.display(),
                    path.display()
                );
            }
        }
    }
    let position_of: HashMap<&str, usize> = pins
        .pins
        .iter()
        .enumerate()
        .map(|(position, pin)| (pin.id.as_str(), position))
        .collect();
    // Where each pin is: (shard position, index there); a toolchain's column in the merged
    // report is its pin's position.
    let mut held = vec![None; pins.pins.len()];
    let mut columns = vec![Vec::new(); shards.len()];
    for (position, (shard, path, report)) in shards.iter().enumerate() {
        for (index, toolchain) in report.toolchains.iter().enumerate() {
            let Some(pin) = toolchain.pin.as_deref() else {
                bail!(
                    "{}: toolchain {} was given with --toolchain, not taken from the pin file; \
                     merge joins shards of the pinned toolchains",
                    path.display(),
                    escape(&toolchain.id)
                );
            };
            let Some(&pin_position) = position_of.get(pin) else {
                bail!(
                    "{} (shard {shard}) has pin {}, which is not in the pin file {} \
                     (give merge the --pins the shards were run with)",
                    path.display(),
                    escape(pin),
                    pins.path.display()
                );
            };
            let found = !matches!(
                toolchain.verdict,
                ToolchainVerdict::Missing(_) | ToolchainVerdict::Broken(_)
            );
            // What `Pin::is_satisfied_by` required of the compiler when the shard ran.
            if let (Some(release), true) = (&toolchain.release_text, found) {
                let wanted = &pins.pins[pin_position].release;
                ensure!(
                    release == wanted,
                    "{} (shard {shard}): toolchain {} reports release {}, but its pin {} wants {}",
                    path.display(),
                    escape(&toolchain.id),
                    escape(release),
                    escape(pin),
                    escape(wanted)
                );
            }
            ensure!(
                shard.owns(pin_position),
                "{} (shard {shard}) has pin {}, which the pin file gives to shard {}/{count}",
                path.display(),
                escape(pin),
                pin_position % count + 1
            );
            held[pin_position] = Some((position, index));
            columns[position].push(pin_position);
        }
        // A pin of this shard can be in no other report: each report holds only its own.
        let missing: Vec<String> = pins
            .pins
            .iter()
            .enumerate()
            .filter(|&(position, _)| shard.owns(position) && held[position].is_none())
            .map(|(_, pin)| escape(&pin.id).into_owned())
            .collect();
        ensure!(
            missing.is_empty(),
            "{} (shard {shard}) lacks the toolchain(s) the pin file gives it: {}; was it run \
             from another pin file?",
            path.display(),
            missing.join(", ")
        );
    }

    let (_, first_path, first) = shards[0];
    let with = |strict: bool| if strict { "with" } else { "without" };
    for (_, path, report) in &shards {
        ensure!(
            report.strict == first.strict,
            "{} was run {} --strict, {} {} it: run every shard with the same --strict",
            path.display(),
            with(report.strict),
            first_path.display(),
            with(first.strict)
        );
    }
    // Every shard ran the same kernel targets, or their cells would not line up.
    for (_, path, report) in &shards {
        ensure!(
            report.targets.triples == first.targets.triples,
            "{} ran the kernel targets [{}], another shard [{}]: run every shard with the same \
             --target",
            path.display(),
            report.targets.triples.join(", "),
            first.targets.triples.join(", ")
        );
    }
    // Pin-file order, as one whole run lists them.
    let mut merged = Report {
        toolchains: Vec::new(),
        features: vec![Vec::new(); crate::catalog::FEATURES.len()],
        builds: Vec::new(),
        strict: strict || first.strict,
        kbuild: Vec::new(),
        shard: None,
        targets: TargetAxis {
            triples: first.targets.triples.clone(),
            llvm: Some(Vec::new()),
            ..TargetAxis::default()
        },
        // As recent as its newest shard; the fixed-width form sorts as text.
        date: shards
            .iter()
            .filter_map(|(_, _, report)| report.date.clone())
            .max(),
    };
    // Every pin is held: each shard was checked to lack none of its own.
    for (position, index) in held.into_iter().flatten() {
        let report = shards[position].2;
        merged.toolchains.push(report.toolchains[index].clone());
        for (cells, shard_cells) in merged.features.iter_mut().zip(&report.features) {
            cells.push(shard_cells[index].clone());
        }
        let sources = report.targets.sources.get(index).cloned().flatten();
        merged.targets.sources.push(sources);
        // Recorded only if every shard recorded it.
        match (&mut merged.targets.llvm, &report.targets.llvm) {
            (Some(merged), Some(llvm)) => merged.push(llvm.get(index).copied().flatten()),
            (merged, _) => *merged = None,
        }
    }
    let join = Join {
        shards: &shards,
        columns,
    };
    merged.builds = join.cells(|report| &report.builds, |cell| &mut cell.toolchain);
    merged.targets.known = join.cells(|report| &report.targets.known, |cell| &mut cell.toolchain);
    merged.targets.cells = join.cells(|report| &report.targets.cells, |cell| &mut cell.toolchain);
    merged.kbuild = join.cells(|report| &report.kbuild, |cell| &mut cell.toolchain);
    merged.check_host()?;
    Ok(merged)
}

/// The shards, and where each of their toolchains is in the merged report.
struct Join<'a> {
    shards: &'a [(Shard, &'a Path, &'a Report)],
    /// Per shard, the merged report's column of each of its toolchains.
    columns: Vec<Vec<usize>>,
}

impl Join<'_> {
    /// Every shard's `cells` with their `toolchain` renumbered to the merged report's, grouped
    /// by it in its order: a stable sort keeps each toolchain's cells in their order.
    fn cells<T: Clone>(
        &self,
        cells: impl Fn(&Report) -> &Vec<T>,
        toolchain: impl Fn(&mut T) -> &mut usize,
    ) -> Vec<T> {
        let mut all = Vec::new();
        for (position, (_, _, report)) in self.shards.iter().enumerate() {
            for cell in cells(report) {
                let mut cell = cell.clone();
                let toolchain = toolchain(&mut cell);
                *toolchain = self.columns[position][*toolchain];
                all.push((*toolchain, cell));
            }
        }
        all.sort_by_key(|(column, _)| *column);
        all.into_iter().map(|(_, cell)| cell).collect()
    }
}

impl flags::Merge {
    pub fn run(&self, _sh: &Shell, output: Output) -> anyhow::Result<Verdict> {
        let format = Format::parse(self.format.as_deref().unwrap_or("human"))?;
        let pins = Pins::load(&self.pins.clone().unwrap_or_else(Pins::default_path))?;
        let reports = self
            .reports
            .iter()
            .map(|path| Ok((path.clone(), Report::read(path)?)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let report = merge(&reports, &pins, self.strict)?;
        Ok(report.print(format, output))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::FEATURES;
    use crate::features::expect::ToolchainVerdict;
    use crate::report::{planned_builds, FeatureCell, Observed, ToolchainEntry};

    fn pins(ids: &[&str]) -> Pins {
        let text: String = ids
            .iter()
            .map(|id| format!("[[pin]]\nid = \"{id}\"\nrelease = \"{id}\"\nrole = \"feature\"\nrustup = \"{id}\"\n\n"))
            .collect();
        Pins::parse(&text, Path::new("pins.toml")).unwrap()
    }

    /// A shard's report: pin 1.78.0 missing, every other pin a toolchain below the minimum
    /// with every build cell skipped, the cells' first errors naming its place in the shard.
    fn shard(text: Option<&str>, ids: &[&str]) -> Report {
        let toolchains: Vec<ToolchainEntry> = ids
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
                verdict: if *id == "1.78.0" {
                    ToolchainVerdict::Missing(format!("rustup toolchain install {id}"))
                } else {
                    ToolchainVerdict::TooOld
                },
            })
            .collect();
        let mut builds = planned_builds(&toolchains);
        for build in &mut builds {
            build.first_error = Some(format!("build {}", build.toolchain));
        }
        Report {
            toolchains,
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
            builds,
            strict: false,
            kbuild: Vec::new(),
            shard: text.map(String::from),
            targets: crate::report::targets::TargetAxis::default(),
            date: None,
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
        let mut second = shard(Some("2/2"), &["1.85.0"]);
        second.date = Some("2026-12-04 03:48 UTC".into());
        let mut first = shard(Some("1/2"), &["1.78.0", "1.95.0"]);
        first.date = Some("2026-12-04 03:08 UTC".into());
        let merged = merge(
            &reports(&[("b.json", second), ("a.json", first)]),
            &pins(&PINS),
            false,
        )
        .unwrap();
        let ids: Vec<&str> = merged.toolchains.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, PINS);
        assert_eq!(merged.shard, None);
        // As recent as its newest shard.
        assert_eq!(merged.date.as_deref(), Some("2026-12-04 03:48 UTC"));
        let mut builds: Vec<(usize, &str)> = merged
            .builds
            .iter()
            .map(|build| (build.toolchain, build.first_error.as_deref().unwrap()))
            .collect();
        builds.dedup();
        assert_eq!(builds, [(1, "build 0"), (2, "build 1")]);
        merged.check_complete().unwrap();
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
        assert_eq!(strict.date, None, "no shard has a date");
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
        let current = format!(
            "{{\"schema\": {}, \"include\": []}}",
            crate::report::SCHEMA_VERSION
        );
        std::fs::write(&other, current).unwrap();
        let error = format!("{:#}", Report::read(&other).unwrap_err());
        assert!(
            error.ends_with(
                "other.json is not a matrix report: missing field `minimum_release` at line 1 column 28"
            ),
            "{error}"
        );
        let error = format!(
            "{:#}",
            Report::read(&directory.join("absent.json")).unwrap_err()
        );
        assert!(error.contains("cannot read the report"), "{error}");
    }
}
