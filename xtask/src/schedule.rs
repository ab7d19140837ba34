//! The step graph's scheduler: at most N steps at once, each after the steps it depends on, a
//! step whose dependency did not pass skipped with the reason; what a step does is the
//! caller's.

use crate::expect::Outcome;
use crate::interrupt::interrupted;
use crate::judge::StepResult;
use crate::plan::Step;
use std::sync::{Condvar, Mutex};
use std::thread;
use std::time::Duration;

/// How often an idle worker looks at [`interrupted`].
const TICK: Duration = Duration::from_millis(50);

/// What the runner reports while it works.
pub trait Progress: Sync {
    /// A step is about to run (not called for cache hits).
    fn started(&self, index: usize, step: &Step);
    /// A step finished; `done` steps of the total are finished now.
    fn finished(&self, index: usize, step: &Step, result: &StepResult, done: usize);
}

/// Runs every step with at most `jobs` at once, each after the steps it depends on; a step
/// whose dependency did not pass is skipped with the reason.
///
/// When the run is [`interrupted`], running processes are killed, no further step starts, and
/// every step that did not finish comes back with `interrupted` set.
pub fn execute(
    steps: &[Step],
    jobs: usize,
    progress: &dyn Progress,
    run_step: &(dyn Fn(usize) -> StepResult + Sync),
) -> Vec<StepResult> {
    struct State {
        started: Vec<bool>,
        results: Vec<Option<StepResult>>,
        done: usize,
    }
    let state = Mutex::new(State {
        started: vec![false; steps.len()],
        results: vec![None; steps.len()],
        done: 0,
    });
    let wake = Condvar::new();
    let worker = || loop {
        let mut guard = state.lock().unwrap_or_else(|poison| poison.into_inner());
        // The lowest-numbered step whose dependencies are finished: the plan puts the steps
        // that others wait for first.
        let next = loop {
            if guard.done == steps.len() || interrupted().is_some() {
                return;
            }
            let ready = (0..steps.len()).find(|&index| {
                !guard.started[index]
                    && steps[index]
                        .deps
                        .iter()
                        .all(|&dep| guard.results[dep].is_some())
            });
            match ready {
                Some(index) => break index,
                // With a timeout, so that an interrupt is noticed by idle workers too.
                None => {
                    guard = wake
                        .wait_timeout(guard, TICK)
                        .unwrap_or_else(|poison| poison.into_inner())
                        .0
                }
            }
        };
        guard.started[next] = true;
        let step = &steps[next];
        let blocked = step.deps.iter().find_map(|&dep| {
            let result = guard.results[dep].as_ref()?;
            (result.outcome != Outcome::Pass).then(|| {
                format!(
                    "not run: {} {}",
                    steps[dep].label(),
                    if result.outcome == Outcome::Fail {
                        "failed"
                    } else {
                        "did not run"
                    }
                )
            })
        });
        drop(guard);
        let result = match blocked {
            Some(reason) => StepResult::skipped(reason),
            None => {
                progress.started(next, step);
                run_step(next)
            }
        };
        let mut guard = state.lock().unwrap_or_else(|poison| poison.into_inner());
        if result.interrupted {
            // Left as not finished: it is reported with the steps that never started.
            drop(guard);
            wake.notify_all();
            return;
        }
        guard.done += 1;
        progress.finished(next, step, &result, guard.done);
        guard.results[next] = Some(result);
        drop(guard);
        wake.notify_all();
    };
    thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(worker);
        }
    });
    state
        .into_inner()
        .unwrap_or_else(|poison| poison.into_inner())
        .results
        .into_iter()
        .map(|result| {
            result.unwrap_or_else(|| {
                let mut result = StepResult::skipped("not run: the run was interrupted".into());
                result.interrupted = true;
                result
            })
        })
        .collect()
}
