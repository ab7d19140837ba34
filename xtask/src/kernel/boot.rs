// SPDX-License-Identifier: GPL-2.0
//! The boot stage of `cargo xtask kernel --boot`: for a cell whose build passed, a small
//! bootable kernel ([`config`]: `tinyconfig` and a fragment read from the tree's own Kconfig)
//! built with that compiler in one boot build directory per tree, booted under QEMU
//! ([`qemu`]), and judged from its serial console alone ([`console`], [`samples`]): every
//! built-in sample printed its init lines, every KUnit case passed or was skipped, every KTAP
//! plan was met, and the kernel rebooted with no panic, oops or `BUG:`. QEMU's exit status says
//! nothing (it is 0 whatever the tests say).

pub(crate) mod config;
pub(crate) mod console;
pub(crate) mod qemu;
pub(crate) mod samples;
#[cfg(test)]
pub(crate) mod tests;

use super::build::{self, BuildDir, Pair};
use super::said::machine_failure;
use super::stamps::{read_entry, write_entry};
use super::tools::{write_wrapper, Tools};
use crate::kernel::report::json::{
    BootJson, FailureJson, KunitJson, SampleJson, BOOT_FAIL, BOOT_NOT_RUN, BOOT_PASS,
};
use crate::run::cache::StableHasher;
use crate::toolchains::loader::Launch;
use crate::toolchains::version::RustcVersion;
use crate::util::process::{self, Invocation, Killed, ProcessOutput};
use config::BootConfig;
use console::Outcome;
use qemu::{Accel, Host, Qemu};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long one boot may run: under TCG on two loaded cores a boot takes about a second.
const BOOT_TIMEOUT: Duration = Duration::from_secs(300);

/// How the boot image is made and started, beyond what the tree's Kconfig decides; part of
/// every boot result's cache key and of the boot build directory's marker.
pub(crate) fn recipe() -> String {
    format!(
        "tinyconfig; +{}; -{}; +{} when needed; every Rust sample, Rust KUnit suite and the \
         doctests whose conditions hold; olddefconfig; vmlinux (PVH); qemu {}; v1",
        config::BASE.join(","),
        config::OFF.join(","),
        config::SOFTWARE.join(","),
        qemu::arguments(Accel::Tcg, Path::new("IMAGE"), Path::new("CONSOLE")).join(" ")
    )
}

/// A boot's result, whether it may be cached (only the kernel's or the compiler's verdict),
/// and each step's wall time.
#[derive(Clone, Debug)]
pub(crate) struct Booted {
    pub json: BootJson,
    pub cacheable: bool,
    pub steps: Vec<(String, f64)>,
}

impl Booted {
    fn not_run(reason: String) -> Booted {
        let json = BootJson {
            result: BOOT_NOT_RUN.into(),
            reason,
            ..BootJson::default()
        };
        Booted {
            json,
            cacheable: false,
            steps: Vec::new(),
        }
    }

    fn failed(reason: String, cacheable: bool) -> Booted {
        let mut booted = Booted::not_run(reason);
        booted.json.result = BOOT_FAIL.into();
        booted.cacheable = cacheable;
        booted
    }
}

/// One cell's boot stage as `cargo xtask kernel` runs it: its wrappers, the tree's boot build
/// directory (`target/kernel/boot/ID/`), the cache (`target/kernel/results/boot-KEY.json`),
/// QEMU and the accelerator.
pub(crate) struct Cell<'a> {
    /// `target/kernel/`.
    pub dir: &'a Path,
    /// The tree's id, root and identity.
    pub tree: (&'a str, &'a Path, &'a str),
    /// The tree's key (the stamps of what its build reads) and the compiler's identity, as
    /// the build's result is keyed.
    pub keys: (u128, u128),
    pub launch: &'a Launch,
    /// The compiler's id and version.
    pub compiler: (&'a str, &'a RustcVersion),
    /// `RUST_LIB_SRC` and what it is exactly.
    pub library: (&'a Path, &'a str),
    pub tools: &'a Tools,
    pub jobs: usize,
    /// The run lock's descriptor, which every `make` inherits ([`Pair::lock`]).
    pub lock: Option<std::os::fd::RawFd>,
    /// Any one `make` is killed after this long.
    pub timeout: Duration,
    pub use_cache: bool,
    pub progress: &'a dyn Fn(&str),
}

impl Cell<'_> {
    /// Boots the cell (or reads its cached verdict); `opened` is the tree's boot build
    /// directory, kept open from one compiler to the next.
    pub(crate) fn run(&self, opened: &mut Option<BuildDir>) -> (BootJson, Vec<(String, f64)>) {
        let (id, root, identity) = self.tree;
        let (toolchain, version) = self.compiler;
        let qemu = qemu::find();
        let (accel, why) = Host::this().accel();
        (self.progress)(&format!("boot: {}: {why}", accel.word()));
        let entry = result_entry(
            &self.dir.join("results"),
            self.keys,
            (self.library.1, &self.tools.identity),
            &qemu,
            accel,
        );
        if let Some(json) = self.use_cache.then(|| load(&entry)).flatten() {
            (self.progress)(&format!("boot: {} (cached)", json.result));
            return (json, Vec::new());
        }
        let not_run = |reason: String| (Booted::not_run(reason).json, Vec::new());
        let wrappers = self.dir.join("wrappers").join(toolchain);
        let (rustc, rustdoc) = (wrappers.join("rustc"), wrappers.join("rustdoc"));
        for (path, launch) in [
            (&rustc, self.launch.clone()),
            (&rustdoc, self.launch.sibling("rustdoc")),
        ] {
            if let Err(error) = write_wrapper(path, &launch) {
                return not_run(format!("writing the wrapper {}: {error:#}", path.display()));
            }
        }
        let marker = marker_tools(&self.tools.identity);
        let open = || BuildDir::open(&self.dir.join("boot").join(id), identity, &marker);
        let out = match opened.take().map_or_else(open, Ok) {
            Ok(out) => out,
            Err(error) => return not_run(format!("the boot build directory: {error:#}")),
        };
        let pair = Pair {
            tree: root,
            out: &out,
            wrapper: &rustc,
            library: self.library.0,
            rustdoc: Some(&rustdoc),
            tools: self.tools,
            jobs: self.jobs,
            lock: self.lock,
            timeout: self.timeout,
            progress: self.progress,
        };
        let console = out.out.join(format!("console-{toolchain}.log"));
        let booted = boot(&pair, &version.release_string(), &qemu, accel, &console);
        (self.progress)(&format!(
            "boot: {}: {}",
            booted.json.result, booted.json.reason
        ));
        if !out.is_spoiled() {
            *opened = Some(out);
        }
        if booted.cacheable && crate::util::interrupt::interrupted().is_none() {
            if let Err(error) = write_entry(&entry, &booted.json) {
                (self.progress)(&format!("boot: the result was not cached: {error:#}"));
            }
        }
        (booted.json, booted.steps)
    }
}

/// The file under `results` that holds a cell's boot verdict: keyed by the tree and the
/// compiler's identity as its build's result is (`keys`), its library sources and the tools
/// (`identities`), QEMU's version, the accelerator and the [`recipe`].
pub(crate) fn result_entry(
    results: &Path,
    keys: (u128, u128),
    (library, tools): (&str, &str),
    qemu: &Result<Qemu, String>,
    accel: Accel,
) -> PathBuf {
    let mut hasher = StableHasher::new();
    hasher
        .field("kernel boot v1")
        .number(keys.0)
        .number(keys.1)
        .field(library.as_bytes())
        .field(tools)
        .field(recipe())
        .field(qemu.as_ref().map_or("", |qemu| qemu.version.as_str()))
        .field(accel.word());
    results.join(format!("boot-{}.json", hasher.finish()))
}

/// The tools line of a boot build directory's marker: the build's tools and the [`recipe`], so
/// that either changed starts the directory again.
pub(crate) fn marker_tools(tools: &str) -> String {
    format!("{tools}\n{}", recipe())
}

/// Builds the boot image with `pair` (in the tree's boot build directory, with `RUSTDOC`) and
/// boots it, the console written to `console`; `release` is the compiler's (`1.98.1`), which
/// the image's `.comment` must name.
pub(crate) fn boot(
    pair: &Pair<'_>,
    release: &str,
    qemu: &Result<Qemu, String>,
    accel: Accel,
    console: &Path,
) -> Booted {
    let qemu = match qemu {
        Ok(qemu) => qemu,
        Err(why) => return Booted::not_run(why.clone()),
    };
    let mut steps = Vec::new();
    pair.out.begin();
    let image = build_image(pair, release, &mut steps);
    pair.out.seal();
    let mut booted = match image {
        Ok((image, config)) => {
            (pair.progress)(&format!("booting under qemu ({})", accel.word()));
            let boot = (accel, image.as_path(), console, BOOT_TIMEOUT);
            run_qemu(&qemu.program, boot, pair.tree, &config)
        }
        Err(booted) => *booted,
    };
    steps.append(&mut booted.steps);
    booted.steps = steps;
    booted
}

/// Boots `image`, QEMU run to its end or killed with its process group after `timeout`, and
/// judges its console as the file holds it; the step's time is QEMU's.
pub(crate) fn run_qemu(
    qemu: &Path,
    (accel, image, console, timeout): (Accel, &Path, &Path, Duration),
    tree: &Path,
    config: &BootConfig,
) -> Booted {
    let _ = std::fs::remove_file(console);
    let invocation = Invocation::new(qemu, qemu::arguments(accel, image, console));
    let output = match process::run(&invocation, timeout) {
        Ok(output) => output,
        Err(error) => {
            let why = process::describe_spawn_error(qemu, &error);
            return Booted::not_run(format!("QEMU could not start: {why}"));
        }
    };
    let console = std::fs::read(console).unwrap_or_default();
    let console = String::from_utf8_lossy(&console);
    let steps = vec![("boot: qemu".to_owned(), output.seconds)];
    let not_run = |reason: String| Booted {
        steps: steps.clone(),
        ..Booted::not_run(reason)
    };
    let stderr = process::last_line(&output.stderr);
    let failed = match output.status {
        Err(Killed::Timeout) => Some(format!(
            "no end within {} s: the kernel hung or the machine is too slow (not cached)",
            timeout.as_secs()
        )),
        Err(Killed::Interrupted) => return not_run("the run was interrupted".into()),
        Ok(_) if console.trim().is_empty() => {
            let ending = output.describe_ending(timeout);
            return not_run(format!("QEMU printed no console ({ending}): {stderr}"));
        }
        // QEMU itself failed midway: what the kernel printed is not its whole verdict.
        Ok(status) if !status.success() => Some(format!(
            "QEMU ended with {} (not cached): {stderr}",
            output.describe_ending(timeout)
        )),
        Ok(_) => None,
    };
    let mut booted = judge(tree, config, &console, accel);
    booted.steps = steps;
    booted.json.seconds = Some(output.seconds);
    if let Some(failed) = failed {
        booted.json.result = BOOT_FAIL.into();
        booted.json.reason = format!("{failed}; {}", booted.json.reason);
        booted.cacheable = false;
    }
    booted
}

/// Configures the boot build directory and builds `vmlinux`, each step's time pushed onto
/// `steps`: the image with its configuration, or the boot's result when that fails.
fn build_image(
    pair: &Pair<'_>,
    release: &str,
    steps: &mut Vec<(String, f64)>,
) -> Result<(PathBuf, BootConfig), Box<Booted>> {
    let out = pair.out;
    let config_path = out.out.join(".config");
    let wanted = config::boot_config(pair.tree);
    let not_run = |reason: String| Box::new(Booted::not_run(reason));
    let mut make = |target: &str| -> Result<ProcessOutput, Box<Booted>> {
        (pair.progress)(&format!("boot: make {target}"));
        let output = pair
            .make(&[target])
            .map_err(|error| not_run(format!("make could not start: {error}")))?;
        steps.push((format!("boot: {target}"), output.seconds));
        if let Some(why) = machine_failure(&output, pair.timeout) {
            out.spoil();
            let mut booted = not_run(format!(
                "make {target}: {why} (not cached; the boot build directory is discarded)"
            ));
            booted.json.console_tail = Some(build::first_error_of(&output));
            return Err(booted);
        }
        Ok(output)
    };
    let passed = |target: &str, output: ProcessOutput| {
        if output.success() {
            return Ok(());
        }
        let error = build::first_error_of(&output);
        Err(not_run(format!("make {target} failed: {error}")))
    };
    if !config_path.is_file() {
        passed("tinyconfig", make("tinyconfig")?)?;
        let mut text = std::fs::read_to_string(&config_path).unwrap_or_default();
        text.push_str(&wanted.fragment());
        std::fs::write(&config_path, text)
            .map_err(|error| not_run(format!("writing {}: {error}", config_path.display())))?;
    }
    passed("olddefconfig", make("olddefconfig")?)?;
    let text = std::fs::read_to_string(&config_path).unwrap_or_default();
    let lost = wanted.lost(&text);
    if !lost.is_empty() {
        // The next compiler starts again from tinyconfig; the objects stay.
        let _ = std::fs::remove_file(&config_path);
        return Err(Box::new(Booted::failed(
            format!(
                "the boot configuration lost {} at olddefconfig (Kconfig's conditions do not \
                 hold with this compiler or its tools; not cached)",
                lost.join(", ")
            ),
            false,
        )));
    }
    let output = make("vmlinux")?;
    if !output.success() {
        let built = build::compiler_failure("make vmlinux", &output, Vec::new());
        let mut booted = Booted::failed(
            format!("the boot image did not build: {}", built.reason),
            built.cacheable,
        );
        booted.json.console_tail = built.first_error;
        return Err(Box::new(booted));
    }
    let image = out.out.join("vmlinux");
    let versions = rustc_versions(&image);
    let expected = format!("rustc version {release}");
    if versions.is_empty() || !versions.iter().all(|only| only.starts_with(&expected)) {
        out.spoil();
        return Err(not_run(format!(
            "make vmlinux succeeded, but {} does not say it is {expected} only (its .comment \
             says: {}); not cached, the boot build directory is discarded",
            image.display(),
            if versions.is_empty() {
                "no rustc".to_owned()
            } else {
                versions.join("; ")
            }
        )));
    }
    Ok((image, wanted))
}

/// The `rustc version ...` strings of an ELF file (its `.comment` records each compiler that
/// built an object of it), each once.
pub(crate) fn rustc_versions(image: &Path) -> Vec<String> {
    let Ok(bytes) = std::fs::read(image) else {
        return Vec::new();
    };
    let needle = b"rustc version ";
    let mut found: Vec<String> = Vec::new();
    for line in bytes.split(|byte| *byte == 0 || *byte == b'\n') {
        if let Some(start) = line.windows(needle.len()).position(|part| part == needle) {
            let text = &line[start..line.len().min(start + 200)];
            crate::push_once(&mut found, String::from_utf8_lossy(text).into_owned());
        }
    }
    found
}

/// The verdict of a console: the samples' init lines, KUnit's results, the end. `tree` is the
/// build's source root, which the console's paths are read without.
pub(crate) fn judge(tree: &Path, config: &BootConfig, console: &str, accel: Accel) -> Booted {
    let root = format!("{}/", tree.display());
    let text = console.replace(&root, "");
    let lines = console::lines(&text);
    let ktap = console::ktap(&lines);
    let ending = console::ending(&lines);
    let mut problems: Vec<String> = Vec::new();
    if let Some(crash) = &ending.crash {
        problems.push(format!("the kernel crashed: {crash}"));
    }
    let mut samples = Vec::new();
    for sample in samples::samples(tree, &config.samples) {
        // A sample that prints nothing at init is listed, not checked.
        if sample.expected.is_empty() {
            samples.push(SampleJson {
                name: sample.name.clone(),
                expected: None,
                seen: false,
            });
        }
        for expected in &sample.expected {
            let seen = lines.iter().any(|line| expected.matches(line));
            if !seen {
                problems.push(format!("{} did not print `{}`", sample.name, expected.text));
            }
            samples.push(SampleJson {
                name: sample.name.clone(),
                expected: Some(expected.text.clone()),
                seen,
            });
        }
    }
    let count = |outcome| {
        ktap.cases()
            .filter(|(_, case)| case.outcome == outcome)
            .count()
    };
    let failures: Vec<FailureJson> = ktap
        .cases()
        .filter(|(_, case)| case.outcome == Outcome::Fail)
        .map(|(suite, case)| FailureJson {
            suite: suite.to_owned(),
            test: case.name.clone(),
            output: case.output.join("\n"),
        })
        .collect();
    if !failures.is_empty() {
        let names: Vec<String> = failures
            .iter()
            .map(|failure| format!("{}.{}", failure.suite, failure.test))
            .collect();
        problems.push(format!("KUnit failed: {}", names.join(", ")));
    }
    // A suite that failed as a whole though no case of its own did (its init failing).
    for suite in &ktap.suites {
        let case_failed = suite.cases.iter().any(|case| case.outcome == Outcome::Fail);
        if suite.result == Some(Outcome::Fail) && !case_failed {
            problems.push(format!("suite {} failed with no failed case", suite.name));
        }
    }
    for line in &ktap.unparsed {
        problems.push(format!("a KTAP line does not parse: `{}`", line.trim()));
    }
    problems.extend(ktap.incomplete());
    if !ending.rebooted && ending.crash.is_none() {
        let last = lines
            .iter()
            .map(|line| line.trim())
            .rfind(|line| !line.is_empty());
        problems.push(format!(
            "the console was cut short: no `{}` after the KTAP (its last line: `{}`)",
            console::REBOOT_LINE,
            last.unwrap_or("")
        ));
    }
    let mut json = BootJson {
        result: BOOT_FAIL.into(),
        reason: problems.join("; "),
        accel: Some(accel.word().into()),
        samples,
        kunit: Some(KunitJson {
            passed: count(Outcome::Pass),
            failed: count(Outcome::Fail),
            skipped: count(Outcome::Skip),
            failures,
        }),
        console_tail: Some(console::tail(console, 20)),
        ..BootJson::default()
    };
    if problems.is_empty() {
        json.result = BOOT_PASS.into();
        json.reason = format!(
            "{} suites, {} cases passed, {} skipped; {} sample lines seen; rebooted",
            ktap.suites.len(),
            count(Outcome::Pass),
            count(Outcome::Skip),
            json.sample_lines().0
        );
    }
    Booted {
        json,
        cacheable: true,
        steps: Vec::new(),
    }
}

/// A cached boot result, if `entry` holds a well-formed one that is a verdict.
pub(crate) fn load(entry: &Path) -> Option<BootJson> {
    let boot: BootJson = read_entry(entry, 1 << 20)?;
    (boot.result != BOOT_NOT_RUN).then_some(BootJson {
        cached: true,
        ..boot
    })
}
