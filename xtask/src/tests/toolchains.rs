// SPDX-License-Identifier: GPL-2.0
//! Toolchains given in bulk or from hostile pin files: a thousand `--toolchain` flags resolved with
//! each compiler probed once (their time is a benchmark, in BENCHMARKS.md) and stopped by Ctrl-C,
//! and pin values that never reach a shell or an option.
//!
//! These run the real `xtask` binary, built once into a target directory of its own (the same
//! one the hardening tests use), with fake compilers written as shell scripts.

use crate::project_root;
use crate::tests::support::{scratch_dir, xtask_binary};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A pin file with one pin, for discovery to match the specs against.
fn pin_file(dir: &Path) -> PathBuf {
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
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{calls}'\nsleep {delay}\n\
             [ \"$1 $2\" = '--print sysroot' ] && {{ echo '{sysroot}'; exit 0; }}\n\
             printf 'rustc 1.85.0 (abcdef012 2025-02-17)\\nbinary: rustc\\ncommit-hash: abcdef\\n\
             commit-date: 2025-02-17\\nhost: x86_64-unknown-linux-gnu\\nrelease: 1.85.0\\n'\n",
            calls = dir.join("calls").display(),
            sysroot = sysroot.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn toolchains(pins: &Path, specs: &[String]) -> Output {
    let mut command = Command::new(xtask_binary());
    command.args(["toolchains", "--pins"]).arg(pins);
    for spec in specs {
        command.args(["--toolchain", spec]);
    }
    command.stdin(Stdio::null()).output().unwrap()
}

#[test]
fn a_thousand_toolchain_flags_probe_each_compiler_once() {
    let dir = scratch_dir("toolchains-thousand");
    let pins = pin_file(&dir);
    let rustc = fake_rustc(&dir, "rustc", "0").display().to_string();
    let specs = |count: usize| -> Vec<String> {
        (0..count)
            .flat_map(|n| [rustc.clone(), format!("/nonexistent/no-such-toolchain-{n}")])
            .collect()
    };
    let small = toolchains(&pins, &specs(50));
    assert_eq!(small.status.code(), Some(1), "{}", text(&small.stderr));
    let output = toolchains(&pins, &specs(500));
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert!(
        stdout.starts_with("Compilers given with --toolchain: 1000 (500 found, 500 broken)"),
        "{}",
        stdout.lines().next().unwrap_or_default()
    );
    assert!(stdout.contains("1.85.0#500"), "repeats get numbered ids");
    assert!(
        stdout.contains("/nonexistent/no-such-toolchain-499 does not exist"),
        "{stdout:.2000}"
    );
    // The same compiler given 500 times is probed once (-vV and --print sysroot).
    let calls = std::fs::read_to_string(dir.join("calls")).unwrap();
    assert_eq!(calls.lines().count(), 4, "{calls}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ctrl_c_stops_the_resolution_of_many_toolchains() {
    let dir = scratch_dir("toolchains-interrupted");
    let pins = pin_file(&dir);
    let slow = fake_rustc(&dir, "rustc", "30");
    let mut command = Command::new(xtask_binary());
    command
        .args(["matrix", "--dry-run", "--pins"])
        .arg(&pins)
        .current_dir(&dir);
    // Distinct paths to one slow compiler, and paths to nothing, a thousand in all.
    for n in 0..40 {
        let link = dir.join(format!("rustc-{n}"));
        std::os::unix::fs::symlink(&slow, &link).unwrap();
        command.arg("--toolchain").arg(&link);
    }
    for n in 0..960 {
        command
            .arg("--toolchain")
            .arg(format!("/nonexistent/no-such-toolchain-{n}"));
    }
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the probes have started.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !dir.join("calls").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let signalled = Instant::now();
    let output = child.wait_with_output().unwrap();
    let stopped = signalled.elapsed();
    assert_eq!(
        output.status.signal(),
        Some(2),
        "{:?}: {}",
        output.status,
        text(&output.stderr)
    );
    assert!(stopped < Duration::from_secs(5), "SIGINT took {stopped:?}");
    assert!(output.stdout.is_empty(), "{}", text(&output.stdout));
    // At most the probes that were running had started: none was started after the signal.
    let calls = std::fs::read_to_string(dir.join("calls")).unwrap();
    assert!(calls.lines().count() <= 40, "{calls}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn hostile_pin_values_never_become_commands() {
    // `toolchains install` takes this checkout's run lock before it reads the pins.
    let _turn = crate::tests::support::the_checkouts_lock();
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
            let output = Command::new(xtask_binary())
                .args(args)
                .arg("--pins")
                .arg(&pins)
                .current_dir(&dir)
                .stdin(Stdio::null())
                .output()
                .unwrap();
            let stderr = text(&output.stderr);
            assert_eq!(output.status.code(), Some(2), "{args:?} {value}: {stderr}");
            assert!(
                stderr.contains(&format!("{}:5: ", pins.display())),
                "{stderr}"
            );
            assert!(stderr.contains(said), "{args:?} {value}: {stderr}");
            assert!(output.stdout.is_empty(), "{}", text(&output.stdout));
        }
    }
    assert!(!dir.join("pwned").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_job_matrix_holds_only_shards_and_pin_ids() {
    let output = Command::new(xtask_binary())
        .arg("ci-matrix")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let matrix = crate::util::json::parse(&text(&output.stdout)).unwrap();
    let pins =
        crate::toolchains::pins::Pins::load(&project_root().join("toolchains.toml")).unwrap();
    let jobs = matrix["include"].as_array().unwrap();
    assert_eq!(jobs.len(), pins.pins.len());
    for job in jobs {
        let keys: Vec<&String> = job.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["pins", "shard"], "{job}");
        let ids = job["pins"].as_str().unwrap();
        assert!(
            ids.split(' ').all(crate::toolchains::pins::is_pin_id),
            "{ids}"
        );
    }
}

#[test]
fn a_name_that_names_no_toolchain_is_bad_input_and_a_pin_id_names_its_pin() {
    let dir = scratch_dir("toolchains-no-such-name");
    let pins = pin_file(&dir);
    let output = toolchains(&pins, &["nosuch".to_string()]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--toolchain `nosuch` names no toolchain: it is no pin id of")
            && stderr.contains("no path to a rustc and no `debian:SUITE:PACKAGE` spec"),
        "{stderr}"
    );
    // A pin's id is the pin, found or missing as the pin file's search finds it: never broken.
    let pin_text = std::fs::read_to_string(&pins).unwrap();
    let id = pin_text
        .lines()
        .find_map(|line| line.strip_prefix("id = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .expect("the pin file has an id");
    let output = toolchains(&pins, &[id.to_string()]);
    let stdout = text(&output.stdout);
    assert!(
        output.status.code() == Some(0) || output.status.code() == Some(1),
        "{}",
        text(&output.stderr)
    );
    assert!(!stdout.contains("BROKEN"), "{stdout}");
    std::fs::remove_dir_all(&dir).unwrap();
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
    let output = Command::new(xtask_binary())
        .args(["matrix", "--dry-run", "--target", "none", "--pins"])
        .arg(&pins)
        .args(["+ancient", "--toolchain"])
        .arg(&rustc)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let lines: Vec<&str> = stdout.lines().take(3).collect();
    assert_eq!(
        lines[..2],
        [
            "# Toolchains of this run:",
            "#   ancient: not provisioned, so listed as missing; to provision it: rustup \
             toolchain install 1.0.0 --profile minimal",
        ],
        "{stdout:.2000}"
    );
    assert!(
        lines[2].starts_with("#   1.85.0: path ") && lines[2].ends_with(" (1.85.0)"),
        "{stdout:.2000}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
