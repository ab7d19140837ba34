// SPDX-License-Identifier: GPL-2.0
//! The matrix's result cache under `target/kshim/cache/`: one entry per step, named by a hash
//! of everything that can change its result, written atomically and only for results that are
//! the compiler's word.

use crate::catalog::Release;
use crate::features::expect::Outcome;
use crate::features::status::Status;
use crate::run::judge::StepResult;
use crate::run::plan::Step;
use crate::toolchains::loader::Launch;
use crate::toolchains::version::RustcVersion;
use crate::util::files::{self, write_atomically};
pub use crate::util::hash::{file_stamp, hash_file, stat_stamp, tree_stamp, Key, StableHasher};
use crate::util::json::{self, Deserialize, Serialize};
use anyhow::Context;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// The largest cache entry read (a larger one is a miss): its largest part is a module log, at
/// most [`crate::util::process::CAPTURE_LIMIT`] before JSON escapes it.
const ENTRY_LIMIT: u64 = 64 << 20;

/// The cache directory and whether reading from it is allowed (`--no-cache` still writes).
#[derive(Debug)]
pub struct Cache {
    directory: PathBuf,
    read: bool,
    /// Whether a failed write was already reported.
    write_failed: AtomicBool,
}

impl Cache {
    pub fn new(directory: PathBuf, read: bool) -> Self {
        Self {
            directory,
            read,
            write_failed: AtomicBool::default(),
        }
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
        decode_entry(&text, artifact)
    }

    /// Stores a result for `key` with the `artifact` stamp it was made with. A cache that
    /// cannot be written costs a rerun next time; the first failure is said on stderr, once.
    pub fn store(&self, key: Key, result: &StepResult, artifact: Option<(u64, u128)>) {
        let written = write_atomically(&self.path(key), encode_entry(result, artifact).as_bytes());
        if let Err(error) = written {
            if !self.write_failed.swap(true, Ordering::Relaxed) {
                eprintln!(
                    "warning: the cache cannot be written, so this run's results will be \
                     computed again next time: {}",
                    crate::util::output::escape_lines(&format!("{error:#}"))
                );
            }
        }
    }
}

/// A cache entry: a step's result and the stamp of the file the step made.
#[derive(Serialize, Deserialize)]
struct Entry<R> {
    #[serde(flatten)]
    result: R,
    /// `SIZE MODIFIED`, the stamp of the step's artifact.
    #[serde(deserialize_with = "json::nullable")]
    artifact: Option<String>,
}

fn encode_entry(result: &StepResult, artifact: Option<(u64, u128)>) -> String {
    let artifact = artifact.map(|(size, modified)| format!("{size} {modified}"));
    json::to_value(&Entry { result, artifact }).to_string()
}

/// Reads a cache entry back; `None` when damaged, or passing with a changed artifact.
fn decode_entry(text: &str, artifact: Option<&Path>) -> Option<StepResult> {
    let entry: Entry<StepResult> = json::read(text).ok()?;
    // Only a step that passed made a file that later steps use; a failed one made none (its
    // outputs are removed before it runs), and its verdict stands without it.
    if let Some(path) = artifact.filter(|_| entry.result.outcome == Outcome::Pass) {
        let (size, modified) = file_stamp(path)?;
        entry
            .artifact
            .filter(|stamp| *stamp == format!("{size} {modified}"))?;
    }
    Some(StepResult {
        cached: true,
        ..entry.result
    })
}

/// The `probe` member of an entry: per feature its status word and release, or the error.
pub(crate) mod probe {
    use super::{Release, Status};
    use crate::util::json::{json, Deserialize, Serialize};
    use serde::{de::Error, Deserializer, Serializer};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Entry {
        Statuses(Vec<(String, Option<String>)>),
        Failed { error: String },
    }

    type Probe = Option<Result<Vec<Status>, String>>;

    pub fn serialize<S: Serializer>(probe: &Probe, serializer: S) -> Result<S::Ok, S::Error> {
        match probe {
            None => serializer.serialize_none(),
            Some(Ok(statuses)) => serializer.collect_seq(statuses.iter().map(|status| {
                let since = status.stable_since().map(|since| since.to_string());
                (status.word(), since)
            })),
            Some(Err(error)) => json!({ "error": error }).serialize(serializer),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Probe, D::Error> {
        Ok(match Option::<Entry>::deserialize(deserializer)? {
            None => None,
            Some(Entry::Statuses(statuses)) => Some(Ok(statuses
                .into_iter()
                .map(|(word, since)| {
                    let since = since.map(|since| Release::parse(&since).ok_or(()));
                    Status::from_parts(&word, since.transpose().ok()?)
                })
                .collect::<Option<_>>()
                .ok_or_else(|| D::Error::custom("unknown status or release"))?)),
            Some(Entry::Failed { error }) => Some(Err(error)),
        })
    }
}

/// Computes every step's cache key, which holds the keys of the steps it needs and, for a step
/// the xtask checks itself (an object's jump table), `checker`, the checking xtask's identity,
/// so that a changed checker's verdict is never served from a run of the old one.
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
            .field("kshim matrix step v6")
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

/// Every step's cache key, each compiler known by its [`compiler_identity`], each input file
/// hashed once ([`input_key`]).
pub fn keys_by_identity(
    steps: &[Step],
    identity: &dyn Fn(usize) -> Option<Key>,
    root: &Path,
) -> anyhow::Result<Vec<Key>> {
    let provisioned = crate::toolchains::debian::toolchains_dir();
    let mut file_hashes: std::collections::HashMap<PathBuf, Key> = Default::default();
    let checker = crate::util::hash::running_xtask_stamp()
        .context("stamping the running xtask, which checks objects itself")?;
    cache_keys(
        steps,
        &crate::util::process::inherited_environment(),
        checker,
        &|toolchain| identity(toolchain).unwrap_or(Key(0)),
        &mut |path: &Path| {
            if !file_hashes.contains_key(path) {
                file_hashes.insert(path.to_path_buf(), input_key(path, root, &provisioned)?);
            }
            Ok(file_hashes[path])
        },
    )
}

/// The key of one input of a step: a file of the checkout at `root` (outside `provisioned`) by
/// its contents, any other file by its [`stat_stamp`], a directory by its [`tree_stamp`].
pub fn input_key(path: &Path, root: &Path, provisioned: &Path) -> anyhow::Result<Key> {
    if path.is_dir() {
        tree_stamp(path)
    } else if path.starts_with(root) && !path.starts_with(provisioned) {
        hash_file(path)
    } else {
        stat_stamp(path).with_context(|| format!("reading {}", path.display()))
    }
}

/// The compiler's identity for cache keys. Its contents catch a compiler replaced by another
/// of the same size and time (a wrapper script rewritten and `touch`ed back); `-vV` catches a
/// wrapper whose text stayed but whose real compiler changed; the sysroot's libraries and host
/// tools (`rust-lld`), by their [`stat_stamp`]s, catch a standard library rebuilt under an
/// unchanged driver.
pub fn compiler_identity(launch: &Launch, version: &RustcVersion) -> Key {
    let mut hasher = StableHasher::new();
    hasher.field(launch.rustc.to_string_lossy().as_bytes());
    let (size, modified) = file_stamp(&launch.rustc).unwrap_or((0, 0));
    let contents = hash_file(&launch.rustc).map_or(0, |key| key.0);
    hasher
        .number(u128::from(size))
        .number(modified)
        .number(contents)
        .field(&version.raw);
    for (name, value) in &launch.env {
        hasher.field(name).field(value);
    }
    if let Some(loader) = &launch.loader {
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
            let files = crate::util::files::sorted_entries(&directory).into_iter();
            for file in files.filter(|path| path.is_file()) {
                hasher
                    .field(file.to_string_lossy().as_bytes())
                    .number(stat_stamp(&file).map_or(0, |stamp| stamp.0));
            }
        }
    }
    hasher.finish()
}

/// Removes the temporary files of [`write_atomically`] that a killed run left in `directory`;
/// only while holding the [`crate::util::run_lock::RunLock`], when no other run can be writing one.
pub fn remove_stale_temporaries(directory: &Path) {
    for entry in fs::read_dir(directory).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') && name.ends_with(".tmp") {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests;
