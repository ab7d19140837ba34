// SPDX-License-Identifier: GPL-2.0
//! Whether a report is whole and consistent: every cell the plan calls for, once, on every
//! toolchain, each with the prediction the catalog makes; what `merge` and `docs --report`
//! check before they trust a report that was read from a file.

use super::{cell_kinds, Observed, Report};
use crate::catalog::FEATURES;
use crate::features::expect::{expected_outcome, expected_status, Outcome, ToolchainVerdict};
use crate::features::status::Status;
use crate::run::plan::{cell_label, Kind, Mode};
use crate::util::output::escape;
use anyhow::{bail, ensure};
use std::collections::{BTreeSet, HashSet};

impl Report {
    /// Fails, saying what is wrong, unless the report is whole and consistent.
    ///
    /// Whole: a feature cell per catalog feature and toolchain, and on every toolchain that
    /// was found the same build, run and test cells in both modes for the shim and every
    /// example (the catalog's and any other the report has), each once; a missing toolchain
    /// has none. Consistent: ids and pins name one toolchain each, every build cell expects
    /// what the catalog expects of its toolchain, and a toolchain that builds nothing has only
    /// skipped cells. Time and memory are linear in the size of the report. A cell's toolchain
    /// index is taken as valid: reading and merging give a cell only its report's own.
    pub fn check_complete(&self) -> anyhow::Result<()> {
        ensure!(
            self.features.len() == FEATURES.len(),
            "the report has {} feature rows, the catalog {} features",
            self.features.len(),
            FEATURES.len()
        );
        for (feature, cells) in FEATURES.iter().zip(&self.features) {
            ensure!(
                cells.len() == self.toolchains.len(),
                "feature {} has {} cells for {} toolchains",
                feature.name,
                cells.len(),
                self.toolchains.len()
            );
        }
        self.check_predictions()?;
        self.check_host()?;
        self.targets.check_predictions(&self.toolchains)?;
        let mut ids = HashSet::new();
        let mut pins = HashSet::new();
        for toolchain in &self.toolchains {
            if !ids.insert(toolchain.id.as_str()) {
                bail!("two toolchains have the id `{}`", escape(&toolchain.id));
            }
            if let Some(pin) = &toolchain.pin {
                if !pins.insert(pin.as_str()) {
                    bail!("two toolchains satisfy the pin `{}`", escape(pin));
                }
            }
        }

        let mut targets: BTreeSet<&str> = self
            .recorded()
            .map(|(feature, _)| feature.example)
            .collect();
        targets.insert("kernel");
        let mut cells: Vec<HashSet<(&str, Kind, Mode)>> =
            vec![HashSet::new(); self.toolchains.len()];
        for build in &self.builds {
            let toolchain = &self.toolchains[build.toolchain];
            let cell = || {
                let label = cell_label(build.kind, &build.target, Some(build.mode), None);
                escape(&format!("{label} on {}", toolchain.id)).into_owned()
            };
            ensure!(
                cell_kinds(&build.target).contains(&build.kind),
                "{}: the plan makes no such cell",
                cell()
            );
            let (verdict, expected) = (&toolchain.verdict, expected_outcome(&toolchain.verdict));
            ensure!(
                !matches!(verdict, ToolchainVerdict::Missing(_)),
                "{}: the toolchain is missing, so it has no cells",
                cell()
            );
            ensure!(
                build.expected == expected,
                "{}: it expects `{}`, but the catalog expects `{}` of a toolchain that is {}",
                cell(),
                build.expected.word(),
                expected.word(),
                verdict.word()
            );
            let builds = !matches!(
                verdict,
                ToolchainVerdict::TooOld | ToolchainVerdict::Broken(_)
            );
            ensure!(
                builds || build.outcome == Outcome::Skipped,
                "{}: its outcome is `{}`, but nothing is built on a toolchain that is {}",
                cell(),
                build.outcome.word(),
                verdict.word()
            );
            if !cells[build.toolchain].insert((&build.target, build.kind, build.mode)) {
                bail!("{}: the cell is there twice", cell());
            }
            targets.insert(&build.target);
        }

        let mut kbuild_cells = HashSet::new();
        for cell in &self.kbuild {
            let toolchain = &self.toolchains[cell.toolchain];
            let predicted = toolchain.ok_release().and_then(|release| {
                crate::features::expect::expected_kbuild_error(&cell.fixture, release)
            });
            if cell.expected.as_deref() != predicted
                || !kbuild_cells.insert((cell.toolchain, cell.fixture.as_str()))
            {
                bail!(escape(&format!(
                    "kbuild {} on {}: the cell is there twice, or expects {:?} where the catalog \
                     expects {predicted:?}",
                    cell.fixture, toolchain.id, cell.expected
                ))
                .into_owned());
            }
        }

        for (toolchain, present) in self.toolchains.iter().zip(&cells) {
            if matches!(toolchain.verdict, ToolchainVerdict::Missing(_)) {
                continue;
            }
            let required = || {
                targets.iter().flat_map(|&target| {
                    cell_kinds(target)
                        .iter()
                        .flat_map(move |&kind| Mode::ALL.map(|mode| (target, kind, mode)))
                })
            };
            let lacking: Vec<String> = required()
                .filter(|cell| !present.contains(cell))
                .map(|(target, kind, mode)| cell_label(kind, target, Some(mode), None))
                .collect();
            if !lacking.is_empty() {
                let shown: Vec<&str> = lacking.iter().take(3).map(String::as_str).collect();
                bail!(escape(&format!(
                    "toolchain {} lacks {} of the {} build, run and test cells the plan calls for: {}{}",
                    toolchain.id,
                    lacking.len(),
                    required().count(),
                    shown.join(", "),
                    if lacking.len() > shown.len() { ", ..." } else { "" }
                ))
                .into_owned());
            }
        }
        Ok(())
    }

    /// Fails unless every toolchain's host is a target triple and every toolchain found names
    /// the same one: a run's host cells ran on one machine, and a merge joins shards that ran
    /// on machines of one kind, so a host that differs is not what its compiler said there.
    pub(crate) fn check_host(&self) -> anyhow::Result<()> {
        let mut first: Option<(&str, &str)> = None;
        for toolchain in &self.toolchains {
            let Some(host) = toolchain.host.as_deref() else {
                continue;
            };
            let id = escape(&toolchain.id);
            let part = |part: &str| {
                !part.is_empty()
                    && part.bytes().all(|byte| {
                        byte.is_ascii_lowercase() || byte.is_ascii_digit() || b"_.".contains(&byte)
                    })
            };
            let parts: Vec<&str> = host.split('-').collect();
            ensure!(
                (2..=4).contains(&parts.len()) && parts.iter().all(|&text| part(text)),
                "toolchain {id}: its host `{}` is no target triple",
                escape(host)
            );
            if matches!(toolchain.verdict, ToolchainVerdict::Missing(_)) {
                continue;
            }
            match first {
                None => first = Some((host, &toolchain.id)),
                Some((other, other_id)) if other != host => bail!(
                    "toolchain {id}: its host is {host}, but toolchain {}'s is {other}: the \
                     toolchains of one run, and the shards of one merge, run on one kind of \
                     machine",
                    escape(other_id)
                ),
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Fails unless every prediction the report carries is the one the catalog makes of its
    /// toolchain's release, and no answer is one its compiler cannot have given: a toolchain's
    /// verdict, each feature cell's expected status, a feature stable since a release after
    /// the compiler's own, a commit date that is no date. A report is read from a file that
    /// anyone may have written: what it predicts is recomputed, never believed.
    fn check_predictions(&self) -> anyhow::Result<()> {
        for (index, toolchain) in self.toolchains.iter().enumerate() {
            let id = escape(&toolchain.id).into_owned();
            if let Some(date) = &toolchain.commit_date {
                ensure!(
                    crate::toolchains::version::is_iso_date(date),
                    "toolchain {id}: its commit date `{}` is no date",
                    escape(date)
                );
            }
            let found = !matches!(
                toolchain.verdict,
                ToolchainVerdict::Missing(_) | ToolchainVerdict::Broken(_)
            );
            let release = toolchain.release;
            if let Some(release) = release.filter(|_| found) {
                let predicted = ToolchainVerdict::for_release(release);
                ensure!(
                    toolchain.verdict == predicted,
                    "toolchain {id}: it is `{}`, but the catalog calls a compiler of release \
                     {release} `{}`",
                    toolchain.verdict.word(),
                    predicted.word()
                );
            }
            for (feature, cells) in FEATURES.iter().zip(&self.features) {
                let cell = &cells[index];
                // A compiler that was never run said nothing about any feature.
                ensure!(
                    found || matches!(cell.observed, Observed::NotProbed | Observed::NotRecorded),
                    "feature {} on {id}: it says `{}`, but the toolchain is {}: it was never asked",
                    feature.name,
                    cell.observed.word(),
                    toolchain.verdict.word()
                );
                let Some(release) = release else {
                    continue;
                };
                if let Observed::Status(Status::Stable(since)) = cell.observed {
                    ensure!(
                        since <= release,
                        "feature {} on {id}: stable since {since}, after the compiler's own \
                         release {release}",
                        feature.name
                    );
                }
                let predicted = expected_status(feature, release);
                if found && cell.expected.is_some_and(|expected| expected != predicted) {
                    bail!(
                        "feature {} on {id}: it expects `{}`, but the catalog predicts `{}` \
                         of release {release}",
                        feature.name,
                        cell.expected.map_or("none", |expected| expected.word()),
                        predicted.word()
                    );
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{planned_builds, FeatureCell, Observed, ToolchainEntry};

    /// A whole report: one toolchain that is ok with every cell passing, one missing.
    fn whole() -> Report {
        let ok = ToolchainEntry {
            id: "1.85.0".into(),
            spec: "1.85.0".into(),
            source: None,
            pin: Some("1.85.0".into()),
            rustc: None,
            release_text: Some("1.85.0".into()),
            release: crate::catalog::Release::parse("1.85.0"),
            channel: None,
            commit_date: None,
            host: None,
            verdict: ToolchainVerdict::Ok,
        };
        let missing = ToolchainEntry {
            id: "1.78.0".into(),
            pin: Some("1.78.0".into()),
            verdict: ToolchainVerdict::Missing("rustup toolchain install 1.78.0".into()),
            ..ok.clone()
        };
        let cell = FeatureCell {
            observed: Observed::NotProbed,
            expected: None,
        };
        let toolchains = vec![ok, missing];
        Report {
            builds: planned_builds(&toolchains),
            features: FEATURES
                .iter()
                .map(|_| vec![cell.clone(), cell.clone()])
                .collect(),
            toolchains,
            strict: false,
            kbuild: Vec::new(),
            shard: None,
            targets: crate::report::targets::TargetAxis::default(),
            date: None,
        }
    }

    fn refused(change: impl FnOnce(&mut Report)) -> String {
        let mut report = whole();
        change(&mut report);
        report.check_complete().unwrap_err().to_string()
    }

    #[test]
    fn a_whole_report_passes() {
        whole().check_complete().unwrap();
    }

    #[test]
    fn lacking_duplicated_or_contradictory_cells_are_refused() {
        let cells = whole().builds.len();
        assert_eq!(
            refused(|report| report.builds.clear()),
            format!(
                "toolchain 1.85.0 lacks {cells} of the {cells} build, run and test cells the plan \
                 calls for: build kernel (kernel), build kernel (stable), test kernel (kernel), ..."
            )
        );
        let last = refused(|report| {
            report.builds.pop();
        });
        assert!(
            last.starts_with(&format!("toolchain 1.85.0 lacks 1 of the {cells}")),
            "{last}"
        );
        assert_eq!(
            refused(|report| {
                let copy = report.builds[0].clone();
                report.builds.push(copy);
            }),
            "build kernel (kernel) on 1.85.0: the cell is there twice"
        );
        assert_eq!(
            refused(|report| {
                report.builds[0].outcome = Outcome::Fail;
                report.builds[0].expected = Outcome::Fail;
            }),
            "build kernel (kernel) on 1.85.0: it expects `fail`, but the catalog expects `pass` \
             of a toolchain that is ok"
        );
        assert_eq!(
            refused(|report| report.toolchains[1].id = "1.85.0".into()),
            "two toolchains have the id `1.85.0`"
        );
        assert_eq!(
            refused(|report| report.builds[0].toolchain = 1),
            "build kernel (kernel) on 1.78.0: the toolchain is missing, so it has no cells"
        );
        assert_eq!(
            refused(|report| {
                report.toolchains[0].verdict = ToolchainVerdict::Broken("no".into());
                for build in &mut report.builds {
                    build.expected = Outcome::Skipped;
                }
            }),
            "build kernel (kernel) on 1.85.0: its outcome is `pass`, but nothing is built on a \
             toolchain that is broken"
        );
        let escaped = refused(|report| report.builds[0].target = "a\u{1b}[31m".into());
        assert!(escaped.contains("run a\\e[31m (kernel)"), "{escaped}");
        assert_eq!(
            refused(|report| report.builds[0].kind = Kind::Run),
            "run kernel (kernel) on 1.85.0: the plan makes no such cell"
        );
        assert!(refused(|report| {
            report.features[3].pop();
        })
        .starts_with("feature "));
    }
}
