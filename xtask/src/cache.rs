//! The matrix's result cache under `target/kshim/cache/`: one entry per step, named by an
//! FNV-1a-128 hash of everything that can change its result (the compiler's identity, command
//! lines, environment, input files and the keys of the steps it needs), written atomically and
//! only for results that are the compiler's word; and the lock that lets one run at a time use it.

use crate::catalog::Release;
use crate::expect::Outcome;
use crate::files;
use crate::files::write_atomically;
pub use crate::hash::{file_stamp, hash_file, Key, StableHasher};
use crate::json::{self, Value};
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
        decode_entry(&crate::json::parse(&text).ok()?, artifact)
    }

    /// Stores a result for `key`, atomically, with the `artifact` stamp it was made with.
    pub fn store(
        &self,
        key: Key,
        result: &StepResult,
        artifact: Option<(u64, u128)>,
    ) -> anyhow::Result<()> {
        write_atomically(
            &self.path(key),
            encode_entry(result, artifact).to_string().as_bytes(),
        )
    }
}

/// A step's result as a cache entry; `artifact` is the stamp of the file the step made.
fn encode_entry(result: &StepResult, artifact: Option<(u64, u128)>) -> Value {
    let probe = match &result.probe {
        None => Value::Null,
        Some(Ok(statuses)) => Value::Array(
            statuses
                .iter()
                .map(|status| {
                    Value::Array(vec![
                        Value::from(status.word()),
                        json::opt_string(status.stable_since().map(|since| since.to_string())),
                    ])
                })
                .collect(),
        ),
        Some(Err(error)) => json::object(vec![("error".into(), Value::String(error.clone()))]),
    };
    json::object(vec![
        (
            "outcome".into(),
            Value::String(result.outcome.word().into()),
        ),
        (
            "first_error".into(),
            json::opt_string(result.first_error.clone()),
        ),
        ("seconds".into(), Value::from(result.seconds)),
        (
            "tests".into(),
            result
                .tests
                .map_or(Value::Null, |(passed, failed, ignored)| {
                    Value::Array(vec![
                        Value::from(passed),
                        Value::from(failed),
                        Value::from(ignored),
                    ])
                }),
        ),
        ("probe".into(), probe),
        ("log".into(), json::opt_string(result.log.clone())),
        (
            "usage".into(),
            result
                .usage
                .as_ref()
                .map_or(Value::Null, GateErrors::to_json),
        ),
        (
            "targets".into(),
            result.targets.as_ref().map_or(Value::Null, |targets| {
                Value::Array(targets.iter().cloned().map(Value::String).collect())
            }),
        ),
        (
            "artifact".into(),
            artifact.map_or(Value::Null, |(size, modified)| {
                Value::String(format!("{size} {modified}"))
            }),
        ),
    ])
}

/// Reads a cache entry back; `None` for a damaged entry or one whose artifact has changed.
fn decode_entry(entry: &Value, artifact: Option<&Path>) -> Option<StepResult> {
    if let Some(path) = artifact {
        let (size, modified) = file_stamp(path)?;
        if entry.get("artifact")?.as_str()? != format!("{size} {modified}") {
            return None;
        }
    }
    let probe = match entry.get("probe")? {
        Value::Null => None,
        Value::Array(statuses) => Some(Ok(statuses
            .iter()
            .map(|parts| {
                let since = match parts.get(1)? {
                    Value::Null => None,
                    since => Some(Release::parse(since.as_str()?)?),
                };
                Status::from_parts(parts.get(0)?.as_str()?, since)
            })
            .collect::<Option<Vec<_>>>()?)),
        error => Some(Err(error.get("error")?.as_str()?.to_string())),
    };
    let tests = match entry.get("tests")? {
        Value::Null => None,
        counts => {
            let counts = counts.as_array()?;
            Some((
                counts.first()?.as_u64()?,
                counts.get(1)?.as_u64()?,
                counts.get(2)?.as_u64()?,
            ))
        }
    };
    Some(StepResult {
        outcome: Outcome::from_word(entry.get("outcome")?.as_str()?)?,
        first_error: entry.get("first_error")?.as_str().map(String::from),
        seconds: entry.get("seconds")?.as_f64()?,
        cached: true,
        tests,
        probe,
        log: entry.get("log")?.as_str().map(String::from),
        usage: match entry.get("usage") {
            None | Some(Value::Null) => None,
            Some(usage) => Some(GateErrors::from_json(usage)?),
        },
        targets: match entry.get("targets") {
            None | Some(Value::Null) => None,
            Some(targets) => Some(
                targets
                    .as_array()?
                    .iter()
                    .map(|target| target.as_str().map(String::from))
                    .collect::<Option<Vec<_>>>()?,
            ),
        },
        interrupted: false,
    })
}

/// Computes every step's cache key: the compiler's identity, the command lines, the
/// environment every process gets (`inherited`, from [`inherited_environment`], and the
/// invocation's own variables), the inputs' contents and the keys of the steps it needs (so a
/// changed shim reruns everything built on it).
pub fn cache_keys(
    steps: &[Step],
    inherited: &[(String, String)],
    compiler_identity: &dyn Fn(usize) -> Key,
    file_hash: &mut dyn FnMut(&Path) -> anyhow::Result<Key>,
) -> anyhow::Result<Vec<Key>> {
    let mut keys: Vec<Key> = Vec::with_capacity(steps.len());
    for step in steps {
        let mut hasher = StableHasher::new();
        hasher
            .field("kshim matrix step v4")
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
        keys.push(hasher.finish());
    }
    Ok(keys)
}

/// Every step's cache key in a run of `planned` toolchains (found among `availabilities`), with
/// the inherited environment of [`crate::process::inherited_environment`] and each input file
/// hashed once.
pub fn run_keys(
    steps: &[Step],
    planned: &[crate::plan::PlannedToolchain],
    availabilities: &[crate::toolchain::Availability],
) -> anyhow::Result<Vec<Key>> {
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
    cache_keys(
        steps,
        &crate::process::inherited_environment(),
        &|toolchain| identities.get(&toolchain).copied().unwrap_or(Key(0)),
        &mut |path: &Path| {
            if let Some(key) = file_hashes.get(path) {
                return Ok(*key);
            }
            let key = hash_file(path)?;
            file_hashes.insert(path.to_path_buf(), key);
            Ok(key)
        },
    )
}

/// The compiler's identity for cache keys: where it is, its contents, size and modification
/// time, what `-vV` says, the environment it runs with, and its sysroot's libraries (their
/// names, sizes and modification times).
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
        for arg in &loader.leading_args {
            hasher.field(arg);
        }
    }
    if let Some(sysroot) = &version.sysroot {
        hasher.field(sysroot.to_string_lossy().as_bytes());
        let libraries = [
            sysroot.join("lib"),
            sysroot.join("lib/rustlib").join(&version.host).join("lib"),
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
                let (size, modified) = file_stamp(&file).unwrap_or((0, 0));
                hasher
                    .field(file.to_string_lossy().as_bytes())
                    .number(u128::from(size))
                    .number(modified);
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

    /// Who holds the lock, as the waiting message says it.
    fn holder(path: &Path) -> String {
        let owner = || -> Option<u32> { fs::read_to_string(path).ok()?.trim().parse().ok() };
        let alive = |pid: u32| {
            // SAFETY: signal 0 only checks that the process exists; it sends nothing.
            let answer = unsafe { libc::kill(pid as libc::pid_t, 0) };
            answer == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
        };
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
mod tests {
    use super::*;
    use crate::places::{Location, Place};

    #[test]
    fn cache_entries_round_trip() {
        let result = StepResult {
            outcome: Outcome::Pass,
            first_error: None,
            seconds: 1.5,
            cached: false,
            log: Some("[info] m: init\n".into()),
            tests: Some((12, 0, 1)),
            probe: Some(Ok(vec![
                Status::Stable(crate::catalog::Release::new(1, 79, 0)),
                Status::Gated,
                Status::Unknown,
            ])),
            usage: Some(GateErrors {
                places: vec![Place {
                    location: Location {
                        file: "kernel-shim/src/jump_label.rs".into(),
                        line: 159,
                        column: 9,
                    },
                    call_site: Some(Location {
                        file: "examples/rust_asm_goto.rs".into(),
                        line: 40,
                        column: 8,
                    }),
                    macros: vec!["static_branch_unlikely!".into()],
                }],
                attributes: vec![Location {
                    file: "lib.rs".into(),
                    line: 67,
                    column: 40,
                }],
                other_error: None,
            }),
            targets: Some(vec!["aarch64-unknown-none".into()]),
            interrupted: false,
        };
        let entry = encode_entry(&result, None);
        let back = decode_entry(&entry, None).unwrap();
        assert!(back.cached);
        assert_eq!(back.tests, result.tests);
        assert_eq!(back.probe, result.probe);
        assert_eq!(back.log, result.log);
        assert_eq!(back.usage, result.usage);
        assert_eq!(back.targets, result.targets);
        assert_eq!(back.outcome, Outcome::Pass);
        // An artifact that is gone makes the entry stale.
        assert!(decode_entry(
            &encode_entry(&result, Some((1, 2))),
            Some(Path::new("/nonexistent/libkernel.rlib"))
        )
        .is_none());
    }
}
