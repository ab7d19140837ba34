// SPDX-License-Identifier: GPL-2.0
//! What the compilers' answers mean for the audited crate: per toolchain, and across them.
//!
//! Everything here is computed from the probes' answers and the [`Decider`]'s conditions, never
//! from the catalog's own stable-since releases: the audit is about any crate, and the
//! compilers are the authority on their features.

use super::decide::Decider;
use super::input::{Entry, Input};
use crate::catalog::Release;
use crate::status::Status;
use std::collections::HashMap;

/// One compiler's answer for every distinct name, in [`Input::names`] order.
#[derive(Clone, Debug)]
pub struct Answer {
    /// The compiler's release number.
    pub release: Release,
    /// What it said about each name.
    pub statuses: Vec<Status>,
    /// Names that made a plain probe crate fail (`staged_api`), each with the error; they were
    /// probed alone, and the others without them.
    pub breakers: Vec<(String, String)>,
}

impl Answer {
    /// Its status for a name of the input.
    pub fn status(&self, input: &Input, name: &str) -> Option<Status> {
        let index = input.position(name)?;
        self.statuses.get(index).copied()
    }
}

/// The lines that enable `name`.
pub fn lines_of<'a>(input: &'a Input, name: &str) -> Vec<&'a Entry> {
    input.lines_of(name)
}

/// A name and the conditions (as written) its lines depend on.
pub type Conditional = (String, Vec<String>);

/// What one compiler means for the crate.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolchainSummary {
    /// Features whose line is active on it (no condition, or one that holds).
    pub active: usize,
    /// Features switched off by a condition about the compiler.
    pub inactive: usize,
    /// Features whose lines are for another target than the probed one.
    pub other_target: Vec<String>,
    /// Active features it calls stable.
    pub stable: usize,
    /// Active features that still need `#![feature]`, hence `RUSTC_BOOTSTRAP` on a stable
    /// compiler.
    pub needs_bootstrap: Vec<String>,
    /// Features under a condition the audit cannot decide, that still need `RUSTC_BOOTSTRAP`
    /// if it holds.
    pub undecided_gated: Vec<Conditional>,
    /// Active features it rejects, unknown (E0635) or removed (E0557): build errors on it.
    pub errors: Vec<(String, Status)>,
    /// Features under an undecided condition that it rejects.
    pub undecided_errors: Vec<Conditional>,
}

fn push_once(list: &mut Vec<String>, name: &str) {
    if !list.iter().any(|known| known == name) {
        list.push(name.to_string());
    }
}

/// Sums up one compiler's answer.
pub fn summarize(input: &Input, decider: &Decider, answer: &Answer) -> ToolchainSummary {
    let mut summary = ToolchainSummary::default();
    // A name enabled on several lines counts once, as active if any of its lines is.
    for name in input.names() {
        let lines = lines_of(input, name);
        let activity = decider.name_active_on(&lines, answer.release);
        let status = answer.status(input, name);
        match activity {
            Some(false) => {
                if lines.iter().any(|entry| {
                    decider.for_another_target(entry.condition.as_ref(), answer.release)
                }) {
                    push_once(&mut summary.other_target, name);
                } else {
                    summary.inactive += 1;
                }
                continue;
            }
            Some(true) => summary.active += 1,
            None => {}
        }
        let conditional = || {
            (
                name.to_string(),
                decider.undecided_conditions(&lines, answer.release),
            )
        };
        match (status, activity) {
            (Some(Status::Stable(_)), Some(true)) => summary.stable += 1,
            (Some(Status::Gated), Some(true)) => push_once(&mut summary.needs_bootstrap, name),
            (Some(Status::Gated), None) => summary.undecided_gated.push(conditional()),
            (Some(status @ (Status::Unknown | Status::Removed)), Some(true)) => {
                summary.errors.push((name.to_string(), status))
            }
            (Some(Status::Unknown | Status::Removed), None) => {
                summary.undecided_errors.push(conditional())
            }
            _ => {}
        }
    }
    summary
}

/// The release from which a name is stable, as the compilers say it; the newest compiler's
/// answer wins if they disagree.
pub fn stable_since(input: &Input, answers: &[Answer], name: &str) -> Option<Release> {
    answers
        .iter()
        .filter_map(|answer| Some((answer.release, answer.status(input, name)?.stable_since()?)))
        .max_by_key(|(release, _)| *release)
        .map(|(_, since)| since)
}

/// The compilers' findings across all of them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrossSummary {
    /// The first release from which every feature line that is active is stable, counting
    /// undecided conditions as false: from there on, the crate needs only stable Rust. `None`
    /// if no such release is known.
    pub stable_from: Option<Release>,
    /// The same, counting undecided conditions as true; equal to `stable_from` when they
    /// change nothing.
    pub stable_from_if_conditions_hold: Option<Release>,
    /// The undecided conditions that make the two differ, as written.
    pub depends_on: Vec<String>,
    /// The features that keep `stable_from` from existing: no compiler calls them stable, the
    /// newest does not reject them, and their lines stay active on newer releases.
    pub never_stable: Vec<String>,
    /// The same for lines under undecided conditions, with the conditions.
    pub never_stable_if: Vec<Conditional>,
    /// Active features the newest compiler rejects (unknown or removed): build errors from
    /// there on, not features that wait for stabilization.
    pub rejected_by_newest: Vec<(String, Status)>,
    /// The lowest probed release from which every probed compiler knows every active feature.
    pub known_from: Option<Release>,
    /// The newest probed compiler that rejects an active feature, and those features.
    pub last_unknowing: Option<(Release, Vec<String>)>,
}

/// Computes [`CrossSummary`] from the compilers' answers.
pub fn cross_summary(input: &Input, decider: &Decider, answers: &[Answer]) -> CrossSummary {
    let mut by_release: Vec<&Answer> = answers.iter().collect();
    by_release.sort_by_key(|answer| answer.release);
    let newest = by_release.last().copied();
    let rejected_by_newest: Vec<(String, Status)> = newest
        .map(|answer| summarize(input, decider, answer).errors)
        .unwrap_or_default();
    let rejected = |name: &str| rejected_by_newest.iter().any(|(known, _)| known == name);
    let since_of = |name: &str| stable_since(input, answers, name);
    // Candidates: every stable-since answer and every release at which a condition can change.
    let mut candidates: Vec<Release> = input.names().into_iter().filter_map(since_of).collect();
    // Nothing below the lowest probed release is known, so no answer starts before it.
    let lowest = by_release
        .first()
        .map_or(Release::new(0, 0, 0), |a| a.release);
    candidates.extend(decider.releases_from(lowest));
    candidates.retain(|&candidate| candidate >= lowest);
    candidates.sort();
    candidates.dedup();
    // Whether every line that can be active from `from` on is stable there; undecided lines
    // count as active when `assume` says so, and their conditions are collected.
    let holds_from = |from: Release, assume: bool, depends: &mut Vec<String>| -> bool {
        let mut holds = true;
        for entry in &input.entries {
            for release in decider.releases_from(from) {
                let activity = decider.active_on(entry.condition.as_ref(), release);
                let counted = activity.unwrap_or(assume);
                let stable = since_of(&entry.name).is_some_and(|since| since <= release);
                if counted && !stable && !rejected(&entry.name) {
                    holds = false;
                    if activity.is_none() {
                        if let Some(condition) = &entry.condition {
                            push_once(depends, &format!("`{condition}`"));
                        }
                    }
                }
            }
        }
        holds
    };
    let stable_from = candidates
        .iter()
        .copied()
        .find(|&from| holds_from(from, false, &mut Vec::new()));
    let stable_from_if_conditions_hold = candidates
        .iter()
        .copied()
        .find(|&from| holds_from(from, true, &mut Vec::new()));
    let mut depends_on = Vec::new();
    if stable_from != stable_from_if_conditions_hold {
        holds_from(
            stable_from.unwrap_or(Release::new(u32::MAX, 0, 0)),
            true,
            &mut depends_on,
        );
    }
    // Judged at the newest release any compiler or condition speaks of.
    let newest_release = candidates
        .iter()
        .copied()
        .chain(answers.iter().map(|answer| answer.release))
        .max();
    let mut never_stable = Vec::new();
    let mut never_stable_if: Vec<Conditional> = Vec::new();
    if let Some(at) = newest_release {
        for name in input.names() {
            if since_of(name).is_some() || rejected(name) {
                continue;
            }
            let lines = lines_of(input, name);
            match decider.name_active_on(&lines, at) {
                Some(true) if stable_from.is_none() => push_once(&mut never_stable, name),
                None if stable_from_if_conditions_hold.is_none() => never_stable_if
                    .push((name.to_string(), decider.undecided_conditions(&lines, at))),
                _ => {}
            }
        }
    }

    let unknowing = |answer: &Answer| -> Vec<String> {
        let summary = summarize(input, decider, answer);
        summary.errors.into_iter().map(|(name, _)| name).collect()
    };
    let last_unknowing = by_release
        .iter()
        .rev()
        .map(|answer| (answer.release, unknowing(answer)))
        .find(|(_, names)| !names.is_empty());
    let known_from = match &last_unknowing {
        None => by_release.first().map(|answer| answer.release),
        Some((release, _)) => by_release
            .iter()
            .map(|answer| answer.release)
            .find(|candidate| candidate > release),
    };
    CrossSummary {
        stable_from,
        stable_from_if_conditions_hold,
        depends_on,
        never_stable,
        never_stable_if,
        rejected_by_newest,
        known_from,
        last_unknowing,
    }
}

/// A finding of `--min-rust`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The entry's index in [`Input::entries`].
    pub entry: usize,
    /// Why it can go, or why it breaks the build.
    pub reason: String,
}

/// What `--min-rust` finds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lint {
    /// Feature lines stable at or before the minimum: they can go.
    pub removable: Vec<Finding>,
    /// `cfg_attr` branches that no compiler from the minimum on can take.
    pub dead: Vec<Finding>,
    /// Active lines that a compiler at or above the minimum rejects: build errors there.
    pub errors: Vec<Finding>,
}

impl Lint {
    /// Whether it found nothing.
    pub fn is_empty(&self) -> bool {
        self.removable.is_empty() && self.dead.is_empty() && self.errors.is_empty()
    }
}

/// The `--min-rust` lint.
pub fn lint(input: &Input, decider: &Decider, answers: &[Answer], minimum: Release) -> Lint {
    let mut lint = Lint::default();
    let from_minimum: Vec<&Answer> = answers
        .iter()
        .filter(|answer| answer.release >= minimum)
        .collect();
    // Per name, the first entry active on each compiler from the minimum on: a later line
    // active on the same compiler enables it twice.
    let mut first_active: HashMap<&str, Vec<Option<usize>>> = HashMap::new();
    for (index, entry) in input.entries.iter().enumerate() {
        let firsts = first_active
            .entry(entry.name.as_str())
            .or_insert_with(|| vec![None; from_minimum.len()]);
        let mut twice: Vec<(Release, usize)> = Vec::new();
        for (slot, answer) in from_minimum.iter().enumerate() {
            if decider.active_on(entry.condition.as_ref(), answer.release) == Some(true) {
                match firsts[slot] {
                    Some(first) => twice.push((answer.release, first)),
                    None => firsts[slot] = Some(index),
                }
            }
        }
        twice.sort_by_key(|(release, _)| *release);
        if let Some(&(_, first)) = twice.first() {
            let releases: Vec<String> = twice.iter().map(|(r, _)| r.to_string()).collect();
            let first_place = match input.entries[first].location {
                Some((line, column)) => format!("line {line}, column {column}"),
                None => "the list".to_string(),
            };
            lint.errors.push(Finding {
                entry: index,
                reason: format!(
                    "enabled twice (first at {first_place}): rustc rejects a feature enabled \
                     twice (E0636, or the deny-by-default `duplicate_features` lint), a build \
                     error on {}",
                    releases.join(", ")
                ),
            });
        }
        if let Some(since) = stable_since(input, answers, &entry.name).filter(|&s| s <= minimum) {
            lint.removable.push(Finding {
                entry: index,
                reason: format!("stable since {since}, at or before {minimum}"),
            });
        }
        if decider.is_dead_from(entry.condition.as_ref(), minimum) {
            let condition = entry
                .condition
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default();
            lint.dead.push(Finding {
                entry: index,
                reason: format!("`{condition}` is false on every compiler from {minimum} on"),
            });
        }
        let mut rejecting: Vec<(Release, Status)> = answers
            .iter()
            .filter(|answer| answer.release >= minimum)
            .filter(|answer| {
                decider.active_on(entry.condition.as_ref(), answer.release) == Some(true)
            })
            .filter_map(|answer| {
                let status = answer.status(input, &entry.name)?;
                matches!(status, Status::Unknown | Status::Removed)
                    .then_some((answer.release, status))
            })
            .collect();
        rejecting.sort_by_key(|(release, _)| *release);
        if !rejecting.is_empty() {
            let words: Vec<String> = rejecting
                .iter()
                .map(|(release, status)| format!("{} on {release}", status.word()))
                .collect();
            lint.errors.push(Finding {
                entry: index,
                reason: format!("{}: a build error there", words.join(", ")),
            });
        }
    }
    lint
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attributes::read_features;
    use crate::audit::input::CrateKind;
    use crate::cfg::Predicate;
    use crate::kconfig;

    fn decider(input: &Input) -> Decider {
        Decider::new(input, Vec::new(), kconfig::built_in())
    }

    fn release(text: &str) -> Release {
        Release::parse(text).unwrap()
    }

    /// The seed commit's feature block, as the kernel has it.
    fn kernel_block() -> Input {
        let text = "#![feature(inline_const)]\n\
             #![feature(lint_reasons)]\n\
             #![feature(arbitrary_self_types)]\n\
             #![cfg_attr(CONFIG_RUSTC_HAS_COERCE_POINTEE, feature(derive_coerce_pointee))]\n\
             #![cfg_attr(not(CONFIG_RUSTC_HAS_COERCE_POINTEE), feature(coerce_unsized))]\n";
        let entries = read_features(text)
            .unwrap()
            .into_iter()
            .map(Entry::from)
            .collect();
        Input {
            path: Some("lib.rs".into()),
            entries,
            kind: CrateKind::Library,
            loads_proc_macro: false,
            distinct: Default::default(),
        }
    }

    /// Fake answers in `Input::names` order: inline_const, lint_reasons, arbitrary_self_types,
    /// derive_coerce_pointee, coerce_unsized.
    fn answer(text: &str, statuses: [Status; 5]) -> Answer {
        Answer {
            release: release(text),
            statuses: statuses.to_vec(),
            breakers: Vec::new(),
        }
    }

    fn stable(text: &str) -> Status {
        Status::Stable(release(text))
    }

    #[test]
    fn conditions_follow_the_derived_cfgs_and_unknown_cfgs_stay_unknown() {
        let decider = decider(&kernel_block());
        let active_on = |p: Option<&Predicate>, r| decider.active_on(p, r);
        let pointee = Predicate::Name("CONFIG_RUSTC_HAS_COERCE_POINTEE".into());
        assert_eq!(active_on(Some(&pointee), release("1.83.0")), Some(false));
        assert_eq!(active_on(Some(&pointee), release("1.84.0")), Some(true));
        assert_eq!(active_on(None, release("1.63.0")), Some(true));
        let kernel = Predicate::Name("kshim_kernel_mode".into());
        assert_eq!(active_on(Some(&kernel), release("1.78.0")), Some(true));
        let std = Predicate::KeyValue("feature".into(), "std".into());
        assert_eq!(active_on(Some(&std), release("1.95.0")), None);
        let either = Predicate::Any(vec![std.clone(), pointee.clone()]);
        assert_eq!(active_on(Some(&either), release("1.85.0")), Some(true));
        assert_eq!(active_on(Some(&either), release("1.80.0")), None);
        assert!(decider.releases_from(release("1.82.5")).starts_with(&[
            release("1.82.5"),
            release("1.83.0"),
            release("1.84.0")
        ]));
        let not_pointee = Predicate::Not(Box::new(pointee));
        assert!(decider.is_dead_from(Some(&not_pointee), release("1.84.0")));
        assert!(!decider.is_dead_from(Some(&not_pointee), release("1.83.0")));
        assert!(!decider.is_dead_from(None, release("1.95.0")));
        // A cfg the audit cannot derive keeps a branch alive.
        let guarded = Predicate::All(vec![not_pointee, Predicate::Name("CONFIG_X".into())]);
        assert!(decider.is_dead_from(Some(&guarded), release("1.85.0")));
        let maybe = Predicate::Any(vec![
            Predicate::Not(Box::new(Predicate::Name(
                "CONFIG_RUSTC_HAS_COERCE_POINTEE".into(),
            ))),
            Predicate::Name("CONFIG_X".into()),
        ]);
        assert!(!decider.is_dead_from(Some(&maybe), release("1.85.0")));
    }

    #[test]
    fn per_toolchain_summaries_count_what_still_needs_bootstrap() {
        let input = kernel_block();
        let old = answer(
            "1.78.0",
            [
                Status::Gated,
                Status::Gated,
                Status::Gated,
                Status::Unknown,
                Status::Gated,
            ],
        );
        assert_eq!(
            summarize(&input, &decider(&input), &old),
            ToolchainSummary {
                active: 4,
                inactive: 1,
                stable: 0,
                needs_bootstrap: vec![
                    "inline_const".into(),
                    "lint_reasons".into(),
                    "arbitrary_self_types".into(),
                    "coerce_unsized".into()
                ],
                ..ToolchainSummary::default()
            },
            "derive_coerce_pointee is unknown to 1.78 but switched off there"
        );
        let new = answer(
            "1.85.0",
            [
                stable("1.79.0"),
                stable("1.81.0"),
                Status::Gated,
                Status::Gated,
                Status::Gated,
            ],
        );
        let summary = summarize(&input, &decider(&input), &new);
        assert_eq!(
            (summary.active, summary.inactive, summary.stable),
            (4, 1, 2)
        );
        assert_eq!(
            summary.needs_bootstrap,
            ["arbitrary_self_types", "derive_coerce_pointee"]
        );
    }

    #[test]
    fn stable_from_needs_every_line_that_can_be_active_to_be_stable() {
        let input = kernel_block();
        let answers = [
            answer(
                "1.85.0",
                [
                    stable("1.79.0"),
                    stable("1.81.0"),
                    Status::Gated,
                    Status::Gated,
                    Status::Gated,
                ],
            ),
            answer(
                "1.95.0",
                [
                    stable("1.79.0"),
                    stable("1.81.0"),
                    Status::Gated,
                    Status::Gated,
                    Status::Gated,
                ],
            ),
        ];
        let cross = cross_summary(&input, &decider(&input), &answers);
        assert_eq!(cross.stable_from, None);
        assert_eq!(
            cross.never_stable,
            ["arbitrary_self_types", "derive_coerce_pointee"],
            "coerce_unsized is switched off on every newer compiler, so it does not count"
        );
        assert_eq!(cross.known_from, Some(release("1.85.0")));

        // A future compiler that stabilizes both: the crate needs only stable Rust from there,
        // and coerce_unsized (off from 1.84) never has to be stable.
        let future = answer(
            "1.99.0",
            [
                stable("1.79.0"),
                stable("1.81.0"),
                stable("1.98.0"),
                stable("1.99.0"),
                Status::Gated,
            ],
        );
        let cross = cross_summary(&input, &decider(&input), &[answers[0].clone(), future]);
        assert_eq!(cross.stable_from, Some(release("1.99.0")));
        assert!(cross.never_stable.is_empty());
    }

    #[test]
    fn known_from_is_the_lowest_release_above_the_last_that_lacks_an_active_feature() {
        let input = kernel_block();
        let answers = [
            answer(
                "1.63.0",
                [
                    Status::Gated,
                    Status::Unknown,
                    Status::Gated,
                    Status::Unknown,
                    Status::Gated,
                ],
            ),
            answer(
                "1.85.0",
                [
                    stable("1.79.0"),
                    stable("1.81.0"),
                    Status::Gated,
                    Status::Gated,
                    Status::Gated,
                ],
            ),
        ];
        let cross = cross_summary(&input, &decider(&input), &answers);
        assert_eq!(cross.known_from, Some(release("1.85.0")));
        assert_eq!(
            cross.last_unknowing,
            Some((release("1.63.0"), vec!["lint_reasons".to_string()])),
            "derive_coerce_pointee is off on 1.63, so only lint_reasons counts"
        );
        let broken_new = answer(
            "1.95.0",
            [
                stable("1.79.0"),
                Status::Removed,
                Status::Gated,
                Status::Gated,
                Status::Gated,
            ],
        );
        let cross = cross_summary(&input, &decider(&input), &[answers[1].clone(), broken_new]);
        assert_eq!(cross.known_from, None);
    }

    #[test]
    fn min_rust_finds_removable_lines_and_dead_branches() {
        let input = kernel_block();
        let answers = [answer(
            "1.95.0",
            [
                stable("1.79.0"),
                stable("1.81.0"),
                Status::Gated,
                Status::Gated,
                Status::Gated,
            ],
        )];
        let Lint {
            removable, dead, ..
        } = lint(&input, &decider(&input), &answers, release("1.80.0"));
        assert_eq!(removable.iter().map(|f| f.entry).collect::<Vec<_>>(), [0]);
        assert!(dead.is_empty(), "{dead:?}");
        let Lint {
            removable, dead, ..
        } = lint(&input, &decider(&input), &answers, release("1.85.0"));
        assert_eq!(
            removable.iter().map(|f| f.entry).collect::<Vec<_>>(),
            [0, 1]
        );
        assert_eq!(dead.iter().map(|f| f.entry).collect::<Vec<_>>(), [4]);
        assert_eq!(
            dead[0].reason,
            "`not(CONFIG_RUSTC_HAS_COERCE_POINTEE)` is false on every compiler from 1.85.0 on"
        );
        assert_eq!(
            removable[1].reason,
            "stable since 1.81.0, at or before 1.85.0"
        );
    }
}
