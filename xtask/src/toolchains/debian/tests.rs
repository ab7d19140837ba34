// SPDX-License-Identifier: GPL-2.0
//! Tests of [`crate::toolchains::debian`]: sources, suites, prefixes, markers, and what a
//! provisioner takes as there already.

use super::*;
use crate::tests::support::current_rustc;

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
    crate::toolchains::digests::record(&prefix).unwrap();
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
        let error = DebianSource::parse(bad).unwrap_err().to_string();
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

/// A provisioner under `root` that keeps what it says in `said`.
fn provisioner_logging<'a>(
    sh: &'a Shell,
    root: &Path,
    suites: Vec<String>,
    log: &'a mut dyn FnMut(&str),
) -> Provisioner<'a> {
    Provisioner::new(sh, root.to_path_buf(), suites, log)
}

/// A suite that `apt-get update` cannot list (a typo) is left out of the private sources list
/// once the provisioning that named it has failed, so that no later provisioning updates it
/// again, while the suites it could list stay. It asks deb.debian.org, as provisioning does.
#[test]
fn a_suite_apt_cannot_list_is_not_kept_in_the_private_sources_list() {
    let root = crate::project_root().join("target/kshim/unit-tests/typo-suite");
    let _ = std::fs::remove_dir_all(&root);
    let sh = Shell::new().unwrap();
    let typo = DebianSource::parse("bookwrom:rustc").unwrap();
    // One small real suite beside the typo's, as the private apt keeps those it listed before.
    let mut suites = typo.suites();
    suites.push("bookworm-updates".to_owned());
    let mut said = Vec::new();
    let mut log = |line: &str| said.push(line.to_owned());
    let error = provisioner_logging(&sh, &root, suites, &mut log)
        .provision(&typo, None, &|_| Ok(()))
        .map(|provisioned| provisioned.prefix)
        .unwrap_err();
    let error = format!("{error:#}");
    assert!(
        error.starts_with("apt-get update failed for bookwrom-security: ")
            && error.contains("serve no rustc at all"),
        "{error}"
    );
    let list = std::fs::read_to_string(root.join("apt/sources.list")).unwrap();
    assert!(!list.contains("bookwrom"), "the typo was kept:\n{list}");
    assert!(
        list.contains(" bookworm-updates "),
        "bookworm-updates, which apt-get update listed, was not kept (is deb.debian.org \
         reachable?):\n{list}\n{said:#?}"
    );
    // The next provisioning updates what was kept, and nothing of the typo.
    let mut said = Vec::new();
    let mut log = |line: &str| said.push(line.to_owned());
    let mut later = provisioner_logging(&sh, &root, Vec::new(), &mut log);
    later.apt().unwrap();
    drop(later);
    assert!(
        said.iter()
            .any(|line| line.starts_with("apt-get update of 1 suites")),
        "{said:#?}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// A complete prefix at `prefix` whose marker says it holds `source`, with a compiler that
/// answers (the real one, linked).
fn fake_prefix(prefix: &Path, source: &DebianSource, rustc: &Path) {
    std::fs::create_dir_all(prefix.join("usr/bin")).unwrap();
    std::os::unix::fs::symlink(rustc, prefix.join("usr/bin/rustc")).unwrap();
    std::fs::write(prefix.join(MARKER), format!("{source}\n")).unwrap();
}

/// A prefix found for a compiler (by its name, old or new, or among all for a release) is taken
/// only when its marker names the suite asked for: one suite's build of a version is never
/// taken for another suite's, which resolves other libraries.
#[test]
fn a_reused_prefix_is_taken_only_for_the_suite_its_marker_names() {
    let root = crate::project_root().join("target/kshim/unit-tests/reused-prefix");
    let _ = std::fs::remove_dir_all(&root);
    let rustc = current_rustc();
    let sid = DebianSource::parse("sid:rustc=1.97.1+dfsg1-1").unwrap();
    let forky = DebianSource::parse("forky:rustc=1.97.1+dfsg1-1").unwrap();
    // sid's build under the older name (PACKAGE-VERSION, no suite), and a prefix under forky's
    // name whose marker names sid (copied there).
    let old = root.join("debian/rustc-1.97.1+dfsg1-1");
    let misnamed = root.join("debian/forky_rustc-1.97.1+dfsg1-1");
    fake_prefix(&old, &sid, &rustc);
    fake_prefix(&misnamed, &sid, &rustc);
    let sh = Shell::new().unwrap();
    let mut log = |_: &str| {};
    let mut provisioner = provisioner_logging(&sh, &root, Vec::new(), &mut log);
    let any = |_: &RustcVersion| Ok(());
    let unversioned = |source: &DebianSource| DebianSource {
        version: None,
        ..source.clone()
    };
    let taken = provisioner
        .already_there(&forky, None, &any)
        .map(|found| (found.prefix, found.source));
    assert_eq!(taken, None, "sid's build was taken for forky's");
    let taken = provisioner
        .already_there(&unversioned(&forky), Some("1.97.1"), &any)
        .map(|found| (found.prefix, found.source));
    assert_eq!(taken, None, "sid's build was taken for forky's 1.97.1");
    for (asked, release) in [(sid.clone(), None), (unversioned(&sid), Some("1.97.1"))] {
        let found = provisioner
            .already_there(&asked, release, &any)
            .unwrap_or_else(|| panic!("{asked}: sid's own build was not taken"));
        assert_eq!(found.source, sid);
        assert!(found.unpacked.is_none());
    }
    drop(provisioner);
    std::fs::remove_dir_all(&root).unwrap();
}

/// A spec without a version (`bookworm-security:rustc-web`) takes the newest build the suite
/// serves, and when a prefix of exactly that build is there, it is taken as it is, not unpacked
/// again over itself (which made every run's compiler a new file, and so a cache miss). It asks
/// deb.debian.org for bookworm-security's list alone.
#[test]
fn a_spec_without_a_version_takes_the_newest_build_when_it_is_there() {
    let root = crate::project_root().join("target/kshim/unit-tests/newest-there");
    let _ = std::fs::remove_dir_all(&root);
    let sh = Shell::new().unwrap();
    let asked = DebianSource::parse("bookworm-security:rustc-web").unwrap();
    let mut said = Vec::new();
    let mut log = |line: &str| said.push(line.to_owned());
    let suites = vec!["bookworm-security".to_owned()];
    let mut provisioner = provisioner_logging(&sh, &root, suites, &mut log);
    let (_, newest) = provisioner
        .apt_and_version(&asked.package, None, &asked.suites(), None)
        .unwrap_or_else(|error| panic!("is deb.debian.org reachable? {error:#}"));
    let exact = DebianSource {
        version: Some(newest),
        ..asked.clone()
    };
    let prefix = compiler_prefix(&root, &exact);
    fake_prefix(&prefix, &exact, &current_rustc());
    let found = provisioner
        .provision(&asked, None, &|_| Ok(()))
        .map(|found| (found.prefix, found.source, found.unpacked.is_none()));
    assert_eq!(found.unwrap(), (prefix, exact, true));
    drop(provisioner);
    std::fs::remove_dir_all(&root).unwrap();
}

/// A package that is no compiler (`openssl` from bookworm-security) is refused from the index,
/// before anything is fetched: any package was accepted as a compiler, and 153 MB of kernel
/// source were downloaded before that was noticed. It asks deb.debian.org for
/// bookworm-security's list alone.
#[test]
fn a_package_that_is_no_compiler_is_refused_before_anything_is_fetched() {
    let root = crate::project_root().join("target/kshim/unit-tests/no-compiler");
    let _ = std::fs::remove_dir_all(&root);
    let sh = Shell::new().unwrap();
    let asked = DebianSource::parse("bookworm-security:openssl").unwrap();
    let mut said = Vec::new();
    let mut log = |line: &str| said.push(line.to_owned());
    let suites = vec!["bookworm-security".to_owned()];
    let error = provisioner_logging(&sh, &root, suites, &mut log)
        .provision(&asked, None, &|_| Ok(()))
        .map(|provisioned| provisioned.prefix)
        .unwrap_err();
    let error = format!("{error:#}");
    assert!(
        error.contains("is no Rust compiler") && error.ends_with("nothing was fetched"),
        "is deb.debian.org reachable? {error}"
    );
    let downloads = root.join("debian/downloads");
    let fetched = std::fs::read_dir(&downloads).map_or(0, |entries| entries.count());
    assert_eq!(fetched, 0, "{} holds downloads", downloads.display());
    std::fs::remove_dir_all(&root).unwrap();
}
