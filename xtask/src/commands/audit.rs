// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask audit`: which of a crate's `#![feature]` lines each toolchain still needs, and
//! what that means across them ([`crate::report::audit`]); with `--usage`, [`compile`] plans
//! the compiles without each gated feature (with only the flags [`rustc_args`] keeps) as steps
//! of the one run.

pub mod compile;
pub mod rustc_args;

use crate::catalog::Release;
use crate::features::kconfig;
use crate::report::assemble::toolchain_entry;
pub use crate::report::audit::{input, summary, AuditReport, Column, Probed};
use crate::run::cache::compiler_identity;
pub use crate::run::crate_root::probing;
use crate::run::driver::Settings;
use crate::run::plan::Rustc;
use crate::toolchains::debian::Provisioning;
use crate::toolchains::discovery::{discover, Availability, VERSION_TIMEOUT};
use crate::util::interrupt::run_interruptible;
use crate::util::output::{Format, Output};
use crate::{commands::flags, project_root, Verdict};
use anyhow::{bail, Context};
use input::Input;
use std::path::{Path, PathBuf};
use summary::Decider;
use xshell::Shell;

/// Everything an audit needs, as the flags give it.
#[derive(Clone, Debug)]
pub struct Options {
    pub input: Input,
    /// `--toolchain` specs; empty means every pin.
    pub toolchains: Vec<String>,
    pub pins: Option<PathBuf>,
    pub min_rust: Option<Release>,
    pub kconfig: Option<PathBuf>,
    /// Where the probes are written and compiled (a directory per toolchain, removed after).
    pub scratch: PathBuf,
}

impl Options {
    /// The defaults for an input: every pin, no lint, probes under `target/kshim/audit/`.
    pub fn new(input: Input) -> Self {
        Self {
            input,
            toolchains: Vec::new(),
            pins: None,
            min_rust: None,
            kconfig: None,
            scratch: project_root().join("target/kshim/audit"),
        }
    }
}

/// Reads `--min-rust`: `1.85` or `1.85.0`.
pub fn parse_min_rust(text: &str) -> anyhow::Result<Release> {
    Release::parse(text)
        .or_else(|| Release::parse(&format!("{text}.0")))
        .with_context(|| format!("--min-rust takes a release such as 1.85 or 1.85.0, not {text:?}"))
}

/// Discovers the toolchains, probes each that runs (in parallel), and sums up.
pub fn run_audit(options: &Options) -> anyhow::Result<AuditReport> {
    let sh = Shell::new()?;
    // A relative `--toolchain` path is from the project root, as for `matrix`.
    sh.change_dir(project_root());
    let availabilities = discover(
        &sh,
        options.pins.as_deref(),
        &options.toolchains,
        VERSION_TIMEOUT,
        Provisioning::Allowed,
    )?;
    let mut given = Vec::new();
    if let Some(path) = &options.kconfig {
        given = kconfig::read_kconfig_file(path)?;
        if given.is_empty() {
            eprintln!(
                "audit: --kconfig {} defines no RUSTC_HAS_* release threshold (a tree from \
                 before them, such as 6.1); the built-in table decides",
                path.display()
            );
        }
    }
    // The trees `toolchains.toml` pins, whichever pin file gives the compilers.
    let pins = crate::toolchains::pins::Pins::load(&crate::toolchains::pins::Pins::default_path())?;
    let kernel_root = crate::project_root().join("target/kernel");
    let pinned = crate::kernel::rules::pinned::pinned_kconfig(&pins, &kernel_root)?;
    let kconfig = kconfig::with_given(pinned, given);
    let scratch = options.scratch.join(std::process::id().to_string());
    let columns: Vec<Column> = crate::in_parallel(availabilities, |index, availability| {
        column(availability, options, &scratch, index)
    });
    let _ = std::fs::remove_dir_all(&scratch);
    // Every compiler here builds for the host: the first to print its cfgs speaks for the target.
    let mut compilers = columns.iter().filter_map(|column| column.rustc.as_ref());
    let target = compilers.find_map(|rustc| probing::print_cfg(rustc).ok());
    let decider = Decider::new(&options.input, target.unwrap_or_default(), kconfig);
    Ok(AuditReport::new(
        options.input.clone(),
        decider,
        columns,
        options.min_rust,
    ))
}

fn column(availability: Availability, options: &Options, scratch: &Path, index: usize) -> Column {
    let name = crate::run::plan::directory_name(availability.id());
    let directory = scratch.join(format!("{index}-{name}"));
    let mut column = Column {
        entry: toolchain_entry(&availability),
        probed: Probed::Unavailable,
        rustc: None,
        identity: None,
    };
    let Availability::Found { toolchain, version } = availability else {
        return column;
    };
    let rustc = Rustc::of(&toolchain, version.release);
    let prober = probing::Prober::for_input(&rustc, &options.input, &directory);
    column.probed = prober.probe(&options.input.names()).map_or_else(
        |error| Probed::Failed(format!("{error:#}")),
        Probed::Answered,
    );
    column.identity = Some(compiler_identity(&toolchain.launch, &version));
    column.rustc = Some(rustc);
    column
}

impl flags::Audit {
    /// Reads the flags into [`Options`] and the output format, rejecting bad values.
    pub fn options(&self) -> anyhow::Result<(Options, Format)> {
        let format = Format::parse(self.format.as_deref().unwrap_or("human"))?;
        let input = match (&self.path, &self.features) {
            (Some(_), Some(_)) => bail!("give a crate root or --features, not both"),
            (None, None) => bail!(
                "give a crate root (`cargo xtask audit path/to/lib.rs`) or a list \
                 (`cargo xtask audit --features a,b,c`)"
            ),
            (Some(path), None) => input::read_crate_root(path)?,
            (None, Some(list)) => input::read_feature_list(list)?,
        };
        let mut options = Options::new(input);
        options.toolchains = crate::toolchains::pins::with_range(
            &self.toolchain,
            self.pins.as_deref(),
            self.version_range.as_deref(),
        )?;
        options.pins = self.pins.clone();
        options.kconfig = self.kconfig.clone();
        options.min_rust = match (&self.min_rust, &options.input.path) {
            (Some(text), _) => Some(parse_min_rust(text)?),
            // As cargo-msrv does: a package's `rust-version` is its minimum.
            (None, Some(root)) => input::package_manifest(root)
                .and_then(|manifest| package_rust_version(&manifest))
                .map(|(manifest, text)| {
                    let release = parse_min_rust(&text)
                        .with_context(|| format!("the rust-version of {}", manifest.display()))?;
                    eprintln!(
                        "audit: --min-rust {release}, the rust-version of {}",
                        manifest.display()
                    );
                    anyhow::Ok(release)
                })
                .transpose()?,
            (None, None) => None,
        };
        Ok((options, format))
    }

    pub fn run(&self, _sh: &Shell, output: Output) -> anyhow::Result<Verdict> {
        let (options, format) = self.options()?;
        let usage_only = [
            ("--rustc-args", self.rustc_args.is_some()),
            ("-j/--jobs", self.jobs.is_some()),
            ("--no-cache", self.no_cache),
            ("--timeout", self.timeout.is_some()),
        ];
        if let Some((flag, _)) = usage_only.iter().find(|(_, given)| *given && !self.usage) {
            bail!("{flag} is for --usage");
        }
        let settings = Settings::new("audit", self.jobs, self.timeout, self.no_cache, output)?;
        let compile = self
            .usage
            .then(|| compile::Compile::for_input(&options.input, self.rustc_args.as_deref()))
            .transpose()?;
        let report = run_audit(&options)?;
        if let Some(compile) = compile {
            let usage = run_interruptible(|| report.usage(&compile, settings))?;
            return Ok(format.print_report(
                usage.verdict(),
                output,
                || usage.to_json(),
                || usage.markdown(),
                |_| usage.human(),
            ));
        }
        Ok(format.print_report(
            report.verdict(),
            output,
            || report.to_json(),
            || report.text(None),
            |style| report.text(Some(style)),
        ))
    }
}

/// The `rust-version` of the package whose manifest is `manifest`, as `cargo metadata` reads it
/// (workspace inheritance included), with the manifest's path; `None` where it has none or
/// cargo cannot read it (then the audit runs without a minimum, as without `--min-rust`).
fn package_rust_version(manifest: &Path) -> Option<(PathBuf, String)> {
    let manifest = std::fs::canonicalize(manifest).ok()?;
    let sh = Shell::new().ok()?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = xshell::cmd!(
        sh,
        "{cargo} metadata --no-deps --format-version 1 --offline --manifest-path {manifest}"
    )
    .quiet()
    .ignore_stderr()
    .read()
    .ok()?;
    let metadata = crate::util::json::parse(&output).ok()?;
    let package = metadata["packages"].as_array()?.iter().find(|package| {
        package["manifest_path"].as_str().map(Path::new) == Some(manifest.as_path())
    })?;
    let version = package["rust_version"].as_str()?.to_string();
    Some((manifest, version))
}
