// SPDX-License-Identifier: GPL-2.0
//! Hostile input to `audit`: another target's `cfg_attr` branch taken for dead, rustc flags that
//! compile nothing, write outside the scratch directory, or name a linker, a plugin or another
//! argument file, an argument file that is a FIFO, and a feature enabled twice only under a cfg
//! the audit cannot decide.

use crate::support::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `audit ARGS --format json` on the compiler running these tests.
fn audit(args: &[&str]) -> Run {
    xtask(&["audit", "--format", "json", "--toolchain"])
        .arg(current_rustc())
        .args(args)
        .run_within(Duration::from_secs(120))
}

/// The `key` findings (`dead`, `errors`) of an audit's JSON report, as `name: reason`.
fn findings(report: &Value, key: &str) -> Vec<String> {
    report[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {report}"))
        .iter()
        .map(|finding| {
            format!(
                "{}: {}",
                finding["name"],
                finding["reason"].as_str().unwrap()
            )
        })
        .collect()
}

/// Whether the usage report says the compiler found `never_type` used at `lib.rs:2:18`, and its
/// status there.
fn never_type_use(run: &Run) -> (bool, String) {
    let report = run.json();
    let cell = report["features"][0]["toolchains"]
        .as_object()
        .and_then(|toolchains| toolchains.values().next())
        .unwrap_or_else(|| run.fail("no toolchain's cell for the feature"));
    let at_2_18 = cell["places"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|place| {
            place["file"]
                .as_str()
                .is_some_and(|file| file.ends_with("/lib.rs"))
                && place["line"] == 2
                && place["column"] == 18
        });
    (
        at_2_18,
        cell["status"].as_str().unwrap_or_default().to_string(),
    )
}

/// A crate root that needs `never_type`: its one use is at 2:18.
fn never_type_root(directory: &Path) -> PathBuf {
    let root = directory.join("lib.rs");
    std::fs::write(&root, "#![feature(never_type)]\npub type Never = !;\n").unwrap();
    root
}

/// An argument file holding `args` and then the crate root.
fn argument_file(directory: &Path, args: &[String], root: &Path) -> PathBuf {
    let file = directory.join("given.args");
    let mut lines = args.to_vec();
    lines.push(root.display().to_string());
    std::fs::write(&file, lines.join("\n")).unwrap();
    file
}

/// Before: "dead: cfg_attr branch for feature(never_type): `target_os = "windows"` is false on
/// every compiler from 1.85.0 on", exit 1.
#[test]
fn another_targets_branch_is_not_dead() {
    let directory = scratch_dir("hostile-audit-other-target");
    let root = directory.join("lib.rs");
    std::fs::write(
        &root,
        "#![cfg_attr(target_os = \"windows\", feature(never_type))]\n\
         #![cfg_attr(all(not(unix), not(version(\"1.0\"))), feature(never_type))]\n\
         #![cfg_attr(not(unix), feature(never_type))]\npub fn f() {}\n",
    )
    .unwrap();
    let run = audit(&[path_str(&root), "--min-rust", "1.85"]);
    let report = run.json();
    let never_type = &report["toolchains"][0]["features"]["never_type"];
    run.check(
        never_type["status"] == "gated" && never_type["other_target"] == true,
        "never_type not gated for another target",
    );
    // A branch false on every target stays dead.
    let dead = findings(&report, "dead");
    let all = "\"never_type\": `all(not(unix), not(version(\"1.0.0\")))` is false on every \
               compiler from 1.85.0 on";
    run.check(
        dead.iter().any(|line| line == all),
        &format!("dead: {dead:?}"),
    );
    for condition in ["target_os = \"windows\"", "not(unix)"] {
        let said = dead
            .iter()
            .any(|line| line.contains(&format!("`{condition}` is false")));
        run.check(!said, &format!("{condition} called dead"));
    }
}

/// Before: `--print=crate-name` and `-Zparse-crate-root-only` compiled nothing, and the
/// feature was "unused: gated, and nothing needs it", exit 0.
#[test]
fn flags_that_compile_nothing_are_left_out() {
    let directory = scratch_dir("hostile-audit-compile-nothing");
    let root = never_type_root(&directory);
    for flag in ["--print=crate-name", "-Zparse-crate-root-only"] {
        let args = [
            "--edition=2021".to_string(),
            "--crate-type=lib".to_string(),
            flag.to_string(),
        ];
        let file = argument_file(&directory, &args, &root);
        let run = audit(&[path_str(&root), "--usage", "--rustc-args", path_str(&file)]);
        let (at_2_18, status) = never_type_use(&run);
        run.check(at_2_18, "no use at lib.rs:2:18")
            .check(status != "unused", "called unused")
            .stderr_has(&format!("left out `{flag}` (not on the list"));
    }
}

/// Before: the files of `-Zself-profile=DIR`, `-Zdump-mir-dir=DIR` and
/// `--print=crate-name=PATH` were written outside `target/`, with no note.
#[test]
fn flags_that_write_files_are_left_out_and_named() {
    let directory = scratch_dir("hostile-audit-writers");
    let outside = directory.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let root = never_type_root(&directory);
    let at = |name: &str| outside.join(name).display().to_string();
    let args = [
        "--edition=2021".to_string(),
        "--crate-type=lib".into(),
        format!("-Zself-profile={}", at("profile")),
        "-Zdump-mir=all".into(),
        "-Z".into(),
        format!("dump-mir-dir={}", at("mir")),
        format!("--print=crate-name={}", at("name")),
    ];
    let file = argument_file(&directory, &args, &root);
    let run = audit(&[path_str(&root), "--usage", "--rustc-args", path_str(&file)]);
    let written: Vec<PathBuf> = outside
        .read_dir()
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    run.check(written.is_empty(), &format!("written outside: {written:?}"));
    for named in [
        args[2].clone(),
        args[3].clone(),
        format!("-Z dump-mir-dir={}", at("mir")),
        args[6].clone(),
    ] {
        run.stderr_has(&format!("`{named}` (not on the list"));
    }
    run.check(never_type_use(&run).0, "no use at lib.rs:2:18");
}

#[test]
fn rustc_args_that_name_outputs_linkers_plugins_or_files_are_left_out_and_named() {
    let directory = scratch_dir("hostile-audit-rustc-args");
    let outside = directory.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let root = directory.join("lib.rs");
    std::fs::write(
        &root,
        "#![feature(never_type)]\npub type Never = !;\nfn main() {}\n",
    )
    .unwrap();
    // A linker that leaves a mark if it is ever run.
    let linker = script(
        &directory.join("fake-linker"),
        &format!("touch {}/linked\nexit 1\n", outside.display()),
    );
    let other = directory.join("other.args");
    std::fs::write(&other, "--cfg\nfrom_other_file\n").unwrap();
    let o = |name: &str| outside.join(name).display().to_string();
    let args = [
        "--edition=2021".to_string(),
        "--crate-type=bin".into(),
        "--crate-name=given".into(),
        "-o".into(),
        o("dash-o"),
        "--out-dir".into(),
        o("out-dir"),
        format!("--emit=link={}", o("emit")),
        format!("-Clinker={}", linker.display()),
        "-C".into(),
        format!("linker={}", linker.display()),
        "-Zllvm-plugins=/nonexistent/plugin.so".into(),
        format!("@{}", other.display()),
    ];
    let file = argument_file(&directory, &args, &root);
    let run = audit(&[path_str(&root), "--usage", "--rustc-args", path_str(&file)]);
    let left: Vec<PathBuf> = outside
        .read_dir()
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    run.check(left.is_empty(), &format!("written outside: {left:?}"));
    for named in [
        format!("`-o {}` (an output path)", o("dash-o")),
        format!("`--out-dir {}` (an output path)", o("out-dir")),
        format!("`--emit=link={}` (an output path)", o("emit")),
        format!("`-Clinker={}` (a linker)", linker.display()),
        format!("`-C linker={}` (a linker)", linker.display()),
        "`-Zllvm-plugins=/nonexistent/plugin.so` (a plugin)".to_string(),
        format!("`@{}` (another argument file)", other.display()),
    ] {
        run.stderr_has(&named);
    }
    // The compile still ran, and found where the crate needs the feature.
    run.check(never_type_use(&run).0, "no use at lib.rs:2:18");
}

/// Before: an argument file that is a FIFO blocked the audit forever.
#[test]
fn an_argument_file_or_a_root_in_it_that_is_a_fifo_is_refused() {
    let directory = scratch_dir("hostile-audit-fifo-args");
    let root = never_type_root(&directory);
    let fifo = directory.join("fifo");
    make_fifo(&fifo);
    audit(&[path_str(&root), "--usage", "--rustc-args", path_str(&fifo)])
        .refused("it is a FIFO, not a regular file");
    // A FIFO named inside it, as the crate root rustc would read.
    let file = argument_file(&directory, &["--crate-type=lib".to_string()], &fifo);
    audit(&[path_str(&root), "--usage", "--rustc-args", path_str(&file)])
        .refused("it is a FIFO, not a regular file");
}

/// Before: "--min-rust 1.85.0: nothing to remove, no dead cfg_attr branch, no build error.",
/// exit 0, though rustc refuses the crate with `--cfg docsrs`.
#[test]
fn a_feature_enabled_twice_under_docsrs_is_a_build_error() {
    let directory = scratch_dir("hostile-audit-twice-docsrs");
    let root = directory.join("lib.rs");
    let text = "#![cfg_attr(docsrs, feature(doc_cfg))]\n\
                #![cfg_attr(not(docsrs), feature(doc_cfg))]\n\
                #![cfg_attr(docsrs, feature(doc_cfg))]\npub fn f() {}\n";
    std::fs::write(&root, text).unwrap();
    // What rustc itself says with `--cfg docsrs`.
    let rustc = std::process::Command::new(current_rustc())
        .args([
            "--cfg",
            "docsrs",
            "--crate-type",
            "lib",
            "--emit=metadata",
            "--out-dir",
        ])
        .arg(&directory)
        .arg(&root)
        .env("RUSTC_BOOTSTRAP", "1")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&rustc.stderr);
    assert!(
        said.contains("the feature `doc_cfg` has already been enabled"),
        "{said}"
    );
    let run = audit(&[path_str(&root), "--min-rust", "1.85"]);
    // The second line, under `not(docsrs)`, never holds with either of the others.
    let errors = findings(&run.code(1).json(), "errors");
    let twice = "\"doc_cfg\": enabled twice when `docsrs` holds (first at line 1, column 29)";
    run.check(
        errors.iter().any(|line| line.starts_with(twice)),
        &format!("errors: {errors:?}"),
    )
    .check(
        !errors.iter().any(|line| line.contains("first at line 2")),
        "paired with not(docsrs)",
    );
}
