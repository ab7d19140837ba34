// SPDX-License-Identifier: GPL-2.0
//! Bad toolchains one by one, as discovery classifies them (in one matrix, through the binary:
//! `tests/tests/hardening.rs`).

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
    crate::toolchains::discovery::discover(
        &sh,
        Some(&pins),
        &specs,
        timeout,
        crate::toolchains::debian::Provisioning::Allowed,
    )
    .unwrap()
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
