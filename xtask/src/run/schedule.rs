// SPDX-License-Identifier: GPL-2.0
//! The step graph's scheduler: at most N steps at once, each after the steps it depends on, a
//! step whose dependency did not pass skipped with the reason; what a step does is the
//! caller's.

use crate::features::expect::Outcome;
use crate::run::judge::StepResult;
use crate::run::plan::Step;
use crate::util::interrupt::{interrupted, TICK};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Condvar, Mutex};
use std::thread;

/// What the runner reports while it works.
pub trait Progress: Sync {
    /// A step is about to run (not called for cache hits).
    fn started(&self, index: usize, step: &Step);
    /// A step finished; `done` steps of the total are finished now.
    fn finished(&self, index: usize, step: &Step, result: &StepResult, done: usize);
}

/// Runs `steps`, at most `jobs` at once. When the run is [`interrupted`], no further step
/// starts, and every step that did not finish comes back with `interrupted` set.
pub fn execute(
    steps: &[Step],
    jobs: usize,
    progress: &dyn Progress,
    run_step: &(dyn Fn(usize) -> StepResult + Sync),
) -> Vec<StepResult> {
    struct State {
        /// Steps whose dependencies have all finished and that no worker has taken yet,
        /// lowest index first: the plan puts the steps that others wait for first.
        ready: BinaryHeap<Reverse<usize>>,
        /// Per step, how many of its dependencies have not finished yet.
        waiting_for: Vec<usize>,
        results: Vec<Option<StepResult>>,
        done: usize,
    }
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); steps.len()];
    for (index, step) in steps.iter().enumerate() {
        for &dep in &step.deps {
            dependents[dep].push(index);
        }
    }
    let waiting_for: Vec<usize> = steps.iter().map(|step| step.deps.len()).collect();
    let ready = (0..steps.len())
        .filter(|&index| waiting_for[index] == 0)
        .map(Reverse)
        .collect();
    let state = Mutex::new(State {
        ready,
        waiting_for,
        results: vec![None; steps.len()],
        done: 0,
    });
    let wake = Condvar::new();
    let worker = || loop {
        let mut guard = state.lock().unwrap_or_else(|poison| poison.into_inner());
        let next = loop {
            if guard.done == steps.len() || interrupted().is_some() {
                return;
            }
            match guard.ready.pop() {
                Some(Reverse(index)) => break index,
                // With a timeout, so that an interrupt is noticed by idle workers too.
                None => {
                    guard = wake
                        .wait_timeout(guard, TICK)
                        .unwrap_or_else(|poison| poison.into_inner())
                        .0
                }
            }
        };
        let step = &steps[next];
        let blocked = step.deps.iter().find_map(|&dep| {
            let why = match guard.results[dep].as_ref()?.outcome {
                Outcome::Pass => return None,
                Outcome::Fail => "failed",
                Outcome::Skipped => "did not run",
            };
            Some(format!("not run: {} {why}", steps[dep].label()))
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
        for &dependent in &dependents[next] {
            guard.waiting_for[dependent] -= 1;
            if guard.waiting_for[dependent] == 0 {
                guard.ready.push(Reverse(dependent));
            }
        }
        drop(guard);
        wake.notify_all();
    };
    // More workers than steps would only wait.
    let workers = jobs.clamp(1, steps.len().max(1));
    thread::scope(|scope| {
        let mut started = 0;
        for _ in 0..workers {
            // A machine that cannot start another thread runs with the workers it has.
            match thread::Builder::new().spawn_scoped(scope, worker) {
                Ok(_) => started += 1,
                Err(_) => break,
            }
        }
        if started == 0 {
            worker();
        }
    });
    state
        .into_inner()
        .unwrap_or_else(|poison| poison.into_inner())
        .results
        .into_iter()
        .map(|result| result.unwrap_or_else(StepResult::interrupted))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::plan::Kind;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Instant;

    struct Quiet;

    impl Progress for Quiet {
        fn started(&self, _: usize, _: &Step) {}
        fn finished(&self, _: usize, _: &Step, _: &StepResult, _: usize) {}
    }

    fn step(deps: Vec<usize>) -> Step {
        Step {
            deps,
            ..Step::new(0, Kind::Build, "kernel", None, Vec::new())
        }
    }

    #[test]
    fn steps_run_after_their_dependencies_in_linear_time() {
        // Many independent steps and a long chain: a scheduler that scans every step for the
        // next ready one takes minutes here.
        let count = 50_000;
        let steps: Vec<Step> = (0..count)
            .map(|index| match index {
                0 => step(Vec::new()),
                _ if index % 2 == 0 => step(vec![index - 2]),
                _ => step(vec![0]),
            })
            .collect();
        let clock = AtomicUsize::new(0);
        let finished_at: Vec<AtomicUsize> = (0..count).map(|_| AtomicUsize::new(0)).collect();
        let start = Instant::now();
        let results = execute(&steps, 4, &Quiet, &|index| {
            finished_at[index].store(clock.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
            // Step 7 fails: nothing depends on it. Step 10 fails: the chain after it is skipped.
            if index == 7 || index == 10 {
                StepResult::failed("failed".into())
            } else {
                StepResult {
                    outcome: Outcome::Pass,
                    ..StepResult::skipped(String::new())
                }
            }
        });
        let seconds = start.elapsed().as_secs_f64();
        assert!(seconds < 10.0, "{count} steps took {seconds:.1} s");
        for (index, step) in steps.iter().enumerate() {
            for &dep in &step.deps {
                let ran = finished_at[index].load(Ordering::SeqCst);
                assert!(
                    ran == 0 || ran > finished_at[dep].load(Ordering::SeqCst),
                    "step {index} ran before {dep}"
                );
            }
        }
        assert_eq!(results[9].outcome, Outcome::Pass);
        assert_eq!(results[10].outcome, Outcome::Fail);
        assert_eq!(results[12].outcome, Outcome::Skipped);
        assert_eq!(
            results[12].first_error.as_deref(),
            Some("not run: build kernel failed")
        );
        assert_eq!(results[14].outcome, Outcome::Skipped);
        assert_eq!(results[13].outcome, Outcome::Pass);
    }
}
