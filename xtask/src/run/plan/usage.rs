// SPDX-License-Identifier: GPL-2.0
//! The usage run's plan: per toolchain the matrix's probe and kernel-mode shim (sharing its
//! outputs and cache), then one metadata-only kernel-mode compile per target (the shim, every
//! example) and enabled feature, with that feature left out of `-Zallow-features`.

use super::examples::{example_inputs, Example};
use super::rustc::{kbuild_driver_flags, mode_cfgs, Mode, Output};
use super::{plan_shim, Kind, Layout, PlannedToolchain, Step};
use crate::catalog::allowed_features;
use crate::features::expect::enabled_in_kernel_mode;
use crate::util::process::Invocation;
use anyhow::Context;
use std::path::PathBuf;

/// One usage compile of the plan: which target it compiles without which feature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageCompile {
    /// Its index in the usage run's steps.
    pub step: usize,
    pub toolchain: usize,
    /// `kernel` for the shim, or the example's name.
    pub target: String,
    /// The feature left out of `-Zallow-features`.
    pub feature: &'static str,
}

/// Makes a kernel-mode compile metadata-only, with JSON diagnostics and `allowed` less
/// `left_out` as the only features (for an example, also the only ones Kbuild's `-Zcrate-attr`
/// turns on).
fn without(mut invocation: Invocation, allowed: &[&str], left_out: &str) -> Invocation {
    let list: Vec<&str> = allowed
        .iter()
        .copied()
        .filter(|feature| *feature != left_out)
        .collect();
    let list = list.join(",");
    let driver = invocation
        .args
        .iter()
        .any(|arg| arg.starts_with("-Zcrate-attr=feature("));
    invocation.args.retain(|arg| {
        !arg.starts_with("-Zallow-features=")
            && !arg.starts_with("-Zcrate-attr=feature(")
            && !crate::catalog::KBUILD_ALLOWED_LINTS
                .iter()
                .any(|lint| arg.strip_prefix("-A") == Some(lint))
    });
    for arg in &mut invocation.args {
        if arg == "--emit=link" {
            *arg = "--emit=metadata".into();
        }
    }
    invocation.args.push("--error-format=json".into());
    if driver {
        invocation.args.extend(kbuild_driver_flags(&list));
    } else {
        invocation.args.push(format!("-Zallow-features={list}"));
    }
    invocation
}

/// Plans a usage run on the toolchains that build (the others get no step): for each, every
/// feature the shim enables in kernel mode on that release ([`enabled_in_kernel_mode`]) for the
/// shim, and those of them in the kernel's `-Zallow-features` list for every example. The
/// steps: probes and shim builds, then the usage compiles, which the second list describes.
pub fn plan_usage(
    layout: &Layout,
    toolchains: &[PlannedToolchain],
    examples: &[Example],
) -> anyhow::Result<(Vec<Step>, Vec<UsageCompile>)> {
    let building: Vec<PlannedToolchain> = toolchains
        .iter()
        .filter(|toolchain| toolchain.builds)
        .cloned()
        .collect();
    let mut steps = plan_shim(layout, &building, examples, &[Mode::Kernel])?;
    let example_files: Vec<Vec<PathBuf>> = examples
        .iter()
        .map(|example| example_inputs(&example.path))
        .collect::<anyhow::Result<_>>()?;
    let mut compiles = Vec::new();
    for toolchain in &building {
        let shim = |step: &Step| step.kind == Kind::Build && step.toolchain == toolchain.index;
        let library = steps
            .iter()
            .position(shim)
            .context("the matrix's plan has no kernel-mode shim build for a toolchain")?;
        let rlib = steps[library].artifact.clone().unwrap_or_default();
        let shim_files = steps[library].inputs.clone();
        let cfgs = mode_cfgs(toolchain.rustc.release, Mode::Kernel, None);
        let enabled: Vec<&'static str> = enabled_in_kernel_mode(toolchain.rustc.release)
            .iter()
            .map(|feature| feature.name)
            .collect();
        let allowed: Vec<&'static str> = allowed_features()
            .filter(|name| enabled.contains(name))
            .collect();
        let usage = layout.output(&toolchain.directory_name, "usage");
        let rustc = &toolchain.rustc;
        // The shim without each feature it enables; an example against the shim's rlib
        // without each feature of the kernel's `-Zallow-features` list.
        let shim = enabled.iter().map(|&feature| (None, &shim_files, feature));
        let of_examples = examples
            .iter()
            .zip(&example_files)
            .flat_map(|(example, files)| {
                allowed
                    .iter()
                    .map(move |&feature| (Some(example), files, feature))
            });
        for (example, files, feature) in shim.chain(of_examples) {
            let target = example.map_or("kernel", |example| example.name.as_str());
            let directory = usage.join(format!("{target}-{feature}"));
            let output = Output::Directory(&directory);
            let (compile, list, deps) = match example {
                None => (
                    rustc.shim(&layout.root, Mode::Kernel, &cfgs, output),
                    &enabled,
                    Vec::new(),
                ),
                Some(example) => (
                    rustc.example(example, Mode::Kernel, &cfgs, &rlib, output),
                    &allowed,
                    vec![library],
                ),
            };
            compiles.push(UsageCompile {
                step: steps.len(),
                toolchain: toolchain.index,
                target: target.to_string(),
                feature,
            });
            steps.push(Step {
                directories: vec![directory],
                inputs: files.clone(),
                deps,
                ..Step::new(
                    toolchain.index,
                    Kind::Usage,
                    target,
                    Some(Mode::Kernel),
                    vec![without(compile, list, feature)],
                )
            });
        }
    }
    Ok((steps, compiles))
}
