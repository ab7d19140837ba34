// SPDX-License-Identifier: GPL-2.0
//! Every feature a pinned tree asks for is in the catalog or on its exclusion list: the
//! features its crate roots enable under the cfgs Kbuild passes, and its allowed list
//! (`-Zallow-features` in `scripts/Makefile.build`), read from the committed kernel report and
//! from the trees themselves where they are unpacked.

use crate::catalog::{self, Release, EXCLUDED};
use crate::docs::kernels::{read_trees, KERNEL_REPORT};
use crate::kernel::report::json::KernelJson;
use crate::kernel::rules::tests::real_tree;
use crate::kernel::rules::{enabled_features, read};
use std::collections::BTreeSet;

/// Where a tree's allowed list is written, as the crate root of an allowed feature.
const ALLOWED_LIST: &str = "scripts/Makefile.build";

/// One feature a tree asks for: (crate root, or [`ALLOWED_LIST`]; feature).
type Asked = BTreeSet<(String, String)>;

/// What the committed report says each tree asks for, by tree id.
fn asked_by_the_report() -> Vec<(String, Asked)> {
    let file = crate::project_root().join(KERNEL_REPORT);
    let text = std::fs::read_to_string(&file).unwrap();
    let report = KernelJson::read(&text, &file).unwrap();
    read_trees(&report)
        .into_iter()
        .map(|tree| {
            let mut asked = Asked::new();
            for (feature, _) in &tree.features {
                asked.insert(("rust/kernel/lib.rs".into(), feature.clone()));
            }
            for (root, features) in &tree.others {
                for feature in features {
                    asked.insert((root.clone(), feature.clone()));
                }
            }
            for feature in &tree.allowed {
                asked.insert((ALLOWED_LIST.into(), feature.clone()));
            }
            (tree.id, asked)
        })
        .collect()
}

/// What an unpacked tree asks for with any compiler from its minimum on (every minor release to
/// 1.200.0, and each patch release its Kconfig or `rust/Makefile` names), the features under a condition its
/// files cannot decide included; and every feature any of its attributes names, under any
/// condition.
fn asked_by_the_tree(root: &std::path::Path) -> (Asked, Asked) {
    let tree = read(root).unwrap_or_else(|error| panic!("{}: {error:#}", root.display()));
    let minimum = tree.minimum.rustc;
    let mut releases: Vec<Release> = (minimum.minor..=200)
        .map(|minor| Release::new(1, minor, 0))
        .collect();
    releases.push(minimum);
    releases.extend(tree.kconfig.iter().filter_map(|symbol| symbol.from));
    releases.extend(
        tree.crates
            .iter()
            .flat_map(|krate| krate.cfgs.iter().filter_map(|(_, from)| *from)),
    );
    let mut asked = Asked::new();
    let mut named = Asked::new();
    for krate in &tree.crates {
        for feature in &krate.features {
            named.insert((krate.root.clone(), feature.name.clone()));
        }
        for &release in releases.iter().filter(|release| **release >= minimum) {
            let (enabled, undecided) = enabled_features(&tree, krate, release);
            for feature in enabled.into_iter().chain(undecided) {
                asked.insert((krate.root.clone(), feature));
            }
        }
    }
    for feature in &tree.allowed_features {
        asked.insert((ALLOWED_LIST.into(), feature.clone()));
    }
    (asked, named)
}

/// How the catalog answers for a feature a tree asks for.
fn answer(root: &str, feature: &str) -> Option<&'static str> {
    if catalog::feature(feature).is_some() {
        Some("catalog")
    } else if EXCLUDED
        .iter()
        .any(|exclusion| exclusion.covers(feature, root))
    {
        Some("excluded")
    } else {
        None
    }
}

/// Checks one source's view of one tree, printing its features per answer.
fn check(source: &str, tree: &str, asked: &Asked, problems: &mut Vec<String>) {
    let mut by_answer: [(&str, BTreeSet<&str>); 3] = [
        ("catalog", BTreeSet::new()),
        ("excluded", BTreeSet::new()),
        ("neither", BTreeSet::new()),
    ];
    for (root, feature) in asked {
        let answer = answer(root, feature);
        let slot = by_answer
            .iter_mut()
            .find(|(word, _)| Some(*word) == answer || (answer.is_none() && *word == "neither"))
            .unwrap();
        slot.1.insert(feature);
        if answer.is_none() {
            let how = if root == ALLOWED_LIST {
                format!("{ALLOWED_LIST} allows")
            } else {
                format!("{root} enables")
            };
            problems.push(format!(
                "{tree} ({source}): {how} `{feature}`, which is neither in the catalog nor \
                 excluded (kernel-shim/src/catalog.rs)"
            ));
        }
    }
    let distinct: BTreeSet<&str> = asked.iter().map(|(_, feature)| feature.as_str()).collect();
    println!("{tree} ({source}): {} features asked for", distinct.len());
    for (word, features) in &by_answer {
        let list: Vec<&str> = features.iter().copied().collect();
        println!("  {word} ({}): {}", list.len(), list.join(", "));
    }
}

#[test]
fn every_feature_the_trees_ask_for_is_in_the_catalog_or_excluded() {
    let mut problems = Vec::new();
    let mut named_anywhere = Asked::new();
    let mut all_unpacked = true;
    for (id, asked) in asked_by_the_report() {
        check(KERNEL_REPORT, &id, &asked, &mut problems);
        named_anywhere.extend(asked);
        let Some(root) = real_tree(&id) else {
            all_unpacked = false;
            continue;
        };
        let (asked, named) = asked_by_the_tree(&root);
        check("its unpacked tree", &id, &asked, &mut problems);
        named_anywhere.extend(named);
    }
    // An exclusion no tree names is stale; only knowable with every tree at hand, since the
    // report keeps only what Kbuild's cfgs enable.
    if all_unpacked {
        for exclusion in EXCLUDED {
            let named = named_anywhere
                .iter()
                .any(|(root, feature)| exclusion.covers(feature, root));
            if !named {
                problems.push(format!(
                    "the exclusion of `{}` of {} matches nothing any pinned tree enables",
                    exclusion.feature.unwrap_or("*"),
                    exclusion.crate_root
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
