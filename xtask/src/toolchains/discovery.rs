// SPDX-License-Identifier: GPL-2.0
//! The compilers that satisfy the pins of [`crate::toolchains::pins`]: any compiler whose
//! `rustc -vV` reports a pin's release, wherever it comes from ([`Source`]); [`discover`] answers
//! which compiler satisfies each pin and which pins are missing.

use crate::toolchains::debian::{self, DebianSource, Provisioning};
use crate::toolchains::loader::Launch;
use crate::toolchains::pins::{Pin, Pins};
use crate::toolchains::version::{parse_verbose_version, RustcVersion};
use crate::util::files::{read_text, write_atomically};
use crate::util::hash::StableHasher;
use crate::util::interrupt::interrupted;
use crate::util::json::{self, Deserialize, Serialize};
use anyhow::{anyhow, ensure, Context as _};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use xshell::{cmd, Shell};

mod specs;
#[cfg(test)]
mod tests;

/// Where a compiler comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// An installed rustup toolchain, by its `rustup toolchain list` name.
    Rustup { name: String },
    /// A rustc executable given by path with `--toolchain`.
    Path,
    /// Debian's packages, unpacked under `target/toolchains/`; the package's version is exact.
    Debian { package: DebianSource },
}

impl Source {
    pub fn kind(&self) -> SourceKind {
        match self {
            Source::Rustup { .. } => SourceKind::Rustup,
            Source::Path => SourceKind::Path,
            Source::Debian { .. } => SourceKind::Debian,
        }
    }
}

/// The kinds of [`Source`], as reports name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKind {
    Rustup,
    Path,
    Debian,
}

impl SourceKind {
    /// The word reports use.
    pub fn word(self) -> &'static str {
        match self {
            SourceKind::Rustup => "rustup",
            SourceKind::Path => "path",
            SourceKind::Debian => "debian",
        }
    }
}

/// A compiler the xtask can run, and how to run it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolchain {
    /// A unique short id for reports: the pin's, or one derived from a `--toolchain` spec.
    pub id: String,
    /// What was asked for or how it was found: `rustup:nightly`, `/path/to/rustc`,
    /// `debian:trixie:rustc=1.85.1+dfsg1-1+deb13u1`.
    pub spec: String,
    pub source: Source,
    pub launch: Launch,
    /// The id of the pin it satisfies, if any.
    pub pin: Option<String>,
}

impl Toolchain {
    /// A toolchain that satisfies no pin yet, its spec said by where it comes from.
    pub(crate) fn launched(id: String, source: Source, launch: Launch) -> Toolchain {
        let spec = match &source {
            Source::Rustup { name } => format!("rustup:{name}"),
            Source::Debian { package } => format!("debian:{package}"),
            Source::Path => launch.rustc.display().to_string(),
        };
        Toolchain {
            id,
            spec,
            source,
            launch,
            pin: None,
        }
    }
}

/// What became of one pin or one `--toolchain` spec.
#[derive(Debug, Clone)]
pub enum Availability {
    Found {
        toolchain: Toolchain,
        version: RustcVersion,
    },
    /// A compiler that cannot be run, exited non-zero or answered an unreadable `-vV`.
    Broken { toolchain: Toolchain, error: String },
    /// A pin that no provisioned or installed compiler satisfies.
    Missing { pin: Pin, install_hint: String },
}

impl Availability {
    pub fn id(&self) -> &str {
        match self {
            Availability::Found { toolchain, .. } | Availability::Broken { toolchain, .. } => {
                &toolchain.id
            }
            Availability::Missing { pin, .. } => &pin.id,
        }
    }
}

/// The pins of `pins_path` (default [`Pins::default_path`]) resolved to compilers, one entry
/// per pin in file order (the compiler that satisfies it by [`preference`], or why none does);
/// or with `specs`, one entry per spec, in order (a Debian spec is provisioned on the spot,
/// with progress on stderr, where `provisioning` allows it).
///
/// A compiler whose `rustc -vV` or `--print sysroot` outlasts `timeout` is killed and reported
/// broken; after SIGINT or SIGTERM those left are reported broken, as not checked.
pub fn discover(
    sh: &Shell,
    pins_path: Option<&Path>,
    specs: &[String],
    timeout: Duration,
    provisioning: Provisioning,
) -> anyhow::Result<Vec<Availability>> {
    let pins = Pins::load(&pins_path.map_or_else(Pins::default_path, Path::to_owned))?;
    if specs.is_empty() {
        Ok(discover_pins(sh, &pins.pins, timeout))
    } else {
        specs::discover_specs(sh, &pins, specs, timeout, provisioning)
    }
}

/// How long `rustc -vV` and `--print sysroot` may take where no `--timeout` is given.
pub const VERSION_TIMEOUT: Duration = Duration::from_secs(60);

/// At most this many compilers are probed at once (a thousand at once would swamp the machine).
const PARALLEL_PROBES: usize = 16;

const NOT_CHECKED: &str = "not checked: the run was interrupted";

/// Probes toolchains, a few at a time, each distinct compiler (the same [`Launch`]) once.
fn probe_all(toolchains: Vec<Toolchain>, timeout: Duration) -> Vec<Availability> {
    let mut first_of: HashMap<Launch, usize> = HashMap::new();
    for (index, toolchain) in toolchains.iter().enumerate() {
        first_of.entry(toolchain.launch.clone()).or_insert(index);
    }
    let distinct: Vec<usize> = (0..toolchains.len())
        .filter(|&index| first_of[&toolchains[index].launch] == index)
        .collect();
    let next = AtomicUsize::new(0);
    let workers = 0..PARALLEL_PROBES.min(distinct.len());
    let answers: HashMap<_, _> = crate::in_parallel(workers, |_, _| {
        let mut answers = Vec::new();
        while let Some(&index) = distinct.get(next.fetch_add(1, Ordering::SeqCst)) {
            let answer = match interrupted() {
                Some(_) => Err(anyhow!(NOT_CHECKED)),
                None => verify(&toolchains[index], timeout),
            };
            answers.push((index, answer));
        }
        answers
    })
    .into_iter()
    .flatten()
    .collect();
    toolchains
        .into_iter()
        .map(|toolchain| match &answers[&first_of[&toolchain.launch]] {
            Ok(version) => Availability::Found {
                toolchain,
                version: version.clone(),
            },
            Err(error) => Availability::Broken {
                toolchain,
                error: format!("{error:#}"),
            },
        })
        .collect()
}

fn discover_pins(sh: &Shell, pins: &[Pin], timeout: Duration) -> Vec<Availability> {
    let rustup: Vec<Toolchain> = rustup_toolchains(sh)
        .iter()
        .map(|(name, rustc)| rustup_toolchain(name, rustc))
        .collect();
    let candidates: Vec<Availability> = probe_all(rustup, timeout)
        .into_iter()
        .chain(provisioned_candidates(timeout))
        .collect();
    pins.iter()
        .map(|pin| {
            let satisfying = candidates.iter().filter_map(|candidate| match candidate {
                Availability::Found { toolchain, version } if pin.is_satisfied_by(version) => {
                    Some((preference(pin, toolchain), candidate))
                }
                _ => None,
            });
            let broken = candidates.iter().find(|candidate| match candidate {
                Availability::Broken { toolchain, .. } => is_meant_for(pin, toolchain),
                _ => false,
            });
            let found = satisfying.min_by(|one, other| one.0.cmp(&other.0));
            let Some(mut chosen) = found.map(|(_, candidate)| candidate).or(broken).cloned() else {
                let install_hint = pin.install_hint();
                return Availability::Missing {
                    pin: pin.clone(),
                    install_hint,
                };
            };
            if let Availability::Found { toolchain, .. } | Availability::Broken { toolchain, .. } =
                &mut chosen
            {
                toolchain.id = pin.id.clone();
                toolchain.pin = Some(pin.id.clone());
            }
            chosen
        })
        .collect()
}

/// Orders the compilers that satisfy a pin: the ones it names before the others of their kind,
/// rustup's before Debian's before paths.
fn preference(pin: &Pin, toolchain: &Toolchain) -> (u8, String) {
    let rank = match &toolchain.source {
        Source::Rustup { .. } if is_meant_for(pin, toolchain) => 0,
        Source::Rustup { .. } => 1,
        Source::Debian { .. } if is_meant_for(pin, toolchain) => 2,
        Source::Debian { .. } => 3,
        Source::Path => 4,
    };
    (rank, toolchain.spec.clone())
}

/// Whether `toolchain` is the source the pin names (its rustup toolchain or Debian build); a
/// broken one makes the pin broken rather than missing.
pub(crate) fn is_meant_for(pin: &Pin, toolchain: &Toolchain) -> bool {
    match &toolchain.source {
        Source::Rustup { name } => pin
            .rustup
            .as_deref()
            .is_some_and(|r| rustup_name_is(name, r)),
        Source::Debian { package } => pin
            .debian
            .as_ref()
            .is_some_and(|wanted| package.is_build_of(wanted, Some(&pin.release))),
        Source::Path => false,
    }
}

/// Whether an installed toolchain (`1.95.0-x86_64-unknown-linux-gnu`) is the one a short
/// rustup name (`1.95.0`) means.
fn rustup_name_is(installed: &str, short: &str) -> bool {
    installed == short
        // The rest must be a host triple (`x86_64-...`), not more of a name (`-2026-05-20`).
        || installed
            .strip_prefix(short)
            .and_then(|rest| rest.strip_prefix('-'))
            .is_some_and(|host| host.starts_with(|c: char| c.is_ascii_alphabetic()))
}

/// Every installed rustup toolchain with its real rustc (none if rustup is not there).
fn rustup_toolchains(sh: &Shell) -> Vec<(String, PathBuf)> {
    let list = cmd!(sh, "rustup toolchain list -v")
        .env("RUST_BACKTRACE", "0")
        .quiet()
        .ignore_stderr()
        .read();
    parse_rustup_list(&list.unwrap_or_default())
}

/// Reads `rustup toolchain list -v`: `NAME [(default)] [(active)] PATH` per line.
fn parse_rustup_list(list: &str) -> Vec<(String, PathBuf)> {
    list.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let name = words.next()?;
            let path = words.last().filter(|path| path.starts_with('/'))?;
            Some((name.to_owned(), Path::new(path).join("bin").join("rustc")))
        })
        .collect()
}

/// The rustup toolchain `name`, whose real rustc is `rustc`.
pub(crate) fn rustup_toolchain(name: &str, rustc: &Path) -> Toolchain {
    let source = Source::Rustup {
        name: name.to_owned(),
    };
    let launch = host_launch(rustc.to_owned());
    Toolchain::launched(name.to_owned(), source, launch)
}

pub(super) fn host_launch(rustc: PathBuf) -> Launch {
    Launch {
        env: library_path_env(&rustc),
        rustc,
        loader: None,
    }
}

/// Every compiler provisioned under `target/toolchains/debian/`, probed; one whose loader
/// cannot be worked out is broken.
fn provisioned_candidates(timeout: Duration) -> Vec<Availability> {
    let mut broken = Vec::new();
    let mut toolchains = Vec::new();
    for (prefix, package) in debian::provisioned_prefixes(&debian::toolchains_dir()) {
        let id = package.to_string();
        let source = Source::Debian { package };
        match Launch::for_prefix(&prefix) {
            Ok(launch) => toolchains.push(Toolchain::launched(id, source, launch)),
            Err(error) => broken.push(Availability::Broken {
                toolchain: Toolchain::launched(
                    id,
                    source,
                    host_launch(prefix.join("usr/bin/rustc")),
                ),
                error: format!("{error:#}"),
            }),
        }
    }
    probe_all(toolchains, timeout)
        .into_iter()
        .chain(broken)
        .collect()
}

/// The `LD_LIBRARY_PATH` a rustc needs when its driver is in a multiarch directory: Debian's,
/// unpacked anywhere but `/`, has no rpath to `PREFIX/usr/lib/<multiarch>/`, where its
/// `librustc_driver-*.so` and `libLLVM.so.N` are. rustup's keep the driver in `BIN/../lib/`,
/// which their rpath covers, and get nothing.
pub fn library_path_env(rustc: &Path) -> Vec<(String, String)> {
    let Some(prefix) = rustc.parent().and_then(Path::parent) else {
        return Vec::new();
    };
    let mut dirs = crate::util::files::sorted_entries(&prefix.join("lib"));
    dirs.retain(|dir| holds(dir, "librustc_driver-", ".so"));
    if dirs.is_empty() {
        return Vec::new();
    }
    let joined = std::env::join_paths(&dirs)
        .map(|joined| joined.to_string_lossy().into_owned())
        .unwrap_or_default();
    vec![("LD_LIBRARY_PATH".to_owned(), joined)]
}

/// Whether `dir` holds a file named `PREFIX*SUFFIX`.
fn holds(dir: &Path, prefix: &str, suffix: &str) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.filter_map(Result::ok).any(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name.starts_with(prefix) && name.ends_with(suffix)
        })
    })
}

/// Checks that a compiler works: it answers `rustc -vV` readably within `timeout`, and has
/// `core` for its host in its sysroot (without it, it cannot build anything).
pub fn verify(toolchain: &Toolchain, timeout: Duration) -> anyhow::Result<RustcVersion> {
    let launch = &toolchain.launch;
    let rustc = launch.rustc.display();
    ensure!(launch.rustc.exists(), "{rustc} does not exist");
    ensure!(
        !launch.rustc.is_dir(),
        "{rustc} is a directory, not a rustc executable"
    );
    let stamps = answer_stamps(toolchain);
    let kept = stamps.as_ref().and_then(|stamps| {
        let kept: Answers = json::read(&read_text(&answers_path(stamps), 1 << 20).ok()?).ok()?;
        let version = parse_verbose_version(&kept.verbose_version).ok()?;
        (kept.stamps == *stamps).then_some((version, kept.sysroot))
    });
    let (mut version, sysroot) = match kept {
        Some(kept) => kept,
        None => {
            let version = parse_verbose_version(&launch.run(&["-vV"], timeout)?)?;
            let sysroot = launch.run(&["--print", "sysroot"], timeout)?;
            // The last line: a wrapper's own chatter comes before what rustc prints.
            let sysroot = sysroot
                .lines()
                .map(str::trim)
                .rfind(|line| !line.is_empty())
                .map(PathBuf::from)
                .with_context(|| format!("`{rustc} --print sysroot` printed nothing"))?;
            if let Some(stamps) = stamps {
                let kept = Answers {
                    stamps,
                    verbose_version: version.raw.clone(),
                    sysroot: sysroot.clone(),
                };
                // One that cannot be written costs a question next time.
                let json = json::to_pretty(&json::to_value(&kept));
                let _ = write_atomically(&answers_path(&kept.stamps), json.as_bytes());
            }
            (version, sysroot)
        }
    };
    let libraries = sysroot.join("lib/rustlib").join(&version.host).join("lib");
    ensure!(
        holds(&libraries, "libcore-", ".rlib"),
        "its sysroot {} has no `core` for its host {}: no libcore-*.rlib in {}",
        sysroot.display(),
        version.host,
        libraries.display()
    );
    version.sysroot = Some(sysroot);
    Ok(version)
}

/// What an installed compiler answered to `-vV` and `--print sysroot`, kept under
/// `target/toolchains/answers/` with the [`answer_stamps`] they were given for, so that a warm
/// run starts no compiler just to ask again; any changed stamp asks again.
#[derive(Serialize, Deserialize)]
struct Answers {
    stamps: String,
    verbose_version: String,
    sysroot: PathBuf,
}

/// The file for these stamps: its name only spreads the entries, the stamps inside decide.
fn answers_path(stamps: &str) -> PathBuf {
    let key = StableHasher::new().field(stamps).finish();
    debian::toolchains_dir().join(format!("answers/{key}.json"))
}

/// What the answers of an installed compiler depend on: the path, size and modification time of
/// its executable, its loader and every file of its `lib` and `rustlib` libraries, which an
/// update changes. `None` for a compiler given as a path: a wrapper's real compiler may change
/// behind an unchanged file.
fn answer_stamps(toolchain: &Toolchain) -> Option<String> {
    if toolchain.source == Source::Path {
        return None;
    }
    let launch = &toolchain.launch;
    let sysroot = launch.rustc.parent()?.parent()?;
    let mut files = vec![launch.rustc.clone()];
    files.extend(launch.loader.iter().map(|loader| loader.program.clone()));
    let targets = crate::util::files::sorted_entries(&sysroot.join("lib/rustlib"));
    let targets = targets.into_iter().map(|target| target.join("lib"));
    let directories = [sysroot.join("lib"), sysroot.join("lib/x86_64-linux-gnu")];
    for directory in directories.into_iter().chain(targets) {
        files.extend(crate::util::files::sorted_entries(&directory));
    }
    files.sort();
    let mut stamps = String::new();
    for file in files {
        let (size, modified) = crate::util::hash::file_stamp(&file)?;
        stamps.push_str(&format!("{} {size} {modified}\n", file.display()));
    }
    Some(stamps)
}
