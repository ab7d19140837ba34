// SPDX-License-Identifier: GPL-2.0
//! The run lock of a checkout (`target/kshim/matrix.lock`): one run at a time writes the
//! checkout's outputs and its provisioned compilers, a waiting run says who holds the lock (the
//! holder writes its process id and command into the file), and a lock only a dead run's
//! orphans hold is reclaimed. A process takes each lock once.

use crate::util::process::is_running;
use anyhow::Context;
use std::fs;
use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

pub fn of_checkout(root: &Path) -> PathBuf {
    root.join("target/kshim/matrix.lock")
}

/// The locks this process holds, by their files' device and inode numbers.
static HELD: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());

/// The command this process runs (`usage`), recorded in every lock it takes.
static COMMAND: OnceLock<String> = OnceLock::new();

pub fn set_command(words: &str) {
    let _ = COMMAND.set(words.to_owned());
}

/// The process id and command (empty if none) the lock file at `path` records: `12345 usage`.
fn recorded_owner(path: &Path) -> Option<(u32, String)> {
    let text = fs::read_to_string(path).ok()?;
    let (pid, command) = text.trim().split_once(' ').unwrap_or((text.trim(), ""));
    Some((pid.parse().ok()?, command.to_owned()))
}

/// [`recorded_owner`], read again after a moment if it is not running: the owner writes its id
/// just after it takes the lock.
fn settled_owner(path: &Path) -> Option<(u32, String)> {
    let owner = recorded_owner(path);
    if owner.as_ref().is_some_and(|(pid, _)| !is_running(*pid)) {
        std::thread::sleep(Duration::from_millis(200));
        return recorded_owner(path);
    }
    owner
}

/// The processes with a descriptor open on the lock file `path`: id, process group and name.
fn lock_holders(path: &Path) -> Vec<(u32, u32, String)> {
    let Ok(target) = fs::canonicalize(path) else {
        return Vec::new();
    };
    let holder = |process: fs::DirEntry| {
        let pid: u32 = process.file_name().to_str()?.parse().ok()?;
        let descriptors = fs::read_dir(process.path().join("fd")).ok()?;
        let holds = descriptors
            .filter_map(Result::ok)
            .any(|fd| fs::read_link(fd.path()).is_ok_and(|link| link == target));
        if !holds || pid == std::process::id() {
            return None;
        }
        // `/proc/PID/stat`: `PID (NAME) STATE PPID PGRP ...`, NAME may hold spaces.
        let stat = fs::read_to_string(process.path().join("stat")).ok()?;
        let (name, rest) = stat.split_once(" (")?.1.rsplit_once(") ")?;
        let group = rest.split_whitespace().nth(2)?.parse().ok()?;
        Some((pid, group, name.to_owned()))
    };
    let processes = fs::read_dir("/proc").into_iter().flatten();
    processes
        .filter_map(Result::ok)
        .filter_map(holder)
        .collect()
}

/// The exclusive lock of one checkout's outputs, held for a whole run.
///
/// It is an advisory `flock` (what `File::try_lock` takes on Linux) on the open file
/// description, which the kernel drops only when the run and everything it started that
/// inherited the descriptor ([`crate::util::process::run_holding`]) have ended. The file is
/// never deleted: a third run would lock a new file while the second still holds the old.
///
/// # Invariants
///
/// `file` is open on the lock file and holds `LOCK_EX` on it.
#[derive(Debug)]
pub struct RunLock {
    file: fs::File,
    /// The lock file's device and inode numbers, as [`HELD`] lists it.
    id: (u64, u64),
}

impl RunLock {
    /// Takes the lock at `path`, waiting while another run holds it; `waiting` hears who holds
    /// it before the wait begins. Fails when the run is interrupted while it waits.
    pub fn acquire(path: &Path, waiting: &mut dyn FnMut(&str)) -> anyhow::Result<RunLock> {
        let command = COMMAND.get().map_or("", String::as_str);
        RunLock::acquire_as(path, command, waiting)
    }

    /// [`RunLock::acquire`] for a run of `command` (none: empty).
    fn acquire_as(
        path: &Path,
        command: &str,
        waiting: &mut dyn FnMut(&str),
    ) -> anyhow::Result<RunLock> {
        let directory = path
            .parent()
            .with_context(|| format!("{} has no parent directory", path.display()))?;
        fs::create_dir_all(directory).with_context(|| {
            format!(
                "cannot create {}, where the matrix keeps its lock, cache and report",
                directory.display()
            )
        })?;
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .with_context(|| format!("cannot open the matrix's lock file {}", path.display()))?;
        let mut announced = false;
        let mut reclaimed = false;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(fs::TryLockError::WouldBlock) => {}
                Err(fs::TryLockError::Error(error)) => {
                    return Err(error).with_context(|| format!("locking {}", path.display()));
                }
            }
            if !announced {
                announced = true;
                waiting(&Self::holder(path));
            }
            if !reclaimed {
                if let Some(message) = Self::reclaim_from_the_dead(path) {
                    reclaimed = true;
                    waiting(&message);
                }
            }
            if let Some(signal) = crate::util::interrupt::interrupted() {
                anyhow::bail!(
                    "interrupted (signal {signal}) while waiting for the lock {}",
                    path.display()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let metadata = file
            .metadata()
            .with_context(|| format!("reading {}", path.display()))?;
        let id = (metadata.dev(), metadata.ino());
        held().push(id);
        // INVARIANT: the loop above ends only once `try_lock` granted LOCK_EX on `file`.
        let lock = RunLock { file, id };
        lock.record_owner(command)
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(lock)
    }

    /// [`RunLock::acquire`], unless this process holds the lock already (taking it again would
    /// wait for ever): then `None`.
    pub fn acquire_unless_held(
        path: &Path,
        waiting: &mut dyn FnMut(&str),
    ) -> anyhow::Result<Option<RunLock>> {
        let id = fs::metadata(path).map(|metadata| (metadata.dev(), metadata.ino()));
        if id.is_ok_and(|id| held().contains(&id)) {
            return Ok(None);
        }
        RunLock::acquire(path, waiting).map(Some)
    }

    fn record_owner(&self, command: &str) -> std::io::Result<()> {
        let mut file = &self.file;
        file.set_len(0)?;
        std::io::Seek::rewind(&mut file)?;
        let owner = format!("{} {command}", std::process::id());
        writeln!(file, "{}", owner.trim_end())
    }

    /// When the run that took the lock is dead (killed with SIGKILL) and only what it started
    /// holds it still, ends their process groups and says whom it ended; `None` while the
    /// owner lives. What a dead run's processes do, no one will read.
    fn reclaim_from_the_dead(path: &Path) -> Option<String> {
        let (owner, _) = settled_owner(path)?;
        if is_running(owner) {
            return None;
        }
        // SAFETY: `getpgrp` has no arguments and cannot fail.
        let own_group = unsafe { libc::getpgrp() } as u32;
        let mut ended = Vec::new();
        let holders = lock_holders(path);
        for (pid, group, name) in holders
            .iter()
            .filter(|(_, group, _)| *group > 1 && *group != own_group)
        {
            // SAFETY: `killpg` only sends a signal to the group the holder leads or is in.
            unsafe { libc::killpg(*group as libc::pid_t, libc::SIGKILL) };
            ended.push(format!("pid {pid} ({name}, group {group})"));
        }
        if ended.is_empty() {
            return None;
        }
        Some(format!(
            "the run that held the lock (pid {owner}) is dead; ending what it left holding it: {} \
             (lock: {})",
            ended.join(", "),
            path.display()
        ))
    }

    /// Who holds the lock, as the waiting message says it.
    fn holder(path: &Path) -> String {
        // A run that recorded no command (the library's own tests) is named as a run.
        let run = |command: &str| match command {
            "" => "run".to_owned(),
            command => format!("cargo xtask {}", crate::util::output::escape(command)),
        };
        let whom = match settled_owner(path) {
            Some((pid, command)) if is_running(pid) => {
                format!("another {} (pid {pid})", run(&command))
            }
            Some((pid, command)) => format!(
                "the processes that an earlier {} (pid {pid}, no longer running) left behind",
                run(&command)
            ),
            None => "another run".to_owned(),
        };
        format!("waiting for {whom} to finish (lock: {})", path.display())
    }

    /// The lock file's descriptor, for processes that must keep the lock while they live.
    pub fn descriptor(&self) -> RawFd {
        self.file.as_raw_fd()
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        held().retain(|id| *id != self.id);
    }
}

/// [`HELD`], which no panic while it was locked leaves unusable.
fn held() -> std::sync::MutexGuard<'static, Vec<(u64, u64)>> {
    HELD.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process that holds a lock takes it again at once, without locking it a second time
    /// (which would wait on itself for ever); once it lets it go, the lock is taken anew.
    #[test]
    fn a_lock_this_process_holds_is_not_taken_twice() {
        let dir = crate::project_root().join("target/kshim/unit-tests/run-lock");
        let _ = fs::remove_dir_all(&dir);
        let path = dir.join("matrix.lock");
        let mut said = Vec::new();
        let held = RunLock::acquire(&path, &mut |line| said.push(line.to_owned())).unwrap();
        let again = RunLock::acquire_unless_held(&path, &mut |line| said.push(line.to_owned()));
        assert!(again.unwrap().is_none());
        drop(held);
        let anew = RunLock::acquire_unless_held(&path, &mut |line| said.push(line.to_owned()));
        assert!(anew.unwrap().is_some());
        assert!(said.is_empty(), "{said:?}");
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A run waiting for the lock names the command that holds it, as the holder wrote it into
    /// the lock file: `usage` holding `matrix.lock` is named `usage`, not after the file.
    #[test]
    fn the_waiting_message_names_the_holders_command() {
        let dir = crate::project_root().join("target/kshim/unit-tests/run-lock-holder");
        let _ = fs::remove_dir_all(&dir);
        let path = dir.join("matrix.lock");
        let pid = std::process::id();
        let held = RunLock::acquire_as(&path, "usage", &mut |_| {}).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), format!("{pid} usage\n"));
        // A second open of the file is refused the lock this one holds, in one process too.
        let (said, heard) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn({
            let path = path.clone();
            move || {
                let mut waiting = |line: &str| said.send(line.to_owned()).unwrap();
                RunLock::acquire_as(&path, "matrix", &mut waiting).map(drop)
            }
        });
        let message = heard.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(
            message,
            format!(
                "waiting for another cargo xtask usage (pid {pid}) to finish (lock: {})",
                path.display()
            )
        );
        drop(held);
        waiter.join().unwrap().unwrap();
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            format!("{pid} matrix\n")
        );
        // A lock file with the id alone (no command recorded) names a run; a hostile command is
        // escaped.
        for (recorded, named) in [
            (format!("{pid}\n"), "another run (pid".to_owned()),
            (
                format!("{pid} toolchains install\n"),
                "another cargo xtask toolchains install (pid".to_owned(),
            ),
            (
                format!("{pid} x\u{1b}[2J\n"),
                "another cargo xtask x\\e[2J (pid".to_owned(),
            ),
        ] {
            fs::write(&path, recorded).unwrap();
            let message = RunLock::holder(&path);
            assert!(message.contains(&named), "{message}");
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}
