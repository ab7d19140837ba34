// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask merge`: the matrix run as two shards (`--shard 2/2`, `--shard 1/2`) and merged
//! gives the same report, tables and exit status as one whole run; shards that overlap or fall
//! short are refused.
//!
//! The pin file is made for the test: the compiler running it, and a pin no machine has, so
//! that one shard builds everything and the other reports a missing toolchain. The tree is a
//! tiny one ([`tiny_tree`]): sharding is about the reports, not what is built.

use crate::support::*;
use std::path::Path;
use std::time::Duration;

/// A pin file for this compiler (first) and a missing toolchain (second).
fn pin_file_of_this_compiler(directory: &Path) -> std::path::PathBuf {
    let verbose = verbose_version();
    let role = if release().ends_with("-nightly") {
        let date = verbose
            .lines()
            .find_map(|line| line.strip_prefix("commit-date: "))
            .expect("a nightly has a commit date");
        format!("commit-date = \"{date}\"\nrole = \"nightly\"\n")
    } else {
        "role = \"rust-toolchain\"\n".to_string()
    };
    let number = release().split('-').next().unwrap();
    let path = directory.join("pins.toml");
    std::fs::write(
        &path,
        format!(
            "[[pin]]\nid = \"this\"\nrelease = \"{number}\"\n{role}\n\
             [[pin]]\nid = \"ancient\"\nrelease = \"1.0.0\"\nrole = \"feature\"\nrustup = \"1.0.0\"\n"
        ),
    )
    .unwrap();
    path
}

#[test]
fn two_shards_merge_into_the_whole_run() {
    let tree = tiny_tree("merge");
    let pins = pin_file_of_this_compiler(&tree);
    let matrix = |format: &str, extra: &[&str]| {
        xtask(&[
            "matrix",
            "--root",
            path_str(&tree),
            "--pins",
            path_str(&pins),
        ])
        .args(["--target", "none", "-j", "2", "--format", format])
        .args(extra)
        .run_within(Duration::from_secs(300))
    };
    let whole = matrix("json", &[]);
    let whole_report = whole.success().json();
    let verdicts: Vec<&str> = whole_report["toolchains"]
        .as_array()
        .unwrap()
        .iter()
        .map(|toolchain| toolchain["verdict"].as_str().unwrap_or_default())
        .collect();
    whole.check(
        verdicts == ["ok", "missing"],
        "this compiler ok, `ancient` missing",
    );
    let whole_human = matrix("human", &[]);

    let mut shards = Vec::new();
    for index in [2, 1] {
        let shard = format!("{index}/2");
        let run = matrix("json", &["--shard", &shard]);
        let report = run.success().json();
        run.check(
            report["shard"] == shard.as_str()
                && report["toolchains"]
                    .as_array()
                    .is_some_and(|all| all.len() == 1),
            "a shard of one toolchain",
        );
        let path = tree.join(format!("shard-{index}.json"));
        std::fs::write(&path, &run.stdout).unwrap();
        shards.push(path_str(&path).to_string());
    }
    let merge = |format: &str, extra: &[&str], reports: &[&str]| {
        xtask(&["merge", "--pins", path_str(&pins), "--format", format])
            .args(extra)
            .args(reports)
            .run()
    };
    let both = [shards[0].as_str(), shards[1].as_str()];
    let merged = merge("json", &[], &both);
    merged.success().check(
        results_of(&merged.json()) == results_of(&whole_report),
        "the merged report differs from the whole run's",
    );
    let merged_human = merge("human", &[], &both);
    merged_human.success().check(
        merged_human.stdout == whole_human.stdout,
        &format!(
            "the merged tables differ from the whole run's:\n{}",
            whole_human.stdout
        ),
    );
    // With --strict the missing pin fails the merged run, as it fails a whole --strict run.
    merge("human", &["--strict"], &both).code(1);
    matrix("human", &["--strict"]).code(1);

    // The same shard twice overlaps, and one shard alone is not the whole.
    merge("json", &[], &[&shards[1], &shards[1]])
        .refused("shard 1/2 is given twice")
        .stdout_empty();
    merge("json", &[], &[&shards[1]])
        .refused("shard 2/2 is missing: give the reports of all 2 shards");
}
