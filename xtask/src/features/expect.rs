// SPDX-License-Identifier: GPL-2.0
//! What the catalog predicts for every cell of the matrix from the compiler's release alone,
//! before any compiler runs; where a compiler disagrees, the compiler wins and the difference is
//! a failure.

use crate::catalog::{derived_cfgs, Feature, Release, FEATURES, MINIMUM_RELEASE};
use crate::features::cfg::Predicate;
use crate::features::status::Status;
use crate::util::json::{Deserialize, Serialize};

/// Whether a toolchain can take part in the matrix.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ToolchainVerdict {
    /// Runs and is at least [`MINIMUM_RELEASE`]: probed, built and tested.
    #[default]
    Ok,
    /// Runs but is older than the kernel's minimum: probed for information, builds skipped.
    TooOld,
    /// Cannot be run, or its `rustc -vV` is unreadable; the message says which and what it got.
    Broken(String),
    /// A pinned toolchain that is not installed; the message is the command that installs it.
    Missing(String),
}

impl ToolchainVerdict {
    pub fn for_release(release: Release) -> Self {
        match release >= MINIMUM_RELEASE {
            true => ToolchainVerdict::Ok,
            false => ToolchainVerdict::TooOld,
        }
    }

    /// The verdict as one word, the report's `verdict` value.
    pub fn word(&self) -> &'static str {
        match self {
            ToolchainVerdict::Ok => "ok",
            ToolchainVerdict::TooOld => "too-old",
            ToolchainVerdict::Broken(_) => "broken",
            ToolchainVerdict::Missing(_) => "missing",
        }
    }

    /// Reads [`ToolchainVerdict::word`] back, with `error` as a broken or missing one's message.
    pub fn from_word(word: &str, error: String) -> Option<Self> {
        let verdicts = [
            Self::Ok,
            Self::TooOld,
            Self::Broken(error.clone()),
            Self::Missing(error),
        ];
        verdicts.into_iter().find(|verdict| verdict.word() == word)
    }

    /// The first error of a cell that this verdict kept from running.
    pub fn not_run(&self) -> String {
        format!("not run: the toolchain is {}", self.word())
    }

    /// A sentence for people: what the verdict means, with the message if there is one.
    pub fn describe(&self) -> String {
        match self {
            ToolchainVerdict::Ok => "ok".to_string(),
            ToolchainVerdict::TooOld => format!("below the minimum ({MINIMUM_RELEASE})"),
            ToolchainVerdict::Broken(message) => format!("broken: {message}"),
            ToolchainVerdict::Missing(hint) => format!("missing; install it with: {hint}"),
        }
    }
}

/// How a build or test cell came out (or must come out).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// It built; for tests, every test passed.
    Pass,
    /// rustc failed, a test failed, or the process was killed.
    Fail,
    /// It did not run: the toolchain is too old or broken, or what it needs failed.
    #[default]
    Skipped,
}

impl Outcome {
    /// The outcome as one word, the report's `outcome`/`expected` value.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Skipped => "skipped",
        }
    }
}

/// What the probe must say about `feature` on a compiler of `release`.
pub fn expected_status(feature: &Feature, release: Release) -> Status {
    match feature.stable_since {
        _ if !feature.is_known_on(release) => Status::Unknown,
        Some(since) if feature.is_stable_on(release) => Status::Stable(since),
        _ => Status::Gated,
    }
}

/// What every build and test cell must do on a toolchain with this verdict: pass in both
/// modes from the minimum release on, and not run otherwise.
pub fn expected_outcome(verdict: &ToolchainVerdict) -> Outcome {
    match verdict {
        ToolchainVerdict::Ok => Outcome::Pass,
        _ => Outcome::Skipped,
    }
}

/// The error a crate built as Kbuild builds a driver gets on a compiler of `release`, by the
/// fixture it is (`xtask/programs/kbuild/NAME.rs`): enabling an allowed feature itself is E0636, or
/// from [`DUPLICATE_FEATURES_LINT_SINCE`](crate::catalog::DUPLICATE_FEATURES_LINT_SINCE) the
/// `duplicate_features` lint; enabling one outside the list is E0725.
pub fn expected_kbuild_error(fixture: &str, release: Release) -> Option<&'static str> {
    match fixture {
        "inside_allow_list" if release >= crate::catalog::DUPLICATE_FEATURES_LINT_SINCE => {
            Some("duplicate_features")
        }
        "inside_allow_list" => Some("E0636"),
        "outside_allow_list" => Some("E0725"),
        _ => None,
    }
}

/// The features the shim's `lib.rs` enables in kernel mode on a compiler of `release`: the
/// catalog entries whose gate holds with that compiler's kernel-mode cfgs.
pub fn enabled_in_kernel_mode(release: Release) -> Vec<&'static Feature> {
    let cfgs: Vec<&str> = derived_cfgs(release, true).collect();
    FEATURES
        .iter()
        // The catalog's gates are tested to parse and to ask for cfg names only; a gate that
        // does not counts as enabled so that it shows up rather than vanishes.
        .filter(|feature| {
            Predicate::parse(feature.gate)
                .ok()
                .and_then(|gate| gate.holds_with(&cfgs))
                .unwrap_or(true)
        })
        .collect()
}

/// What the catalog says happens at `release`: features that stabilize or first appear there.
pub fn catalog_facts(release: Release) -> Vec<String> {
    let mut facts = Vec::new();
    if release == MINIMUM_RELEASE {
        facts.push("the kernel's minimum".to_owned());
    }
    for feature in FEATURES {
        if feature.stable_since == Some(release) {
            facts.push(format!("{} stable", feature.name));
        }
        if feature.known_since == Some(release) {
            facts.push(format!("{} first appears", feature.name));
        }
    }
    for cfg in crate::catalog::KCONFIG_CFGS {
        if cfg.from == release {
            facts.push(format!("{} set", cfg.name));
        }
    }
    facts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::feature;

    fn release(text: &str) -> Release {
        Release::parse(text).unwrap()
    }

    #[test]
    fn verdicts_follow_the_minimum() {
        assert_eq!(
            ToolchainVerdict::for_release(release("1.78.0")),
            ToolchainVerdict::Ok
        );
        assert_eq!(
            ToolchainVerdict::for_release(release("1.77.2")),
            ToolchainVerdict::TooOld
        );
        assert_eq!(
            ToolchainVerdict::TooOld.describe(),
            "below the minimum (1.78.0)"
        );
        assert_eq!(expected_outcome(&ToolchainVerdict::Ok), Outcome::Pass);
        assert_eq!(
            expected_outcome(&ToolchainVerdict::TooOld),
            Outcome::Skipped
        );
        assert_eq!(
            expected_outcome(&ToolchainVerdict::Broken("x".into())),
            Outcome::Skipped
        );
    }

    #[test]
    fn statuses_follow_the_catalog() {
        let inline_const = feature("inline_const").unwrap();
        assert_eq!(
            expected_status(inline_const, release("1.78.0")),
            Status::Gated
        );
        assert_eq!(
            expected_status(inline_const, release("1.79.0")),
            Status::Stable(release("1.79.0"))
        );
        assert_eq!(
            expected_status(inline_const, release("1.97.0")),
            Status::Stable(release("1.79.0"))
        );
        let pointee = feature("derive_coerce_pointee").unwrap();
        assert_eq!(expected_status(pointee, release("1.83.0")), Status::Unknown);
        assert_eq!(expected_status(pointee, release("1.84.0")), Status::Gated);
        let asm_goto = feature("asm_goto").unwrap();
        assert_eq!(expected_status(asm_goto, release("1.86.0")), Status::Gated);
        assert_eq!(
            expected_status(asm_goto, release("1.87.0")),
            Status::Stable(release("1.87.0"))
        );
    }

    /// A block under `kshim_has_<feature>` compiles where `lib.rs` enables the feature or the
    /// compiler made it stable, on every release from the minimum on.
    #[test]
    fn has_cfgs_hold_where_the_block_enables_the_feature_or_it_is_stable() {
        for minor in MINIMUM_RELEASE.minor..=100 {
            let release = Release::new(1, minor, 0);
            let enabled = enabled_in_kernel_mode(release);
            for kernel in [false, true] {
                let cfgs: Vec<&str> = derived_cfgs(release, kernel).collect();
                for name in crate::catalog::HAS_CFGS {
                    let feature = crate::catalog::has_cfg_feature(name).unwrap();
                    let by_gate = kernel && enabled.iter().any(|on| on.name == feature.name);
                    assert_eq!(
                        cfgs.contains(name),
                        by_gate || feature.is_stable_on(release),
                        "{name} on {release}, kernel mode {kernel}"
                    );
                }
            }
        }
    }

    #[test]
    fn kernel_mode_swaps_the_coerce_pointee_predecessors() {
        let names = |text: &str| -> Vec<&str> {
            enabled_in_kernel_mode(release(text))
                .iter()
                .map(|feature| feature.name)
                .collect()
        };
        let before = names("1.83.0");
        assert!(before.contains(&"coerce_unsized") && !before.contains(&"derive_coerce_pointee"));
        let after = names("1.85.0");
        assert!(!after.contains(&"unsize") && after.contains(&"derive_coerce_pointee"));
        // Besides the swap, a feature gated on another of the kernel's cfgs is off before it.
        let gated_later = |text: &str| {
            let release = release(text);
            FEATURES
                .iter()
                .filter(|feature| {
                    crate::catalog::KCONFIG_CFGS.iter().any(|cfg| {
                        cfg.name != crate::catalog::HAS_COERCE_POINTEE.name
                            && feature.gate.contains(cfg.name)
                            && !cfg.holds_for(release)
                    })
                })
                .count()
        };
        assert_eq!(before.len(), FEATURES.len() - 1 - gated_later("1.83.0"));
        assert_eq!(after.len(), FEATURES.len() - 3 - gated_later("1.85.0"));
    }
}
