// SPDX-License-Identifier: GPL-2.0
//! Building one kernel tree's Rust with one compiler, as `../shared/KERNELS.md` found it works:
//! the tree's own `make rustavailable`, a defconfig with `CONFIG_RUST`, every Rust sample and the
//! Rust drivers the configuration can enable, then `prepare`, `rust/`, `samples/rust/` and the
//! drivers' objects, through a wrapper that starts that compiler. `CONFIG_RUST=y` is checked
//! after every configuration step (it drops out silently), and every Rust object must have been
//! rebuilt, by that wrapper, during this build.

use crate::process::{self, Invocation, ProcessOutput};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The LLVM the trees are built with: `LLVM=-19` makes Kbuild run `clang-19`, `ld.lld-19`...
pub(crate) const LLVM_SUFFIX: &str = "-19";

/// The bindgen every tree from 6.11 on is built with: bindgen-cli 0.71.1, installed under
/// `target/kernel/tools/` (it meets 6.12's 0.65.1 and 7.3's 0.71.1 minimums).
pub(crate) const BINDGEN: Bindgen = Bindgen {
    version: "0.71.1",
    krate: "bindgen-cli",
};

/// The bindgen of trees that still pass `--size_t-is-usize` (6.1: its minimum is 0.56.0), which
/// bindgen 0.65 removed: the `bindgen` crate 0.56.0 carries that command line.
pub(crate) const OLD_BINDGEN: Bindgen = Bindgen {
    version: "0.56.0",
    krate: "bindgen",
};

/// The first bindgen without `--size_t-is-usize`: a tree whose minimum is below it gets
/// [`OLD_BINDGEN`].
pub(crate) const SIZE_T_IS_USIZE_REMOVED: crate::catalog::Release =
    crate::catalog::Release::new(0, 65, 0);

/// One bindgen release and the crate whose `cargo install` provides its command line.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bindgen {
    /// Its version.
    pub version: &'static str,
    /// The crate that installs it.
    pub krate: &'static str,
}

/// The packages the kernel's build needs from the system's apt.
pub(crate) const SYSTEM_PACKAGES: &str =
    "clang-19 lld-19 llvm-19 libclang-19-dev flex bison libelf-dev libssl-dev bc cpio kmod";

/// How the configuration is made; part of every result's cache key, so that changing it
/// rebuilds.
pub(crate) const CONFIG_RECIPE: &str = "x86_64_defconfig; -d MITIGATION_CALL_DEPTH_TRACKING; \
     -e RUST -e SAMPLES -e SAMPLES_RUST; every SAMPLE_RUST_*; every Rust driver and its objects; olddefconfig; v3";

/// The build tools, found.
#[derive(Clone, Debug)]
pub(crate) struct Tools {
    /// bindgen's command line.
    pub bindgen: PathBuf,
    /// The directory holding `libclang.so` for bindgen.
    pub libclang: PathBuf,
    /// What they are, exactly: clang's and bindgen's `--version`, for cache keys and the report.
    pub identity: String,
}

/// Where `bindgen` is installed: `target/kernel/tools/bindgen-VERSION/bin/bindgen`.
pub(crate) fn bindgen_root(kernel_dir: &Path, bindgen: Bindgen) -> PathBuf {
    kernel_dir
        .join("tools")
        .join(format!("bindgen-{}", bindgen.version))
}

/// The command that installs `bindgen` where [`find_tools`] looks.
pub(crate) fn bindgen_install_command(kernel_dir: &Path, bindgen: Bindgen) -> String {
    format!(
        "cargo install {} --version {} --locked --root {}",
        bindgen.krate,
        bindgen.version,
        bindgen_root(kernel_dir, bindgen).display()
    )
}

/// The tools a build needs, or what is missing and the command that installs it.
pub(crate) fn find_tools(kernel_dir: &Path, wanted: Bindgen) -> Result<Tools, String> {
    let mut missing = Vec::new();
    for program in [
        "clang-19",
        "ld.lld-19",
        "llvm-ar-19",
        "llvm-nm-19",
        "llvm-objcopy-19",
        "flex",
        "bison",
        "bc",
    ] {
        if !Path::new("/usr/bin").join(program).exists() {
            missing.push(program.to_owned());
        }
    }
    for header in ["/usr/include/gelf.h", "/usr/include/openssl/ssl.h"] {
        if !Path::new(header).is_file() {
            missing.push(header.to_owned());
        }
    }
    let libclang = PathBuf::from("/usr/lib/llvm-19/lib");
    if !libclang.join("libclang.so").exists() && !libclang.join("libclang.so.1").exists() {
        missing.push(format!("{}/libclang.so", libclang.display()));
    }
    let mut problems = Vec::new();
    if !missing.is_empty() {
        problems.push(format!(
            "{} missing: install them with `apt-get install {SYSTEM_PACKAGES}`",
            missing.join(", ")
        ));
    }
    let bindgen = bindgen_root(kernel_dir, wanted).join("bin/bindgen");
    if !bindgen.is_file() {
        problems.push(format!(
            "no bindgen {} at {}: install it with `{}`",
            wanted.version,
            bindgen.display(),
            bindgen_install_command(kernel_dir, wanted)
        ));
    }
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    let version_of = |program: &Path, env: Vec<(String, String)>| {
        let invocation = Invocation {
            program: program.to_owned(),
            args: vec!["--version".into()],
            env,
            env_remove: Vec::new(),
        };
        match process::run(&invocation, Duration::from_secs(60)) {
            Ok(output) if output.success() => {
                Ok(output.stdout.lines().next().unwrap_or_default().to_owned())
            }
            Ok(output) => Err(format!(
                "`{} --version` failed: {}",
                program.display(),
                output.describe_ending(Duration::from_secs(60))
            )),
            Err(error) => Err(process::describe_spawn_error(program, &error)),
        }
    };
    let clang = version_of(Path::new("/usr/bin/clang-19"), Vec::new())?;
    let bindgen_says = version_of(&bindgen, vec![libclang_env(&libclang)])?;
    Ok(Tools {
        identity: format!("{clang}; {bindgen_says}"),
        bindgen,
        libclang,
    })
}

fn libclang_env(libclang: &Path) -> (String, String) {
    ("LIBCLANG_PATH".to_owned(), libclang.display().to_string())
}

/// The compiler of one pair, ready for Kbuild.
#[derive(Clone, Debug)]
pub(crate) struct Compiler {
    /// The wrapper Kbuild runs as `RUSTC` and `HOSTRUSTC`.
    pub wrapper: PathBuf,
    /// The `library/` directory of its own sources (`RUST_LIB_SRC`).
    pub library: PathBuf,
}

/// Writes the wrapper that starts a compiler as `program` with `leading` arguments and `env`:
/// a POSIX shell script. A leading `--sysroot` (a compiler run through its own loader names its
/// sysroot) is passed only when the caller gave none: Kbuild passes `--sysroot=/dev/null` itself.
pub(crate) fn write_wrapper(
    path: &Path,
    program: &Path,
    leading: &[String],
    env: &[(String, String)],
) -> anyhow::Result<()> {
    let quote = |word: &str| format!("'{}'", word.replace('\'', r"'\''"));
    let mut without_sysroot = Vec::new();
    let mut words = leading.iter();
    while let Some(word) = words.next() {
        if word == "--sysroot" {
            words.next();
        } else if !word.starts_with("--sysroot=") {
            without_sysroot.push(quote(word));
        }
    }
    let with_sysroot: Vec<String> = leading.iter().map(|word| quote(word)).collect();
    let mut text = String::from(
        "#!/bin/sh\n# Written by cargo xtask kernel: starts one compiler for Kbuild.\n",
    );
    for (name, value) in env {
        text.push_str(&format!("export {name}={}\n", quote(value)));
    }
    let program = quote(&program.to_string_lossy());
    text.push_str(&format!(
        "for arg in \"$@\"; do\n  case \"$arg\" in\n    --sysroot|--sysroot=*) exec {program} {} \"$@\" ;;\n  esac\ndone\nexec {program} {} \"$@\"\n",
        without_sysroot.join(" "),
        with_sysroot.join(" ")
    ));
    crate::files::write_atomically(path, text.as_bytes())?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}

/// The real result of one pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Real {
    /// Everything built, and was checked to have been built by that compiler.
    Pass,
    /// The build failed on the compiler's account.
    Fail,
    /// The tree's own `make rustavailable` refused the compiler.
    Refused,
    /// Not built: a missing tool, the machine, a configuration that lost `CONFIG_RUST`.
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

    /// The result a word names.
    pub(crate) fn from_word(word: &str) -> Option<Real> {
        [Real::Pass, Real::Fail, Real::Refused, Real::NotRun]
            .into_iter()
            .find(|real| real.word() == word)
    }
}

/// What building one pair found.
#[derive(Clone, Debug)]
pub(crate) struct Built {
    /// The result.
    pub real: Real,
    /// Why, in one sentence.
    pub reason: String,
    /// The first error the tools printed, if any.
    pub first_error: Option<String>,
    /// What `make rustavailable` warned, if anything (6.1 warns about newer compilers).
    pub warning: Option<String>,
    /// Whether it is the compilers' verdict on the tree, and so may be cached: never a killed
    /// build, a full disk, a missing tool or anything half-built.
    pub cacheable: bool,
    /// The Rust Kconfig symbols the configuration kept on (samples and drivers).
    pub enabled: Vec<String>,
    /// How many Rust objects were checked to be rebuilt by this compiler.
    pub objects: usize,
    /// Each step and its wall time in seconds.
    pub steps: Vec<(String, f64)>,
}

impl Built {
    /// A cell that was not built, and why; `steps` are those that ran before it stopped.
    pub(crate) fn not_run(reason: String, steps: Vec<(String, f64)>) -> Built {
        Built {
            real: Real::NotRun,
            reason,
            first_error: None,
            warning: None,
            cacheable: false,
            enabled: Vec::new(),
            objects: 0,
            steps,
        }
    }
}

/// One tree's build directory (`make O=`), reused between pairs. Its marker (the tree and the
/// tools) is there only between builds that ended normally: it is removed when a build starts
/// and written back when it ends, unless the build was killed or the machine failed. A
/// directory without it (a build killed, even with the xtask itself) is removed before use.
pub(crate) struct BuildDir {
    /// The directory.
    pub out: PathBuf,
    marker: String,
    spoiled: std::cell::Cell<bool>,
}

const BUILD_MARKER: &str = "kshim-build.txt";

impl BuildDir {
    /// The build directory of `tree_identity` under `dir`: reused when its marker names the
    /// same tree and tools, removed and made again otherwise.
    pub(crate) fn open(dir: &Path, tree_identity: &str, tools: &str) -> anyhow::Result<BuildDir> {
        let out = dir.to_owned();
        let marker = format!("{tree_identity}\n{tools}\n");
        let found = std::fs::read_to_string(out.join(BUILD_MARKER)).ok();
        if out.exists() && found.as_deref() != Some(marker.as_str()) {
            std::fs::remove_dir_all(&out)
                .map_err(|error| anyhow::anyhow!("removing {}: {error}", out.display()))?;
        }
        std::fs::create_dir_all(&out)?;
        Ok(BuildDir {
            out,
            marker,
            spoiled: std::cell::Cell::new(false),
        })
    }

    /// A build starts: until [`BuildDir::seal`], the directory counts as half-built.
    fn begin(&self) {
        self.spoiled.set(false);
        let _ = std::fs::remove_file(self.out.join(BUILD_MARKER));
    }

    /// Forgets the directory: the next [`BuildDir::open`] starts it again.
    fn spoil(&self) {
        self.spoiled.set(true);
        let _ = std::fs::remove_file(self.out.join(BUILD_MARKER));
    }

    /// The build ended: unless it was spoiled, the directory may be reused.
    fn seal(&self) {
        if !self.spoiled.get() {
            let _ = std::fs::write(self.out.join(BUILD_MARKER), &self.marker);
        }
    }

    /// Whether the last build spoiled it.
    pub(crate) fn is_spoiled(&self) -> bool {
        self.spoiled.get()
    }
}

/// Everything one pair's `make` runs need.
pub(crate) struct Pair<'a> {
    /// The tree's top.
    pub tree: &'a Path,
    /// Its build directory.
    pub out: &'a BuildDir,
    /// The compiler.
    pub compiler: &'a Compiler,
    /// The tools.
    pub tools: &'a Tools,
    /// `-j`.
    pub jobs: usize,
    /// Any one `make` is killed after this long.
    pub timeout: Duration,
    /// Progress lines.
    pub progress: &'a dyn Fn(&str),
}

impl Pair<'_> {
    fn make(&self, targets: &[&str]) -> std::io::Result<ProcessOutput> {
        let mut args = vec![
            "-C".to_owned(),
            self.tree.display().to_string(),
            format!("O={}", self.out.out.display()),
            format!("LLVM={LLVM_SUFFIX}"),
            format!("RUSTC={}", self.compiler.wrapper.display()),
            format!("HOSTRUSTC={}", self.compiler.wrapper.display()),
            format!("BINDGEN={}", self.tools.bindgen.display()),
            format!("RUST_LIB_SRC={}", self.compiler.library.display()),
            format!("-j{}", self.jobs),
        ];
        args.extend(targets.iter().map(|target| (*target).to_owned()));
        let invocation = Invocation {
            program: PathBuf::from("make"),
            args,
            env: vec![libclang_env(&self.tools.libclang)],
            env_remove: Vec::new(),
        };
        process::run(&resolved(invocation), self.timeout)
    }

    fn config(&self, args: &[String]) -> std::io::Result<ProcessOutput> {
        let mut all = vec![
            "--file".to_owned(),
            self.out.out.join(".config").display().to_string(),
        ];
        all.extend(args.iter().cloned());
        let invocation = Invocation {
            program: self.tree.join("scripts/config"),
            args: all,
            env: Vec::new(),
            env_remove: Vec::new(),
        };
        process::run(&invocation, self.timeout)
    }
}

/// `make` by its absolute path on `PATH`, as [`Invocation`] wants.
fn resolved(mut invocation: Invocation) -> Invocation {
    if invocation.program.is_relative() {
        let path = std::env::var_os("PATH").unwrap_or_default();
        if let Some(found) = std::env::split_paths(&path)
            .map(|dir| dir.join(&invocation.program))
            .find(|candidate| candidate.is_file())
        {
            invocation.program = found;
        }
    }
    invocation
}

/// What the tree's `make rustavailable` said of a compiler it accepts.
pub(crate) struct Accepted {
    /// Its warning, if any (6.1 warns about a compiler newer than its minimum).
    pub warning: Option<String>,
    /// How long it took.
    pub seconds: f64,
}

/// Asks the tree whether it accepts the pair's compiler: `make rustavailable`. `Ok` with its
/// warning when it does, `Err(built)` with the refusal (or why it could not be asked) otherwise.
pub(crate) fn rust_available(pair: &Pair<'_>) -> Result<Accepted, Box<Built>> {
    let output = match pair.make(&["rustavailable"]) {
        Ok(output) => output,
        Err(error) => {
            return Err(Box::new(Built::not_run(
                format!("make could not start: {error}"),
                Vec::new(),
            )))
        }
    };
    let said = format!("{}\n{}", output.stdout, output.stderr);
    let steps = vec![("rustavailable".to_owned(), output.seconds)];
    if output.killed.is_some() {
        return Err(Box::new(Built::not_run(
            format!(
                "make rustavailable: {}",
                output.describe_ending(pair.timeout)
            ),
            steps,
        )));
    }
    let warning = said
        .lines()
        .find(|line| line.contains("***") && line.to_lowercase().contains("warning"))
        .map(|_| summary_of_stars(&said));
    if output.success() {
        return Ok(Accepted {
            warning: warning.filter(|text| !text.is_empty()),
            seconds: output.seconds,
        });
    }
    let mut refused = Built::not_run(String::new(), steps);
    refused.real = Real::Refused;
    refused.cacheable = true;
    refused.first_error = Some(summary_of_stars(&said));
    refused.reason = "the tree's own `make rustavailable` refused it".into();
    Err(Box::new(refused))
}

/// The `***` lines of `scripts/rust_is_available.sh`, joined: "Rust compiler '…' is too old.
/// Your version: 1.78.0 Minimum version: 1.85.0".
fn summary_of_stars(said: &str) -> String {
    let lines: Vec<String> = said
        .lines()
        .filter_map(|line| line.trim().strip_prefix("***"))
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|line| !line.is_empty())
        .collect();
    if lines.is_empty() {
        process::last_line(said)
    } else {
        lines.join(" ")
    }
}

/// The Rust Kconfig symbols to turn on: every `SAMPLE_RUST_*` of `samples/rust/Kconfig`, and
/// every symbol under `drivers/` whose `depends on` names `RUST` or, in turn, such a symbol (the
/// PHY driver that depends on `RUST_PHYLIB_ABSTRACTIONS`); each with whether it is a tristate.
pub(crate) fn rust_symbols(tree: &Path) -> Vec<(String, bool)> {
    // (name, tristate, the words of its `depends on` lines, whether it is a Rust sample)
    let mut entries: Vec<(String, bool, Vec<String>, bool)> = Vec::new();
    let mut kconfigs = vec![tree.join("samples/rust/Kconfig")];
    collect_kconfigs(&tree.join("drivers"), &mut kconfigs);
    for file in kconfigs {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let is_samples = file.ends_with("samples/rust/Kconfig");
        for line in text.lines() {
            let line = line.trim();
            if let Some(name) = line
                .strip_prefix("config ")
                .or_else(|| line.strip_prefix("menuconfig "))
            {
                let name = name.trim().to_owned();
                let sample = is_samples && name.starts_with("SAMPLE_RUST_");
                entries.push((name, false, Vec::new(), sample));
            } else if let Some((_, tristate, depends, _)) = entries.last_mut() {
                if line.starts_with("tristate") {
                    *tristate = true;
                }
                if let Some(condition) = line.strip_prefix("depends on") {
                    depends.extend(
                        condition
                            .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                            .filter(|word| !word.is_empty())
                            .map(str::to_owned),
                    );
                }
            }
        }
    }
    let mut rust: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    rust.insert("RUST".to_owned());
    loop {
        let before = rust.len();
        for (name, _, depends, sample) in &entries {
            if *sample || depends.iter().any(|word| rust.contains(word)) {
                rust.insert(name.clone());
            }
        }
        if rust.len() == before {
            break;
        }
    }
    let mut found: Vec<(String, bool)> = entries
        .into_iter()
        .filter(|(name, ..)| rust.contains(name) && name != "SAMPLES_RUST")
        .map(|(name, tristate, ..)| (name, tristate))
        .collect();
    found.sort();
    found.dedup();
    found
}

fn collect_kconfigs(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => collect_kconfigs(&path, into),
            Ok(kind)
                if kind.is_file() && entry.file_name().to_string_lossy().starts_with("Kconfig") =>
            {
                into.push(path)
            }
            _ => {}
        }
    }
}

/// The symbols of `.config` that are `y` or `m`.
fn enabled_in(config: &str) -> Vec<String> {
    config
        .lines()
        .filter_map(|line| {
            let (name, value) = line.strip_prefix("CONFIG_")?.split_once('=')?;
            (value == "y" || value == "m").then(|| name.to_owned())
        })
        .collect()
}

/// The Rust objects a symbol builds: from the `Makefile` beside the `Kconfig` that declares it,
/// each `obj-$(CONFIG_X) += NAME.o` whose `NAME.rs` exists, or the `.rs` members of a composite
/// `NAME-y := ...`; paths relative to the tree.
pub(crate) fn objects_of(tree: &Path, symbol: &str) -> Vec<String> {
    let mut objects = Vec::new();
    let mut makefiles = Vec::new();
    collect_makefiles(&tree.join("drivers"), &mut makefiles);
    makefiles.push(tree.join("samples/rust/Makefile"));
    let needle = format!("$(CONFIG_{symbol})");
    for makefile in makefiles {
        let Ok(text) = std::fs::read_to_string(&makefile) else {
            continue;
        };
        // A list continued over lines (`rust_binder-y := \` then one member a line) is one.
        let text = text.replace("\\\n", " ");
        if !text.contains(&needle) {
            continue;
        }
        let dir = makefile.parent().unwrap_or(tree);
        let relative = dir.strip_prefix(tree).unwrap_or(dir);
        for line in text.lines().filter(|line| line.contains(&needle)) {
            let Some((_, names)) = line.split_once("+=").or_else(|| line.split_once(":=")) else {
                continue;
            };
            for name in names.split_whitespace() {
                let Some(stem) = name.strip_suffix(".o") else {
                    continue;
                };
                if dir.join(format!("{stem}.rs")).is_file() {
                    objects.push(relative.join(name).display().to_string());
                    continue;
                }
                let composite = [format!("{stem}-y"), format!("{stem}-objs")];
                for member_line in text.lines() {
                    let Some((left, right)) = member_line
                        .split_once("+=")
                        .or_else(|| member_line.split_once(":="))
                    else {
                        continue;
                    };
                    if !composite.iter().any(|key| left.trim() == key) {
                        continue;
                    }
                    for member in right.split_whitespace() {
                        if let Some(member_stem) = member.strip_suffix(".o") {
                            if dir.join(format!("{member_stem}.rs")).is_file() {
                                objects.push(relative.join(member).display().to_string());
                            }
                        }
                    }
                }
            }
        }
    }
    objects.sort();
    objects.dedup();
    objects
}

fn collect_makefiles(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => collect_makefiles(&path, into),
            Ok(kind) if kind.is_file() && entry.file_name() == "Makefile" => into.push(path),
            _ => {}
        }
    }
}

/// Why a failed `make` is the machine's fault rather than the compiler's, if it is.
fn machine_failure(output: &ProcessOutput, timeout: Duration) -> Option<String> {
    if output.killed.is_some() {
        return Some(output.describe_ending(timeout));
    }
    let said = format!("{}\n{}", output.stdout, output.stderr);
    for (sign, what) in [
        ("No space left on device", "the disk is full"),
        ("Cannot allocate memory", "the machine ran out of memory"),
        ("command not found", "a tool is missing"),
        ("No such file or directory", "a file or tool is missing"),
    ] {
        if said.contains(sign) && !said.contains("error[E") {
            return Some(format!(
                "{what}: {}",
                first_error(&said).unwrap_or_default()
            ));
        }
    }
    if output.status.is_none() || output.status.is_some_and(|status| status.code().is_none()) {
        return Some(output.describe_ending(timeout));
    }
    None
}

/// The first error line of a build's output: rustc's (with the line after it, its place), else
/// a C compiler's, else make's own (`*** [...] Error 1`, `*** No rule ... Stop.`). The banner
/// lines of `scripts/rust_is_available.sh` (`*** Rust compiler ... is too new`) are warnings.
pub(crate) fn first_error(said: &str) -> Option<String> {
    let lines: Vec<&str> = said.lines().collect();
    let kinds: [&dyn Fn(&str) -> bool; 3] = [
        &|line| line.starts_with("error"),
        &|line| line.contains(": error:"),
        &|line| {
            !line.trim_start().starts_with("***")
                && line.contains("*** ")
                && (line.contains("Error") || line.contains("Stop."))
        },
    ];
    let at = kinds
        .iter()
        .find_map(|kind| lines.iter().position(|line| kind(line)))?;
    let mut text = lines[at].trim().to_owned();
    if let Some(next) = lines
        .get(at + 1)
        .filter(|next| next.trim_start().starts_with("-->"))
    {
        text.push_str(&format!(
            " ({})",
            next.trim().trim_start_matches("-->").trim()
        ));
    }
    Some(text)
}

/// Configures and builds the pair's Rust; the tree has accepted the compiler.
pub(crate) fn build(pair: &Pair<'_>, accepted: Accepted) -> Built {
    pair.out.begin();
    let mut built = build_in(pair, accepted.warning);
    built
        .steps
        .insert(0, ("rustavailable".to_owned(), accepted.seconds));
    pair.out.seal();
    built
}

fn build_in(pair: &Pair<'_>, warning: Option<String>) -> Built {
    let mut steps: Vec<(String, f64)> = Vec::new();
    let started = SystemTime::now();
    let config_path = pair.out.out.join(".config");
    let fail = |real: Real, reason: String, output: &ProcessOutput, steps: Vec<(String, f64)>| {
        let said = format!("{}\n{}", output.stdout, output.stderr);
        Built {
            real,
            reason,
            first_error: first_error(&said).or_else(|| Some(process::last_line(&said))),
            warning: warning.clone(),
            cacheable: false,
            enabled: Vec::new(),
            objects: 0,
            steps,
        }
    };
    // Runs one `make`; a machine failure spoils the build directory and ends the pair.
    macro_rules! run_make {
        ($name:expr, $targets:expr) => {{
            (pair.progress)(&format!("make {}", $targets.join(" ")));
            let output = match pair.make($targets) {
                Ok(output) => output,
                Err(error) => {
                    return Built::not_run(format!("make could not start: {error}"), steps)
                }
            };
            steps.push(($name.to_owned(), output.seconds));
            if let Some(why) = machine_failure(&output, pair.timeout) {
                pair.out.spoil();
                return fail(
                    Real::NotRun,
                    format!(
                        "make {}: {why} (not cached; the build directory is discarded)",
                        $targets.join(" ")
                    ),
                    &output,
                    steps,
                );
            }
            output
        }};
    }
    if !config_path.is_file() {
        let output = run_make!("defconfig", &["x86_64_defconfig"]);
        if !output.success() {
            return fail(
                Real::NotRun,
                "make x86_64_defconfig failed".into(),
                &output,
                steps,
            );
        }
    }
    let symbols = rust_symbols(pair.tree);
    let mut args: Vec<String> = [
        "-d",
        "MITIGATION_CALL_DEPTH_TRACKING",
        "-e",
        "RUST",
        "-e",
        "SAMPLES",
        "-e",
        "SAMPLES_RUST",
    ]
    .iter()
    .map(|word| (*word).to_owned())
    .collect();
    for (symbol, tristate) in &symbols {
        args.push(if *tristate { "-m" } else { "-e" }.to_owned());
        args.push(symbol.clone());
    }
    match pair.config(&args) {
        Ok(output) if output.success() => steps.push(("scripts/config".into(), output.seconds)),
        Ok(output) => {
            return fail(Real::NotRun, "scripts/config failed".into(), &output, steps);
        }
        Err(error) => {
            return Built::not_run(format!("scripts/config could not start: {error}"), steps)
        }
    }
    let output = run_make!("olddefconfig", &["olddefconfig"]);
    if !output.success() {
        return fail(
            Real::NotRun,
            "make olddefconfig failed".into(),
            &output,
            steps,
        );
    }
    let config = std::fs::read_to_string(&config_path).unwrap_or_default();
    if !config.lines().any(|line| line == "CONFIG_RUST=y") {
        let mut built = Built::not_run(
            "olddefconfig dropped CONFIG_RUST=y (Kconfig's `depends on` for RUST is not met \
             with this compiler, its library sources or the tools: see the tree's init/Kconfig); \
             nothing was built"
                .into(),
            steps,
        );
        built.warning = warning;
        return built;
    }
    let enabled_now = enabled_in(&config);
    let enabled: Vec<String> = symbols
        .iter()
        .map(|(symbol, _)| symbol.clone())
        .filter(|symbol| enabled_now.contains(symbol))
        .collect();
    let driver_objects: Vec<String> = enabled
        .iter()
        .filter(|symbol| !symbol.starts_with("SAMPLE_RUST"))
        .flat_map(|symbol| objects_of(pair.tree, symbol))
        .collect();
    let driver_count = driver_objects.len();
    let mut expected: Vec<String> = vec!["rust/core.o".into(), "rust/kernel.o".into()];
    for symbol in enabled
        .iter()
        .filter(|symbol| symbol.starts_with("SAMPLE_RUST"))
    {
        expected.extend(objects_of(pair.tree, symbol));
    }
    expected.extend(driver_objects.iter().cloned());
    // Objects this same wrapper built before are up to date for Kbuild, which would then build
    // nothing and prove nothing: they and their command records go, so that the compiler
    // builds them again now.
    let wrapper = pair.compiler.wrapper.display().to_string();
    for object in &expected {
        let cmd = pair.out.out.join(cmd_file(object));
        if std::fs::read_to_string(&cmd).is_ok_and(|text| text.contains(&wrapper)) {
            let _ = std::fs::remove_file(pair.out.out.join(object));
            let _ = std::fs::remove_file(&cmd);
        }
    }
    let output = run_make!("prepare", &["prepare"]);
    if !output.success() {
        return compiler_failure("make prepare", &output, warning, enabled, steps);
    }
    let mut targets: Vec<&str> = vec!["rust/", "samples/rust/"];
    targets.extend(driver_objects.iter().map(String::as_str));
    let output = run_make!("rust", &targets);
    if !output.success() {
        return compiler_failure(
            "make rust/ samples/rust/ and the drivers",
            &output,
            warning,
            enabled,
            steps,
        );
    }
    // The build ended; was everything really built, by this compiler, now?
    let config = std::fs::read_to_string(&config_path).unwrap_or_default();
    if !config.lines().any(|line| line == "CONFIG_RUST=y") {
        pair.out.spoil();
        let mut built = Built::not_run(
            "CONFIG_RUST=y was gone from .config after the build (not cached)".into(),
            steps,
        );
        built.warning = warning;
        return built;
    }
    let mut stale = Vec::new();
    for object in &expected {
        let path = pair.out.out.join(object);
        let cmd = cmd_file(object);
        let fresh = std::fs::metadata(&path)
            .and_then(|meta| meta.modified())
            .is_ok_and(|modified| modified >= started);
        let by_it = std::fs::read_to_string(pair.out.out.join(&cmd))
            .is_ok_and(|text| text.contains(&wrapper));
        if !fresh || !by_it {
            stale.push(format!(
                "{object} ({})",
                if !fresh {
                    "not rebuilt in this build"
                } else {
                    "its .cmd names another compiler"
                }
            ));
        }
    }
    if !stale.is_empty() {
        pair.out.spoil();
        let mut built = Built::not_run(
            format!(
                "the build said it succeeded, but {} of {} Rust objects were not built by this \
                 compiler now: {} (not cached)",
                stale.len(),
                expected.len(),
                stale.join(", ")
            ),
            steps,
        );
        built.warning = warning;
        built.enabled = enabled;
        return built;
    }
    Built {
        real: Real::Pass,
        reason: format!(
            "built prepare, rust/, samples/rust/ and {driver_count} Rust driver objects; {} Rust \
             objects checked to be this compiler's",
            expected.len()
        ),
        first_error: None,
        warning,
        cacheable: true,
        enabled,
        objects: expected.len(),
        steps,
    }
}

/// The `.cmd` file in which Kbuild records how it built `object`: `dir/.name.o.cmd`.
fn cmd_file(object: &str) -> PathBuf {
    let name = Path::new(object);
    name.parent().unwrap_or(Path::new("")).join(format!(
        ".{}.cmd",
        name.file_name().unwrap_or_default().to_string_lossy()
    ))
}

/// A build that ended with a failure the tools reported: the compiler's verdict when rustc said
/// an error, otherwise a failure that is not cached.
fn compiler_failure(
    what: &str,
    output: &ProcessOutput,
    warning: Option<String>,
    enabled: Vec<String>,
    steps: Vec<(String, f64)>,
) -> Built {
    let said = format!("{}\n{}", output.stdout, output.stderr);
    let by_rustc = said.contains("error[E") || said.lines().any(|line| line.starts_with("error: "));
    Built {
        real: Real::Fail,
        reason: if by_rustc {
            format!("{what} failed: the compiler reported an error")
        } else {
            format!("{what} failed (not cached: no compiler error was seen)")
        },
        first_error: first_error(&said).or_else(|| Some(process::last_line(&said))),
        warning,
        cacheable: by_rustc,
        enabled,
        objects: 0,
        steps,
    }
}
