// SPDX-License-Identifier: GPL-2.0
//! The summary on fake answers: conditions decided per release, each toolchain's summary and
//! the cross summary, the lint.

use super::*;
use crate::features::attributes::read_features;
use crate::features::cfg::Predicate;
use crate::features::kconfig;
use crate::report::audit::input::read_feature_list;
use crate::report::audit::input::CrateKind;
use crate::run::crate_root::probing::read_print_cfg;

fn decider(input: &Input) -> Decider {
    Decider::new(input, Vec::new(), kconfig::tests::built_in())
}

fn release(text: &str) -> Release {
    Release::parse(text).unwrap()
}

/// The seed commit's feature block, as the kernel has it.
fn kernel_block() -> Input {
    let text = "#![feature(inline_const)]\n\
         #![feature(lint_reasons)]\n\
         #![feature(arbitrary_self_types)]\n\
         #![cfg_attr(CONFIG_RUSTC_HAS_COERCE_POINTEE, feature(derive_coerce_pointee))]\n\
         #![cfg_attr(not(CONFIG_RUSTC_HAS_COERCE_POINTEE), feature(coerce_unsized))]\n";
    let entries = read_features(text)
        .unwrap()
        .into_iter()
        .map(Entry::from)
        .collect();
    Input {
        path: Some("lib.rs".into()),
        entries,
        kind: CrateKind::Library,
        loads_proc_macro: false,
        distinct: Default::default(),
    }
}

/// Fake answers in `Input::names` order: inline_const, lint_reasons, arbitrary_self_types,
/// derive_coerce_pointee, coerce_unsized.
fn answer(text: &str, statuses: [Status; 5]) -> Answer {
    Answer {
        release: release(text),
        statuses: statuses.to_vec(),
        breakers: Vec::new(),
    }
}

fn stable(text: &str) -> Status {
    Status::Stable(release(text))
}

#[test]
fn conditions_follow_the_derived_cfgs_and_unknown_cfgs_stay_unknown() {
    let decider = decider(&kernel_block());
    let active_on = |p: Option<&Predicate>, r| decider.active_on(p, r);
    let pointee = Predicate::Name("CONFIG_RUSTC_HAS_COERCE_POINTEE".into());
    assert_eq!(active_on(Some(&pointee), release("1.83.0")), Some(false));
    assert_eq!(active_on(Some(&pointee), release("1.84.0")), Some(true));
    assert_eq!(active_on(None, release("1.63.0")), Some(true));
    let kernel = Predicate::Name("kshim_kernel_mode".into());
    assert_eq!(active_on(Some(&kernel), release("1.78.0")), Some(true));
    let std = Predicate::KeyValue("feature".into(), "std".into());
    assert_eq!(active_on(Some(&std), release("1.95.0")), None);
    let either = Predicate::Any(vec![std.clone(), pointee.clone()]);
    assert_eq!(active_on(Some(&either), release("1.85.0")), Some(true));
    assert_eq!(active_on(Some(&either), release("1.80.0")), None);
    assert!(decider.releases_from(release("1.82.5")).starts_with(&[
        release("1.82.5"),
        release("1.83.0"),
        release("1.84.0")
    ]));
    let not_pointee = Predicate::Not(Box::new(pointee));
    assert!(decider.is_dead_from(Some(&not_pointee), release("1.84.0")));
    assert!(!decider.is_dead_from(Some(&not_pointee), release("1.83.0")));
    assert!(!decider.is_dead_from(None, release("1.95.0")));
    // A cfg the audit cannot derive keeps a branch alive.
    let guarded = Predicate::All(vec![not_pointee, Predicate::Name("CONFIG_X".into())]);
    assert!(decider.is_dead_from(Some(&guarded), release("1.85.0")));
    let maybe = Predicate::Any(vec![
        Predicate::Not(Box::new(Predicate::Name(
            "CONFIG_RUSTC_HAS_COERCE_POINTEE".into(),
        ))),
        Predicate::Name("CONFIG_X".into()),
    ]);
    assert!(!decider.is_dead_from(Some(&maybe), release("1.85.0")));
}

/// What a 1.85.0-era compiler says of the block: inline_const and lint_reasons stable, the
/// rest gated.
fn settled(text: &str) -> Answer {
    answer(
        text,
        [
            stable("1.79.0"),
            stable("1.81.0"),
            Status::Gated,
            Status::Gated,
            Status::Gated,
        ],
    )
}

/// One assertion on what the kernel block's summaries make of a case's answers.
enum Expect {
    /// `summarize` of the case's first answer, whole.
    Summary(ToolchainSummary),
    /// `summarize` of the first answer: its active, inactive and stable counts.
    Counts(usize, usize, usize),
    /// `summarize` of the first answer: the features that still need `RUSTC_BOOTSTRAP`.
    NeedsBootstrap(&'static [&'static str]),
    /// `cross_summary`'s fields.
    StableFrom(Option<&'static str>),
    GatedOnNewest(&'static [&'static str]),
    /// `cross_summary` judges at the newest compiler probed, not at a later release a
    /// condition speaks of.
    NewestProbed,
    KnownFrom(Option<&'static str>),
    LastUnknowing(&'static str, &'static [&'static str]),
    /// `lint` at `min_rust`: the entries of its removable lines and of its dead branches.
    Lint {
        min_rust: &'static str,
        removable: &'static [usize],
        dead: &'static [usize],
    },
    /// `lint` at a minimum: the reason given for the `index`th removable line.
    RemovableReason(&'static str, usize, &'static str),
    /// `lint` at a minimum: the reason given for the `index`th dead branch.
    DeadReason(&'static str, usize, &'static str),
}

#[test]
fn summaries_of_fake_answers_on_the_kernel_block() {
    let needs_bootstrap = [
        "inline_const",
        "lint_reasons",
        "arbitrary_self_types",
        "coerce_unsized",
    ];
    let cases = [
        (
            "1.78.0 alone: derive_coerce_pointee is unknown to 1.78 but switched off there",
            vec![answer(
                "1.78.0",
                [
                    Status::Gated,
                    Status::Gated,
                    Status::Gated,
                    Status::Unknown,
                    Status::Gated,
                ],
            )],
            vec![Expect::Summary(ToolchainSummary {
                active: 4,
                inactive: 1,
                stable: 0,
                needs_bootstrap: needs_bootstrap.map(String::from).to_vec(),
                ..ToolchainSummary::default()
            })],
        ),
        (
            "1.85.0 alone",
            vec![settled("1.85.0")],
            vec![
                Expect::Counts(4, 1, 2),
                Expect::NeedsBootstrap(&["arbitrary_self_types", "derive_coerce_pointee"]),
            ],
        ),
        (
            "1.85.0 and 1.95.0: coerce_unsized is switched off on the newest compiler, so it \
             does not count",
            vec![settled("1.85.0"), settled("1.95.0")],
            vec![
                Expect::StableFrom(None),
                Expect::GatedOnNewest(&["arbitrary_self_types", "derive_coerce_pointee"]),
                Expect::NewestProbed,
                Expect::KnownFrom(Some("1.85.0")),
            ],
        ),
        (
            "1.85.0 and a future 1.99.0 that stabilizes both: only stable Rust from there, and \
             coerce_unsized (off from 1.84) never has to be stable",
            vec![
                settled("1.85.0"),
                answer(
                    "1.99.0",
                    [
                        stable("1.79.0"),
                        stable("1.81.0"),
                        stable("1.98.0"),
                        stable("1.99.0"),
                        Status::Gated,
                    ],
                ),
            ],
            vec![
                Expect::StableFrom(Some("1.99.0")),
                Expect::GatedOnNewest(&[]),
            ],
        ),
        (
            "1.63.0 and 1.85.0: derive_coerce_pointee is off on 1.63, so only lint_reasons counts",
            vec![
                answer(
                    "1.63.0",
                    [
                        Status::Gated,
                        Status::Unknown,
                        Status::Gated,
                        Status::Unknown,
                        Status::Gated,
                    ],
                ),
                settled("1.85.0"),
            ],
            vec![
                Expect::KnownFrom(Some("1.85.0")),
                Expect::LastUnknowing("1.63.0", &["lint_reasons"]),
            ],
        ),
        (
            "1.85.0 and a 1.95.0 that removed lint_reasons",
            vec![
                settled("1.85.0"),
                answer(
                    "1.95.0",
                    [
                        stable("1.79.0"),
                        Status::Removed,
                        Status::Gated,
                        Status::Gated,
                        Status::Gated,
                    ],
                ),
            ],
            vec![Expect::KnownFrom(None)],
        ),
        (
            "1.95.0, --min-rust 1.80.0",
            vec![settled("1.95.0")],
            vec![Expect::Lint {
                min_rust: "1.80.0",
                removable: &[0],
                dead: &[],
            }],
        ),
        (
            "1.95.0, --min-rust 1.85.0",
            vec![settled("1.95.0")],
            vec![
                Expect::Lint {
                    min_rust: "1.85.0",
                    removable: &[0, 1],
                    dead: &[4],
                },
                Expect::DeadReason(
                    "1.85.0",
                    0,
                    "`not(CONFIG_RUSTC_HAS_COERCE_POINTEE)` is false on every compiler from \
                     1.85.0 on",
                ),
                Expect::RemovableReason("1.85.0", 1, "stable since 1.81.0, at or before 1.85.0"),
            ],
        ),
    ];
    let input = kernel_block();
    let decider = decider(&input);
    let entries = |findings: &[Finding]| findings.iter().map(|f| f.entry).collect::<Vec<_>>();
    for (case, answers, expects) in cases {
        let summary = summarize(&input, &decider, &answers[0]);
        let cross = cross_summary(&input, &decider, &answers);
        let lint_at = |min_rust: &str| lint(&input, &decider, &answers, release(min_rust));
        for expect in expects {
            match expect {
                Expect::Summary(whole) => assert_eq!(summary, whole, "{case}"),
                Expect::Counts(active, inactive, stable) => assert_eq!(
                    (summary.active, summary.inactive, summary.stable),
                    (active, inactive, stable),
                    "{case}: active, inactive, stable"
                ),
                Expect::NeedsBootstrap(names) => {
                    assert_eq!(summary.needs_bootstrap, names, "{case}: needs_bootstrap");
                }
                Expect::StableFrom(text) => {
                    assert_eq!(cross.stable_from, text.map(release), "{case}: stable_from");
                }
                Expect::GatedOnNewest(names) => {
                    assert_eq!(cross.gated_on_newest, names, "{case}: gated_on_newest");
                }
                Expect::NewestProbed => assert_eq!(
                    cross.newest,
                    answers.iter().map(|a| a.release).max(),
                    "{case}: newest"
                ),
                Expect::KnownFrom(text) => {
                    assert_eq!(cross.known_from, text.map(release), "{case}: known_from");
                }
                Expect::LastUnknowing(text, names) => assert_eq!(
                    cross.last_unknowing,
                    Some((release(text), names.iter().map(|n| n.to_string()).collect())),
                    "{case}: last_unknowing"
                ),
                Expect::Lint {
                    min_rust,
                    removable,
                    dead,
                } => {
                    let found = lint_at(min_rust);
                    assert_eq!(entries(&found.removable), removable, "{case}: removable");
                    assert_eq!(entries(&found.dead), dead, "{case}: dead");
                }
                Expect::RemovableReason(min_rust, index, reason) => assert_eq!(
                    lint_at(min_rust).removable[index].reason,
                    reason,
                    "{case}: removable[{index}]"
                ),
                Expect::DeadReason(min_rust, index, reason) => assert_eq!(
                    lint_at(min_rust).dead[index].reason,
                    reason,
                    "{case}: dead[{index}]"
                ),
            }
        }
    }
}

/// A decider for an x86_64 Linux target.
fn x86_64_decider() -> Decider {
    let target = read_print_cfg("target_arch=\"x86_64\"\ntarget_os=\"linux\"\nunix\n");
    Decider::new(
        &read_feature_list("a").unwrap(),
        target,
        crate::features::kconfig::tests::built_in(),
    )
}

#[test]
fn derived_kconfig_version_and_target_leaves_are_decided() {
    let decider = x86_64_decider();
    let parse = |text: &str| Predicate::parse(text).unwrap();
    let on = |text: &str, at: &str| decider.active_on(Some(&parse(text)), release(at));
    assert_eq!(on("CONFIG_RUSTC_HAS_COERCE_POINTEE", "1.83.0"), Some(false));
    assert_eq!(on("CONFIG_RUSTC_HAS_COERCE_POINTEE", "1.84.0"), Some(true));
    assert_eq!(on("CONFIG_RUSTC_HAS_SPAN_FILE", "1.88.0"), Some(true));
    assert_eq!(on("CONFIG_RUSTC_HAS_SPAN_FILE", "1.87.0"), Some(false));
    assert_eq!(on("CONFIG_NOT_A_COMPILER_CFG", "1.95.0"), None);
    assert_eq!(on("not(version(\"1.79\"))", "1.78.0"), Some(true));
    assert_eq!(on("version(\"1.97\")", "1.97.0"), Some(true));
    assert_eq!(on("version(\"1.79\")", "1.40.0"), None);
    assert_eq!(on("target_arch = \"x86_64\"", "1.63.0"), Some(true));
    assert_eq!(on("all(unix, target_os = \"linux\")", "1.63.0"), Some(true));
    assert_eq!(on("docsrs", "1.95.0"), None);
    assert_eq!(on("true", "1.95.0"), Some(true));
    let arm = parse("target_arch = \"arm\"");
    assert!(decider.for_another_target(Some(&arm), release("1.95.0")));
    let old = parse("not(CONFIG_RUSTC_HAS_COERCE_POINTEE)");
    assert!(!decider.for_another_target(Some(&old), release("1.95.0")));
    assert!(decider.is_dead_from(Some(&old), release("1.84.0")));
    assert!(!decider.is_dead_from(Some(&parse("docsrs")), release("1.84.0")));
}

#[test]
fn two_conditions_hold_together_when_some_value_of_the_undecided_cfgs_makes_both_true() {
    let input = kernel_block();
    let decider = decider(&input);
    let parse = |text: &str| Predicate::parse(text).unwrap();
    let at = release("1.95.0");
    let (docsrs, not_docsrs) = (parse("docsrs"), parse("not(docsrs)"));
    assert_eq!(decider.hold_together(None, None, at), Some(true));
    assert_eq!(
        decider.hold_together(Some(&docsrs), Some(&docsrs), at),
        None
    );
    assert_eq!(decider.hold_together(None, Some(&docsrs), at), None);
    assert_eq!(
        decider.hold_together(Some(&docsrs), Some(&not_docsrs), at),
        Some(false)
    );
    // A decided leaf still counts: the pointee threshold is passed on 1.95.0.
    let off = parse("all(docsrs, not(CONFIG_RUSTC_HAS_COERCE_POINTEE))");
    assert_eq!(
        decider.hold_together(Some(&docsrs), Some(&off), at),
        Some(false)
    );
    let pair = parse("any(feature = \"a\", docsrs)");
    let other = parse("all(not(feature = \"a\"), not(docsrs))");
    assert_eq!(
        decider.hold_together(Some(&pair), Some(&other), at),
        Some(false)
    );
}
