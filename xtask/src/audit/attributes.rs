//! Reads the `#![feature(...)]` lines of a crate root, `cfg_attr` conditions included.
//!
//! Inner attributes can only stand at the top of a crate root, before its first item, so the
//! reader scans that prefix: whitespace, comments and `#![...]` attributes. It needs no Rust
//! parser: attributes are token trees, and the few shapes that matter here (`feature(a, b)`,
//! `cfg_attr(PREDICATE, ATTR, ...)`, nested `cfg_attr`) are read by a small recursive reader
//! that reports errors with line and column.

use std::fmt;

/// One feature that a crate root enables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureAttribute {
    /// The feature's name.
    pub name: String,
    /// The `cfg_attr` predicates it stands under, outermost first; empty when unconditional.
    pub conditions: Vec<Predicate>,
    /// Where the attribute starts, 1-based.
    pub line: usize,
    /// Where the attribute starts, 1-based, in characters.
    pub column: usize,
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

/// A cfg predicate, as in `#[cfg(...)]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Predicate {
    /// A bare name: `CONFIG_RUSTC_HAS_COERCE_POINTEE`.
    Name(String),
    /// A name with a value: `target_arch = "x86_64"`.
    KeyValue(String, String),
    /// `all(...)`.
    All(Vec<Predicate>),
    /// `any(...)`.
    Any(Vec<Predicate>),
    /// `not(...)`.
    Not(Box<Predicate>),
}

impl fmt::Display for Predicate {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list(
            formatter: &mut fmt::Formatter<'_>,
            name: &str,
            items: &[Predicate],
        ) -> fmt::Result {
            write!(formatter, "{name}(")?;
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    formatter.write_str(", ")?;
                }
                write!(formatter, "{item}")?;
            }
            formatter.write_str(")")
        }
        match self {
            Predicate::Name(name) => formatter.write_str(name),
            Predicate::KeyValue(key, value) => write!(formatter, "{key} = {value:?}"),
            Predicate::All(items) => list(formatter, "all", items),
            Predicate::Any(items) => list(formatter, "any", items),
            Predicate::Not(inner) => write!(formatter, "not({inner})"),
        }
    }
}

impl Predicate {
    /// Evaluates the predicate in three-valued logic: `lookup` says whether a name is set,
    /// or `None` when nothing is known about it.
    pub fn evaluate(&self, lookup: &dyn Fn(&str, Option<&str>) -> Option<bool>) -> Option<bool> {
        match self {
            Predicate::Name(name) => lookup(name, None),
            Predicate::KeyValue(key, value) => lookup(key, Some(value)),
            Predicate::Not(inner) => inner.evaluate(lookup).map(|value| !value),
            Predicate::All(items) => {
                let mut result = Some(true);
                for item in items {
                    match item.evaluate(lookup) {
                        Some(false) => return Some(false),
                        None => result = None,
                        Some(true) => {}
                    }
                }
                result
            }
            Predicate::Any(items) => {
                let mut result = Some(false);
                for item in items {
                    match item.evaluate(lookup) {
                        Some(true) => return Some(true),
                        None => result = None,
                        Some(false) => {}
                    }
                }
                result
            }
        }
    }
}

/// Why a crate root could not be read, with where.
#[derive(Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}:{}: {}", self.line, self.column, self.message)
    }
}

/// The tokens that attribute contents are made of.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Ident(String),
    Literal(String),
    Punct(char),
    Group(char, Vec<Spanned>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Spanned {
    token: Token,
    line: usize,
    column: usize,
}

struct Lexer<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    line: usize,
    column: usize,
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            chars: text.chars().peekable(),
            line: 1,
            column: 1,
        }
    }

    fn error(&self, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            line: self.line,
            column: self.column,
            message: message.into(),
        }
    }

    fn bump(&mut self) -> Option<char> {
        let next = self.chars.next()?;
        if next == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(next)
    }

    fn peek(&mut self) -> Option<char> {
        self.chars.peek().copied()
    }

    fn peek_second(&self) -> Option<char> {
        let mut ahead = self.chars.clone();
        ahead.next();
        ahead.next()
    }

    /// Skips whitespace and comments (block comments nest, as in Rust).
    fn skip_trivia(&mut self) -> Result<(), SyntaxError> {
        loop {
            match (self.peek(), self.peek_second()) {
                (Some(c), _) if c.is_whitespace() => {
                    self.bump();
                }
                (Some('/'), Some('/')) => {
                    while let Some(c) = self.peek() {
                        if c == '\n' {
                            break;
                        }
                        self.bump();
                    }
                }
                (Some('/'), Some('*')) => {
                    let start = self.error("unterminated block comment");
                    self.bump();
                    self.bump();
                    let mut depth = 1;
                    while depth > 0 {
                        match (self.bump(), self.peek()) {
                            (Some('*'), Some('/')) => {
                                self.bump();
                                depth -= 1;
                            }
                            (Some('/'), Some('*')) => {
                                self.bump();
                                depth += 1;
                            }
                            (Some(_), _) => {}
                            (None, _) => return Err(start),
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    /// Reads one token tree.
    fn token(&mut self) -> Result<Spanned, SyntaxError> {
        self.skip_trivia()?;
        let (line, column) = (self.line, self.column);
        let spanned = |token| Spanned {
            token,
            line,
            column,
        };
        let Some(first) = self.peek() else {
            return Err(self.error("unexpected end of file inside an attribute"));
        };
        if first.is_alphabetic() || first == '_' {
            let mut ident = String::new();
            while let Some(c) = self.peek().filter(|c| c.is_alphanumeric() || *c == '_') {
                ident.push(c);
                self.bump();
            }
            return Ok(spanned(Token::Ident(ident)));
        }
        if first == '"' {
            self.bump();
            let mut literal = String::new();
            loop {
                match self.bump() {
                    Some('"') => break,
                    Some('\\') => {
                        if let Some(escaped) = self.bump() {
                            literal.push(escaped);
                        }
                    }
                    Some(c) => literal.push(c),
                    None => {
                        return Err(SyntaxError {
                            line,
                            column,
                            message: "unterminated string literal".into(),
                        })
                    }
                }
            }
            return Ok(spanned(Token::Literal(literal)));
        }
        if first.is_ascii_digit() {
            let mut literal = String::new();
            while let Some(c) = self
                .peek()
                .filter(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
            {
                literal.push(c);
                self.bump();
            }
            return Ok(spanned(Token::Literal(literal)));
        }
        let close = match first {
            '(' => Some(')'),
            '[' => Some(']'),
            '{' => Some('}'),
            _ => None,
        };
        self.bump();
        let Some(close) = close else {
            if matches!(first, ')' | ']' | '}') {
                return Err(SyntaxError {
                    line,
                    column,
                    message: format!("unbalanced `{first}`"),
                });
            }
            return Ok(spanned(Token::Punct(first)));
        };
        let mut inner = Vec::new();
        loop {
            self.skip_trivia()?;
            match self.peek() {
                Some(c) if c == close => {
                    self.bump();
                    return Ok(spanned(Token::Group(first, inner)));
                }
                Some(')' | ']' | '}') => {
                    return Err(self.error(format!(
                        "expected `{close}` to close the `{first}` at {line}:{column}"
                    )))
                }
                None => {
                    return Err(SyntaxError {
                        line,
                        column,
                        message: format!("`{first}` is never closed"),
                    })
                }
                Some(_) => inner.push(self.token()?),
            }
        }
    }
}

/// Reads every feature a crate root enables with inner attributes.
///
/// Returns an empty list when the file has none; the caller decides whether that is an error.
pub fn read_features(text: &str) -> Result<Vec<FeatureAttribute>, SyntaxError> {
    let mut lexer = Lexer::new(text.strip_prefix('\u{feff}').unwrap_or(text));
    // A `#!` first line that is not `#![` is a shebang, which Rust allows.
    if text.starts_with("#!") && !text.starts_with("#![") {
        while let Some(c) = lexer.bump() {
            if c == '\n' {
                break;
            }
        }
    }
    let mut features = Vec::new();
    loop {
        lexer.skip_trivia()?;
        if lexer.peek() != Some('#') || lexer.peek_second() != Some('!') {
            // The first item (or outer attribute) ends the crate's inner attributes.
            return Ok(features);
        }
        let (line, column) = (lexer.line, lexer.column);
        lexer.bump();
        lexer.bump();
        let group = lexer.token()?;
        let Token::Group('[', tokens) = group.token else {
            return Err(SyntaxError {
                line,
                column,
                message: "expected `[` after `#!`".into(),
            });
        };
        read_attribute(&tokens, &mut Vec::new(), line, column, &mut features)?;
    }
}

fn error_at(spanned: &Spanned, message: impl Into<String>) -> SyntaxError {
    SyntaxError {
        line: spanned.line,
        column: spanned.column,
        message: message.into(),
    }
}

/// Reads one attribute's tokens (`feature(...)`, `cfg_attr(...)` or anything else, which is
/// skipped) and collects its features under the enclosing conditions.
fn read_attribute(
    tokens: &[Spanned],
    conditions: &mut Vec<Predicate>,
    line: usize,
    column: usize,
    features: &mut Vec<FeatureAttribute>,
) -> Result<(), SyntaxError> {
    let Some(first) = tokens.first() else {
        return Err(SyntaxError {
            line,
            column,
            message: "empty attribute".into(),
        });
    };
    let Token::Ident(name) = &first.token else {
        return Err(error_at(first, "an attribute must start with a name"));
    };
    match (
        name.as_str(),
        tokens.get(1).map(|spanned| &spanned.token),
        tokens.len(),
    ) {
        ("feature", Some(Token::Group('(', list)), 2) => {
            for item in split_commas(list)? {
                match item {
                    [Spanned {
                        token: Token::Ident(feature),
                        ..
                    }] => features.push(FeatureAttribute {
                        name: feature.clone(),
                        conditions: conditions.clone(),
                        line,
                        column,
                    }),
                    [] => {}
                    [other, ..] => return Err(error_at(other, "expected a feature name")),
                }
            }
            Ok(())
        }
        ("feature", _, _) => Err(error_at(first, "expected `feature(name, ...)`")),
        ("cfg_attr", Some(Token::Group('(', list)), 2) => {
            let items = split_commas(list)?;
            let Some((predicate, attributes)) = items.split_first() else {
                return Err(error_at(first, "`cfg_attr` needs a predicate"));
            };
            if predicate.is_empty() {
                return Err(error_at(first, "`cfg_attr` needs a predicate"));
            }
            conditions.push(read_predicate(predicate)?);
            for attribute in attributes.iter().filter(|attribute| !attribute.is_empty()) {
                read_attribute(attribute, conditions, line, column, features)?;
            }
            conditions.pop();
            Ok(())
        }
        ("cfg_attr", _, _) => Err(error_at(
            first,
            "expected `cfg_attr(predicate, attribute, ...)`",
        )),
        _ => Ok(()),
    }
}

/// Splits a token list at its top-level commas.
fn split_commas(tokens: &[Spanned]) -> Result<Vec<&[Spanned]>, SyntaxError> {
    Ok(tokens
        .split(|spanned| spanned.token == Token::Punct(','))
        .collect())
}

fn read_predicate(tokens: &[Spanned]) -> Result<Predicate, SyntaxError> {
    let first = &tokens[0];
    let Token::Ident(name) = &first.token else {
        return Err(error_at(first, "expected a cfg predicate"));
    };
    match &tokens[1..] {
        [] => Ok(Predicate::Name(name.clone())),
        [Spanned {
            token: Token::Punct('='),
            ..
        }, Spanned {
            token: Token::Literal(value),
            ..
        }] => Ok(Predicate::KeyValue(name.clone(), value.clone())),
        [group @ Spanned {
            token: Token::Group('(', inner),
            ..
        }] => {
            let items: Vec<Predicate> = split_commas(inner)?
                .into_iter()
                .filter(|item| !item.is_empty())
                .map(read_predicate)
                .collect::<Result<_, _>>()?;
            match name.as_str() {
                "all" => Ok(Predicate::All(items)),
                "any" => Ok(Predicate::Any(items)),
                "not" => match <[Predicate; 1]>::try_from(items) {
                    Ok([inner]) => Ok(Predicate::Not(Box::new(inner))),
                    Err(_) => Err(error_at(group, "`not` takes exactly one predicate")),
                },
                other => Err(error_at(
                    first,
                    format!("unknown cfg predicate `{other}(...)`"),
                )),
            }
        }
        [other, ..] => Err(error_at(other, "malformed cfg predicate")),
    }
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
        assert_eq!((features[4].line, features[4].column), (8, 1));
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
    fn three_valued_evaluation() {
        let predicate = Predicate::All(vec![
            Predicate::Name("known".into()),
            Predicate::Not(Box::new(Predicate::Name("unknown".into()))),
        ]);
        let lookup = |name: &str, _: Option<&str>| (name == "known").then_some(true);
        assert_eq!(predicate.evaluate(&lookup), None);
        let set = |_: &str, _: Option<&str>| Some(true);
        assert_eq!(predicate.evaluate(&set), Some(false));
        let any = Predicate::Any(vec![
            Predicate::Name("unknown".into()),
            Predicate::Name("known".into()),
        ]);
        assert_eq!(any.evaluate(&lookup), Some(true));
    }
}
