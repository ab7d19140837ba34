//! What the compilers' answers mean for the audited crate: per toolchain, and across them.
//!
//! Everything here is computed from the probes' answers and the catalog's derived cfgs, never
//! from the catalog's own stable-since releases: the audit is about any crate, and the
//! compilers are the authority on their features.

use super::input::{Entry, Input};
use crate::catalog::{all_cfg_names, derived_cfgs, Release, FEATURES};
use crate::cfg::{Predicate, Query};
use crate::status::Status;

/// Whether a condition holds on a compiler of `release`, in three-valued logic.
///
/// The cfgs the build derives from the compiler (the kernel's `CONFIG_RUSTC_HAS_COERCE_POINTEE`,
/// the shim's `kshim_*`, with kernel mode on, since the feature lines are what kernel mode
/// enables) are known: set or not. Any other cfg (`feature = "std"`, `target_arch`, a Kconfig
/// symbol) is unknown, and so is `version(...)` (the unstable `cfg_version`) and a predicate
/// that depends on either. No condition means active.
pub fn active_on(condition: Option<&Predicate>, release: Release) -> Option<bool> {
    let Some(condition) = condition else {
        return Some(true);
    };
    let lookup = |query: Query<'_>| -> Option<bool> {
        match query {
            Query::Name(name) if all_cfg_names().any(|known| known == name) => {
                Some(derived_cfgs(release, true).any(|set| set == name))
            }
            _ => None,
        }
    };
    condition.evaluate(&lookup)
}

/// The releases from which the derived cfgs can differ: `from` and each later release at
/// which a derived cfg turns on. Between two of them, every derived cfg stays as it is.
pub fn releases_from(from: Release) -> Vec<Release> {
    let mut releases = vec![from];
    for cfg in FEATURES.iter().filter_map(|feature| feature.cfg) {
        if cfg.from > from && !releases.contains(&cfg.from) {
            releases.push(cfg.from);
        }
    }
    releases.sort();
    releases
}

/// A `cfg_attr` branch that no compiler from `from` on can take: its condition is false at
/// every release from there (unknown cfgs keep it alive).
pub fn is_dead_from(condition: Option<&Predicate>, from: Release) -> bool {
    condition.is_some()
        && releases_from(from)
            .into_iter()
            .all(|release| active_on(condition, release) == Some(false))
}

/// Whether a name enabled on several lines is active: if any line is; unknown if none is
/// and some line's condition is undecided.
pub fn name_active_on(lines: &[&Entry], release: Release) -> Option<bool> {
    let activities: Vec<Option<bool>> = lines
        .iter()
        .map(|entry| active_on(entry.condition.as_ref(), release))
        .collect();
    if activities.contains(&Some(true)) {
        Some(true)
    } else if activities.contains(&None) {
        None
    } else {
        Some(false)
    }
}

/// One compiler's answer for every distinct name, in [`Input::names`] order.
#[derive(Clone, Debug)]
pub struct Answer {
    /// The compiler's release number.
    pub release: Release,
    /// What it said about each name.
    pub statuses: Vec<Status>,
}

impl Answer {
    /// Its status for a name of the input.
    pub fn status(&self, input: &Input, name: &str) -> Option<Status> {
        let index = input.names().iter().position(|known| *known == name)?;
        self.statuses.get(index).copied()
    }
}

/// What one compiler means for the crate.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolchainSummary {
    /// Features whose line is active on it (no condition, or one that holds).
    pub active: usize,
    /// Features switched off by their condition on it.
    pub inactive: usize,
    /// Active features it calls stable.
    pub stable: usize,
    /// Active features that still need `#![feature]`, hence `RUSTC_BOOTSTRAP` on a stable
    /// compiler.
    pub needs_bootstrap: Vec<String>,
    /// Features under a condition the audit cannot decide, that still need `RUSTC_BOOTSTRAP`
    /// if it holds.
    pub undecided_gated: Vec<String>,
    /// Active (or undecided) features it does not know (E0635).
    pub unknown: Vec<String>,
    /// Active (or undecided) features it removed (E0557).
    pub removed: Vec<String>,
}

fn push_once(list: &mut Vec<String>, name: &str) {
    if !list.iter().any(|known| known == name) {
        list.push(name.to_string());
    }
}

/// Sums up one compiler's answer.
pub fn summarize(input: &Input, answer: &Answer) -> ToolchainSummary {
    let mut summary = ToolchainSummary::default();
    // A name enabled on several lines counts once, as active if any of its lines is.
    for name in input.names() {
        let lines: Vec<&Entry> = input
            .entries
            .iter()
            .filter(|entry| entry.name == name)
            .collect();
        let activity = name_active_on(&lines, answer.release);
        let status = answer.status(input, name);
        match activity {
            Some(false) => summary.inactive += 1,
            Some(true) => summary.active += 1,
            None => {}
        }
        if activity == Some(false) {
            continue;
        }
        match status {
            Some(Status::Stable(_)) if activity == Some(true) => summary.stable += 1,
            Some(Status::Gated) if activity == Some(true) => {
                push_once(&mut summary.needs_bootstrap, name)
            }
            Some(Status::Gated) => push_once(&mut summary.undecided_gated, name),
            Some(Status::Unknown) => push_once(&mut summary.unknown, name),
            Some(Status::Removed) => push_once(&mut summary.removed, name),
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrossSummary {
    /// The first release from which every feature line that can still be active is stable:
    /// from there on, the crate needs only stable Rust. `None` if no such release is known.
    pub stable_from: Option<Release>,
    /// The features that keep `stable_from` from existing: no compiler calls them stable and
    /// their lines stay active (or undecided) on newer releases.
    pub never_stable: Vec<String>,
    /// Undecided conditions that `stable_from` assumed might hold.
    pub assumed_active: Vec<String>,
    /// The lowest probed release from which every probed compiler knows every active feature.
    pub known_from: Option<Release>,
    /// The newest probed compiler that does not know an active feature, and those features.
    pub last_unknowing: Option<(Release, Vec<String>)>,
}

/// Computes [`CrossSummary`] from the compilers' answers.
pub fn cross_summary(input: &Input, answers: &[Answer]) -> CrossSummary {
    let since: Vec<(&str, Option<Release>)> = input
        .names()
        .into_iter()
        .map(|name| (name, stable_since(input, answers, name)))
        .collect();
    let since_of = |name: &str| {
        since
            .iter()
            .find(|(known, _)| *known == name)
            .and_then(|(_, since)| *since)
    };
    // Candidates: every stable-since answer and every release at which a derived cfg turns on.
    let mut candidates: Vec<Release> = since.iter().filter_map(|(_, since)| *since).collect();
    candidates.extend(
        FEATURES
            .iter()
            .filter_map(|feature| Some(feature.cfg?.from)),
    );
    candidates.sort();
    candidates.dedup();
    let mut assumed_active = Vec::new();
    let holds_from = |from: Release, assumed: &mut Vec<String>| -> bool {
        input.entries.iter().all(|entry| {
            releases_from(from).into_iter().all(|release| {
                let activity = active_on(entry.condition.as_ref(), release);
                if activity == Some(false) {
                    return true;
                }
                if activity.is_none() {
                    push_once(assumed, &entry.name);
                }
                since_of(&entry.name).is_some_and(|since| since <= release)
            })
        })
    };
    let stable_from = candidates.iter().copied().find(|&from| {
        let mut assumed = Vec::new();
        let holds = holds_from(from, &mut assumed);
        if holds {
            assumed_active = assumed;
        }
        holds
    });
    let never_stable: Vec<String> = if stable_from.is_some() {
        Vec::new()
    } else {
        // Judged from the newest release any compiler or cfg speaks of.
        let newest = candidates
            .iter()
            .copied()
            .chain(answers.iter().map(|answer| answer.release))
            .max();
        let mut names = Vec::new();
        for entry in &input.entries {
            let still_active = newest
                .is_none_or(|newest| active_on(entry.condition.as_ref(), newest) != Some(false));
            if still_active && since_of(&entry.name).is_none() {
                push_once(&mut names, &entry.name);
            }
        }
        names
    };

    let mut by_release: Vec<&Answer> = answers.iter().collect();
    by_release.sort_by_key(|answer| answer.release);
    let unknowing = |answer: &Answer| -> Vec<String> {
        let summary = summarize(input, answer);
        summary.unknown.into_iter().chain(summary.removed).collect()
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
        never_stable,
        assumed_active,
        known_from,
        last_unknowing,
    }
}

/// A finding of `--min-rust`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The entry's index in [`Input::entries`].
    pub entry: usize,
    /// Why it can go.
    pub reason: String,
}

/// The `--min-rust` lint: feature lines stable at or before `minimum` (removable), and
/// `cfg_attr` branches no compiler from `minimum` on can take (dead).
pub fn lint(input: &Input, answers: &[Answer], minimum: Release) -> (Vec<Finding>, Vec<Finding>) {
    let mut removable = Vec::new();
    let mut dead = Vec::new();
    for (index, entry) in input.entries.iter().enumerate() {
        if let Some(since) = stable_since(input, answers, &entry.name).filter(|&s| s <= minimum) {
            removable.push(Finding {
                entry: index,
                reason: format!("stable since {since}, at or before {minimum}"),
            });
        }
        if is_dead_from(entry.condition.as_ref(), minimum) {
            let condition = entry
                .condition
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default();
            dead.push(Finding {
                entry: index,
                reason: format!("`{condition}` is false on every compiler from {minimum} on"),
            });
        }
    }
    (removable, dead)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::attributes::read_features;

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
            .map(|feature| Entry {
                condition: feature.condition(),
                location: Some((feature.line, feature.column)),
                name: feature.name,
            })
            .collect();
        Input {
            path: Some("lib.rs".into()),
            entries,
        }
    }

    /// Fake answers in `Input::names` order: inline_const, lint_reasons, arbitrary_self_types,
    /// derive_coerce_pointee, coerce_unsized.
    fn answer(text: &str, statuses: [Status; 5]) -> Answer {
        Answer {
            release: release(text),
            statuses: statuses.to_vec(),
        }
    }

    fn stable(text: &str) -> Status {
        Status::Stable(release(text))
    }

    #[test]
    fn conditions_follow_the_derived_cfgs_and_unknown_cfgs_stay_unknown() {
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
        assert_eq!(
            releases_from(release("1.82.5")),
            [
                release("1.82.5"),
                release("1.83.0"),
                release("1.84.0"),
                release("1.87.0")
            ]
        );
        let not_pointee = Predicate::Not(Box::new(pointee));
        assert!(is_dead_from(Some(&not_pointee), release("1.84.0")));
        assert!(!is_dead_from(Some(&not_pointee), release("1.83.0")));
        assert!(!is_dead_from(None, release("1.95.0")));
        // A cfg the audit cannot derive keeps a branch alive.
        let guarded = Predicate::All(vec![not_pointee, Predicate::Name("CONFIG_X".into())]);
        assert!(is_dead_from(Some(&guarded), release("1.85.0")));
        let maybe = Predicate::Any(vec![
            Predicate::Not(Box::new(Predicate::Name(
                "CONFIG_RUSTC_HAS_COERCE_POINTEE".into(),
            ))),
            Predicate::Name("CONFIG_X".into()),
        ]);
        assert!(!is_dead_from(Some(&maybe), release("1.85.0")));
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
            summarize(&input, &old),
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
        let summary = summarize(&input, &new);
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
        let cross = cross_summary(&input, &answers);
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
        let cross = cross_summary(&input, &[answers[0].clone(), future]);
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
        let cross = cross_summary(&input, &answers);
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
        let cross = cross_summary(&input, &[answers[1].clone(), broken_new]);
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
        let (removable, dead) = lint(&input, &answers, release("1.80.0"));
        assert_eq!(removable.iter().map(|f| f.entry).collect::<Vec<_>>(), [0]);
        assert!(dead.is_empty(), "{dead:?}");
        let (removable, dead) = lint(&input, &answers, release("1.85.0"));
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
