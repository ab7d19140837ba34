// SPDX-License-Identifier: GPL-2.0
//! Tests of Debian's compilers: sources and suites, prefixes and their markers, and a prefix
//! taken as installed only when its files match their digests.

use super::*;

#[test]
fn install_takes_a_prefix_as_there_only_when_its_files_match_their_digests() {
    let root = crate::project_root().join("target/kshim/unit-tests/provisioner-intact");
    let _ = std::fs::remove_dir_all(&root);
    let prefix = root.join("debian/rust-src-1.97.1+dfsg1-1");
    let lib = prefix.join("usr/src/rustc-1.97.1/library/core/src/lib.rs");
    std::fs::create_dir_all(lib.parent().unwrap()).unwrap();
    std::fs::write(&lib, "#![no_core]\n").unwrap();
    let sh = Shell::new().unwrap();
    let mut said = Vec::new();
    let mut log = |line: &str| said.push(line.to_owned());
    let mut provisioner = Provisioner::new(&sh, root.clone(), Vec::new(), &mut log).verifying();
    assert!(
        !provisioner.intact(&prefix, "rust-src"),
        "a prefix with no digests was taken as there"
    );
    crate::digests::record(&prefix).unwrap();
    assert!(provisioner.intact(&prefix, "rust-src"));
    std::fs::write(&lib, "").unwrap();
    assert!(
        !provisioner.intact(&prefix, "rust-src"),
        "an emptied lib.rs was taken as there"
    );
    drop(provisioner);
    assert!(
        said.iter()
            .any(|line| line.contains("library/core/src/lib.rs: changed")),
        "{said:?}"
    );
}

#[test]
fn sources_are_parsed_and_checked() {
    let source = DebianSource::parse("trixie:rustc=1.85.1+dfsg1-1+deb13u1").unwrap();
    assert_eq!(source.suite, "trixie");
    assert_eq!(source.package, "rustc");
    assert_eq!(source.version.as_deref(), Some("1.85.1+dfsg1-1+deb13u1"));
    assert_eq!(source.to_string(), "trixie:rustc=1.85.1+dfsg1-1+deb13u1");
    let bare = DebianSource::parse("bookworm-security:rustc-web").unwrap();
    assert_eq!(bare.version, None);
    assert_eq!(bare.to_string(), "bookworm-security:rustc-web");
    for (bad, said) in [
        ("rustc-web", "names no suite"),
        ("--help", "names no suite"),
        ("sid:--help", "`--help` is not a Debian package name"),
        ("-o:rustc", "`-o` is not a Debian suite"),
        ("sid:rustc=--help", "`--help` is not a Debian version"),
        ("sid:rustc=1.0;touch pwned", "is not a Debian version"),
        ("sid:x;touch${IFS}pwned", "is not a Debian package name"),
        ("Sid:rustc", "`Sid` is not a Debian suite"),
        (
            "sid:rustc=1.0\u{1b}[31m",
            "`1.0\\u{1b}[31m` is not a Debian version",
        ),
        ("sid/../..:rustc", "is not a Debian suite"),
        ("sid:rustc=", "`` is not a Debian version"),
    ] {
        let error = DebianSource::parse(bad).unwrap_err();
        assert!(error.contains(said), "{bad:?}: {error}");
    }
}

#[test]
fn suite_families() {
    assert_eq!(
        suite_family("bullseye"),
        ["bullseye-security", "bullseye-updates", "bullseye"]
    );
    assert_eq!(
        suite_family("bookworm-security"),
        ["bookworm-security", "bookworm-updates", "bookworm"]
    );
    assert_eq!(
        suite_family("trixie-backports"),
        [
            "trixie-backports",
            "trixie-security",
            "trixie-updates",
            "trixie"
        ]
    );
    assert_eq!(suite_family("sid"), ["sid"]);
    assert_eq!(suite_family("experimental"), ["experimental", "sid"]);
}

#[test]
fn upstream_versions_and_prefixes() {
    assert_eq!(upstream_version("1.85.0+dfsg3-1~deb12u3"), "1.85.0");
    assert_eq!(upstream_version("1.98.1+dfsg1-1~exp1"), "1.98.1");
    assert_eq!(upstream_version("1:19.1.7-3~deb12u1"), "19.1.7");
    assert_eq!(upstream_version("1.96.0"), "1.96.0");
    let prefix = prefix_of(Path::new("/t"), "rustc", "1:1.0-1");
    assert_eq!(prefix, Path::new("/t/debian/rustc-1%3a1.0-1"));
}

#[test]
fn a_compilers_prefix_is_its_own_per_suite_and_found_by_its_marker() {
    let sid = DebianSource::parse("sid:rustc=1.97.1+dfsg1-1").unwrap();
    let backports = DebianSource::parse("trixie-backports:rustc=1.97.1+dfsg1-1").unwrap();
    let root = crate::project_root().join("target/kshim/test-scratch/debian-suites");
    let _ = std::fs::remove_dir_all(&root);
    let (sid_prefix, backports_prefix) = (
        compiler_prefix(&root, &sid),
        compiler_prefix(&root, &backports),
    );
    // The same package and version from two suites hold other dependency closures.
    assert_ne!(sid_prefix, backports_prefix);
    for (prefix, source) in [(&sid_prefix, &sid), (&backports_prefix, &backports)] {
        std::fs::create_dir_all(prefix).unwrap();
        std::fs::write(prefix.join(MARKER), format!("{source}\n")).unwrap();
    }
    assert_eq!(
        provisioned_prefixes(&root),
        [(sid_prefix, sid), (backports_prefix, backports)]
    );
}

#[test]
fn markers_name_an_exact_compiler() {
    let dir = crate::project_root().join("target/kshim/test-scratch/debian-marker");
    let _ = std::fs::remove_dir_all(&dir);
    let prefix = prefix_of(&dir, "rustc", "1.85.1+dfsg1-1+deb13u1");
    std::fs::create_dir_all(&prefix).unwrap();
    assert_eq!(read_marker(&prefix), None);
    std::fs::write(prefix.join(MARKER), "trixie:rustc\n").unwrap();
    assert_eq!(
        read_marker(&prefix),
        None,
        "a marker names an exact version"
    );
    std::fs::write(
        prefix.join(MARKER),
        "trixie:rustc=1.85.1+dfsg1-1+deb13u1\nlibc6=2.41-12 (trixie)\n",
    )
    .unwrap();
    let found = provisioned_prefixes(&dir);
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0].1.to_string(),
        "trixie:rustc=1.85.1+dfsg1-1+deb13u1"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
