// SPDX-License-Identifier: GPL-2.0
//! What the compilers' answers mean for the audited crate: how each `cfg_attr` condition is
//! decided for a release ([`Decider`]), then what each compiler's answer means
//! ([`summarize`]), what they mean together ([`cross_summary`]) and what `--min-rust` finds
//! ([`lint`]).
//!
//! A condition is decided from the cfgs derived from the compiler (the catalog's, the kernel's
//! Kconfig thresholds, `version(...)`) and the probed target's own cfgs, and nothing else: any
//! other cfg (`docsrs`, `feature = "std"`) stays undecided. Everything is computed from the
//! probes' answers, never from the catalog's own stable-since releases: the audit is about any
//! crate, and the compilers are the authority on their features.

use super::input::{Entry, Input};
use crate::catalog::{all_cfg_names, derived_cfgs, Release, FEATURES};
use crate::features::cfg::{Predicate, Query};
use crate::features::kconfig::KconfigSymbol;
use crate::features::status::Status;
pub use crate::run::crate_root::probing::{Answer, TargetCfgs};
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

/// The first release whose `cfg(version(...))` rustc evaluates (with the unstable
/// `cfg_version`); before it, such a condition is undecided.
const FIRST_WITH_CFG_VERSION: Release = Release::new(1, 45, 0);

/// What a condition's leaves are decided from.
#[derive(Clone, Debug, Default)]
pub struct Decider {
    /// The probed target's cfgs; empty when no compiler printed them.
    pub target: TargetCfgs,
    pub kconfig: Vec<KconfigSymbol>,
    /// Every release at which a decided leaf can change.
    thresholds: BTreeSet<Release>,
}

/// The leaves of a condition that `map` turns into something.
pub fn leaves<'a, T>(condition: &'a Predicate, map: impl Fn(Query<'a>) -> Option<T>) -> Vec<T> {
    let found = RefCell::new(Vec::new());
    // Every leaf is answered as undecided, so that `evaluate` visits every one.
    condition.evaluate(&|query| {
        found.borrow_mut().extend(map(query));
        None
    });
    found.into_inner()
}

impl Decider {
    pub fn new(input: &Input, target: TargetCfgs, kconfig: Vec<KconfigSymbol>) -> Self {
        let mut thresholds: BTreeSet<Release> = FEATURES
            .iter()
            .filter_map(|feature| Some(feature.cfg?.from))
            .chain(kconfig.iter().filter_map(|symbol| symbol.from))
            .collect();
        for condition in input.conditions() {
            thresholds.extend(leaves(condition, |query| match query {
                Query::Version(release) => Some(release),
                _ => None,
            }));
        }
        thresholds.insert(FIRST_WITH_CFG_VERSION);
        Decider {
            target,
            kconfig,
            thresholds,
        }
    }

    fn leaf(&self, query: Query<'_>, release: Release, with_target: bool) -> Option<bool> {
        // A leaf about the target is decided by `--print cfg`, if it was printed.
        let target = |key: &str, value: Option<&str>| {
            let printed = with_target && !self.target.is_empty();
            printed.then(|| {
                self.target
                    .iter()
                    .any(|(k, v)| k == key && v.as_deref() == value)
            })
        };
        // A Kconfig threshold (a `--kconfig` file's, else the built-in table's) wins over the
        // catalog's derivation of the same name.
        let kconfig = |name: &str| self.kconfig.iter().find(|symbol| symbol.cfg == name);
        match query {
            Query::Name(name @ ("unix" | "windows")) => target(name, None),
            Query::KeyValue(key, value) if key.starts_with("target_") || key == "panic" => {
                target(key, Some(value))
            }
            Query::Name(name) if kconfig(name).is_some() => {
                kconfig(name).map(|symbol| symbol.from.is_some_and(|from| release >= from))
            }
            Query::Name(name) if all_cfg_names().any(|known| known == name) => {
                Some(derived_cfgs(release, true).any(|set| set == name))
            }
            // A nightly of 1.97 counts as 1.97, as rustc counts it by default.
            Query::Version(wanted) if release >= FIRST_WITH_CFG_VERSION => Some(release >= wanted),
            _ => None,
        }
    }

    /// Whether a condition holds on a compiler of `release` for the probed target, in
    /// three-valued logic; no condition means active.
    pub fn active_on(&self, condition: Option<&Predicate>, release: Release) -> Option<bool> {
        condition.map_or(Some(true), |condition| {
            condition.evaluate(&|query| self.leaf(query, release, true))
        })
    }

    /// Whether a condition is false on `release` only because of the probed target: a line
    /// meant for another target.
    pub fn for_another_target(&self, condition: Option<&Predicate>, release: Release) -> bool {
        condition.is_some_and(|condition| {
            self.active_on(Some(condition), release) == Some(false)
                && condition.evaluate(&|query| self.leaf(query, release, false)) != Some(false)
        })
    }

    /// `from` and every later release at which a decided leaf changes: between two of them,
    /// every condition stays as it is.
    pub fn releases_from(&self, from: Release) -> Vec<Release> {
        let later = self.thresholds.iter().copied().filter(|&r| r > from);
        std::iter::once(from).chain(later).collect()
    }

    /// A `cfg_attr` branch that no compiler from `from` on can take, for any target (undecided
    /// leaves keep it alive, and so does a target leaf: another target's branch is not dead; no
    /// condition is active everywhere).
    pub fn is_dead_from(&self, condition: Option<&Predicate>, from: Release) -> bool {
        condition.is_some_and(|condition| {
            self.releases_from(from).into_iter().all(|release| {
                condition.evaluate(&|query| self.leaf(query, release, false)) == Some(false)
            })
        })
    }

    /// Whether the conditions `a` and `b` (`None`: unconditional) can hold together on a
    /// compiler of `release` for the probed target: `Some(true)` when both do, `None` when
    /// both do for some values of the cfgs the audit cannot decide (`docsrs`), `Some(false)`
    /// when they never do. Tried on every combination of those cfgs, up to 2^16 of them; past
    /// that, `None`.
    pub fn hold_together(
        &self,
        a: Option<&Predicate>,
        b: Option<&Predicate>,
        release: Release,
    ) -> Option<bool> {
        let both = |lookup: &dyn Fn(Query<'_>) -> Option<bool>| {
            let holds = |condition: Option<&Predicate>| {
                condition.map_or(Some(true), |condition| condition.evaluate(lookup))
            };
            Some(holds(a)? && holds(b)?)
        };
        if let Some(decided) = both(&|query| self.leaf(query, release, true)) {
            return Some(decided);
        }
        let undecided = |query| self.leaf(query, release, true).is_none().then_some(query);
        let conditions = [a, b].into_iter().flatten();
        let free = crate::distinct(conditions.flat_map(|condition| leaves(condition, undecided)));
        let together = free.len() > 16
            || (0u32..1 << free.len()).any(|bits| {
                let assigned = |query: Query<'_>| match free.iter().position(|free| *free == query)
                {
                    Some(index) => Some(bits >> index & 1 == 1),
                    None => self.leaf(query, release, true),
                };
                both(&assigned) == Some(true)
            });
        (!together).then_some(false)
    }

    /// Whether a name enabled on several lines is active: if any line is; undecided if none
    /// is and some line is undecided; and whether it is off only for another target.
    pub fn name_active_on(&self, input: &Input, name: &str, at: Release) -> (Option<bool>, bool) {
        let lines = input.lines_of(name);
        let activities = lines
            .iter()
            .map(|entry| self.active_on(entry.condition.as_ref(), at));
        let rank = |activity: &Option<bool>| activity.map_or(1, |active| 2 * u8::from(active));
        let activity = activities.max_by_key(rank).unwrap_or(Some(false));
        let elsewhere = |entry: &&Entry| self.for_another_target(entry.condition.as_ref(), at);
        let off_elsewhere = activity == Some(false) && lines.iter().any(elsewhere);
        (activity, off_elsewhere)
    }
}

/// A name and the conditions (as written) its lines depend on.
pub type Conditional = (String, Vec<String>);

/// What one compiler's answer means for the crate.
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
    /// Active features that still need `#![feature]`, hence `RUSTC_BOOTSTRAP`.
    pub needs_bootstrap: Vec<String>,
    /// Features under a condition the audit cannot decide that are gated.
    pub undecided_gated: Vec<Conditional>,
    /// Active features it rejects, unknown (E0635) or removed (E0557): build errors on it.
    pub errors: Vec<(String, Status)>,
    /// The same for rejected features.
    pub undecided_errors: Vec<Conditional>,
}

pub fn summarize(input: &Input, decider: &Decider, answer: &Answer) -> ToolchainSummary {
    let mut summary = ToolchainSummary::default();
    // A name enabled on several lines counts once, as active if any of its lines is.
    for name in input.names() {
        let (activity, other_target) = decider.name_active_on(input, name, answer.release);
        let status = answer.status(input, name);
        match activity {
            Some(false) if other_target => summary.other_target.push(name.to_string()),
            Some(false) => summary.inactive += 1,
            Some(true) => summary.active += 1,
            None => {}
        }
        // The conditions of its undecided lines, as written: what its being active depends on.
        let conditional = || {
            let undecided = input.lines_of(name).into_iter().filter_map(|entry| {
                let condition = entry.condition.as_ref()?;
                let active = decider.active_on(Some(condition), answer.release);
                active.is_none().then(|| format!("`{condition}`"))
            });
            // Each once: two lines under one condition make it no more likely.
            (name.to_string(), crate::distinct(undecided))
        };
        match (status, activity) {
            (Some(Status::Stable(_)), Some(true)) => summary.stable += 1,
            (Some(Status::Gated), Some(true)) => summary.needs_bootstrap.push(name.to_string()),
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

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrossSummary {
    /// The first release from which every active feature line is stable (undecided conditions
    /// counted as false): from there on, the crate needs only stable Rust.
    pub stable_from: Option<Release>,
    /// The same, counting undecided conditions as true.
    pub stable_from_if_conditions_hold: Option<Release>,
    /// The undecided conditions that make the two differ, as written.
    pub depends_on: Vec<String>,
    /// The features that keep `stable_from` from existing: the newest compiler probed still
    /// calls them gated and their lines are active there. Nothing is said of later releases: a
    /// compiler not probed may have made them stable.
    pub gated_on_newest: Vec<String>,
    /// The same for lines under undecided conditions.
    pub gated_on_newest_if: Vec<String>,
    /// The newest release probed, which the two lists speak of.
    pub newest: Option<Release>,
    /// Active features the newest compiler rejects (unknown or removed): build errors, not
    /// features that wait for stabilization.
    pub rejected_by_newest: Vec<(String, Status)>,
    /// The lowest probed release from which every probed compiler knows every active feature.
    pub known_from: Option<Release>,
    /// The newest probed compiler that rejects an active feature, and those features.
    pub last_unknowing: Option<(Release, Vec<String>)>,
}

pub fn cross_summary(input: &Input, decider: &Decider, answers: &[Answer]) -> CrossSummary {
    let mut by_release: Vec<&Answer> = answers.iter().collect();
    by_release.sort_by_key(|answer| answer.release);
    let errors = |answer: &&Answer| summarize(input, decider, answer).errors;
    let rejected_by_newest = by_release.last().map(errors).unwrap_or_default();
    let rejected = |name: &str| rejected_by_newest.iter().any(|(known, _)| known == name);
    let since_of = |name: &str| stable_since(input, answers, name);
    // Candidates: every stable-since answer and every release at which a condition can change.
    let mut candidates: BTreeSet<Release> =
        input.names().into_iter().filter_map(since_of).collect();
    // Nothing below the lowest probed release is known, so no answer starts before it.
    let lowest = by_release
        .first()
        .map_or(Release::new(0, 0, 0), |a| a.release);
    candidates.extend(decider.releases_from(lowest));
    candidates.retain(|&candidate| candidate >= lowest);
    // The lines that keep the crate from needing only stable Rust from `from` on, each by the
    // condition that left it undecided (`None` if decided); undecided lines count as active
    // when `assume` says so.
    let blocking = |from: Release, assume: bool| {
        let mut blocking: Vec<Option<&Predicate>> = Vec::new();
        for entry in &input.entries {
            for release in decider.releases_from(from) {
                let activity = decider.active_on(entry.condition.as_ref(), release);
                let stable = since_of(&entry.name).is_some_and(|since| since <= release);
                if activity.unwrap_or(assume) && !stable && !rejected(&entry.name) {
                    blocking.push(entry.condition.as_ref().filter(|_| activity.is_none()));
                }
            }
        }
        blocking
    };
    let first_holding = |assume: bool| {
        candidates
            .iter()
            .copied()
            .find(|&from| blocking(from, assume).is_empty())
    };
    let stable_from = first_holding(false);
    let stable_from_if_conditions_hold = first_holding(true);
    let mut depends_on = Vec::new();
    if stable_from != stable_from_if_conditions_hold {
        let never = Release::new(u32::MAX, 0, 0);
        let conditions = blocking(stable_from.unwrap_or(never), true)
            .into_iter()
            .flatten();
        depends_on = crate::distinct(conditions.map(|condition| format!("`{condition}`")));
    }
    // Judged at the newest release probed: what a later one says, no compiler here knows.
    let newest = by_release.last().map(|answer| answer.release);
    // The names never stable whose lines are active (`Some(true)`) or undecided there, when
    // `stable_from` found no release.
    let gated_on_newest = |activity: Option<bool>, stable_from: Option<Release>| {
        let Some(at) = newest.filter(|_| stable_from.is_none()) else {
            return Vec::new();
        };
        let names = input.names().into_iter();
        let names = names.filter(|name| since_of(name).is_none() && !rejected(name));
        names
            .filter(|name| decider.name_active_on(input, name, at).0 == activity)
            .map(String::from)
            .collect()
    };

    let last_unknowing = by_release.iter().rev().find_map(|answer| {
        let names: Vec<String> = errors(answer).into_iter().map(|(name, _)| name).collect();
        (!names.is_empty()).then_some((answer.release, names))
    });
    // The first release after the last unknowing one (any, if none is: `None` is lowest).
    let last = last_unknowing.as_ref().map(|(release, _)| *release);
    let known_from = by_release
        .iter()
        .map(|answer| answer.release)
        .find(|&release| Some(release) > last);
    CrossSummary {
        gated_on_newest: gated_on_newest(Some(true), stable_from),
        gated_on_newest_if: gated_on_newest(None, stable_from_if_conditions_hold),
        stable_from,
        stable_from_if_conditions_hold,
        depends_on,
        newest,
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
    pub fn is_empty(&self) -> bool {
        self.removable.is_empty() && self.dead.is_empty() && self.errors.is_empty()
    }
}

pub fn lint(input: &Input, decider: &Decider, answers: &[Answer], minimum: Release) -> Lint {
    let mut lint = Lint::default();
    let mut from_minimum: Vec<&Answer> = answers
        .iter()
        .filter(|answer| answer.release >= minimum)
        .collect();
    from_minimum.sort_by_key(|answer| answer.release);
    // Per name, the first entry active on each compiler from the minimum on: a later line
    // active on the same compiler enables it twice.
    let mut first_active: HashMap<&str, Vec<Option<usize>>> = HashMap::new();
    for (index, entry) in input.entries.iter().enumerate() {
        let firsts = first_active
            .entry(entry.name.as_str())
            .or_insert_with(|| vec![None; from_minimum.len()]);
        // On each compiler from the minimum on where the line is active: whether an earlier
        // line enabled the name already, and whether the compiler rejects it.
        let mut twice: Vec<(Release, usize)> = Vec::new();
        let mut rejecting: Vec<String> = Vec::new();
        for (slot, answer) in from_minimum.iter().enumerate() {
            if decider.active_on(entry.condition.as_ref(), answer.release) != Some(true) {
                continue;
            }
            match firsts[slot] {
                Some(first) => twice.push((answer.release, first)),
                None => firsts[slot] = Some(index),
            }
            if let Some(status @ (Status::Unknown | Status::Removed)) =
                answer.status(input, &entry.name)
            {
                rejecting.push(format!("{} on {}", status.word(), answer.release));
            }
        }
        let finding = |reason: String| Finding {
            entry: index,
            reason,
        };
        let releases: Vec<String> = twice.iter().map(|(r, _)| r.to_string()).collect();
        let twice = match twice.first() {
            Some(&(_, first)) => Some(enabled_twice("", &input.entries[first], "", &releases)),
            None => twice_if(input, decider, &from_minimum, index),
        };
        lint.errors.extend(twice.map(finding));
        if let Some(since) = stable_since(input, answers, &entry.name).filter(|&s| s <= minimum) {
            lint.removable.push(finding(format!(
                "stable since {since}, at or before {minimum}"
            )));
        }
        let condition = entry.condition.as_ref();
        if let Some(condition) = condition.filter(|_| decider.is_dead_from(condition, minimum)) {
            lint.dead.push(finding(format!(
                "`{condition}` is false on every compiler from {minimum} on"
            )));
        }
        if !rejecting.is_empty() {
            let reason = format!("{}: a build error there", rejecting.join(", "));
            lint.errors.push(finding(reason));
        }
    }
    lint
}

/// Where line `index` enables a name that an earlier line enables too when cfgs the audit
/// cannot decide hold (`#![cfg_attr(docsrs, feature(x))]` twice): a build error with them set,
/// as docs.rs sets `docsrs`.
fn twice_if(
    input: &Input,
    decider: &Decider,
    compilers: &[&Answer],
    index: usize,
) -> Option<String> {
    let entry = &input.entries[index];
    input.entries[..index]
        .iter()
        .filter(|earlier| earlier.name == entry.name)
        .find_map(|earlier| {
            let (a, b) = (earlier.condition.as_ref(), entry.condition.as_ref());
            let releases: Vec<String> = compilers
                .iter()
                .filter(|answer| decider.hold_together(a, b, answer.release).is_none())
                .map(|answer| answer.release.to_string())
                .collect();
            if releases.is_empty() {
                return None;
            }
            let conditions = [a, b].into_iter().flatten();
            let conditions = crate::distinct(conditions.map(|condition| format!("`{condition}`")));
            let verb = if conditions.len() == 1 {
                "holds"
            } else {
                "hold"
            };
            let when = format!(" when {} {verb}", conditions.join(" and "));
            Some(enabled_twice(&when, earlier, " then", &releases))
        })
}

/// The finding of a line that enables a name `first` enabled already (`when` that holds), a
/// build error (`then`) on `releases`.
fn enabled_twice(when: &str, first: &Entry, then: &str, releases: &[String]) -> String {
    let first_place = match first.location {
        Some((line, column)) => format!("line {line}, column {column}"),
        None => "the list".to_string(),
    };
    format!(
        "enabled twice{when} (first at {first_place}): rustc rejects a feature enabled twice \
         (E0636, or the deny-by-default `duplicate_features` lint), a build error{then} on {}",
        releases.join(", ")
    )
}

#[cfg(test)]
mod tests;
