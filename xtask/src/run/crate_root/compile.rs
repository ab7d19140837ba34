// SPDX-License-Identifier: GPL-2.0
//! Compiling any crate the way `audit --usage` and `msrv --root` do: through its Cargo package,
//! with the rustc arguments Kbuild gave it, or its crate root alone; only metadata is written,
//! with JSON diagnostics, in kernel mode (`RUSTC_BOOTSTRAP=1` and a `-Zallow-features` list) or
//! in stable mode (neither).

use super::input::CrateKind;
use crate::run::plan::{Kind, Rustc};
use crate::util::process::Invocation;
use anyhow::ensure;
use std::path::{Path, PathBuf};

/// The argument file a [`Compile::ArgFile`] compile writes under its scratch directory.
const ARGUMENT_FILE: &str = "rustc-args";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Compile {
    /// A Cargo package, by its manifest: `cargo rustc --lib --profile check`.
    Cargo(PathBuf),
    /// rustc's arguments as Kbuild gave them (`--rustc-args`), only those the audit keeps (none
    /// that writes a file).
    ArgFile(Vec<String>),
    /// The crate root alone, as a library (or proc-macro) crate of its package's edition (2021
    /// without a package).
    Root(PathBuf, CrateKind),
}

impl Compile {
    /// The directory that relative file names in diagnostics start from.
    pub fn base(&self) -> PathBuf {
        match self {
            Compile::Cargo(manifest) => {
                manifest.parent().map(Path::to_path_buf).unwrap_or_default()
            }
            _ => std::env::current_dir().unwrap_or_default(),
        }
    }

    /// The step kind that runs this compile without a feature: through Cargo or rustc itself.
    pub fn kind(&self) -> Kind {
        match self {
            Compile::Cargo(_) => Kind::CargoUsage,
            _ => Kind::CrateUsage,
        }
    }

    /// What the compile writing under `scratch` reads besides the compiler's own files, for
    /// its cache key: a root's directory (its modules); the argument file and every file or
    /// directory an argument names; a package's directory, the Cargo files above it and in
    /// Cargo's home, and its path dependencies.
    pub fn inputs(&self, scratch: &Path) -> Vec<PathBuf> {
        let absolute = |path: &Path| std::path::absolute(path).unwrap_or_else(|_| path.into());
        let directory_of = |file: &Path| absolute(file).parent().map(Path::to_path_buf);
        let mut inputs = Vec::new();
        match self {
            Compile::Root(root, _) => inputs.extend(directory_of(root)),
            Compile::ArgFile(args) => {
                inputs.push(absolute(&scratch.join(ARGUMENT_FILE)));
                for arg in args {
                    let tails = std::iter::once(arg.as_str())
                        .chain(arg.match_indices('=').map(|(at, _)| &arg[at + 1..]));
                    for tail in tails.map(Path::new) {
                        if tail.is_file() && tail.extension() == Some("rs".as_ref()) {
                            inputs.extend(directory_of(tail));
                        } else if tail.is_file() || tail.is_dir() {
                            inputs.push(absolute(tail));
                        }
                    }
                }
            }
            Compile::Cargo(manifest) => {
                let package = directory_of(manifest).unwrap_or_default();
                let home = std::env::var_os("CARGO_HOME")
                    .map(PathBuf::from)
                    .or_else(|| {
                        std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo"))
                    });
                let above = package.ancestors().flat_map(|directory| {
                    [
                        "Cargo.toml",
                        "Cargo.lock",
                        ".cargo/config.toml",
                        ".cargo/config",
                    ]
                    .map(|name| directory.join(name))
                });
                let home = home
                    .into_iter()
                    .flat_map(|home| ["config.toml", "config"].map(|name| home.join(name)));
                inputs.extend(above.chain(home).filter(|file| file.is_file()));
                let manifests: Vec<PathBuf> = inputs
                    .iter()
                    .filter(|file| file.ends_with("Cargo.toml"))
                    .cloned()
                    .collect();
                for manifest in manifests {
                    let text = std::fs::read_to_string(&manifest).unwrap_or_default();
                    let directory = manifest.parent().unwrap_or(Path::new("/"));
                    inputs.extend(
                        path_dependencies(&text)
                            .map(|path| directory.join(path))
                            .filter(|path| path.is_dir()),
                    );
                }
                inputs.push(package);
            }
        }
        crate::distinct(inputs)
    }

    /// The compile, writing under `scratch`: in kernel mode (`allowed` is `Some`) with
    /// `RUSTC_BOOTSTRAP=1` and only `allowed` in `-Zallow-features`, in stable mode with neither
    /// (a process starts with a cleared environment, so no `RUSTC_BOOTSTRAP` of the caller's
    /// reaches it).
    pub fn invocation(
        &self,
        rustc: &Rustc,
        allowed: Option<&[&str]>,
        scratch: &Path,
    ) -> anyhow::Result<Invocation> {
        let allow = allowed.map(|allowed| format!("-Zallow-features={}", allowed.join(",")));
        let mut env = rustc.launch.env.clone();
        if allow.is_some() {
            env.push(("RUSTC_BOOTSTRAP".into(), "1".into()));
        }
        // rustc itself (through its own loader where it has one), writing only metadata and
        // JSON diagnostics.
        let rustc_metadata = |mut args: Vec<String>| {
            let out_dir = scratch.to_string_lossy().into_owned();
            args.extend(["--emit=metadata".into(), "--out-dir".into(), out_dir]);
            args.push("--error-format=json".into());
            args.extend(allow.clone());
            rustc.launch.invocation(args, env.clone())
        };
        let mut invocation = match self {
            Compile::Cargo(manifest) => {
                let real = &rustc.launch.rustc;
                let cargo = real.with_file_name("cargo");
                ensure!(cargo.is_file(), "no Cargo beside {}", real.display());
                let mut env = env.clone();
                env.push(("RUSTC".into(), real.to_string_lossy().into_owned()));
                // Cargo finds its registry and configuration from these; the process starts
                // with a cleared environment.
                for name in ["HOME", "CARGO_HOME"] {
                    if let Ok(value) = std::env::var(name) {
                        env.push((name.into(), value));
                    }
                }
                let args = "rustc --lib --profile check --message-format=json --manifest-path";
                let mut args: Vec<String> = args.split(' ').map(String::from).collect();
                let target_dir = [
                    "--target-dir".into(),
                    scratch.to_string_lossy().into_owned(),
                ];
                args.push(manifest.to_string_lossy().into_owned());
                args.extend(target_dir);
                if let Some(allow) = &allow {
                    args.extend(["--".into(), allow.clone()]);
                }
                Invocation::new(cargo, args).with_env(env)
            }
            Compile::ArgFile(args) => {
                let derived = scratch.join(ARGUMENT_FILE);
                std::fs::create_dir_all(scratch)
                    .map_err(|error| anyhow::anyhow!("creating {}: {error}", scratch.display()))?;
                std::fs::write(&derived, args.join("\n"))
                    .map_err(|error| anyhow::anyhow!("writing {}: {error}", derived.display()))?;
                rustc_metadata(vec![format!("@{}", derived.display())])
            }
            Compile::Root(root, kind) => {
                let crate_type = match kind {
                    CrateKind::Library => "lib",
                    CrateKind::ProcMacro => "proc-macro",
                };
                let edition = package_edition(root).unwrap_or_else(|| "2021".into());
                let root = root.to_string_lossy();
                rustc_metadata(
                    ["--edition", &edition, "--crate-type", crate_type, &root]
                        .map(String::from)
                        .to_vec(),
                )
            }
        };
        if allowed.is_none() {
            invocation.env_remove = vec!["RUSTC_BOOTSTRAP".into()];
        }
        Ok(invocation)
    }
}

/// The values of `path = "..."` in a manifest's text: its path dependencies (and a target's
/// own path, which lies in the package anyway).
fn path_dependencies(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices("path").filter_map(|(at, _)| {
        let rest = text[at + 4..].trim_start().strip_prefix('=')?.trim_start();
        let rest = rest.strip_prefix('"')?;
        rest.split_once('"').map(|(value, _)| value)
    })
}

/// The `edition` its package's `Cargo.toml` gives a crate root (`edition = "2018"` in
/// `[package]`), or `None` without a package or a plain value there.
pub fn package_edition(root: &Path) -> Option<String> {
    let manifest = super::input::package_manifest(root)?;
    let text = std::fs::read_to_string(manifest).ok()?;
    let mut in_package = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if let Some(value) = line.strip_prefix("edition") {
            let value = value.trim_start().strip_prefix('=')?.trim();
            let value = value.strip_prefix('"')?.strip_suffix('"')?;
            if in_package && value.chars().all(|c| c.is_ascii_digit()) {
                return Some(value.to_string());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compiler that is never run: only its command lines are looked at.
    fn rustc() -> Rustc {
        Rustc {
            launch: crate::toolchains::loader::Launch {
                rustc: PathBuf::from("/usr/bin/rustc"),
                env: Vec::new(),
                loader: None,
            },
            release: crate::catalog::Release::new(1, 95, 0),
        }
    }

    #[test]
    fn a_compiles_inputs_are_its_sources_its_argument_file_and_what_it_names() {
        let scratch = crate::project_root().join("target/kshim/unit-tests/crate-root-inputs");
        let _ = std::fs::remove_dir_all(&scratch);
        let (package, dependency) = (scratch.join("package"), scratch.join("dependency"));
        std::fs::create_dir_all(package.join("src")).unwrap();
        std::fs::create_dir_all(&dependency).unwrap();
        let manifest = package.join("Cargo.toml");
        std::fs::write(
            &manifest,
            "[dependencies]\nd = { path = \"../dependency\" }\n",
        )
        .unwrap();
        let (root, rlib) = (package.join("src/lib.rs"), scratch.join("libd.rlib"));
        std::fs::write(&root, "").unwrap();
        std::fs::write(&rlib, "").unwrap();

        let here = Compile::Root(PathBuf::from("lib.rs"), CrateKind::Library);
        assert_eq!(here.inputs(&scratch), [std::env::current_dir().unwrap()]);
        let args = [
            "--edition=2021".to_string(),
            format!("--extern=d={}", rlib.display()),
            "-L".into(),
            scratch.display().to_string(),
            root.display().to_string(),
        ];
        let out = scratch.join("out");
        assert_eq!(
            Compile::ArgFile(args.to_vec()).inputs(&out),
            [
                out.join(ARGUMENT_FILE),
                rlib,
                scratch.clone(),
                package.join("src")
            ]
        );
        let inputs = Compile::Cargo(manifest.clone()).inputs(&out);
        assert!(inputs.contains(&manifest), "{inputs:?}");
        assert!(
            inputs.contains(&package.join("../dependency")),
            "{inputs:?}"
        );
        assert_eq!(inputs.last(), Some(&package));
    }

    #[test]
    fn a_crate_root_is_compiled_in_its_package_edition_and_stable_mode_has_no_bootstrap() {
        let scratch = crate::project_root().join("target/kshim/unit-tests/crate-root-compile");
        let package = scratch.join("package");
        std::fs::create_dir_all(package.join("src")).unwrap();
        std::fs::write(
            package.join("Cargo.toml"),
            "[package]\nname = \"p\"\nedition = \"2018\"\n[dependencies]\nedition = \"x\"\n",
        )
        .unwrap();
        let root = package.join("src/lib.rs");
        std::fs::write(&root, "").unwrap();
        assert_eq!(package_edition(&root).as_deref(), Some("2018"));
        let rustc = rustc();
        let compile = Compile::Root(root, CrateKind::Library);
        let stable = compile.invocation(&rustc, None, &scratch).unwrap();
        assert_eq!(stable.args[..2], ["--edition", "2018"]);
        assert!(!stable.args.iter().any(|arg| arg.starts_with("-Z")));
        assert!(!stable.env.iter().any(|(name, _)| name == "RUSTC_BOOTSTRAP"));
        let kernel = compile.invocation(&rustc, Some(&["a"]), &scratch).unwrap();
        assert_eq!(kernel.args.last().unwrap(), "-Zallow-features=a");
        assert!(kernel
            .env
            .contains(&("RUSTC_BOOTSTRAP".to_string(), "1".to_string())));
    }

    #[test]
    fn an_argument_file_gets_our_allow_list_and_json_diagnostics_only() {
        let scratch = crate::project_root().join("target/kshim/unit-tests/audit-usage");
        std::fs::create_dir_all(&scratch).unwrap();
        let file = scratch.join("given.args");
        let root = scratch.join("lib.rs");
        std::fs::write(&root, "").unwrap();
        std::fs::write(
            &file,
            format!(
                "--edition=2021\n-Z\nallow-features=a,b\n-Zallow-features=a\n--error-format=short\n\
                 --error-format\nshort\n{}",
                root.display()
            ),
        )
        .unwrap();
        let rustc = rustc();
        let invocation = Compile::ArgFile(
            crate::commands::audit::rustc_args::read_rustc_args(&file)
                .unwrap()
                .0,
        )
        .invocation(&rustc, Some(&["a", "c"]), &scratch)
        .unwrap();
        let derived = std::fs::read_to_string(scratch.join("rustc-args")).unwrap();
        assert_eq!(derived, format!("--edition=2021\n{}", root.display()));
        assert_eq!(
            invocation.args[1..],
            [
                "--emit=metadata",
                "--out-dir",
                &scratch.to_string_lossy(),
                "--error-format=json",
                "-Zallow-features=a,c"
            ]
        );
        assert!(invocation
            .env
            .contains(&("RUSTC_BOOTSTRAP".to_string(), "1".to_string())));
    }
}
