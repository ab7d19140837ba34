// SPDX-License-Identifier: GPL-2.0
//! Each compiler's own library sources, which the cross builds compile `core` from: the
//! `rust-src` component in a sysroot, or for a Debian compiler the parts of `library/` that
//! `toolchains install` extracts from the matching source package. Finding them runs nothing.

use crate::toolchains::debian::{self, DebianSource, Provisioner};
use crate::toolchains::discovery::{Source, Toolchain};
use crate::toolchains::extracted::{Extracted, Marker, Wanted};
use crate::toolchains::version::RustcVersion;
use anyhow::{anyhow, bail, ensure, Context};
use std::path::{Path, PathBuf};

/// A compiler's own library sources, as the cross builds need them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LibrarySources {
    /// The `library/` directory: holds `core/src/lib.rs`, `stdarch/crates/core_arch`,
    /// `portable-simd/crates/core_simd`.
    pub library: PathBuf,
    /// Where they come from, exactly, for cache keys and the report: e.g.
    /// "rust-web-src=1.96.0+dfsg1-1~deb12u2 (bookworm-security)" or "rustup's rust-src of
    /// 1.95.0-x86_64-unknown-linux-gnu".
    pub identity: String,
    /// The edition `library/core/Cargo.toml` declares ("2021", "2024").
    pub core_edition: String,
    /// `compiler_builtins`, where the sources hold it (from 1.89 on, in `compiler-builtins/`).
    pub compiler_builtins: Option<SourceCrate>,
}

/// One crate of the library sources.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceCrate {
    /// Its crate root, `src/lib.rs`.
    pub root: PathBuf,
    /// The edition its `Cargo.toml` declares.
    pub edition: String,
}

/// The library sources of a discovered compiler, or why there are none and how to get them, in
/// one sentence ("no library sources: run `rustup component add rust-src --toolchain 1.95.0`").
pub fn library_sources(
    toolchain: &Toolchain,
    version: &RustcVersion,
) -> anyhow::Result<LibrarySources> {
    let root = debian::toolchains_dir();
    let sysroot = version.sysroot.clone().unwrap_or_else(|| {
        let bin = toolchain.launch.rustc.parent().unwrap_or(Path::new("/"));
        bin.parent().unwrap_or(bin).to_owned()
    });
    let component = sysroot.join("lib/rustlib/src/rust/library");
    let (identity, missing) = match &toolchain.source {
        Source::Debian { package } => return debian_sources(&root, package),
        Source::Rustup { name } => (
            format!("rustup's rust-src of {name}"),
            format!("run `rustup component add rust-src --toolchain {name}`"),
        ),
        // A provisioned Debian compiler given by its path: its sysroot is `PREFIX/usr`.
        Source::Path => match sysroot.parent().and_then(debian::read_marker) {
            Some(package) => return debian_sources(&root, &package),
            None => (
                format!("rust-src in {}", sysroot.display()),
                format!(
                    "{} holds no core/src/lib.rs (the rust-src component provides it)",
                    component.display()
                ),
            ),
        },
    };
    found_in(component, identity).map_err(|_| anyhow!("no library sources: {missing}"))
}

/// The source package that holds the library sources of Debian's compiler package `compiler`:
/// `rust-src` for `rustc`, `rust-X-src` for `rustc-X` (`rust-web-src`, `rust-mozilla-src`).
pub(crate) fn source_package(compiler: &str) -> Option<String> {
    if compiler == "rustc" {
        return Some("rust-src".to_owned());
    }
    let flavor = compiler.strip_prefix("rustc-")?;
    (!flavor.is_empty()).then(|| format!("rust-{flavor}-src"))
}

/// The file beside a prefix that says why the last `toolchains install` could not provision it.
pub(crate) fn unavailable_note(prefix: &Path) -> PathBuf {
    prefix.with_added_extension("unavailable")
}

/// The source package of `compiler`'s library sources, at the compiler's exact version.
pub(crate) fn sources_of(compiler: &DebianSource) -> anyhow::Result<(String, &str)> {
    let version = compiler
        .version
        .as_deref()
        .with_context(|| format!("{compiler} names no exact version"))?;
    let package = source_package(&compiler.package)
        .with_context(|| format!("Debian's {} has no known source package", compiler.package))?;
    Ok((package, version))
}

fn debian_sources(root: &Path, compiler: &DebianSource) -> anyhow::Result<LibrarySources> {
    let install = "run `cargo xtask toolchains install`";
    let (package, version) =
        sources_of(compiler).map_err(|why| anyhow!("no library sources: {why}"))?;
    let prefix = debian::prefix_of(root, &package, version);
    let Some(marker) = Marker::read(&prefix) else {
        bail!(match std::fs::read_to_string(unavailable_note(&prefix)) {
            Ok(note) => format!("no library sources: {}; {install}", note.trim()),
            Err(_) => {
                format!("no library sources: {package}={version} is not provisioned; {install}")
            }
        });
    };
    ensure!(
        marker.package == package && marker.version == version,
        "no library sources: {} holds {}, not {package}={version}; {install}",
        prefix.display(),
        marker.identity()
    );
    let library = prefix.join(marker.get("library").unwrap_or("library"));
    found_in(library, marker.identity())
        .map_err(|why| anyhow!("no library sources: {why:#}; {install}"))
}

fn found_in(library: PathBuf, identity: String) -> anyhow::Result<LibrarySources> {
    let has_core = library.join("core/src/lib.rs").is_file();
    ensure!(has_core, "{} holds no core/src/lib.rs", library.display());
    let core_edition = package_edition(&library.join("core"))?;
    let compiler_builtins = [
        "compiler-builtins/compiler-builtins/src/lib.rs",
        "compiler-builtins/src/lib.rs",
    ]
    .iter()
    .map(|root| library.join(root))
    .find(|root| root.is_file())
    .map(|root| {
        // `compiler-builtins/` is a workspace of its own where it has a `compiler-builtins/`.
        let package = root.parent().and_then(Path::parent).unwrap_or(&library);
        let edition = package_edition(package).unwrap_or_else(|_| "2015".to_owned());
        SourceCrate { edition, root }
    });
    Ok(LibrarySources {
        library,
        identity,
        core_edition,
        compiler_builtins,
    })
}

/// The [`manifest_edition`] of the crate in `package`, whose workspace is the directory above.
fn package_edition(package: &Path) -> anyhow::Result<String> {
    let manifest = package.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest)
        .with_context(|| format!("reading {}", manifest.display()))?;
    let workspace = package.parent().map(|parent| parent.join("Cargo.toml"));
    let workspace = workspace.and_then(|workspace| std::fs::read_to_string(workspace).ok());
    Ok(manifest_edition(&text, workspace.as_deref()))
}

/// The edition a crate's `Cargo.toml` declares in `[package]`: `edition = "2021"`, or with
/// `edition.workspace = true` the `[workspace.package]` edition of `workspace` (the
/// workspace's `Cargo.toml`); Cargo's default, 2015, when it declares none.
pub(crate) fn manifest_edition(manifest: &str, workspace: Option<&str>) -> String {
    let edition = match table_value(manifest, "package", "edition") {
        Some(Value::FromWorkspace) => {
            workspace.and_then(|workspace| table_value(workspace, "workspace.package", "edition"))
        }
        edition => edition,
    };
    match edition {
        Some(Value::Text(edition)) => edition,
        _ => "2015".to_owned(),
    }
}

/// A value [`table_value`] found: text, or `KEY.workspace = true` (`KEY = { workspace = true }`).
#[derive(Debug, PartialEq)]
enum Value {
    Text(String),
    FromWorkspace,
}

/// The value of `key` in `[table]` of a simple TOML file (one key per line, as Cargo.toml files
/// of the standard library are written), unquoted; inheriting from the workspace, in either
/// spelling, is `{workspace=true}`.
fn table_value(text: &str, table: &str, key: &str) -> Option<Value> {
    let mut current = "";
    for line in text.lines().map(str::trim) {
        if let Some(header) = line.strip_prefix('[') {
            current = header.trim_end_matches(']').trim();
            continue;
        }
        let Some((name, value)) = line.split_once('=').filter(|_| current == table) else {
            continue;
        };
        let name: String = name.chars().filter(|c| !c.is_whitespace()).collect();
        let value = value.split('#').next().unwrap_or_default().trim();
        let compact: String = value.chars().filter(|c| !c.is_whitespace()).collect();
        if name == format!("{key}.workspace") && compact == "true"
            || name == key && compact == "{workspace=true}"
        {
            return Some(Value::FromWorkspace);
        }
        if name == key {
            let text = value.trim_matches(|c| c == '"' || c == '\'');
            return Some(Value::Text(text.to_owned()));
        }
    }
    None
}

/// The parts of `library/` that the cross builds read, and whether every package has them.
const LIBRARY_PARTS: [(&str, bool); 5] = [
    ("core", true),
    ("stdarch/crates/core_arch", true),
    ("portable-simd/crates/core_simd", false),
    ("compiler-builtins", false),
    ("Cargo.toml", false),
];

impl LibrarySources {
    /// The files and directories of [`LIBRARY_PARTS`] that these sources have: what a build of
    /// `core` or `compiler_builtins` reads, and so what its cache key covers.
    pub fn parts(&self) -> Vec<PathBuf> {
        LIBRARY_PARTS
            .iter()
            .map(|(part, _)| self.library.join(part))
            .filter(|path| path.exists())
            .collect()
    }
}

/// The [`LIBRARY_PARTS`] among a source package's members; a required one it lacks is an error.
pub(crate) fn sources_members(members: &[String]) -> anyhow::Result<Vec<String>> {
    let library = library_member(members)?;
    let mut chosen = Vec::new();
    for (part, required) in LIBRARY_PARTS {
        let wanted = format!("{library}{part}");
        if members
            .iter()
            .any(|member| member.trim_end_matches('/') == wanted)
        {
            chosen.push(wanted);
        } else if required {
            bail!("it holds no {wanted}");
        }
    }
    Ok(chosen)
}

/// The member that is `library/` (`./usr/src/rustc-1.96.0/library/`), found by its
/// `core/src/lib.rs`.
pub(crate) fn library_member(members: &[String]) -> anyhow::Result<String> {
    members
        .iter()
        .find_map(|member| {
            let rest = member.strip_prefix("./usr/src/")?;
            let (top, rest) = rest.split_once('/')?;
            (rest == "library/core/src/lib.rs").then(|| format!("./usr/src/{top}/library/"))
        })
        .context("it holds no usr/src/*/library/core/src/lib.rs")
}

/// The path of `library/` (`usr/src/rustc-1.96.0/library`) in a directory the parts were
/// extracted into, found by its `core/src/lib.rs`.
pub(crate) fn library_in(extracted: &Path) -> Option<String> {
    std::fs::read_dir(extracted.join("usr/src"))
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| Path::new("usr/src").join(entry.file_name()).join("library"))
        .find(|library| extracted.join(library).join("core/src/lib.rs").is_file())
        .map(|library| library.display().to_string())
}

/// Provisions the library sources of the Debian compiler `compiler` unless they are there; a
/// failure is noted beside the prefix, for [`library_sources`] to say why they are missing.
pub(crate) fn provision_sources(
    provisioner: &mut Provisioner<'_>,
    compiler: &DebianSource,
) -> anyhow::Result<Extracted> {
    let (package, version) = sources_of(compiler)?;
    let prefix = debian::prefix_of(provisioner.root(), &package, version);
    let note = unavailable_note(&prefix);
    let wanted = Wanted {
        package: &package,
        version: Some(version),
        suites: &compiler.suites(),
        prefix: prefix.clone(),
        select: &sources_members,
    };
    let result = provisioner.extract(&wanted, |staging| {
        let library = library_in(staging)
            .with_context(|| format!("{} holds no usr/src/*/library/core", staging.display()))?;
        Ok(vec![("library".to_owned(), library)])
    });
    let _ = match &result {
        Ok(_) => std::fs::remove_file(&note),
        Err(error) => std::fs::write(&note, format!("{package}={version}: {error:#}")),
    };
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchains::extracted;

    #[test]
    fn compilers_map_to_their_source_packages() {
        assert_eq!(source_package("rustc").as_deref(), Some("rust-src"));
        assert_eq!(source_package("rustc-web").as_deref(), Some("rust-web-src"));
        assert_eq!(
            source_package("rustc-mozilla").as_deref(),
            Some("rust-mozilla-src")
        );
        assert_eq!(source_package("rustc-"), None);
        assert_eq!(source_package("cargo"), None);
    }

    #[test]
    fn editions_are_read_from_the_manifest_or_its_workspace() {
        let core_1_96 = "[package]\nname = \"core\"\nversion = \"0.0.0\"\n\
                         edition = \"2024\"\n\n[dependencies]\n";
        assert_eq!(manifest_edition(core_1_96, None), "2024");
        let core_1_48 = "[package]\nauthors = [\"The Rust Project Developers\"]\n\
                         name = \"core\"\nedition = \"2018\" # a comment\n";
        assert_eq!(manifest_edition(core_1_48, None), "2018");
        let inherited = "[package]\nname = \"core\"\nedition.workspace = true\n";
        let workspace = "[workspace]\nmembers = [\"std\"]\n\n[workspace.package]\n\
                         edition = \"2021\"\n";
        assert_eq!(manifest_edition(inherited, Some(workspace)), "2021");
        let inline = "[package]\nedition = { workspace = true }\n";
        assert_eq!(manifest_edition(inline, Some(workspace)), "2021");
        assert_eq!(manifest_edition(inherited, None), "2015");
        let elsewhere = "[package]\nname = \"core\"\n[lints]\nedition = \"2024\"\n";
        assert_eq!(manifest_edition(elsewhere, None), "2015");
    }

    #[test]
    fn members_are_chosen_where_the_package_has_them() {
        let names = |list: &[&str]| list.iter().map(|name| name.to_string()).collect::<Vec<_>>();
        let top = "./usr/src/rustc-1.96.0/library/";
        let members = names(&[
            "./usr/src/rustc-1.96.0/",
            "./usr/src/rustc-1.96.0/library/",
            "./usr/src/rustc-1.96.0/library/Cargo.toml",
            "./usr/src/rustc-1.96.0/library/core/",
            "./usr/src/rustc-1.96.0/library/core/src/lib.rs",
            "./usr/src/rustc-1.96.0/library/stdarch/crates/core_arch/",
            "./usr/src/rustc-1.96.0/library/portable-simd/crates/core_simd/",
            "./usr/src/rustc-1.96.0/library/compiler-builtins/",
            "./usr/src/rustc-1.96.0/src/tools/cargo/tests/testsuite/mock-std/library/core/src/lib.rs",
        ]);
        let chosen = sources_members(&members).unwrap();
        let expected: Vec<String> = [
            "core",
            "stdarch/crates/core_arch",
            "portable-simd/crates/core_simd",
            "compiler-builtins",
            "Cargo.toml",
        ]
        .iter()
        .map(|part| format!("{top}{part}"))
        .collect();
        assert_eq!(chosen, expected);
        let old = names(&[
            "./usr/src/rustc-1.48.0/library/core/",
            "./usr/src/rustc-1.48.0/library/core/src/lib.rs",
            "./usr/src/rustc-1.48.0/library/stdarch/crates/core_arch/",
        ]);
        assert_eq!(sources_members(&old).unwrap().len(), 2);
        let without_arch = &old[..2];
        let error = sources_members(without_arch).unwrap_err().to_string();
        assert!(error.contains("stdarch/crates/core_arch"), "{error}");
        assert!(sources_members(&names(&["./usr/share/doc/rust-src/"])).is_err());
    }

    #[test]
    fn debian_sources_are_found_only_complete_and_exact() {
        let root = crate::project_root().join("target/kshim/test-scratch/library-sources");
        let _ = std::fs::remove_dir_all(&root);
        let compiler = DebianSource::parse("sid:rustc=1.97.1+dfsg1-1").unwrap();
        let error = debian_sources(&root, &compiler).unwrap_err().to_string();
        assert_eq!(
            error,
            "no library sources: rust-src=1.97.1+dfsg1-1 is not provisioned; \
             run `cargo xtask toolchains install`"
        );
        let prefix = debian::prefix_of(&root, "rust-src", "1.97.1+dfsg1-1");
        std::fs::create_dir_all(root.join("debian")).unwrap();
        std::fs::write(
            unavailable_note(&prefix),
            "rust-src=1.97.1+dfsg1-1: sid serves no rust-src=1.97.1+dfsg1-1\n",
        )
        .unwrap();
        let error = debian_sources(&root, &compiler).unwrap_err().to_string();
        assert!(
            error.starts_with("no library sources: rust-src=1.97.1+dfsg1-1: sid serves no"),
            "{error}"
        );
        let library = prefix.join("usr/src/rustc-1.97.1/library");
        std::fs::create_dir_all(library.join("core/src")).unwrap();
        std::fs::create_dir_all(library.join("compiler-builtins/compiler-builtins/src")).unwrap();
        std::fs::write(library.join("core/src/lib.rs"), "").unwrap();
        std::fs::write(
            library.join("compiler-builtins/compiler-builtins/src/lib.rs"),
            "",
        )
        .unwrap();
        std::fs::write(
            library.join("core/Cargo.toml"),
            "[package]\nname = \"core\"\nedition = \"2024\"\n",
        )
        .unwrap();
        assert_eq!(
            library_in(&prefix).as_deref(),
            Some("usr/src/rustc-1.97.1/library")
        );
        let error = debian_sources(&root, &compiler).unwrap_err().to_string();
        assert!(!error.contains("holds"), "no marker, no sources: {error}");
        let mut marker = Marker {
            package: "rust-src".into(),
            version: "1.97.1+dfsg1-2".into(),
            suite: "sid".into(),
            sha256: "ab".repeat(32),
            fields: vec![("library".into(), "usr/src/rustc-1.97.1/library".into())],
        };
        std::fs::write(prefix.join(extracted::MARKER), marker.render()).unwrap();
        let error = debian_sources(&root, &compiler).unwrap_err().to_string();
        assert!(
            error.contains("holds rust-src=1.97.1+dfsg1-2 (sid), not rust-src=1.97.1+dfsg1-1"),
            "{error}"
        );
        marker.version = "1.97.1+dfsg1-1".into();
        std::fs::write(prefix.join(extracted::MARKER), marker.render()).unwrap();
        let sources = debian_sources(&root, &compiler).unwrap();
        assert_eq!(sources.library, library);
        assert_eq!(sources.identity, "rust-src=1.97.1+dfsg1-1 (sid)");
        assert_eq!(sources.core_edition, "2024");
        let builtins = sources.compiler_builtins.unwrap();
        assert_eq!(
            builtins.root,
            library.join("compiler-builtins/compiler-builtins/src/lib.rs")
        );
        let mozilla = DebianSource::parse("bullseye:rustc-mozilla=1.63.0+dfsg1-2~deb11u1").unwrap();
        let error = debian_sources(&root, &mozilla).unwrap_err().to_string();
        assert!(
            error.contains("rust-mozilla-src=1.63.0+dfsg1-2~deb11u1"),
            "{error}"
        );
        let unknown = DebianSource::parse("sid:cargo=0.66.0-1").unwrap();
        let error = debian_sources(&root, &unknown).unwrap_err().to_string();
        assert!(error.contains("no known source package"), "{error}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// Every compiler there is, as discovery finds it, with its library sources: a
    /// Debian compiler's are its own version's source package, a rustup compiler without the
    /// rust-src component gets the command that adds it.
    #[test]
    fn discovered_compilers_have_their_own_sources_or_a_sentence() {
        use crate::toolchains::discovery::{discover, Availability, VERSION_TIMEOUT};
        let sh = xshell::Shell::new().unwrap();
        let found = discover(
            &sh,
            None,
            &[],
            VERSION_TIMEOUT,
            crate::toolchains::debian::Provisioning::Allowed,
        )
        .unwrap();
        let mut debian_with_sources = Vec::new();
        for entry in &found {
            let Availability::Found { toolchain, version } = entry else {
                continue;
            };
            let answer = library_sources(toolchain, version);
            match &toolchain.source {
                Source::Debian { package: compiler } => {
                    let package = source_package(&compiler.package).unwrap();
                    let exact = compiler.version.clone().unwrap();
                    let prefix = debian::prefix_of(&debian::toolchains_dir(), &package, &exact);
                    if Marker::read(&prefix).is_none() {
                        let error = answer.unwrap_err().to_string();
                        assert!(
                            error.ends_with("run `cargo xtask toolchains install`"),
                            "{error}"
                        );
                        continue;
                    }
                    let sources = answer.unwrap();
                    assert!(
                        sources
                            .identity
                            .starts_with(&format!("{package}={exact} (")),
                        "{compiler}: {}",
                        sources.identity
                    );
                    let library = &sources.library;
                    assert!(library.join("core/src/lib.rs").is_file());
                    assert!(library
                        .join("stdarch/crates/core_arch/src/mod.rs")
                        .is_file());
                    let core = std::fs::read_to_string(library.join("core/src/lib.rs")).unwrap();
                    if core.contains("portable-simd/crates/core_simd") {
                        assert!(library.join("portable-simd/crates/core_simd/src").is_dir());
                    }
                    assert_eq!(
                        sources.compiler_builtins.is_some(),
                        library.join("compiler-builtins").is_dir(),
                        "{compiler}"
                    );
                    assert!(
                        ["2015", "2018", "2021", "2024"].contains(&sources.core_edition.as_str())
                    );
                    debian_with_sources.push((toolchain.clone(), sources));
                }
                Source::Rustup { name } => {
                    let sysroot = version.sysroot.clone().unwrap();
                    if sysroot
                        .join("lib/rustlib/src/rust/library/core/src/lib.rs")
                        .is_file()
                    {
                        assert_eq!(
                            answer.unwrap().identity,
                            format!("rustup's rust-src of {name}")
                        );
                    } else {
                        assert_eq!(
                            answer.unwrap_err().to_string(),
                            format!(
                                "no library sources: run `rustup component add rust-src \
                                 --toolchain {name}`"
                            )
                        );
                    }
                }
                Source::Path => {}
            }
        }
        // The sources are the compiler's own: it checks its `core` for a kernel target.
        let Some((toolchain, sources)) = debian_with_sources.first() else {
            eprintln!(
                "no Debian compiler has its sources here: run `cargo xtask toolchains install`"
            );
            return;
        };
        let out = crate::project_root().join("target/kshim/test-scratch/library-sources-core");
        std::fs::create_dir_all(&out).unwrap();
        let mut args: Vec<String> = [
            "--crate-name=core",
            "--crate-type=rlib",
            "--emit=metadata",
            "-Zforce-unstable-if-unmarked",
            "-Cpanic=abort",
            "--target=aarch64-unknown-none",
            &format!("--edition={}", sources.core_edition),
            "--out-dir",
        ]
        .map(str::to_owned)
        .to_vec();
        args.push(out.display().to_string());
        args.push(
            sources
                .library
                .join("core/src/lib.rs")
                .display()
                .to_string(),
        );
        let mut env = toolchain.launch.env.clone();
        env.push(("RUSTC_BOOTSTRAP".into(), "1".into()));
        let invocation = toolchain.launch.invocation(args, env);
        let output =
            crate::util::process::run(&invocation, std::time::Duration::from_secs(300)).unwrap();
        assert!(output.success(), "{}: {}", toolchain.id, output.stderr);
        std::fs::remove_dir_all(&out).unwrap();
    }
}
