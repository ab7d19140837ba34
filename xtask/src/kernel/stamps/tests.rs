// SPDX-License-Identifier: GPL-2.0
//! The tree key on small trees: a line added to a stamped file, a file added, a file of a Rust
//! driver's directory, each changes it; a file the build does not read does not.

use super::*;
use crate::kernel::rules::Prediction;

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn append(root: &Path, relative: &str, line: &str) {
    let path = root.join(relative);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(line);
    std::fs::write(path, text).unwrap();
}

fn scratch(name: &str) -> PathBuf {
    let dir = crate::project_root()
        .join("target/kshim/unit-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn local(root: &Path) -> Tree {
    Tree {
        root: root.to_owned(),
        identity: format!("local tree {}", root.display()),
        package: None,
        sha256: None,
        cost: (0.0, 0.0, 0),
    }
}

#[test]
fn every_file_the_rust_build_reads_is_in_the_key_and_others_are_not() {
    let root = scratch("tree-key");
    for file in [
        "Makefile",
        "rust/kernel/lib.rs",
        "scripts/min-tool-version.sh",
        "include/linux/types.h",
        "drivers/Makefile",
        "drivers/block/Makefile",
        "drivers/block/rnull.rs",
        "drivers/block/rnull/configfs.rs",
        "drivers/block/zram/zram_drv.c",
        "Documentation/rust/index.rst",
        "fs/ext4/inode.c",
    ] {
        write(&root, file, "# one line\n");
    }
    let tree = local(&root);
    let facts = Facts {
        version: "6.12.0".into(),
        minimum_rustc: "1.78.0".into(),
        minimum_bindgen: "0.65.1".into(),
        allowed_features: Vec::new(),
        crate_dirs: vec!["drivers/block".into()],
    };
    let key = || full_key(&tree, base_stamp(&tree).unwrap(), &facts).unwrap();
    let mut before = key();
    assert_eq!(key(), before, "nothing changed");
    // Stamps only: a write within the same clock tick must still change the change time.
    for (file, how) in [
        (
            "rust/kernel/lib.rs",
            "#![feature(this_feature_does_not_exist)]\n",
        ),
        ("scripts/min-tool-version.sh", "echo 1.78.0\n"),
        ("drivers/block/rnull.rs", "// a driver\n"),
        ("drivers/block/rnull/configfs.rs", "// its module\n"),
        ("drivers/Makefile", "obj-y += block/\n"),
        ("Makefile", "EXTRAVERSION = -x\n"),
    ] {
        append(&root, file, how);
        let after = key();
        assert_ne!(after, before, "{file} changed and the key did not");
        before = after;
    }
    write(&root, "include/linux/new.h", "");
    assert_ne!(key(), before, "a header added");
    before = key();
    // What the Rust build does not read is left out: the stamps cost less than the whole tree.
    append(&root, "Documentation/rust/index.rst", "more\n");
    append(&root, "fs/ext4/inode.c", "more\n");
    append(&root, "drivers/block/zram/zram_drv.c", "more\n");
    assert_eq!(key(), before);
    // Another tree (another identity) is another key, even with the same files.
    let other = Tree {
        identity: "linux-source-6.12=6.12.118-1 (trixie-security)".into(),
        ..local(&root)
    };
    assert_ne!(
        full_key(&other, base_stamp(&other).unwrap(), &facts).unwrap(),
        before
    );
    std::fs::remove_dir_all(root).unwrap();
}

/// A Debian tree changed after it was unpacked (one line of `scripts/min-tool-version.sh`) is
/// read again, and its key changes, so that no result of the tree as it was is served: the
/// prediction read the new minimum while the real result came from the cache ("refused …
/// Minimum version: 1.78.0").
#[test]
fn a_tree_changed_after_unpacking_is_read_again_under_another_key() {
    let Some(real) = crate::kernel::rules::tests::real_tree("6.12") else {
        return;
    };
    let root = scratch("tree-facts");
    for file in [
        "Makefile",
        "init/Kconfig",
        "rust/Makefile",
        "rust/kernel/lib.rs",
        "scripts/Makefile.build",
        "scripts/min-tool-version.sh",
        "arch/x86/configs/x86_64_defconfig",
    ] {
        let to = root.join("tree").join(file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(real.join(file), to).unwrap();
    }
    let cache = root.join("results");
    let tree = Tree {
        identity: "linux-source-6.12=6.12.118-1 (trixie-security)".into(),
        ..local(&root.join("tree"))
    };
    let (facts_read, key, rules) = facts(&cache, &tree, true, true).unwrap();
    assert!(rules.is_some(), "nothing was kept yet");
    assert_eq!(facts_read.minimum_rustc, "1.78.0");
    let (kept, again, rules) = facts(&cache, &tree, true, true).unwrap();
    assert!(rules.is_none(), "read again though nothing changed");
    assert_eq!((kept, again), (facts_read.clone(), key));
    // --no-cache reads the rules.
    assert!(facts(&cache, &tree, false, true).unwrap().2.is_some());
    let script = tree.root.join("scripts/min-tool-version.sh");
    let text = std::fs::read_to_string(&script).unwrap();
    std::fs::write(&script, text.replacen("echo 1.78.0", "echo 1.99.0", 1)).unwrap();
    let (changed, changed_key, rules) = facts(&cache, &tree, true, true).unwrap();
    assert!(rules.is_some());
    assert_eq!(changed.minimum_rustc, "1.99.0");
    assert_ne!(changed_key, key);
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn a_prediction_is_kept_by_tree_and_compiler() {
    let cache = scratch("tree-predictions");
    let prediction = Prediction {
        minimum_met: true,
        predicted: rules::Predicted::Fail,
        crates: vec![rules::CratePrediction {
            root: "rust/kernel/lib.rs".into(),
            features: vec!["this_feature_does_not_exist".into()],
            predicted: rules::Predicted::Fail,
            needs_bootstrap: false,
            errors: vec!["unknown feature `this_feature_does_not_exist` (E0635)".into()],
        }],
    };
    let (tree, compiler) = (Key(1), Key(2));
    let entry = prediction_entry(&cache, tree, compiler).unwrap();
    assert_eq!(entry, prediction_entry(&cache, tree, compiler).unwrap());
    assert_ne!(entry, prediction_entry(&cache, Key(3), compiler).unwrap());
    assert_ne!(entry, prediction_entry(&cache, tree, Key(3)).unwrap());
    let text = json::to_value(&prediction).to_string();
    assert_eq!(json::read::<Prediction>(&text).unwrap(), prediction);
    std::fs::remove_dir_all(cache).unwrap();
}
