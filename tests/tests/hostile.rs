// SPDX-License-Identifier: GPL-2.0
//! Hostile inputs and machines: FIFOs, devices and directories refused at once, a tree that is
//! no checkout, a kernel tree whose own text would reach a terminal or a page raw, a machine
//! without `cc`, a machine out of resources, a linker that writes nothing, and faults under the
//! outputs and the cache made for real (a read-only bind mount, a full tmpfs).
//!
//! Every input is generated here, none is a fixture.

mod audit;

use crate::support::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn fifos_devices_and_directories_are_refused_at_once() {
    let directory = scratch_dir("hostile-fifos");
    let fifo = directory.join("fifo.json");
    make_fifo(&fifo);
    let pins = directory.join("pins.toml");
    pin_file(&pins, 2);
    let fifo = path_str(&fifo);
    for report in [fifo, "/dev/zero", path_str(&directory)] {
        xtask(&["merge", "--pins", path_str(&pins), report])
            .run()
            .refused("not a regular file");
        xtask(&["docs", "--check", "--report", report])
            .run()
            .refused("not a regular file");
    }
    let tree = tiny_tree("hostile-fifo-pins");
    xtask(&["matrix", "--root", path_str(&tree), "--pins", fifo])
        .run()
        .refused("reading the pin file")
        .stderr_has("it is a FIFO, not a regular file");
}

#[test]
fn a_tree_that_is_no_checkout_or_a_machine_without_cc_is_one_error() {
    let not_a_checkout = scratch_dir("hostile-not-a-checkout");
    xtask(&["matrix", "--root", path_str(&not_a_checkout)])
        .run()
        .refused("not a kshim checkout (it has no kernel-shim/src/lib.rs)");
    assert!(
        !not_a_checkout.join("target").exists(),
        "--root created target/ before it failed"
    );

    let tree = tiny_tree("hostile-no-cc");
    let rustc = current_rustc();
    xtask(&["matrix", "--root", path_str(&tree), "--toolchain"])
        .arg(&rustc)
        .args(["--target", "none"])
        .env("PATH", "/nonexistent")
        .run_within(Duration::from_secs(60))
        .refused("no `cc` on PATH (/nonexistent)");
    assert!(
        !tree.join("target/kshim/matrix-report.json").exists(),
        "a report was written"
    );
}

#[test]
fn audit_inputs_that_are_no_files_are_refused_at_once() {
    let directory = scratch_dir("hostile-audit");
    let root = directory.join("lib.rs");
    let kconfig = directory.join("Kconfig");
    make_fifo(&root);
    make_fifo(&kconfig);
    xtask(&["audit", path_str(&root)])
        .run()
        .refused("it is a FIFO, not a regular file");
    xtask(&["audit", "--features", "lint_reasons", "--kconfig"])
        .arg(&kconfig)
        .run()
        .refused("it is a FIFO, not a regular file");
}

/// An EXTRAVERSION that would set the terminal's title, clear its screen, and run a script in a
/// page that showed it raw.
const EXTRAVERSION: &str = "-<script>alert(1)</script>\x1b]0;owned\x07\x1b[2J";

/// A Linux 5.10 tree (no `rust/`): `kernel` reads its version and says it has no Rust.
fn hostile_kernel_tree() -> PathBuf {
    let root = scratch_dir("hostile-text").join("linux");
    for (relative, text) in [
        (
            "Makefile",
            format!(
                "VERSION = 5\nPATCHLEVEL = 10\nSUBLEVEL = 246\nEXTRAVERSION = {EXTRAVERSION}\n"
            ),
        ),
        ("scripts/config", "#!/bin/sh\n".into()),
        ("scripts/Makefile.build", "# no Rust here\n".into()),
        ("init/Kconfig", "config CC_VERSION_TEXT\n\tstring\n".into()),
    ] {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    root
}

/// Before: the human output and the progress lines carried ESC and BEL raw (with `NO_COLOR`),
/// and `--format markdown` wrote `<script>` as it was.
#[test]
fn a_kernel_trees_own_text_reaches_no_output_raw() {
    let tree = hostile_kernel_tree();
    let rustc = current_rustc();
    for format in ["human", "markdown", "json"] {
        let run = xtask(&["kernel", "--tree", path_str(&tree), "--toolchain"])
            .arg(&rustc)
            .args(["--format", format])
            .run();
        run.success().check(
            !run.stdout.contains(['\x1b', '\x07']) && !run.stderr.contains(['\x1b', '\x07']),
            &format!("--format {format}: a control character in the output"),
        );
        let said = match format {
            "human" => "5.10.246-<script>alert(1)</script>\\e]0;owned\\u{7}\\e[2J",
            "markdown" => {
                "5.10.246-\\<script\\>alert(1)\\</script\\>\\\\e\\]0;owned\\\\u{7}\\\\e\\[2J"
            }
            // JSON escapes control characters itself.
            _ => "5.10.246-<script>alert(1)</script>\\u001b]0;owned\\u0007\\u001b[2J",
        };
        run.stdout_has(said);
        if format == "markdown" {
            let unescaped = run.stdout.replace("\\<", "");
            run.check(!unescaped.contains('<'), "a raw `<` in Markdown");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// False results kept in the cache.

#[test]
fn a_machine_out_of_resources_is_never_cached_and_jobs_are_capped() {
    let root = tiny_tree("hostile-resources");
    let victim = catalog_examples()[0];
    // A compiler that, for one example, fails as rustc does when the machine cannot start the
    // linker; everything else it passes to the real compiler.
    let wrapper = script(
        &root.join("bin/rustc"),
        &format!(
            "case \" $* \" in *'/{victim}.rs '*)\n\
             echo 'error: could not exec the linker `cc`: Resource temporarily unavailable (os error 11)' >&2\n\
             exit 1;;\nesac\nexec '{}' \"$@\"\n",
            current_rustc().display()
        ),
    );
    let run = || {
        xtask(&["matrix", "--root", path_str(&root), "--toolchain"])
            .arg(&wrapper)
            .args(["--target", "none", "--format", "json", "-j", "100000"])
            .run_within(Duration::from_secs(300))
    };
    run().code(1).stderr_has("-j 100000 lowered to");
    let second = run();
    let report = second.code(1).json();
    let mut victims = 0;
    for build in report["builds"].as_array().unwrap() {
        let ran = build["outcome"] != "skipped";
        if build["target"] == victim && build["kind"] == "build" {
            victims += 1;
            second.check(
                build["outcome"] == "fail" && build["cached"] == false,
                &format!("the machine's failure was cached: {build}"),
            );
        } else if ran && build["target"] != victim {
            second.check(build["cached"] == true, &format!("not cached: {build}"));
        }
    }
    assert_eq!(victims, 2);
    for entry in std::fs::read_dir(root.join("target/kshim/cache")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default();
        assert!(!text.contains("Resource temporarily unavailable"), "{text}");
    }
}

#[test]
fn a_linker_that_writes_nothing_fails_links_instead_of_running_old_binaries() {
    let root = tiny_tree("hostile-silent-cc");
    let (first, before) = host_matrix(&root, &[]);
    first.success();
    // A `cc` first on the PATH the xtask hands its compilers: it exits 0 and writes nothing.
    let bin = root.join("silent-bin");
    script(&bin.join("cc"), "exit 0\n");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let rustc = current_rustc();
    let silent = xtask(&["matrix", "--root", path_str(&root), "--toolchain"])
        .arg(&rustc)
        .args(["--target", "none", "--format", "json", "--no-cache"])
        .env("PATH", &path)
        .run_within(Duration::from_secs(120));
    let report = silent.code(1).json();
    let builds = report["builds"].as_array().unwrap();
    let passed_before = before["builds"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|build| build["outcome"] == "pass")
        .count();
    // Every cell links a program (a test harness or an example), except the shim's library
    // build: none of those may pass on binaries of the run before.
    let linked: Vec<&Value> = builds
        .iter()
        .filter(|build| !(build["target"] == "kernel" && build["kind"] == "build"))
        .collect();
    assert!(!linked.is_empty() && passed_before > linked.len() / 2);
    for build in linked {
        silent.check(
            build["outcome"] != "pass" && build["cached"] == false,
            &format!("an old binary was judged: {build}"),
        );
    }
    silent.stdout_has("did not write");
}

// ---------------------------------------------------------------------------------------------
// Faults of the machine under a run's outputs, made for real as root. Without root the tests
// say they skipped; under `CI=true` a test that cannot mount fails.

/// A mount this test made, undone however the test ends (lazily, should a process still hold a
/// file under it).
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        if !quietly("umount", &[path_str(&self.0)]) {
            quietly("umount", &["-l", path_str(&self.0)]);
        }
    }
}

/// Runs each `mount` command line in turn, the first of which mounts on `point`; `None` when
/// the host does not let the test mount (not root), a failure under `CI=true`.
fn mounted(point: &Path, commands: &[&[&str]]) -> Option<Mounted> {
    let mut guard = None;
    for args in commands {
        let output = Command::new("mount")
            .args(*args)
            .stdin(Stdio::null())
            .output();
        if !output.as_ref().is_ok_and(|output| output.status.success()) {
            let why = match &output {
                Ok(output) => String::from_utf8_lossy(&output.stderr).into_owned(),
                Err(error) => error.to_string(),
            };
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true, and mount {args:?} failed: {why}"
            );
            eprintln!("skipped: mount {args:?} failed (not root?): {why}");
            return None;
        }
        guard.get_or_insert_with(|| Mounted(point.to_path_buf()));
    }
    guard
}

/// The build cells that ran and failed, and how many of those came from the cache.
fn failures(report: &Value) -> (usize, usize) {
    let failed: Vec<&Value> = report["builds"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|build| build["outcome"] == "fail")
        .collect();
    let cached = failed
        .iter()
        .filter(|build| build["cached"] == true)
        .count();
    (failed.len(), cached)
}

/// The one toolchain's output directory of a run on `root`.
fn output_directory(root: &Path) -> PathBuf {
    let directories: Vec<PathBuf> = std::fs::read_dir(root.join("target/kshim/matrix"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect();
    assert_eq!(directories.len(), 1, "{directories:?}");
    directories.into_iter().next().unwrap()
}

/// A fault under the output directory (read-only, or a full disk) fails cells with the system's
/// error; once the fault is gone, the next run builds them again and they pass.
fn machine_fault_is_not_cached(name: &str, mount: impl Fn(&Path) -> Option<Mounted>, error: &str) {
    let root = tiny_tree(name);
    // A first run makes the output directory; its passes are then forgotten.
    let (first, before) = host_matrix(&root, &[]);
    first.success();
    let output = output_directory(&root);
    std::fs::remove_dir_all(root.join("target/kshim/cache")).unwrap();
    {
        let Some(_mounted) = mount(&output) else {
            return;
        };
        let (faulty, report) = host_matrix(&root, &[]);
        faulty
            .code(1)
            .check(failures(&report).0 > 0, "no cell failed")
            .stdout_has(error);
    }
    let (after, report) = host_matrix(&root, &[]);
    after
        .check(
            failures(&report) == (0, 0),
            "the machine's failures outlived it",
        )
        .check(
            results_of(&report) == results_of(&before),
            "after the fault, the results differ from those before it",
        )
        .success();
}

#[test]
fn a_read_only_output_directory_fails_cells_that_are_not_cached() {
    machine_fault_is_not_cached(
        "hostile-read-only",
        |output| {
            let point = path_str(output);
            mounted(
                output,
                &[&["--bind", point, point], &["-o", "remount,bind,ro", point]],
            )
        },
        "Read-only file system",
    );
}

#[test]
fn a_full_disk_under_the_outputs_fails_cells_that_are_not_cached() {
    machine_fault_is_not_cached(
        "hostile-full-disk",
        |output| {
            let point = path_str(output);
            mounted(output, &[&["-t", "tmpfs", "-o", "size=2m", "tmpfs", point]])
        },
        "No space left on device",
    );
}

/// A cache directory that cannot be written loses this run's results for the next: said once on
/// stderr, and the run's own results are still right (every entry was lost with no word).
#[test]
fn a_read_only_cache_is_said_once_and_the_run_still_answers() {
    let root = tiny_tree("hostile-read-only-cache");
    let (first, before) = host_matrix(&root, &[]);
    first.success();
    let cache = root.join("target/kshim/cache");
    for entry in std::fs::read_dir(&cache).unwrap() {
        std::fs::remove_file(entry.unwrap().path()).unwrap();
    }
    let point = path_str(&cache);
    let Some(_mounted) = mounted(
        &cache,
        &[&["--bind", point, point], &["-o", "remount,bind,ro", point]],
    ) else {
        return;
    };
    let (run, report) = host_matrix(&root, &[]);
    run.success()
        .check(
            run.stderr
                .matches("warning: the cache cannot be written")
                .count()
                == 1,
            "the unwritable cache is said once",
        )
        .stderr_has("Read-only file system")
        .check(
            results_of(&report) == results_of(&before),
            "the results differ from those before",
        );
}
