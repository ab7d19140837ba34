//! One step of the plan run: its cached result, or its processes one after another, judged,
//! and cached when the result is the compiler's word rather than the machine's.

use crate::cache::{file_stamp, Cache, Key};
use crate::expect::Outcome;
use crate::judge::{judge, StepResult};
use crate::jump_table::check_object;
use crate::plan::{Check, Step};
use crate::process::{self, describe_spawn_error, missing_library, Killed, ProcessOutput};
use std::os::fd::RawFd;
use std::time::Duration;

/// How every process is treated: the per-process timeout, and the descriptor of the matrix's
/// lock that processes inherit (see [`process::run_holding`]).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Any one process is killed (with its process group) after this long.
    pub timeout: Duration,
    /// The lock's descriptor, if the run holds one.
    pub lock: Option<RawFd>,
}

/// What a process says when the machine, not its input, made it fail: the messages of
/// EAGAIN, ENOMEM, ENFILE, EMFILE and ENOSPC as Rust's `io::Error` and the C library print
/// them, and Rust's own allocation failure.
const MACHINE_TROUBLE: [&str; 11] = [
    "Resource temporarily unavailable",
    "(os error 11)",
    "Cannot allocate memory",
    "(os error 12)",
    "Too many open files",
    "(os error 23)",
    "(os error 24)",
    "No space left on device",
    "(os error 28)",
    "memory allocation of",
    "failed to spawn thread",
];

/// Whether a process's result is the compiler's (or the program's) word on its inputs, so
/// that it may be cached: it ran to an exit code of its own and its output was read to the
/// end. Not when it was killed (timeout, interrupt), died of a signal (a crash may be the
/// machine's, such as the OOM killer), could not start (a missing shared library is the
/// environment's fault), or said the machine ran out of processes, threads, memory,
/// descriptors or disk.
pub fn is_repeatable(output: &ProcessOutput) -> bool {
    let machine_trouble = |text: &str| MACHINE_TROUBLE.iter().any(|sign| text.contains(sign));
    output.killed.is_none()
        && output.complete
        && output.status.is_some_and(|status| status.code().is_some())
        && missing_library(&output.stderr).is_none()
        && !machine_trouble(&output.stderr)
        && !machine_trouble(&output.stdout)
}

/// Runs a step's processes, each only after the one before it succeeded, or reads its cached
/// result.
pub fn run_step(step: &Step, key: Key, cache: &Cache, limits: Limits) -> StepResult {
    if let Some(result) = cache.load(key, step.artifact.as_deref()) {
        return result;
    }
    for directory in &step.directories {
        if let Err(error) = std::fs::create_dir_all(directory) {
            return StepResult::failed(format!("creating {}: {error}", directory.display()));
        }
    }
    let mut outputs = Vec::new();
    let mut cacheable = true;
    for invocation in &step.processes {
        let output = match process::run_holding(invocation, limits.timeout, limits.lock) {
            Ok(output) => output,
            Err(error) => {
                return StepResult::failed(describe_spawn_error(&invocation.program, &error))
            }
        };
        cacheable &= is_repeatable(&output);
        if output.killed == Some(Killed::Interrupted) {
            return StepResult::interrupted();
        }
        let succeeded = output.success();
        outputs.push(output);
        if !succeeded {
            break;
        }
    }
    let mut result = judge(step, &outputs, limits.timeout);
    if let (Some(check), Outcome::Pass) = (&step.check, result.outcome) {
        if let Err((error, repeatable)) = run_check(check, &mut result) {
            result.outcome = Outcome::Fail;
            result.first_error = Some(error);
            cacheable &= repeatable;
        }
    }
    if cacheable {
        let artifact = step.artifact.as_deref().and_then(file_stamp);
        // A cache that cannot be written costs a rerun next time, nothing more.
        let _ = cache.store(key, &result, artifact);
    }
    result
}

/// The largest object a check reads.
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
            let bytes = crate::files::read_bytes(object, OBJECT_LIMIT)
                .map_err(|error| (format!("reading {}: {error:#}", object.display()), false))?;
            let expected: Vec<(&str, usize)> = expected
                .iter()
                .map(|(key, count)| (key.as_str(), *count))
                .collect();
            let sites = check_object(&bytes, arch, &expected)
                .map_err(|error| (format!("{}: {error}", object.display()), true))?;
            result.log = Some(match sites.len() {
                0 => "no static-branch sites: the load-and-branch replacement".to_string(),
                count => {
                    format!("{count} static-branch sites, each a NOP with its __jump_table entry")
                }
            });
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Kind, Mode};
    use crate::process::Invocation;
    use std::path::PathBuf;

    /// A step of `kind` whose one process is `sh -c script`.
    fn shell_step(kind: Kind, script: &str) -> Step {
        Step {
            toolchain: 0,
            kind,
            target: "rust_minimal".into(),
            mode: Some(Mode::Kernel),
            processes: vec![Invocation {
                program: PathBuf::from("/bin/sh"),
                args: vec!["-c".into(), script.into()],
                env: Vec::new(),
                env_remove: Vec::new(),
            }],
            artifact: None,
            directories: Vec::new(),
            inputs: Vec::new(),
            deps: Vec::new(),
            platform: None,
            check: None,
        }
    }

    /// Runs the step against a fresh cache; its result and whether the cache kept it.
    fn run_and_look(name: &str, step: &Step) -> (StepResult, bool) {
        let directory = crate::project_root()
            .join("target/kshim/unit-tests/runner")
            .join(name);
        let _ = std::fs::remove_dir_all(&directory);
        let cache = Cache::new(directory, true);
        let key = Key(1);
        let limits = Limits {
            timeout: Duration::from_secs(60),
            lock: None,
        };
        let result = run_step(step, key, &cache, limits);
        let kept = cache.load(key, None).is_some();
        (result, kept)
    }

    #[test]
    fn the_compilers_word_is_cached_the_machines_is_not() {
        let (result, kept) = run_and_look(
            "compiler",
            &shell_step(
                Kind::Build,
                "echo 'error[E0425]: cannot find value `x` in this scope' >&2; exit 1",
            ),
        );
        assert_eq!(result.outcome, Outcome::Fail);
        assert!(kept, "a compile error is the compiler's word");

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
    fn a_killed_core_build_fails_and_is_not_kept() {
        let mut step = shell_step(Kind::Core, "sleep 5");
        step.mode = None;
        let directory = crate::project_root().join("target/kshim/unit-tests/runner/core-killed");
        let _ = std::fs::remove_dir_all(&directory);
        let cache = Cache::new(directory, true);
        let limits = Limits {
            timeout: Duration::from_secs(1),
            lock: None,
        };
        let result = run_step(&step, Key(2), &cache, limits);
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
            expected: Vec::new(),
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
