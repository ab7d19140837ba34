// SPDX-License-Identifier: GPL-2.0
//! Cache entries that are no files or too large are misses. (A machine's failure never cached
//! and a linker that writes nothing are tested through the binary in `tests/tests/hostile.rs`.)

use super::*;
use crate::features::expect::Outcome;
use crate::run::cache::{Cache, Key};
use crate::run::judge::StepResult;
use crate::tests::support::scratch_dir;
use crate::util::process::CAPTURE_LIMIT;
use std::time::{Duration, Instant};

#[test]
fn cache_entries_that_are_no_files_or_too_large_are_misses() {
    let directory = scratch_dir("hostile-cache");
    let cache = Cache::new(directory.clone(), true);
    let entry = |key: u128| directory.join(format!("{}.json", Key(key)));
    make_fifo(&entry(1));
    std::os::unix::fs::symlink("/dev/zero", entry(2)).unwrap();
    std::fs::create_dir(entry(3)).unwrap();
    // Sparse: it takes no room, but says it holds 65 MiB.
    let file = std::fs::File::create(entry(4)).unwrap();
    file.set_len(65 << 20).unwrap();
    let start = Instant::now();
    for key in 1..=4 {
        assert!(cache.load(Key(key), None).is_none(), "entry {key}");
    }
    assert!(start.elapsed() < Duration::from_secs(5));

    // The largest entry a run writes, a module log as long as a capture keeps, still loads.
    let log = "[info] m: a line of the module's log\n".repeat(CAPTURE_LIMIT / 36);
    let result = StepResult {
        outcome: Outcome::Pass,
        log: Some(log.clone()),
        ..StepResult::skipped(String::new())
    };
    cache.store(Key(5), &result, None);
    let start = Instant::now();
    let loaded = cache.load(Key(5), None).expect("the largest entry loads");
    eprintln!(
        "a cache entry of {:.1} MB loads in {:.2} s",
        std::fs::metadata(entry(5)).unwrap().len() as f64 / 1e6,
        start.elapsed().as_secs_f64()
    );
    assert_eq!(loaded.log.as_deref(), Some(log.as_str()));
}
