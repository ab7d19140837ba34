// SPDX-License-Identifier: GPL-2.0
//! Reads the `#![feature(...)]` lines of a crate root, `cfg_attr` conditions included, and its
//! `#![allow(...)]` lines the same way.
//!
//! Inner attributes can only stand at the top of a crate root, before its first item, so the
//! reader scans that prefix: whitespace, comments and `#![...]` attributes. It needs no Rust
//! parser: attributes are token trees, read by [`crate::features::cfg`]'s lexer, and the few shapes
//! that matter here (`feature(a, b)`, `cfg_attr(PREDICATE, ATTR, ...)`, nested `cfg_attr`) are read
//! from them, the predicates by [`Predicate`]'s own reader, with errors at line and column.

use crate::features::cfg::{split_commas, Lexer, Predicate, Spanned, SyntaxError, Token};

/// One feature that a crate root enables (or, from [`read_allowed`], one lint it allows).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureAttribute {
    pub name: String,
    /// The `cfg_attr` predicates it stands under, outermost first; empty when unconditional.
    pub conditions: Vec<Predicate>,
    /// Where the feature's name stands, 1-based (the column in characters).
    pub line: usize,
    pub column: usize,
    /// Where its attribute's `#!` stands: features of one attribute share it.
    pub attribute: (usize, usize),
}

impl FeatureAttribute {
    /// The condition as one cfg predicate, or `None` when unconditional.
    pub fn condition(&self) -> Option<Predicate> {
        match self.conditions.as_slice() {
            [] => None,
            [one] => Some(one.clone()),
            many => Some(Predicate::All(many.to_vec())),
        }
    }
}

/// Reads every feature a crate root enables with inner attributes.
pub fn read_features(text: &str) -> Result<Vec<FeatureAttribute>, SyntaxError> {
    read_names(text, "feature")
}

/// Reads every lint a crate root allows with inner attributes: the names of `#![allow(...)]`,
/// past a tool's paths (`clippy::x`) and a `reason = "..."`.
pub fn read_allowed(text: &str) -> Result<Vec<FeatureAttribute>, SyntaxError> {
    read_names(text, "allow")
}

/// The names the crate root's inner `#![wanted(...)]` attributes give.
fn read_names(text: &str, wanted: &str) -> Result<Vec<FeatureAttribute>, SyntaxError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lexer = Lexer::new(text);
    // A shebang line, which Rust skips, is `#!` not followed (past whitespace and comments) by
    // the `[` of an inner attribute.
    if let Some(after) = text.strip_prefix("#!") {
        let mut after = Lexer::new(after);
        if !(after.skip_trivia().is_ok() && after.peek_at(0) == Some('[')) {
            while lexer.bump().is_some_and(|c| c != '\n') {}
        }
    }
    let mut features = Vec::new();
    loop {
        lexer.skip_trivia()?;
        if lexer.peek_at(0) != Some('#') || lexer.peek_at(1) != Some('!') {
            // The first item (or outer attribute) ends the crate's inner attributes.
            return Ok(features);
        }
        let start = (lexer.line, lexer.column);
        lexer.bump();
        lexer.bump();
        let Token::Group('[', tokens) = lexer.token()?.token else {
            return Err(SyntaxError::at(start, "expected `[` after `#!`"));
        };
        let Some((first, rest)) = tokens.split_first() else {
            return Err(SyntaxError::at(start, "empty attribute"));
        };
        read_attribute(wanted, first, rest, &mut Vec::new(), start, &mut features)?;
    }
}

/// Reads one attribute (`wanted(...)`, `cfg_attr(...)` or anything else, which is skipped)
/// from its first token and the rest, and collects its names under the enclosing conditions;
/// `start` is where the `#!` stands.
fn read_attribute(
    wanted: &str,
    first: &Spanned,
    rest: &[Spanned],
    conditions: &mut Vec<Predicate>,
    start: (usize, usize),
    features: &mut Vec<FeatureAttribute>,
) -> Result<(), SyntaxError> {
    let Token::Ident(name) = &first.token else {
        return Err(first.error("an attribute must start with a name"));
    };
    // rustc reads a raw identifier as its plain name: `r#feature` is `feature`.
    let name = unraw(name);
    let list = match rest {
        [Spanned {
            token: Token::Group('(', list),
            ..
        }] => Some(list),
        _ => None,
    };
    match (name, list) {
        (name, Some(list)) if name == wanted => {
            for item in split_commas(list)? {
                match item {
                    [spanned @ Spanned {
                        token: Token::Ident(feature),
                        ..
                    }] => features.push(FeatureAttribute {
                        name: unraw(feature).to_string(),
                        conditions: conditions.clone(),
                        line: spanned.line,
                        column: spanned.column,
                        attribute: start,
                    }),
                    [other, ..] if wanted == "feature" => {
                        return Err(other.error("expected a feature name"))
                    }
                    _ => {}
                }
            }
            Ok(())
        }
        (name, None) if name == wanted => {
            Err(first.error(format!("expected `{wanted}(name, ...)`")))
        }
        ("cfg_attr", Some(list)) => {
            let comma = list
                .iter()
                .position(|spanned| spanned.token == Token::Punct(','));
            let Some(comma) = comma else {
                return Err(first.error("expected `cfg_attr(predicate, attribute, ...)`"));
            };
            if comma == 0 {
                return Err(first.error("`cfg_attr` needs a predicate"));
            }
            conditions.push(Predicate::from_tokens(&list[..comma], first)?);
            for attribute in split_commas(&list[comma + 1..])? {
                if let Some((first, rest)) = attribute.split_first() {
                    read_attribute(wanted, first, rest, conditions, start, features)?;
                }
            }
            conditions.pop();
            Ok(())
        }
        ("cfg_attr", None) => Err(first.error("expected `cfg_attr(predicate, attribute, ...)`")),
        _ => Ok(()),
    }
}

fn unraw(name: &str) -> &str {
    name.strip_prefix("r#").unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(features: &[FeatureAttribute]) -> Vec<(String, Option<String>)> {
        features
            .iter()
            .map(|feature| {
                (
                    feature.name.clone(),
                    feature.condition().map(|c| c.to_string()),
                )
            })
            .collect()
    }

    #[test]
    fn reads_the_kernels_feature_block() {
        let text = r#"// SPDX-License-Identifier: GPL-2.0
//! The `kernel` crate.
/* a block /* nested */ comment */
#![no_std]
#![feature(inline_const)]
#![feature(lint_reasons, raw_ref_op,)]
#![cfg_attr(CONFIG_RUSTC_HAS_COERCE_POINTEE, feature(derive_coerce_pointee))]
#![cfg_attr(
    not(CONFIG_RUSTC_HAS_COERCE_POINTEE),
    feature(coerce_unsized)
)]
#![cfg_attr(all(a, b = "x"), cfg_attr(c, feature(nested), feature(twice)))]
#![doc = "]"]

#[cfg(test)]
#![feature(after_an_item_is_not_an_inner_attribute)]
"#;
        let features = read_features(text).unwrap();
        assert_eq!(
            names(&features),
            [
                ("inline_const".into(), None),
                ("lint_reasons".into(), None),
                ("raw_ref_op".into(), None),
                (
                    "derive_coerce_pointee".into(),
                    Some("CONFIG_RUSTC_HAS_COERCE_POINTEE".into())
                ),
                (
                    "coerce_unsized".into(),
                    Some("not(CONFIG_RUSTC_HAS_COERCE_POINTEE)".into())
                ),
                ("nested".into(), Some("all(all(a, b = \"x\"), c)".into())),
                ("twice".into(), Some("all(all(a, b = \"x\"), c)".into())),
            ]
        );
        // Each feature has its own place, also inside a multi-line attribute.
        assert_eq!((features[4].line, features[4].column), (10, 13));
        assert_eq!(features[4].attribute, (8, 1));
        assert_eq!((features[2].line, features[2].column), (6, 26));
        assert_eq!(features[1].attribute, features[2].attribute);
    }

    /// What a crate root allows, as rustc reads it: not a commented-out line, a tool's path or a
    /// `reason`, and what stands under a `cfg_attr` with its condition.
    #[test]
    fn reads_a_crate_roots_allows() {
        let root = "//! Doc.\n// #![allow(stable_features)]\n#![allow(internal_features)]\n\
                    #![allow(\n    dead_code,\n    clippy::all,\n    incomplete_features,\n    \
                    reason = \"stable_features\",\n)]\n#![cfg_attr(CONFIG_X, allow(unused))]\n\
                    #![feature(compiler_builtins)]\n";
        let allowed = read_allowed(root).unwrap();
        assert_eq!(
            names(&allowed),
            [
                ("internal_features".to_string(), None),
                ("dead_code".to_string(), None),
                ("incomplete_features".to_string(), None),
                ("unused".to_string(), Some("CONFIG_X".to_string())),
            ]
        );
        assert_eq!(
            names(&read_features(root).unwrap())[0].0,
            "compiler_builtins"
        );
        let bare = read_allowed("#![allow]\n").unwrap_err();
        assert!(
            bare.message.contains("expected `allow(name, ...)`"),
            "{bare:?}"
        );
    }

    #[test]
    fn malformed_attributes_report_line_and_column() {
        let unclosed = read_features("#![no_std]\n#![feature(inline_const]\n").unwrap_err();
        assert_eq!((unclosed.line, unclosed.column), (2, 24));
        assert!(unclosed.message.contains("expected `)`"), "{unclosed}");

        let bad_name = read_features("#![feature(\"quoted\")]").unwrap_err();
        assert_eq!((bad_name.line, bad_name.column), (1, 12));

        let no_predicate = read_features("\n  #![cfg_attr(, feature(x))]").unwrap_err();
        assert_eq!(no_predicate.line, 2);

        let not_two = read_features("#![cfg_attr(not(a, b), feature(x))]").unwrap_err();
        assert!(not_two.message.contains("exactly one"), "{not_two}");

        let eof = read_features("#![feature(a, b").unwrap_err();
        assert!(eof.message.contains("never closed"), "{eof}");
    }

    #[test]
    fn cfg_attr_takes_a_predicate_a_comma_and_attributes() {
        let features = read_features(
            "#![cfg_attr(true, feature(a))]\n#![cfg_attr(b,)]\n#![cfg_attr(c, feature(d),)]",
        )
        .unwrap();
        assert_eq!(
            names(&features),
            [
                ("a".into(), Some("true".into())),
                ("d".into(), Some("c".into()))
            ]
        );
        let no_comma = read_features("#![cfg_attr(a)]").unwrap_err();
        assert_eq!((no_comma.line, no_comma.column), (1, 4));
        let double_comma = read_features("#![cfg_attr(a,, feature(x))]").unwrap_err();
        assert_eq!((double_comma.line, double_comma.column), (1, 15));
        assert!(
            double_comma.message.contains("before `,`"),
            "{double_comma}"
        );
    }

    #[test]
    fn a_file_may_open_with_a_byte_order_mark_and_a_shebang() {
        for opening in ["", "\u{feff}", "#!/usr/bin/env run-cargo-script\n"] {
            let text = format!("{opening}#![feature(a)]\n");
            assert_eq!(names(&read_features(&text).unwrap()), [("a".into(), None)]);
        }
        let features =
            read_features("\u{feff}#!/usr/bin/env run-cargo-script\n#![feature(b)]").unwrap();
        assert_eq!(names(&features), [("b".into(), None)]);
        assert_eq!((features[0].line, features[0].column), (2, 12));
        // `#!` followed by `[`, past whitespace and comments, is an attribute, not a shebang.
        let spaced = read_features("#! /* why */ [feature(c)]\n#![feature(d)]").unwrap();
        assert_eq!(names(&spaced), [("c".into(), None), ("d".into(), None)]);
    }

    #[test]
    fn literals_and_macro_calls_are_skipped_as_token_trees() {
        let text = r####"#![doc = r#"a"b"#]
#![doc = r"C:\dir\"]
#![doc = concat!("a", "b")]
#![doc = include_str!("../README.md")]
#![cfg_attr(all(), doc = r##"]"#)"##, doc = b"]", doc = '"', feature(after_literals))]
#![doc = "\"]\u{5d}"]
#![feature(last)]
"####;
        let features = read_features(text).unwrap();
        assert_eq!(
            names(&features),
            [
                ("after_literals".into(), Some("all()".into())),
                ("last".into(), None)
            ]
        );
        let unterminated = read_features("#![doc = r#\"a\"]\n").unwrap_err();
        assert_eq!((unterminated.line, unterminated.column), (1, 10));
        assert!(
            unterminated.message.contains("unterminated raw string"),
            "{unterminated}"
        );
    }

    #[test]
    fn raw_identifier_attribute_names_are_the_same_attributes() {
        // rustc reads `r#feature` as `feature` (E0554 on a stable compiler), also inside
        // `cfg_attr` and as `r#cfg_attr` itself.
        let text = "#![r#feature(never_type)]\n\
                    #![cfg_attr(all(), r#feature(a))]\n\
                    #![r#cfg_attr(b, feature(r#c), r#feature(d))]\n";
        assert_eq!(
            names(&read_features(text).unwrap()),
            [
                ("never_type".into(), None),
                ("a".into(), Some("all()".into())),
                ("c".into(), Some("b".into())),
                ("d".into(), Some("b".into())),
            ]
        );
    }

    #[test]
    fn deep_nesting_is_a_syntax_error_not_a_stack_overflow() {
        use crate::features::cfg::MAX_NESTING;
        // `[` is level 1, `cfg_attr(` level 2 at column 12, then each `not(` one more.
        let not = format!(
            "#![cfg_attr({}a{}, feature(x))]",
            "not(".repeat(3000),
            ")".repeat(3000)
        );
        let error = read_features(&not).unwrap_err();
        assert_eq!((error.line, error.column), (1, 12 + 4 * (MAX_NESTING - 1)));
        assert!(error.message.contains("nested more than"), "{error}");

        // Each `cfg_attr(a, ` is 12 characters, with its bracket at the 9th.
        let nested_cfg_attr = |depth: usize| {
            format!(
                "#![no_std]\n#![{}feature(x){}]",
                "cfg_attr(a, ".repeat(depth),
                ")".repeat(depth)
            )
        };
        let error = read_features(&nested_cfg_attr(5000)).unwrap_err();
        assert_eq!((error.line, error.column), (2, 12 * MAX_NESTING));
        assert!(error.message.contains("nested more than"), "{error}");

        // The deepest that fits: `[`, the `cfg_attr(`s and `feature(`.
        let deepest = read_features(&nested_cfg_attr(MAX_NESTING - 2)).unwrap();
        assert_eq!(deepest[0].conditions.len(), MAX_NESTING - 2);
    }
}
