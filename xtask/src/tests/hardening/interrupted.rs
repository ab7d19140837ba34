// SPDX-License-Identifier: GPL-2.0
//! Interrupted and concurrent runs: killed, interrupted or concurrent, results never corrupt.

use super::*;

/// Starts `xtask matrix` on the tree with the real compiler, JSON on stdout.
fn start_matrix(root: &Path, extra: &[&str]) -> Child {
    Command::new(xtask_binary())
        .args([
            "matrix",
            "--root",
            &root.display().to_string(),
            "--format",
            "json",
            "-j",
            "2",
        ])
        .args(["--toolchain", &real_compiler().path.display().to_string()])
        // Only the host's cells: the target axis has tests of its own (`targets.rs`).
        .args(["--target", "none"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(child: &Child, signal: i32) {
    let status = Command::new("sh")
        .args(["-c", &format!("kill -{signal} {}", child.id())])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits until the tree's lock file names `pid` (the run holds the lock), for at most 10 s.
fn wait_for_lock(root: &Path, pid: u32) {
    let lock = Layout::new(root).lock();
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(&lock).ok() != Some(format!("{pid} matrix\n")) {
        assert!(Instant::now() < deadline, "run {pid} never took the lock");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn runs_that_are_killed_interrupted_or_concurrent_never_corrupt_results() {
    let root = tiny_tree("interrupted");
    let layout = Layout::new(&root);

    // Two runs at once: the second waits, says so, and then takes the first one's results.
    let first = start_matrix(&root, &["--no-cache"]);
    wait_for_lock(&root, first.id());
    let second = start_matrix(&root, &[]);
    let first_pid = first.id();
    let first = first.wait_with_output().unwrap();
    let second = second.wait_with_output().unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    let second_stderr = text(&second.stderr);
    assert!(
        second_stderr.contains(&format!(
            "matrix: waiting for another cargo xtask matrix (pid {first_pid}) to finish"
        )),
        "{second_stderr}"
    );
    let reference = results_of(&stdout_report(&first));
    assert_eq!(results_of(&stdout_report(&second)), reference);
    // The probe, the two Kbuild fixtures, and the shim's and eleven examples' cells.
    let steps = 1 + 2 + (2 + 3 * 11) * 2;
    assert_eq!(reused(&second_stderr), steps, "the second run redid work");
    let written = std::fs::read_to_string(layout.report()).unwrap();
    assert_eq!(results_of(&json::parse(&written).unwrap()), reference);

    // A cold cache, then runs killed at several moments, each resuming from what the last
    // one left; the run after them must give exactly the clean run's results.
    std::fs::remove_dir_all(layout.cache()).unwrap();
    std::fs::remove_dir_all(layout.kshim.join("matrix")).unwrap();
    let needle = root.display().to_string();
    let mut stopped_runs = 0;
    let mut runs = std::collections::VecDeque::from([(300, 9), (700, 2), (500, 9), (900, 9)]);
    while let Some((delay, signal_number)) = runs.pop_front() {
        let run = start_matrix(&root, &[]);
        std::thread::sleep(Duration::from_millis(delay));
        signal(&run, signal_number);
        let signalled = Instant::now();
        let output = run.wait_with_output().unwrap();
        let stopped = signalled.elapsed();
        let stderr = text(&output.stderr);
        if signal_number == 2 {
            // SIGINT: prompt, nothing written, and every rustc gone.
            assert!(
                stopped < Duration::from_secs(2),
                "SIGINT took {stopped:?} to act"
            );
            assert!(output.stdout.is_empty());
            let left = processes_mentioning(&needle);
            assert!(left.is_empty(), "left running after SIGINT: {left:#?}");
            if stderr.contains("interrupted") && !stderr.contains("steps had completed") {
                // It came before the first step (a loaded machine, or a wait for the orphans
                // of the run killed before): once more, later, at most 5.6 s after the start.
                assert!(
                    delay < 5000,
                    "every SIGINT came before the first step: {stderr}"
                );
                runs.push_front((delay * 2, 2));
                continue;
            }
        }
        if output.status.signal() != Some(signal_number) {
            // It finished before the signal came (counted below).
            assert_eq!(output.status.code(), Some(0), "{stderr}");
            assert_ne!(
                signal_number, 2,
                "the SIGINT came too late to test anything"
            );
            continue;
        }
        stopped_runs += 1;
        if signal_number == 2 {
            // Mid-run, it says what had completed.
            assert!(
                stderr.contains("matrix: interrupted by SIGINT after"),
                "{stderr}"
            );
            assert!(stderr.contains("no report was written"), "{stderr}");
        }
    }
    assert!(
        stopped_runs >= 3,
        "only {stopped_runs} runs were stopped midway"
    );
    let last = start_matrix(&root, &[]).wait_with_output().unwrap();
    assert_eq!(last.status.code(), Some(0), "{}", text(&last.stderr));
    assert_eq!(results_of(&stdout_report(&last)), reference);
    // Every cache entry is whole, and no temporary file is left.
    for entry in std::fs::read_dir(layout.cache()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(!name.ends_with(".tmp"), "{name} left behind");
        let contents = std::fs::read_to_string(&path).unwrap();
        assert!(
            json::parse(&contents).is_ok(),
            "{name} is not JSON: {contents}"
        );
    }
}
