// SPDX-License-Identifier: GPL-2.0
//! The target axis of the plan: for every toolchain, which kernel targets it knows; and where
//! it builds and has its library sources, per kernel target `core` and `compiler_builtins`,
//! then per mode the shim, the static-key sample's object and the test program.

use super::rustc::{mode_cfgs, Builtins, Mode, Output, Rustc, TargetOutput};
use super::{Check, Kind, Layout, PlannedToolchain, Step};
use crate::catalog::Release;
use crate::targets::KernelTarget;
use crate::toolchains::library_sources::LibrarySources;
use crate::util::process::Invocation;
use std::path::{Path, PathBuf};

/// How a kernel target's test program is made and run here: the `ld.lld` that links it and the
/// emulator that runs it (`None`: natively, on the host's own architecture), or why it is not.
pub type Program = Result<(PathBuf, Option<PathBuf>), String>;

/// Why no target step runs for `target` on a toolchain, if none does: the compiler does not
/// know it, or its library sources are `missing`.
pub fn not_built(release: Release, missing: Option<&str>, target: &KernelTarget) -> Option<String> {
    if target.known_on(release) == Some(false) {
        return Some(format!(
            "rustc {release} does not know {} ({})",
            target.triple,
            target.absent_through.map_or("", |(_, why)| why)
        ));
    }
    missing.map(String::from)
}

/// Whether a build in `mode` by a compiler of `release` has static-branch (`asm goto`) sites.
pub fn has_sites(release: Release, mode: Mode) -> bool {
    mode_cfgs(release, mode, None).contains(&"kshim_has_asm_goto")
}

/// The target-list probe of every toolchain, and the target steps of those that build.
pub fn plan_targets(
    layout: &Layout,
    toolchains: &[PlannedToolchain],
    library_sources: &[Option<Result<LibrarySources, String>>],
    targets: &[&'static KernelTarget],
    programs: &[Program],
    steps: &mut Vec<Step>,
) -> anyhow::Result<()> {
    let shim_files = super::shim_inputs(&layout.root)?;
    for toolchain in toolchains {
        let Some(found) = &library_sources[toolchain.index] else {
            continue;
        };
        steps.push(Step::new(
            toolchain.index,
            Kind::Targets,
            "targets",
            None,
            vec![toolchain.rustc.print("target-list")],
        ));
        if !toolchain.builds {
            continue;
        }
        let Ok(sources) = found else {
            continue;
        };
        let sysroot = &layout.output(&toolchain.directory_name, "sysroot");
        for (&kernel_target, program) in targets.iter().zip(programs) {
            if kernel_target.known_on(toolchain.rustc.release) == Some(false) {
                continue;
            }
            let rustc = &toolchain.rustc;
            let libraries = sysroot.join(format!("lib/rustlib/{}/lib", kernel_target.triple));
            let step = |kind, target: &str, mode, processes| Step {
                directories: vec![libraries.clone()],
                kernel_target: Some(kernel_target),
                ..Step::new(toolchain.index, kind, target, mode, processes)
            };
            let core = steps.len();
            let core_rlib = libraries.join("libcore.rlib");
            steps.push(Step {
                artifact: Some(core_rlib.clone()),
                outputs: vec![core_rlib],
                // Provisioned files, keyed by their stat stamps (`cache::input_key`).
                inputs: sources.parts(),
                ..step(
                    Kind::Core,
                    "core",
                    None,
                    vec![rustc.core(sources, kernel_target.triple, &libraries)],
                )
            });
            let (builtins_crate, builtins_inputs) = match &sources.compiler_builtins {
                Some(source) => (Builtins::Sources(source), sources.parts()),
                // The empty crate: only the test program links it, and uses none of its routines.
                None => {
                    let file = layout.root.join("xtask/programs/compiler_builtins.rs");
                    (Builtins::Empty(file.clone()), vec![file])
                }
            };
            let builtins = steps.len();
            let builtins_rlib = libraries.join("libcompiler_builtins.rlib");
            let compile =
                rustc.compiler_builtins(&builtins_crate, kernel_target.triple, sysroot, &libraries);
            steps.push(Step {
                artifact: Some(builtins_rlib.clone()),
                outputs: vec![builtins_rlib],
                inputs: builtins_inputs,
                deps: vec![core],
                ..step(Kind::Core, "compiler_builtins", None, vec![compile])
            });
            for mode in Mode::ALL {
                let cfgs = mode_cfgs(rustc.release, mode, Some(kernel_target));
                let directory = layout.output(
                    &toolchain.directory_name,
                    &format!("{}-{}", mode.word(), kernel_target.triple),
                );
                let rlib = directory.join("libkernel.rlib");
                let mut shim = rustc.shim(&layout.root, mode, &cfgs, Output::Directory(&directory));
                Rustc::for_target(&mut shim, kernel_target.triple, sysroot);
                let library = steps.len();
                steps.push(Step {
                    artifact: Some(rlib.clone()),
                    directories: vec![directory.clone()],
                    inputs: shim_files.to_vec(),
                    deps: vec![builtins],
                    outputs: vec![rlib.clone()],
                    ..step(Kind::Build, "kernel", Some(mode), vec![shim])
                });
                let target_crate = |source: &Path, name, output: TargetOutput<'_>| {
                    let mut invocation =
                        rustc.target_crate(source, name, mode, &cfgs, &rlib, output);
                    Rustc::for_target(&mut invocation, kernel_target.triple, sysroot);
                    invocation
                };
                let object = directory.join("kshim_sites.o");
                let sites = layout.root.join(crate::targets::jump_table::SAMPLE_PATH);
                let compile = target_crate(&sites, "kshim_sites", TargetOutput::Object(&object));
                let expected = match has_sites(rustc.release, mode) {
                    true => crate::targets::jump_table::SAMPLE_SITES,
                    false => &[],
                };
                steps.push(Step {
                    directories: vec![directory.clone()],
                    inputs: vec![sites],
                    deps: vec![library],
                    outputs: vec![object.clone()],
                    check: Some(Check::JumpTable {
                        object,
                        arch: kernel_target.arch,
                        expected,
                    }),
                    ..step(Kind::Objects, "sites", Some(mode), vec![compile])
                });
                let Ok((linker, emulator)) = program else {
                    continue;
                };
                let binary = directory.join("kshim_run");
                let source = layout.root.join("xtask/programs/run.rs");
                let output = TargetOutput::Program {
                    binary: &binary,
                    linker,
                };
                let build = target_crate(&source, "kshim_run", output);
                // The linker and the emulator decide the cell as much as the sources do.
                let linux = layout.root.join("xtask/programs/linux.rs");
                let mut inputs = vec![source, linux, linker.clone()];
                let run = match emulator {
                    Some(emulator) => {
                        inputs.push(emulator.clone());
                        Invocation::new(emulator, vec![binary.to_string_lossy().into_owned()])
                    }
                    None => Invocation::new(&binary, Vec::new()),
                };
                steps.push(Step {
                    directories: vec![directory.clone()],
                    inputs,
                    deps: vec![library],
                    outputs: vec![binary],
                    ..step(Kind::Emulate, "program", Some(mode), vec![build, run])
                });
            }
        }
    }
    Ok(())
}
