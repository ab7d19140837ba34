// SPDX-License-Identifier: GPL-2.0
//! Hardening that needs the xtask's internals: discovery facing compilers that misbehave, and
//! the cache keys of a planned run. What a user sees of them (a matrix of bad compilers, bad
//! input, interrupted and concurrent runs, a changed compiler behind the cache) is tested
//! through the binary in the top-level `tests/` crate.
//!
//! The fake compilers are shell scripts written by the tests into scratch directories; most
//! forward what they do not fake to the compiler running these tests. The tree is a tiny one
//! ([`tiny_tree`]): a shim with one test and every example the catalog names.

mod bad_compilers;
mod cache_keys;

use crate::catalog::FEATURES;
use crate::run::plan::Layout;
use crate::tests::support::{current_rustc, scratch_dir};
use crate::toolchains::discovery::Availability;
use crate::toolchains::version::Channel;
use crate::util::process::inherited_environment;
use crate::util::process::Invocation;
use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The compiler running these tests, and what it says of itself.
struct RealCompiler {
    path: PathBuf,
    verbose_version: String,
    release: String,
}

fn real_compiler() -> &'static RealCompiler {
    static REAL: OnceLock<RealCompiler> = OnceLock::new();
    REAL.get_or_init(|| {
        let path = current_rustc();
        let output = crate::util::process::run(
            &Invocation {
                program: path.clone(),
                args: vec!["-vV".into()],
                env: crate::toolchains::discovery::library_path_env(&path),
                env_remove: Vec::new(),
            },
            Duration::from_secs(60),
        )
        .expect("running rustc -vV");
        let verbose_version = output.stdout;
        let version = crate::toolchains::version::parse_verbose_version(&verbose_version).unwrap();
        RealCompiler {
            path,
            release: version.release.to_string(),
            verbose_version,
        }
    })
}

/// `rustc -vV` text of the real compiler, with its release replaced by `release` (a suffix
/// such as `-beta.3` included) and its first line's tail by `tail`.
fn verbose_version_as(release: &str, tail: &str) -> String {
    let real = real_compiler();
    real.verbose_version
        .lines()
        .map(|line| {
            if line.starts_with("rustc ") {
                format!("rustc {release}{tail}")
            } else if line.starts_with("release: ") {
                format!("release: {release}")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// Writes an executable shell script.
fn script(path: &Path, body: &str) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_path_buf()
}

/// A wrapper that answers `-vV` with `verbose_version` and passes everything else to the real
/// compiler, after `before` (shell code that sees the arguments in `$*`).
fn wrapper(path: &Path, verbose_version: &str, before: &str) -> PathBuf {
    let real = &real_compiler().path;
    script(
        path,
        &format!(
            "if [ \"$1\" = -vV ]; then cat <<'END'\n{verbose_version}END\nexit 0; fi\n{before}\nexec '{}' \"$@\"\n",
            real.display()
        ),
    )
}

/// A tiny kshim tree in a fresh scratch directory ([`crate::tests::support::tiny_tree`]) with every
/// example the catalog names.
fn tiny_tree(name: &str) -> PathBuf {
    let names: BTreeSet<&str> = FEATURES.iter().map(|feature| feature.example).collect();
    let names: Vec<&str> = names.into_iter().collect();
    crate::tests::support::tiny_tree(&format!("hardening-{name}"), &names)
}

/// Processes, other than zombies, whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        let Ok(command_line) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let command_line = text(&command_line).replace('\0', " ");
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|stat| {
                stat.rsplit_once(") ")
                    .map(|(_, rest)| rest.starts_with('Z'))
            })
            .unwrap_or(true);
        if command_line.contains(needle) && !zombie {
            found.push(format!("{pid}: {command_line}"));
        }
    }
    found
}
