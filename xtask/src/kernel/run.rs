// SPDX-License-Identifier: GPL-2.0
//! The run of `cargo xtask kernel`: per tree, its preparation (provided, its facts read); per
//! compiler, its cell: the prediction, the build (or its cached result) and the boot.

use crate::kernel::boot;
use crate::kernel::build::{self, Built, Real};
use crate::kernel::report;
use crate::kernel::report::json::{BootJson, CellJson, KernelJson, TreeJson};
use crate::kernel::rules::Prediction;
use crate::kernel::stamps::{self, Facts, TreeKey};
use crate::kernel::tools::{self, Toolbox, Tools};
use crate::kernel::{results, trees};
use crate::run::cache::{compiler_identity, Key};
use crate::run::plan::Rustc;
use crate::toolchains::debian::{Provisioner, Provisioning};
use crate::toolchains::discovery::{self, Availability, Source, Toolchain};
use crate::toolchains::pins::{TreePin, TreeSource};
use crate::toolchains::version::RustcVersion;
use crate::util::interrupt::{interrupted, Interrupted};
use crate::util::output::escape;
use crate::util::run_lock::RunLock;
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use xshell::Shell;

/// How a run builds: `--timeout`, `-j`, whether cached results are read, and `--boot`.
#[derive(Clone, Copy)]
pub(crate) struct Settings {
    pub timeout: Duration,
    pub jobs: usize,
    pub use_cache: bool,
    pub boot: bool,
}

/// Runs every pair of the trees `pins` and the compilers `specs`.
pub(crate) fn run(
    sh: &Shell,
    pins_path: &Path,
    pins: &[TreePin],
    specs: &[String],
    settings: Settings,
) -> anyhow::Result<KernelJson> {
    let started = Instant::now();
    let dir = crate::project_root().join("target/kernel");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let compilers = find_compilers(sh, pins_path, specs, Provisioning::Allowed)?;
    progress("looking for the build tools");
    let mut log = |line: &str| progress(line);
    let mut run = Run {
        tools: Toolbox::find(&dir),
        provisioner: Provisioner::new(sh, dir.clone(), suites(pins, &compilers), &mut log),
        lock: None,
        settings,
        dir,
    };
    let (mut trees, mut cells) = (Vec::new(), Vec::new());
    for pin in pins {
        if interrupted().is_some() {
            break;
        }
        let (entry, prepared) = run.prepare(pin)?;
        trees.push(entry);
        let mut tree = match prepared {
            Ok(tree) => tree,
            Err(error) => {
                let reason = format!("the tree cannot be used: {error}");
                cells.extend(compilers.iter().map(|found| {
                    let built = Built::not_run(reason.clone());
                    found.cell(&pin.id, Err(error.clone()), (built, false), None)
                }));
                continue;
            }
        };
        for found in &compilers {
            if interrupted().is_some() {
                break;
            }
            cells.push(run.pair(&mut tree, found)?);
        }
    }
    if let Some(signal) = interrupted() {
        return Err(Interrupted { signal }.into());
    }
    let tools = run.tools.today.map(|tools| tools.identity);
    Ok(KernelJson {
        trees,
        cells,
        tools: tools.as_ref().ok().cloned(),
        tools_error: tools.err().map(|missing| format!("{missing:#}")),
        seconds: started.elapsed().as_secs_f64(),
    }
    .with_tools_used())
}

/// The compilers of the run, as the matrix resolves `specs` (every pin when empty).
pub(crate) fn find_compilers(
    sh: &Shell,
    pins_path: &Path,
    specs: &[String],
    provisioning: Provisioning,
) -> anyhow::Result<Vec<Found>> {
    let timeout = discovery::VERSION_TIMEOUT;
    let found = discovery::discover(sh, Some(pins_path), specs, timeout, provisioning)?;
    Ok(found
        .into_iter()
        .map(|availability| Found {
            id: availability.id().to_owned(),
            compiler: match availability {
                Availability::Found { toolchain, version } => Ok((toolchain, version)),
                Availability::Broken { error, .. } => {
                    Err(format!("the compiler does not work: {error}"))
                }
                Availability::Missing { install_hint, .. } => {
                    Err(format!("not installed: {install_hint}"))
                }
            },
        })
        .collect())
}

/// The Debian suites of the trees and the compilers, which the private apt lists.
fn suites(pins: &[TreePin], compilers: &[Found]) -> Vec<String> {
    let tree_suites = pins.iter().filter_map(|pin| match &pin.source {
        TreeSource::Debian(source) => Some(source.suites()),
        TreeSource::Path(_) => None,
    });
    let compiler_suites = compilers.iter().filter_map(|found| {
        let (toolchain, _) = found.compiler.as_ref().ok()?;
        match &toolchain.source {
            Source::Debian { package } => Some(package.suites()),
            _ => None,
        }
    });
    tree_suites.chain(compiler_suites).flatten().collect()
}

/// One compiler of the run: its id, and it with its version or why there is none.
pub(crate) struct Found {
    pub id: String,
    pub compiler: Result<(Toolchain, RustcVersion), String>,
}

impl Found {
    fn cell(
        &self,
        tree: &str,
        prediction: Result<Prediction, String>,
        (built, cached): (Built, bool),
        boot: Option<BootJson>,
    ) -> CellJson {
        let version = self.compiler.as_ref().ok().map(|(_, version)| version);
        let rustc = version.map(RustcVersion::release_string);
        report::cell((tree, &self.id), rustc, prediction, (built, cached), boot)
    }
}

/// What every tree and pair of a run shares.
struct Run<'a> {
    /// `target/kernel/`.
    dir: PathBuf,
    tools: Toolbox,
    provisioner: Provisioner<'a>,
    /// Taken before anything under target/kernel/ is written, and only then: a run whose trees
    /// cannot be read never waits for another's build.
    lock: Option<RunLock>,
    settings: Settings,
}

/// A tree provided and read, with what its pairs share: its rules once read, and its build
/// directories once opened.
struct TreeRun<'p> {
    pin: &'p TreePin,
    tree: trees::Tree,
    facts: Facts,
    key: TreeKey,
    rules: Option<crate::kernel::rules::Tree>,
    opened: Option<build::BuildDir>,
    opened_boot: Option<build::BuildDir>,
}

/// One pair ready to build: its compiler, and what its build needs besides the tree.
struct Pair<'c> {
    /// `TREE with COMPILER`, which starts the pair's progress lines.
    label: String,
    toolchain: &'c Toolchain,
    version: &'c RustcVersion,
    rustc: Rustc,
    identity: Key,
    tools: Tools,
    /// `RUST_LIB_SRC`, and what it is exactly.
    library: (PathBuf, String),
    /// The file that caches the pair's real result.
    entry: PathBuf,
    /// The wrapper Kbuild runs as `RUSTC`.
    wrapper: PathBuf,
}

impl Pair<'_> {
    fn say(&self, line: &str) {
        progress(&format!("{}: {line}", self.label));
    }
}

impl Run<'_> {
    /// Provides the tree `pin` names and reads its facts: its entry in the report, and the
    /// tree ready for its pairs or why it cannot be used.
    fn prepare<'p>(
        &mut self,
        pin: &'p TreePin,
    ) -> anyhow::Result<(TreeJson, Result<TreeRun<'p>, String>)> {
        progress(&format!("tree {}: providing it", pin.id));
        if matches!(pin.source, TreeSource::Debian(_)) {
            take_lock(&mut self.lock, &self.dir)?;
        }
        let (use_cache, results) = (self.settings.use_cache, self.dir.join("results"));
        let provided = trees::provide(&mut self.provisioner, pin).map_err(|e| format!("{e:#}"));
        let prepared = provided.clone().and_then(|tree| {
            let (facts, key, rules) = stamps::facts(&results, &tree, use_cache, true)
                .map_err(|error| format!("{error:#}"))?;
            Ok(TreeRun {
                pin,
                tree,
                facts,
                key,
                rules,
                opened: None,
                opened_boot: None,
            })
        });
        let tree = provided.as_ref().ok();
        let facts = prepared.as_ref().ok().map(|prepared| &prepared.facts);
        let entry = TreeJson {
            id: pin.id.clone(),
            version: facts.map(|facts| facts.version.clone()),
            package: tree.and_then(|tree| tree.package.clone()),
            source: tree.map(|tree| tree.identity.clone()),
            sha256: tree.and_then(|tree| tree.sha256.clone()),
            minimum_rustc: facts.map(|facts| facts.minimum_rustc.clone()),
            allowed_features: facts
                .map(|facts| facts.allowed_features.clone())
                .unwrap_or_default(),
            error: prepared.as_ref().err().cloned(),
        };
        if let Some(tree) = tree.filter(|tree| tree.cost.0 + tree.cost.1 > 0.0) {
            progress(&format!(
                "tree {}: {:.1} MB fetched in {:.1} s, unpacked in {:.1} s",
                pin.id,
                tree.cost.2 as f64 / 1e6,
                tree.cost.0,
                tree.cost.1
            ));
        }
        Ok((entry, prepared))
    }

    /// The cell of `found` on `tree`: its prediction beside its real build, and boot.
    fn pair(&mut self, tree: &mut TreeRun<'_>, found: &Found) -> anyhow::Result<CellJson> {
        let (toolchain, version) = match &found.compiler {
            Ok((toolchain, version)) => (toolchain, version),
            Err(problem) => {
                let built = Built::not_run(problem.clone());
                let no_compiler = Err("no compiler".into());
                return Ok(found.cell(&tree.pin.id, no_compiler, (built, false), None));
            }
        };
        let label = format!("{} with {}", tree.pin.id, found.id);
        let rustc = Rustc::of(toolchain, version.release);
        let identity = compiler_identity(&rustc.launch, version);
        let say = |line: &str| progress(&format!("{label}: {line}"));
        let prediction = results::prediction(
            &self.dir,
            (&tree.pin.id, &tree.tree, tree.key),
            &mut tree.rules,
            (&toolchain.id, &rustc, identity),
            self.settings.use_cache,
            &say,
        );
        let pair = self
            .tools
            .for_tree(&tree.facts)
            .cloned()
            .map_err(|missing| format!("the build tools are missing: {missing:#}"));
        if pair.is_ok() {
            take_lock(&mut self.lock, &self.dir)?;
        }
        let pair = pair.and_then(|tools| {
            let library =
                results::kernel_library(&mut self.provisioner, &self.dir, toolchain, version)
                    .map_err(|error| format!("RUST_LIB_SRC: {error}"))?;
            let results = self.dir.join("results");
            let entry =
                results::result_entry(&results, tree.key, identity, &library.1, &tools.identity);
            let wrapper = self.dir.join("wrappers").join(&toolchain.id).join("rustc");
            tools::write_wrapper(&wrapper, &rustc.launch)
                .map_err(|error| format!("writing the wrapper: {error:#}"))?;
            Ok(Pair {
                label,
                toolchain,
                version,
                rustc,
                identity,
                tools,
                library,
                entry,
                wrapper,
            })
        });
        let (mut built, cached) = pair
            .as_ref()
            .map_err(String::clone)
            .and_then(|pair| self.build(tree, pair))
            .unwrap_or_else(|reason| (Built::not_run(reason), false));
        let booted = match &pair {
            Ok(pair) if self.settings.boot && built.real == Real::Pass => {
                Some(self.boot(tree, pair, &mut built))
            }
            _ => None,
        };
        Ok(found.cell(&tree.pin.id, prediction, (built, cached), booted))
    }

    /// The pair's real result, and whether it came from the cache: the cached one, else the
    /// build's (cached if it is the compiler's verdict); or why nothing was built.
    fn build(&self, tree: &mut TreeRun<'_>, pair: &Pair<'_>) -> Result<(Built, bool), String> {
        if let Some(built) = self
            .settings
            .use_cache
            .then(|| results::load_result(&pair.entry))
            .flatten()
        {
            pair.say(&format!("{} (cached)", built.real.word()));
            return Ok((built, true));
        }
        let out = match tree.opened.take() {
            Some(out) => out,
            None => {
                let build_dir = self.dir.join("build").join(&tree.pin.id);
                build::BuildDir::open(&build_dir, &tree.tree.identity, &pair.tools.identity)
                    .map_err(|error| format!("the build directory: {error:#}"))?
            }
        };
        let started = Instant::now();
        let built = build::build(&build::Pair {
            tree: &tree.tree.root,
            out: &out,
            wrapper: &pair.wrapper,
            library: &pair.library.0,
            rustdoc: None,
            tools: &pair.tools,
            jobs: self.settings.jobs,
            lock: self.lock.as_ref().map(RunLock::descriptor),
            timeout: self.settings.timeout,
            progress: &|line| pair.say(line),
        });
        let (word, seconds) = (built.real.word(), started.elapsed().as_secs_f64());
        let why = build::why(word, &built.reason, built.first_error.as_deref());
        pair.say(&format!("{word} in {seconds:.0} s: {why}"));
        if !out.is_spoiled() {
            tree.opened = Some(out);
        }
        // Only a compiler's verdict, never a run cut short, is cached.
        if built.cacheable && interrupted().is_none() {
            if let Err(error) = stamps::write_entry(&pair.entry, &built) {
                pair.say(&format!("the result was not cached: {error:#}"));
            }
        }
        Ok((built, false))
    }

    /// Boots a pair that built (`--boot`), its steps added to `built`'s.
    fn boot(&self, tree: &mut TreeRun<'_>, pair: &Pair<'_>, built: &mut Built) -> BootJson {
        let cell = boot::Cell {
            dir: &self.dir,
            tree: (&tree.pin.id, &tree.tree.root, &tree.tree.identity),
            keys: (tree.key.0, pair.identity.0),
            launch: &pair.rustc.launch,
            compiler: (&pair.toolchain.id, pair.version),
            library: (&pair.library.0, &pair.library.1),
            tools: &pair.tools,
            jobs: self.settings.jobs,
            lock: self.lock.as_ref().map(RunLock::descriptor),
            timeout: self.settings.timeout,
            use_cache: self.settings.use_cache,
            progress: &|line| pair.say(line),
        };
        let (json, steps) = cell.run(&mut tree.opened_boot);
        built.steps.extend(steps);
        json
    }
}

/// Takes the lock of `target/kernel/` unless `lock` holds it already, waiting for another run
/// that holds it; then removes what a killed run left half-written among the results.
fn take_lock(lock: &mut Option<RunLock>, dir: &Path) -> anyhow::Result<()> {
    if lock.is_none() {
        *lock = Some(RunLock::acquire(
            &dir.join("kernel.lock"),
            &mut |message| progress(message),
        )?);
        crate::run::cache::remove_stale_temporaries(&dir.join("results"));
    }
    Ok(())
}

/// Says how the run goes on stderr, [`escape`]d: it carries the trees' and the builds' text.
fn progress(line: &str) {
    eprintln!("{}", progress_line(line));
}

/// A [`progress`] line as it is printed.
pub(crate) fn progress_line(line: &str) -> String {
    format!("kernel: {}", escape(line))
}
