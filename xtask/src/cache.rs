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
use crate::json::{self, Value};
use crate::judge::StepResult;
use crate::places::GateErrors;
use crate::plan::{Rustc, Step};
use crate::status::Status;
use crate::version::RustcVersion;
use anyhow::Context;
use std::fs;
use std::path::{Path, PathBuf};

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
            "error_codes".into(),
            result.error_codes.as_ref().map_or(Value::Null, |codes| {
                Value::Array(codes.iter().cloned().map(Value::String).collect())
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
        error_codes: match entry.get("error_codes") {
            None | Some(Value::Null) => None,
            Some(codes) => Some(
                codes
                    .as_array()?
                    .iter()
                    .map(|code| code.as_str().map(String::from))
                    .collect::<Option<Vec<_>>>()?,
            ),
        },
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
/// Only while holding the [`crate::run_lock::RunLock`]: then no other run can be writing one.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::places::{Location, Place};
    use crate::plan::Rustc;
    use std::time::Duration;

    /// Rewrites `file` with other bytes of the same size, and sets its modification time back.
    fn overwrite_keeping_size_and_time(file: &Path) {
        let metadata = fs::metadata(file).unwrap();
        let mut bytes = fs::read(file).unwrap();
        bytes[0] ^= 1;
        std::thread::sleep(Duration::from_millis(20));
        fs::write(file, &bytes).unwrap();
        fs::File::options()
            .write(true)
            .open(file)
            .unwrap()
            .set_modified(metadata.modified().unwrap())
            .unwrap();
        assert_eq!(fs::metadata(file).unwrap().len(), metadata.len());
    }

    #[test]
    fn a_sysroot_library_rewritten_in_place_changes_the_compilers_identity() {
        let sysroot = crate::project_root().join("target/kshim/unit-tests/cache-sysroot");
        let _ = fs::remove_dir_all(&sysroot);
        let host = "x86_64-unknown-linux-gnu";
        let libraries = sysroot.join("lib/rustlib").join(host).join("lib");
        fs::create_dir_all(&libraries).unwrap();
        fs::create_dir_all(sysroot.join("bin")).unwrap();
        let rustc = sysroot.join("bin/rustc");
        fs::write(&rustc, "#!/bin/sh\n").unwrap();
        let libcore = libraries.join("libcore-0123.rlib");
        fs::write(&libcore, vec![b'c'; 4096]).unwrap();
        let rustc = Rustc {
            path: rustc,
            env: Vec::new(),
            loader: None,
            release: Release::new(1, 95, 0),
        };
        let version = RustcVersion {
            sysroot: Some(sysroot.clone()),
            ..crate::version::parse_verbose_version(
                "rustc 1.95.0 (59807616e 2026-04-14)\nbinary: rustc\nhost: x86_64-unknown-linux-gnu\nrelease: 1.95.0\n",
            )
            .unwrap()
        };
        let before = compiler_identity(&rustc, &version);
        overwrite_keeping_size_and_time(&libcore);
        assert_ne!(
            compiler_identity(&rustc, &version),
            before,
            "a libcore rewritten with its size and time kept served the old results"
        );
    }

    #[test]
    fn provisioned_inputs_rewritten_in_place_change_the_keys_of_the_cross_cells() {
        use crate::plan::{plan_cross, CrossToolchain, Emulation, Layout, PlannedToolchain};
        let scratch = crate::project_root().join("target/kshim/unit-tests/cache-cross");
        let _ = fs::remove_dir_all(&scratch);
        let library = scratch.join("usr/src/rustc-1.95.0/library");
        fs::create_dir_all(library.join("core/src")).unwrap();
        fs::create_dir_all(library.join("stdarch/crates/core_arch/src")).unwrap();
        let core = library.join("core/src/lib.rs");
        fs::write(&core, "#![no_core]\n").unwrap();
        fs::write(library.join("stdarch/crates/core_arch/src/mod.rs"), "\n").unwrap();
        let emulator = scratch.join("qemu-aarch64");
        fs::write(&emulator, "#!/bin/sh\nexec \"$@\"\n").unwrap();
        let linker = scratch.join("ld.lld");
        fs::write(&linker, "#!/bin/sh\n").unwrap();
        let root = crate::project_root();
        let layout = Layout::new(&root);
        let toolchain = PlannedToolchain {
            index: 0,
            directory_name: "cache-cross".into(),
            rustc: Rustc {
                path: scratch.join("rustc"),
                env: Vec::new(),
                loader: None,
                release: Release::new(1, 95, 0),
            },
            builds: true,
        };
        let sources = crate::library_sources::LibrarySources {
            library: library.clone(),
            identity: "test sources".into(),
            core_edition: "2021".into(),
            compiler_builtins: None,
        };
        let platform = crate::targets::KERNEL_TARGETS
            .iter()
            .find(|target| target.arch == "aarch64")
            .unwrap();
        let runner = |_: &crate::targets::KernelTarget| Some(Ok(emulator.clone()));
        let emulation = Emulation {
            linker: Ok(linker.clone()),
            runner: &runner,
        };
        let mut steps = Vec::new();
        plan_cross(
            &layout,
            &[(
                toolchain,
                CrossToolchain {
                    sources: Ok(sources),
                },
            )],
            &[platform],
            &emulation,
            &mut steps,
        )
        .unwrap();
        let provisioned = scratch.clone();
        let keys = || {
            cache_keys(&steps, &[], Key(2), &|_| Key(1), &mut |path: &Path| {
                input_key(path, &root, &provisioned)
            })
            .unwrap()
        };
        let of = |keys: &[Key], kind: crate::plan::Kind| -> Vec<Key> {
            steps
                .iter()
                .zip(keys)
                .filter(|(step, _)| step.kind == kind)
                .map(|(_, key)| *key)
                .collect()
        };
        let before = keys();
        assert_eq!(before, keys(), "keys are stable");
        // A step the xtask checks itself is keyed by the checker too, and only such a step.
        let other_checker = cache_keys(&steps, &[], Key(3), &|_| Key(1), &mut |path: &Path| {
            input_key(path, &root, &provisioned)
        })
        .unwrap();
        assert!(steps.iter().any(|step| step.check.is_some()));
        for ((step, before), after) in steps.iter().zip(&before).zip(&other_checker) {
            assert_eq!(step.check.is_some(), before != after, "{:?}", step.kind);
        }
        overwrite_keeping_size_and_time(&core);
        let after_core = keys();
        assert!(
            of(&after_core, crate::plan::Kind::Core)
                .iter()
                .zip(of(&before, crate::plan::Kind::Core))
                .all(|(after, before)| *after != before),
            "a damaged library source kept the key of core"
        );
        overwrite_keeping_size_and_time(&emulator);
        let after_emulator = keys();
        assert!(
            of(&after_emulator, crate::plan::Kind::Emulate)
                .iter()
                .zip(of(&after_core, crate::plan::Kind::Emulate))
                .all(|(after, before)| *after != before),
            "a replaced emulator kept the key of the program's run"
        );
        overwrite_keeping_size_and_time(&linker);
        assert_ne!(
            of(&keys(), crate::plan::Kind::Emulate),
            of(&after_emulator, crate::plan::Kind::Emulate),
            "a replaced linker kept the key of the program's build"
        );
    }

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
            error_codes: Some(vec!["E0636".into(), "duplicate_features".into()]),
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
        assert_eq!(back.error_codes, result.error_codes);
        assert_eq!(back.outcome, Outcome::Pass);
        // An artifact that is gone makes the entry stale.
        assert!(decode_entry(
            &encode_entry(&result, Some((1, 2))),
            Some(Path::new("/nonexistent/libkernel.rlib"))
        )
        .is_none());
    }
}
