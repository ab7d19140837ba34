//! The compilers that satisfy the pins of [`crate::pins`]: a pin is satisfied by any compiler
//! whose `rustc -vV` reports its release, wherever that compiler comes from (any rustup
//! toolchain of any name, a Debian package unpacked by `cargo xtask toolchains install` under
//! `target/toolchains/debian/`, or a rustc path given with `--toolchain`); [`discover`] answers
//! "which compiler satisfies each pin, and which pins are missing", and is what every command
//! that runs compilers starts from.

use crate::pins::{Pin, Pins};
use crate::version::{parse_verbose_version, RustcVersion};
use anyhow::{bail, Context};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use xshell::{cmd, Shell};

/// Where a compiler comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// An installed rustup toolchain, by the name `rustup toolchain list` gives it.
    Rustup {
        /// The toolchain's name: `nightly-x86_64-unknown-linux-gnu`, `1.95.0`.
        name: String,
    },
    /// A rustc executable given by path with `--toolchain`.
    Path,
    /// Debian's packages, unpacked by `cargo xtask toolchains install`.
    Debian {
        /// The compiler package as `package=version`: `rustc-web=1.85.0+dfsg3-1~deb12u3`.
        package: String,
    },
}

impl Source {
    /// What kind of source this is, without the details.
    pub fn kind(&self) -> SourceKind {
        match self {
            Source::Rustup { .. } => SourceKind::Rustup,
            Source::Path => SourceKind::Path,
            Source::Debian { .. } => SourceKind::Debian,
        }
    }
}

/// The kinds of [`Source`], as reports name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// An installed rustup toolchain.
    Rustup,
    /// A rustc executable given by path.
    Path,
    /// Debian's packages.
    Debian,
}

impl SourceKind {
    /// Every kind.
    pub const ALL: [SourceKind; 3] = [SourceKind::Rustup, SourceKind::Path, SourceKind::Debian];

    /// The word reports use: `rustup`, `path`, `debian`.
    pub fn word(self) -> &'static str {
        match self {
            SourceKind::Rustup => "rustup",
            SourceKind::Path => "path",
            SourceKind::Debian => "debian",
        }
    }

    /// The kind that `word` names, if any.
    pub fn from_word(word: &str) -> Option<SourceKind> {
        SourceKind::ALL.into_iter().find(|kind| kind.word() == word)
    }
}

/// A compiler the xtask can run, and how to run it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolchain {
    /// A unique short id for reports: the pin's id, or for a `--toolchain` spec one derived
    /// from it.
    pub id: String,
    /// What was asked for or how it was found: `rustup:nightly`, `/path/to/rustc`,
    /// `debian:rustc-web=1.85.0+dfsg3-1~deb12u3`.
    pub spec: String,
    /// Where it comes from.
    pub source: Source,
    /// The absolute path of the executable to run (never the rustup proxy).
    pub rustc: PathBuf,
    /// Extra environment for every run of this rustc and of the programs it builds, such as
    /// `LD_LIBRARY_PATH` for an unpacked Debian compiler.
    pub env: Vec<(String, String)>,
    /// The id of the pin it satisfies, if any.
    pub pin: Option<String>,
}

impl fmt::Display for Toolchain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.id == self.spec {
            write!(f, "{}", self.id)
        } else {
            write!(f, "{} ({})", self.id, self.spec)
        }
    }
}

/// What became of one pin or one `--toolchain` spec.
#[derive(Debug, Clone)]
pub enum Availability {
    /// A compiler that runs and reports a version.
    Found {
        /// The compiler.
        toolchain: Toolchain,
        /// What its `rustc -vV` said.
        version: RustcVersion,
    },
    /// A compiler that exists but does not work.
    Broken {
        /// The compiler.
        toolchain: Toolchain,
        /// Why: it cannot be run, it exited non-zero, or its `-vV` is unreadable; with what it
        /// printed.
        error: String,
    },
    /// A pin that no compiler on this machine satisfies.
    Missing {
        /// The pin.
        pin: Pin,
        /// The exact command that would install it.
        install_hint: String,
    },
}

impl Availability {
    /// The report id: the toolchain's, or the missing pin's.
    pub fn id(&self) -> &str {
        match self {
            Availability::Found { toolchain, .. } | Availability::Broken { toolchain, .. } => {
                &toolchain.id
            }
            Availability::Missing { pin, .. } => &pin.id,
        }
    }
}

/// Where `cargo xtask toolchains install` puts what it provisions: `target/toolchains/` at the
/// repository root.
///
/// It ignores `CARGO_TARGET_DIR` on purpose: that is one build's scratch space, while the
/// provisioned compilers are the machine's, shared by every build of the repository.
pub fn toolchains_dir() -> PathBuf {
    crate::project_root().join("target").join("toolchains")
}

/// The file in a provisioned compiler's directory that says it is complete and what it holds.
pub const PROVISIONED_MARKER: &str = "kshim-provisioned.txt";

/// The pins resolved to compilers, plus every `--toolchain` spec.
///
/// The pins come from `pins_path`, or from `toolchains.toml` at the repository root. Without
/// specs, the result has one entry per pin, in file order: the compiler that satisfies it
/// (preferring, among several, the rustup toolchain the pin names, then any other rustup
/// toolchain, then a provisioned Debian compiler), or why none does. With specs, it has one
/// entry per spec, in order, and nothing else; each spec is a rustup toolchain name or a path
/// to a rustc executable; one that names nothing (no such file, no such rustup toolchain) is
/// [`Availability::Broken`], with the reason, like any other compiler that does not work.
///
/// A compiler whose `rustc -vV` or `--print sysroot` runs longer than `timeout` is killed
/// (with its process group) and reported broken.
pub fn discover(
    sh: &Shell,
    pins_path: Option<&Path>,
    specs: &[String],
    timeout: Duration,
) -> anyhow::Result<Vec<Availability>> {
    let pins_path = pins_path
        .map(Path::to_owned)
        .unwrap_or_else(Pins::default_path);
    let pins = Pins::load(&pins_path)?;
    if specs.is_empty() {
        Ok(discover_pins(sh, &pins, timeout))
    } else {
        Ok(discover_specs(sh, &pins, specs, timeout))
    }
}

/// How long `rustc -vV` (and `rustc --print sysroot`) may take where no `--timeout` is given,
/// before the compiler is killed and reported broken.
pub const VERSION_TIMEOUT: Duration = Duration::from_secs(60);

/// Probes toolchains in parallel: each probe mostly waits, and a hanging compiler then costs
/// one timeout however many others there are.
fn probe_all(toolchains: Vec<Toolchain>, timeout: Duration) -> Vec<Availability> {
    std::thread::scope(|scope| {
        let probes: Vec<_> = toolchains
            .into_iter()
            .map(|toolchain| {
                scope.spawn(move || match verify(&toolchain, timeout) {
                    Ok(version) => Availability::Found { toolchain, version },
                    Err(error) => Availability::Broken { error, toolchain },
                })
            })
            .collect();
        probes
            .into_iter()
            .map(|probe| probe.join().expect("a toolchain probe panicked"))
            .collect()
    })
}

fn discover_pins(sh: &Shell, pins: &Pins, timeout: Duration) -> Vec<Availability> {
    let candidates: Vec<Availability> = rustup_candidates(sh, timeout)
        .into_iter()
        .chain(provisioned_candidates(timeout))
        .collect();
    pins.pins
        .iter()
        .map(|pin| {
            let found = candidates
                .iter()
                .filter_map(|candidate| match candidate {
                    Availability::Found { toolchain, version } if pin.is_satisfied_by(version) => {
                        Some((toolchain, version))
                    }
                    _ => None,
                })
                .min_by_key(|(toolchain, _)| preference(pin, toolchain));
            if let Some((toolchain, version)) = found {
                let toolchain = Toolchain {
                    id: pin.id.clone(),
                    pin: Some(pin.id.clone()),
                    ..toolchain.clone()
                };
                return Availability::Found {
                    toolchain,
                    version: version.clone(),
                };
            }
            let broken = candidates.iter().find_map(|candidate| match candidate {
                Availability::Broken { toolchain, error } if is_meant_for(pin, toolchain) => {
                    Some((toolchain, error))
                }
                _ => None,
            });
            if let Some((toolchain, error)) = broken {
                return Availability::Broken {
                    toolchain: Toolchain {
                        id: pin.id.clone(),
                        pin: Some(pin.id.clone()),
                        ..toolchain.clone()
                    },
                    error: error.clone(),
                };
            }
            Availability::Missing {
                pin: pin.clone(),
                install_hint: pin.install_hint(),
            }
        })
        .collect()
}

/// Orders the compilers that satisfy a pin: the rustup toolchain the pin names first.
fn preference(pin: &Pin, toolchain: &Toolchain) -> (u8, String) {
    let rank = match &toolchain.source {
        Source::Rustup { name }
            if pin
                .rustup
                .as_deref()
                .is_some_and(|r| rustup_name_is(name, r)) =>
        {
            0
        }
        Source::Rustup { .. } => 1,
        Source::Debian { .. } => 2,
        Source::Path => 3,
    };
    (rank, toolchain.spec.clone())
}

/// Whether a compiler that does not work was the one meant to satisfy `pin`, so that the pin
/// is reported broken rather than missing.
fn is_meant_for(pin: &Pin, toolchain: &Toolchain) -> bool {
    match &toolchain.source {
        Source::Rustup { name } => pin
            .rustup
            .as_deref()
            .is_some_and(|r| rustup_name_is(name, r)),
        Source::Debian { package } => pin.debian.as_ref().is_some_and(|debian| {
            let (name, version) = package.split_once('=').unwrap_or((package, ""));
            name == debian.package
                && match &debian.version {
                    Some(wanted) => wanted == version,
                    None => debian_upstream_version(version) == pin.release,
                }
        }),
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

/// The upstream part of a Debian version: `1.85.0` for `1.85.0+dfsg3-1~deb12u3`.
pub fn debian_upstream_version(version: &str) -> &str {
    let without_epoch = version.split_once(':').map_or(version, |(_, rest)| rest);
    let end = without_epoch
        .find(['+', '-', '~'])
        .unwrap_or(without_epoch.len());
    &without_epoch[..end]
}

/// Every installed rustup toolchain, probed; none if rustup is not there.
fn rustup_candidates(sh: &Shell, timeout: Duration) -> Vec<Availability> {
    let Ok(list) = cmd!(sh, "rustup toolchain list")
        .quiet()
        .ignore_stderr()
        .read()
    else {
        return Vec::new();
    };
    let toolchains = list
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "no" && !name.is_empty()) // "no installed toolchains"
        .filter_map(|name| resolve_rustup(sh, name).ok())
        .collect();
    probe_all(toolchains, timeout)
}

/// Every compiler `cargo xtask toolchains install` provisioned, probed.
fn provisioned_candidates(timeout: Duration) -> Vec<Availability> {
    let Ok(entries) = std::fs::read_dir(toolchains_dir().join("debian")) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|dir| dir.join(PROVISIONED_MARKER).is_file())
        .collect();
    dirs.sort();
    let toolchains = dirs
        .into_iter()
        .filter_map(|dir| provisioned_toolchain(&dir))
        .collect();
    probe_all(toolchains, timeout)
}

/// The toolchain in a provisioned directory, from its marker file (whose first line is the
/// compiler's `package=version`).
pub fn provisioned_toolchain(dir: &Path) -> Option<Toolchain> {
    let marker = std::fs::read_to_string(dir.join(PROVISIONED_MARKER)).ok()?;
    let package = marker.lines().next()?.trim().to_owned();
    let rustc = dir.join("usr").join("bin").join("rustc");
    Some(Toolchain {
        id: package.clone(),
        spec: format!("debian:{package}"),
        source: Source::Debian { package },
        env: library_path_env(&rustc),
        rustc,
        pin: None,
    })
}

/// Resolves a rustup toolchain name to its real rustc with `rustup which`.
fn resolve_rustup(sh: &Shell, name: &str) -> anyhow::Result<Toolchain> {
    let output = cmd!(sh, "rustup which rustc --toolchain {name}")
        .env("RUST_BACKTRACE", "0")
        .quiet()
        .ignore_status()
        .output()
        .context("running `rustup` (is rustup installed?)")?;
    if !output.status.success() {
        let installed: Vec<String> = cmd!(sh, "rustup toolchain list")
            .quiet()
            .ignore_stderr()
            .read()
            .map(|list| {
                list.lines()
                    .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        bail!(
            "`rustup which rustc --toolchain {name}` failed: {} (installed: {})",
            crate::process::error_and_cause(&String::from_utf8_lossy(&output.stderr)),
            installed.join(", ")
        );
    }
    let rustc = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    Ok(Toolchain {
        id: name.to_owned(),
        spec: format!("rustup:{name}"),
        source: Source::Rustup {
            name: name.to_owned(),
        },
        env: library_path_env(&rustc),
        rustc,
        pin: None,
    })
}

/// The `LD_LIBRARY_PATH` a rustc needs when its shared libraries are in a multiarch directory.
///
/// Debian's rustc, unpacked anywhere but `/`, lives in `PREFIX/usr/bin/rustc` and needs
/// `librustc_driver-*.so` and `libLLVM.so.N` from `PREFIX/usr/lib/<multiarch>/`, which it has
/// no rpath for. So for any rustc, every `BIN/../lib/*/` directory that holds a
/// `librustc_driver-*.so` goes on the library path. rustup's compilers keep the driver in
/// `BIN/../lib/` itself, which their rpath covers, and get nothing.
pub fn library_path_env(rustc: &Path) -> Vec<(String, String)> {
    let Some(lib) = rustc
        .parent()
        .and_then(Path::parent)
        .map(|prefix| prefix.join("lib"))
    else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&lib) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|dir| {
            std::fs::read_dir(dir).is_ok_and(|mut files| {
                files.any(|file| {
                    file.ok().is_some_and(|file| {
                        let name = file.file_name();
                        let name = name.to_string_lossy();
                        name.starts_with("librustc_driver-") && name.ends_with(".so")
                    })
                })
            })
        })
        .collect();
    if dirs.is_empty() {
        return Vec::new();
    }
    dirs.sort();
    let joined = std::env::join_paths(&dirs)
        .map(|joined| joined.to_string_lossy().into_owned())
        .unwrap_or_default();
    vec![("LD_LIBRARY_PATH".to_owned(), joined)]
}

/// Checks that a compiler works: it must start, answer `rustc -vV` readably within `timeout`,
/// and have `core` for its host in its sysroot (a compiler without one cannot build anything,
/// whatever its `-vV` says).
pub fn verify(toolchain: &Toolchain, timeout: Duration) -> Result<RustcVersion, String> {
    if !toolchain.rustc.exists() {
        return Err(format!("{} does not exist", toolchain.rustc.display()));
    }
    if toolchain.rustc.is_dir() {
        return Err(format!(
            "{} is a directory, not a rustc executable",
            toolchain.rustc.display()
        ));
    }
    let mut version = run_verbose_version(toolchain, timeout)?;
    let sysroot = run_rustc(toolchain, &["--print", "sysroot"], timeout)?;
    // The last line: a wrapper's own chatter comes before what rustc prints.
    let sysroot = sysroot
        .stdout
        .lines()
        .map(str::trim)
        .rfind(|line| !line.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| {
            format!(
                "`{} --print sysroot` printed nothing",
                toolchain.rustc.display()
            )
        })?;
    let libraries = sysroot
        .join("lib")
        .join("rustlib")
        .join(&version.host)
        .join("lib");
    let has_core = std::fs::read_dir(&libraries).is_ok_and(|entries| {
        entries.filter_map(Result::ok).any(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name.starts_with("libcore-") && name.ends_with(".rlib")
        })
    });
    if !has_core {
        return Err(format!(
            "its sysroot {} has no `core` for its host {}: no libcore-*.rlib in {}",
            sysroot.display(),
            version.host,
            libraries.display()
        ));
    }
    version.sysroot = Some(sysroot);
    Ok(version)
}

/// Runs the compiler with `args` and its environment, killing it after `timeout`; an error
/// says how it failed and what it printed on stderr.
fn run_rustc(
    toolchain: &Toolchain,
    args: &[&str],
    timeout: Duration,
) -> Result<crate::process::ProcessOutput, String> {
    let rustc = &toolchain.rustc;
    let invocation = crate::process::Invocation {
        program: rustc.clone(),
        args: args.iter().map(|arg| arg.to_string()).collect(),
        env: toolchain.env.clone(),
        env_remove: Vec::new(),
    };
    let output = crate::process::run(&invocation, timeout)
        .map_err(|error| crate::process::describe_spawn_error(rustc, &error))?;
    if !output.success() {
        return Err(format!(
            "`{} {}` failed ({}); stderr: {}",
            rustc.display(),
            args.join(" "),
            output.describe_ending(timeout),
            first_lines(&output.stderr, 5)
        ));
    }
    Ok(output)
}

/// Runs `rustc -vV` with the toolchain's environment and parses what it prints.
pub fn run_verbose_version(
    toolchain: &Toolchain,
    timeout: Duration,
) -> Result<RustcVersion, String> {
    let output = run_rustc(toolchain, &["-vV"], timeout)?;
    parse_verbose_version(&output.stdout).map_err(|error| error.to_string())
}

fn first_lines(text: &str, count: usize) -> String {
    let text = text.trim();
    if text.is_empty() {
        return "(empty)".to_owned();
    }
    let lines: Vec<&str> = text.lines().take(count).collect();
    let more = if text.lines().count() > count {
        " ..."
    } else {
        ""
    };
    format!("{}{more}", lines.join(" | "))
}

fn discover_specs(
    sh: &Shell,
    pins: &Pins,
    specs: &[String],
    timeout: Duration,
) -> Vec<Availability> {
    let mut unresolved = Vec::new();
    let mut toolchains = Vec::new();
    for (position, spec) in specs.iter().enumerate() {
        match spec_toolchain(sh, spec) {
            Ok(toolchain) => toolchains.push((position, toolchain)),
            Err(error) => unresolved.push((position, spec, format!("{error:#}"))),
        }
    }
    let (positions, toolchains): (Vec<usize>, Vec<Toolchain>) = toolchains.into_iter().unzip();
    let mut results: Vec<(usize, Availability)> = positions
        .into_iter()
        .zip(probe_all(toolchains, timeout))
        .collect();
    // A name that is neither a file nor a rustup toolchain is broken like any other.
    results.extend(unresolved.into_iter().map(|(position, spec, error)| {
        let toolchain = Toolchain {
            id: spec.clone(),
            spec: format!("rustup:{spec}"),
            source: Source::Rustup { name: spec.clone() },
            rustc: PathBuf::from(spec),
            env: Vec::new(),
            pin: None,
        };
        (position, Availability::Broken { toolchain, error })
    }));
    results.sort_by_key(|(position, _)| *position);
    let mut results: Vec<Availability> = results
        .into_iter()
        .map(|(_, availability)| availability)
        .collect();
    for availability in &mut results {
        if let Availability::Found { toolchain, version } = availability {
            toolchain.pin = pins
                .pins
                .iter()
                .find(|pin| pin.is_satisfied_by(version))
                .map(|pin| pin.id.clone());
            if toolchain.source == Source::Path {
                toolchain.id = version.release_string();
            }
        }
    }
    // Two specs may derive the same id (two paths to 1.85.0 compilers): number the later ones.
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for availability in &mut results {
        if let Availability::Found { toolchain, .. } | Availability::Broken { toolchain, .. } =
            availability
        {
            let count = seen.entry(toolchain.id.clone()).or_insert(0);
            *count += 1;
            if *count > 1 {
                toolchain.id = format!("{}#{count}", toolchain.id);
            }
        }
    }
    results
}

/// Turns one `--toolchain` spec into a toolchain: a path if it has a `/` or names a file,
/// otherwise a rustup toolchain name.
fn spec_toolchain(sh: &Shell, spec: &str) -> anyhow::Result<Toolchain> {
    let as_path = Path::new(spec);
    if spec.contains(std::path::MAIN_SEPARATOR) || sh.current_dir().join(as_path).is_file() {
        // One that does not exist is reported broken by the probe, with the others going on.
        let rustc = sh.current_dir().join(as_path);
        return Ok(Toolchain {
            id: spec.to_owned(),
            spec: rustc.display().to_string(),
            source: Source::Path,
            env: library_path_env(&rustc),
            rustc,
            pin: None,
        });
    }
    resolve_rustup(sh, spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Release;
    use crate::pins::tests::GOOD;
    use crate::version::Channel;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn source_kinds_are_named_by_the_report_words() {
        let words: Vec<&str> = SourceKind::ALL.iter().map(|kind| kind.word()).collect();
        assert_eq!(words, ["rustup", "path", "debian"]);
        for kind in SourceKind::ALL {
            assert_eq!(SourceKind::from_word(kind.word()), Some(kind));
        }
        assert_eq!(SourceKind::from_word("Rustup"), None);
        let rustup = Source::Rustup {
            name: "1.85.0".into(),
        };
        assert_eq!(rustup.kind(), SourceKind::Rustup);
        let debian = Source::Debian {
            package: "rustc-web=1.85.0+dfsg3-1~deb12u3".into(),
        };
        assert_eq!(debian.kind(), SourceKind::Debian);
        assert_eq!(Source::Path.kind(), SourceKind::Path);
    }

    #[test]
    fn debian_upstream_versions() {
        assert_eq!(debian_upstream_version("1.85.0+dfsg3-1~deb12u3"), "1.85.0");
        assert_eq!(debian_upstream_version("1.63.0+dfsg1-2"), "1.63.0");
        assert_eq!(debian_upstream_version("1:19.1.7-3~deb12u1"), "19.1.7");
        assert_eq!(debian_upstream_version("1.96.0"), "1.96.0");
    }

    #[test]
    fn rustup_names() {
        assert!(rustup_name_is("1.95.0-x86_64-unknown-linux-gnu", "1.95.0"));
        assert!(rustup_name_is("nightly", "nightly"));
        assert!(!rustup_name_is(
            "nightly-2026-05-20-x86_64-unknown-linux-gnu",
            "nightly"
        ));
        assert!(!rustup_name_is("1.95.0-x86_64-unknown-linux-gnu", "1.95"));
    }

    /// A scratch directory for one test, emptied first.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kshim-xtask-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A fake compiler: answers `--print sysroot` with a sysroot that has `core` for the
    /// host (a compiler without one is broken), and anything else with `body`.
    fn write_script(path: &Path, body: &str) {
        let directory = path.parent().unwrap();
        let sysroot = directory.join("fake-sysroot");
        let core = sysroot.join("lib/rustlib/x86_64-unknown-linux-gnu/lib");
        std::fs::create_dir_all(&core).unwrap();
        std::fs::write(core.join("libcore-0123abcd.rlib"), "").unwrap();
        std::fs::write(
            path,
            format!(
                "#!/bin/sh\n[ \"$1 $2\" = '--print sysroot' ] && {{ echo '{}'; exit 0; }}\n{body}",
                sysroot.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn fake_verbose_version(release: &str, date: &str) -> String {
        format!(
            "rustc {release} (abcdef012 {date})\nbinary: rustc\ncommit-hash: abcdef0123\n\
             commit-date: {date}\nhost: x86_64-unknown-linux-gnu\nrelease: {release}\n"
        )
    }

    #[test]
    fn discovers_wrapper_scripts_given_as_specs() {
        let dir = scratch("specs");
        let pins = dir.join("pins.toml");
        std::fs::write(&pins, GOOD).unwrap();
        let nightly = dir.join("nightly-rustc");
        write_script(
            &nightly,
            &format!(
                "[ \"$1\" = -vV ] || exit 3\ncat <<'END'\n{}END\n",
                fake_verbose_version("1.97.0-nightly", "2026-05-19")
            ),
        );
        let unpinned = dir.join("unpinned-rustc");
        write_script(
            &unpinned,
            &format!(
                "cat <<'END'\n{}END\n",
                fake_verbose_version("1.80.1", "2024-08-07")
            ),
        );
        let failing = dir.join("failing-rustc");
        write_script(&failing, "echo 'error: no such sysroot' >&2\nexit 7\n");
        let garbage = dir.join("garbage-rustc");
        write_script(&garbage, "echo 'hello from a wrapper'\n");

        let sh = Shell::new().unwrap();
        sh.change_dir(&dir);
        let specs: Vec<String> = [
            nightly.display().to_string(),
            "./unpinned-rustc".to_owned(),
            failing.display().to_string(),
            garbage.display().to_string(),
            nightly.display().to_string(),
        ]
        .into();
        let found = discover(&sh, Some(&pins), &specs, VERSION_TIMEOUT).unwrap();
        assert_eq!(found.len(), 5, "{found:#?}");

        let Availability::Found { toolchain, version } = &found[0] else {
            panic!("{:#?}", found[0]);
        };
        assert_eq!(toolchain.id, "1.97.0-nightly");
        assert_eq!(toolchain.pin.as_deref(), Some("nightly"));
        assert_eq!(toolchain.source, Source::Path);
        assert_eq!(toolchain.rustc, nightly);
        assert_eq!(toolchain.env, Vec::new());
        assert_eq!(version.channel, Channel::Nightly);

        let Availability::Found { toolchain, version } = &found[1] else {
            panic!("{:#?}", found[1]);
        };
        assert_eq!(toolchain.id, "1.80.1");
        assert_eq!(toolchain.pin, None);
        assert!(toolchain.rustc.is_absolute());
        assert_eq!(version.release, Release::new(1, 80, 1));

        let Availability::Broken { error, .. } = &found[2] else {
            panic!("{:#?}", found[2]);
        };
        assert!(error.contains("-vV` failed (exit status 7)"), "{error}");
        assert!(error.contains("error: no such sysroot"), "{error}");

        let Availability::Broken { error, .. } = &found[3] else {
            panic!("{:#?}", found[3]);
        };
        assert!(
            error.contains("it printed:\nhello from a wrapper"),
            "{error}"
        );

        // The same compiler twice gets two ids.
        assert_eq!(found[4].id(), "1.97.0-nightly#2");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_spec_that_names_nothing_is_broken() {
        let dir = scratch("nothing");
        let pins = dir.join("pins.toml");
        std::fs::write(&pins, GOOD).unwrap();
        let sh = Shell::new().unwrap();
        let missing = dir.join("no-such-rustc").display().to_string();
        let found = discover(
            &sh,
            Some(&pins),
            &[missing.clone(), "no-such-toolchain".into()],
            VERSION_TIMEOUT,
        )
        .unwrap();
        let Availability::Broken { error, .. } = &found[0] else {
            panic!("{:#?}", found[0]);
        };
        assert_eq!(error, &format!("{missing} does not exist"));
        // A name that is no file and no rustup toolchain: broken too, with rustup's answer.
        let Availability::Broken { toolchain, error } = &found[1] else {
            panic!("{:#?}", found[1]);
        };
        assert_eq!(toolchain.id, "no-such-toolchain");
        assert!(error.contains("no-such-toolchain"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_debian_layout_gets_its_library_path() {
        let dir = scratch("debian-layout");
        let pins = dir.join("pins.toml");
        std::fs::write(&pins, GOOD).unwrap();
        let libs = dir.join("root/usr/lib/x86_64-linux-gnu");
        std::fs::create_dir_all(&libs).unwrap();
        std::fs::write(libs.join("librustc_driver-0123abcd.so"), "").unwrap();
        // The fake only answers when it is given the library path, as the real one.
        let rustc = dir.join("root/usr/bin/rustc");
        write_script(
            &rustc,
            &format!(
                "[ \"$LD_LIBRARY_PATH\" = '{}' ] || {{ echo \"LD_LIBRARY_PATH=$LD_LIBRARY_PATH\" >&2; exit 127; }}\n\
                 cat <<'END'\n{}END\n",
                libs.display(),
                fake_verbose_version("1.85.0", "2025-02-17")
            ),
        );
        let sh = Shell::new().unwrap();
        let found = discover(
            &sh,
            Some(&pins),
            &[rustc.display().to_string()],
            VERSION_TIMEOUT,
        )
        .unwrap();
        let Availability::Found { toolchain, .. } = &found[0] else {
            panic!("{:#?}", found[0]);
        };
        assert_eq!(
            toolchain.env,
            vec![("LD_LIBRARY_PATH".to_owned(), libs.display().to_string())]
        );
        assert_eq!(toolchain.pin.as_deref(), Some("1.85.0"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
