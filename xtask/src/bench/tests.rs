// SPDX-License-Identifier: GPL-2.0
//! Tests of the bench: the plain run's waves and script, and its checks of the report.

use super::*;
use crate::plan::{Mode, Step};
use crate::process::Invocation;

/// A step of `kind` running `programs` (each with `args`) after the steps `deps`.
fn step(kind: Kind, target: &str, deps: &[usize], programs: &[&str], args: &[&str]) -> Step {
    Step {
        toolchain: 0,
        kind,
        target: target.into(),
        mode: (kind != Kind::Probe).then_some(Mode::Kernel),
        processes: programs
            .iter()
            .map(|program| Invocation {
                program: program.into(),
                args: args.iter().map(|arg| arg.to_string()).collect(),
                env: Vec::new(),
                env_remove: Vec::new(),
            })
            .collect(),
        artifact: None,
        directories: vec![format!("/o/{target}").into()],
        inputs: Vec::new(),
        deps: deps.to_vec(),
        platform: None,
        check: None,
        outputs: Vec::new(),
    }
}

/// One toolchain and one example, in the plan's order.
fn plan() -> Vec<Step> {
    let mut steps = vec![
        step(Kind::Probe, "features", &[], &["/r/rustc"], &["probe.rs"]),
        step(Kind::Build, "kernel", &[], &["/r/rustc"], &["lib.rs"]),
        step(
            Kind::Test,
            "kernel",
            &[],
            &["/r/rustc", "/o/kernel-test"],
            &[],
        ),
        step(Kind::Build, "m", &[1], &["/r/rustc"], &["m.rs"]),
        step(Kind::Run, "m", &[3], &["/o/m"], &[]),
        step(Kind::Test, "m", &[1], &["/r/rustc", "/o/m-test"], &["it's"]),
    ];
    steps[1].processes[0].env = vec![("RUSTC_BOOTSTRAP".into(), "1".into())];
    steps[5].processes[0].env_remove = vec!["RUSTC_BOOTSTRAP".into()];
    steps
}

#[test]
fn groups_the_plan_into_jobs_and_waves_of_a_script() {
    let plain = PlainRun::from_steps(&plan());
    // Only the shim's rlib is needed by others; everything else waits for the last wave,
    // the example's run goes with its build, and a test binary runs after its compile.
    assert_eq!(
        plain.waves,
        [
            vec!["RUSTC_BOOTSTRAP=1 /r/rustc lib.rs".to_string()],
            vec![
                "/r/rustc probe.rs || true".to_string(),
                "/r/rustc && /o/kernel-test".to_string(),
                "/r/rustc m.rs && /o/m".to_string(),
                r"/r/rustc 'it'\''s' && /o/m-test 'it'\''s'".to_string(),
            ],
        ]
    );
    assert_eq!(plain.jobs(), 5);
    // Every process of the plan, none lost and none added.
    assert_eq!(plain.processes, 8);
    let script = plain.script(2);
    assert!(script.starts_with("#!/bin/sh\n"), "{script}");
    // A stable-mode line runs without the variable that kernel-mode lines set.
    let setup = "set -e\nunset RUSTC_BOOTSTRAP\nmkdir -p /o/features /o/kernel /o/m\n";
    assert!(script.contains(setup), "{script}");
    let wave = "| xargs -0 -n 1 -P 2 sh -c || status=1";
    assert_eq!(script.matches(wave).count(), 2, "{script}");
    assert!(
        script.contains("  '/r/rustc m.rs && /o/m' \\\n"),
        "{script}"
    );
    assert!(script.ends_with("exit \"$status\"\n"));
}

#[test]
fn a_chain_of_dependencies_makes_one_wave_per_link() {
    // b and d need a; only c needs b, so c goes with b; e needs c and d.
    let steps = [
        step(Kind::Build, "a", &[], &["a"], &[]),
        step(Kind::Build, "b", &[0], &["b"], &[]),
        step(Kind::Build, "c", &[1], &["c"], &[]),
        step(Kind::Build, "d", &[0], &["d"], &[]),
        step(Kind::Build, "e", &[2, 3], &["e"], &[]),
        step(Kind::Build, "f", &[], &["f"], &[]),
    ];
    assert_eq!(
        PlainRun::from_steps(&steps).waves,
        [vec!["a"], vec!["b && c", "d"], vec!["e", "f"]]
    );
    assert!(PlainRun::from_steps(&[]).waves.is_empty());
}

#[test]
fn the_script_runs_in_a_real_shell() {
    let directory = std::env::temp_dir().join(format!("kshim-xtask-{}-bench", std::process::id()));
    let file = |name: &str| directory.join(name).to_string_lossy().into_owned();
    let (lib, ex) = (file("out/lib"), file("out/ex"));
    let mut steps = vec![
        // A probe that fails must not fail the run.
        step(Kind::Probe, "features", &[], &["false"], &[]),
        step(Kind::Build, "lib", &[], &["touch"], &[&lib]),
        step(Kind::Build, "ex", &[1], &["cp"], &[&lib, &ex]),
        step(Kind::Run, "ex", &[2], &["test"], &["-f", &ex]),
    ];
    for step in &mut steps {
        step.directories = vec![directory.join("out")];
    }
    let script = directory.join("plain.sh");
    let run = |steps: &[Step]| {
        std::fs::write(&script, PlainRun::from_steps(steps).script(2)).unwrap();
        let status = std::process::Command::new("sh").arg(&script).status();
        status.unwrap().code()
    };
    std::fs::create_dir_all(&directory).unwrap();
    let passed = run(&steps);
    steps.push(step(Kind::Test, "ex", &[1], &["false"], &[]));
    let failed = run(&steps);
    std::fs::remove_dir_all(&directory).unwrap();
    assert_eq!((passed, failed), (Some(0), Some(1)));
}

#[test]
fn statistics_of_the_runs() {
    assert_eq!(
        Samples(vec![3.0, 1.0, 2.0]).min_median_max(),
        [1.0, 2.0, 3.0]
    );
    assert_eq!(Samples(vec![4.0, 1.0, 2.0, 3.0]).median(), 2.5);
    assert!(Samples::default().median().is_nan());
}

#[test]
fn the_cache_checks_count_only_cells_with_steps_behind_them() {
    use crate::expect::Outcome;
    use crate::report::{BuildCell, ToolchainEntry};
    let entry = |id: &str, verdict| ToolchainEntry {
        id: id.into(),
        spec: id.into(),
        source: None,
        pin: None,
        rustc: Some(format!("/{id}/rustc")),
        release_text: None,
        release: None,
        channel: None,
        commit_date: None,
        host: None,
        verdict,
    };
    let cell = |toolchain, cached| BuildCell {
        toolchain,
        target: "kernel".into(),
        mode: Mode::Kernel,
        kind: Kind::Build,
        outcome: Outcome::Pass,
        expected: Outcome::Pass,
        first_error: None,
        seconds: 0.1,
        cached,
        tests: None,
    };
    let report = |cached| Report {
        toolchains: vec![
            entry("1.95.0", ToolchainVerdict::Ok),
            entry("1.63.0", ToolchainVerdict::TooOld),
        ],
        features: Vec::new(),
        // The too-old toolchain's cell is a placeholder, never cached.
        builds: vec![cell(0, cached), cell(0, cached), cell(1, false)],
        strict: false,
        kbuild: Vec::new(),
        shard: None,
        platforms: crate::report::platforms::Platforms::default(),
    };
    assert!(check_cache_use(&report(false), 2, false, "cold").is_ok());
    assert!(check_cache_use(&report(true), 2, true, "warm").is_ok());
    assert!(check_cache_use(&report(true), 2, false, "cold").is_err());
    assert!(check_cache_use(&report(false), 2, true, "warm").is_err());
    assert!(check_cache_use(&report(false), 3, false, "cold").is_err());

    // On the target axis, a cell predicted to fail ran; one predicted to be skipped did not.
    let cross = |expected, cached| crate::report::platforms::CrossCell {
        toolchain: 0,
        triple: "loongarch64-unknown-none".into(),
        target: "sites".into(),
        kind: Kind::Objects,
        mode: Some(Mode::Kernel),
        outcome: expected,
        expected,
        first_error: None,
        detail: None,
        seconds: 0.1,
        cached,
    };
    let mut axis = report(true);
    axis.platforms.cross = vec![
        cross(Outcome::Fail, true),
        cross(Outcome::Pass, true),
        cross(Outcome::Skipped, false),
    ];
    assert!(check_cache_use(&axis, 4, true, "warm").is_ok());
    assert!(check_cache_use(&axis, 5, true, "warm").is_err());
}
