// SPDX-License-Identifier: GPL-2.0
//! Provisioning changes nothing it was not asked to, and takes turns with the runs that use
//! what it writes: `--dry-run` changes nothing, `toolchains install` waits for the lock a
//! matrix holds, and a lock that only a dead run's orphans hold is reclaimed.

use crate::support::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn a_dry_run_with_a_debian_compiler_not_there_changes_nothing() {
    let tree = tiny_tree("provisioning-dry-run");
    let toolchains = root().join("target/toolchains");
    // Only the private apt and the top of the prefixes: the prefixes' insides are large.
    let state = || {
        let prefixes = std::fs::read_dir(toolchains.join("debian")).map(Iterator::count);
        (snapshot(&toolchains.join("apt")), prefixes.ok())
    };
    let before = state();
    xtask(&[
        "matrix",
        "--dry-run",
        "--root",
        path_str(&tree),
        "--toolchain",
    ])
    // A suite the private apt has never listed: a run that provisions fetches it.
    .arg("debian:bookwrom:rustc")
    .run_within(Duration::from_secs(60))
    .success();
    assert!(
        before == state(),
        "--dry-run changed {}",
        toolchains.display()
    );
}

#[test]
fn toolchains_install_waits_for_the_lock_a_matrix_holds() {
    let directory = scratch_dir("provisioning-install-lock");
    // Built first, so that the build's time is not taken for waiting.
    xtask_binary();
    // The lock of the checkout whose target/toolchains install fills, as a matrix there holds
    // it: its id (a live process, this test's) in the file, and the lock held.
    let lock = root().join("target/kshim/matrix.lock");
    let _turn = checkouts_lock();
    let holder = hold_lock(&lock);
    std::fs::write(&lock, format!("{}\n", std::process::id())).unwrap();
    // `--only` naming no pin: once it has the lock, it ends at once with exit 2 and installs
    // nothing (also when it wrongly takes no lock).
    let pins = directory.join("pins.toml");
    std::fs::write(&pins, ONE_PIN).unwrap();
    let stderr = directory.join("stderr");
    let mut install = xtask(&["toolchains", "--pins", path_str(&pins), "install"])
        .args(["--no-rustup", "--only", "no-such-pin"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let early = install.try_wait().unwrap();
    let said = std::fs::read_to_string(&stderr).unwrap();
    drop(holder);
    let status = wait_within(&mut install, Duration::from_secs(30), "install");
    assert!(
        early.is_none(),
        "toolchains install ran while a matrix held the lock:\n{said}"
    );
    assert!(
        said.contains("toolchains install: waiting")
            && said.contains(&format!("(pid {})", std::process::id())),
        "{said}"
    );
    assert_eq!(
        status.code(),
        Some(2),
        "{}",
        std::fs::read_to_string(&stderr).unwrap()
    );
}

#[test]
fn a_lock_held_only_by_what_a_dead_run_left_is_reclaimed() {
    let tree = tiny_tree("provisioning-orphan-lock");
    // Built first: a build that outlasts the orphan would find the lock free.
    xtask_binary();
    let lock = tree.join("target/kshim/matrix.lock");
    // A run that died by SIGKILL: its id in the lock file, and a process it started (in a
    // process group of its own, as the runner starts them) still holding the lock.
    let mut dead = Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    let _orphan = hold_lock(&lock);
    std::fs::write(&lock, format!("{dead_pid}\n")).unwrap();
    xtask(&["matrix", "--root", path_str(&tree)])
        .args(["--toolchain", "/bin/false"])
        .run_within(Duration::from_secs(60))
        .stderr_has(&format!("(pid {dead_pid}) is dead"))
        .stderr_has("sleep")
        .code(1);
}

/// A matrix killed with SIGKILL and not yet reaped by its parent (a zombie: dead, though its id is
/// still taken) while a compiler given as a wrapper script left a `sleep` behind that holds the
/// lock: the next run counts the run as dead and ends the orphan at once. Before, a zombie counted
/// as a live run: "waiting for another cargo xtask matrix (pid N) to finish" for the `sleep`'s
/// whole 90 s.
#[test]
fn a_killed_run_not_yet_reaped_is_dead_and_what_its_wrapper_left_is_ended() {
    let tree = tiny_tree("provisioning-zombie-owner");
    xtask_binary();
    let target = tree.join("target/kshim");
    std::fs::create_dir_all(&target).unwrap();
    // As `/proc/PID/fd` names it: the scratch directory may be reached through a symbolic link.
    let lock = std::fs::canonicalize(&target).unwrap().join("matrix.lock");
    let started = tree.join("orphan-started");
    // Its first call that holds the lock's descriptor (inherited from the run) leaves a `sleep`
    // that keeps it, and writes the `sleep`'s id.
    let wrapper = script(
        &tree.join("rustc-wrapper"),
        &format!(
            "if [ ! -e '{started}' ] && readlink /proc/$$/fd/* | grep -qxF '{lock}'; then\n  \
             sleep 90 &\n  echo $! > '{started}.new' && mv '{started}.new' '{started}'\nfi\n\
             exec '{rustc}' \"$@\"\n",
            started = started.display(),
            lock = lock.display(),
            rustc = current_rustc().display(),
        ),
    );
    let mut first = xtask(&[
        "matrix",
        "--root",
        path_str(&tree),
        "-j",
        "1",
        "--target",
        "none",
        "--toolchain",
    ])
    .arg(&wrapper)
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(180);
    let orphan = loop {
        if let Ok(pid) = std::fs::read_to_string(&started) {
            break pid.trim().parse::<u32>().unwrap();
        }
        assert!(
            first.try_wait().unwrap().is_none() && Instant::now() < deadline,
            "the first run never ran the wrapper with the lock's descriptor"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    // SIGKILL, and no `wait` until the next run has ended: meanwhile the run is a zombie.
    first.kill().unwrap();
    let begun = Instant::now();
    let next = xtask(&["matrix", "--root", path_str(&tree)])
        .args(["--toolchain", "/bin/false"])
        .run_within(Duration::from_secs(180));
    let waited = begun.elapsed();
    first.wait().unwrap();
    if running(orphan) {
        quietly("kill", &["-KILL", &orphan.to_string()]);
    }
    next.stderr_has(&format!("(pid {}) is dead", first.id()))
        .stderr_has(&format!("pid {orphan} (sleep"))
        .code(1);
    assert!(
        waited < Duration::from_secs(30),
        "the next run took {waited:?} to take the lock"
    );
}

#[test]
fn a_matrix_of_another_tree_takes_this_checkouts_lock_before_it_provisions_here() {
    let tree = tiny_tree("provisioning-root-provisions");
    // Built first, so that the build's time is not taken for waiting.
    xtask_binary();
    // `matrix --root TREE` holds TREE's lock, but a `debian:` spec is provisioned into this
    // checkout's target/toolchains, which runs here use: a run here holds this lock.
    let toolchains = root().join("target/toolchains");
    let lock = root().join("target/kshim/matrix.lock");
    let _turn = checkouts_lock();
    let holder = hold_lock(&lock);
    std::fs::write(&lock, format!("{} matrix\n", std::process::id())).unwrap();
    let apt = snapshot(&toolchains.join("apt"));
    let stderr = tree.join("stderr");
    let mut matrix = xtask(&["matrix", "--root", path_str(&tree), "--toolchain"])
        // A suite no private apt has listed: it cannot be there already, so it is provisioned.
        .arg("debian:bookwrom:rustc")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let waiting = format!(
        "toolchain: to write into {}: waiting for another cargo xtask matrix (pid {})",
        toolchains.display(),
        std::process::id()
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut said = String::new();
    while !said.contains(&waiting)
        && matrix.try_wait().unwrap().is_none()
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(100));
        said = std::fs::read_to_string(&stderr).unwrap();
    }
    // Ended while it waits (or at once, if it provisioned without the lock): it writes nothing.
    quietly("kill", &["-INT", &matrix.id().to_string()]);
    let status = wait_within(&mut matrix, Duration::from_secs(30), "matrix");
    drop(holder);
    let said = std::fs::read_to_string(&stderr).unwrap();
    assert!(
        said.contains(&waiting),
        "matrix --root provisioned here without this checkout's lock ({status}):\n{said}"
    );
    assert!(
        snapshot(&toolchains.join("apt")) == apt,
        "{} changed while another run held the lock",
        toolchains.display()
    );
}
