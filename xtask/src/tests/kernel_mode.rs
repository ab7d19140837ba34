// SPDX-License-Identifier: GPL-2.0
//! Kernel-mode tests: the shim and every example built with rustc the way Kbuild builds them,
//! with the compiler running these tests.
//!
//! - Every example prints the same, non-empty module log in kernel mode and in stable mode.
//! - For every catalog feature F, `gated_matches_replacement_F` ran and passed in kernel mode;
//!   the pre-1.84 `CoerceUnsized` path is also built and tested, by withholding
//!   `CONFIG_RUSTC_HAS_COERCE_POINTEE` on a compiler that still has those features.
//! - Kbuild's rules bite: a driver that enables an allowed feature itself gets E0636 (or the
//!   `duplicate_features` lint), one outside the list E0725.
//! - `cargo xtask matrix` on this compiler agrees with the catalog on every cell, writes its
//!   JSON report, and answers a second run from its cache.
//!
//! They use the xtask's own command lines ([`crate::run::plan::Rustc`]), so that what is tested
//! here is exactly what the matrix runs on every other compiler.

use crate::catalog::{allowed_features, FEATURES, HAS_COERCE_POINTEE};
use crate::commands::matrix::{run_matrix, Options};
use crate::features::cfg::Predicate;
use crate::features::expect::expected_kbuild_error;
use crate::project_root;
use crate::run::plan::{examples, kbuild_fixture, mode_cfgs, Example, Layout, Mode, Output, Rustc};
use crate::tests::support::{current_rustc, scratch_dir};
use crate::util::diagnostics::error_diagnostics;
use crate::util::diagnostics::first_rustc_error;
use crate::util::json::{self, Value};
use crate::util::libtest::TestSummary;
use crate::util::process::Invocation;
use crate::util::process::{run, ProcessOutput};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(300);

/// The compiler these tests run under, with the environment it needs.
pub(super) fn compiler() -> Rustc {
    compiler_at(current_rustc())
}

/// The compiler at `path`, with the environment it needs.
pub(super) fn compiler_at(path: PathBuf) -> Rustc {
    let env = crate::toolchains::discovery::library_path_env(&path);
    let output = run(
        &Invocation {
            program: path.clone(),
            args: vec!["-vV".into()],
            env: env.clone(),
            env_remove: Vec::new(),
        },
        TIMEOUT,
    )
    .unwrap_or_else(|error| panic!("running {} -vV: {error}", path.display()));
    let version = crate::toolchains::version::parse_verbose_version(&output.stdout)
        .unwrap_or_else(|error| panic!("{} -vV: {error}", path.display()));
    Rustc {
        launch: crate::toolchains::loader::Launch {
            rustc: path,
            env,
            loader: None,
        },
        release: version.release,
    }
}

/// Runs a process; a failure is returned as a message with the command's first error.
fn run_ok(invocation: &Invocation) -> Result<ProcessOutput, String> {
    let output = run(invocation, TIMEOUT)
        .map_err(|error| format!("cannot run {}: {error}", invocation.program.display()))?;
    if output.success() {
        Ok(output)
    } else {
        Err(format!(
            "`{}` failed: {}\n{}{}",
            invocation,
            first_rustc_error(&output.stderr).unwrap_or_default(),
            output.stdout,
            output.stderr
        ))
    }
}

/// Runs a test binary built from `invocation` at `binary` and reads libtest's report.
fn build_and_run_tests(
    rustc: &Rustc,
    invocation: &Invocation,
    binary: &Path,
) -> Result<TestSummary, String> {
    run_ok(invocation)?;
    let output = run_ok(&crate::run::plan::test_run(rustc, binary))?;
    TestSummary::parse(&output.stdout)
        .ok_or_else(|| format!("{} printed no `test result:` line", binary.display()))
}

/// The shim's rlib for `mode` and `cfgs`, built into `directory`.
pub(super) fn build_shim(rustc: &Rustc, mode: Mode, cfgs: &[&str], directory: &Path) -> PathBuf {
    std::fs::create_dir_all(directory).unwrap();
    let invocation = rustc.shim(&project_root(), mode, cfgs, Output::Directory(directory));
    if let Err(message) = run_ok(&invocation) {
        panic!("the shim does not build in {} mode: {message}", mode.word());
    }
    directory.join("libkernel.rlib")
}

/// The example `name` compiled by `rustc` in `mode` to the one object `directory/<name>.o`, as
/// Kbuild compiles a crate to one `.o` (on a shim built into `directory/shim`): the invocation,
/// for the caller to add its flags to and run, and the object's path.
pub(super) fn example_object(
    rustc: &Rustc,
    mode: Mode,
    name: &str,
    directory: &Path,
) -> (Invocation, PathBuf) {
    let cfgs = mode_cfgs(rustc.release, mode, None);
    let rlib = build_shim(rustc, mode, &cfgs, &directory.join("shim"));
    let example = examples(&project_root())
        .unwrap()
        .into_iter()
        .find(|example| example.name == name)
        .unwrap_or_else(|| panic!("examples/Cargo.toml declares no {name}"));
    // One codegen unit's object, which rustc names after the crate in the directory.
    let object_file = directory.join(format!("{name}.o"));
    let mut invocation = rustc.example(&example, mode, &cfgs, &rlib, Output::Directory(directory));
    for arg in &mut invocation.args {
        if arg == "--emit=link" {
            "--emit=obj".clone_into(arg);
        }
    }
    invocation
        .args
        .extend(["-C".into(), "codegen-units=1".into()]);
    (invocation, object_file)
}

fn all_examples() -> Vec<Example> {
    let examples = examples(&project_root()).expect("reading examples/Cargo.toml");
    assert!(
        examples
            .iter()
            .any(|example| example.name == "rust_minimal"),
        "examples/Cargo.toml lists no rust_minimal: {examples:?}"
    );
    examples
}

#[test]
fn examples_log_the_same_in_kernel_mode_and_stable_mode() {
    let rustc = compiler();
    let examples = all_examples();
    let scratch = scratch_dir("module_logs");
    let logs_per_mode: Vec<Vec<Result<String, String>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = Mode::ALL
            .map(|mode| {
                let (rustc, examples, scratch) = (&rustc, &examples, &scratch);
                scope.spawn(move || {
                    let directory = scratch.join(mode.word());
                    let cfgs = mode_cfgs(rustc.release, mode, None);
                    let rlib = build_shim(rustc, mode, &cfgs, &directory);
                    examples
                        .iter()
                        .map(|example| {
                            let build = rustc.example(
                                example,
                                mode,
                                &cfgs,
                                &rlib,
                                Output::Directory(&directory),
                            );
                            run_ok(&build)?;
                            let binary = directory.join(&example.name);
                            run_ok(&crate::run::plan::binary_run(rustc, &binary))
                                .map(|output| output.stdout)
                        })
                        .collect()
                })
            })
            .into_iter()
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("a build thread panicked"))
            .collect()
    });
    let mut problems = Vec::new();
    for (index, example) in examples.iter().enumerate() {
        match (&logs_per_mode[0][index], &logs_per_mode[1][index]) {
            (Ok(kernel), Ok(stable)) => {
                if kernel.trim().is_empty() {
                    problems.push(format!("{}: the module logged nothing", example.name));
                } else if kernel != stable {
                    problems.push(format!(
                        "{}: the logs differ\n--- kernel mode\n{kernel}--- stable mode\n{stable}",
                        example.name
                    ));
                }
            }
            (kernel, stable) => {
                for (mode, result) in [("kernel", kernel), ("stable", stable)] {
                    if let Err(message) = result {
                        problems.push(format!("{} ({mode} mode): {message}", example.name));
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// Builds and runs the shim's tests and every example's tests in kernel mode with `cfgs`, and
/// returns each test binary's name and summary, or what failed.
fn kernel_mode_test_runs(
    rustc: &Rustc,
    cfgs: &[&str],
    directory: &Path,
) -> Vec<(String, Result<TestSummary, String>)> {
    let rlib = build_shim(rustc, Mode::Kernel, cfgs, directory);
    let shim_binary = directory.join("kernel-test");
    let shim = rustc.shim(
        &project_root(),
        Mode::Kernel,
        cfgs,
        Output::Tests(&shim_binary),
    );
    let mut runs = vec![(
        "kernel".to_string(),
        build_and_run_tests(rustc, &shim, &shim_binary),
    )];
    for example in all_examples() {
        let binary = directory.join(format!("{}-test", example.name));
        let invocation = rustc.example(&example, Mode::Kernel, cfgs, &rlib, Output::Tests(&binary));
        runs.push((
            example.name.clone(),
            build_and_run_tests(rustc, &invocation, &binary),
        ));
    }
    runs
}

#[test]
fn every_feature_has_a_passing_equivalence_test_in_kernel_mode() {
    let rustc = compiler();
    let scratch = scratch_dir("equivalence");
    let with_pointee = mode_cfgs(rustc.release, Mode::Kernel, None);
    // The pre-1.84 path, on a compiler that still knows the predecessor features: without the
    // Kconfig symbol lib.rs does not enable `derive_coerce_pointee`, so its form is not there.
    let without_pointee: Vec<&str> = with_pointee
        .iter()
        .copied()
        .filter(|cfg| ![HAS_COERCE_POINTEE.name, "kshim_has_derive_coerce_pointee"].contains(cfg))
        .collect();
    let configurations = [
        ("kernel mode", with_pointee, scratch.join("kernel")),
        (
            "kernel mode without CONFIG_RUSTC_HAS_COERCE_POINTEE",
            without_pointee,
            scratch.join("kernel-without-coerce-pointee"),
        ),
    ];
    let mut problems = Vec::new();
    let mut covered = BTreeSet::new();
    for (label, cfgs, directory) in &configurations {
        let runs = kernel_mode_test_runs(&rustc, cfgs, directory);
        for (binary, run) in &runs {
            match run {
                Err(message) => problems.push(format!("{label}: {binary}: {message}")),
                Ok(summary) if summary.failed > 0 || summary.passed == 0 => problems.push(format!(
                    "{label}: {binary}: {} passed, {} failed",
                    summary.passed, summary.failed
                )),
                Ok(_) => {}
            }
        }
        for feature in FEATURES {
            // The test is compiled wherever the gated form is, which is where lib.rs enables
            // the feature in kernel mode.
            let gate = Predicate::parse(feature.gate).expect("catalog gates parse");
            if !gate
                .holds_with(cfgs)
                .expect("catalog gates ask for cfg names only")
            {
                continue;
            }
            let name = format!("gated_matches_replacement_{}", feature.name);
            let passed = runs
                .iter()
                .filter_map(|(_, run)| run.as_ref().ok())
                .flat_map(|summary| &summary.tests)
                .any(|(path, result)| {
                    (*path == name || path.ends_with(&format!("::{name}"))) && result == "ok"
                });
            if passed {
                covered.insert(feature.name);
            } else {
                problems.push(format!(
                    "{label}: no test named `{name}` ran and passed in the shim or an example"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(
        covered.len(),
        FEATURES.len(),
        "features no configuration covered: {:?}",
        FEATURES
            .iter()
            .map(|feature| feature.name)
            .filter(|name| !covered.contains(name))
            .collect::<Vec<_>>()
    );
}

/// Compiles a fixture as Kbuild compiles a driver, with JSON diagnostics: the matrix's own
/// command line for its Kbuild cells.
fn compile_as_a_driver(rustc: &Rustc, source: &Path, directory: &Path) -> ProcessOutput {
    run(&rustc.kbuild_fixture(source, directory), TIMEOUT).expect("running rustc")
}

#[test]
fn kbuild_refuses_what_a_driver_enables_itself() {
    let rustc = compiler();
    let scratch = scratch_dir("allow_features");

    let outside = compile_as_a_driver(&rustc, &kbuild_fixture("outside_allow_list"), &scratch);
    assert!(
        !outside.success(),
        "a feature outside -Zallow-features compiled:\n{}",
        outside.stderr
    );
    let found = error_diagnostics(&outside.stderr);
    assert!(
        found
            .iter()
            .any(|(code, message)| code == "E0725" && message.contains("`coerce_unsized`")),
        "no E0725 naming coerce_unsized among {found:?}"
    );

    let inside_path = kbuild_fixture("inside_allow_list");
    let inside_text = std::fs::read_to_string(&inside_path).unwrap();
    let enabled: BTreeSet<&str> = inside_text
        .lines()
        .find_map(|line| line.strip_prefix("#![feature(")?.strip_suffix(")]"))
        .expect("the fixture has a #![feature(...)] line")
        .split(',')
        .map(str::trim)
        .collect();
    assert_eq!(
        enabled,
        allowed_features().collect::<BTreeSet<_>>(),
        "{} must enable exactly the catalog's allowed features",
        inside_path.display()
    );
    let inside = compile_as_a_driver(&rustc, &inside_path, &scratch);
    assert!(
        !inside.success(),
        "a driver that enables the allowed features itself compiled:\n{}",
        inside.stderr
    );
    // Every feature it enables is reported, each with the code the catalog predicts.
    let predicted = expected_kbuild_error("inside_allow_list", rustc.release).unwrap();
    let found = error_diagnostics(&inside.stderr);
    for feature in &enabled {
        assert!(
            found
                .iter()
                .any(|(code, message)| code == predicted
                    && message.contains(&format!("`{feature}`"))),
            "no {predicted} naming {feature} among {found:?}"
        );
    }
}

/// Copies what the matrix reads (the shim's sources, the examples and their manifest) to
/// `target/kshim/tests/<name>/`, which is kept between runs so that its cache is too.
fn copy_of_the_sources(name: &str) -> PathBuf {
    fn copy_tree(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let path = entry.unwrap().path();
            let target = to.join(path.file_name().unwrap());
            if path.is_dir() {
                copy_tree(&path, &target);
            } else {
                std::fs::copy(&path, &target).unwrap();
            }
        }
    }
    let root = project_root();
    let copy = root.join("target/kshim/tests").join(name);
    for tree in ["kernel-shim/src", "examples", "xtask/programs"] {
        // A file another run left behind must not become an input.
        let _ = std::fs::remove_dir_all(copy.join(tree));
        copy_tree(&root.join(tree), &copy.join(tree));
    }
    copy
}

#[test]
fn the_matrix_agrees_with_the_catalog_on_this_compiler() {
    let rustc = compiler();
    // A copy of the sources, so that the cache check at the end can change one of them; with
    // its own report and cache, so that the developer's last `cargo xtask matrix` stays.
    let root = copy_of_the_sources("matrix");
    let layout = Layout {
        root: root.clone(),
        kshim: root.join("kshim"),
    };
    let mut options = Options::new(vec![rustc.launch.rustc.to_string_lossy().into_owned()]);
    options.settings.jobs = 2;
    let report = run_matrix(&layout, &options).expect("running the matrix");
    let text = json::to_pretty(&report.to_json());
    let value = json::parse(&text).expect("the report is JSON");
    let written = std::fs::read_to_string(layout.report()).expect("the report file exists");
    let written = json::parse(&written).unwrap();
    // The file is the report, dated with the minute the run ended.
    let date = written.get("date").expect("the report file has a date");
    assert!(
        date.as_str().is_some_and(|date| date.ends_with(" UTC")),
        "{date}"
    );
    assert_eq!(written, value, "the report file differs");

    let get = |value: &Value, key: &str| -> Value {
        value
            .get(key)
            .cloned()
            .unwrap_or_else(|| panic!("no `{key}` in {value}"))
    };
    assert_eq!(
        get(&value, "schema").as_u64(),
        Some(u64::from(crate::report::SCHEMA_VERSION))
    );
    let toolchains = get(&value, "toolchains");
    let toolchains = toolchains.as_array().unwrap();
    assert_eq!(toolchains.len(), 1, "{text}");
    let toolchain = &toolchains[0];
    let id = get(toolchain, "id").as_str().unwrap().to_string();
    assert_eq!(get(toolchain, "verdict").as_str(), Some("ok"), "{text}");
    assert!(get(toolchain, "release")
        .as_str()
        .is_some_and(|release| release.starts_with(&rustc.release.to_string())));
    for key in ["spec", "source", "channel", "commit_date", "error"] {
        get(toolchain, key);
    }

    let features = get(&value, "features");
    let features = features.as_array().unwrap();
    assert_eq!(features.len(), FEATURES.len());
    for (feature, entry) in FEATURES.iter().zip(features) {
        assert_eq!(get(entry, "name").as_str(), Some(feature.name));
        let cell = get(&get(entry, "toolchains"), &id);
        assert_eq!(
            get(&cell, "ok").as_bool(),
            Some(true),
            "{}: the compiler and the catalog disagree: {cell}",
            feature.name
        );
        assert_eq!(get(&cell, "observed"), get(&cell, "expected"));
    }

    let builds = get(&value, "builds");
    let builds = builds.as_array().unwrap();
    // Per mode: the shim's build and tests, and each example's build, run and tests.
    assert_eq!(builds.len(), (2 + 3 * all_examples().len()) * 2);
    let failed: Vec<String> = builds
        .iter()
        .filter(|build| get(build, "ok").as_bool() != Some(true))
        .map(ToString::to_string)
        .collect();
    assert!(
        failed.is_empty(),
        "cells that differ:\n{}",
        failed.join("\n")
    );
    for build in builds {
        assert_eq!(get(build, "outcome").as_str(), Some("pass"));
        if get(build, "kind").as_str() == Some("test") {
            let passed = get(&get(build, "tests"), "passed").as_u64();
            assert!(passed.is_some_and(|passed| passed > 0), "{build}");
        }
    }
    assert_eq!(get(&value, "verdict").as_str(), Some("success"));
    assert_eq!(report.verdict(), crate::Verdict::Success);

    // Nothing changed: the second run answers every step from the cache.
    let start = Instant::now();
    let again = run_matrix(&layout, &options).expect("running the matrix again");
    let elapsed = start.elapsed();
    assert!(
        again.builds.iter().all(|build| build.cached),
        "a warm run rebuilt something"
    );
    assert!(
        elapsed < Duration::from_secs(5),
        "a warm run took {elapsed:?}"
    );

    // One example changes: its six cells run again, nothing else does.
    let changed = root.join("examples/rust_minimal.rs");
    let mut text = std::fs::read_to_string(&changed).unwrap();
    // Different on every run, so that no earlier run's cache entry can match it.
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    text.push_str(&format!(
        "\n// A change that the cache must notice: {nonce}\n"
    ));
    std::fs::write(&changed, text).unwrap();
    let after_change = run_matrix(&layout, &options).expect("running the matrix after a change");
    let rerun: Vec<String> = after_change
        .builds
        .iter()
        .filter(|build| !build.cached)
        .map(|build| {
            format!(
                "{} {} ({})",
                build.kind.word(),
                build.target,
                build.mode.word()
            )
        })
        .collect();
    assert_eq!(
        rerun,
        [
            "build rust_minimal (kernel)",
            "build rust_minimal (stable)",
            "run rust_minimal (kernel)",
            "run rust_minimal (stable)",
            "test rust_minimal (kernel)",
            "test rust_minimal (stable)"
        ]
    );
    assert_eq!(after_change.verdict(), crate::Verdict::Success);

    // An example whose log depends on the mode fails its run cells, with the first difference.
    let text = std::fs::read_to_string(&changed).unwrap();
    let init_line = "pr_info!(\"Rust minimal sample (init)\\n\");";
    assert!(
        text.contains(init_line),
        "{} changed shape",
        changed.display()
    );
    let text = text.replace(
        init_line,
        "pr_info!(\"Rust minimal sample (init) {}\\n\", cfg!(kshim_kernel_mode));",
    );
    std::fs::write(&changed, text).unwrap();
    let diverged = run_matrix(&layout, &options).expect("running the matrix on diverging logs");
    let failures = diverged.failures();
    let cells: Vec<&str> = failures
        .iter()
        .map(|failure| failure.cell.as_str())
        .collect();
    // The example's own test checks the exact log, so it fails too.
    assert_eq!(
        cells,
        [
            "run rust_minimal (kernel)",
            "run rust_minimal (stable)",
            "test rust_minimal (kernel)",
            "test rust_minimal (stable)"
        ],
        "{failures:#?}"
    );
    assert!(
        failures[0].first_error.as_deref().is_some_and(|error| error.contains(
            "differs between the modes at line 1: kernel mode \"[info] rust_minimal: Rust minimal sample (init) true\""
        )),
        "{failures:#?}"
    );
    assert_eq!(diverged.verdict(), crate::Verdict::Failure);
}
