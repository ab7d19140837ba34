// SPDX-License-Identifier: GPL-2.0
//! Hostile reports: `merge` and `docs --report` refuse incomplete or contradictory shards
//! (every prediction recomputed from the catalog and the pin file), and read, check, merge and
//! show large ones (how long that takes is a benchmark: BENCHMARKS.md).
//!
//! Every input is generated here, none is a fixture; each test runs the real `xtask` binary
//! under a deadline (see `hostile.rs`), so a hang fails the test.

use super::*;
use crate::catalog::FEATURES;
use crate::tests::support::scratch_dir;
use crate::util::json::{self, Value};
use std::path::PathBuf;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// 5. merge and 9. docs --report: whole, consistent reports or exit 2.

#[test]
fn merge_and_docs_refuse_incomplete_or_contradictory_reports() {
    let directory = scratch_dir("hostile-merge");
    let pins = directory.join("pins.toml");
    pin_file(&pins, 4);
    let first = shard_report(4, 1, 2).to_json();
    let second_path = directory.join("2.json");
    write_json(&second_path, &shard_report(4, 2, 2).to_json());
    let merge = |name: &str, first: &Value| {
        let path = directory.join(name);
        write_json(&path, first);
        let merged = xtask(&[
            "merge",
            "--pins",
            path_str(&pins),
            path_str(&path),
            path_str(&second_path),
        ]);
        let docs = xtask(&["docs", "--check", "--report", path_str(&path)]);
        (merged, docs)
    };
    let (merged, _) = merge("whole.json", &first);
    assert_eq!(merged.status.code(), Some(0), "{}", merged.stderr);

    let mut no_builds = first.clone();
    no_builds["builds"] = Value::Array(Vec::new());
    let (merged, docs) = merge("no-builds.json", &no_builds);
    let cells = cells_per_toolchain();
    assert_refused(
        &merged,
        &format!("is not a whole report: toolchain p0 lacks {cells} of the {cells}"),
    );
    assert_refused(&docs, "is not a whole report: toolchain p0 lacks");

    let mut repeated = first.clone();
    let copy = repeated["builds"][0].clone();
    repeated["builds"].as_array_mut().unwrap().push(copy);
    assert_refused(
        &merge("repeated.json", &repeated).0,
        "build kernel (kernel) on p0: the cell is there twice",
    );

    let mut both_fail = first.clone();
    build_mut(&mut both_fail, 0)["outcome"] = "fail".into();
    build_mut(&mut both_fail, 0)["expected"] = "fail".into();
    assert_refused(
        &merge("both-fail.json", &both_fail).0,
        "it expects `fail`, but the catalog expects `pass`",
    );

    let mut wrong_ok = first.clone();
    build_mut(&mut wrong_ok, 3)["ok"] = false.into();
    assert_refused(
        &merge("wrong-ok.json", &wrong_ok).0,
        "builds[3]: `ok` is false, but what was observed and what was expected say true",
    );

    // The second toolchain of the shard renamed to the first's id: its cells would vanish.
    let mut collision = first.clone();
    collision["toolchains"][1]["id"] = "p0".into();
    assert_refused(
        &merge("collision.json", &collision).0,
        "toolchains[1] has the id `p0` of toolchains[0]",
    );

    let infinite = json::to_pretty(&first).replacen("\"seconds\": 0.25", "\"seconds\": 1e999", 1);
    let path = directory.join("infinite.json");
    std::fs::write(&path, infinite).unwrap();
    let merged = xtask(&[
        "merge",
        "--pins",
        path_str(&pins),
        path_str(&path),
        path_str(&second_path),
    ]);
    assert_refused(&merged, "is not a matrix report");
}

#[test]
fn merge_and_docs_recompute_every_prediction_and_refuse_what_disagrees() {
    let directory = scratch_dir("hostile-merge-predictions");
    let pins = directory.join("pins.toml");
    pin_file(&pins, 4);
    let first = shard_report(4, 1, 2).to_json();
    let second_path = directory.join("2.json");
    write_json(&second_path, &shard_report(4, 2, 2).to_json());
    let check = |name: &str, report: &Value, message: &str| {
        let path = directory.join(name);
        write_json(&path, report);
        let merged = xtask(&[
            "merge",
            "--pins",
            path_str(&pins),
            path_str(&path),
            path_str(&second_path),
        ]);
        assert_refused(&merged, message);
        assert!(merged.stderr.contains(name), "{}", merged.stderr);
        if !name.starts_with("strict") && !name.starts_with("release") {
            let docs = xtask(&["docs", "--check", "--report", path_str(&path)]);
            assert_refused(&docs, message);
        }
    };
    let asm_goto = FEATURES
        .iter()
        .position(|feature| feature.name == "asm_goto")
        .unwrap();
    // A cell that agrees with itself and not with the catalog: gated where asm_goto is stable.
    let mut gated = first.clone();
    let cell = &mut gated["features"][asm_goto]["toolchains"]["p0"];
    cell["observed"] = "gated".into();
    cell["stable_since"] = Value::Null;
    cell["expected"] = "gated".into();
    cell["expected_stable_since"] = Value::Null;
    check(
        "gated.json",
        &gated,
        "feature asm_goto on p0: it expects `gated`, but the catalog predicts `stable`",
    );
    let mut later = first.clone();
    later["features"][asm_goto]["toolchains"]["p0"]["stable_since"] = "1.150.0".into();
    later["features"][asm_goto]["toolchains"]["p0"]["expected_stable_since"] = "1.150.0".into();
    check(
        "later.json",
        &later,
        "feature asm_goto on p0: stable since 1.150.0, after the compiler's own release 1.100.0",
    );
    let mut date = first.clone();
    date["toolchains"][0]["commit_date"] = "1999-99-99".into();
    check(
        "date.json",
        &date,
        "toolchain p0: its commit date `1999-99-99` is no date",
    );
    let mut release = first.clone();
    release["toolchains"][0]["release"] = "1.101.0".into();
    check(
        "release.json",
        &release,
        "toolchain p0 reports release 1.101.0, but its pin p0 wants 1.100.0",
    );
    let mut strict = first.clone();
    strict["strict"] = true.into();
    check(
        "strict.json",
        &strict,
        "run every shard with the same --strict",
    );
}

// ---------------------------------------------------------------------------------------------
// 6. Large reports, and 7. misleading results.

#[test]
fn large_reports_are_read_checked_merged_and_shown() {
    let directory = scratch_dir("hostile-large");
    // KSHIM_HOSTILE_SIZES=100,1000,3000 measures larger inputs (BENCHMARKS.md).
    let sizes: Vec<usize> = std::env::var("KSHIM_HOSTILE_SIZES")
        .unwrap_or_else(|_| "40,400".into())
        .split(',')
        .map(|size| size.parse().unwrap())
        .collect();
    for count in sizes {
        let pins = directory.join(format!("pins-{count}.toml"));
        pin_file(&pins, count);
        let paths: Vec<PathBuf> = (1..=2)
            .map(|shard| {
                let path = directory.join(format!("{count}-{shard}.json"));
                write_json(&path, &shard_report(count, shard, 2).to_json());
                path
            })
            .collect();
        let bytes: u64 = paths
            .iter()
            .map(|path| std::fs::metadata(path).unwrap().len())
            .sum();
        let start = Instant::now();
        let merged = xtask_within(
            Duration::from_secs(120),
            &[
                "merge",
                "--pins",
                path_str(&pins),
                path_str(&paths[0]),
                path_str(&paths[1]),
            ],
            &[],
        );
        let seconds = start.elapsed().as_secs_f64();
        assert_eq!(merged.status.code(), Some(0), "{}", merged.stderr);
        eprintln!(
            "merge of {count} toolchains ({:.1} MB of reports, {} build cells): {seconds:.2} s",
            bytes as f64 / 1e6,
            count * cells_per_toolchain()
        );
    }
}
