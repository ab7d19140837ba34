// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask audit` on real crate roots (`xtask/tests/fixtures/audit/crates/`) with every
//! compiler found here, against what those compilers answered when the corpus was made, and
//! on real compilers for what needs no fixture: a name that breaks the probe, a proc-macro
//! crate, `version(...)` conditions.

use crate::commands::audit::input::{read_crate_root, read_feature_list, Input};
use crate::commands::audit::{run_audit, AuditReport, Options, Probed};
use crate::features::status::Status;
use crate::project_root;
use crate::tests::support::{current_rustc, scratch_dir};
use crate::util::json::Value;
use std::collections::BTreeMap;

fn corpus() -> std::path::PathBuf {
    project_root().join("xtask/tests/fixtures/audit/crates")
}

/// Audits `input` with every pinned compiler that is found.
fn audit_everywhere(name: &str, input: Input) -> AuditReport {
    let mut options = Options::new(input);
    options.scratch = scratch_dir(name);
    run_audit(&options).expect("running the audit")
}

/// `FILE RELEASE FEATURE` → `STATUS ACTIVITY`, from `expected.txt`.
fn expected() -> BTreeMap<(String, String, String), (String, String)> {
    let text = std::fs::read_to_string(corpus().join("expected.txt")).unwrap();
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let [file, release, feature, status, activity] = words[..] else {
                panic!("expected.txt: five words per line: {line}");
            };
            (
                (file.into(), release.into(), feature.into()),
                (status.into(), activity.into()),
            )
        })
        .collect()
}

#[test]
fn every_compiler_here_answers_as_it_did_when_the_corpus_was_made() {
    let expected = expected();
    let mut files: Vec<String> = expected.keys().map(|(file, ..)| file.clone()).collect();
    files.dedup();
    assert!(files.len() >= 7, "{files:?}");
    for file in files {
        let input = read_crate_root(&corpus().join(&file)).unwrap();
        let report = audit_everywhere(&format!("audit-corpus-{file}"), input);
        let json = report.to_json();
        let mut checked = 0;
        for toolchain in json.get("toolchains").and_then(Value::as_array).unwrap() {
            let (Some(release), Some(Value::Object(features))) = (
                toolchain.get("release").and_then(Value::as_str),
                toolchain.get("features"),
            ) else {
                continue;
            };
            if !expected.keys().any(|(f, r, _)| *f == file && r == release) {
                continue; // A compiler the corpus was not made with.
            }
            for (feature, answer) in features {
                let status = answer.get("status").and_then(Value::as_str).unwrap();
                let since = answer.get("stable_since").and_then(Value::as_str);
                let status = match since {
                    Some(since) => format!("{status}@{since}"),
                    None => status.to_string(),
                };
                let activity = match (
                    answer.get("active").and_then(Value::as_bool),
                    answer.get("other_target").and_then(Value::as_bool),
                ) {
                    (_, Some(true)) => "other-target",
                    (Some(true), _) => "on",
                    (Some(false), _) => "off",
                    (None, _) => "undecided",
                };
                let key = (file.clone(), release.to_string(), feature.clone());
                assert_eq!(
                    expected.get(&key),
                    Some(&(status, activity.to_string())),
                    "{key:?}"
                );
                checked += 1;
            }
        }
        assert!(
            checked > 0,
            "{file}: no compiler of the corpus is installed"
        );
    }
}

#[test]
fn conclusions_on_real_crates_say_what_they_depend_on() {
    let input = read_crate_root(&corpus().join("proc_macro2_1_0_95.rs")).unwrap();
    let text = audit_everywhere("audit-corpus-proc-macro2", input).human(false);
    assert!(
        text.contains("unless a condition it cannot decide holds: "),
        "{text}"
    );
    assert!(text.contains("doc_cfg (if `docsrs`)"), "{text}");
    assert!(
        !text.contains("Needs RUSTC_BOOTSTRAP on every release probed"),
        "{text}"
    );

    let input = read_crate_root(&corpus().join("zerocopy_0_8_25.rs")).unwrap();
    let report = audit_everywhere("audit-corpus-zerocopy", input);
    let text = report.human(false);
    assert!(
        text.contains(
            "for another target: stdarch_arm_dsp, stdarch_arm_neon_intrinsics, stdarch_powerpc"
        ),
        "{text}"
    );
    assert!(
        !text.contains("No probed release knows every active feature"),
        "{text}"
    );
}

#[test]
fn a_name_that_breaks_the_probe_is_probed_alone() {
    let input = read_feature_list("lint_reasons,staged_api,no_such_feature").unwrap();
    let mut options = Options::new(input);
    options.toolchains = vec![current_rustc().to_string_lossy().into_owned()];
    options.scratch = scratch_dir("audit-staged-api");
    let report = run_audit(&options).unwrap();
    let Probed::Answered(answer) = &report.columns[0].probed else {
        panic!("{:?}", report.columns[0]);
    };
    assert!(matches!(answer.statuses[0], Status::Stable(_)));
    assert_eq!(answer.statuses[1..], [Status::Gated, Status::Unknown]);
    assert_eq!(answer.breakers.len(), 1);
    assert_eq!(answer.breakers[0].0, "staged_api");
    assert!(
        answer.breakers[0].1.contains("stability attribute"),
        "{:?}",
        answer.breakers
    );
}

#[test]
fn proc_macro_crates_and_version_conditions_are_probed_as_built() {
    let directory = scratch_dir("audit-proc-macro-crate");
    std::fs::create_dir_all(directory.join("src")).unwrap();
    std::fs::write(
        directory.join("Cargo.toml"),
        "[package]\nname = \"m\"\nversion = \"0.0.0\"\n\n[lib]\nproc-macro = true\n",
    )
    .unwrap();
    std::fs::write(
        directory.join("src/lib.rs"),
        "#![feature(proc_macro_span)]\n\
         #![cfg_attr(not(version(\"1.79\")), feature(inline_const))]\n\
         #![cfg_attr(version(\"1.79\"), feature(cfg_version))]\n",
    )
    .unwrap();
    let mut options = Options::new(read_crate_root(&directory).unwrap());
    options.toolchains = vec![current_rustc().to_string_lossy().into_owned()];
    options.scratch = directory.join("scratch");
    let report = run_audit(&options).unwrap();
    let json = report.to_json();
    let features = json.get("toolchains").and_then(Value::as_array).unwrap()[0]
        .get("features")
        .unwrap()
        .clone();
    let field = |name: &str, key: &str| features.get(name).and_then(|f| f.get(key)).cloned();
    assert_eq!(
        field("proc_macro_span", "status"),
        Some(Value::String("gated".into()))
    );
    assert_eq!(field("inline_const", "active"), Some(Value::Bool(false)));
    assert_eq!(field("cfg_version", "active"), Some(Value::Bool(true)));
}
