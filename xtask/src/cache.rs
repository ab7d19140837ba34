// SPDX-License-Identifier: GPL-2.0
//! The matrix's result cache under `target/kshim/cache/`: one entry per step, named by an
//! FNV-1a-128 hash of everything that can change its result (the compiler's identity, command
//! lines, environment, input files and the keys of the steps it needs), written atomically and
//! only for results that are the compiler's word; and the lock that lets one run at a time use it.

use crate::catalog::Release;
use crate::expect::Outcome;
use crate::files;
use crate::files::write_atomically;
pub use crate::hash::{file_stamp, hash_file, stat_stamp, tree_stamp, Key, StableHasher};
use crate::json::{self, Deserialize, Serialize};
use crate::judge::StepResult;
use crate::places::GateErrors;
use crate::plan::{Rustc, Step};
use crate::status::Status;
use crate::version::RustcVersion;
use anyhow::Context;
use std::fs;
use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The largest cache entry read; a larger one (or one that is not a regular file) is a miss.
/// An entry's largest part is a module log, at most [`crate::process::CAPTURE_LIMIT`] before
/// JSON escapes it.
const ENTRY_LIMIT: u64 = 64 << 20;

/// The cache directory and whether reading from it is allowed (`--no-cache` still writes).
#[derive(Clone, Debug)]
pub struct Cache {
    directory: PathBuf,
    read: bool,
}

impl Cache {
    /// A cache in `directory`; with `read` false, lookups always miss.
    pub fn new(directory: PathBuf, read: bool) -> Self {
        Self { directory, read }
    }

    fn path(&self, key: Key) -> PathBuf {
        self.directory.join(format!("{key}.json"))
    }

    /// The stored result for `key`, if reading is allowed, a well-formed entry exists and the
    /// step's `artifact` is the file the entry recorded.
    pub fn load(&self, key: Key, artifact: Option<&Path>) -> Option<StepResult> {
        if !self.read {
            return None;
        }
        let text = files::read_text(&self.path(key), ENTRY_LIMIT).ok()?;
        // A damaged entry is a miss; the rerun overwrites it.
        decode_entry(&text, artifact)
    }

    /// Stores a result for `key`, atomically, with the `artifact` stamp it was made with.
    pub fn store(
        &self,
        key: Key,
        result: &StepResult,
        artifact: Option<(u64, u128)>,
    ) -> anyhow::Result<()> {
        write_atomically(&self.path(key), encode_entry(result, artifact).as_bytes())
    }
}

/// A cache entry: a step's result and the stamp of the file the step made.
#[derive(Serialize, Deserialize)]
struct Entry {
    outcome: String,
    #[serde(deserialize_with = "json::nullable")]
    first_error: Option<String>,
    seconds: f64,
    #[serde(deserialize_with = "json::nullable")]
    tests: Option<(u64, u64, u64)>,
    #[serde(deserialize_with = "json::nullable")]
    probe: Option<ProbeEntry>,
    #[serde(deserialize_with = "json::nullable")]
    log: Option<String>,
    /// These three are absent from entries of steps that have none.
    usage: Option<GateErrors>,
    targets: Option<Vec<String>>,
    error_codes: Option<Vec<String>>,
    /// `SIZE MODIFIED`, the stamp of the step's artifact.
    #[serde(deserialize_with = "json::nullable")]
    artifact: Option<String>,
}

/// A probe's answer: per feature its status word and release, or why it failed.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum ProbeEntry {
    Statuses(Vec<(String, Option<String>)>),
    Failed { error: String },
}

/// A step's result as a cache entry; `artifact` is the stamp of the file the step made.
fn encode_entry(result: &StepResult, artifact: Option<(u64, u128)>) -> String {
    let probe = result.probe.as_ref().map(|probe| match probe {
        Ok(statuses) => ProbeEntry::Statuses(
            (statuses.iter())
                .map(|status| {
                    let since = status.stable_since().map(|since| since.to_string());
                    (status.word().to_string(), since)
                })
                .collect(),
        ),
        Err(error) => ProbeEntry::Failed {
            error: error.clone(),
        },
    });
    let entry = Entry {
        outcome: result.outcome.word().into(),
        first_error: result.first_error.clone(),
        seconds: result.seconds,
        tests: result.tests,
        probe,
        log: result.log.clone(),
        usage: result.usage.clone(),
        targets: result.targets.clone(),
        error_codes: result.error_codes.clone(),
        artifact: artifact.map(|(size, modified)| format!("{size} {modified}")),
    };
    json::to_value(&entry).to_string()
}

/// Reads a cache entry back; `None` for a damaged entry or one whose artifact has changed.
fn decode_entry(text: &str, artifact: Option<&Path>) -> Option<StepResult> {
    let entry: Entry = json::read(text).ok()?;
    if let Some(path) = artifact {
        let (size, modified) = file_stamp(path)?;
        if entry.artifact? != format!("{size} {modified}") {
            return None;
        }
    }
    let probe = match entry.probe {
        None => None,
        Some(ProbeEntry::Statuses(statuses)) => Some(Ok(statuses
            .into_iter()
            .map(|(word, since)| {
                let since = match since {
                    None => None,
                    Some(since) => Some(Release::parse(&since)?),
                };
                Status::from_parts(&word, since)
            })
            .collect::<Option<Vec<_>>>()?)),
        Some(ProbeEntry::Failed { error }) => Some(Err(error)),
    };
    Some(StepResult {
        outcome: Outcome::from_word(&entry.outcome)?,
        first_error: entry.first_error,
        seconds: entry.seconds,
        cached: true,
        tests: entry.tests,
        probe,
        log: entry.log,
        usage: entry.usage,
        targets: entry.targets,
        error_codes: entry.error_codes,
        interrupted: false,
    })
}

/// Computes every step's cache key: the compiler's identity, the command lines, the
/// environment every process gets (`inherited`, from [`inherited_environment`], and the
/// invocation's own variables), the inputs' contents and the keys of the steps it needs (so a
/// changed shim reruns everything built on it); a step the xtask checks itself (an object's
/// jump table) also by `checker`, the checking xtask's identity, so that a changed checker's
/// verdict is never served from a run of the old one.
pub fn cache_keys(
    steps: &[Step],
    inherited: &[(String, String)],
    checker: Key,
    compiler_identity: &dyn Fn(usize) -> Key,
    file_hash: &mut dyn FnMut(&Path) -> anyhow::Result<Key>,
) -> anyhow::Result<Vec<Key>> {
    let mut keys: Vec<Key> = Vec::with_capacity(steps.len());
    for step in steps {
        let mut hasher = StableHasher::new();
        hasher
            .field("kshim matrix step v5")
            .field(step.kind.word())
            .number(compiler_identity(step.toolchain).0);
        for (name, value) in inherited {
            hasher.field("inherit").field(name).field(value);
        }
        for invocation in &step.processes {
            hasher.field(invocation.program.to_string_lossy().as_bytes());
            hasher.number(invocation.args.len() as u128);
            for arg in &invocation.args {
                hasher.field(arg);
            }
            for (name, value) in &invocation.env {
                hasher.field("set").field(name).field(value);
            }
            for name in &invocation.env_remove {
                hasher.field("remove").field(name);
            }
        }
        for input in &step.inputs {
            hasher
                .field(input.to_string_lossy().as_bytes())
                .number(file_hash(input)?.0);
        }
        for &dep in &step.deps {
            hasher.number(keys[dep].0);
        }
        if step.check.is_some() {
            hasher.field("checked by").number(checker.0);
        }
        keys.push(hasher.finish());
    }
    Ok(keys)
}

/// Every step's cache key in a run of `planned` toolchains (found among `availabilities`), with
/// the inherited environment of [`crate::process::inherited_environment`] and each input file
/// hashed once.
/// (see [`input_key`]).
pub fn run_keys(
    steps: &[Step],
    planned: &[crate::plan::PlannedToolchain],
    availabilities: &[crate::toolchain::Availability],
    root: &Path,
) -> anyhow::Result<Vec<Key>> {
    let provisioned = crate::debian::toolchains_dir();
    let identities: std::collections::HashMap<usize, Key> = planned
        .iter()
        .filter_map(|toolchain| match &availabilities[toolchain.index] {
            crate::toolchain::Availability::Found { version, .. } => Some((
                toolchain.index,
                compiler_identity(&toolchain.rustc, version),
            )),
            _ => None,
        })
        .collect();
    let mut file_hashes: std::collections::HashMap<PathBuf, Key> = Default::default();
    // The running xtask, by a stamp that every rebuild changes.
    let checker = std::env::current_exe()
        .and_then(|exe| crate::hash::stat_stamp(&exe))
        .context("stamping the running xtask, which checks objects itself")?;
    cache_keys(
        steps,
        &crate::process::inherited_environment(),
        checker,
        &|toolchain| identities.get(&toolchain).copied().unwrap_or(Key(0)),
        &mut |path: &Path| {
            if let Some(key) = file_hashes.get(path) {
                return Ok(*key);
            }
            let key = input_key(path, root, &provisioned)?;
            file_hashes.insert(path.to_path_buf(), key);
            Ok(key)
        },
    )
}

/// The key of one input of a step. A file of the checkout at `root` (outside `provisioned`) by
/// its contents; any other file (the library sources, the linker, the emulator, which
/// `cargo xtask toolchains install` provisioned or the system has) by its [`stat_stamp`], and a
/// directory by its [`tree_stamp`]: their contents would cost seconds on every run, and
/// `cargo xtask toolchains verify` checks the provisioned ones against their digests.
pub fn input_key(path: &Path, root: &Path, provisioned: &Path) -> anyhow::Result<Key> {
    if path.is_dir() {
        tree_stamp(path)
    } else if path.starts_with(root) && !path.starts_with(provisioned) {
        hash_file(path)
    } else {
        stat_stamp(path).with_context(|| format!("reading {}", path.display()))
    }
}

/// The compiler's identity for cache keys: where it is, its contents, size and modification
/// time, what `-vV` says, the environment it runs with, its loader, and its sysroot's
/// libraries and host tools (`rust-lld`) by their [`stat_stamp`]s.
///
/// The contents catch a compiler replaced by another of the same size and time (a wrapper
/// script rewritten and `touch`ed back); `-vV` catches a wrapper whose text stayed but whose
/// real compiler changed; the sysroot catches a standard library rebuilt under an unchanged
/// driver.
pub fn compiler_identity(rustc: &Rustc, version: &RustcVersion) -> Key {
    let mut hasher = StableHasher::new();
    hasher.field(rustc.path.to_string_lossy().as_bytes());
    let (size, modified) = file_stamp(&rustc.path).unwrap_or((0, 0));
    let contents = hash_file(&rustc.path).map_or(0, |key| key.0);
    hasher
        .number(u128::from(size))
        .number(modified)
        .number(contents)
        .field(&version.raw);
    for (name, value) in &rustc.env {
        hasher.field(name).field(value);
    }
    if let Some(loader) = &rustc.loader {
        hasher.field(loader.program.to_string_lossy().as_bytes());
        hasher.number(stat_stamp(&loader.program).map_or(0, |stamp| stamp.0));
        for arg in &loader.leading_args {
            hasher.field(arg);
        }
    }
    if let Some(sysroot) = &version.sysroot {
        hasher.field(sysroot.to_string_lossy().as_bytes());
        let libraries = [
            sysroot.join("lib"),
            sysroot.join("lib/rustlib").join(&version.host).join("lib"),
            sysroot.join("lib/rustlib").join(&version.host).join("bin"),
        ];
        for directory in libraries {
            let mut files: Vec<PathBuf> = std::fs::read_dir(&directory)
                .map(|entries| {
                    entries
                        .filter_map(Result::ok)
                        .map(|entry| entry.path())
                        .filter(|path| path.is_file())
                        .collect()
                })
                .unwrap_or_default();
            files.sort();
            for file in files {
                hasher
                    .field(file.to_string_lossy().as_bytes())
                    .number(stat_stamp(&file).map_or(0, |stamp| stamp.0));
            }
        }
    }
    hasher.finish()
}

/// Removes temporary files that a killed run left in `directory` (see [`write_atomically`]).
///
/// Only while holding the [`RunLock`]: then no other run can be writing one.
pub fn remove_stale_temporaries(directory: &Path) {
    let Ok(entries) = fs::read_dir(directory) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') && name.ends_with(".tmp") {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Whether process `pid` exists (signal 0 checks, and sends nothing).
fn process_exists(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists; it sends nothing.
    let answer = unsafe { libc::kill(pid as libc::pid_t, 0) };
    answer == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The processes with a descriptor open on the lock file `path`, from `/proc`: each one's id,
/// process group and name.
fn lock_holders(path: &Path) -> Vec<(u32, u32, String)> {
    let Ok(target) = fs::canonicalize(path) else {
        return Vec::new();
    };
    let mut holders = Vec::new();
    let Ok(processes) = fs::read_dir("/proc") else {
        return holders;
    };
    for process in processes.filter_map(Result::ok) {
        let Some(pid) = process
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        let Ok(descriptors) = fs::read_dir(process.path().join("fd")) else {
            continue;
        };
        let holds = descriptors
            .filter_map(Result::ok)
            .any(|fd| fs::read_link(fd.path()).is_ok_and(|link| link == target));
        if !holds {
            continue;
        }
        // `/proc/PID/stat`: `PID (NAME) STATE PPID PGRP ...`, NAME may hold spaces.
        let Ok(stat) = fs::read_to_string(process.path().join("stat")) else {
            continue;
        };
        let Some((name, rest)) = stat
            .split_once(" (")
            .and_then(|(_, rest)| rest.rsplit_once(") "))
        else {
            continue;
        };
        let Some(group) = rest.split_whitespace().nth(2).and_then(|g| g.parse().ok()) else {
            continue;
        };
        holders.push((pid, group, name.to_owned()));
    }
    holders
}

/// The exclusive lock of one matrix directory (`target/kshim/matrix.lock`), held for a whole
/// run, so that two runs never write the same outputs at once.
///
/// It is an advisory `flock`, which the kernel drops when the last descriptor of the lock
/// file is closed: when the run ends, or is killed, and everything it started that inherited
/// the descriptor (see [`crate::process::run_holding`]) has ended too. The file holds the
/// owner's process id for the waiting message, and is never deleted (deleting a lock file
/// lets a third run lock a new file while the second still holds the old one).
///
/// # Invariants
///
/// `file` is open on the lock file and holds `LOCK_EX` on it.
#[derive(Debug)]
pub struct RunLock {
    file: fs::File,
}

impl RunLock {
    /// Takes the lock at `path`, waiting while another run holds it; `waiting` is called once,
    /// with a sentence that names the other run, before the wait begins.
    ///
    /// Fails when the lock file cannot be created (an unwritable `target/`), and when the run is
    /// interrupted (SIGINT, SIGTERM) while it waits.
    pub fn acquire(path: &Path, waiting: &mut dyn FnMut(&str)) -> anyhow::Result<RunLock> {
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
            // SAFETY: `flock` only reads the descriptor, which `file` keeps open.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                break;
            }
            let error = std::io::Error::last_os_error();
            if error.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(error).with_context(|| format!("locking {}", path.display()));
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
            if let Some(signal) = crate::interrupt::interrupted() {
                anyhow::bail!(
                    "interrupted (signal {signal}) while waiting for the lock {}",
                    path.display()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        // INVARIANT: the loop above ends only once `flock` granted LOCK_EX on `file`.
        let lock = RunLock { file };
        lock.record_owner()
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(lock)
    }

    /// Writes this process's id into the lock file, for the message of a run that waits.
    fn record_owner(&self) -> std::io::Result<()> {
        let mut file = &self.file;
        file.set_len(0)?;
        std::io::Seek::rewind(&mut file)?;
        writeln!(file, "{}", std::process::id())
    }

    /// When the run that took the lock is dead and only what it started holds it still (it was
    /// killed with SIGKILL, so it could not end them), ends their process groups so that the
    /// lock comes free, and says whom it ended; `None` while the owner lives or before it has
    /// written its id. What a dead run's processes do, no one will read.
    fn reclaim_from_the_dead(path: &Path) -> Option<String> {
        let owner: u32 = fs::read_to_string(path).ok()?.trim().parse().ok()?;
        if process_exists(owner) {
            return None;
        }
        // The owner writes its id just after it takes the lock: look again before acting.
        std::thread::sleep(Duration::from_millis(200));
        let again: u32 = fs::read_to_string(path).ok()?.trim().parse().ok()?;
        if again != owner || process_exists(owner) {
            return None;
        }
        let holders = lock_holders(path);
        if holders.is_empty() {
            return None;
        }
        // SAFETY: `getpgrp` has no arguments and cannot fail.
        let own_group = unsafe { libc::getpgrp() } as u32;
        let mut ended = Vec::new();
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
        let owner = || -> Option<u32> { fs::read_to_string(path).ok()?.trim().parse().ok() };
        let alive = process_exists;
        // The owner writes its id just after it takes the lock: look twice before saying it is
        // gone.
        let mut pid = owner();
        if pid.is_some_and(|pid| !alive(pid)) {
            std::thread::sleep(Duration::from_millis(200));
            pid = owner();
        }
        match pid {
            Some(pid) if alive(pid) => format!(
                "waiting for another cargo xtask matrix (pid {pid}) to finish (lock: {})",
                path.display()
            ),
            Some(pid) => format!(
                "waiting for the processes that an earlier cargo xtask matrix (pid {pid}, no \
                 longer running) left behind to finish (lock: {})",
                path.display()
            ),
            None => format!(
                "waiting for another cargo xtask matrix to finish (lock: {})",
                path.display()
            ),
        }
    }

    /// The lock file's descriptor, for processes that must keep the lock while they live.
    pub fn descriptor(&self) -> RawFd {
        self.file.as_raw_fd()
    }
}

#[cfg(test)]
mod tests;
