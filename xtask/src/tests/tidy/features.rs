// SPDX-License-Identifier: GPL-2.0
//! The shim's feature block, the examples and the drivers agree with the catalog.

use super::{read, rust_files};
use crate::catalog::FEATURES;
use crate::features::attributes::read_features;
use crate::features::cfg::{Predicate, SyntaxError};
use crate::project_root;
use std::fs;

/// One feature that `lib.rs` enables, with the comment above its attribute.
#[derive(Debug)]
struct FeatureLine {
    gate: String,
    name: String,
    comment: String,
    line_number: usize,
}

/// Reads the feature block of the shim's `lib.rs` with the audit's attribute reader.
fn lib_rs_feature_lines() -> Vec<FeatureLine> {
    let text = read("kernel-shim/src/lib.rs");
    let features = read_features(&text)
        .unwrap_or_else(|error| panic!("kernel-shim/src/lib.rs:{error}: malformed attribute"));
    let lines: Vec<&str> = text.lines().collect();
    features
        .into_iter()
        .map(|feature| FeatureLine {
            gate: feature
                .condition()
                .map_or_else(|| "(unconditional)".to_string(), |gate| gate.to_string()),
            comment: comment_heading(&lines[..feature.line - 1]),
            line_number: feature.line,
            name: feature.name,
        })
        .collect()
}

/// The comment that heads what follows `lines`: their last group of `//` lines.
fn comment_heading(lines: &[&str]) -> String {
    // One comment heads a group of lines with the same status, as in the kernel: it lasts
    // until the next comment starts.
    let mut comment = String::new();
    let mut previous_was_comment = false;
    for line in lines {
        let Some(text) = line.trim().strip_prefix("//") else {
            previous_was_comment = false;
            continue;
        };
        if !previous_was_comment {
            comment.clear();
        }
        comment.push_str(text.trim());
        comment.push(' ');
        previous_was_comment = true;
    }
    comment
}

#[test]
fn lib_rs_feature_block_matches_the_catalog() {
    let lines = lib_rs_feature_lines();
    let found: Vec<(&str, &str)> = lines
        .iter()
        .map(|line| (line.name.as_str(), line.gate.as_str()))
        .collect();
    // Both sides as the reader prints them, so that spacing and line breaks do not count.
    let gates: Vec<String> = FEATURES
        .iter()
        .map(|feature| match Predicate::parse(feature.gate) {
            Ok(gate) => gate.to_string(),
            Err(error) => panic!("catalog gate of `{}`: {error}", feature.name),
        })
        .collect();
    let expected: Vec<(&str, &str)> = FEATURES
        .iter()
        .zip(&gates)
        .map(|(feature, gate)| (feature.name, gate.as_str()))
        .collect();
    assert_eq!(
        found, expected,
        "kernel-shim/src/lib.rs's feature block must list the catalog's features, in its \
         order, each under the catalog's gate"
    );
    for (line, feature) in lines.iter().zip(FEATURES) {
        let comment = line.comment.to_lowercase();
        match feature.stable_since {
            Some(release) => assert!(
                comment.contains(&format!("stable since rust {release}.")),
                "lib.rs:{}: `{}` needs a `// Stable since Rust {release}.` comment above it, \
                 found {:?}",
                line.line_number,
                feature.name,
                line.comment
            ),
            // The kernel's two words for an unstable feature.
            None => assert!(
                comment.contains("expected to become stable")
                    || comment.contains("to be determined."),
                "lib.rs:{}: unstable `{}` needs an `Expected to become stable.` or a `To be \
                 determined.` comment, found {:?}",
                line.line_number,
                feature.name,
                line.comment
            ),
        }
    }
}

/// Every `feature(NAME)` that a crate root enables, with or without `cfg_attr`.
fn enabled_features(text: &str) -> Result<Vec<String>, SyntaxError> {
    Ok(read_features(text)?
        .into_iter()
        .map(|feature| feature.name)
        .collect())
}

#[test]
fn drivers_enable_no_feature() {
    // Kbuild turns the allowed features on for every driver (`-Zcrate-attr='feature(...)'`),
    // so a driver that enables one itself fails (E0636), and one outside the list is refused
    // (E0725): the examples and the target programs, built as drivers, enable none.
    let root = project_root();
    let mut drivers = rust_files(&root.join("examples"));
    drivers
        .extend(["xtask/programs/run.rs", "xtask/programs/sites.rs"].map(|file| root.join(file)));
    for file in drivers {
        let text = fs::read_to_string(&file).unwrap();
        let names = enabled_features(&text)
            .unwrap_or_else(|error| panic!("{}:{error}: malformed attribute", file.display()));
        assert!(
            names.is_empty(),
            "{} enables {names:?}: a driver writes no #![feature], since Kbuild already turns \
             on the kernel's rust_allowed_features ({}) for it, and allows no other",
            file.display(),
            crate::catalog::RUST_ALLOWED_FEATURES
        );
    }
}

#[test]
fn the_feature_extractor_sees_cfg_attr_lines() {
    let text =
        "#![no_std]\n#![cfg_attr(kshim_kernel_mode, feature(raw_ref_op))]\n#![feature(a, b)]\n";
    assert_eq!(enabled_features(text).unwrap(), ["raw_ref_op", "a", "b"]);
}
