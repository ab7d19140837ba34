// SPDX-License-Identifier: GPL-2.0
//! Bad toolchains: one by one, as discovery classifies them, and in one matrix, where each
//! gets its own verdict, the others go on and nothing hangs.

use super::*;

/// Discovers the given specs with `timeout`, against the tiny pin file.
fn discover(dir: &Path, specs: &[PathBuf], timeout: Duration) -> Vec<Availability> {
    let pins = dir.join("pins.toml");
    std::fs::write(&pins, crate::tests::support::ONE_PIN).unwrap();
    let sh = xshell::Shell::new().unwrap();
    let specs: Vec<String> = specs
        .iter()
        .map(|spec| spec.display().to_string())
        .collect();
    crate::toolchains::discovery::discover(&sh, Some(&pins), &specs, timeout).unwrap()
}

fn broken_error(availability: &Availability) -> &str {
    match availability {
        Availability::Broken { error, .. } => error,
        other => panic!("expected a broken toolchain, got {other:#?}"),
    }
}

#[test]
fn each_bad_compiler_gets_a_verdict_of_its_own() {
    let dir = scratch_dir("hardening-discovery");
    let real = real_compiler();
    let missing = dir.join("no-such/rustc");
    let not_executable = dir.join("not-executable");
    std::fs::write(&not_executable, "#!/bin/sh\nexec rustc \"$@\"\n").unwrap();
    std::fs::set_permissions(&not_executable, std::fs::Permissions::from_mode(0o644)).unwrap();
    let unrelated = script(
        &dir.join("unrelated"),
        "echo 'usage: frobnicate [--verbose] FILE'\n",
    );
    let silent = script(&dir.join("silent"), "exit 0\n");
    let unparsable = script(
        &dir.join("unparsable"),
        "echo 'rustc, the compiler'\necho 'release 1.95.0'\n",
    );
    let no_patch = wrapper(
        &dir.join("no-patch"),
        "rustc 1.85\nhost: x86_64-unknown-linux-gnu\nrelease: 1.85\n",
        "",
    );
    let suffixes = [
        (
            "beta",
            format!("{}-beta.3", real.release),
            "",
            Channel::Beta,
        ),
        ("dev", format!("{}-dev", real.release), "", Channel::Dev),
        (
            "nightly",
            format!("{}-nightly", real.release),
            " (e50aa6fba 2026-05-19)",
            Channel::Nightly,
        ),
        (
            "distro",
            real.release.clone(),
            " (4d91de4e4 2025-02-17) (built from a source tarball)",
            Channel::Stable,
        ),
    ];
    let suffixed: Vec<PathBuf> = suffixes
        .iter()
        .map(|(name, release, tail, _)| {
            wrapper(
                &dir.join(format!("suffix-{name}")),
                &verbose_version_as(release, tail),
                "",
            )
        })
        .collect();
    let too_old = wrapper(&dir.join("too-old"), &verbose_version_as("1.70.0", ""), "");
    let empty_sysroot = dir.join("empty-sysroot");
    std::fs::create_dir_all(&empty_sysroot).unwrap();
    let no_core = script(
        &dir.join("no-core"),
        &format!(
            "exec '{}' --sysroot '{}' \"$@\"\n",
            real.path.display(),
            empty_sysroot.display()
        ),
    );
    // A copy of the real driver, away from the libraries its rpath points to.
    let cannot_start = dir.join("copied/bin/rustc");
    std::fs::create_dir_all(cannot_start.parent().unwrap()).unwrap();
    std::fs::copy(&real.path, &cannot_start).unwrap();
    let hangs = script(&dir.join("hangs"), "sleep 600\n");
    let chatty = script(
        &dir.join("chatty"),
        &format!(
            "echo 'wrapper: picking a compiler'\nexec '{}' \"$@\"\n",
            real.path.display()
        ),
    );

    let mut specs = vec![
        missing.clone(),
        not_executable.clone(),
        unrelated,
        silent,
        unparsable,
        no_patch,
    ];
    specs.extend(suffixed);
    specs.extend([too_old, no_core, cannot_start.clone(), hangs, chatty]);
    let start = Instant::now();
    let found = discover(&dir, &specs, Duration::from_secs(2));
    let elapsed = start.elapsed();
    assert_eq!(found.len(), specs.len());
    // The hanging compiler costs its timeout once, and no more.
    assert!(
        elapsed < Duration::from_secs(5),
        "discovery took {elapsed:?}"
    );

    assert_eq!(
        broken_error(&found[0]),
        format!("{} does not exist", missing.display())
    );
    assert!(
        broken_error(&found[1]).contains("permission denied (is it executable?)"),
        "{}",
        broken_error(&found[1])
    );
    let unrelated = broken_error(&found[2]);
    assert!(
        unrelated.contains("not `rustc VERSION ...`") && unrelated.contains("usage: frobnicate"),
        "{unrelated}"
    );
    assert!(
        broken_error(&found[3]).contains("it printed nothing"),
        "{}",
        broken_error(&found[3])
    );
    assert!(
        broken_error(&found[4]).contains("not `rustc VERSION ...`"),
        "{}",
        broken_error(&found[4])
    );
    assert!(
        broken_error(&found[5]).contains("the release `1.85` is not MAJOR.MINOR.PATCH"),
        "{}",
        broken_error(&found[5])
    );
    for (offset, (name, release, _, channel)) in suffixes.iter().enumerate() {
        let Availability::Found { version, .. } = &found[6 + offset] else {
            panic!("{name}: {:#?}", found[6 + offset]);
        };
        assert_eq!(&version.release_string(), release, "{name}");
        assert_eq!(version.channel, *channel, "{name}");
    }
    let Availability::Found { version, .. } = &found[10] else {
        panic!("too old: {:#?}", found[10]);
    };
    assert_eq!(
        crate::features::expect::ToolchainVerdict::for_release(version.release),
        crate::features::expect::ToolchainVerdict::TooOld
    );
    let no_core = broken_error(&found[11]);
    assert!(
        no_core.contains(&format!(
            "its sysroot {} has no `core`",
            empty_sysroot.display()
        )),
        "{no_core}"
    );
    let cannot_start = broken_error(&found[12]);
    assert!(
        cannot_start.contains(
            "it cannot start, the dynamic loader cannot find the shared library librustc_driver"
        ),
        "{cannot_start}"
    );
    assert!(
        broken_error(&found[13]).contains("killed after 2 s (--timeout)"),
        "{}",
        broken_error(&found[13])
    );
    let Availability::Found { version, .. } = &found[14] else {
        panic!("a wrapper that prints to stdout: {:#?}", found[14]);
    };
    assert_eq!(version.release.to_string(), real.release);
    assert!(processes_mentioning(&dir.join("hangs").display().to_string()).is_empty());
}

// Bad toolchains in one matrix.

#[test]
fn a_matrix_of_bad_compilers_reports_each_and_finishes() {
    let root = tiny_tree("bad-matrix");
    let dir = root.join("fakes");
    let real = real_compiler();
    let real_version = verbose_version_as(&real.release, "");
    let missing = dir.join("no-such-rustc");
    let silent = script(&dir.join("silent"), "exit 0\n");
    let too_old = wrapper(&dir.join("too-old"), &verbose_version_as("1.70.0", ""), "");
    let no_core = script(
        &dir.join("no-core"),
        &format!(
            "exec '{}' --sysroot /nonexistent-sysroot \"$@\"\n",
            real.path.display()
        ),
    );
    // Forward the probe and the tests; die on the shim's rlib build.
    let rlib_build = "case \"$*\" in *'--crate-type rlib'*)";
    let crashes = wrapper(
        &dir.join("crashes"),
        &real_version,
        &format!("{rlib_build} kill -SEGV $$ ;; esac"),
    );
    let fails = wrapper(
        &dir.join("fails"),
        &real_version,
        &format!("{rlib_build} echo 'wrapper: out of licences' >&2; exit 3 ;; esac"),
    );
    // Hangs without exec'ing: its `sleep` child must die with it.
    let pids = dir.join("hang-pids");
    let hangs = wrapper(
        &dir.join("hangs"),
        &real_version,
        &format!(
            "{rlib_build} sleep 600 & echo $! >> '{}'; wait ;; esac",
            pids.display()
        ),
    );
    let chatty = wrapper(
        &dir.join("chatty"),
        &real_version,
        "echo 'wrapper: compiling, please wait'",
    );
    let specs = [
        &missing, &silent, &too_old, &no_core, &crashes, &fails, &hangs, &chatty,
    ];
    let mut args: Vec<String> = [
        "matrix",
        "--root",
        &root.display().to_string(),
        "--format",
        "json",
        "--timeout",
        "4",
        "-j",
        "4",
    ]
    .map(String::from)
    .into();
    for spec in specs {
        args.push("--toolchain".into());
        args.push(spec.display().to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let start = Instant::now();
    let output = xtask(&args);
    let elapsed = start.elapsed();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let report = stdout_report(&output);
    let toolchains = get(&report, "toolchains").as_array().unwrap();
    let by_spec = |spec: &Path| {
        toolchains
            .iter()
            .position(|toolchain| {
                get(toolchain, "spec").as_str() == Some(&spec.display().to_string())
            })
            .unwrap_or_else(|| panic!("no toolchain {} in {report}", spec.display()))
    };
    let verdict = |spec: &Path| {
        let toolchain = &toolchains[by_spec(spec)];
        (
            get(toolchain, "verdict").as_str().unwrap().to_string(),
            get(toolchain, "error")
                .as_str()
                .unwrap_or_default()
                .to_string(),
        )
    };
    let cells = |spec: &Path| -> Vec<(String, String, String)> {
        let id = get(&toolchains[by_spec(spec)], "id")
            .as_str()
            .unwrap()
            .to_string();
        get(&report, "builds")
            .as_array()
            .unwrap()
            .iter()
            .filter(|build| get(build, "toolchain").as_str() == Some(&id))
            .map(|build| {
                (
                    format!(
                        "{} {} ({})",
                        get(build, "kind").as_str().unwrap(),
                        get(build, "target").as_str().unwrap(),
                        get(build, "mode").as_str().unwrap()
                    ),
                    get(build, "outcome").as_str().unwrap().to_string(),
                    get(build, "first_error")
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                )
            })
            .collect()
    };
    let cell = |spec: &Path, name: &str| {
        cells(spec)
            .into_iter()
            .find(|(cell, _, _)| cell == name)
            .unwrap_or_else(|| panic!("no cell {name} for {}", spec.display()))
    };

    let (word, error) = verdict(&missing);
    assert_eq!(
        (word.as_str(), error.as_str()),
        ("broken", &*format!("{} does not exist", missing.display()))
    );
    let (word, error) = verdict(&silent);
    assert!(
        word == "broken" && error.contains("it printed nothing"),
        "{error}"
    );
    let (word, error) = verdict(&too_old);
    assert_eq!(
        (word.as_str(), error.as_str()),
        ("too-old", "below the minimum (1.78.0)")
    );
    let (word, error) = verdict(&no_core);
    assert!(
        word == "broken" && error.contains("has no `core`"),
        "{error}"
    );

    let (word, _) = verdict(&crashes);
    assert_eq!(word, "ok");
    let (_, outcome, error) = cell(&crashes, "build kernel (kernel)");
    assert_eq!(outcome, "fail");
    assert!(error.contains("killed by signal 11 (SIGSEGV)"), "{error}");
    let (_, outcome, error) = cell(&crashes, "build rust_asm_goto (stable)");
    assert_eq!(
        (outcome.as_str(), error.as_str()),
        ("skipped", "not run: build kernel (stable) failed")
    );
    // What does not need the rlib still ran.
    assert_eq!(cell(&crashes, "test kernel (kernel)").1, "pass");

    let (_, outcome, error) = cell(&fails, "build kernel (stable)");
    assert_eq!(outcome, "fail");
    assert!(
        error.contains("exit status 3: wrapper: out of licences"),
        "{error}"
    );

    let (_, outcome, error) = cell(&hangs, "build kernel (kernel)");
    assert_eq!(outcome, "fail");
    assert!(error.contains("killed after 4 s (--timeout)"), "{error}");
    let sleepers: Vec<u32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|pid| pid.parse().unwrap())
        .collect();
    assert_eq!(sleepers.len(), 2, "one hanging build per mode");
    for pid in sleepers {
        assert!(!running(pid), "the hanging wrapper's child {pid} survived");
    }

    // The wrapper that prints on stdout corrupted nothing: every one of its cells passed.
    let (word, _) = verdict(&chatty);
    assert_eq!(word, "ok");
    let chatty_cells = cells(&chatty);
    assert_eq!(chatty_cells.len(), (2 + 3 * 11) * 2);
    for (name, outcome, error) in chatty_cells {
        assert_eq!(outcome, "pass", "{name}: {error}");
    }
    // Nothing hangs: the hanging builds are killed at their 4 s timeout. The bound is loose on
    // purpose, since a loaded machine slows the other cells; a hang would mean forever.
    assert!(
        elapsed < Duration::from_secs(120),
        "the matrix took {elapsed:?}"
    );
    assert!(processes_mentioning(&dir.display().to_string()).is_empty());
}
