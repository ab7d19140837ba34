// SPDX-License-Identifier: GPL-2.0
//! How the audit decides a `cfg_attr` condition for a compiler release: the cfgs derived from
//! the compiler (the catalog's, the kernel's Kconfig thresholds, `version(...)`), the probed
//! target's own cfgs, and nothing else: any other cfg (`docsrs`, `feature = "std"`) stays
//! undecided.

use super::input::{Entry, Input};
use crate::catalog::{all_cfg_names, derived_cfgs, Release, FEATURES};
use crate::cfg::{Predicate, Query};
use crate::kconfig::KconfigSymbol;

/// The first release whose `cfg(version(...))` rustc evaluates (with the unstable
/// `cfg_version`); before it, such a condition is undecided.
const FIRST_WITH_CFG_VERSION: Release = Release::new(1, 45, 0);

/// A target's cfgs, as `rustc --print cfg` lists them: `("target_arch", Some("x86_64"))`,
/// `("unix", None)`.
pub type TargetCfgs = Vec<(String, Option<String>)>;

/// What a condition's leaves are decided from.
#[derive(Clone, Debug, Default)]
pub struct Decider {
    /// The probed target's cfgs, as `rustc --print cfg` lists them (`("target_arch",
    /// Some("x86_64"))`, `("unix", None)`); empty when no compiler printed them.
    pub target: TargetCfgs,
    /// The Kconfig thresholds.
    pub kconfig: Vec<KconfigSymbol>,
    /// Every release at which a decided leaf can change, ascending.
    thresholds: Vec<Release>,
}

/// Whether a leaf is about the target: decided by `--print cfg`.
fn is_target_leaf(query: Query<'_>) -> bool {
    match query {
        Query::Name(name) => matches!(name, "unix" | "windows"),
        Query::KeyValue(key, _) => key.starts_with("target_") || key == "panic",
        Query::Version(_) => false,
    }
}

fn version_leaves(predicate: &Predicate, into: &mut Vec<Release>) {
    match predicate {
        Predicate::Version(release) => into.push(*release),
        Predicate::All(items) | Predicate::Any(items) => {
            items.iter().for_each(|item| version_leaves(item, into))
        }
        Predicate::Not(inner) => version_leaves(inner, into),
        _ => {}
    }
}

impl Decider {
    /// A decider for an input's conditions, with the target's cfgs and the Kconfig thresholds.
    pub fn new(input: &Input, target: TargetCfgs, kconfig: Vec<KconfigSymbol>) -> Self {
        let mut thresholds: Vec<Release> = FEATURES
            .iter()
            .filter_map(|feature| Some(feature.cfg?.from))
            .chain(kconfig.iter().filter_map(|symbol| symbol.from))
            .collect();
        for condition in input.entries.iter().filter_map(|e| e.condition.as_ref()) {
            version_leaves(condition, &mut thresholds);
        }
        thresholds.push(FIRST_WITH_CFG_VERSION);
        thresholds.sort();
        thresholds.dedup();
        Decider {
            target,
            kconfig,
            thresholds,
        }
    }

    fn leaf(&self, query: Query<'_>, release: Release, with_target: bool) -> Option<bool> {
        if is_target_leaf(query) {
            if !with_target || self.target.is_empty() {
                return None;
            }
            return Some(self.target.iter().any(|(key, value)| match query {
                Query::Name(name) => key == name && value.is_none(),
                Query::KeyValue(wanted, wanted_value) => {
                    key == wanted && value.as_deref() == Some(wanted_value)
                }
                Query::Version(_) => false,
            }));
        }
        // A Kconfig threshold (a `--kconfig` file's, else the built-in table's) wins over the
        // catalog's derivation of the same name.
        let kconfig = |name: &str| self.kconfig.iter().find(|symbol| symbol.cfg == name);
        match query {
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
        let Some(condition) = condition else {
            return Some(true);
        };
        condition.evaluate(&|query| self.leaf(query, release, true))
    }

    /// Whether a condition is false on `release` only because of the probed target: a line
    /// meant for another target.
    pub fn for_another_target(&self, condition: Option<&Predicate>, release: Release) -> bool {
        let Some(condition) = condition else {
            return false;
        };
        self.active_on(Some(condition), release) == Some(false)
            && condition.evaluate(&|query| self.leaf(query, release, false)) != Some(false)
    }

    /// `from` and every later release at which a decided leaf changes: between two of them,
    /// every condition stays as it is.
    pub fn releases_from(&self, from: Release) -> Vec<Release> {
        let mut releases = vec![from];
        releases.extend(self.thresholds.iter().copied().filter(|&r| r > from));
        releases
    }

    /// A `cfg_attr` branch that no compiler from `from` on can take (undecided leaves keep it
    /// alive).
    pub fn is_dead_from(&self, condition: Option<&Predicate>, from: Release) -> bool {
        condition.is_some()
            && self
                .releases_from(from)
                .into_iter()
                .all(|release| self.active_on(condition, release) == Some(false))
    }

    /// Whether a name enabled on several lines is active: if any line is; undecided if none
    /// is and some line is undecided.
    pub fn name_active_on(&self, lines: &[&Entry], release: Release) -> Option<bool> {
        let activities: Vec<Option<bool>> = lines
            .iter()
            .map(|entry| self.active_on(entry.condition.as_ref(), release))
            .collect();
        if activities.contains(&Some(true)) {
            Some(true)
        } else if activities.contains(&None) {
            None
        } else {
            Some(false)
        }
    }

    /// The conditions of a name's undecided lines on `release`, as written: what its being
    /// active depends on.
    pub fn undecided_conditions(&self, lines: &[&Entry], release: Release) -> Vec<String> {
        lines
            .iter()
            .filter(|entry| self.active_on(entry.condition.as_ref(), release).is_none())
            .filter_map(|entry| entry.condition.as_ref().map(|c| format!("`{c}`")))
            .collect()
    }
}

/// Reads `rustc --print cfg`: one `name` or `key="value"` per line.
pub fn read_print_cfg(text: &str) -> TargetCfgs {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(|line| match line.split_once('=') {
            Some((key, value)) => (key.to_string(), Some(value.trim_matches('"').to_string())),
            None => (line.to_string(), None),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::input::read_feature_list;

    fn release(text: &str) -> Release {
        Release::parse(text).unwrap()
    }

    fn decider() -> Decider {
        let target = read_print_cfg("target_arch=\"x86_64\"\ntarget_os=\"linux\"\nunix\n");
        Decider::new(
            &read_feature_list("a").unwrap(),
            target,
            crate::kconfig::built_in(),
        )
    }

    #[test]
    fn derived_kconfig_version_and_target_leaves_are_decided() {
        let decider = decider();
        let parse = |text: &str| Predicate::parse(text).unwrap();
        let on = |text: &str, at: &str| decider.active_on(Some(&parse(text)), release(at));
        assert_eq!(on("CONFIG_RUSTC_HAS_COERCE_POINTEE", "1.83.0"), Some(false));
        assert_eq!(on("CONFIG_RUSTC_HAS_COERCE_POINTEE", "1.84.0"), Some(true));
        assert_eq!(on("CONFIG_RUSTC_HAS_SPAN_FILE", "1.88.0"), Some(true));
        assert_eq!(on("CONFIG_RUSTC_HAS_SPAN_FILE", "1.87.0"), Some(false));
        assert_eq!(on("CONFIG_NOT_A_COMPILER_CFG", "1.95.0"), None);
        assert_eq!(on("not(version(\"1.79\"))", "1.78.0"), Some(true));
        assert_eq!(on("version(\"1.97\")", "1.97.0"), Some(true));
        assert_eq!(on("version(\"1.79\")", "1.40.0"), None);
        assert_eq!(on("target_arch = \"x86_64\"", "1.63.0"), Some(true));
        assert_eq!(on("all(unix, target_os = \"linux\")", "1.63.0"), Some(true));
        assert_eq!(on("docsrs", "1.95.0"), None);
        assert_eq!(on("true", "1.95.0"), Some(true));
        let arm = parse("target_arch = \"arm\"");
        assert!(decider.for_another_target(Some(&arm), release("1.95.0")));
        let old = parse("not(CONFIG_RUSTC_HAS_COERCE_POINTEE)");
        assert!(!decider.for_another_target(Some(&old), release("1.95.0")));
        assert!(decider.is_dead_from(Some(&old), release("1.84.0")));
        assert!(!decider.is_dead_from(Some(&parse("docsrs")), release("1.84.0")));
    }
}
