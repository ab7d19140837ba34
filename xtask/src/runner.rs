//! One step of the plan run: its cached result, or its processes one after another, judged,
//! and cached when the result is the compiler's word rather than the machine's.

use crate::cache::{file_stamp, Cache, Key};
use crate::judge::{judge, StepResult};
use crate::plan::Step;
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

/// Whether a process's result says something about the inputs, so that it may be cached: it
/// ran to an exit code of its own. Not when it was killed (timeout, interrupt), died of a
/// signal (a crash may be the machine's, such as the OOM killer), or could not start (a
/// missing shared library is the environment's fault).
fn is_repeatable(output: &ProcessOutput) -> bool {
    output.killed.is_none()
        && output.status.is_some_and(|status| status.code().is_some())
        && missing_library(&output.stderr).is_none()
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
    let result = judge(step, &outputs, limits.timeout);
    if cacheable {
        let artifact = step.artifact.as_deref().and_then(file_stamp);
        // A cache that cannot be written costs a rerun next time, nothing more.
        let _ = cache.store(key, &result, artifact);
    }
    result
}
