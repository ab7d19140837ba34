// SPDX-License-Identifier: GPL-2.0
//! The rustc command lines of the matrix: the probe, the shim and the examples in either mode,
//! and the runs of what they build.

use super::examples::Example;
use crate::catalog::{all_cfg_names, arch_cfg, derived_cfgs, Release, RUST_ALLOWED_FEATURES};
use crate::targets::KernelTarget;
use crate::toolchains::library_sources::{LibrarySources, SourceCrate};
use crate::toolchains::loader::Launch;
use crate::util::json::{Deserialize, Serialize};
use crate::util::process::Invocation;
use std::path::{Path, PathBuf};

/// The release that stabilized `--check-cfg`; older compilers reject the flag.
pub const CHECK_CFG_SINCE: Release = Release::new(1, 80, 0);

/// How the shim and the examples are built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// The kernel's way: `RUSTC_BOOTSTRAP=1`, the shim's feature block on as in `rust/kernel`,
    /// and every other crate built as Kbuild builds a driver ([`kbuild_driver_flags`]).
    Kernel,
    /// No `#![feature]` at all: stabilized syntax where the compiler has it, the stable
    /// replacement where it does not.
    Stable,
}

impl Mode {
    pub const ALL: [Mode; 2] = [Mode::Kernel, Mode::Stable];

    /// The report's `mode` value.
    pub fn word(self) -> &'static str {
        match self {
            Mode::Kernel => "kernel",
            Mode::Stable => "stable",
        }
    }
}

/// The cfgs the shim's build script derives for a build in `mode` by a compiler of `release`,
/// for `kernel_target` (`None`: the host).
pub fn mode_cfgs(
    release: Release,
    mode: Mode,
    kernel_target: Option<&KernelTarget>,
) -> Vec<&'static str> {
    let target_arch =
        kernel_target.map_or(std::env::consts::ARCH, |kernel_target| kernel_target.arch);
    derived_cfgs(release, mode == Mode::Kernel)
        .chain(arch_cfg(target_arch))
        .collect()
}

/// A compiler as the command lines need it.
#[derive(Clone, Debug)]
pub struct Rustc {
    pub launch: Launch,
    pub release: Release,
}

/// What a compilation of the shim or an example produces, and where.
#[derive(Clone, Copy, Debug)]
pub enum Output<'a> {
    /// The crate (the shim's rlib, an example's binary), named by rustc in this directory.
    Directory(&'a Path),
    /// The unit-test binary (`rustc --test`), as exactly this file.
    Tests(&'a Path),
}

fn path_arg(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

fn push<S: Into<String>>(invocation: &mut Invocation, args: impl IntoIterator<Item = S>) {
    invocation.args.extend(args.into_iter().map(Into::into));
}

/// Appends the flags of `line`, split at single spaces: a literal, so that no value read from a
/// file (a crate name, an edition) can ever be split into flags of its own.
fn push_line(invocation: &mut Invocation, line: &'static str) {
    invocation.args.extend(line.split(' ').map(String::from));
}

/// Kbuild's flags for a driver with the comma-separated allowed features `list`.
pub fn kbuild_driver_flags(list: &str) -> Vec<String> {
    let mut flags = Vec::new();
    crate::catalog::kbuild_driver_flags(list, |flag| flags.push(flag.to_string()));
    flags
}

impl Rustc {
    pub fn of(toolchain: &crate::toolchains::discovery::Toolchain, release: Release) -> Rustc {
        let launch = toolchain.launch.clone();
        Rustc { launch, release }
    }

    fn bootstrap_env(&self) -> Vec<(String, String)> {
        let mut env = self.launch.env.clone();
        env.push(("RUSTC_BOOTSTRAP".into(), "1".into()));
        env
    }

    /// `--edition 2021` is known since 1.56; older compilers, which only probe, get 2018.
    fn edition(&self) -> &'static str {
        if self.release >= Release::new(1, 56, 0) {
            "2021"
        } else {
            "2018"
        }
    }

    /// The parts every compilation shares: environment for the mode, edition, check-cfg.
    fn base(&self, mode: Mode) -> Invocation {
        let (env, env_remove) = match mode {
            Mode::Kernel => (self.bootstrap_env(), Vec::new()),
            Mode::Stable => (self.launch.env.clone(), vec!["RUSTC_BOOTSTRAP".into()]),
        };
        let mut args = vec!["--edition".into(), self.edition().into()];
        if self.release >= CHECK_CFG_SINCE {
            // `cfg(test)` is not among the names rustc knows once `--check-cfg` lists any.
            for name in all_cfg_names().chain(["test"]) {
                args.extend(["--check-cfg".into(), format!("cfg({name})")]);
            }
        }
        Invocation {
            env_remove,
            ..self.launch.invocation(args, env)
        }
    }

    /// What a crate outside the shim gets: in kernel mode Kbuild's flags for a driver
    /// ([`kbuild_driver_flags`]), the shim's rlib as `kernel`, and the mode's cfgs.
    fn add_kernel_user(invocation: &mut Invocation, mode: Mode, cfgs: &[&str], rlib: &Path) {
        if mode == Mode::Kernel {
            push(invocation, kbuild_driver_flags(RUST_ALLOWED_FEATURES));
        }
        let rlib = format!("kernel={}", path_arg(rlib));
        invocation.args.extend(["--extern".into(), rlib]);
        push(invocation, cfgs.iter().flat_map(|cfg| ["--cfg", cfg]));
    }

    fn add_output(invocation: &mut Invocation, output: Output<'_>) {
        let (flag, path) = match output {
            Output::Directory(directory) => ("--out-dir", directory),
            Output::Tests(file) => ("-o", file),
        };
        invocation.args.extend([flag.into(), path_arg(path)]);
    }

    pub fn probe(&self, source: &Path, out_dir: &Path) -> Invocation {
        let mut invocation = self.launch.invocation(Vec::new(), self.bootstrap_env());
        push_line(
            &mut invocation,
            "--crate-name kshim_probe --crate-type lib --edition",
        );
        invocation.args.push(self.edition().into());
        push_line(&mut invocation, "--error-format=json --emit=metadata");
        invocation.args.push(path_arg(source));
        Self::add_output(&mut invocation, Output::Directory(out_dir));
        invocation
    }

    pub fn kbuild_fixture(&self, source: &Path, out_dir: &Path) -> Invocation {
        let mut invocation = self.base(Mode::Kernel);
        push_line(
            &mut invocation,
            "--crate-name kshim_kbuild --crate-type lib --emit=metadata --error-format=json",
        );
        push(&mut invocation, kbuild_driver_flags(RUST_ALLOWED_FEATURES));
        invocation.args.push(path_arg(source));
        Self::add_output(&mut invocation, Output::Directory(out_dir));
        invocation
    }

    /// The shim's or an example's compile, of its crate (a `crate_type`) or its test binary.
    fn compile(&self, mode: Mode, name: &str, crate_type: &str, output: Output<'_>) -> Invocation {
        let mut invocation = self.base(mode);
        push(&mut invocation, ["--crate-name", name]);
        match output {
            Output::Tests(_) => push(&mut invocation, ["--test"]),
            _ => push(&mut invocation, ["--crate-type", crate_type, "--emit=link"]),
        }
        invocation
    }

    pub fn shim(&self, root: &Path, mode: Mode, cfgs: &[&str], output: Output<'_>) -> Invocation {
        let mut invocation = self.compile(mode, "kernel", "rlib", output);
        invocation
            .args
            .push(path_arg(&root.join("kernel-shim/src/lib.rs")));
        push(&mut invocation, cfgs.iter().flat_map(|cfg| ["--cfg", cfg]));
        Self::add_output(&mut invocation, output);
        invocation
    }

    /// An example as a binary, or as its test binary, linked against the shim's rlib.
    pub fn example(
        &self,
        example: &Example,
        mode: Mode,
        cfgs: &[&str],
        rlib: &Path,
        output: Output<'_>,
    ) -> Invocation {
        let mut invocation = self.compile(mode, &example.name, "bin", output);
        invocation.args.push(path_arg(&example.path));
        Self::add_kernel_user(&mut invocation, mode, cfgs, rlib);
        Self::add_output(&mut invocation, output);
        invocation
    }

    pub fn print(&self, what: &str) -> Invocation {
        let args = vec!["--print".into(), what.into()];
        self.launch.invocation(args, self.launch.env.clone())
    }

    /// The parts every build of a sysroot crate shares, as the standard library's own build
    /// has them; no lints, since newer lints may fire on an older library.
    fn sysroot_crate(&self, name: &str, edition: &str, triple: &str, out_dir: &Path) -> Invocation {
        let mut invocation = self.launch.invocation(Vec::new(), self.bootstrap_env());
        let names = [
            "--edition",
            edition,
            "--crate-name",
            name,
            "--crate-type",
            "rlib",
        ];
        push(&mut invocation, names);
        push(&mut invocation, ["--target", triple]);
        push_line(
            &mut invocation,
            "-C panic=abort -C opt-level=2 -Zforce-unstable-if-unmarked --cap-lints allow",
        );
        Self::add_output(&mut invocation, Output::Directory(out_dir));
        invocation
    }

    /// `core` for `triple`, from the compiler's own library sources, into `out_dir`.
    pub fn core(&self, sources: &LibrarySources, triple: &str, out_dir: &Path) -> Invocation {
        let mut invocation = self.sysroot_crate("core", &sources.core_edition, triple, out_dir);
        let root = sources.library.join("core/src/lib.rs");
        invocation.args.push(path_arg(&root));
        invocation
    }

    /// `compiler_builtins` for `triple`, against the `core` in `sysroot`.
    pub fn compiler_builtins(
        &self,
        builtins: &Builtins<'_>,
        triple: &str,
        sysroot: &Path,
        out_dir: &Path,
    ) -> Invocation {
        let (edition, root) = match builtins {
            Builtins::Sources(source) => (source.edition.as_str(), source.root.as_path()),
            Builtins::Empty(file) => ("2018", file.as_path()),
        };
        let mut invocation = self.sysroot_crate("compiler_builtins", edition, triple, out_dir);
        if let Builtins::Sources(_) = builtins {
            // What the standard library's build asks of it; without `mem`, since the
            // programs bring their own memory functions as the kernel does.
            push_line(&mut invocation, "--cfg feature=\"compiler-builtins\"");
        }
        Self::set_sysroot(&mut invocation, sysroot);
        invocation.args.push(path_arg(root));
        invocation
    }

    /// Points a compilation at `sysroot`, in place of the one its loader gives it.
    fn set_sysroot(invocation: &mut Invocation, sysroot: &Path) {
        match invocation.args.iter().position(|arg| arg == "--sysroot") {
            Some(index) if index + 1 < invocation.args.len() => {
                invocation.args[index + 1] = path_arg(sysroot);
            }
            _ => push(invocation, ["--sysroot".into(), path_arg(sysroot)]),
        }
    }

    /// Makes a compilation build for `triple` with the `core` of `sysroot`, without unwinding.
    pub fn for_target(invocation: &mut Invocation, triple: &str, sysroot: &Path) {
        Self::set_sysroot(invocation, sysroot);
        push(invocation, ["--target", triple, "-C", "panic=abort"]);
    }

    /// A crate of `xtask/programs/` built against the shim's rlib for a kernel target.
    pub fn target_crate(
        &self,
        source: &Path,
        name: &str,
        mode: Mode,
        cfgs: &[&str],
        rlib: &Path,
        output: TargetOutput<'_>,
    ) -> Invocation {
        let mut invocation = self.base(mode);
        push(&mut invocation, ["--crate-name", name]);
        push_line(&mut invocation, "-C opt-level=2 -C codegen-units=1");
        let file = match output {
            TargetOutput::Object(object) => {
                push_line(&mut invocation, "--crate-type lib --emit=obj");
                object
            }
            TargetOutput::Program { binary, linker } => {
                push_line(
                    &mut invocation,
                    "--crate-type bin -C relocation-model=static -C linker-flavor=ld.lld -C",
                );
                invocation.args.push(format!("linker={}", path_arg(linker)));
                binary
            }
        };
        push(
            &mut invocation,
            ["-o".into(), path_arg(file), path_arg(source)],
        );
        Self::add_kernel_user(&mut invocation, mode, cfgs, rlib);
        invocation
    }
}

/// The `compiler_builtins` a sysroot gets.
#[derive(Clone, Debug)]
pub enum Builtins<'a> {
    Sources(&'a SourceCrate),
    /// The empty crate of `xtask/programs/`, where the sources hold none.
    Empty(PathBuf),
}

#[derive(Clone, Copy, Debug)]
pub enum TargetOutput<'a> {
    /// One relocatable object (`--emit=obj`, one codegen unit).
    Object(&'a Path),
    /// A statically linked executable, linked by `linker` (an `ld.lld`).
    Program { binary: &'a Path, linker: &'a Path },
}

/// Running an example's binary, with the toolchain's environment for its shared libraries.
pub fn binary_run(rustc: &Rustc, binary: &Path) -> Invocation {
    Invocation::new(binary, Vec::new()).with_env(rustc.launch.env.clone())
}

/// Running a test binary so that it reports libtest's JSON events, which a stable-built
/// binary accepts with `RUSTC_BOOTSTRAP=1`.
pub fn test_run(rustc: &Rustc, binary: &Path) -> Invocation {
    let args = crate::util::libtest::JSON_ARGS.map(String::from).to_vec();
    Invocation::new(binary, args).with_env(rustc.bootstrap_env())
}
