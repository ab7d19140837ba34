// SPDX-License-Identifier: GPL-2.0
//! The catalog's other list: the features the pinned kernel trees enable that the shim does
//! not teach, each with its reason, and the check that the two lists agree.
//!
//! A part of [`crate::catalog`], compiled wherever it is (the shim, its build script, the
//! xtask), so `core` only as well.

use super::Feature;

/// A feature that a pinned kernel tree enables but the shim does not teach, and why.
///
/// The xtask's coverage test (`xtask/src/tests/kernel_coverage.rs`) reads every pinned tree's
/// crate roots and allowed list, from the committed kernel report and from the trees where they
/// are unpacked, and fails on a feature enabled under the cfgs Kbuild passes that is neither in
/// [`FEATURES`](super::FEATURES) nor covered here.
#[derive(Clone, Copy, Debug)]
pub struct Exclusion {
    /// The feature's name, or `None` for every feature that [`Exclusion::crate_root`] enables.
    pub feature: Option<&'static str>,
    /// The crate root whose attributes enable it, from the tree's top: `rust/macros/lib.rs`.
    pub crate_root: &'static str,
    /// Why the shim does not teach it.
    pub reason: &'static str,
}

impl Exclusion {
    /// Whether this entry excludes `feature` as the crate at `crate_root` enables it.
    pub fn covers(&self, feature: &str, crate_root: &str) -> bool {
        // `Option::is_none_or` is too new for the shim's 1.78.0 minimum.
        let named = match self.feature {
            Some(name) => name == feature,
            None => true,
        };
        self.crate_root == crate_root && named
    }
}

/// The features the pinned trees enable that the shim does not teach, each with its reason.
pub const EXCLUDED: &[Exclusion] = &[
    Exclusion {
        feature: None,
        crate_root: "rust/alloc/lib.rs",
        reason: "6.1 vendors the standard library's own `alloc` (dropped in 6.10); its 80-odd \
                 features are that library's implementation, which a driver never enables",
    },
    Exclusion {
        feature: Some("compiler_builtins"),
        crate_root: "rust/compiler_builtins.rs",
        reason: "marks the kernel's stub as the compiler's builtins crate: internal to the \
                 compiler (1.78.0 says \"internal to the compiler or standard library\"), not a \
                 language or library feature",
    },
    Exclusion {
        feature: Some("extract_if"),
        crate_root: "rust/macros/lib.rs",
        reason: "the host-side proc-macro crate (7.2 on): `#[kunit_tests]` takes each \
                 function's `#[test]` off with `Vec::extract_if` (stable since 1.87.0, issue \
                 #43244). A library feature of `alloc`, which the core-only shim cannot name \
                 (E0635 in a `no_std` crate, 1.98.1 too), and drivers may not enable it, so no \
                 example could show the gated form; `retain` with the lengths compared is the \
                 free replacement",
    },
    Exclusion {
        feature: Some("proc_macro_span"),
        crate_root: "rust/macros/lib.rs",
        reason: "the host-side proc-macro crate (7.2 on) enables it below 1.88.0 \
                 (`not(CONFIG_RUSTC_HAS_SPAN_FILE)`) for `Span::call_site().source_file()`, the \
                 file its KUnit macros name; 1.88.0 made `Span::file()` stable. Not stable (issue \
                 #54725), and a feature of `proc_macro`, which only a proc-macro crate loads: \
                 neither the shim nor an example built as a driver has one",
    },
    Exclusion {
        feature: Some("allocator_api"),
        crate_root: "rust/pin-init/src/lib.rs",
        reason: "only under `feature = \"alloc\"`, which Kbuild does not pass (pin-init's `Box` \
                 support for its users outside the kernel)",
    },
    Exclusion {
        feature: Some("unsafe_pinned"),
        crate_root: "rust/pin-init/src/lib.rs",
        reason: "only under `feature = \"unsafe-pinned\"`, which Kbuild does not pass",
    },
    Exclusion {
        feature: Some("rustdoc_internals"),
        crate_root: "rust/pin-init/src/lib.rs",
        reason: "only under `doc`, for `rustdoc` runs",
    },
    Exclusion {
        feature: None,
        crate_root: "rust/proc-macro2/lib.rs",
        reason: "vendored from crates.io (7.2 on); `proc_macro_span`, `proc_macro_def_site` and \
                 `doc_cfg` only under its build-script probes' cfgs and `docsrs`, which Kbuild \
                 does not pass",
    },
    Exclusion {
        feature: None,
        crate_root: "rust/syn/lib.rs",
        reason: "vendored from crates.io (7.2 on); `doc_cfg` only under `docsrs`",
    },
    Exclusion {
        feature: None,
        crate_root: "rust/zerocopy/src/lib.rs",
        reason: "vendored from crates.io (7.2 on); its features only under its nightly cargo \
                 features, `doc_cfg`, `miri` and its own test cfgs, none of which Kbuild passes",
    },
];

/// A mistake in [`FEATURES`](super::FEATURES) or [`EXCLUDED`] that [`check_lists`] finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListError {
    /// A feature in `FEATURES` twice.
    FeatureTwice(&'static str),
    /// Two exclusions of the same feature (`*` for a whole crate) in the same crate root.
    ExcludedTwice(&'static str, &'static str),
    /// An exclusion whose reason is empty.
    NoReason(&'static str, &'static str),
    /// A catalog feature that an exclusion names too.
    InCatalogAndExcluded(&'static str, &'static str),
}

impl core::fmt::Display for ListError {
    fn fmt(&self, formatter: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::FeatureTwice(name) => write!(formatter, "`{name}` is in FEATURES twice"),
            Self::ExcludedTwice(name, root) => {
                write!(formatter, "`{name}` of {root} is in EXCLUDED twice")
            }
            Self::NoReason(name, root) => {
                write!(
                    formatter,
                    "the exclusion of `{name}` of {root} gives no reason"
                )
            }
            Self::InCatalogAndExcluded(name, root) => write!(
                formatter,
                "`{name}` is in FEATURES and excluded (of {root}): it is either taught or not"
            ),
        }
    }
}

/// Checks that no feature is listed twice or both taught and excluded, and that every
/// exclusion says why; the first mistake is the error. The shim's build script, the docs and a
/// test run it.
pub fn check_lists(features: &[Feature], excluded: &[Exclusion]) -> Result<(), ListError> {
    for (index, feature) in features.iter().enumerate() {
        if features[..index]
            .iter()
            .any(|earlier| earlier.name == feature.name)
        {
            return Err(ListError::FeatureTwice(feature.name));
        }
    }
    for (index, exclusion) in excluded.iter().enumerate() {
        let name = exclusion.feature.unwrap_or("*");
        let root = exclusion.crate_root;
        if exclusion.reason.trim().is_empty() {
            return Err(ListError::NoReason(name, root));
        }
        let twice = excluded[..index]
            .iter()
            .any(|earlier| earlier.feature == exclusion.feature && earlier.crate_root == root);
        if twice {
            return Err(ListError::ExcludedTwice(name, root));
        }
        if features
            .iter()
            .any(|feature| exclusion.feature == Some(feature.name))
        {
            return Err(ListError::InCatalogAndExcluded(name, root));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    // The shim is `core` only, but its tests run with `std`.
    extern crate std;

    use super::super::FEATURES;
    use super::*;

    #[test]
    fn the_lists_are_consistent() {
        if let Err(error) = check_lists(FEATURES, EXCLUDED) {
            panic!("catalog.rs: {error}");
        }
    }

    #[test]
    fn bad_lists_are_refused_naming_the_entry() {
        let excluded = |feature, crate_root, reason| Exclusion {
            feature,
            crate_root,
            reason,
        };
        let twice = [FEATURES[0], FEATURES[1], FEATURES[0]];
        let error = check_lists(&twice, &[]).unwrap_err();
        assert_eq!(error, ListError::FeatureTwice(FEATURES[0].name));
        assert_eq!(
            std::format!("{error}"),
            std::format!("`{}` is in FEATURES twice", FEATURES[0].name)
        );

        let no_reason = [excluded(Some("extract_if"), "rust/macros/lib.rs", "  ")];
        let error = check_lists(FEATURES, &no_reason).unwrap_err();
        assert_eq!(
            std::format!("{error}"),
            "the exclusion of `extract_if` of rust/macros/lib.rs gives no reason"
        );

        let both = [excluded(
            Some("raw_ref_op"),
            "rust/kernel/lib.rs",
            "a reason",
        )];
        let error = check_lists(FEATURES, &both).unwrap_err();
        assert_eq!(
            error,
            ListError::InCatalogAndExcluded("raw_ref_op", "rust/kernel/lib.rs")
        );
        assert!(std::format!("{error}").contains("`raw_ref_op` is in FEATURES and excluded"));

        let whole_crate_twice = [
            excluded(None, "rust/alloc/lib.rs", "vendored"),
            excluded(None, "rust/alloc/lib.rs", "vendored again"),
        ];
        let error = check_lists(FEATURES, &whole_crate_twice).unwrap_err();
        assert_eq!(
            std::format!("{error}"),
            "`*` of rust/alloc/lib.rs is in EXCLUDED twice"
        );
        // The same feature excluded in two crates is two entries, not one twice.
        let two_crates = [
            excluded(
                Some("allocator_api"),
                "rust/pin-init/src/lib.rs",
                "a reason",
            ),
            excluded(Some("allocator_api"), "rust/kernel/lib.rs", "a reason"),
        ];
        assert_eq!(check_lists(FEATURES, &two_crates), Ok(()));
        assert!(two_crates[1].covers("allocator_api", "rust/kernel/lib.rs"));
        assert!(!two_crates[1].covers("allocator_api", "rust/uapi/lib.rs"));
        assert!(whole_crate_twice[0].covers("box_syntax", "rust/alloc/lib.rs"));
    }
}
