//! The matrix's plan: the toolchains found, the rustc command lines (driven directly, as Kbuild
//! does, with the cfgs the catalog derives and, in kernel mode, `RUSTC_BOOTSTRAP=1` and the
//! kernel's `-Zallow-features`), and the graph of steps that runs them.

mod examples;
mod rustc;
#[cfg(test)]
mod tests;
mod usage;

pub use examples::{
    check_catalog_examples, example_inputs, examples, parse_examples, shim_inputs, shim_root,
    Example,
};
pub use rustc::{binary_run, mode_cfgs, test_run, Mode, Output, Product, Rustc, CHECK_CFG_SINCE};
pub use usage::{example_without, plan_usage, shim_without, PlannedUsage, UsageCompile};

use crate::catalog::FEATURES;
use crate::expect::ToolchainVerdict;
use crate::pins::Shard;
use crate::process::Invocation;
use crate::project_root;
use crate::toolchain::{discover, Availability};
use anyhow::Context;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;
use xshell::Shell;

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
    /// Compile a crate's metadata in kernel mode without one feature in `-Zallow-features`,
    /// and read where it needs that feature.
    Usage,
}

impl Kind {
    /// The kind as one word, the report's `kind` value.
    pub fn word(self) -> &'static str {
        match self {
            Kind::Probe => "probe",
            Kind::Build => "build",
            Kind::Run => "run",
            Kind::Test => "test",
            Kind::Usage => "usage",
        }
    }
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
        shard.check(availabilities.len())?;
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
            rustc: Rustc::of(toolchain, version.release),
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
    // (toolchain position, mode) -> the shim's rlib step and its file
    let mut libraries: HashMap<(usize, Mode), (usize, PathBuf)> = HashMap::new();
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
            libraries.insert(
                (toolchain.index, mode),
                (steps.len(), directory.join("libkernel.rlib")),
            );
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
            let (library, rlib) = libraries
                .get(&(toolchain.index, mode))
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
