// SPDX-License-Identifier: GPL-2.0
//! One step of the plan run: its cached result, or its processes one after another, judged,
//! and cached only when the result is the compiler's word on the code rather than the
//! machine's.

use crate::features::expect::Outcome;
use crate::run::cache::{file_stamp, Cache, Key};
use crate::run::judge::{judge, StepResult};
use crate::run::plan::{Check, Kind, Step};
use crate::targets::jump_table::check_object;
use crate::util::diagnostics::error_files;
use crate::util::process::{self, describe_spawn_error, missing_library, Killed, ProcessOutput};
use std::os::fd::RawFd;
use std::path::Path;
use std::time::Duration;

/// What a process says when the machine, not its input, made it fail: an `io::Error` as Rust
/// prints it, the C library's words for the commonest, and Rust's allocation failure.
const MACHINE_TROUBLE: [&str; 7] = [
    "(os error ",
    "Resource temporarily unavailable",
    "Cannot allocate memory",
    "No space left on device",
    "Read-only file system",
    "memory allocation of",
    "failed to spawn thread",
];

/// What rustc says when its linker, another program, failed rather than the code.
const LINKER_FAILURE: [&str; 3] = [
    "linking with `",
    "could not exec the linker",
    "error: linker `",
];

/// Whether the `index`th process of `step` gave the compiler's (or the program's) word on its
/// inputs, so that its result may be cached: it ended with an exit code, was read to the end,
/// found its libraries and said nothing of the machine's trouble; and if it failed, it said why
/// in terms of the code: rustc an error in the step's own sources (not the provisioned library
/// sources, which may be damaged) and not its linker's, a test program its failed checks.
pub fn is_the_compilers_word(step: &Step, index: usize, output: &ProcessOutput) -> bool {
    let machine_trouble = |text: &str| MACHINE_TROUBLE.iter().any(|sign| text.contains(sign));
    let ran_to_its_end = output.complete
        && output.code().is_some()
        && missing_library(&output.stderr).is_none()
        && !machine_trouble(&output.stderr)
        && !machine_trouble(&output.stdout);
    if !ran_to_its_end {
        return false;
    }
    if output.success() {
        return true;
    }
    let compiles = !matches!(step.kind, Kind::Run) && index == 0;
    if compiles {
        // rustc's own errors end with status 1; 101 is a panic of the compiler, or Cargo's
        // status when the rustc it ran failed (rustc's diagnostics are then on its stdout).
        let code = match step.kind {
            Kind::CargoUsage => 101,
            _ => 1,
        };
        output.code() == Some(code)
            && !LINKER_FAILURE
                .iter()
                .any(|sign| output.stderr.contains(sign))
            && error_files(&step.kind.diagnostics(output))
                .iter()
                .any(|file| is_own_source(step, file))
    } else {
        match step.kind {
            Kind::Test => crate::util::libtest::TestSummary::parse(&output.stdout)
                .is_some_and(|summary| summary.failed > 0),
            Kind::Emulate => output
                .stdout
                .lines()
                .any(|line| line.starts_with("FAILED: ")),
            _ => false,
        }
    }
}

/// The provisioned file that rustc's error names, when a `core` step failed in it.
fn provisioned_error_file(step: &Step, outputs: &[ProcessOutput]) -> Option<String> {
    let failed = |output: &&ProcessOutput| step.kind == Kind::Core && !output.success();
    let compile = outputs.first().filter(failed)?;
    error_files(&compile.stderr)
        .into_iter()
        .find(|file| !is_own_source(step, file) && !file.starts_with('<'))
}

/// Whether `file`, as a diagnostic names it, is one of the step's own input files, or the
/// `<crate attribute>` of a `-Zcrate-attr` on its command line, which the cache key holds too.
fn is_own_source(step: &Step, file: &str) -> bool {
    if file == "<crate attribute>" {
        let mut args = step.processes.iter().flat_map(|process| &process.args);
        return args.any(|arg| arg.starts_with("-Zcrate-attr"));
    }
    let named = Path::new(file);
    // A directory's files are its own; a relative name starts from the directory or a
    // directory above it (Cargo names them from the workspace's root).
    let in_directory = |directory: &Path| {
        directory.ancestors().any(|above| {
            let path = above.join(named);
            path.starts_with(directory) && path.is_file()
        })
    };
    step.inputs.iter().any(|input| {
        input == named
            || input.ends_with(named)
            || named.ends_with(input)
            || (input.is_dir() && in_directory(input))
    })
}

/// Runs a step's processes, each only after the one before it succeeded, or reads its cached
/// result; each process inherits `lock` ([`process::run_holding`]).
pub fn run_step(
    step: &Step,
    key: Key,
    cache: &Cache,
    timeout: Duration,
    lock: Option<RawFd>,
) -> StepResult {
    if let Some(result) = cache.load(key, step.artifact.as_deref()) {
        return result;
    }
    for directory in &step.directories {
        if let Err(error) = std::fs::create_dir_all(directory) {
            return StepResult::failed(format!("creating {}: {error}", directory.display()));
        }
    }
    for output in &step.outputs {
        // An output left from an earlier run would be taken for this run's.
        if let Err(error) = std::fs::remove_file(output) {
            if error.kind() != std::io::ErrorKind::NotFound {
                let output = output.display();
                return StepResult::failed(format!(
                    "removing the old {output} before building it again: {error}"
                ));
            }
        }
    }
    let mut outputs = Vec::new();
    let mut cacheable = true;
    for (index, invocation) in step.processes.iter().enumerate() {
        let output = match process::run_holding(invocation, timeout, lock) {
            Ok(output) => output,
            Err(error) => {
                return StepResult::failed(describe_spawn_error(&invocation.program, &error))
            }
        };
        cacheable &= is_the_compilers_word(step, index, &output);
        if output.status == Err(Killed::Interrupted) {
            return StepResult::interrupted();
        }
        let succeeded = output.success();
        outputs.push(output);
        if !succeeded {
            break;
        }
    }
    let mut result = judge(step, &outputs, timeout);
    if let Some(file) = provisioned_error_file(step, &outputs) {
        // The compiler's own library sources do not fail to build on it unless they changed.
        result.first_error = Some(format!(
            "{} (in {file}, a provisioned file, not kshim's: it may be damaged; `cargo xtask \
             toolchains verify` checks every provisioned file against its digest, `cargo xtask \
             toolchains install` repairs what is damaged)",
            result.first_error.unwrap_or_default()
        ));
    }
    if result.outcome == Outcome::Fail && outputs.iter().all(ProcessOutput::success) {
        // Every process succeeded and the judge found otherwise: no verdict to keep.
        cacheable = false;
    }
    if result.outcome == Outcome::Pass {
        if let Some(missing) = step.outputs.iter().find(|output| !output.is_file()) {
            result.outcome = Outcome::Fail;
            result.first_error = Some(format!(
                "{} succeeded but did not write {}: a program it ran (the linker) claimed work \
                 it did not do",
                step.processes[0].program.display(),
                missing.display()
            ));
            cacheable = false;
        }
    }
    if let (Some(check), Outcome::Pass) = (&step.check, result.outcome) {
        if let Err((error, repeatable)) = run_check(check, &mut result) {
            result.outcome = Outcome::Fail;
            result.first_error = Some(error);
            cacheable &= repeatable;
        }
    }
    if cacheable {
        let artifact = step.artifact.as_deref().and_then(file_stamp);
        cache.store(key, &result, artifact);
    }
    result
}

const OBJECT_LIMIT: u64 = 256 << 20;

/// Makes a step's own check, noting what it found in the result's log; a failure says whether
/// it is the object's (repeatable) or the file system's.
fn run_check(check: &Check, result: &mut StepResult) -> Result<(), (String, bool)> {
    match check {
        Check::JumpTable {
            object,
            arch,
            expected,
        } => {
            let bytes = crate::util::files::read_bytes(object, OBJECT_LIMIT)
                .map_err(|error| (format!("reading {}: {error:#}", object.display()), false))?;
            let sites = check_object(&bytes, arch, expected)
                .map_err(|error| (format!("{}: {error}", object.display()), true))?;
            result.log = Some(match sites.len() {
                0 => "no static-branch sites: the load-and-branch replacement".to_string(),
                count => {
                    format!("{count} static-branch sites, each a NOP with its __jump_table entry")
                }
            });
            Ok(())
        }
        Check::Metadata(directory) => {
            let entries = std::fs::read_dir(directory)
                .map_err(|error| (format!("reading {}: {error}", directory.display()), false))?;
            let rmeta =
                |name: &std::ffi::OsStr| Path::new(name).extension() == Some("rmeta".as_ref());
            if entries.flatten().any(|entry| rmeta(&entry.file_name())) {
                return Ok(());
            }
            let error = "the compile wrote no metadata, so it compiled nothing and no place could \
                         be found";
            Err((error.to_string(), true))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::plan::{Kind, Mode};
    use crate::util::process::Invocation;
    use std::path::PathBuf;

    /// A step of `kind` whose one process is `sh -c script`.
    fn shell_step(kind: Kind, script: &str) -> Step {
        let script = Invocation::new("/bin/sh", vec!["-c".into(), script.into()]);
        Step::new(0, kind, "rust_minimal", Some(Mode::Kernel), vec![script])
    }

    /// Runs the step against a fresh cache; its result and whether the cache kept it.
    fn run_and_look(name: &str, step: &Step) -> (StepResult, bool) {
        let directory = crate::project_root()
            .join("target/kshim/unit-tests/runner")
            .join(name);
        let _ = std::fs::remove_dir_all(&directory);
        let cache = Cache::new(directory, true);
        let key = Key(1);
        let result = run_step(step, key, &cache, Duration::from_secs(60), None);
        let kept = cache.load(key, None).is_some();
        (result, kept)
    }

    #[test]
    fn the_compilers_word_is_cached_the_machines_is_not() {
        let mut located = shell_step(
            Kind::Build,
            "printf 'error[E0425]: cannot find value `x` in this scope\\n --> examples/x.rs:3:5\\n' \
             >&2; exit 1",
        );
        located.inputs = vec![PathBuf::from("/tree/examples/x.rs")];
        let (result, kept) = run_and_look("compiler", &located);
        assert_eq!(result.outcome, Outcome::Fail);
        assert!(
            kept,
            "a compile error in the step's source is the compiler's word"
        );

        let (result, kept) = run_and_look(
            "linker",
            &shell_step(
                Kind::Build,
                "echo 'error: could not exec the linker `cc`: Resource temporarily unavailable \
                 (os error 11)' >&2; exit 1",
            ),
        );
        assert_eq!(result.outcome, Outcome::Fail);
        assert!(
            !kept,
            "a machine out of processes is not the compiler's word"
        );

        // Something the module started leaves its group and holds stdout open: what was read
        // may lack its end.
        let (result, kept) = run_and_look(
            "held-pipe",
            &shell_step(Kind::Run, "setsid sleep 3 & echo '[info] m: init'"),
        );
        assert_eq!(result.outcome, Outcome::Fail);
        let error = result.first_error.unwrap();
        assert!(error.contains("could not be read to its end"), "{error}");
        assert!(!kept, "an output not read to its end is not cached");
    }

    #[test]
    fn only_an_error_that_names_the_steps_own_source_is_kept() {
        // Each fails as rustc does when something other than the code made it fail; each was
        // cached before (the linker's message, the read-only file system, the error in a
        // damaged library source, the crash and the silent exit were all taken as verdicts).
        let source = "/tree/examples/x.rs";
        let failures = [
            (
                "linker",
                "echo 'error: linking with `cc` failed: exit status: 1' >&2; exit 1",
            ),
            (
                "read-only",
                "echo 'error: could not write output to x.o: Read-only file system (os error \
                 30)' >&2; exit 1",
            ),
            (
                "library",
                "printf 'error[E0463]: cannot find crate\\n --> /provisioned/library/core/src/\
                 lib.rs:1:1\\n' >&2; exit 1",
            ),
            ("signal", "echo 'error: x' >&2; kill -BUS $$"),
            ("silent", "exit 1"),
            (
                "panic",
                "printf 'error: internal compiler error\\n --> examples/x.rs:1:1\\n' >&2; \
                 exit 101",
            ),
        ];
        for (name, script) in failures {
            let mut step = shell_step(Kind::Build, script);
            step.inputs = vec![PathBuf::from(source)];
            let (result, kept) = run_and_look(name, &step);
            assert_eq!(result.outcome, Outcome::Fail, "{name}");
            assert!(!kept, "{name}: {:?} was cached", result.first_error);
        }
        // An error on the `-Zcrate-attr` of the step's own command line (Kbuild's `feature(L)`
        // meeting a driver's own) is the compiler's word on what the key holds; one that names
        // `<crate attribute>` when no such flag was given is not.
        let script = r#"echo '{"level":"error","message":"the feature `a` has already been enabled","spans":[{"file_name":"<crate attribute>"}]}' >&2; exit 1"#;
        let mut kbuild = shell_step(Kind::Kbuild, script);
        let (_, kept) = run_and_look("crate-attr-without-flag", &kbuild);
        assert!(
            !kept,
            "an error on a crate attribute the step did not pass was cached"
        );
        kbuild.processes[0]
            .args
            .push("-Zcrate-attr=feature(a)".into());
        let (result, kept) = run_and_look("crate-attr", &kbuild);
        assert_eq!(result.outcome, Outcome::Fail);
        assert!(
            kept,
            "an error on the step's own -Zcrate-attr was not cached"
        );
        // A test program that counted its failures gave its word; one that crashed did not.
        let mut tests = shell_step(Kind::Test, "true");
        tests.processes.push(Invocation::new(
            "/bin/sh",
            vec![
                "-c".into(),
                "echo '{\"type\":\"suite\",\"event\":\"failed\",\"passed\":1,\"failed\":1,\
                 \"ignored\":0}'; exit 101"
                    .into(),
            ],
        ));
        let (result, kept) = run_and_look("tests-counted", &tests);
        assert_eq!(result.outcome, Outcome::Fail);
        assert!(kept, "counted test failures are the program's word");
        tests.processes[1].args[1] = "kill -SEGV $$".into();
        let (result, kept) = run_and_look("tests-crashed", &tests);
        assert_eq!(result.outcome, Outcome::Fail);
        assert!(!kept, "a crashed test program is not its word");
    }

    #[test]
    fn an_output_is_removed_before_its_step_and_required_after_it() {
        let directory = crate::project_root().join("target/kshim/unit-tests/runner/outputs");
        let _ = std::fs::remove_dir_all(&directory);
        std::fs::create_dir_all(&directory).unwrap();
        let binary = directory.join("rust_minimal");
        std::fs::write(&binary, "an old build").unwrap();
        // A compiler whose linker says it linked, and wrote nothing.
        let mut step = shell_step(Kind::Build, "true");
        step.outputs = vec![binary.clone()];
        let (result, kept) = run_and_look("outputs-missing", &step);
        assert_eq!(
            result.outcome,
            Outcome::Fail,
            "the old binary was taken as new"
        );
        let error = result.first_error.unwrap();
        assert!(error.contains("did not write"), "{error}");
        assert!(!binary.exists(), "the old binary is still there");
        assert!(!kept, "a missing output is not the compiler's word");
        step.processes[0].args[1] = format!("echo new > '{}'", binary.display());
        let (result, kept) = run_and_look("outputs-written", &step);
        assert_eq!(result.outcome, Outcome::Pass);
        assert!(kept);
        assert_eq!(std::fs::read_to_string(&binary).unwrap(), "new\n");
    }

    #[test]
    fn an_emulator_that_exits_0_passes_only_a_program_that_said_it_completed() {
        let run = |name: &str, emulator: &str| {
            let mut step = shell_step(Kind::Emulate, "true");
            step.processes.push(Invocation::new(
                "/bin/sh",
                vec!["-c".into(), emulator.into()],
            ));
            run_and_look(name, &step)
        };
        for (name, emulator) in [
            ("silent", "exit 0"),
            ("cut-short", "echo '  pass: one'; echo '  pass: two'"),
            ("miscounted", "echo '  pass: one'; echo 'ok: 2 checks'"),
            ("none", "echo 'ok: 0 checks'"),
        ] {
            let (result, kept) = run(name, emulator);
            assert_eq!(
                result.outcome,
                Outcome::Fail,
                "{name}: a program never run passed"
            );
            let error = result.first_error.unwrap();
            assert!(
                error.contains("did not say it completed"),
                "{name}: {error}"
            );
            assert!(!kept, "{name}");
        }
        let (result, kept) = run(
            "completed",
            "echo '  pass: one'; echo '  pass: two'; echo 'ok: 2 checks'",
        );
        assert_eq!(result.outcome, Outcome::Pass, "{:?}", result.first_error);
        assert!(kept);
    }

    #[test]
    fn an_error_in_the_provisioned_library_sources_says_they_may_be_damaged() {
        let mut step = shell_step(
            Kind::Core,
            "printf 'error[E0463]: cannot find crate\\n --> /provisioned/library/core/src/lib.rs:1:1\\n' \
             >&2; exit 1",
        );
        step.mode = None;
        step.inputs = vec![PathBuf::from("/provisioned/library/core")];
        let (result, kept) = run_and_look("core-damaged", &step);
        assert_eq!(result.outcome, Outcome::Fail);
        let error = result.first_error.unwrap();
        assert!(
            error.contains("/provisioned/library/core/src/lib.rs, a provisioned file")
                && error.contains("cargo xtask toolchains install"),
            "{error}"
        );
        assert!(
            !kept,
            "a damaged library source was taken for the compiler's word"
        );
    }

    #[test]
    fn a_killed_core_build_fails_and_is_not_kept() {
        let mut step = shell_step(Kind::Core, "sleep 5");
        step.mode = None;
        let directory = crate::project_root().join("target/kshim/unit-tests/runner/core-killed");
        let _ = std::fs::remove_dir_all(&directory);
        let cache = Cache::new(directory, true);
        let result = run_step(&step, Key(2), &cache, Duration::from_secs(1), None);
        assert_eq!(result.outcome, Outcome::Fail);
        let error = result.first_error.unwrap();
        assert!(error.contains("1 s"), "{error}");
        assert!(
            cache.load(Key(2), None).is_none(),
            "a killed build is not cached"
        );
    }

    #[test]
    fn an_object_that_fails_its_check_fails_the_step() {
        let directory = crate::project_root().join("target/kshim/unit-tests/runner/check");
        let _ = std::fs::remove_dir_all(&directory);
        std::fs::create_dir_all(&directory).unwrap();
        let object = directory.join("not-an-object.o");
        let mut step = shell_step(
            Kind::Objects,
            &format!("printf 'not an ELF file' > '{}'", object.display()),
        );
        step.check = Some(Check::JumpTable {
            object: object.clone(),
            arch: "aarch64",
            expected: &[],
        });
        let (result, kept) = run_and_look("check-garbage", &step);
        assert_eq!(result.outcome, Outcome::Fail);
        let error = result.first_error.unwrap();
        assert!(error.contains("not-an-object.o"), "{error}");
        assert!(kept, "what the object holds is the compiler's word");

        step.processes[0].args[1] = "true".into();
        std::fs::remove_file(&object).unwrap();
        let (result, kept) = run_and_look("check-missing", &step);
        assert_eq!(result.outcome, Outcome::Fail);
        assert!(result.first_error.unwrap().contains("reading"));
        assert!(
            !kept,
            "an object the file system lost is not the compiler's word"
        );
    }
}
