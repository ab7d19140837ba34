// SPDX-License-Identifier: GPL-2.0
//! The matrix's plan: the toolchains found, the rustc command lines (driven directly, as Kbuild
//! does: `rustc.rs`), and the graph of steps that runs them.

mod examples;
mod rustc;
mod targets;
#[cfg(test)]
mod tests;
mod usage;

pub use examples::{check_catalog_examples, example_inputs, examples, shim_inputs, Example};
pub use rustc::{binary_run, kbuild_driver_flags, mode_cfgs, test_run, Mode, Output, Rustc};
pub use targets::{has_sites, not_built, plan_targets, Program};
pub use usage::{plan_usage, UsageCompile};

use crate::catalog::FEATURES;
use crate::features::expect::ToolchainVerdict;
use crate::project_root;
use crate::targets::{KernelTarget, KERNEL_TARGETS};
use crate::toolchains::debian::Provisioning;
use crate::toolchains::discovery::{discover, Availability};
use crate::toolchains::emulators::qemu_user;
use crate::toolchains::library_sources::{library_sources, LibrarySources};
use crate::toolchains::pins::Shard;
use crate::util::json::{Deserialize, Serialize};
use crate::util::process::{Invocation, ProcessOutput};
use anyhow::Context;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;
use xshell::Shell;

/// What a step does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Compile the feature probe and classify its diagnostics.
    Probe,
    /// Compile a crate with code generation.
    Build,
    /// Run an example's binary: load and unload the module, print its log.
    Run,
    /// Compile a crate with `--test` and run the test binary.
    Test,
    /// Compile a crate's metadata in kernel mode without one feature in `-Zallow-features`.
    Usage,
    /// Compile any crate (`audit --usage`) without one feature in `-Zallow-features` (or with
    /// every feature allowed), read from rustc's JSON diagnostics.
    CrateUsage,
    /// The same through the toolchain's Cargo, which wraps them in its own messages on stdout.
    CargoUsage,
    /// Compile a fixture of `xtask/programs/kbuild/` as Kbuild compiles a driver, and read the
    /// codes of its errors.
    Kbuild,
    /// `--print target-list`: which kernel targets the compiler knows.
    Targets,
    /// Build `core` or `compiler_builtins` for a kernel target from the compiler's own sources.
    Core,
    /// Compile the static-key sample to an object for a kernel target and check its sites.
    Objects,
    /// Build the test program for a kernel target and run it, natively or under qemu.
    Emulate,
}

impl Kind {
    /// The report's `kind` value: the word serde writes.
    pub fn word(self) -> String {
        let word = crate::util::json::to_value(&self);
        word.as_str().unwrap_or_default().to_owned()
    }

    /// rustc's JSON diagnostics in what a process of this kind printed: on stderr, or on stdout
    /// wrapped in Cargo's own messages.
    pub fn diagnostics(self, output: &ProcessOutput) -> String {
        match self {
            Kind::CargoUsage => crate::util::diagnostics::cargo_diagnostics(&output.stdout),
            _ => output.stderr.clone(),
        }
    }
}

/// A file-system-safe directory name for a toolchain id.
pub fn directory_name(id: &str) -> String {
    id.replace(
        |c: char| !c.is_ascii_alphanumeric() && !"._-".contains(c),
        "_",
    )
}

/// The output directory's name of a compiler: its id, and a short hash of where the compiler
/// is and how it is started, so that no two compilers ever share outputs.
fn identity_directory_name(toolchain: &crate::toolchains::discovery::Toolchain) -> String {
    let mut hasher = crate::util::hash::StableHasher::new();
    hasher
        .field(toolchain.launch.rustc.to_string_lossy().as_bytes())
        .field(&toolchain.spec);
    if let Some(loader) = &toolchain.launch.loader {
        hasher.field(loader.program.to_string_lossy().as_bytes());
    }
    let hash = hasher.finish().to_string();
    format!("{}-{}", directory_name(&toolchain.id), &hash[..8])
}

/// A toolchain as the planner sees it.
#[derive(Clone, Debug)]
pub struct PlannedToolchain {
    pub index: usize,
    /// A short name for file paths, unique among the toolchains.
    pub directory_name: String,
    pub rustc: Rustc,
    /// Whether to build and test (the toolchain is ok), or only to probe (too old).
    pub builds: bool,
}

/// One node of the step graph.
#[derive(Clone, Debug)]
pub struct Step {
    pub toolchain: usize,
    pub kind: Kind,
    /// `kernel` for the shim, the example's name, or `features` for the probe.
    pub target: String,
    pub mode: Option<Mode>,
    /// Its processes, each run only after the one before it succeeded.
    pub processes: Vec<Invocation>,
    /// A file later steps need (the shim's rlib), which a cache hit must find unchanged.
    pub artifact: Option<PathBuf>,
    /// Created before the processes run.
    pub directories: Vec<PathBuf>,
    /// Files whose contents the result depends on.
    pub inputs: Vec<PathBuf>,
    /// Steps that must pass first (indices into the plan, always lower than this step's).
    pub deps: Vec<usize>,
    /// `None` for the host.
    pub kernel_target: Option<&'static KernelTarget>,
    pub check: Option<Check>,
    /// The files its processes write that anything reads later: removed before they run, and
    /// required after they succeed.
    pub outputs: Vec<PathBuf>,
}

/// A check the runner makes in-process after a step's processes succeeded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Check {
    /// The static-branch sites of an object, by [`crate::targets::jump_table::check_object`].
    JumpTable {
        object: PathBuf,
        arch: &'static str,
        /// Key symbol and number of sites the object must hold, each key once; empty when
        /// the build uses the load-and-branch replacement and has no sites at all.
        expected: &'static [(&'static str, usize)],
    },
    /// A metadata file (`*.rmeta`) in the directory: a compile that wrote none compiled
    /// nothing, so it found no place.
    Metadata(PathBuf),
}

impl Step {
    pub fn new(
        toolchain: usize,
        kind: Kind,
        target: &str,
        mode: Option<Mode>,
        processes: Vec<Invocation>,
    ) -> Step {
        Step {
            toolchain,
            kind,
            target: target.to_string(),
            mode,
            processes,
            artifact: None,
            directories: Vec::new(),
            inputs: Vec::new(),
            deps: Vec::new(),
            kernel_target: None,
            check: None,
            outputs: Vec::new(),
        }
    }

    /// A short label for progress lines and failures: `build rust_minimal (kernel)`.
    pub fn label(&self) -> String {
        let triple = self.kernel_target.map(|kernel_target| kernel_target.triple);
        cell_label(self.kind, &self.target, self.mode, triple)
    }
}

/// A step's or a report cell's name: `build kernel (kernel) for aarch64-unknown-none`.
pub fn cell_label(kind: Kind, target: &str, mode: Option<Mode>, triple: Option<&str>) -> String {
    let mode = mode.map_or(String::new(), |mode| format!(" ({})", mode.word()));
    let triple = triple.map_or(String::new(), |triple| format!(" for {triple}"));
    format!("{} {target}{mode}{triple}", kind.word())
}

#[derive(Clone, Debug)]
pub struct Layout {
    pub root: PathBuf,
    pub kshim: PathBuf,
}

impl Layout {
    pub fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            kshim: root.join("target/kshim"),
        }
    }

    pub fn probe_source(&self) -> PathBuf {
        self.kshim.join("matrix/kshim_probe.rs")
    }

    pub fn output(&self, toolchain: &str, part: &str) -> PathBuf {
        self.kshim.join("matrix").join(toolchain).join(part)
    }

    pub fn cache(&self) -> PathBuf {
        self.kshim.join("cache")
    }

    pub fn report(&self) -> PathBuf {
        self.kshim.join("matrix-report.json")
    }

    pub fn lock(&self) -> PathBuf {
        crate::util::run_lock::of_checkout(&self.root)
    }
}

/// The toolchains a run found and the steps planned for them.
pub struct PlannedRun {
    /// Every pin or `--toolchain` spec of the run (of the shard, with one), in order.
    pub availabilities: Vec<Availability>,
    pub planned: Vec<PlannedToolchain>,
    pub examples: Vec<Example>,
    /// Per entry of `availabilities`: its library sources, or why there are none.
    pub library_sources: Vec<Option<Result<LibrarySources, String>>>,
    pub targets: Vec<&'static KernelTarget>,
    /// Why each kernel target's test program is not built or not run here, if it is not.
    pub not_run: Vec<Option<String>>,
    /// Every step, each after the steps it needs.
    pub steps: Vec<Step>,
}

/// What a run checks: `--toolchain` (empty: every pin), `--pins`, `--shard` and `--target`
/// (`None`: every kernel target).
#[derive(Clone, Debug, Default)]
pub struct Selection {
    pub toolchains: Vec<String>,
    pub pins: Option<PathBuf>,
    pub shard: Option<Shard>,
    pub targets: Option<Vec<&'static KernelTarget>>,
}

/// Discovers the toolchains (each `rustc -vV` killed after `timeout`) and plans their steps.
pub fn plan_run(
    sh: &Shell,
    layout: &Layout,
    selection: &Selection,
    timeout: Duration,
    provisioning: Provisioning,
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
        provisioning,
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
    let mut sources = vec![None; availabilities.len()];
    let mut used_names: HashSet<String> = HashSet::new();
    for (index, availability) in availabilities.iter().enumerate() {
        let Availability::Found { toolchain, version } = availability else {
            continue;
        };
        sources[index] =
            Some(library_sources(toolchain, version).map_err(|why| format!("{why:#}")));
        let mut name = identity_directory_name(toolchain);
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
    let mut steps = plan(layout, &planned, &examples)?;
    let targets = selection
        .targets
        .clone()
        .unwrap_or_else(|| KERNEL_TARGETS.iter().collect());
    let linker = find_linker(&availabilities).map_err(|why| format!("{why:#}"));
    let programs: Vec<Program> = targets
        .iter()
        .map(|target| {
            let emulator = (target.arch != std::env::consts::ARCH).then(|| {
                qemu_user(target.arch).with_context(|| {
                    format!(
                        "no qemu-{}-static here to run it: `cargo xtask toolchains install` \
                         unpacks Debian's qemu-user-static",
                        target.arch
                    )
                })
            });
            let emulator = emulator.transpose().map_err(|why| format!("{why:#}"));
            Ok((linker.clone()?, emulator?))
        })
        .collect();
    if !targets.is_empty() {
        plan_targets(layout, &planned, &sources, &targets, &programs, &mut steps)?;
    }
    let not_run = programs
        .iter()
        .map(|program| program.as_ref().err().cloned())
        .collect();
    Ok(PlannedRun {
        availabilities,
        planned,
        examples,
        steps,
        library_sources: sources,
        targets,
        not_run,
    })
}

/// The `ld.lld` that links the test programs: `rust-lld` from a rustup toolchain (Debian's
/// compilers ship none), or `ld.lld` on `PATH`.
fn find_linker(availabilities: &[Availability]) -> anyhow::Result<PathBuf> {
    let bundled = availabilities.iter().find_map(|availability| {
        let Availability::Found { toolchain, version } = availability else {
            return None;
        };
        let sysroot = toolchain.launch.rustc.parent()?.parent()?;
        let lld = sysroot.join(format!("lib/rustlib/{}/bin/rust-lld", version.host));
        lld.is_file().then_some(lld)
    });
    // The xtask's machine has rustup, whichever compilers were selected.
    let rustup = || {
        let home = std::env::var_os("RUSTUP_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".rustup")))?;
        let toolchains = crate::util::files::sorted_entries(&home.join("toolchains"));
        toolchains.into_iter().find_map(|toolchain| {
            let hosts = std::fs::read_dir(toolchain.join("lib/rustlib")).ok()?;
            hosts
                .filter_map(|entry| Some(entry.ok()?.path().join("bin/rust-lld")))
                .find(|lld| lld.is_file())
        })
    };
    let on_path = || crate::util::process::which("ld.lld");
    bundled.or_else(rustup).or_else(on_path).context(
        "no linker for the test programs: no rustup toolchain has rust-lld, and no ld.lld is on \
         PATH",
    )
}

/// The fixtures of `xtask/programs/kbuild/`: one enables the allowed features itself, one a
/// feature outside the list.
pub const KBUILD_FIXTURES: [&str; 2] = ["inside_allow_list", "outside_allow_list"];

/// A Kbuild fixture's source, in this xtask's own checkout, whichever sources are checked.
pub fn kbuild_fixture(name: &str) -> PathBuf {
    project_root().join(format!("xtask/programs/kbuild/{name}.rs"))
}

/// The matrix's probes and the shim's host builds in `modes` (sharing its outputs and cache),
/// which depend on no step, on every toolchain given, those below the minimum too.
pub fn plan_shim(
    layout: &Layout,
    toolchains: &[PlannedToolchain],
    examples: &[Example],
    modes: &[Mode],
) -> anyhow::Result<Vec<Step>> {
    let every: Vec<PlannedToolchain> = toolchains
        .iter()
        .map(|toolchain| PlannedToolchain {
            builds: true,
            ..toolchain.clone()
        })
        .collect();
    let mut steps = plan(layout, &every, examples)?;
    steps.retain(|step| {
        step.kind == Kind::Probe
            || (step.kind == Kind::Build
                && step.target == "kernel"
                && step.mode.is_some_and(|mode| modes.contains(&mode)))
    });
    // The indices in `deps` would no longer hold after the filter.
    debug_assert!(steps.iter().all(|step| step.deps.is_empty()));
    Ok(steps)
}

/// Plans every step for the toolchains: probes and shim builds first (everything else waits
/// for them), then the shim's tests, and every example's build, run and tests.
pub fn plan(
    layout: &Layout,
    toolchains: &[PlannedToolchain],
    examples: &[Example],
) -> anyhow::Result<Vec<Step>> {
    let shim_files = shim_inputs(&layout.root)?;
    // What links the host's binaries (rustc's default linker) decides them as the sources do.
    let linker: Vec<PathBuf> = crate::util::process::which("cc").into_iter().collect();
    let shim_test_files = [shim_files.clone(), linker.clone()].concat();
    let inputs = |example: &Example| Ok([example_inputs(&example.path)?, linker.clone()].concat());
    let example_files: Vec<Vec<PathBuf>> =
        examples.iter().map(inputs).collect::<anyhow::Result<_>>()?;
    let mut steps = Vec::new();
    // Each shim build: toolchain, mode, directory, cfgs, its step and its rlib.
    let mut shims = Vec::new();
    for toolchain in toolchains {
        let step = |kind, target, mode, processes| {
            Step::new(toolchain.index, kind, target, mode, processes)
        };
        let probe_dir = layout.output(&toolchain.directory_name, "probe");
        let probe = toolchain.rustc.probe(&layout.probe_source(), &probe_dir);
        steps.push(Step {
            directories: vec![probe_dir],
            inputs: vec![layout.probe_source()],
            ..step(Kind::Probe, "features", None, vec![probe])
        });
        if !toolchain.builds {
            continue;
        }
        for fixture in KBUILD_FIXTURES {
            let directory = layout.output(&toolchain.directory_name, "kbuild");
            let source = kbuild_fixture(fixture);
            let compile = toolchain.rustc.kbuild_fixture(&source, &directory);
            // No outputs: each is predicted to fail, its outcome is the compiler's codes.
            steps.push(Step {
                directories: vec![directory],
                inputs: vec![source],
                ..step(Kind::Kbuild, fixture, Some(Mode::Kernel), vec![compile])
            });
        }
        for mode in Mode::ALL {
            let directory = layout.output(&toolchain.directory_name, mode.word());
            let cfgs = mode_cfgs(toolchain.rustc.release, mode, None);
            let rlib = directory.join("libkernel.rlib");
            let rustc = &toolchain.rustc;
            let shim = rustc.shim(&layout.root, mode, &cfgs, Output::Directory(&directory));
            steps.push(Step {
                artifact: Some(rlib.clone()),
                directories: vec![directory.clone()],
                inputs: shim_files.clone(),
                outputs: vec![rlib.clone()],
                ..step(Kind::Build, "kernel", Some(mode), vec![shim])
            });
            shims.push((toolchain, mode, directory, cfgs, steps.len() - 1, rlib));
        }
    }
    for (toolchain, mode, directory, cfgs, library, rlib) in shims {
        let (rustc, test_binary) = (&toolchain.rustc, directory.join("kernel-test"));
        let processes = vec![
            rustc.shim(&layout.root, mode, &cfgs, Output::Tests(&test_binary)),
            test_run(rustc, &test_binary),
        ];
        steps.push(Step {
            directories: vec![directory.clone()],
            inputs: shim_test_files.clone(),
            outputs: vec![test_binary.clone()],
            ..Step::new(toolchain.index, Kind::Test, "kernel", Some(mode), processes)
        });
        for (example, files) in examples.iter().zip(&example_files) {
            let binary = directory.join(&example.name);
            let build = steps.len();
            let compile = |output| rustc.example(example, mode, &cfgs, &rlib, output);
            let step = |kind, processes| {
                Step::new(toolchain.index, kind, &example.name, Some(mode), processes)
            };
            let built = compile(Output::Directory(&directory));
            steps.push(Step {
                // The run step below needs this very binary.
                artifact: Some(binary.clone()),
                directories: vec![directory.clone()],
                inputs: files.clone(),
                deps: vec![library],
                outputs: vec![binary.clone()],
                ..step(Kind::Build, vec![built])
            });
            // No inputs: the build's cache key already covers the sources.
            steps.push(Step {
                deps: vec![build],
                ..step(Kind::Run, vec![binary_run(rustc, &binary)])
            });
            let test_binary = directory.join(format!("{}-test", example.name));
            let tests = compile(Output::Tests(&test_binary));
            steps.push(Step {
                directories: vec![directory.clone()],
                inputs: files.clone(),
                deps: vec![library],
                outputs: vec![test_binary.clone()],
                ..step(Kind::Test, vec![tests, test_run(rustc, &test_binary)])
            });
        }
    }
    Ok(steps)
}
