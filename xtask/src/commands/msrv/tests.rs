// SPDX-License-Identifier: GPL-2.0
//! The decision of `msrv` on rows made by hand: the oldest and the newest that build, what
//! failed or was not there between them, release order, the exit status and the JSON.

use super::answer::{decide, in_release_order, Answer, Built, ModeAnswer, Row, BOTH_MODES, LISTS};
use crate::run::plan::Mode;
use crate::toolchains::discovery::{rustup_toolchain, Availability};
use crate::toolchains::pins::Pins;
use crate::util::output::{Style, Width};
use crate::Verdict;
use std::path::Path;

/// The full layout, uncoloured, as `--wide` prints it.
const WIDE: Style = Style {
    colour: false,
    width: Width::Wide,
};

fn row(id: &str, release: &str, stable: Built, kernel: Built) -> Row {
    Row {
        id: id.into(),
        release: crate::catalog::Release::parse(release.split('-').next().unwrap()),
        release_text: Some(release.into()),
        unavailable: None,
        stable,
        kernel,
        bootstrap_for: Vec::new(),
        cached: false,
    }
}

/// The list of `answer` that the JSON calls `member`.
fn list<'a>(answer: &'a ModeAnswer, member: &str) -> &'a [usize] {
    let at = LISTS
        .iter()
        .position(|(what, side, _)| format!("{what}_{side}") == member);
    &answer.lists[at.unwrap()]
}

fn fails() -> Built {
    Built::Fails("error[E0658]: use of unstable library feature".into())
}

fn missing(id: &str, release: &str) -> Row {
    let text = format!("[[pin]]\nid = \"{id}\"\nrelease = \"{release}\"\nrole = \"feature\"\n");
    let pin = Pins::parse(&text, Path::new("pins.toml"))
        .unwrap()
        .pins
        .remove(0);
    let install_hint = format!("rustup toolchain install {release}");
    not_there(Availability::Missing { pin, install_hint })
}

fn not_there(availability: Availability) -> Row {
    Row::of(&availability, |_, _| {
        unreachable!("the compiler is not there")
    })
}

#[test]
fn the_oldest_and_newest_that_build_with_what_lies_between() {
    let rows = in_release_order(vec![
        row("debian-1.98.1", "1.98.1", Built::Builds, fails()),
        missing("1.79.0", "1.79.0"),
        row("debian-1.63.0", "1.63.0", fails(), fails()),
        row("1.78.0", "1.78.0", Built::Builds, Built::Builds),
        row("debian-1.85.0", "1.85.0", fails(), Built::Builds),
        row(
            "debian-1.96.0",
            "1.96.0",
            Built::Builds,
            Built::Unknown("killed".into()),
        ),
        missing("1.99.0", "1.99.0"),
    ]);
    let ids: Vec<&str> = rows.iter().map(|row| row.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "debian-1.63.0",
            "1.78.0",
            "1.79.0",
            "debian-1.85.0",
            "debian-1.96.0",
            "debian-1.98.1",
            "1.99.0"
        ]
    );
    let stable = decide(&rows, Mode::Stable);
    assert_eq!((stable.oldest, stable.newest), (Some(1), Some(5)));
    assert_eq!(list(&stable, "fails_between"), [3]);
    assert_eq!(list(&stable, "unavailable_between"), [2]);
    assert_eq!(list(&stable, "unavailable_newer"), [6]);
    assert!(list(&stable, "unavailable_older").is_empty());
    // The failure older than the oldest is the answer itself, not a gap in it.
    assert!(!list(&stable, "fails_between").contains(&0));
    let kernel = decide(&rows, Mode::Kernel);
    assert_eq!((kernel.oldest, kernel.newest), (Some(1), Some(3)));
    assert_eq!(list(&kernel, "unavailable_between"), [2]);
    assert!(list(&kernel, "unknown_between").is_empty());
    // Newer than the newest: not built (killed) is said, a failure is not a gap.
    assert_eq!(list(&kernel, "unknown_newer"), [4]);
    assert_eq!(list(&kernel, "unavailable_newer"), [6]);
}

#[test]
fn a_missing_pin_older_than_the_oldest_says_the_oldest_may_be_older() {
    let answer = Answer::new(
        ("x".into(), "crate-root"),
        &BOTH_MODES,
        vec![
            missing("1.60.0", "1.60.0"),
            row("1.78.0", "1.78.0", Built::Builds, Built::Builds),
        ],
        Vec::new(),
    );
    let (mode, stable) = &answer.modes[0];
    assert_eq!(*mode, Mode::Stable);
    assert_eq!(list(stable, "unavailable_older"), [0]);
    let human = answer.text(Some(&WIDE));
    assert!(
        human.contains("not available and older (the oldest may be older still): 1.60.0"),
        "{human}"
    );
    assert_eq!(answer.verdict(), Verdict::Success);
}

#[test]
fn nothing_builds_is_a_failure_that_still_names_what_was_missing() {
    let answer = Answer::new(
        ("x".into(), "crate-root"),
        &BOTH_MODES,
        vec![
            row("debian-1.48.0", "1.48.0", fails(), fails()),
            missing("1.79.0", "1.79.0"),
        ],
        Vec::new(),
    );
    assert_eq!(answer.verdict(), Verdict::Failure);
    let human = answer.text(Some(&WIDE));
    assert!(
        human.contains("stable mode: no compiler here builds it"),
        "{human}"
    );
    assert!(human.contains("not available: 1.79.0"), "{human}");
    let json = answer.to_json();
    assert_eq!(json["verdict"], "failure");
    assert_eq!(json["modes"][0]["oldest"], serde_json::Value::Null);
    assert_eq!(json["toolchains"][1]["available"], "missing");
}

#[test]
fn a_nightly_stands_by_its_release_and_a_compiler_without_one_comes_last() {
    let toolchain = rustup_toolchain("/opt/rustc", Path::new("/opt/rustc"));
    let error = "exit 1".into();
    let broken = not_there(Availability::Broken { toolchain, error });
    let rows = in_release_order(vec![
        broken,
        row("debian-1.97.1", "1.97.1", Built::Builds, Built::Builds),
        row("nightly", "1.97.0-nightly", Built::Builds, Built::Builds),
        row("1.95.0", "1.95.0", Built::Builds, Built::Builds),
    ]);
    let ids: Vec<&str> = rows.iter().map(|row| row.id.as_str()).collect();
    assert_eq!(ids, ["1.95.0", "nightly", "debian-1.97.1", "/opt/rustc"]);
    // The broken one has no release, so it is never "between".
    let stable = decide(&rows, Mode::Stable);
    assert_eq!(list(&stable, "unavailable_newer"), [3]);
}

#[test]
fn a_kernel_tree_answers_kernel_mode_alone_and_names_the_gated_features() {
    let mut builds = row(
        "debian-1.85.0",
        "1.85.0",
        Built::Unknown("n/a".into()),
        Built::Builds,
    );
    builds.bootstrap_for = vec!["asm_goto".into(), "arbitrary_self_types".into()];
    let answer = Answer::new(
        ("the kernel tree 6.12".into(), "kernel-tree"),
        &[Mode::Kernel],
        vec![builds],
        Vec::new(),
    );
    let human = answer.text(Some(&WIDE));
    assert!(!human.contains("stable mode"), "{human}");
    assert!(
        human.contains(
            "kernel mode: only debian-1.85.0 builds it\n    with RUSTC_BOOTSTRAP=1 for 2 gated features\n"
        ),
        "{human}"
    );
    assert!(
        human.contains("kernel mode with RUSTC_BOOTSTRAP=1 for 2 gated features"),
        "{human}"
    );
    let json = answer.to_json();
    assert_eq!(
        json["toolchains"][0]["bootstrap_for"],
        serde_json::json!(["asm_goto", "arbitrary_self_types"])
    );
    assert_eq!(json["toolchains"][0]["stable"], serde_json::Value::Null);
    assert_eq!(json["toolchains"][0]["kernel"]["outcome"], "builds");
    let markdown = answer.text(None);
    assert!(
        markdown.contains("- **kernel mode**: only debian-1.85.0"),
        "{markdown}"
    );
}
