// SPDX-License-Identifier: GPL-2.0
//! Tests of cfg predicates: reading, printing and deciding them.

use super::*;
use crate::catalog::FEATURES;

fn parse(text: &str) -> Predicate {
    Predicate::parse(text).unwrap_or_else(|error| panic!("{text}: {error}"))
}

fn parse_error(text: &str) -> SyntaxError {
    Predicate::parse(text).expect_err(text)
}

#[test]
fn every_catalog_gate_parses_and_is_decided_by_cfg_names() {
    for feature in FEATURES {
        let gate = Predicate::parse(feature.gate)
            .unwrap_or_else(|error| panic!("{}: gate {:?}: {error}", feature.name, feature.gate));
        assert!(gate.holds_with(&[]).is_some(), "{}", feature.gate);
    }
}

#[test]
fn predicates_read_and_print_back() {
    for text in [
        "a",
        "true",
        "not(false)",
        "r#true",
        "target_arch = \"x86_64\"",
        "all(a, any(b, not(c)), d = \"e\")",
        "all()",
        "version(\"1.79.0\")",
    ] {
        assert_eq!(parse(text).to_string(), text);
    }
    assert_eq!(
        parse("all(/* why */ a ,\n b,)"),
        Predicate::All(vec![
            Predicate::Name("a".into()),
            Predicate::Name("b".into())
        ])
    );
    assert_eq!(parse("true"), Predicate::Bool(true));
    assert_eq!(parse("r#true"), Predicate::Name("r#true".into()));
    assert_eq!(
        parse("version(\"1.79\")"),
        Predicate::Version(Release::new(1, 79, 0))
    );
    assert_eq!(
        parse(r#"path = r"C:\dir\""#),
        Predicate::KeyValue("path".into(), "C:\\dir\\".into())
    );
    assert_eq!(
        parse(r#"key = "tab\there, \"quoted\", \x41\u{1F600}""#),
        Predicate::KeyValue("key".into(), "tab\there, \"quoted\", A\u{1F600}".into())
    );
}

#[test]
fn malformed_predicates_say_what_and_where() {
    let cases = [
        ("", (1, 1), "found nothing"),
        ("all(a", (1, 4), "never closed"),
        ("not(a, b)", (1, 4), "exactly one"),
        ("not()", (1, 4), "exactly one"),
        ("a b", (1, 3), "malformed cfg predicate"),
        ("a::b", (1, 2), "malformed cfg predicate"),
        ("all(a,,b)", (1, 7), "expected an item before `,`"),
        ("feature = 1", (1, 11), "must be a string literal"),
        ("feature = b\"x\"", (1, 11), "must be a string literal"),
        ("\n  foo(a)", (2, 3), "unknown cfg predicate `foo(...)`"),
        ("true(a)", (1, 1), "unknown cfg predicate `true(...)`"),
        ("\"a\"", (1, 1), "expected a cfg predicate"),
        ("version(1.79)", (1, 8), "one string literal"),
        ("version(\"1.79\", \"1.80\")", (1, 8), "one string literal"),
        ("version(\"1.79-beta\")", (1, 9), "is not a release"),
        ("version(\"1\")", (1, 9), "is not a release"),
        ("a = \"\\q\"", (1, 7), "unknown character escape"),
        ("a = \"open", (1, 5), "unterminated string literal"),
        ("a = r#\"open\"", (1, 5), "unterminated raw string literal"),
        ("a)", (1, 2), "unbalanced `)`"),
    ];
    for (text, (line, column), message) in cases {
        let error = parse_error(text);
        assert!(
            (error.line, error.column) == (line, column) && error.message.contains(message),
            "{text:?}: expected {line}:{column}: …{message}…, got {error}"
        );
    }
}

#[test]
fn nesting_is_capped_with_a_clean_error() {
    let nested = |depth: usize| format!("{}a{}", "not(".repeat(depth), ")".repeat(depth));
    let deepest = parse(&nested(MAX_NESTING));
    assert_eq!(
        deepest.holds_with(&["a"]),
        Some(true),
        "an even number of `not`s"
    );
    let error = parse_error(&nested(MAX_NESTING + 1));
    // The opening bracket of level MAX_NESTING + 1, after MAX_NESTING `not(`s and `not`.
    assert_eq!((error.line, error.column), (1, 4 * MAX_NESTING + 4));
    assert!(
        error.message.contains("nested more than 128 deep"),
        "{error}"
    );
    let error = parse_error(&nested(3000));
    assert_eq!((error.line, error.column), (1, 4 * MAX_NESTING + 4));
}

#[test]
fn three_valued_evaluation() {
    let predicate = Predicate::All(vec![
        Predicate::Name("known".into()),
        Predicate::Not(Box::new(Predicate::Name("unknown".into()))),
    ]);
    let lookup = |query: Query<'_>| (query == Query::Name("known")).then_some(true);
    assert_eq!(predicate.evaluate(&lookup), None);
    let set = |_: Query<'_>| Some(true);
    assert_eq!(predicate.evaluate(&set), Some(false));
    let any = Predicate::Any(vec![
        Predicate::Name("unknown".into()),
        Predicate::Name("known".into()),
    ]);
    assert_eq!(any.evaluate(&lookup), Some(true));
    assert_eq!(parse("any(unknown, true)").evaluate(&lookup), Some(true));
    assert_eq!(parse("all(unknown, false)").evaluate(&lookup), Some(false));
}

#[test]
fn versions_are_asked_of_the_lookup() {
    let compiler = Release::new(1, 85, 0);
    let lookup = |query: Query<'_>| match query {
        Query::Version(release) => Some(compiler >= release),
        _ => None,
    };
    assert_eq!(parse("version(\"1.79\")").evaluate(&lookup), Some(true));
    assert_eq!(parse("version(\"1.85.1\")").evaluate(&lookup), Some(false));
    assert_eq!(
        parse("not(version(\"1.86\"))").evaluate(&lookup),
        Some(true)
    );
    assert_eq!(parse("version(\"1.79\")").holds_with(&["a"]), None);
}

#[test]
fn names_hold_when_set_and_pairs_never() {
    let set = ["kshim_kernel_mode", "CONFIG_RUSTC_HAS_COERCE_POINTEE"];
    assert_eq!(parse("kshim_kernel_mode").holds_with(&set), Some(true));
    assert_eq!(parse("other").holds_with(&set), Some(false));
    assert_eq!(
        parse("all(kshim_kernel_mode, not(CONFIG_RUSTC_HAS_COERCE_POINTEE))").holds_with(&set),
        Some(false)
    );
    assert_eq!(parse("feature = \"std\"").holds_with(&set), Some(false));
    assert_eq!(parse("any(false, not(true))").holds_with(&set), Some(false));
    let gate = parse("all(kshim_kernel_mode, not(CONFIG_RUSTC_HAS_COERCE_POINTEE))");
    assert_eq!(gate.holds_with(&["kshim_kernel_mode"]), Some(true));
    assert_eq!(
        parse("any(a, b)").holds_with(&["kshim_kernel_mode"]),
        Some(false)
    );
}
