// SPDX-License-Identifier: GPL-2.0
//! Tests of the private apt: syntax against the real dpkg, closures over fixtures captured
//! from the registry, atomic unpacking of real `.deb` files, and (ignored) a real provisioning.

use super::private::{apt_options, reachability_settings, Mirrors};
use super::*;
use anyhow::{bail, Context};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use xshell::{cmd, Shell};

#[test]
fn names_versions_and_suites_follow_debian_syntax() {
    for good in [
        "rustc",
        "rustc-web",
        "libstdc++6",
        "libstd-rust-1.85",
        "g++",
        "0ad",
    ] {
        assert!(is_package_name(good), "{good}");
    }
    for bad in [
        "--help",
        "-o",
        "Rustc",
        "r",
        "",
        "rustc=1",
        "rustc web",
        "a;b",
        "a/b",
    ] {
        assert!(!is_package_name(bad), "{bad}");
    }
    for good in [
        "1.85.1+dfsg1-1+deb13u1",
        "1:19.1.7-3+b1",
        "1.98.1+dfsg1-1~exp1",
        "2.41",
        "1:1.3.dfsg+really1.3.1-1+deb13u1",
        "3.1-20250104-1",
    ] {
        assert!(is_version(good), "{good}");
    }
    for bad in [
        "--help", "", "x1.0", "1.0-", ":1.0", "a:1.0", "1.0 -1", "1.0-a_b", "1:", "1.0;ls",
    ] {
        assert!(!is_version(bad), "{bad}");
    }
    for good in [
        "sid",
        "bookworm-security",
        "trixie-backports",
        "experimental",
    ] {
        assert!(is_suite(good), "{good}");
    }
    for bad in ["--help", "", "Sid", "sid/main", "../etc", "sid main"] {
        assert!(!is_suite(bad), "{bad}");
    }
    let error = checked_package("--help").unwrap_err().to_string();
    assert!(
        error.contains("`--help` is not a Debian package name"),
        "{error}"
    );
}

#[test]
fn versions_compare_as_dpkg_says() {
    let ordered = [
        "1.0~rc1",
        "1.0",
        "1.0-1~bpo13+1",
        "1.0-1",
        "1.0a",
        "1.0+dfsg1-1",
        "1.2",
        "1.10",
        "1:0.1",
    ];
    for (i, a) in ordered.iter().enumerate() {
        for (j, b) in ordered.iter().enumerate() {
            assert_eq!(compare_versions(a, b), i.cmp(&j), "{a} vs {b}");
        }
    }
    assert_eq!(compare_versions("1.01", "1.1"), Ordering::Equal);
    assert_eq!(
        compare_versions("1.97.1+dfsg1-1~bpo13+1", "1.97.1+dfsg1-1"),
        Ordering::Less
    );
}

#[test]
fn versions_compare_as_the_real_dpkg_does() {
    let sh = Shell::new().unwrap();
    let versions = [
        "1.85.1+dfsg1-1+deb13u1",
        "1.85.1+dfsg1-1",
        "1.85.0+dfsg3-1~deb12u3",
        "1:19.1.7-3+b1",
        "1:19.1.7-3",
        "19.1.7-3",
        "2.41-12+deb13u5",
        "2.41-12",
        "1.0~~",
        "1.0~",
        "1.0",
        "1.0.0",
    ];
    for a in versions {
        for b in versions {
            let less = cmd!(sh, "dpkg --compare-versions {a} lt {b}")
                .quiet()
                .ignore_status()
                .output()
                .unwrap()
                .status
                .success();
            assert_eq!(compare_versions(a, b) == Ordering::Less, less, "{a} vs {b}");
        }
    }
}

#[test]
fn relations_of_real_depends_lines() {
    // libllvm19=1:19.1.7-22+b1 (sid), and libc6's first alternative syntax.
    let entries = parse_relations(
        "libc6 (>= 2.38), libedit2 (>= 2.11-20080614-0), libffi8 (>= 3.4), \
         libxml2-16 (>= 2.14.1), zlib1g (>= 1:1.2.0)",
    );
    assert_eq!(entries.len(), 5);
    assert_eq!(entries[1][0].name, "libedit2");
    assert_eq!(
        entries[1][0].constraint,
        Some((">=", "2.11-20080614-0".to_owned()))
    );
    assert!(entries[4][0].accepts("1:1.2.13.dfsg-1"));
    assert!(
        !entries[4][0].accepts("1.2.13.dfsg-1"),
        "no epoch sorts lower"
    );
    let entries = parse_relations("libc-dev | libc6-dev:amd64 (<< 3) [amd64] <!nocheck>, x (= 1)");
    assert_eq!(entries[0].len(), 2);
    assert_eq!(entries[0][1].to_string(), "libc6-dev (<< 3)");
    assert!(entries[0][1].accepts("2.36-9") && !entries[0][1].accepts("3"));
    assert!(entries[1][0].accepts("1") && !entries[1][0].accepts("1.0.1"));
    assert!(parse_relations("").is_empty());
}

#[test]
fn stanzas_and_the_hosts_deb822_sources() {
    // /etc/apt/sources.list.d/debian.sources as the machine's Debian image ships it.
    let sources = "Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
# http://snapshot.debian.org/archive/debian-security/20250520T000000Z
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
";
    let mirrors = Mirrors::from_deb822(sources).unwrap();
    assert_eq!(mirrors.archive, "http://deb.debian.org/debian");
    assert_eq!(mirrors.security, "http://deb.debian.org/debian-security");
    assert_eq!(mirrors.components, ["main"]);
    let suites = ["sid".to_owned(), "trixie-security".to_owned()];
    assert_eq!(
        mirrors.sources_list(&suites),
        "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main\n\
         deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security trixie-security main\n"
    );
    let disabled = "Types: deb\nURIs: http://a/debian\nSuites: sid\nEnabled: no\n\n\
                    Types: deb-src\nURIs: http://b/debian\nSuites: sid\n";
    let error = Mirrors::from_deb822(disabled).unwrap_err().to_string();
    assert!(error.contains("names no Debian archive"), "{error}");
    let odd = "Types: deb\nURIs: file:/srv/mirror\nSuites: sid\n";
    assert!(Mirrors::from_deb822(odd).is_err());
    let continued = parse_stanzas("Description: one\n two\n\n\n# c\nA: b\n");
    assert_eq!(continued.len(), 2);
    assert_eq!(continued[0].get("description"), Some("one\ntwo"));
}

#[test]
fn reachability_settings_of_the_hosts_apt_config_dump() {
    // Lines of a real `apt-config dump` (with a 99artifact-registry), plus a proxy.
    let dump = r#"Acquire "";
Acquire::AllowInsecureRepositories "0";
Acquire::IndexTargets::deb::Packages::MetaKey "$(COMPONENT)/binary-$(ARCHITECTURE)/Packages";
Acquire::Languages:: "none";
Acquire::Check-Valid-Until "false";
Acquire::Check-Date "false";
Acquire::http::Proxy "http://proxy.example:3128";
APT::Update::Post-Invoke-Success:: "/usr/bin/test -e /x";
"#;
    assert_eq!(
        reachability_settings(dump),
        [
            ("Acquire::Check-Valid-Until".to_owned(), "false".to_owned()),
            ("Acquire::Check-Date".to_owned(), "false".to_owned()),
            (
                "Acquire::http::Proxy".to_owned(),
                "http://proxy.example:3128".to_owned()
            ),
        ]
    );
}

#[test]
fn every_apt_path_is_inside_the_private_directory() {
    let dir = Path::new("/work/kshim/target/toolchains/apt");
    let carried = [("Acquire::Check-Valid-Until".to_owned(), "false".to_owned())];
    let options = apt_options(dir, "amd64", &carried);
    for (key, value) in &options {
        if key.starts_with("Dir::") {
            assert!(Path::new(value).starts_with(dir), "{key}={value}");
        }
    }
    for key in [
        "Dir::Etc::SourceList",
        "Dir::Etc::SourceParts",
        "Dir::State::Lists",
        "Dir::State::Status",
        "Dir::Cache",
        "Dir::Log",
        "Dir::Etc::PreferencesParts",
    ] {
        assert!(options.iter().any(|(k, _)| k == key), "{key} is not set");
    }
    assert_eq!(options.last(), Some(&carried[0]));
}

#[test]
fn madison_with_suites_and_reverse_provides() {
    // `apt-cache madison rustc` with bullseye to experimental listed.
    let listing = "     rustc | 1.98.1+dfsg1-1~exp1 | http://deb.debian.org/debian experimental/main amd64 Packages
 rustc | 1.97.1+dfsg1-1 | http://deb.debian.org/debian sid/main amd64 Packages
 rustc | 1.97.1+dfsg1-1~bpo13+1 | http://deb.debian.org/debian trixie-backports/main amd64 Packages
 rustc | 1.85.1+dfsg1-1+deb13u1 | http://deb.debian.org/debian trixie/main amd64 Packages
 rustc | 1.85.1+dfsg1-1+deb13u1 | http://deb.debian.org/debian trixie/main Sources
 rustc | 1.48.0+dfsg1-2 | http://deb.debian.org/debian bullseye/main amd64 Packages
";
    let served = parse_madison_entries(listing, "rustc");
    assert_eq!(served.len(), 5);
    assert_eq!(
        served[2],
        Served {
            version: "1.97.1+dfsg1-1~bpo13+1".into(),
            suite: "trixie-backports".into()
        }
    );
    assert_eq!(served[4].version, "1.48.0+dfsg1-2");
    // `apt-cache showpkg libc-dev`, its end.
    let showpkg = "Reverse Provides: \nlibc6-dev 2.41-12+deb13u5 (= 2.41-12+deb13u5)\nlibc6-dev 2.31-13+deb11u11 (= )\n";
    assert_eq!(
        parse_reverse_provides(showpkg),
        [
            ("libc6-dev".to_owned(), "2.41-12+deb13u5".to_owned()),
            ("libc6-dev".to_owned(), "2.31-13+deb11u11".to_owned())
        ]
    );
    assert!(parse_reverse_provides("Package: x\n").is_empty());
}

/// A [`PackageIndex`] over a fixture captured from the registry.
struct FixtureIndex {
    madison: String,
    providers: BTreeMap<String, String>,
    records: Vec<Stanza>,
    installed: BTreeMap<String, String>,
}

impl FixtureIndex {
    fn load(name: &str) -> FixtureIndex {
        let path = crate::project_root()
            .join("xtask/tests/fixtures/apt")
            .join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let installed = text
            .lines()
            .filter_map(|line| line.strip_prefix("# installed "))
            .filter_map(|rest| rest.split_once(' '))
            .filter(|(_, version)| *version != "-")
            .map(|(name, version)| (name.to_owned(), version.to_owned()))
            .collect();
        let (head, records) = text.split_once("## records\n").unwrap();
        let mut parts = head.split("\n## ");
        let madison = parts
            .find_map(|part| part.strip_prefix("madison\n"))
            .unwrap()
            .to_owned();
        let providers = head
            .split("\n## showpkg ")
            .skip(1)
            .filter_map(|part| part.split_once('\n'))
            .map(|(name, body)| (name.to_owned(), body.to_owned()))
            .collect();
        FixtureIndex {
            madison,
            providers,
            records: parse_stanzas(records),
            installed,
        }
    }
}

impl PackageIndex for FixtureIndex {
    fn served(&mut self, name: &str) -> anyhow::Result<Vec<Served>> {
        Ok(parse_madison_entries(&self.madison, name))
    }
    fn record(&mut self, name: &str, version: &str) -> anyhow::Result<Stanza> {
        self.records
            .iter()
            .find(|record| {
                record.get("Package") == Some(name) && record.get("Version") == Some(version)
            })
            .cloned()
            .with_context(|| format!("the fixture has no record of {name}={version}"))
    }
    fn providers(&mut self, name: &str) -> anyhow::Result<Vec<(String, String)>> {
        Ok(self
            .providers
            .get(name)
            .map(|text| parse_reverse_provides(text))
            .unwrap_or_default())
    }
    fn installed(&mut self, name: &str) -> anyhow::Result<Option<String>> {
        Ok(self.installed.get(name).cloned())
    }
}

fn suites(names: &[&str]) -> Vec<String> {
    names.iter().map(|name| name.to_string()).collect()
}

fn names(closure: &[Resolved]) -> Vec<String> {
    closure
        .iter()
        .map(|package| format!("{}={}", package.name, package.version))
        .collect()
}

#[test]
fn bullseye_rustc_web_borrows_what_the_bookworm_host_has() {
    let mut index = FixtureIndex::load("closure-bullseye.txt");
    let bullseye = suites(&["bullseye-security", "bullseye-updates", "bullseye"]);
    let closure = closure(
        &mut index,
        "rustc-web",
        "1.78.0+dfsg1-2~deb11u3",
        &bullseye,
        HostLibraries::Reuse,
    )
    .unwrap();
    assert_eq!(
        names(&closure),
        [
            "libffi7=3.3-6",
            "libllvm16=1:16.0.6-15~deb11u2",
            "libstd-rust-web-1.78=1.78.0+dfsg1-2~deb11u3",
            "libstd-rust-web-dev=1.78.0+dfsg1-2~deb11u3",
            "rustc-web=1.78.0+dfsg1-2~deb11u3",
        ]
    );
    let ffi = &closure[0];
    assert_eq!(ffi.deb_file_name(), "libffi7_3.3-6_amd64.deb");
    assert_eq!(
        closure[1].deb_file_name(),
        "libllvm16_1%3a16.0.6-15~deb11u2_amd64.deb"
    );
    assert!(closure
        .iter()
        .all(|package| package.source != C_LIBRARY_SOURCE));
}

#[test]
fn trixie_rustc_brings_its_own_c_library() {
    let mut index = FixtureIndex::load("closure-trixie.txt");
    let trixie = suites(&["trixie-security", "trixie-updates", "trixie"]);
    let closure = closure(
        &mut index,
        "rustc",
        "1.85.1+dfsg1-1+deb13u1",
        &trixie,
        HostLibraries::Never,
    )
    .unwrap();
    let taken = names(&closure);
    for wanted in [
        "libc6=2.41-12+deb13u5",
        "libllvm19=1:19.1.7-3+b1",
        "libstd-rust-dev=1.85.1+dfsg1-1+deb13u1",
        "libstdc++6=14.2.0-19",
        "zlib1g=1:1.3.dfsg+really1.3.1-1+deb13u1",
    ] {
        assert!(
            taken.contains(&wanted.to_owned()),
            "{wanted} not in {taken:?}"
        );
    }
    assert_eq!(closure.len(), 18, "{taken:?}");
    // Programs rustc starts (gcc, binutils) and files it does not load (libc6-dev) stay the
    // host's.
    assert!(
        !taken.iter().any(|name| name.starts_with("gcc=")
            || name.starts_with("binutils=")
            || name.starts_with("libc6-dev=")),
        "{taken:?}"
    );
    let zlib = closure
        .iter()
        .find(|package| package.name == "zlib1g")
        .unwrap();
    assert_eq!(
        zlib.suite, "trixie-security",
        "the first suite that serves a fitting version"
    );
    let total: u64 = closure.iter().map(|package| package.size).sum();
    assert!(total > 100_000_000, "{total}");
}

#[test]
fn what_cannot_be_resolved_is_named() {
    let mut index = FixtureIndex::load("closure-trixie.txt");
    let trixie = suites(&["trixie"]);
    let error = closure(
        &mut index,
        "rustc",
        "1.85.0+dfsg1-1",
        &trixie,
        HostLibraries::Never,
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("the suite trixie serve no rustc=1.85.0+dfsg1-1; the registry has rustc 1.85.1+dfsg1-1+deb13u1 (trixie)"), "{error}");
    let error = closure(
        &mut index,
        "rustc",
        "1.85.1+dfsg1-1+deb13u1",
        &suites(&["sid"]),
        HostLibraries::Never,
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("the suite sid serve no rustc=1.85.1"),
        "{error}"
    );
    let error = closure(&mut index, "rustc", "--help", &trixie, HostLibraries::Never)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("`--help` is not a Debian version"),
        "{error}"
    );
    // A library the suites do not serve stops the closure, naming who needs it.
    index.madison = index
        .madison
        .lines()
        .filter(|line| !line.contains(" libffi8 "))
        .collect::<Vec<_>>()
        .join("\n");
    let error = closure(
        &mut index,
        "rustc",
        "1.85.1+dfsg1-1+deb13u1",
        &suites(&["trixie-security", "trixie"]),
        HostLibraries::Never,
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("libllvm19=1:19.1.7-3+b1 depends on libffi8 (>= 3.4), which the suites trixie-security, trixie do not serve"), "{error}");
}

fn scratch(name: &str) -> PathBuf {
    let dir = crate::project_root()
        .join("target/kshim/test-scratch/apt")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Builds a real `.deb` holding `usr/share/kshim/NAME.txt`.
fn build_deb(sh: &Shell, dir: &Path, name: &str) -> PathBuf {
    let root = dir.join(format!("{name}-root"));
    std::fs::create_dir_all(root.join("DEBIAN")).unwrap();
    std::fs::create_dir_all(root.join("usr/share/kshim")).unwrap();
    std::fs::write(
        root.join("DEBIAN/control"),
        format!("Package: {name}\nVersion: 1.0\nArchitecture: all\nMaintainer: kshim <kshim@localhost>\nDescription: test\n"),
    )
    .unwrap();
    std::fs::write(root.join(format!("usr/share/kshim/{name}.txt")), name).unwrap();
    let deb = dir.join(format!("{name}.deb"));
    crate::tests::support::read_quietly(cmd!(
        sh,
        "dpkg-deb --root-owner-group --build {root} {deb}"
    ));
    deb
}

#[test]
fn unpacking_is_all_or_nothing() {
    let sh = Shell::new().unwrap();
    let dir = scratch("unpack");
    let debs = [
        build_deb(&sh, &dir, "first"),
        build_deb(&sh, &dir, "second"),
    ];
    let destination = dir.join("prefix");
    unpack_atomically(&sh, &debs, &destination, |staging| {
        assert!(staging.join("usr/share/kshim/second.txt").is_file());
        Ok(())
    })
    .unwrap();
    assert!(destination.join("usr/share/kshim/first.txt").is_file());

    // A check that fails leaves the complete copy alone and no staging behind.
    let error = unpack_atomically(&sh, &debs[..1], &destination, |_| {
        bail!("it will not start")
    })
    .unwrap_err();
    assert_eq!(error.to_string(), "it will not start");
    assert!(destination.join("usr/share/kshim/second.txt").is_file());
    // So does a package cut short.
    let bytes = std::fs::read(&debs[1]).unwrap();
    let cut = dir.join("cut.deb");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let error = unpack_atomically(&sh, &[debs[0].clone(), cut], &dir.join("other"), |_| Ok(()))
        .unwrap_err();
    // What dpkg-deb said is in the error (it went to the terminal, not into the error).
    let error = format!("{error:#}");
    assert!(
        error.contains("unpacking")
            && error.contains("dpkg-deb exited with")
            && error.contains("unexpected end of file"),
        "{error}"
    );
    assert!(!dir.join("other").exists());
    let leftovers: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Only the members named are extracted (dpkg-deb's data piped through tar); a member the
/// package lacks, or a package cut short, is an error with what tar or dpkg-deb said.
#[test]
fn extracting_some_members_through_tar() {
    let sh = Shell::new().unwrap();
    let dir = scratch("extract");
    let deb = build_deb(&sh, &dir, "some");
    let members = list_members(&deb).unwrap();
    let text = "./usr/share/kshim/some.txt".to_owned();
    assert!(members.contains(&text), "{members:?}");
    let destination = dir.join("prefix");
    extract_atomically(&deb, &[text], &destination, |_| Ok(())).unwrap();
    let extracted = std::fs::read_to_string(destination.join("usr/share/kshim/some.txt"));
    assert_eq!(extracted.unwrap(), "some");
    assert!(!destination.join("DEBIAN").exists());

    let missing = ["./usr/share/kshim/none.txt".to_owned()];
    let error = extract_atomically(&deb, &missing, &dir.join("other"), |_| Ok(())).unwrap_err();
    let error = format!("{error:#}");
    assert!(
        error.contains("tar exited with exit status: 2: "),
        "{error}"
    );
    assert!(error.contains("none.txt: Not found in archive"), "{error}");
    assert!(!dir.join("other").exists());

    let bytes = std::fs::read(&deb).unwrap();
    let cut = dir.join("cut.deb");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let error = format!("{:#}", list_members(&cut).unwrap_err());
    assert!(
        error.contains("tar: This does not look like a tar archive"),
        "{error}"
    );
    let dpkg_deb = format!("`dpkg-deb --fsys-tarfile {}` exited with", cut.display());
    assert!(error.contains(&dpkg_deb), "{error}");
}

/// Provisions Debian's 1.78.0 (bullseye's rustc-web) for real: the private apt, the
/// closure, the download and the unpacking, and the compiler's own `-vV`.
#[test]
#[ignore = "downloads about 85 MB from Debian's registry; run with `cargo test -p xtask -- --ignored`"]
fn provisions_rustc_web_1_78_0_from_bullseye() {
    let sh = Shell::new().unwrap();
    let root = crate::project_root().join("target/kshim/test-scratch/apt-network");
    let bullseye = suites(&["bullseye-security", "bullseye-updates", "bullseye"]);
    let apt = PrivateApt::create(&sh, &root.join("apt"), &bullseye).unwrap();
    let problems = apt.update(&sh).unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    let mut index = AptIndex::new(&sh, &apt);
    let version = "1.78.0+dfsg1-2~deb11u3";
    let packages = closure(
        &mut index,
        "rustc-web",
        version,
        &bullseye,
        HostLibraries::Reuse,
    )
    .unwrap();
    assert!(packages
        .iter()
        .any(|package| package.name.starts_with("libllvm16")));
    let downloaded = apt.download(&sh, &packages, &root.join("debs")).unwrap();
    let total: u64 = packages.iter().map(|package| package.size).sum();
    assert!(total > 50_000_000, "{downloaded:?}");
    let prefix = root.join("rustc-web-1.78.0");
    unpack_atomically(&sh, &downloaded.files, &prefix, |staging| {
        crate::toolchains::loader::Launch::for_prefix(staging)?
            .run(&["-vV"], Duration::from_secs(60))?;
        Ok(())
    })
    .unwrap();
    let launch = crate::toolchains::loader::Launch::for_prefix(&prefix).unwrap();
    assert_eq!(launch.loader, None);
    let said = launch.run(&["-vV"], Duration::from_secs(60)).unwrap();
    assert!(said.contains("release: 1.78.0"), "{said}");
}
#[test]
fn relations_of_rustc_webs_depends() {
    // `apt-cache show rustc-web=1.85.0+dfsg3-1~deb12u3`.
    let entries = parse_relations(
        "libc6 (>= 2.34), libgcc-s1 (>= 3.0), libstd-rust-web-dev (= 1.85.0+dfsg3-1~deb12u3), \
         gcc, libc-dev, binutils (>= 2.26)",
    );
    let names: Vec<&str> = entries.iter().map(|e| e[0].name.as_str()).collect();
    assert_eq!(
        names,
        [
            "libc6",
            "libgcc-s1",
            "libstd-rust-web-dev",
            "gcc",
            "libc-dev",
            "binutils"
        ]
    );
    assert_eq!(
        entries[2][0].constraint,
        Some(("=", "1.85.0+dfsg3-1~deb12u3".to_owned()))
    );
    assert_eq!(entries[3][0].constraint, None);
    let alternatives = parse_relations("libc-dev | libc6-dev:amd64 (>= 2), python3:any");
    assert_eq!(alternatives[0][1].name, "libc6-dev");
    assert_eq!(alternatives[1][0].to_string(), "python3");
}

#[test]
fn madison_listing() {
    let listing = " rustc-web | 1.96.0+dfsg1-1~deb12u2 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
 rustc-web | 1.85.0+dfsg3-1~deb12u3 | http://deb.debian.org/debian bookworm/main amd64 Packages
 rustc-web | 1.85.0+dfsg3-1~deb12u3 | http://deb.debian.org/debian bookworm/main Sources
 rustc-web-doc | 1.85.0+dfsg3-1~deb12u3 | http://deb.debian.org/debian bookworm/main amd64 Packages
";
    let versions: Vec<String> = parse_madison_entries(listing, "rustc-web")
        .into_iter()
        .map(|served| served.version)
        .collect();
    assert_eq!(
        versions,
        ["1.96.0+dfsg1-1~deb12u2", "1.85.0+dfsg3-1~deb12u3"]
    );
    assert!(parse_madison_entries("", "rustc").is_empty());
}
