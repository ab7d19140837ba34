// SPDX-License-Identifier: GPL-2.0
//! The command line: help and typos answered as cargo answers them, the exit statuses, `+PIN`
//! and `--toolchain` given in bulk or naming nothing, `--dry-run`, hostile pin values,
//! `ci-matrix`, and `kernel` on trees it cannot use.
//!
//! Fake compilers are shell scripts written into scratch directories.

use crate::support::*;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[test]
fn every_command_answers_help_typos_and_the_common_flags_as_cargo_does() {
    // `docs` says what it did, even when that is nothing.
    let docs = xtask(&["docs", "--check", "-q", "--color=never"]).run();
    docs.success().check(
        docs.stderr.starts_with("docs: all ")
            && docs.stderr.contains("generated files are up to date"),
        "docs --check -q says what it checked",
    );
    // A bare `cargo xtask` and `help` list the commands; `COMMAND --help` is that command's.
    for args in [&[][..], &["help"][..]] {
        xtask(args)
            .run()
            .code(0)
            .stdout_has("\nCommands:\n    matrix ");
    }
    let help = xtask(&["audit", "--help"]).run();
    help.success().check(
        help.stdout.starts_with("Usage: cargo xtask audit [FLAGS]")
            && !help.stdout.contains("xtask matrix"),
        "audit --help is audit's help alone",
    );
    xtask(&["usage", "--jobz", "2"])
        .run()
        .refused("did you mean `--jobs`?");
    xtask(&["merj"]).run().refused("did you mean `merge`?");
    xtask(&["docs", "--color", "blue"])
        .run()
        .refused("--color must be");
}

#[test]
fn target_flags_that_name_no_kernel_target_are_refused_in_one_line() {
    // `matrix` on this checkout takes its run lock.
    let _turn = checkouts_lock();
    let refused = |args: &[&str], message: &str| -> String {
        let run = xtask(&["matrix"]).args(args).current_dir(root()).run();
        run.refused(message).stdout_empty().check(
            run.stderr.lines().count() == 1 && run.stderr.starts_with("error: "),
            "one line, `error: ...`",
        );
        run.stderr.clone()
    };
    refused(
        &["--target", "bogus"],
        "--target bogus: not one of the kernel's targets (x86_64-unknown-none, \
         aarch64-unknown-none, riscv64imac-unknown-none-elf, loongarch64-unknown-none), nor `none`",
    );
    refused(
        &["--target", "none", "--target", "aarch64-unknown-none"],
        "--target none means the host alone; it cannot be given with other targets",
    );
    let hostile = "aarch64\u{1b}[2J\nrm -rf\t\u{7}x";
    let stderr = refused(
        &["--target", "x86_64-unknown-none", "--target", hostile],
        "not one of the kernel's targets",
    );
    assert!(
        stderr.contains(r"--target aarch64\e[2J\nrm -rf\t\u{7}x:"),
        "escaped: {stderr:?}"
    );
    assert!(
        !stderr.trim_end().chars().any(char::is_control),
        "{stderr:?}"
    );
}

/// A pin file with one pin, for discovery to match the specs against.
fn pin_1_85(dir: &Path) -> PathBuf {
    let pins = dir.join("pins.toml");
    std::fs::write(
        &pins,
        "[[pin]]\nid = \"1.85.0\"\nrelease = \"1.85.0\"\nrole = \"feature\"\n",
    )
    .unwrap();
    pins
}

/// A fake 1.85.0 rustc that appends a line to `calls` each time it runs, after `delay`.
fn fake_rustc(dir: &Path, name: &str, delay: &str) -> PathBuf {
    let sysroot = dir.join("sysroot");
    let core = sysroot.join("lib/rustlib/x86_64-unknown-linux-gnu/lib");
    std::fs::create_dir_all(&core).unwrap();
    std::fs::write(core.join("libcore-0123abcd.rlib"), "").unwrap();
    script(
        &dir.join(name),
        &format!(
            "echo \"$*\" >> '{calls}'\nsleep {delay}\n\
             [ \"$1 $2\" = '--print sysroot' ] && {{ echo '{sysroot}'; exit 0; }}\n\
             printf 'rustc 1.85.0 (abcdef012 2025-02-17)\\nbinary: rustc\\ncommit-hash: abcdef\\n\
             commit-date: 2025-02-17\\nhost: x86_64-unknown-linux-gnu\\nrelease: 1.85.0\\n'\n",
            calls = dir.join("calls").display(),
            sysroot = sysroot.display()
        ),
    )
}

fn toolchains(pins: &Path, specs: &[String]) -> Run {
    let mut command = xtask(&["toolchains", "--pins", path_str(pins)]);
    for spec in specs {
        command.args(["--toolchain", spec]);
    }
    command.run_within(Duration::from_secs(120))
}

#[test]
fn a_thousand_toolchain_flags_probe_each_compiler_once() {
    let dir = scratch_dir("toolchains-thousand");
    let pins = pin_1_85(&dir);
    let rustc = fake_rustc(&dir, "rustc", "0").display().to_string();
    // A file that runs and is no compiler: broken, in a column of its own each time.
    let broken = script(&dir.join("broken"), "echo 'not a compiler' >&2\nexit 3\n")
        .display()
        .to_string();
    let specs = |count: usize| -> Vec<String> {
        (0..count)
            .flat_map(|_| [rustc.clone(), broken.clone()])
            .collect()
    };
    toolchains(&pins, &specs(50)).code(1);
    let output = toolchains(&pins, &specs(500));
    output
        .code(1)
        .check(
            output
                .stdout
                .starts_with("Compilers given with --toolchain: 1000 (500 found, 500 broken)"),
            "the first line counts the compilers",
        )
        // Repeats get numbered ids.
        .stdout_has("1.85.0#500")
        .stdout_has("not a compiler");
    // A path to nothing is bad input, said at once.
    toolchains(&pins, &["/nonexistent/no-such-toolchain".into()])
        .refused("--toolchain /nonexistent/no-such-toolchain: no such file");
    // The same compiler given 500 times is probed once (-vV and --print sysroot).
    let calls = std::fs::read_to_string(dir.join("calls")).unwrap();
    assert_eq!(calls.lines().count(), 4, "{calls}");
}

#[test]
fn ctrl_c_stops_the_resolution_of_many_toolchains() {
    let dir = scratch_dir("toolchains-interrupted");
    let pins = pin_1_85(&dir);
    let slow = fake_rustc(&dir, "rustc", "30");
    let mut command = xtask(&["matrix", "--dry-run", "--pins", path_str(&pins)]);
    command.current_dir(&dir);
    // Distinct paths to one slow compiler, and one that is no compiler, a thousand in all.
    for n in 0..40 {
        let link = dir.join(format!("rustc-{n}"));
        std::os::unix::fs::symlink(&slow, &link).unwrap();
        command.arg("--toolchain").arg(&link);
    }
    let broken = script(&dir.join("broken"), "exit 3\n");
    for _ in 0..960 {
        command.arg("--toolchain").arg(&broken);
    }
    let child = command.start();
    // Wait until the probes have started.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !dir.join("calls").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    send(SIGINT, child.id());
    let signalled = Instant::now();
    let output = child.wait_with_output().unwrap();
    let stopped = signalled.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&output.status),
        Some(SIGINT),
        "{stderr}"
    );
    assert!(stopped < Duration::from_secs(5), "SIGINT took {stopped:?}");
    assert!(output.stdout.is_empty(), "{stderr}");
    // At most the probes that were running had started: none was started after the signal.
    let calls = std::fs::read_to_string(dir.join("calls")).unwrap();
    assert!(calls.lines().count() <= 40, "{calls}");
}

#[test]
fn hostile_pin_values_never_become_commands() {
    // `toolchains install` takes this checkout's run lock before it reads the pins.
    let _turn = checkouts_lock();
    let dir = scratch_dir("toolchains-hostile-pins");
    let pins = dir.join("pins.toml");
    for (value, said) in [
        (
            "rustup = \"x;touch${IFS}pwned;#\"",
            "the rustup name `x;touch${IFS}pwned;#` is not a toolchain name",
        ),
        ("debian = \"--help\"", "`--help` names no suite"),
        (
            "debian = \"sid:rustc=$(touch pwned)\"",
            "is not a Debian version",
        ),
    ] {
        std::fs::write(
            &pins,
            format!("[[pin]]\nid = \"a\"\nrelease = \"1.85.0\"\nrole = \"feature\"\n{value}\n"),
        )
        .unwrap();
        for args in [
            &["toolchains"][..],
            &["toolchains", "install", "--no-rustup"],
            &["ci-matrix"],
        ] {
            xtask(args)
                .args(["--pins", path_str(&pins)])
                .current_dir(&dir)
                .run()
                .refused(&format!("{}:5: ", pins.display()))
                .stderr_has(said)
                .stdout_empty();
        }
    }
    assert!(!dir.join("pwned").exists());
}

#[test]
fn a_name_that_names_no_toolchain_is_bad_input_and_a_pin_id_names_its_pin() {
    let dir = scratch_dir("toolchains-no-such-name");
    let pins = pin_1_85(&dir);
    toolchains(&pins, &["nosuch".to_string()])
        .refused("--toolchain `nosuch` names no toolchain: it is no pin id of")
        .stderr_has("no path to a rustc and no `debian:SUITE:PACKAGE` spec");
    // A pin's id is the pin, found or missing as the pin file's search finds it: never broken.
    let found = toolchains(&pins, &["1.85.0".to_string()]);
    found
        .check(
            matches!(found.status.code(), Some(0 | 1)),
            "exit status 0 or 1",
        )
        .check(!found.stdout.contains("BROKEN"), "a pin id is never broken");
}

#[test]
fn a_dry_run_says_where_each_pin_comes_from_or_how_to_provision_it() {
    let dir = scratch_dir("toolchains-dry-run");
    let pins = dir.join("pins.toml");
    std::fs::write(
        &pins,
        "[[pin]]\nid = \"ancient\"\nrelease = \"1.0.0\"\nrole = \"feature\"\nrustup = \"1.0.0\"\n",
    )
    .unwrap();
    let rustc = fake_rustc(&dir, "rustc", "0");
    let run = xtask(&["matrix", "--dry-run", "--target", "none"])
        .args(["--pins", path_str(&pins), "+ancient", "--toolchain"])
        .arg(&rustc)
        .run();
    let lines: Vec<&str> = run.stdout.lines().take(3).collect();
    run.success().check(
        lines.len() == 3
            && lines[..2]
                == [
                    "# Toolchains of this run:",
                    "#   ancient: not provisioned, so listed as missing; to provision it: rustup \
                     toolchain install 1.0.0 --profile minimal",
                ]
            && lines[2].starts_with("#   1.85.0: path ")
            && lines[2].ends_with(" (1.85.0)"),
        "the dry run lists +ancient, then the --toolchain",
    );
}

#[test]
fn the_job_matrix_holds_only_shards_and_pin_ids() {
    let run = xtask(&["ci-matrix"]).run();
    let matrix = run.success().json();
    let pins = std::fs::read_to_string(root().join("toolchains.toml")).unwrap();
    let jobs = matrix["include"].as_array().expect("an `include` array");
    let pin_count = pins.lines().filter(|line| line.trim() == "[[pin]]").count();
    assert_eq!(jobs.len(), pin_count, "{matrix}");
    for job in jobs {
        let keys: Vec<&String> = job.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["pins", "shard"], "{job}");
        let ids = job["pins"].as_str().unwrap();
        let pin_id = |id: &str| {
            id.starts_with(|c: char| c.is_ascii_alphanumeric())
                && id
                    .bytes()
                    .all(|byte| byte.is_ascii_alphanumeric() || b".-_".contains(&byte))
        };
        assert!(ids.split(' ').all(pin_id), "{ids}");
    }
}

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A tree shaped like the kernel's top, without `rust/`: Linux 5.10.
fn tree_without_rust(root: &Path) {
    write(
        root,
        "Makefile",
        "VERSION = 5\nPATCHLEVEL = 10\nSUBLEVEL = 246\nEXTRAVERSION =\n",
    );
    write(root, "scripts/config", "#!/bin/sh\n");
    write(root, "scripts/Makefile.build", "# no Rust here\n");
    write(root, "init/Kconfig", "config CC_VERSION_TEXT\n\tstring\n");
}

#[test]
fn kernel_trees_that_cannot_be_used_are_cells_of_their_own() {
    let scratch = scratch_dir("kernel-bad-trees");
    let not_a_tree = scratch.join("not-a-tree");
    write(&not_a_tree, "README", "hello\n");
    let no_rust = scratch.join("linux-5.10");
    tree_without_rust(&no_rust);
    let no_allowed_list = scratch.join("no-allowed-list");
    tree_without_rust(&no_allowed_list);
    write(
        &no_allowed_list,
        "Makefile",
        "VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 0\nEXTRAVERSION =\n",
    );
    write(&no_allowed_list, "rust/Makefile", "# rust\n");
    let rustc = current_rustc();
    let kernel = |strict: bool| {
        let mut command = xtask(&["kernel"]);
        for tree in [&not_a_tree, &no_rust, &no_allowed_list] {
            command.arg("--tree").arg(tree);
        }
        command.arg("--toolchain").arg(&rustc);
        command.args(["--format", "json"]);
        if strict {
            command.arg("--strict");
        }
        command.run_within(Duration::from_secs(120))
    };
    let run = kernel(false);
    let report = run.success().json();
    let cells = report["cells"].as_array().unwrap();
    run.check(cells.len() == 3, "three cells");
    let expected = [
        "is no kernel tree",
        "has no Rust support: it has no rust/Makefile",
        "sets no `rust_allowed_features`",
    ];
    for (cell, said) in cells.iter().zip(expected) {
        let reason = cell["reason"].as_str().unwrap_or_default();
        run.check(
            cell["real"] == "not run"
                && reason.contains(said)
                && cell["cached"] == false
                && cell["steps"].as_array().is_some_and(Vec::is_empty),
            &format!("a cell not run, saying {said:?}"),
        );
    }
    let trees = report["trees"].as_array().unwrap();
    run.check(
        trees.len() == 3 && trees.iter().all(|tree| tree["error"].is_string()),
        "three trees, each with its error",
    );
    // Nothing was built in the trees.
    assert!(!no_rust.join(".config").exists());
    // --strict: a cell not run fails the run.
    kernel(true).code(1);
}

#[test]
fn an_unknown_kernel_tree_is_bad_input() {
    xtask(&["kernel", "--tree", "no-such-tree-pin"])
        .run()
        .refused("--tree no-such-tree-pin: no such tree pin (the pins are 6.1, 6.12, 7.2, 7.3)");
}
