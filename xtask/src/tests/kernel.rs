// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask kernel` on trees it cannot use, made in a scratch directory: a path that is no
//! kernel tree, a tree without Rust (as 5.10), a `Makefile.build` without an allowed list.
//! Each is a clear cell of its own, the other trees go on, and nothing is built or cached.

use crate::tests::support::{current_rustc, scratch_dir, xtask_binary};
use crate::util::json;
use std::path::Path;
use std::process::Command;

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A tree shaped like the kernel's top, without `rust/`: Linux 5.10.
fn tree_without_rust(root: &Path) {
    write(
        root,
        "Makefile",
        "VERSION = 5\nPATCHLEVEL = 10\nSUBLEVEL = 246\nEXTRAVERSION =\n",
    );
    write(root, "scripts/config", "#!/bin/sh\n");
    write(root, "scripts/Makefile.build", "# no Rust here\n");
    write(root, "init/Kconfig", "config CC_VERSION_TEXT\n\tstring\n");
}

#[test]
fn trees_that_cannot_be_used_are_cells_of_their_own() {
    let scratch = scratch_dir("kernel-bad-trees");
    let not_a_tree = scratch.join("not-a-tree");
    write(&not_a_tree, "README", "hello\n");
    let no_rust = scratch.join("linux-5.10");
    tree_without_rust(&no_rust);
    let no_allowed_list = scratch.join("no-allowed-list");
    tree_without_rust(&no_allowed_list);
    write(
        &no_allowed_list,
        "Makefile",
        "VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 0\nEXTRAVERSION =\n",
    );
    write(&no_allowed_list, "rust/Makefile", "# rust\n");
    let rustc = current_rustc();
    let run = |strict: bool| {
        let mut command = Command::new(xtask_binary());
        command.arg("kernel");
        for tree in [&not_a_tree, &no_rust, &no_allowed_list] {
            command.arg("--tree").arg(tree);
        }
        command
            .arg("--toolchain")
            .arg(&rustc)
            .args(["--format", "json"]);
        if strict {
            command.arg("--strict");
        }
        command.output().unwrap()
    };
    let output = run(false);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let report = json::parse(&String::from_utf8_lossy(&output.stdout)).unwrap();
    let cells = report["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 3, "{report:#}");
    let expected = [
        "is no kernel tree",
        "has no Rust support: it has no rust/Makefile",
        "sets no `rust_allowed_features`",
    ];
    for (cell, said) in cells.iter().zip(expected) {
        assert_eq!(cell["real"], "not run", "{cell:#}");
        let reason = cell["reason"].as_str().unwrap();
        assert!(reason.contains(said), "{reason}");
        assert_eq!(cell["cached"], false);
        assert!(cell["steps"].as_array().unwrap().is_empty(), "{cell:#}");
    }
    let trees = report["trees"].as_array().unwrap();
    assert_eq!(trees.len(), 3);
    assert!(
        trees.iter().all(|tree| tree["error"].is_string()),
        "{report:#}"
    );
    // Nothing was built in the trees.
    assert!(!no_rust.join(".config").exists());
    // --strict: a cell not run fails the run.
    assert_eq!(run(true).status.code(), Some(1));
}

#[test]
fn an_unknown_tree_is_bad_input() {
    let output = Command::new(xtask_binary())
        .args(["kernel", "--tree", "no-such-tree-pin"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "--tree no-such-tree-pin: no such tree pin (the pins are 6.1, 6.12, 7.2, 7.3)"
        ),
        "{stderr}"
    );
}
