// SPDX-License-Identifier: GPL-2.0
//! Tests of the bench: the plain run's Makefile, run by a real make, and the checks of a
//! timed run.

use super::*;
use crate::run::plan::{Mode, Step};
use crate::util::process::Invocation;
use xshell::cmd;

/// A step of `kind` running `programs` (each with `args`) after the steps `deps`.
fn step(kind: Kind, target: &str, deps: &[usize], programs: &[&str], args: &[&str]) -> Step {
    let args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
    let processes = programs
        .iter()
        .map(|program| Invocation::new(program, args.clone()))
        .collect();
    let mode = (kind != Kind::Probe).then_some(Mode::Kernel);
    Step {
        directories: vec![format!("/o/{target}").into()],
        deps: deps.to_vec(),
        ..Step::new(0, kind, target, mode, processes)
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
fn the_makefile_has_a_target_per_step_after_its_dependencies() {
    let text = makefile(&plan());
    // A stable-mode line runs without the variable that kernel-mode lines set.
    assert!(text.contains("\nunexport RUSTC_BOOTSTRAP\n"), "{text}");
    assert!(
        text.contains("directories:\n\tmkdir -p /o/features /o/kernel /o/m\n"),
        "{text}"
    );
    assert!(text.contains("all: s0 s1 s2 s3 s4 s5\n"), "{text}");
    // Every step once, after its dependencies; the probe's status ignored; quoting kept and
    // `$` doubled for make.
    for recipe in [
        "s0: directories\n\t/r/rustc probe.rs || true\n",
        "s1: directories\n\tRUSTC_BOOTSTRAP=1 /r/rustc lib.rs\n",
        "s2: directories\n\t/r/rustc && /o/kernel-test\n",
        "s3: directories s1\n\t/r/rustc m.rs\n",
        "s4: directories s3\n\t/o/m\n",
        "s5: directories s1\n\t/r/rustc 'it'\\''s' && /o/m-test 'it'\\''s'\n",
    ] {
        assert!(text.contains(recipe), "{recipe:?} in {text}");
    }
    let mut dollar = plan();
    dollar[4].processes[0].args = vec!["$HOME".into()];
    assert!(makefile(&dollar).contains("\t/o/m '$$HOME'\n"));
}

#[test]
fn the_makefile_runs_in_a_real_make() {
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
    let path = directory.join("plain.mk");
    let run = |steps: &[Step]| {
        std::fs::write(&path, makefile(steps)).unwrap();
        let sh = xshell::Shell::new().unwrap();
        let make = cmd!(sh, "make -r -s -k -j 2 -f {path}")
            .quiet()
            .ignore_status();
        make.output().unwrap().status.code()
    };
    std::fs::create_dir_all(&directory).unwrap();
    let passed = run(&steps);
    steps.push(step(Kind::Test, "ex", &[1], &["false"], &[]));
    let failed = run(&steps);
    std::fs::remove_dir_all(&directory).unwrap();
    assert_eq!((passed, failed), (Some(0), Some(2)));
}

#[test]
fn statistics_of_the_runs() {
    assert_eq!(min_median_max(&[3.0, 1.0, 2.0]), [1.0, 2.0, 3.0]);
    assert_eq!(min_median_max(&[4.0, 1.0, 2.0, 3.0])[1], 2.5);
    assert!(min_median_max(&[])[1].is_nan());
}

#[test]
fn a_timed_run_is_all_cold_or_all_warm() {
    let ran = |cached| StepResult {
        outcome: Outcome::Pass,
        cached,
        ..StepResult::skipped(String::new())
    };
    let skipped = StepResult::skipped("not run: kernel build failed".into());
    let cold = [ran(false), ran(false), skipped.clone()];
    let warm = [ran(true), ran(true), skipped];
    assert_eq!(check_run(&cold, 3, false, "cold").unwrap(), 1);
    assert_eq!(check_run(&warm, 3, true, "warm").unwrap(), 1);
    assert!(check_run(&warm, 3, false, "cold").is_err());
    assert!(check_run(&cold, 3, true, "warm").is_err());
    assert!(check_run(&[ran(true), ran(false)], 2, true, "warm").is_err());
    // Not the work the bench planned.
    assert!(check_run(&cold, 4, false, "cold").is_err());
}
