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

// ---------------------------------------------------------------------------------------------
// 10. A recorded report altered: every prediction recomputed from the catalog and the report's
// own toolchains, every date a real minute.

/// The recorded matrix report with `change` made to it: `merge` of it as the only shard of a
/// split in one (with the repository's pin file), and `docs --check --report` of it.
fn recorded_report_changed(name: &str, change: impl FnOnce(&mut Value)) -> (Finished, Finished) {
    let directory = scratch_dir(&format!("hostile-recorded-{name}"));
    let root = crate::project_root();
    let text = std::fs::read_to_string(root.join(crate::docs::MATRIX_REPORT)).unwrap();
    // At the current schema, whatever the recorded one.
    let mut report = crate::report::upgrade::upgrade(json::parse(&text).unwrap()).unwrap();
    change(&mut report);
    let whole = directory.join(name);
    write_json(&whole, &report);
    report["shard"] = "1/1".into();
    let shard = directory.join(format!("shard-{name}"));
    write_json(&shard, &report);
    let pins = root.join("toolchains.toml");
    let merged = xtask(&[
        "merge",
        "--format",
        "json",
        "--pins",
        path_str(&pins),
        path_str(&shard),
    ]);
    let docs = xtask(&["docs", "--check", "--report", path_str(&whole)]);
    (merged, docs)
}

/// The target cell of `toolchain` on `triple` at `stage` in `mode` (null: no mode).
fn target_cell<'a>(
    report: &'a mut Value,
    (toolchain, triple): (&str, &str),
    (stage, mode): (&str, Option<&str>),
) -> &'a mut Value {
    let cells = report["targets"]["cells"].as_array_mut().unwrap();
    cells
        .iter_mut()
        .find(|cell| {
            cell["toolchain"] == toolchain
                && cell["target"] == triple
                && cell["stage"] == stage
                && cell["mode"].as_str() == mode
        })
        .unwrap_or_else(|| panic!("no cell {stage} {mode:?} for {triple} on {toolchain}"))
}

/// The LLVM of Debian's rustc 1.78.0 (16.0.6, the catalog's evidence), recorded as a run now
/// records it: the recorded report predates the member.
fn with_llvm_of_1_78(report: &mut Value) {
    report["targets"]["llvm"] = json::json!({ "1.78.0": 16 });
}

const LOONGARCH: &str = "loongarch64-unknown-none";

#[test]
fn relabelled_target_cells_are_refused() {
    // Before: `merge` exit 0, its summary "1.78.0: ...; 32 of 32 target cells pass", and
    // `docs --report` took it; the catalog predicts both cells to fail with LLVM 16.
    let (merged, docs) = recorded_report_changed("llvm.json", with_llvm_of_1_78);
    assert_eq!(merged.status.code(), Some(0), "{}", merged.stderr);
    let merged_report = json::parse(&merged.stdout).unwrap();
    let summary = merged_report["toolchains"]
        .as_array()
        .unwrap()
        .iter()
        .find(|toolchain| toolchain["id"] == "1.78.0")
        .and_then(|toolchain| toolchain["summary"].as_str())
        .unwrap();
    assert!(
        summary.ends_with("; 30 of 32 target cells pass, 2 fail as predicted"),
        "{summary}"
    );
    assert_ne!(docs.status.code(), Some(2), "{}", docs.stderr);
    let (merged, docs) = recorded_report_changed("relabelled.json", |report| {
        with_llvm_of_1_78(report);
        for stage in ["sites", "program"] {
            let cell = target_cell(report, ("1.78.0", LOONGARCH), (stage, Some("kernel")));
            cell["outcome"] = "pass".into();
            cell["expected"] = "pass".into();
            cell["first_error"] = Value::Null;
        }
    });
    let message = format!(
        "objects sites (kernel) for {LOONGARCH} on 1.78.0: it expects `pass`, but the catalog \
         predicts `fail` (LLVM 16"
    );
    assert_refused(&merged, &message);
    assert_refused(&docs, &message);
}

#[test]
fn a_target_list_relabelled_is_refused() {
    // Before: accepted, exit 0.
    let (merged, docs) = recorded_report_changed("unknown.json", |report| {
        let known = report["targets"]["known"].as_array_mut().unwrap();
        let cell = known
            .iter_mut()
            .find(|cell| cell["toolchain"] == "1.78.0" && cell["target"] == "x86_64-unknown-none")
            .unwrap();
        cell["observed"] = false.into();
        cell["expected"] = false.into();
    });
    let message = "the target list of 1.78.0 for x86_64-unknown-none: it expects `unknown`, but \
                   the catalog predicts `known` of release 1.78.0";
    assert_refused(&merged, message);
    assert_refused(&docs, message);
}

#[test]
fn a_date_that_is_no_minute_is_refused() {
    // Before: `merge` exit 0, and `docs --report` wrote the date raw into docs/matrix.md.
    let (merged, docs) = recorded_report_changed("date.json", |report| {
        report["date"] = "9999-99-99 99:99 UTC<script>".into();
    });
    let message = "the date `9999-99-99 99:99 UTC<script>` is not a UTC minute";
    assert_refused(&merged, message);
    assert_refused(&docs, message);
}

/// The recorded kernel report with `change` made to it, as `docs` reads it from a repository.
fn recorded_kernel_report_changed(change: impl FnOnce(&mut Value)) -> anyhow::Result<String> {
    let file = crate::project_root().join(crate::docs::kernels::KERNEL_REPORT);
    let mut report = json::parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
    change(&mut report);
    crate::docs::kernels::kernels_page(Some(&json::to_pretty(&report)), &file)
}

/// The cell of `tree` with `toolchain` in a kernel report.
fn kernel_cell<'a>(report: &'a mut Value, tree: &str, toolchain: &str) -> &'a mut Value {
    let cells = report["cells"].as_array_mut().unwrap();
    let found = cells
        .iter_mut()
        .find(|cell| cell["tree"] == tree && cell["toolchain"] == toolchain);
    found.unwrap_or_else(|| panic!("no cell {tree} with {toolchain}"))
}

#[test]
fn a_finding_is_derived_never_read() {
    // The recorded grid has no finding (6.1 with 1.63.0 is predicted and really fails).
    let page = recorded_kernel_report_changed(|_| {}).unwrap();
    assert!(!page.contains("**finding**"), "{page}");
    // A finding claimed where prediction and build agree is refused, not shown.
    let error = recorded_kernel_report_changed(|report| {
        kernel_cell(report, "6.1", "debian-1.63.0")["finding"] = true.into();
    })
    .unwrap_err();
    assert!(
        format!("{error:#}").contains(
            "(6.1 with debian-1.63.0): `finding` is true, but predicted fail against real fail \
             makes it false"
        ),
        "{error:#}"
    );
    // Before: `docs` exit 0, and no finding for 6.12 with 1.96.0 on the page.
    let error = recorded_kernel_report_changed(|report| {
        let cell = kernel_cell(report, "6.12", "debian-1.96.0");
        cell["predicted"] = "pass".into();
        cell["real"] = "fail".into();
        cell["boot"] = Value::Null;
    })
    .unwrap_err();
    assert!(
        format!("{error:#}").contains(
            "(6.12 with debian-1.96.0): `finding` is false, but predicted pass against real fail \
             makes it true"
        ),
        "{error:#}"
    );
    // A prediction its own probes do not make is refused too.
    let error = recorded_kernel_report_changed(|report| {
        kernel_cell(report, "6.1", "debian-1.85.0")["predicted"] = "pass".into();
    })
    .unwrap_err();
    assert!(
        format!("{error:#}").contains(
            "(6.1 with debian-1.85.0): `predicted` is Some(\"pass\"), but its crates' probes \
             and the minimum make it Some(\"fail\")"
        ),
        "{error:#}"
    );
}

#[test]
fn a_false_host_is_refused() {
    let directory = scratch_dir("hostile-host");
    let pins = directory.join("pins.toml");
    pin_file(&pins, 4);
    let first = directory.join("1.json");
    write_json(&first, &shard_report(4, 1, 2).to_json());
    let merge = |name: &str, host: &str| {
        // Every toolchain of the second shard: it agrees with itself, not with the first.
        let mut second = shard_report(4, 2, 2).to_json();
        for toolchain in second["toolchains"].as_array_mut().unwrap() {
            toolchain["host"] = host.into();
        }
        let path = directory.join(name);
        write_json(&path, &second);
        xtask(&[
            "merge",
            "--pins",
            path_str(&pins),
            path_str(&first),
            path_str(&path),
        ])
    };
    // Before: merged, exit 0, the merged report saying p1 ran on aarch64-apple-darwin.
    assert_refused(
        &merge("other.json", "aarch64-apple-darwin"),
        "toolchain p1: its host is aarch64-apple-darwin, but toolchain p0's is \
         x86_64-unknown-linux-gnu",
    );
    assert_refused(
        &merge("garbage.json", "x86_64<b>"),
        "toolchain p1: its host `x86_64<b>` is no target triple",
    );
}
