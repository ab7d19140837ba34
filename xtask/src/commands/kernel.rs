// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask kernel`: every pinned kernel tree (`[[tree]]` in the pin file) with every
//! compiler, the matrix's way of resolving them. Per cell, the prediction of
//! [`crate::kernel::rules`] (the tree's own rules and probes) beside the real build of
//! [`build`]: the tree's `make rustavailable`, then its Rust built for real. A disagreement is
//! a finding (exit 1). Trees, tools, build directories and results live under
//! `target/kernel/`; a result is cached by (tree, compiler identity, library sources, tools,
//! configuration), and only when it is the compiler's verdict.

#[cfg(test)]
pub(crate) mod tests;

use crate::commands::flags;
use crate::kernel::boot;
use crate::kernel::build::{self, Built, Real};
use crate::kernel::report::json::{BootJson, CellJson, TreeJson};
use crate::kernel::report::{self, Report};
use crate::kernel::results::{kernel_library, load_result, prediction, result_entry, store_result};
use crate::kernel::stamps;
use crate::kernel::{plan, tools, trees};
use crate::run::cache::{compiler_identity, StableHasher};
use crate::run::plan::Rustc;
use crate::toolchains::debian::Provisioner;
use crate::toolchains::discovery::{self, Availability, Source, Toolchain};
use crate::toolchains::pins::{Pins, TreePin, TreeSource};
use crate::toolchains::version::RustcVersion;
use crate::util::json;
use crate::util::output::{Format, Width};
use crate::util::run_lock::RunLock;
use crate::Verdict;
use anyhow::{anyhow, bail, Context};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use xshell::Shell;

/// How long one `make` may run unless `--timeout` says otherwise.
const MAKE_TIMEOUT: Duration = Duration::from_secs(1800);

impl flags::Kernel {
    pub fn run(&self, sh: &Shell, width: Width) -> anyhow::Result<Verdict> {
        let format = Format::parse(self.format.as_deref().unwrap_or("human"))?;
        let timeout = crate::run::driver::timeout(self.timeout, MAKE_TIMEOUT)?;
        let jobs = crate::run::driver::jobs("kernel", self.jobs)?;
        let pins_path = self.pins.clone().unwrap_or_else(Pins::default_path);
        let pins = Pins::load(&pins_path)?;
        let trees = select_trees(&pins, &self.tree)?;
        if self.dry_run {
            return dry_run(
                sh,
                &pins_path,
                &trees,
                &self.toolchain,
                (!self.no_cache, self.boot),
                width,
            );
        }
        let report = crate::util::interrupt::run_interruptible(|| {
            run(
                sh,
                &pins_path,
                &trees,
                &self.toolchain,
                (timeout, jobs),
                !self.no_cache,
                self.boot,
            )
        })?;
        Ok(format.print_report(
            report.verdict(self.strict),
            width,
            || json::to_value(&report.to_json()),
            || report.markdown(),
            |style| report.human_in(style),
        ))
    }
}

/// Says how the run goes on stderr: one line, [`crate::util::output::escape`]d, for it carries the trees' and the
/// builds' text (a tree's id, a build's first error).
fn progress(line: &str) {
    eprintln!("{}", progress_line(line));
}

fn progress_line(line: &str) -> String {
    format!("kernel: {}", crate::util::output::escape(line))
}

/// The trees `--tree` names (pin ids, or paths of local trees), or every pinned tree.
fn select_trees(pins: &Pins, wanted: &[String]) -> anyhow::Result<Vec<TreePin>> {
    if wanted.is_empty() {
        if pins.trees.is_empty() {
            bail!(
                "{} pins no kernel tree (`[[tree]]`); add one or name a path with --tree",
                pins.path.display()
            );
        }
        return Ok(pins.trees.clone());
    }
    let mut chosen = Vec::new();
    let mut local: Vec<(usize, PathBuf)> = Vec::new();
    for name in wanted {
        if let Some(pin) = pins.trees.iter().find(|pin| &pin.id == name) {
            chosen.push(pin.clone());
        } else if name.contains('/') || Path::new(name).is_dir() {
            let path = Path::new(name);
            if !path.is_dir() {
                let what = if path.exists() {
                    "is not a directory"
                } else {
                    "no such directory"
                };
                bail!(
                    "--tree {}: {what} (a local kernel tree is a directory)",
                    crate::util::output::escape(name)
                );
            }
            let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
            // The same tree named twice is one tree.
            if local.iter().any(|(_, known)| *known == canonical) {
                continue;
            }
            local.push((chosen.len(), canonical));
            chosen.push(TreePin {
                id: String::new(),
                source: TreeSource::Path(PathBuf::from(name)),
                note: None,
                line: 0,
            });
        } else {
            let ids: Vec<&str> = pins.trees.iter().map(|pin| pin.id.as_str()).collect();
            bail!(
                "--tree {}: no such tree pin (the pins are {}) and no such directory",
                crate::util::output::escape(name),
                ids.join(", ")
            );
        }
    }
    let paths: Vec<PathBuf> = local.iter().map(|(_, path)| path.clone()).collect();
    for ((at, _), id) in local.iter().zip(local_tree_ids(&paths)) {
        chosen[*at].id = id;
    }
    Ok(chosen)
}

/// `--dry-run`: the plan of the run, changing nothing (no provisioning, lock or directory).
fn dry_run(
    sh: &Shell,
    pins_path: &Path,
    trees: &[TreePin],
    specs: &[String],
    (use_cache, with_boot): (bool, bool),
    width: Width,
) -> anyhow::Result<Verdict> {
    crate::toolchains::debian::change_nothing();
    let found = discovery::discover(sh, Some(pins_path), specs, discovery::VERSION_TIMEOUT)?;
    let found: Vec<Found> = found
        .into_iter()
        .map(|availability| Found {
            id: availability.id().to_owned(),
            compiler: compiler_of(availability),
        })
        .collect();
    let compilers: Vec<plan::Compiler<'_>> = found
        .iter()
        .map(|found| {
            let compiler = found.compiler.as_ref().map_err(String::as_str);
            (found.id.as_str(), compiler)
        })
        .collect();
    let dir = crate::project_root().join("target/kernel");
    let text = plan::plan(&dir, trees, &compilers, use_cache, with_boot);
    print!("{}", crate::util::output::fit(&text, width));
    Ok(Verdict::Success)
}

/// A compiler found, or why there is none.
fn compiler_of(availability: Availability) -> Result<(Toolchain, RustcVersion), String> {
    match availability {
        Availability::Found { toolchain, version } => Ok((toolchain, version)),
        Availability::Broken { error, .. } => Err(format!("the compiler does not work: {error}")),
        Availability::Missing { install_hint, .. } => Err(format!("not installed: {install_hint}")),
    }
}

/// The ids of local trees, one per path (canonical, none twice): `path-NAME` after the
/// directory's name, and where two of them share a name (`a/linux`, `b/linux`), each of those
/// with the first 8 hex digits of its path's hash (`path-linux-3f2a9c1b`): deterministic,
/// readable, and never one id (nor one build directory) for two trees.
fn local_tree_ids(paths: &[PathBuf]) -> Vec<String> {
    let name = |path: &PathBuf| {
        let file_name = path.file_name().map(|name| name.to_string_lossy());
        format!(
            "path-{}",
            crate::run::plan::directory_name(&file_name.unwrap_or("local".into()))
        )
    };
    paths
        .iter()
        .map(|path| {
            let id = name(path);
            if paths.iter().filter(|other| name(other) == id).count() == 1 {
                return id;
            }
            let hash = StableHasher::new()
                .field(path.as_os_str().as_encoded_bytes())
                .finish();
            format!("{id}-{}", &hash.to_string()[..8])
        })
        .collect()
}

/// One compiler of the run: its id, and it with its version or why there is none.
struct Found {
    id: String,
    compiler: Result<(Toolchain, RustcVersion), String>,
}

impl Found {
    fn cell(
        &self,
        tree: &str,
        prediction: Result<crate::kernel::rules::Prediction, String>,
        (built, cached): (Built, bool),
        boot: Option<BootJson>,
    ) -> CellJson {
        let rustc = self
            .compiler
            .as_ref()
            .ok()
            .map(|(_, version)| version.release_string());
        report::cell((tree, &self.id), rustc, prediction, (built, cached), boot)
    }
}

fn run(
    sh: &Shell,
    pins_path: &Path,
    pins: &[TreePin],
    specs: &[String],
    (timeout, jobs): (Duration, usize),
    use_cache: bool,
    with_boot: bool,
) -> anyhow::Result<Report> {
    let started = Instant::now();
    let dir = crate::project_root().join("target/kernel");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    // Taken before anything under target/kernel/ is written, and only then: a run whose trees
    // cannot be read never waits for another's build.
    let mut lock: Option<RunLock> = None;

    let found = discovery::discover(sh, Some(pins_path), specs, discovery::VERSION_TIMEOUT)?;
    let compilers: Vec<Found> = found
        .into_iter()
        .map(|availability| Found {
            id: availability.id().to_owned(),
            compiler: compiler_of(availability),
        })
        .collect();

    progress("looking for the build tools");
    let tools = tools::find_tools(&dir, tools::BINDGEN);
    let mut old_tools = None;
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
    let suites: Vec<String> = tree_suites.chain(compiler_suites).flatten().collect();
    let mut log = |line: &str| progress(line);
    let mut provisioner = Provisioner::new(sh, dir.clone(), suites, &mut log);

    let results = dir.join("results");
    let mut tree_entries = Vec::new();
    let mut cells = Vec::new();
    for pin in pins {
        if crate::util::interrupt::interrupted().is_some() {
            break;
        }
        progress(&format!("tree {}: providing it", pin.id));
        if matches!(pin.source, TreeSource::Debian(_)) {
            take_lock(&mut lock, &dir)?;
        }
        let provided = trees::provide(&mut provisioner, pin);
        let read = provided
            .as_ref()
            .map_err(|error| format!("{error:#}"))
            .and_then(|tree| {
                stamps::facts(&results, tree, use_cache).map_err(|error| format!("{error:#}"))
            });
        let (tree, facts) = (provided.as_ref().ok(), read.as_ref().ok());
        tree_entries.push(TreeJson {
            id: pin.id.clone(),
            version: facts.map(|(facts, ..)| facts.version.clone()),
            package: tree.and_then(|tree| tree.package.clone()),
            source: tree.map(|tree| tree.identity.clone()),
            sha256: tree.and_then(|tree| tree.sha256.clone()),
            minimum_rustc: facts.map(|(facts, ..)| facts.minimum_rustc.clone()),
            allowed_features: facts
                .map(|(facts, ..)| facts.allowed_features.clone())
                .unwrap_or_default(),
            error: read.as_ref().err().cloned(),
        });
        if let Some(tree) = tree.filter(|tree| tree.cost.0 + tree.cost.1 > 0.0) {
            progress(&format!(
                "tree {}: {:.1} MB fetched in {:.1} s, unpacked in {:.1} s",
                pin.id,
                tree.cost.2 as f64 / 1e6,
                tree.cost.0,
                tree.cost.1
            ));
        }
        let (tree, (facts, tree_key, mut rules)) = match (provided, read) {
            (Ok(tree), Ok(read)) => (tree, read),
            (_, read) => {
                let error = read.err().unwrap_or_default();
                for found in &compilers {
                    let reason = format!("the tree cannot be used: {error}");
                    let built = Built::not_run(reason, Vec::new());
                    cells.push(found.cell(&pin.id, Err(error.clone()), (built, false), None));
                }
                continue;
            }
        };
        let build_dir = dir.join("build").join(&pin.id);
        let mut opened: Option<build::BuildDir> = None;
        let mut opened_boot: Option<build::BuildDir> = None;
        for found in &compilers {
            if crate::util::interrupt::interrupted().is_some() {
                break;
            }
            let label = format!("{} with {}", pin.id, found.id);
            let cell = |prediction, built, boot| found.cell(&pin.id, prediction, built, boot);
            let mut booted: Option<BootJson> = None;
            let not_run = |reason: String| (Built::not_run(reason, Vec::new()), false);
            let (toolchain, version) = match &found.compiler {
                Ok(compiler) => compiler,
                Err(problem) => {
                    cells.push(cell(
                        Err("no compiler".into()),
                        not_run(problem.clone()),
                        None,
                    ));
                    continue;
                }
            };
            let rustc = Rustc::of(toolchain, version.release);
            let identity = compiler_identity(&rustc.launch, version);
            let say = |line: &str| progress(&format!("{label}: {line}"));
            let prediction = prediction(
                &dir,
                (&pin.id, &tree, tree_key),
                &mut rules,
                (&toolchain.id, &rustc, identity),
                use_cache,
                &say,
            );
            // Every way this pair ends is one cell of the same tree, compiler and release.
            let built = 'pair: {
                let needs_old_bindgen =
                    tools::bindgen_for(&facts).version != tools::BINDGEN.version;
                let tools = if needs_old_bindgen {
                    old_tools.get_or_insert_with(|| {
                        tools::find_tools(&dir, tools::OLD_BINDGEN).map_err(|missing| {
                            anyhow!(
                                "{missing:#} (this tree passes bindgen `--size_t-is-usize`, \
                                 which bindgen 0.65 removed; its minimum is {})",
                                facts.minimum_bindgen
                            )
                        })
                    })
                } else {
                    &tools
                };
                let tools = match tools {
                    Ok(tools) => tools,
                    Err(missing) => {
                        break 'pair not_run(format!("the build tools are missing: {missing:#}"))
                    }
                };
                take_lock(&mut lock, &dir)?;
                let library = match kernel_library(&mut provisioner, &dir, toolchain, version) {
                    Ok(library) => library,
                    Err(error) => break 'pair not_run(format!("RUST_LIB_SRC: {error}")),
                };
                let entry = result_entry(&results, tree_key, identity, &library.1, &tools.identity);
                let wrapper = dir.join("wrappers").join(&toolchain.id).join("rustc");
                if let Err(error) = tools::write_wrapper(&wrapper, &rustc.launch) {
                    break 'pair not_run(format!("writing the wrapper: {error:#}"));
                }
                let cached = use_cache.then(|| load_result(&entry)).flatten();
                let (mut built, cached) = if let Some(built) = cached {
                    progress(&format!("{label}: {} (cached)", built.real.word()));
                    (built, true)
                } else {
                    let out = match opened.take().map_or_else(
                        || build::BuildDir::open(&build_dir, &tree.identity, &tools.identity),
                        Ok,
                    ) {
                        Ok(out) => out,
                        Err(error) => {
                            break 'pair not_run(format!("the build directory: {error:#}"))
                        }
                    };
                    let pair = build::Pair {
                        tree: &tree.root,
                        out: &out,
                        wrapper: &wrapper,
                        library: &library.0,
                        rustdoc: None,
                        tools,
                        jobs,
                        lock: lock.as_ref().map(RunLock::descriptor),
                        timeout,
                        progress: &say,
                    };
                    let pair_started = Instant::now();
                    let built = build::build(&pair);
                    say(&format!(
                        "{} in {:.0} s: {}",
                        built.real.word(),
                        pair_started.elapsed().as_secs_f64(),
                        build::why(
                            built.real.word(),
                            &built.reason,
                            built.first_error.as_deref()
                        )
                    ));
                    if !out.is_spoiled() {
                        opened = Some(out);
                    }
                    // Only a compiler's verdict, never a run cut short, is cached.
                    if built.cacheable && crate::util::interrupt::interrupted().is_none() {
                        if let Err(error) = store_result(&entry, &built) {
                            progress(&format!("{label}: the result was not cached: {error:#}"));
                        }
                    }
                    (built, false)
                };
                if with_boot && built.real == Real::Pass {
                    let cell = boot::Cell {
                        dir: &dir,
                        tree: (&pin.id, &tree.root, &tree.identity),
                        keys: (tree_key.0 .0, identity.0),
                        launch: &rustc.launch,
                        compiler: (&toolchain.id, version),
                        library: (&library.0, &library.1),
                        tools,
                        jobs,
                        lock: lock.as_ref().map(RunLock::descriptor),
                        timeout,
                        use_cache,
                        progress: &say,
                    };
                    let (json, steps) = cell.run(&mut opened_boot);
                    booted = Some(json);
                    built.steps.extend(steps);
                }
                (built, cached)
            };
            cells.push(cell(prediction, built, booted));
        }
    }
    if let Some(signal) = crate::util::interrupt::interrupted() {
        return Err(crate::util::interrupt::Interrupted { signal }.into());
    }
    Ok(Report {
        trees: tree_entries,
        cells,
        tools: tools
            .map(|tools| tools.identity)
            .map_err(|missing| format!("{missing:#}")),
        seconds: started.elapsed().as_secs_f64(),
    })
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
