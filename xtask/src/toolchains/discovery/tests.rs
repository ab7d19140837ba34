// SPDX-License-Identifier: GPL-2.0
//! Tests of discovery: wrapper scripts and fake compilers given as specs, Debian layouts and own
//! loaders.

use super::*;
use crate::catalog::Release;
use crate::toolchains::pins::tests::GOOD;
use crate::toolchains::version::Channel;
use std::os::unix::fs::PermissionsExt;

#[test]
fn source_kinds_are_named_by_the_report_words() {
    let kinds = [SourceKind::Rustup, SourceKind::Path, SourceKind::Debian];
    for (kind, word) in kinds.into_iter().zip(["rustup", "path", "debian"]) {
        assert_eq!(kind.word(), word);
        assert_eq!(crate::util::json::to_value(&kind), word);
    }
    let rustup = Source::Rustup {
        name: "1.85.0".into(),
    };
    assert_eq!(rustup.kind(), SourceKind::Rustup);
    let debian = Source::Debian {
        package: DebianSource::parse("bookworm:rustc-web=1.85.0+dfsg3-1~deb12u3").unwrap(),
    };
    assert_eq!(debian.kind(), SourceKind::Debian);
    assert_eq!(Source::Path.kind(), SourceKind::Path);
}

#[test]
fn rustup_names() {
    assert!(rustup_name_is("1.95.0-x86_64-unknown-linux-gnu", "1.95.0"));
    assert!(rustup_name_is("nightly", "nightly"));
    assert!(!rustup_name_is(
        "nightly-2026-05-20-x86_64-unknown-linux-gnu",
        "nightly"
    ));
    assert!(!rustup_name_is("1.95.0-x86_64-unknown-linux-gnu", "1.95"));
}

/// A scratch directory for one test, emptied first.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kshim-xtask-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A fake compiler: answers `--print sysroot` with a sysroot that has `core` for the
/// host (a compiler without one is broken), and anything else with `body`.
fn write_script(path: &Path, body: &str) {
    let directory = path.parent().unwrap();
    let sysroot = directory.join("fake-sysroot");
    let core = sysroot.join("lib/rustlib/x86_64-unknown-linux-gnu/lib");
    std::fs::create_dir_all(&core).unwrap();
    std::fs::write(core.join("libcore-0123abcd.rlib"), "").unwrap();
    std::fs::write(
        path,
        format!(
            "#!/bin/sh\n[ \"$1 $2\" = '--print sysroot' ] && {{ echo '{}'; exit 0; }}\n{body}",
            sysroot.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn fake_verbose_version(release: &str, date: &str) -> String {
    format!(
        "rustc {release} (abcdef012 {date})\nbinary: rustc\ncommit-hash: abcdef0123\n\
         commit-date: {date}\nhost: x86_64-unknown-linux-gnu\nrelease: {release}\n"
    )
}

#[test]
fn discovers_wrapper_scripts_given_as_specs() {
    let dir = scratch("specs");
    let pins = dir.join("pins.toml");
    std::fs::write(&pins, GOOD).unwrap();
    let nightly = dir.join("nightly-rustc");
    write_script(
        &nightly,
        &format!(
            "[ \"$1\" = -vV ] || exit 3\ncat <<'END'\n{}END\n",
            fake_verbose_version("1.97.0-nightly", "2026-05-19")
        ),
    );
    let unpinned = dir.join("unpinned-rustc");
    write_script(
        &unpinned,
        &format!(
            "cat <<'END'\n{}END\n",
            fake_verbose_version("1.80.1", "2024-08-07")
        ),
    );
    let failing = dir.join("failing-rustc");
    write_script(&failing, "echo 'error: no such sysroot' >&2\nexit 7\n");
    let garbage = dir.join("garbage-rustc");
    write_script(&garbage, "echo 'hello from a wrapper'\n");

    let sh = Shell::new().unwrap();
    sh.change_dir(&dir);
    let specs: Vec<String> = [
        nightly.display().to_string(),
        "./unpinned-rustc".to_owned(),
        failing.display().to_string(),
        garbage.display().to_string(),
        nightly.display().to_string(),
    ]
    .into();
    let found = discover(
        &sh,
        Some(&pins),
        &specs,
        VERSION_TIMEOUT,
        Provisioning::Allowed,
    )
    .unwrap();
    assert_eq!(found.len(), 5, "{found:#?}");

    let Availability::Found { toolchain, version } = &found[0] else {
        panic!("{:#?}", found[0]);
    };
    assert_eq!(toolchain.id, "1.97.0-nightly");
    assert_eq!(toolchain.pin.as_deref(), Some("nightly"));
    assert_eq!(toolchain.source, Source::Path);
    assert_eq!(toolchain.launch.rustc, nightly);
    assert_eq!(toolchain.launch.env, Vec::new());
    assert_eq!(version.channel, Channel::Nightly);

    let Availability::Found { toolchain, version } = &found[1] else {
        panic!("{:#?}", found[1]);
    };
    assert_eq!(toolchain.id, "1.80.1");
    assert_eq!(toolchain.pin, None);
    assert!(toolchain.launch.rustc.is_absolute());
    assert_eq!(version.release, Release::new(1, 80, 1));

    let Availability::Broken { error, .. } = &found[2] else {
        panic!("{:#?}", found[2]);
    };
    assert!(error.contains("-vV` failed (exit status 7)"), "{error}");
    assert!(error.contains("error: no such sysroot"), "{error}");

    let Availability::Broken { error, .. } = &found[3] else {
        panic!("{:#?}", found[3]);
    };
    assert!(
        error.contains("it printed:\nhello from a wrapper"),
        "{error}"
    );

    // The same compiler twice gets two ids.
    assert_eq!(found[4].id(), "1.97.0-nightly#2");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_path_to_nothing_is_broken_and_a_name_that_names_nothing_is_bad_input() {
    let dir = scratch("nothing");
    let pins = dir.join("pins.toml");
    std::fs::write(&pins, GOOD).unwrap();
    let sh = Shell::new().unwrap();
    let missing = dir.join("no-such-rustc").display().to_string();
    let found = discover(
        &sh,
        Some(&pins),
        std::slice::from_ref(&missing),
        VERSION_TIMEOUT,
        Provisioning::Allowed,
    )
    .unwrap();
    let Availability::Broken { error, .. } = &found[0] else {
        panic!("{:#?}", found[0]);
    };
    assert_eq!(error, &format!("{missing} does not exist"));
    // A name that is no pin, no file and no rustup toolchain: bad input, naming what would do.
    let error = discover(
        &sh,
        Some(&pins),
        &[missing, "no-such-toolchain".into()],
        VERSION_TIMEOUT,
        Provisioning::Allowed,
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.starts_with("--toolchain `no-such-toolchain` names no toolchain: it is no pin id of")
            && error.contains("(1.85.0, "),
        "{error}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_debian_layout_gets_its_library_path() {
    let dir = scratch("debian-layout");
    let pins = dir.join("pins.toml");
    std::fs::write(&pins, GOOD).unwrap();
    let libs = dir.join("root/usr/lib/x86_64-linux-gnu");
    std::fs::create_dir_all(&libs).unwrap();
    std::fs::write(libs.join("librustc_driver-0123abcd.so"), "").unwrap();
    // The fake only answers when it is given the library path, as the real one.
    let rustc = dir.join("root/usr/bin/rustc");
    write_script(
        &rustc,
        &format!(
            "[ \"$LD_LIBRARY_PATH\" = '{}' ] || {{ echo \"LD_LIBRARY_PATH=$LD_LIBRARY_PATH\" >&2; exit 127; }}\n\
             cat <<'END'\n{}END\n",
            libs.display(),
            fake_verbose_version("1.85.0", "2025-02-17")
        ),
    );
    let sh = Shell::new().unwrap();
    let found = discover(
        &sh,
        Some(&pins),
        &[rustc.display().to_string()],
        VERSION_TIMEOUT,
        Provisioning::Allowed,
    )
    .unwrap();
    let Availability::Found { toolchain, .. } = &found[0] else {
        panic!("{:#?}", found[0]);
    };
    assert_eq!(
        toolchain.launch.env,
        vec![("LD_LIBRARY_PATH".to_owned(), libs.display().to_string())]
    );
    assert_eq!(toolchain.pin.as_deref(), Some("1.85.0"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn rustup_toolchains_come_from_one_verbose_list() {
    let list = "stable-x86_64-unknown-linux-gnu (default) /root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu\n\
                nightly-x86_64-unknown-linux-gnu /root/.rustup/toolchains/nightly-x86_64-unknown-linux-gnu\n\
                1.95.0-x86_64-unknown-linux-gnu (active) /root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu\n\
                no installed toolchains\n";
    let found = parse_rustup_list(list);
    assert_eq!(found.len(), 3, "{found:?}");
    assert_eq!(found[2].0, "1.95.0-x86_64-unknown-linux-gnu");
    assert_eq!(
        found[2].1,
        Path::new("/root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin/rustc")
    );
}

/// A malformed `debian:` spec can name no compiler: bad input, refused before anything runs (it
/// was a broken column beside the others, exit 0).
#[test]
fn a_malformed_debian_spec_is_bad_input() {
    let dir = scratch("debian-spec");
    let pins = dir.join("pins.toml");
    std::fs::write(&pins, GOOD).unwrap();
    let sh = Shell::new().unwrap();
    for (spec, expected) in [
        ("debian:--help", "`--help` names no suite"),
        ("debian:sid:rustc=$(id)", "`$(id)` is not a Debian version"),
        ("debian:sid", "`sid` names no suite"),
        ("debian:", "`` names no suite"),
    ] {
        let specs = ["1.85.0".to_owned(), spec.to_owned()];
        let error = discover(
            &sh,
            Some(&pins),
            &specs,
            VERSION_TIMEOUT,
            Provisioning::Allowed,
        )
        .unwrap_err();
        let error = format!("{error:#}");
        assert!(
            error.starts_with(&format!("--toolchain `{spec}`")) && error.contains(expected),
            "{error}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A pin of sid's build of 1.97.1 is satisfied by sid's prefix when forky's build of the same
/// version is there too (forky's spec sorts first): another suite's build, which resolved other
/// libraries, never stands in for the pin's own; and it is the pin's broken compiler only when
/// it is the pin's own.
#[test]
fn a_debian_pin_takes_its_own_suites_build_before_another_suites() {
    let pins = Pins::parse(
        "[[pin]]\nid = \"debian-1.97.1\"\nrelease = \"1.97.1\"\nrole = \"debian\"\n\
         debian = \"sid:rustc=1.97.1+dfsg1-1\"\n",
        Path::new("toolchains.toml"),
    )
    .unwrap();
    let pin = &pins.pins[0];
    let debian = |text: &str| {
        let package = DebianSource::parse(text).unwrap();
        Toolchain {
            id: text.to_owned(),
            spec: format!("debian:{text}"),
            source: Source::Debian { package },
            launch: crate::toolchains::loader::Launch {
                rustc: PathBuf::from("/p/usr/bin/rustc"),
                env: Vec::new(),
                loader: None,
            },
            pin: None,
        }
    };
    let sid = debian("sid:rustc=1.97.1+dfsg1-1");
    let forky = debian("forky:rustc=1.97.1+dfsg1-1");
    assert!(is_meant_for(pin, &sid));
    assert!(!is_meant_for(pin, &forky), "forky's build taken for sid's");
    let chosen = [&forky, &sid]
        .into_iter()
        .min_by_key(|toolchain| preference(pin, toolchain))
        .unwrap();
    assert_eq!(chosen.spec, sid.spec);
}
