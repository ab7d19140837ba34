//! The matrix's plan: the toolchains found, the rustc command lines (driven directly, as Kbuild
//! does, with the cfgs the catalog derives and, in kernel mode, `RUSTC_BOOTSTRAP=1` and the
//! kernel's `-Zallow-features`), and the graph of steps that runs them.

use crate::catalog::{all_cfg_names, allowed_features, derived_cfgs, Feature, Release, FEATURES};
use crate::expect::ToolchainVerdict;
use crate::pins::Shard;
use crate::process::Invocation;
use crate::project_root;
use crate::toolchain::{discover, Availability};
use anyhow::Context;
use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;
use xshell::Shell;

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

/// What a step does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Compile the feature probe and classify its diagnostics.
    Probe,
    /// Compile a crate with code generation.
    Build,
    /// Run an example's binary: load and unload the module, print its log.
    Run,
    /// Compile a crate with `--test` and run the test binary.
    Test,
}

impl Kind {
    /// The kind as one word, the report's `kind` value.
    pub fn word(self) -> &'static str {
        match self {
            Kind::Probe => "probe",
            Kind::Build => "build",
            Kind::Run => "run",
            Kind::Test => "test",
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

impl Rustc {
    /// The parts every compilation shares: environment for the mode, edition, check-cfg.
    fn base(&self, mode: Mode) -> Invocation {
        let mut env = self.env.clone();
        let mut env_remove = Vec::new();
        match mode {
            Mode::Kernel => env.push(("RUSTC_BOOTSTRAP".into(), "1".into())),
            Mode::Stable => env_remove.push("RUSTC_BOOTSTRAP".into()),
        }
        let mut args = vec!["--edition".into(), "2021".into()];
        if self.release >= CHECK_CFG_SINCE {
            for name in all_cfg_names() {
                args.push("--check-cfg".into());
                args.push(format!("cfg({name})"));
            }
        }
        Invocation {
            program: self.path.clone(),
            args,
            env,
            env_remove,
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
        let mut invocation = Invocation {
            program: self.path.clone(),
            args: Vec::new(),
            env: self.env.clone(),
            env_remove: Vec::new(),
        };
        invocation.env.push(("RUSTC_BOOTSTRAP".into(), "1".into()));
        invocation.args.extend(
            [
                "--crate-name",
                "kshim_probe",
                "--crate-type",
                "lib",
                "--edition",
                "2021",
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

/// The shim's crate root.
pub fn shim_root(root: &Path) -> PathBuf {
    root.join("kernel-shim/src/lib.rs")
}

/// Every file of the shim's source tree, sorted: all of them can change the build.
pub fn shim_inputs(root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    fn walk(directory: &Path, files: &mut Vec<PathBuf>) -> anyhow::Result<()> {
        for entry in
            fs::read_dir(directory).with_context(|| format!("reading {}", directory.display()))?
        {
            let path = entry?.path();
            if path.is_dir() {
                walk(&path, files)?;
            } else {
                files.push(path);
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(&root.join("kernel-shim/src"), &mut files)?;
    files.sort();
    Ok(files)
}

/// One `[[example]]` of `examples/Cargo.toml`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Example {
    /// Its name, also its crate name.
    pub name: String,
    /// Its source file, by absolute path.
    pub path: PathBuf,
}

/// Reads the `[[example]]` tables of `examples/Cargo.toml`: each one's name and path (`NAME.rs`
/// when the table gives none).
pub fn examples(root: &Path) -> anyhow::Result<Vec<Example>> {
    let manifest = root.join("examples/Cargo.toml");
    let text =
        fs::read_to_string(&manifest).with_context(|| format!("reading {}", manifest.display()))?;
    parse_examples(&text, &root.join("examples"))
        .with_context(|| format!("reading the [[example]] tables of {}", manifest.display()))
}

/// Reads `[[example]]` tables from a manifest's text; paths are relative to `directory`.
pub fn parse_examples(text: &str, directory: &Path) -> anyhow::Result<Vec<Example>> {
    let mut examples = Vec::new();
    let mut current: Option<(Option<String>, Option<String>, usize)> = None;
    let mut finish = |current: Option<(Option<String>, Option<String>, usize)>| {
        if let Some((name, path, line)) = current {
            let name =
                name.with_context(|| format!("the [[example]] on line {line} has no name"))?;
            let path = path.unwrap_or_else(|| format!("{name}.rs"));
            examples.push(Example {
                path: directory.join(path),
                name,
            });
        }
        anyhow::Ok(())
    };
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.starts_with('[') {
            finish(current.take())?;
            if line == "[[example]]" {
                current = Some((None, None, index + 1));
            }
            continue;
        }
        let Some((name, path, _)) = current.as_mut() else {
            continue;
        };
        if let Some((key, value)) = line.split_once('=') {
            let value = value.trim();
            let unquoted = value
                .strip_prefix('"')
                .and_then(|value| value.strip_suffix('"'));
            match (key.trim(), unquoted) {
                ("name", Some(value)) => *name = Some(value.to_string()),
                ("path", Some(value)) => *path = Some(value.to_string()),
                ("name" | "path", None) => {
                    anyhow::bail!("line {}: expected a plain string, got {value}", index + 1)
                }
                _ => {}
            }
        }
    }
    finish(current.take())?;
    Ok(examples)
}

/// Checks that every example the catalog names is an `[[example]]` of `manifest` whose source
/// file exists, so that the matrix never reports a feature as taught by an example it did not
/// build.
///
/// The error names the file and line to fix: the manifest's `[[example]]` whose file is
/// missing, or the catalog's entry (`catalog`, where the catalog's source is) that names an
/// example the manifest does not declare.
pub fn check_catalog_examples(
    features: &[Feature],
    examples: &[Example],
    manifest: &Path,
    catalog: &Path,
) -> anyhow::Result<()> {
    let line_of = |file: &Path, needle: &str| {
        fs::read_to_string(file).ok().and_then(|text| {
            text.lines()
                .position(|line| line.contains(needle))
                .map(|index| format!("{}:{}", file.display(), index + 1))
        })
    };
    for feature in features {
        let name = feature.example;
        let Some(example) = examples.iter().find(|example| example.name == name) else {
            let place = line_of(catalog, &format!("example: \"{name}\""))
                .unwrap_or_else(|| format!("the catalog ({})", catalog.display()));
            anyhow::bail!(
                "{place}: the feature `{}` names the example `{name}`, but {} declares no \
                 [[example]] named `{name}`",
                feature.name,
                manifest.display()
            );
        };
        if !example.path.is_file() {
            let place = line_of(manifest, &format!("name = \"{name}\""))
                .unwrap_or_else(|| manifest.display().to_string());
            anyhow::bail!(
                "{place}: the [[example]] `{name}` (which the catalog names for the feature \
                 `{}`) has no source file: {} does not exist",
                feature.name,
                example.path.display()
            );
        }
    }
    Ok(())
}

/// The files an example's build reads: the example and its out-of-line modules, found through
/// `#[path = "..."]` attributes and `mod name;` declarations, transitively.
pub fn example_inputs(example: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = vec![example.to_path_buf()];
    let mut next = 0;
    while next < files.len() {
        let file = files[next].clone();
        next += 1;
        let text =
            fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
        let directory = file.parent().unwrap_or(Path::new("."));
        let mut explicit_path: Option<String> = None;
        for line in text.lines().map(str::trim) {
            if let Some(rest) = line.strip_prefix("#[path") {
                explicit_path = rest.split('"').nth(1).map(String::from);
                continue;
            }
            let declaration = line
                .strip_prefix("pub ")
                .or_else(|| line.strip_prefix("pub(crate) "))
                .unwrap_or(line);
            let Some(name) = declaration
                .strip_prefix("mod ")
                .and_then(|rest| rest.strip_suffix(';'))
            else {
                if !line.starts_with("#[") {
                    explicit_path = None;
                }
                continue;
            };
            let candidates = match explicit_path.take() {
                Some(path) => vec![directory.join(path)],
                None => vec![
                    directory.join(format!("{}.rs", name.trim())),
                    directory.join(name.trim()).join("mod.rs"),
                ],
            };
            for candidate in candidates {
                if candidate.is_file() && !files.contains(&candidate) {
                    files.push(candidate);
                }
            }
        }
    }
    Ok(files)
}

/// A file-system-safe directory name for a toolchain id.
pub fn directory_name(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A toolchain as the planner sees it: an index into the matrix's toolchain list, its compiler
/// and whether it gets builds (ok) or only the probe (too old).
#[derive(Clone, Debug)]
pub struct PlannedToolchain {
    /// The index of the toolchain in the matrix.
    pub index: usize,
    /// A short name for file paths, unique among the toolchains.
    pub directory_name: String,
    /// The compiler.
    pub rustc: Rustc,
    /// Whether to build and test (the toolchain is ok), or only to probe (too old).
    pub builds: bool,
}

/// One node of the step graph.
#[derive(Clone, Debug)]
pub struct Step {
    /// The index of the toolchain in the matrix.
    pub toolchain: usize,
    /// What it does.
    pub kind: Kind,
    /// `kernel` for the shim, the example's name, or `features` for the probe.
    pub target: String,
    /// The mode, for builds and tests.
    pub mode: Option<Mode>,
    /// Its processes, each run only after the one before it succeeded: rustc; for a test, rustc
    /// and then the test binary; for a run, the example's binary.
    pub processes: Vec<Invocation>,
    /// A file later steps need (the shim's rlib), which a cache hit must find unchanged.
    pub artifact: Option<PathBuf>,
    /// Directories to create before running.
    pub directories: Vec<PathBuf>,
    /// Files whose contents the result depends on.
    pub inputs: Vec<PathBuf>,
    /// Steps that must pass first (indices into the plan, always lower than this step's).
    pub deps: Vec<usize>,
}

impl Step {
    /// A short label for progress lines and failures: `build rust_minimal (kernel)`.
    pub fn label(&self) -> String {
        match self.mode {
            Some(mode) => format!("{} {} ({})", self.kind.word(), self.target, mode.word()),
            None => format!("{} {}", self.kind.word(), self.target),
        }
    }
}

/// Where the matrix puts its files.
#[derive(Clone, Debug)]
pub struct Layout {
    /// The repository root.
    pub root: PathBuf,
    /// `target/kshim`.
    pub kshim: PathBuf,
}

impl Layout {
    /// The layout for a repository root.
    pub fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            kshim: root.join("target/kshim"),
        }
    }

    /// The generated probe crate.
    pub fn probe_source(&self) -> PathBuf {
        self.kshim.join("matrix/kshim_probe.rs")
    }

    /// The output directory of one toolchain and mode (or `probe`).
    pub fn output(&self, toolchain: &str, part: &str) -> PathBuf {
        self.kshim.join("matrix").join(toolchain).join(part)
    }

    /// The result cache.
    pub fn cache(&self) -> PathBuf {
        self.kshim.join("cache")
    }

    /// The last run's report.
    pub fn report(&self) -> PathBuf {
        self.kshim.join("matrix-report.json")
    }

    /// The lock that one run at a time holds.
    pub fn lock(&self) -> PathBuf {
        self.kshim.join("matrix.lock")
    }
}

/// The toolchains a run found and the steps planned for them.
pub struct PlannedRun {
    /// Every pin or `--toolchain` spec of the run (of the shard, with one), in order.
    pub availabilities: Vec<Availability>,
    /// The toolchains that run, as the steps name them.
    pub planned: Vec<PlannedToolchain>,
    /// The examples read from `examples/Cargo.toml`.
    pub examples: Vec<Example>,
    /// Every step, in an order that puts each after the steps it needs.
    pub steps: Vec<Step>,
}

/// What a run checks: which compilers, from which pin file, of which shard.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// `--toolchain` specs; empty means every pin.
    pub toolchains: Vec<String>,
    /// `--pins`: the pin file, if not the repository's.
    pub pins: Option<PathBuf>,
    /// `--shard K/N`: only the toolchains this shard owns.
    pub shard: Option<Shard>,
}

/// Discovers the toolchains (running each one's `rustc -vV`, killed after `timeout`) and
/// plans every step for them.
pub fn plan_run(
    sh: &Shell,
    layout: &Layout,
    selection: &Selection,
    timeout: Duration,
) -> anyhow::Result<PlannedRun> {
    let examples = examples(&layout.root)?;
    check_catalog_examples(
        FEATURES,
        &examples,
        &layout.root.join("examples/Cargo.toml"),
        // The catalog compiled into this xtask, wherever the sources checked are.
        &project_root().join("kernel-shim/src/catalog.rs"),
    )?;
    let mut availabilities = discover(
        sh,
        selection.pins.as_deref(),
        &selection.toolchains,
        timeout,
    )?;
    if let Some(shard) = selection.shard {
        availabilities = availabilities
            .into_iter()
            .enumerate()
            .filter(|(position, _)| shard.owns(*position))
            .map(|(_, availability)| availability)
            .collect();
    }
    let mut planned = Vec::new();
    let mut used_names: HashSet<String> = HashSet::new();
    for (index, availability) in availabilities.iter().enumerate() {
        let Availability::Found { toolchain, version } = availability else {
            continue;
        };
        let mut name = directory_name(&toolchain.id);
        if !used_names.insert(name.clone()) {
            name = format!("{name}-{index}");
            used_names.insert(name.clone());
        }
        planned.push(PlannedToolchain {
            index,
            directory_name: name,
            rustc: Rustc {
                path: toolchain.rustc.clone(),
                env: toolchain.env.clone(),
                release: version.release,
            },
            builds: ToolchainVerdict::for_release(version.release) == ToolchainVerdict::Ok,
        });
    }
    let steps = plan(layout, &planned, &examples)?;
    Ok(PlannedRun {
        availabilities,
        planned,
        examples,
        steps,
    })
}

/// Plans every step for the toolchains: probes and shim builds first (everything else waits
/// for them), then the shim's tests, and every example's build, run and tests in both modes.
pub fn plan(
    layout: &Layout,
    toolchains: &[PlannedToolchain],
    examples: &[Example],
) -> anyhow::Result<Vec<Step>> {
    let shim_files = shim_inputs(&layout.root)?;
    let mut example_files = Vec::new();
    for example in examples {
        example_files.push(example_inputs(&example.path)?);
    }
    let mut steps = Vec::new();
    // (toolchain position, mode) -> index of the shim's rlib step
    let mut libraries = Vec::new();
    for toolchain in toolchains {
        let probe_dir = layout.output(&toolchain.directory_name, "probe");
        steps.push(Step {
            toolchain: toolchain.index,
            kind: Kind::Probe,
            target: "features".into(),
            mode: None,
            processes: vec![toolchain.rustc.probe(&layout.probe_source(), &probe_dir)],
            artifact: None,
            directories: vec![probe_dir],
            inputs: vec![layout.probe_source()],
            deps: Vec::new(),
        });
        if !toolchain.builds {
            continue;
        }
        for mode in Mode::ALL {
            let directory = layout.output(&toolchain.directory_name, mode.word());
            let cfgs = mode_cfgs(toolchain.rustc.release, mode);
            libraries.push((
                toolchain.index,
                mode,
                steps.len(),
                directory.join("libkernel.rlib"),
            ));
            steps.push(Step {
                toolchain: toolchain.index,
                kind: Kind::Build,
                target: "kernel".into(),
                mode: Some(mode),
                processes: vec![toolchain.rustc.shim(
                    &layout.root,
                    mode,
                    &cfgs,
                    Product::Crate,
                    Output::Directory(&directory),
                )],
                artifact: Some(directory.join("libkernel.rlib")),
                directories: vec![directory],
                inputs: shim_files.clone(),
                deps: Vec::new(),
            });
        }
    }
    for toolchain in toolchains.iter().filter(|toolchain| toolchain.builds) {
        for mode in Mode::ALL {
            let directory = layout.output(&toolchain.directory_name, mode.word());
            let cfgs = mode_cfgs(toolchain.rustc.release, mode);
            let test_binary = directory.join("kernel-test");
            steps.push(Step {
                toolchain: toolchain.index,
                kind: Kind::Test,
                target: "kernel".into(),
                mode: Some(mode),
                processes: vec![
                    toolchain.rustc.shim(
                        &layout.root,
                        mode,
                        &cfgs,
                        Product::Tests,
                        Output::File(&test_binary),
                    ),
                    test_run(&toolchain.rustc, &test_binary),
                ],
                artifact: None,
                directories: vec![directory.clone()],
                inputs: shim_files.clone(),
                deps: Vec::new(),
            });
            let (_, _, library, rlib) = libraries
                .iter()
                .find(|(index, library_mode, _, _)| {
                    *index == toolchain.index && *library_mode == mode
                })
                .cloned()
                .context("every toolchain that builds has a shim step per mode")?;
            for (example, files) in examples.iter().zip(&example_files) {
                let binary = directory.join(&example.name);
                let build = steps.len();
                steps.push(Step {
                    toolchain: toolchain.index,
                    kind: Kind::Build,
                    target: example.name.clone(),
                    mode: Some(mode),
                    processes: vec![toolchain.rustc.example(
                        example,
                        mode,
                        &cfgs,
                        &rlib,
                        Product::Crate,
                        Output::Directory(&directory),
                    )],
                    // The run step below needs this very binary.
                    artifact: Some(binary.clone()),
                    directories: vec![directory.clone()],
                    inputs: files.clone(),
                    deps: vec![library],
                });
                steps.push(Step {
                    toolchain: toolchain.index,
                    kind: Kind::Run,
                    target: example.name.clone(),
                    mode: Some(mode),
                    processes: vec![binary_run(&toolchain.rustc, &binary)],
                    artifact: None,
                    directories: Vec::new(),
                    // The build's cache key already covers the sources.
                    inputs: Vec::new(),
                    deps: vec![build],
                });
                let test_binary = directory.join(format!("{}-test", example.name));
                steps.push(Step {
                    toolchain: toolchain.index,
                    kind: Kind::Test,
                    target: example.name.clone(),
                    mode: Some(mode),
                    processes: vec![
                        toolchain.rustc.example(
                            example,
                            mode,
                            &cfgs,
                            &rlib,
                            Product::Tests,
                            Output::File(&test_binary),
                        ),
                        test_run(&toolchain.rustc, &test_binary),
                    ],
                    artifact: None,
                    directories: vec![directory.clone()],
                    inputs: files.clone(),
                    deps: vec![library],
                });
            }
        }
    }
    Ok(steps)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_names_are_safe() {
        assert_eq!(directory_name("1.95.0"), "1.95.0");
        assert_eq!(directory_name("/usr/bin/rustc"), "_usr_bin_rustc");
    }

    #[test]
    fn reads_example_tables() {
        let manifest = "[package]\nname = \"x\"\n\n[[example]]\nname = \"a\"\npath = \"a.rs\"\ntest = true\n\n[[example]]\nname = \"b\"\n\n[dependencies]\nname = \"not an example\"\n";
        let examples = parse_examples(manifest, Path::new("/e")).unwrap();
        assert_eq!(
            examples,
            [
                Example {
                    name: "a".into(),
                    path: "/e/a.rs".into()
                },
                Example {
                    name: "b".into(),
                    path: "/e/b.rs".into()
                }
            ]
        );
        assert!(parse_examples("[[example]]\npath = \"x.rs\"\n", Path::new("/")).is_err());
    }

    #[test]
    fn kernel_mode_lines_carry_bootstrap_and_the_allow_list() {
        let rustc = Rustc {
            path: "/r/rustc".into(),
            env: vec![("LD_LIBRARY_PATH".into(), "/r/lib".into())],
            release: Release::new(1, 85, 0),
        };
        let example = Example {
            name: "rust_minimal".into(),
            path: "/p/examples/rust_minimal.rs".into(),
        };
        let cfgs = mode_cfgs(rustc.release, Mode::Kernel);
        let line = rustc
            .example(
                &example,
                Mode::Kernel,
                &cfgs,
                Path::new("/o/libkernel.rlib"),
                Product::Crate,
                Output::Directory(Path::new("/o")),
            )
            .shell_line();
        assert!(
            line.starts_with("LD_LIBRARY_PATH=/r/lib RUSTC_BOOTSTRAP=1 /r/rustc "),
            "{line}"
        );
        // The kernel's `rust_allowed_features`, in the catalog's order.
        let allowed =
            " -Zallow-features=lint_reasons,raw_ref_op,arbitrary_self_types,asm_const,asm_goto ";
        assert!(line.contains(allowed), "{line}");
        assert!(line.contains(" --cfg kshim_kernel_mode "), "{line}");
        assert!(
            line.contains(" --check-cfg 'cfg(kshim_kernel_mode)'"),
            "{line}"
        );
        let stable = rustc.shim(
            Path::new("/p"),
            Mode::Stable,
            &mode_cfgs(rustc.release, Mode::Stable),
            Product::Crate,
            Output::Directory(Path::new("/o")),
        );
        assert!(!stable.shell_line().contains("RUSTC_BOOTSTRAP"));
        assert_eq!(stable.env_remove, ["RUSTC_BOOTSTRAP"]);
        let old = Rustc {
            release: Release::new(1, 79, 0),
            ..rustc
        };
        let line = old
            .shim(
                Path::new("/p"),
                Mode::Stable,
                &[],
                Product::Crate,
                Output::Directory(Path::new("/o")),
            )
            .shell_line();
        assert!(!line.contains("--check-cfg"), "{line}");
    }
}
