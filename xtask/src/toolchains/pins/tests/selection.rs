// SPDX-License-Identifier: GPL-2.0
//! Which pins a run takes: the shards that split them between CI jobs, and release ranges.

use super::*;

#[test]
fn shards_are_balanced_disjoint_and_complete() {
    let pins = numbered_pins(11);
    for count in 1..=11 {
        let mut seen = Vec::new();
        let mut sizes = Vec::new();
        for index in 1..=count {
            let members = Shard { index, count }.pins(&pins.pins);
            sizes.push(members.len());
            seen.extend(members.iter().map(|pin| pin.id.clone()));
        }
        seen.sort();
        let mut all: Vec<String> = pins.pins.iter().map(|pin| pin.id.clone()).collect();
        all.sort();
        assert_eq!(
            seen, all,
            "{count} shards must cover every pin exactly once"
        );
        let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
        assert!(max - min <= 1, "{count} shards are unbalanced: {sizes:?}");
    }
}

#[test]
fn shard_syntax() {
    let shard = Shard::parse("13/13").unwrap();
    assert_eq!(
        shard.check(12).unwrap_err().to_string(),
        "--shard 13/13 splits 12 toolchains into 13 shards; at most 12 can each have one"
    );
    assert!(Shard::parse("12/12").unwrap().check(12).is_ok());
    assert_eq!(Shard::parse("2/5").unwrap(), Shard { index: 2, count: 5 });
    for bad in ["0/3", "4/3", "3", "a/b", "1/0", ""] {
        let error = Shard::parse(bad).unwrap_err().to_string();
        assert!(error.contains("K/N"), "{bad:?}: {error}");
    }
}

#[test]
fn release_ranges_read_as_cargo_hack_writes_them() {
    use crate::catalog::Release;
    use crate::toolchains::pins::ReleaseRange;
    let release = |minor, patch| Release::new(1, minor, patch);
    let inside =
        |text: &str, candidate: Release| ReleaseRange::parse(text).unwrap().contains(candidate);
    assert!(inside("1.78..", release(78, 0)) && inside("1.78..", release(98, 1)));
    assert!(!inside("1.78..", release(63, 0)));
    assert!(inside("1.78..1.85", release(84, 1)) && !inside("1.78..1.85", release(85, 0)));
    assert!(inside("1.78..=1.85", release(85, 1)) && !inside("1.78..=1.85", release(86, 0)));
    assert!(inside("..=1.85.0", release(85, 0)) && !inside("..=1.85.0", release(85, 1)));
    assert!(inside("..", release(48, 0)));
    for bad in ["1.78", "1.x..", "..=", "1.78...1.80"] {
        assert!(ReleaseRange::parse(bad).is_err(), "{bad}");
    }
}
