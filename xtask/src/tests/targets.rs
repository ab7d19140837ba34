// SPDX-License-Identifier: GPL-2.0
//! The matrix's target axis on real compilers (`--target`'s refusals are tested in `tests/`):
//! a compiler that does not know a target, one without its library sources, a whole run on
//! a kernel target (core, the shim, the static-key sample's sites, the test program under qemu)
//! and its cache, and a `core` build that dies, which must leave nothing cached.
//!
//! They run the real `xtask` binary on this checkout, with Debian's compilers that
//! `cargo xtask toolchains install --no-rustup` provisions (CI does so before the tests; a
//! test whose compiler is not there fails and says so) and the pinned rustup toolchain.

use crate::project_root;
use crate::tests::support::{scratch_dir, the_checkouts_lock, xtask_binary};
use crate::toolchains::discovery::{discover, Availability, Toolchain, VERSION_TIMEOUT};
use crate::toolchains::library_sources::library_sources;
use crate::toolchains::pins::Pins;
use crate::util::json::{self, Value};
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

/// What a finished `xtask matrix` left.
struct Finished {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl Finished {
    /// The JSON report it printed.
    fn report(&self) -> Value {
        json::parse(&self.stdout)
            .unwrap_or_else(|error| panic!("no JSON report ({error}); stderr:\n{}", self.stderr))
    }
}

/// Runs `xtask matrix ARGS`, failing the test if it runs longer than `deadline` (a hang).
fn matrix_within(deadline: Duration, args: &[&str]) -> Finished {
    let mut child = Command::new(xtask_binary())
        .arg("matrix")
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting xtask");
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text);
        text
    });
    let stdout = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = out.read_to_string(&mut text);
        text
    });
    let status =
        crate::tests::support::wait_within(&mut child, deadline, &format!("xtask matrix {args:?}"));
    let finished = Finished {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    };
    assert!(
        !finished.stderr.contains("panicked"),
        "xtask matrix {args:?} panicked:\n{}",
        finished.stderr
    );
    finished
}

fn matrix(args: &[&str]) -> Finished {
    matrix_within(Duration::from_secs(600), args)
}

const PROVISION: &str = "run `cargo xtask toolchains install --no-rustup` first";

/// The provisioned Debian compiler of the pin `id`, by the path of its rustc (a `debian:`
/// spec would provision it on the spot), which must have its library sources if
/// `with_sources`; the test fails, saying how to provision it, when it is not there.
pub(super) fn provisioned(id: &str, with_sources: bool) -> (String, Toolchain) {
    let pins = Pins::load(&Pins::default_path()).unwrap();
    let debian = pins
        .pins
        .iter()
        .find(|pin| pin.id == id)
        .and_then(|pin| pin.debian.clone())
        .unwrap_or_else(|| panic!("no pin {id} with a Debian source"));
    assert!(debian.version.is_some(), "an exact Debian version");
    // The prefix under this checkout's `target/toolchains` whose marker names exactly that
    // source, whatever the prefix's name.
    let rustc = crate::toolchains::debian::provisioned_prefixes(
        &crate::toolchains::debian::toolchains_dir(),
    )
    .into_iter()
    .find(|(_, found)| *found == debian)
    .map(|(prefix, _)| prefix)
    .unwrap_or_else(|| project_root().join("target/toolchains/debian/(none)"))
    .join("usr/bin/rustc");
    assert!(
        rustc.is_file(),
        "Debian's {debian} is not provisioned here ({} is missing): {PROVISION}",
        rustc.display()
    );
    let path = rustc.display().to_string();
    let sh = xshell::Shell::new().unwrap();
    let found = discover(
        &sh,
        None,
        std::slice::from_ref(&path),
        VERSION_TIMEOUT,
        crate::toolchains::debian::Provisioning::Allowed,
    )
    .unwrap();
    match found.into_iter().next() {
        Some(Availability::Found { toolchain, version }) => {
            if with_sources {
                if let Err(why) = library_sources(&toolchain, &version) {
                    panic!("Debian's {debian} has no library sources here ({why}): {PROVISION}");
                }
            }
            (path, toolchain)
        }
        Some(Availability::Broken { error, .. }) => {
            panic!("Debian's {debian} does not work here ({error}): {PROVISION}")
        }
        _ => panic!("Debian's {debian} was not found at {path}: {PROVISION}"),
    }
}

/// The string member `key` of a report object.
fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} is no string: {value}"))
}

/// The report's target cells on `triple`.
fn target_cells<'a>(report: &'a Value, triple: &str) -> Vec<&'a Value> {
    report["targets"]["cells"]
        .as_array()
        .expect("targets.cells")
        .iter()
        .filter(|cell| cell["target"] == triple)
        .collect()
}

/// Core, compiler_builtins, and three stages in each of two modes.
const CELLS_PER_TARGET: usize = 8;

// ---------------------------------------------------------------------------------------------
// Compilers the cross builds leave out.

#[test]
fn a_compiler_that_does_not_know_a_target_says_so_and_builds_nothing() {
    let _turn = the_checkouts_lock();
    let (spec, _) = provisioned("debian-1.48.0", false);
    let finished = matrix(&[
        "--toolchain",
        &spec,
        "--target",
        "loongarch64-unknown-none",
        "--target",
        "aarch64-unknown-none",
        "--format",
        "json",
    ]);
    let report = finished.report();
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    assert_eq!(report["verdict"], "success");
    let toolchain = &report["toolchains"][0];
    assert_eq!(toolchain["release"], "1.48.0");
    assert_eq!(toolchain["verdict"], "too-old");
    let id = text(toolchain, "id");
    let axis = &report["targets"];
    let mut targets: Vec<&str> = axis["triples"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    targets.sort_unstable();
    assert_eq!(
        targets,
        ["aarch64-unknown-none", "loongarch64-unknown-none"]
    );
    let known = axis["known"].as_array().unwrap();
    assert_eq!(known.len(), 2, "{known:?}");
    for (triple, listed) in [
        ("loongarch64-unknown-none", false),
        ("aarch64-unknown-none", true),
    ] {
        let cell = known
            .iter()
            .find(|cell| cell["target"] == triple)
            .unwrap_or_else(|| panic!("no known cell for {triple}"));
        assert_eq!(cell["toolchain"], id);
        assert_eq!(cell["observed"], listed, "{cell}");
        assert_eq!(cell["expected"], listed, "{cell}");
        assert_eq!(cell["error"], Value::Null, "{cell}");
        assert_eq!(cell["ok"], true, "{cell}");
        let cells = target_cells(&report, triple);
        assert_eq!(cells.len(), CELLS_PER_TARGET, "{cells:?}");
        for cell in cells {
            assert_eq!(cell["outcome"], "skipped", "{cell}");
            assert_eq!(cell["expected"], "skipped", "{cell}");
            assert_eq!(cell["ok"], true, "{cell}");
            assert_eq!(
                cell["first_error"], "not run: the toolchain is too-old",
                "{cell}"
            );
        }
    }
}

#[test]
fn a_compiler_without_its_library_sources_names_the_command_that_adds_them() {
    let _turn = the_checkouts_lock();
    // rustup's toolchains as a fresh machine has them lack rust-src; `toolchains install` adds it.
    let without_sources = ["1.95.0", "stable", "nightly"].into_iter().find(|name| {
        Command::new("rustc")
            .args([&format!("+{name}"), "--print", "sysroot"])
            .output()
            .ok()
            .filter(|output| output.status.success())
            .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
            .is_some_and(|sysroot| {
                !Path::new(&sysroot)
                    .join("lib/rustlib/src/rust/library/core")
                    .exists()
            })
    });
    let Some(rustup) = without_sources else {
        eprintln!("skipped: every rustup toolchain here has rust-src");
        return;
    };
    let finished = matrix(&[
        "--toolchain",
        rustup,
        "--target",
        "aarch64-unknown-none",
        "--format",
        "json",
    ]);
    let report = finished.report();
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    assert_eq!(report["verdict"], "success");
    let toolchain = &report["toolchains"][0];
    assert_eq!(toolchain["source"], "rustup", "{toolchain}");
    assert_eq!(toolchain["verdict"], "ok", "{toolchain}");
    let sysroot = Path::new(text(toolchain, "rustc"))
        .parent()
        .unwrap()
        .parent()
        .unwrap();
    assert!(
        !sysroot.join("lib/rustlib/src/rust/library/core").exists(),
        "this test needs {rustup} without its rust-src component, which {} has",
        sysroot.display()
    );
    let sentence =
        format!("no library sources: run `rustup component add rust-src --toolchain {rustup}`");
    let sources = &report["targets"]["sources"][text(toolchain, "id")];
    assert_eq!(sources["missing"], sentence.as_str(), "{sources}");
    let known = &report["targets"]["known"][0];
    assert_eq!(known["observed"], true, "{known}");
    assert_eq!(known["ok"], true, "{known}");
    let cells = target_cells(&report, "aarch64-unknown-none");
    assert_eq!(cells.len(), CELLS_PER_TARGET, "{cells:?}");
    for cell in cells {
        assert_eq!(cell["outcome"], "skipped", "{cell}");
        assert_eq!(cell["expected"], "skipped", "{cell}");
        assert_eq!(cell["first_error"], sentence.as_str(), "{cell}");
    }
}

// ---------------------------------------------------------------------------------------------
// Whole runs on kernel targets.

/// Asserts that every target cell of `triple` passed as predicted, and returns them.
fn all_pass<'a>(report: &'a Value, triple: &str) -> Vec<&'a Value> {
    let cells = target_cells(report, triple);
    assert_eq!(cells.len(), CELLS_PER_TARGET, "{cells:?}");
    for cell in &cells {
        assert_eq!(cell["outcome"], "pass", "{cell}");
        assert_eq!(cell["expected"], "pass", "{cell}");
        assert_eq!(cell["first_error"], Value::Null, "{cell}");
    }
    cells
}

/// How many static-branch sites the sample has, by its own declaration.
fn sample_sites() -> usize {
    crate::targets::jump_table::SAMPLE_SITES
        .iter()
        .map(|&(_, count)| count)
        .sum()
}

#[test]
fn a_whole_target_run_checks_sites_and_runs_the_program_then_comes_from_the_cache() {
    // Also keeps the other test that builds with Debian's 1.96.0 from writing into the same
    // directories (named after the release) between this test's two runs.
    let _turn = the_checkouts_lock();
    let (spec, _) = provisioned("debian-1.96.0", true);
    let triple = "riscv64imac-unknown-none-elf";
    let run = || {
        let finished = matrix(&["--toolchain", &spec, "--target", triple, "--format", "json"]);
        assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
        let report = finished.report();
        assert_eq!(report["verdict"], "success");
        report
    };
    let first = run();
    let toolchain = &first["toolchains"][0];
    assert_eq!(toolchain["release"], "1.96.0", "{toolchain}");
    let sources = &first["targets"]["sources"][text(toolchain, "id")];
    assert!(
        text(sources, "identity").starts_with("rust-web-src=1.96.0+"),
        "the compiler's own sources: {sources}"
    );
    // asm_goto is stable on 1.96, so stable mode has the sites as kernel mode does.
    let sites = format!(
        "{} static-branch sites, each a NOP with its __jump_table entry",
        sample_sites()
    );
    for cell in all_pass(&first, triple) {
        match text(cell, "stage") {
            "sites" => assert_eq!(cell["detail"], sites.as_str(), "{cell}"),
            "program" => {
                let detail = text(cell, "detail");
                let checks = detail
                    .strip_prefix("ok: ")
                    .and_then(|rest| rest.strip_suffix(" checks"))
                    .and_then(|count| count.parse::<usize>().ok());
                assert!(checks.is_some_and(|count| count > 0), "{cell}");
            }
            _ => {}
        }
    }
    let second = run();
    for cell in all_pass(&second, triple) {
        assert_eq!(cell["cached"], true, "{cell}");
    }
    for build in second["builds"].as_array().unwrap() {
        if build["outcome"] != "skipped" {
            assert_eq!(build["cached"], true, "{build}");
        }
    }
    let findings = |report: &Value| -> Vec<(Value, Value, Value)> {
        target_cells(report, triple)
            .iter()
            .map(|cell| {
                (
                    cell["stage"].clone(),
                    cell["mode"].clone(),
                    cell["detail"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(
        findings(&first),
        findings(&second),
        "the cache keeps what was found"
    );
}

/// A wrapper around `real` that kills itself (SIGKILL) instead of compiling `core` for
/// `victim` while the file `die` exists; everything else it hands to the real compiler, in the
/// environment the matrix gives that compiler. Its sysroot is the real one's, in the Debian
/// prefix, so the matrix finds the Debian compiler's library sources for it.
fn dying_wrapper(dir: &Path, real: &Toolchain, victim: &str, die: &Path) -> String {
    let quote = |text: &str| {
        assert!(!text.contains('\''), "no quotes in {text}");
        format!("'{text}'")
    };
    let mut script = String::from("#!/bin/sh\n");
    for (name, value) in &real.launch.env {
        script.push_str(&format!("export {name}={}\n", quote(value)));
    }
    script.push_str(&format!(
        "case \" $* \" in *' --crate-name core '*)\n\
         \x20   case \" $* \" in *' --target {victim} '*)\n\
         \x20       [ -e {die} ] && kill -KILL $$;;\n\
         \x20   esac;;\n\
         esac\n\
         exec {real} \"$@\"\n",
        die = quote(&die.display().to_string()),
        real = quote(&real.launch.rustc.display().to_string()),
    ));
    let wrapper = dir.join("rustc");
    std::fs::write(&wrapper, script).unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    wrapper.display().to_string()
}

#[test]
fn a_core_build_that_dies_leaves_nothing_cached_and_the_other_target_carries_on() {
    let _turn = the_checkouts_lock();
    let (spec, real) = provisioned("debian-1.96.0", true);
    assert!(
        real.launch.loader.is_none(),
        "{spec} runs through its own loader here, which the wrapper does not start"
    );
    let dir = scratch_dir("targets-core-dies");
    let (victim, bystander) = ("aarch64-unknown-none", "x86_64-unknown-none");
    let die = dir.join("die");
    std::fs::write(&die, "").unwrap();
    let wrapper = dying_wrapper(&dir, &real, victim, &die);
    let run = || {
        matrix(&[
            "--toolchain",
            &wrapper,
            "--target",
            victim,
            "--target",
            bystander,
            "--format",
            "json",
        ])
    };

    let killed = run();
    assert_eq!(killed.status.code(), Some(1), "{}", killed.stderr);
    let report = killed.report();
    assert_eq!(report["verdict"], "failure");
    let toolchain = &report["toolchains"][0];
    assert_eq!(toolchain["source"], "path", "{toolchain}");
    let sources = &report["targets"]["sources"][text(toolchain, "id")];
    assert!(
        text(sources, "identity").starts_with("rust-web-src=1.96.0+"),
        "a wrapper of a provisioned Debian compiler has its sources: {sources}"
    );
    let cells = target_cells(&report, victim);
    assert_eq!(cells.len(), CELLS_PER_TARGET, "{cells:?}");
    for cell in &cells {
        assert_eq!(cell["expected"], "pass", "{cell}");
        assert_eq!(cell["cached"], false, "{cell}");
        let error = text(cell, "first_error");
        match text(cell, "stage") {
            "core" => {
                assert_eq!(cell["outcome"], "fail", "{cell}");
                assert!(error.contains("killed by signal 9 (SIGKILL)"), "{cell}");
            }
            "compiler_builtins" => {
                assert_eq!(cell["outcome"], "skipped", "{cell}");
                assert_eq!(error, format!("not run: core core for {victim} failed"));
            }
            _ => {
                assert_eq!(cell["outcome"], "skipped", "{cell}");
                assert!(
                    error.starts_with("not run: ")
                        && error.ends_with(&format!(" for {victim} did not run")),
                    "{cell}"
                );
            }
        }
    }
    let failures = report["failures"].as_array().unwrap();
    assert_eq!(
        failures.len(),
        CELLS_PER_TARGET,
        "the victim's cells, nothing else: {failures:?}"
    );
    for cell in all_pass(&report, bystander) {
        if cell["stage"] == "program" {
            assert!(text(cell, "detail").starts_with("ok: "), "{cell}");
        }
    }

    std::fs::remove_file(&die).unwrap();
    let rerun = run();
    assert_eq!(rerun.status.code(), Some(0), "{}", rerun.stderr);
    let report = rerun.report();
    assert_eq!(report["verdict"], "success");
    for cell in all_pass(&report, victim) {
        assert_eq!(
            cell["cached"], false,
            "nothing of the killed run is kept: {cell}"
        );
    }
    for cell in all_pass(&report, bystander) {
        assert_eq!(cell["cached"], true, "{cell}");
    }
}
