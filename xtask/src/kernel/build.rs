// SPDX-License-Identifier: GPL-2.0
//! Building one kernel tree's Rust with one compiler, as Kbuild does it:
//! the tree's own `make rustavailable`, a defconfig with `CONFIG_RUST`, every Rust sample and the
//! Rust drivers the configuration can enable, then `prepare`, `rust/`, `samples/rust/` and the
//! drivers' objects, through a wrapper that starts that compiler. `CONFIG_RUST=y` is checked
//! after every configuration step (it drops out silently), and every Rust object must have been
//! rebuilt, by that wrapper, during this build.

use super::said::{failed_targets, first_error, machine_failure, summary_of_stars};
use super::symbols::{enabled_in, objects_of, rust_symbols};
use super::tools::{libclang_env, Tools};
use crate::util::json::{self, Deserialize, Serialize};
use crate::util::process::{self, Invocation, ProcessOutput};
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How the configuration is made; part of every result's cache key, so that changing it
/// rebuilds.
pub(crate) const CONFIG_RECIPE: &str = "x86_64_defconfig; -d MITIGATION_CALL_DEPTH_TRACKING; \
     -e RUST -e SAMPLES -e SAMPLES_RUST; every SAMPLE_RUST_*; every Rust driver and its objects; olddefconfig; v3";

/// The real result of one pair: everything built (by that compiler, checked), a failure on the
/// compiler's account, refused by the tree's own `make rustavailable`, or not built (a missing
/// tool, the machine, a configuration that lost `CONFIG_RUST`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Real {
    Pass,
    Fail,
    Refused,
    #[serde(rename = "not run")]
    NotRun,
}

impl Real {
    /// The word the report and its JSON use.
    pub(crate) fn word(&self) -> &'static str {
        match self {
            Real::Pass => "pass",
            Real::Fail => "fail",
            Real::Refused => "refused",
            Real::NotRun => "not run",
        }
    }
}

/// Why a pair ended as it did, in one line: the first error of a build that ran, and for a pair
/// not run, why not (a `make` killed after `--timeout`, and which one) before what it said last.
pub(crate) fn why(real: &str, reason: &str, first_error: Option<&str>) -> String {
    match first_error {
        Some(error) if real == Real::NotRun.word() => format!("{reason}: {error}"),
        Some(error) => error.to_owned(),
        None => reason.to_owned(),
    }
}

/// What building one pair found; its JSON, without `cacheable` and `steps`, is a cached result.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Built {
    pub real: Real,
    /// Why, in one sentence.
    pub reason: String,
    #[serde(deserialize_with = "json::nullable")]
    pub first_error: Option<String>,
    /// What `make rustavailable` warned, if anything (6.1 warns about newer compilers).
    #[serde(deserialize_with = "json::nullable")]
    pub warning: Option<String>,
    /// Whether it is the compilers' verdict on the tree, and so may be cached: never a killed
    /// build, a full disk, a missing tool or anything half-built.
    #[serde(skip)]
    pub cacheable: bool,
    /// The Rust Kconfig symbols the configuration kept on (samples and drivers).
    pub enabled: Vec<String>,
    /// How many Rust objects were checked to be rebuilt by this compiler.
    pub objects: usize,
    /// Each step's wall time in seconds, kept with a cached result for `--dry-run`'s
    /// estimates (a result read back for a run drops them: that run built nothing).
    #[serde(default)]
    pub steps: Vec<(String, f64)>,
    /// The tools the tree's `make` ran with ([`Tools::identity`]); `None` when it never ran.
    #[serde(deserialize_with = "json::nullable")]
    pub tools: Option<String>,
}

impl Built {
    /// A cell that was not built, and why.
    pub(crate) fn not_run(reason: String) -> Built {
        Built {
            real: Real::NotRun,
            reason,
            first_error: None,
            warning: None,
            cacheable: false,
            enabled: Vec::new(),
            objects: 0,
            steps: Vec::new(),
            tools: None,
        }
    }
}

/// One tree's build directory (`make O=`), reused between pairs. Its marker (the tree and the
/// tools) is there only between builds that ended normally: it is removed when a build starts
/// and written back when it ends, unless the build was killed or the machine failed. A
/// directory without it (a build killed, even with the xtask itself) is removed before use.
pub(crate) struct BuildDir {
    pub out: PathBuf,
    marker: String,
    spoiled: std::cell::Cell<bool>,
}

const BUILD_MARKER: &str = "kshim-build.txt";

impl BuildDir {
    /// Whether the build directory `dir` is there, sealed, for this tree and these tools.
    pub(crate) fn is_ready(dir: &Path, tree_identity: &str, tools: &str) -> bool {
        let marker = std::fs::read_to_string(dir.join(BUILD_MARKER));
        marker.is_ok_and(|marker| marker == format!("{tree_identity}\n{tools}\n"))
    }

    /// The build directory `dir`, reused when its marker names the same tree and tools.
    pub(crate) fn open(dir: &Path, tree_identity: &str, tools: &str) -> anyhow::Result<BuildDir> {
        if dir.exists() && !BuildDir::is_ready(dir, tree_identity, tools) {
            std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
        }
        std::fs::create_dir_all(dir)?;
        Ok(BuildDir {
            out: dir.to_owned(),
            marker: format!("{tree_identity}\n{tools}\n"),
            spoiled: Default::default(),
        })
    }

    /// A build starts: until [`BuildDir::seal`], the directory counts as half-built.
    pub(crate) fn begin(&self) {
        self.spoiled.set(false);
        let _ = std::fs::remove_file(self.out.join(BUILD_MARKER));
    }

    /// Forgets the directory: the next [`BuildDir::open`] starts it again.
    pub(crate) fn spoil(&self) {
        self.spoiled.set(true);
        let _ = std::fs::remove_file(self.out.join(BUILD_MARKER));
    }

    /// The build ended: unless it was spoiled, the directory may be reused.
    pub(crate) fn seal(&self) {
        if !self.spoiled.get() {
            let _ = std::fs::write(self.out.join(BUILD_MARKER), &self.marker);
        }
    }

    pub(crate) fn is_spoiled(&self) -> bool {
        self.spoiled.get()
    }
}

/// Everything one pair's `make` runs need.
pub(crate) struct Pair<'a> {
    pub tree: &'a Path,
    pub out: &'a BuildDir,
    /// The wrapper ([`super::tools::write_wrapper`]) Kbuild runs as `RUSTC` and `HOSTRUSTC`.
    pub wrapper: &'a Path,
    /// The `library/` directory of the compiler's own sources (`RUST_LIB_SRC`).
    pub library: &'a Path,
    /// The wrapper Kbuild runs as `RUSTDOC` (the boot's doctests need it), if any.
    pub rustdoc: Option<&'a Path>,
    pub tools: &'a Tools,
    pub jobs: usize,
    /// The descriptor of `target/kernel/`'s run lock, which every `make` and what it starts
    /// inherit: killed with the xtask, what they leave running holds the lock, and the next run
    /// waits for it (and ends it) before it touches the build directory.
    pub lock: Option<std::os::fd::RawFd>,
    /// Any one `make` is killed after this long.
    pub timeout: Duration,
    pub progress: &'a dyn Fn(&str),
}

impl Pair<'_> {
    pub(crate) fn make(&self, targets: &[&str]) -> std::io::Result<ProcessOutput> {
        let mut args = vec![
            "-C".to_owned(),
            self.tree.display().to_string(),
            format!("O={}", self.out.out.display()),
            format!("LLVM={}", self.tools.llvm_suffix),
            format!("RUSTC={}", self.wrapper.display()),
            format!("HOSTRUSTC={}", self.wrapper.display()),
            format!("BINDGEN={}", self.tools.bindgen.display()),
            format!("RUST_LIB_SRC={}", self.library.display()),
            format!("-j{}", self.jobs),
        ];
        let rustdoc = self
            .rustdoc
            .map(|rustdoc| format!("RUSTDOC={}", rustdoc.display()));
        args.extend(rustdoc);
        args.extend(targets.iter().map(|target| (*target).to_owned()));
        // By its absolute path on `PATH`, as [`Invocation`] wants.
        let make = process::which("make").unwrap_or_else(|| PathBuf::from("make"));
        let invocation =
            Invocation::new(make, args).with_env(vec![libclang_env(&self.tools.libclang)]);
        process::run_holding(&invocation, self.timeout, self.lock)
    }

    /// Runs one `make` as the step `name`; `Err` ends the pair: `make` could not start, or the
    /// machine failed it, which spoils the build directory.
    fn step(
        &self,
        name: &str,
        targets: &[&str],
        steps: &mut Vec<(String, f64)>,
    ) -> Result<ProcessOutput, Box<Built>> {
        let what = format!("make {}", targets.join(" "));
        (self.progress)(&what);
        let output = self
            .make(targets)
            .map_err(|error| stopped(format!("make could not start: {error}")))?;
        steps.push((name.to_owned(), output.seconds));
        if let Some(why) = machine_failure(&output, self.timeout) {
            self.out.spoil();
            let reason = format!("{what}: {why} (not cached; the build directory is discarded)");
            return Err(failed(reason, &output));
        }
        Ok(output)
    }
}

/// Builds the pair's Rust, once the tree's own `make rustavailable` has accepted the compiler;
/// its refusal is a real result too.
pub(crate) fn build(pair: &Pair<'_>) -> Built {
    (pair.progress)("make rustavailable");
    let output = match pair.make(&["rustavailable"]) {
        Ok(output) => output,
        Err(error) => return Built::not_run(format!("make could not start: {error}")),
    };
    let said = format!("{}\n{}", output.stdout, output.stderr);
    let mut steps = vec![("rustavailable".to_owned(), output.seconds)];
    if output.status.is_err() {
        let ending = output.describe_ending(pair.timeout);
        let reason = format!("make rustavailable: {ending}");
        return Built {
            steps,
            ..Built::not_run(reason)
        };
    }
    let built = if output.success() {
        // A check that accepts the compiler and still prints its `***` banner warns: 6.1's says
        // "Rust compiler '…' is too new. This may or may not work." (no word "warning").
        let warning = said
            .lines()
            .any(|line| line.trim_start().starts_with("***"))
            .then(|| summary_of_stars(&said))
            .filter(|text| !text.is_empty());
        pair.out.begin();
        let built = build_in(pair, &mut steps).unwrap_or_else(|stopped| *stopped);
        pair.out.seal();
        Built { warning, ..built }
    } else {
        Built {
            real: Real::Refused,
            cacheable: true,
            first_error: Some(summary_of_stars(&said)),
            ..Built::not_run("the tree's own `make rustavailable` refused it".into())
        }
    };
    Built {
        tools: Some(pair.tools.identity.clone()),
        steps,
        ..built
    }
}

/// A pair that stopped before the end, for `reason`.
fn stopped(reason: String) -> Box<Built> {
    Box::new(Built::not_run(reason))
}

/// A pair stopped by `output`'s failure, for `reason`.
fn failed(reason: String, output: &ProcessOutput) -> Box<Built> {
    Box::new(Built {
        first_error: Some(first_error_of(output)),
        ..Built::not_run(reason)
    })
}

/// Configures the build directory and builds in it, each step's time pushed onto `steps`; `Err`
/// is a pair that stopped before the end.
fn build_in(pair: &Pair<'_>, steps: &mut Vec<(String, f64)>) -> Result<Built, Box<Built>> {
    let started = SystemTime::now();
    let config_path = pair.out.out.join(".config");
    let configure = |name: &str, target: &str, steps: &mut Vec<(String, f64)>| {
        let output = pair.step(name, &[target], steps)?;
        match output.success() {
            true => Ok(()),
            false => Err(failed(format!("make {target} failed"), &output)),
        }
    };
    if !config_path.is_file() {
        configure("defconfig", "x86_64_defconfig", steps)?;
    }
    let symbols = rust_symbols(pair.tree);
    let mut args = vec!["--file".to_owned(), config_path.display().to_string()];
    args.extend(
        "-d MITIGATION_CALL_DEPTH_TRACKING -e RUST -e SAMPLES -e SAMPLES_RUST"
            .split(' ')
            .map(String::from),
    );
    for (symbol, tristate) in &symbols {
        args.push(if *tristate { "-m" } else { "-e" }.to_owned());
        args.push(symbol.clone());
    }
    let config = Invocation::new(pair.tree.join("scripts/config"), args);
    let output = process::run_holding(&config, pair.timeout, pair.lock)
        .map_err(|error| stopped(format!("scripts/config could not start: {error}")))?;
    if !output.success() {
        return Err(failed("scripts/config failed".into(), &output));
    }
    steps.push(("scripts/config".into(), output.seconds));
    configure("olddefconfig", "olddefconfig", steps)?;
    let has_rust = || {
        let config = std::fs::read_to_string(&config_path).unwrap_or_default();
        config.lines().any(|line| line == "CONFIG_RUST=y")
    };
    if !has_rust() {
        return Err(stopped(
            "olddefconfig dropped CONFIG_RUST=y (Kconfig's `depends on` for RUST is not met \
             with this compiler, its library sources or the tools: see the tree's \
             init/Kconfig); nothing was built"
                .into(),
        ));
    }
    let enabled_now = enabled_in(&std::fs::read_to_string(&config_path).unwrap_or_default());
    let enabled: Vec<String> = symbols
        .iter()
        .map(|(symbol, _)| symbol.clone())
        .filter(|symbol| enabled_now.contains(symbol))
        .collect();
    let objects = |samples: bool| -> Vec<String> {
        enabled
            .iter()
            .filter(|symbol| symbol.starts_with("SAMPLE_RUST") == samples)
            .flat_map(|symbol| objects_of(pair.tree, symbol))
            .collect()
    };
    let driver_objects = objects(false);
    let mut expected = vec!["rust/core.o".to_owned(), "rust/kernel.o".to_owned()];
    expected.extend(objects(true));
    expected.extend(driver_objects.iter().cloned());
    // Objects this same wrapper built before are up to date for Kbuild, which would then build
    // nothing and prove nothing: they and their command records go, so that the compiler
    // builds them again now.
    let wrapper = pair.wrapper.display().to_string();
    let by_it = |object: &String| {
        std::fs::read_to_string(pair.out.out.join(cmd_file(object)))
            .is_ok_and(|text| text.contains(&wrapper))
    };
    for object in expected.iter().filter(|object| by_it(object)) {
        let _ = std::fs::remove_file(pair.out.out.join(object));
        let _ = std::fs::remove_file(pair.out.out.join(cmd_file(object)));
    }
    let mut targets: Vec<&str> = vec!["rust/", "samples/rust/"];
    targets.extend(driver_objects.iter().map(String::as_str));
    for (name, targets, what) in [
        ("prepare", &["prepare"][..], "make prepare"),
        ("rust", &targets, "make rust/ samples/rust/ and the drivers"),
    ] {
        let output = pair.step(name, targets, steps)?;
        if !output.success() {
            return Err(Box::new(compiler_failure(what, &output, enabled)));
        }
    }
    if !has_rust() {
        pair.out.spoil();
        let reason = "CONFIG_RUST=y was gone from .config after the build (not cached)";
        return Err(stopped(reason.into()));
    }
    let stale: Vec<String> = expected
        .iter()
        .filter_map(|object| {
            let fresh = std::fs::metadata(pair.out.out.join(object))
                .and_then(|meta| meta.modified())
                .is_ok_and(|modified| modified >= started);
            let why = match (fresh, by_it(object)) {
                (false, _) => "not rebuilt in this build",
                (true, false) => "its .cmd names another compiler",
                (true, true) => return None,
            };
            Some(format!("{object} ({why})"))
        })
        .collect();
    if !stale.is_empty() {
        pair.out.spoil();
        let reason = format!(
            "the build said it succeeded, but {} of {} Rust objects were not built by this \
             compiler now: {} (not cached)",
            stale.len(),
            expected.len(),
            stale.join(", ")
        );
        return Err(Box::new(Built {
            enabled,
            ..Built::not_run(reason)
        }));
    }
    let reason = format!(
        "built prepare, rust/, samples/rust/ and {} Rust driver objects; {} Rust objects \
         checked to be this compiler's",
        driver_objects.len(),
        expected.len()
    );
    Ok(Built {
        real: Real::Pass,
        cacheable: true,
        enabled,
        objects: expected.len(),
        ..Built::not_run(reason)
    })
}

/// The `.cmd` file in which Kbuild records how it built `object`: `dir/.name.o.cmd`.
fn cmd_file(object: &str) -> PathBuf {
    let (dir, name) = object.rsplit_once('/').unwrap_or(("", object));
    Path::new(dir).join(format!(".{name}.cmd"))
}

/// A build that ended with a failure the tools reported: the compiler's verdict when rustc said
/// an error, otherwise a failure that is not cached.
pub(crate) fn compiler_failure(what: &str, output: &ProcessOutput, enabled: Vec<String>) -> Built {
    let said = format!("{}\n{}", output.stdout, output.stderr);
    // bindgen's and libclang's errors look like rustc's (`error: ...`): the target make failed
    // to make tells them apart.
    let by_bindgen = failed_targets(&said).any(|target| target.ends_with("_generated.rs"));
    let by_rustc = !by_bindgen
        && (said.contains("error[E") || said.lines().any(|line| line.starts_with("error: ")));
    let reason = if by_bindgen {
        format!("{what} failed: bindgen could not generate the bindings (not cached: no compiler error)")
    } else if by_rustc {
        format!("{what} failed: the compiler reported an error")
    } else {
        format!("{what} failed (not cached: no compiler error was seen)")
    };
    Built {
        real: Real::Fail,
        first_error: Some(first_error_of(output)),
        cacheable: by_rustc,
        enabled,
        ..Built::not_run(reason)
    }
}

/// The first error `output` printed, or its last line.
pub(crate) fn first_error_of(output: &ProcessOutput) -> String {
    let said = format!("{}\n{}", output.stdout, output.stderr);
    first_error(&said).unwrap_or_else(|| process::last_line(&said))
}
