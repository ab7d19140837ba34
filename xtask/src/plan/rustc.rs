//! The rustc command lines of the matrix: the probe, the shim and the examples in either mode,
//! and the runs of what they build.

use super::examples::{shim_root, Example};
use crate::catalog::{all_cfg_names, allowed_features, derived_cfgs, Release};
use crate::process::Invocation;
use std::path::{Path, PathBuf};

/// The release that stabilized `--check-cfg`; older compilers reject the flag.
pub const CHECK_CFG_SINCE: Release = Release::new(1, 80, 0);

/// How the shim and the examples are built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// The kernel's way: `RUSTC_BOOTSTRAP=1`, the feature block on, `-Zallow-features` outside
    /// the shim.
    Kernel,
    /// No `#![feature]` at all: stabilized syntax where the compiler has it, the stable
    /// replacement where it does not.
    Stable,
}

impl Mode {
    /// Both modes, kernel first.
    pub const ALL: [Mode; 2] = [Mode::Kernel, Mode::Stable];

    /// The mode as one word, the report's `mode` value.
    pub fn word(self) -> &'static str {
        match self {
            Mode::Kernel => "kernel",
            Mode::Stable => "stable",
        }
    }
}

/// The cfgs a build in `mode` gets from a compiler of `release`.
pub fn mode_cfgs(release: Release, mode: Mode) -> Vec<&'static str> {
    derived_cfgs(release, mode == Mode::Kernel).collect()
}

/// A compiler as the command lines need it.
#[derive(Clone, Debug)]
pub struct Rustc {
    /// The real rustc executable, by absolute path.
    pub path: PathBuf,
    /// Extra environment for rustc and for what it builds (`LD_LIBRARY_PATH` for Debian's).
    pub env: Vec<(String, String)>,
    /// The loader it runs through, if not the host's: command lines then start with it.
    pub loader: Option<crate::loader::OwnLoader>,
    /// The release it reports.
    pub release: Release,
}

/// What a compilation of the shim or an example produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Product {
    /// The crate itself: the shim's rlib, an example's binary.
    Crate,
    /// Its unit-test binary (`rustc --test`).
    Tests,
}

/// Where a compilation writes its result.
#[derive(Clone, Debug)]
pub enum Output<'a> {
    /// `--out-dir`: rustc names the file after the crate.
    Directory(&'a Path),
    /// `-o`: exactly this file (test binaries).
    File(&'a Path),
}

fn path_arg(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// The first release that knows `--edition 2021`; older ones get 2018 (only the feature probe
/// runs on them, since they are below the minimum).
const EDITION_2021_SINCE: Release = Release::new(1, 56, 0);

impl Rustc {
    /// The compiler of a discovered toolchain that reports `release`.
    pub fn of(toolchain: &crate::toolchain::Toolchain, release: Release) -> Rustc {
        Rustc {
            path: toolchain.rustc.clone(),
            env: toolchain.env.clone(),
            loader: toolchain.loader.clone(),
            release,
        }
    }

    /// An invocation of this rustc with `args` after the loader's, if it has one.
    fn invocation(&self, args: Vec<String>, env: Vec<(String, String)>) -> Invocation {
        let (program, mut leading) = crate::loader::start(&self.path, self.loader.as_ref());
        leading.extend(args);
        Invocation {
            program,
            args: leading,
            env,
            env_remove: Vec::new(),
        }
    }

    fn edition(&self) -> &'static str {
        if self.release >= EDITION_2021_SINCE {
            "2021"
        } else {
            "2018"
        }
    }

    /// The parts every compilation shares: environment for the mode, edition, check-cfg.
    fn base(&self, mode: Mode) -> Invocation {
        let mut env = self.env.clone();
        let mut env_remove = Vec::new();
        match mode {
            Mode::Kernel => env.push(("RUSTC_BOOTSTRAP".into(), "1".into())),
            Mode::Stable => env_remove.push("RUSTC_BOOTSTRAP".into()),
        }
        let mut args = vec!["--edition".into(), self.edition().into()];
        if self.release >= CHECK_CFG_SINCE {
            for name in all_cfg_names() {
                args.push("--check-cfg".into());
                args.push(format!("cfg({name})"));
            }
        }
        Invocation {
            env_remove,
            ..self.invocation(args, env)
        }
    }

    fn add_cfgs(invocation: &mut Invocation, cfgs: &[&str]) {
        for cfg in cfgs {
            invocation.args.push("--cfg".into());
            invocation.args.push((*cfg).to_string());
        }
    }

    fn add_output(invocation: &mut Invocation, output: Output<'_>) {
        match output {
            Output::Directory(directory) => {
                invocation.args.push("--out-dir".into());
                invocation.args.push(path_arg(directory));
            }
            Output::File(file) => {
                invocation.args.push("-o".into());
                invocation.args.push(path_arg(file));
            }
        }
    }

    /// The feature probe: a metadata-only library build with JSON diagnostics.
    pub fn probe(&self, source: &Path, out_dir: &Path) -> Invocation {
        let mut invocation = self.invocation(Vec::new(), self.env.clone());
        invocation.env.push(("RUSTC_BOOTSTRAP".into(), "1".into()));
        invocation.args.extend(
            [
                "--crate-name",
                "kshim_probe",
                "--crate-type",
                "lib",
                "--edition",
                self.edition(),
                "--error-format=json",
                "--emit=metadata",
            ]
            .map(String::from),
        );
        invocation.args.push(path_arg(source));
        Self::add_output(&mut invocation, Output::Directory(out_dir));
        invocation
    }

    /// The shim as an rlib, or as its unit-test binary.
    pub fn shim(
        &self,
        root: &Path,
        mode: Mode,
        cfgs: &[&str],
        product: Product,
        output: Output<'_>,
    ) -> Invocation {
        let mut invocation = self.base(mode);
        invocation
            .args
            .extend(["--crate-name", "kernel"].map(String::from));
        match product {
            Product::Tests => invocation.args.push("--test".into()),
            Product::Crate => invocation
                .args
                .extend(["--crate-type", "rlib", "--emit=link"].map(String::from)),
        }
        invocation.args.push(path_arg(&shim_root(root)));
        Self::add_cfgs(&mut invocation, cfgs);
        Self::add_output(&mut invocation, output);
        invocation
    }

    /// An example as a binary, or as its test binary, linked against the shim's rlib; in
    /// kernel mode limited to the kernel's `-Zallow-features` list.
    pub fn example(
        &self,
        example: &Example,
        mode: Mode,
        cfgs: &[&str],
        rlib: &Path,
        product: Product,
        output: Output<'_>,
    ) -> Invocation {
        let mut invocation = self.base(mode);
        invocation
            .args
            .extend(["--crate-name".to_string(), example.name.clone()]);
        match product {
            Product::Tests => invocation.args.push("--test".into()),
            Product::Crate => invocation
                .args
                .extend(["--crate-type", "bin", "--emit=link"].map(String::from)),
        }
        invocation.args.push(path_arg(&example.path));
        if mode == Mode::Kernel {
            let allowed: Vec<&str> = allowed_features().collect();
            invocation
                .args
                .push(format!("-Zallow-features={}", allowed.join(",")));
        }
        invocation.args.push("--extern".into());
        invocation.args.push(format!("kernel={}", path_arg(rlib)));
        Self::add_cfgs(&mut invocation, cfgs);
        Self::add_output(&mut invocation, output);
        invocation
    }
}

/// Running an example's binary: with the toolchain's environment, since it may link the
/// toolchain's shared libraries.
pub fn binary_run(rustc: &Rustc, binary: &Path) -> Invocation {
    Invocation {
        program: binary.to_path_buf(),
        args: Vec::new(),
        env: rustc.env.clone(),
        env_remove: Vec::new(),
    }
}

/// Running a test binary so that it reports libtest's JSON events, which a stable-built
/// binary accepts with `RUSTC_BOOTSTRAP=1` (it changes nothing else about the tests).
pub fn test_run(rustc: &Rustc, binary: &Path) -> Invocation {
    let mut invocation = binary_run(rustc, binary);
    invocation.args = crate::libtest::JSON_ARGS.map(String::from).to_vec();
    invocation.env.push(("RUSTC_BOOTSTRAP".into(), "1".into()));
    invocation
}
