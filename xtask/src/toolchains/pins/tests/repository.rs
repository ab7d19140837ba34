// SPDX-License-Identifier: GPL-2.0
//! The repository's own pins: every release the catalog and the project need, and the kernel
//! trees.

use super::*;

fn repository_pins() -> Pins {
    Pins::load(&Pins::default_path()).unwrap_or_else(|error| panic!("{error:#}"))
}

fn pinned(pins: &Pins, release: Release, role: PinRole) -> bool {
    pins.pins
        .iter()
        .any(|pin| pin.release == release.to_string() && pin.role == role)
}

#[test]
fn every_release_the_catalog_names_is_pinned() {
    let pins = repository_pins();
    assert!(
        pinned(&pins, catalog::MINIMUM_RELEASE, PinRole::Minimum),
        "toolchains.toml has no `minimum` pin for {}",
        catalog::MINIMUM_RELEASE
    );
    let mut releases: Vec<Release> = catalog::FEATURES
        .iter()
        .flat_map(|feature| [feature.stable_since, feature.known_since])
        .flatten()
        .chain(catalog::KCONFIG_CFGS.iter().map(|cfg| cfg.from))
        .collect();
    releases.sort();
    releases.dedup();
    for release in releases {
        assert!(
            pinned(&pins, release, PinRole::Feature),
            "the catalog names {release} but toolchains.toml has no `feature` pin for it"
        );
    }
    for pin in pins.pins.iter().filter(|pin| pin.role == PinRole::Feature) {
        let (release, _) = parse_release(&pin.release).unwrap();
        assert!(
            !crate::features::expect::catalog_facts(release).is_empty(),
            "toolchains.toml:{}: pin `{}` has role `feature` but the catalog names no \
             feature at {release}",
            pin.line,
            pin.id
        );
    }
}

#[test]
fn the_rust_toolchain_pin_is_rust_toolchain_toml_channel() {
    let pins = repository_pins();
    let file = crate::project_root().join("rust-toolchain.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    let channel = text
        .lines()
        .find_map(|line| line.trim().strip_prefix("channel = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap_or_else(|| panic!("no channel in {}", file.display()));
    let pin = pins
        .pins
        .iter()
        .find(|pin| pin.role == PinRole::RustToolchain)
        .expect("toolchains.toml has no `rust-toolchain` pin");
    assert_eq!(pin.release, channel, "toolchains.toml:{}", pin.line);
    assert_eq!(
        pin.rustup.as_deref(),
        Some(channel),
        "toolchains.toml:{}",
        pin.line
    );
}

#[test]
fn the_repository_pins_what_the_project_needs() {
    let pins = repository_pins();
    let releases: Vec<(&str, &str)> = pins
        .pins
        .iter()
        .map(|pin| (pin.release.as_str(), pin.role.word()))
        .collect();
    for wanted in [
        ("1.63.0", "debian"),
        ("1.85.0", "debian"),
        ("1.96.0", "debian"),
        ("1.97.0-nightly", "nightly"),
    ] {
        assert!(releases.contains(&wanted), "{wanted:?} is not pinned");
    }
    let nightly = pins
        .pins
        .iter()
        .find(|pin| pin.role == PinRole::Nightly)
        .unwrap();
    assert_eq!(nightly.commit_date.as_deref(), Some("2026-05-19"));
}

#[test]
fn the_repository_pins_the_four_debian_trees() {
    let ids: Vec<String> = repository_pins()
        .trees
        .iter()
        .map(|tree| tree.id.clone())
        .collect();
    assert_eq!(ids, ["6.1", "6.12", "7.2", "7.3"]);
}
