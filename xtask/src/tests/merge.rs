// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask merge`: the matrix run as two shards on this compiler, merged, gives the same
//! report, tables and verdict as one whole run.
//!
//! The pin file is made for the test: the compiler running it, and a pin no machine has, so
//! that one shard builds everything and the other reports a missing toolchain.

use crate::commands::matrix::{run_matrix, Options};
use crate::commands::merge::merge;
use crate::project_root;
use crate::report::Report;
use crate::run::plan::Layout;
use crate::tests::support::current_rustc;
use crate::toolchains::pins::{Pins, Shard};
use crate::util::json::{self, Value};
use crate::util::process::{run, Invocation};
use std::path::PathBuf;
use std::time::Duration;

/// A pin file for this compiler (first) and a missing toolchain (second).
fn pin_file(directory: &std::path::Path) -> PathBuf {
    let rustc = current_rustc();
    let output = run(
        &Invocation {
            program: rustc.clone(),
            args: vec!["-vV".into()],
            env: crate::toolchains::discovery::library_path_env(&rustc),
            env_remove: Vec::new(),
        },
        Duration::from_secs(60),
    )
    .expect("running rustc -vV");
    let version =
        crate::toolchains::version::parse_verbose_version(&output.stdout).expect("rustc -vV");
    let commit_date = match version.channel.name() {
        "nightly" => format!(
            "commit-date = \"{}\"\nrole = \"nightly\"\n",
            version
                .commit_date
                .clone()
                .expect("a nightly has a commit date")
        ),
        _ => "role = \"rust-toolchain\"\n".to_string(),
    };
    let path = directory.join("pins.toml");
    std::fs::write(
        &path,
        format!(
            "[[pin]]\nid = \"this\"\nrelease = \"{}\"\n{commit_date}\n\
             [[pin]]\nid = \"ancient\"\nrelease = \"1.0.0\"\nrole = \"feature\"\nrustup = \"1.0.0\"\n",
            version.release_string()
        ),
    )
    .unwrap();
    path
}

/// The report's JSON without what differs between two runs of the same cells: how long each
/// took, whether it came from the cache, and when the run ended.
fn without_timings(value: &Value) -> Value {
    match value {
        Value::Object(members) => Value::Object(
            members
                .iter()
                .filter(|(key, _)| !["seconds", "cached", "date"].contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), without_timings(value)))
                .collect(),
        ),
        Value::Array(elements) => Value::Array(elements.iter().map(without_timings).collect()),
        other => other.clone(),
    }
}

#[test]
fn two_shards_merge_into_the_whole_run() {
    let _turn = crate::tests::support::the_checkouts_lock();
    // Kept between runs (not a scratch directory), so that its cache is too.
    let directory = project_root().join("target/kshim/tests/merge");
    std::fs::create_dir_all(&directory).unwrap();
    let pins = pin_file(&directory);
    let layout = Layout {
        root: project_root(),
        kshim: directory.join("kshim"),
    };
    let mut options = Options::new(Vec::new());
    options.selection.pins = Some(pins.clone());
    options.settings.jobs = 2;
    let whole = run_matrix(&layout, &options).expect("the whole run");
    assert_eq!(whole.toolchains.len(), 2);
    assert_eq!(
        whole.toolchains[0].verdict.word(),
        "ok",
        "{:?}",
        whole.toolchains[0]
    );
    assert_eq!(whole.toolchains[1].verdict.word(), "missing");

    let mut shard_reports = Vec::new();
    for index in [2, 1] {
        options.selection.shard = Some(Shard { index, count: 2 });
        let report = run_matrix(&layout, &options).expect("a shard's run");
        assert_eq!(report.shard.as_deref(), Some(format!("{index}/2").as_str()));
        assert_eq!(report.toolchains.len(), 1);
        let path = directory.join(format!("shard-{index}.json"));
        std::fs::write(&path, json::to_pretty(&report.to_json())).unwrap();
        shard_reports.push((
            path.clone(),
            Report::read(&path).expect("reading a shard's report"),
        ));
    }
    let merged = merge(&shard_reports, &Pins::load(&pins).unwrap(), false).expect("merging");
    assert_eq!(
        without_timings(&merged.to_json()),
        without_timings(&whole.to_json()),
        "the merged report differs from the whole run's"
    );
    assert_eq!(merged.human(false), whole.human(false));
    assert_eq!(merged.markdown(), whole.markdown());
    assert_eq!(merged.verdict(), whole.verdict());
    assert_eq!(merged.verdict(), crate::Verdict::Success);

    // With --strict the missing pin fails the merged run, as it fails a whole --strict run.
    let strict = merge(&shard_reports, &Pins::load(&pins).unwrap(), true).unwrap();
    assert_eq!(strict.verdict(), crate::Verdict::Failure);

    // The same shard twice overlaps, and one shard alone is not the whole.
    let twice = vec![shard_reports[1].clone(), shard_reports[1].clone()];
    let error = merge(&twice, &Pins::load(&pins).unwrap(), false)
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("shard 1/2 is given twice"), "{error}");
    let alone = vec![shard_reports[1].clone()];
    let error = merge(&alone, &Pins::load(&pins).unwrap(), false)
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "shard 2/2 is missing: give the reports of all 2 shards"
    );
}
