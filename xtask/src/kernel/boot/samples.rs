// SPDX-License-Identifier: GPL-2.0
//! What a tree's Rust samples print when they start, read from their own sources: the format
//! strings of the `pr_info!` calls in the body of their module's `fn init`, with the module's
//! name (`module! { name: "rust_minimal", ... }`) as the prefix the kernel prints, and each
//! `{...}` hole a wildcard.

use crate::features::cfg::{Lexer, Spanned, Token};
use std::path::Path;

/// One line a sample must print at init: `rust_minimal: Am I built-in? {}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Expected {
    /// The line as its source writes it, holes as `{}`.
    pub text: String,
    /// The literal parts between the holes; a line matches when they appear in order, the
    /// first at its start and the last at its end (unless a hole follows it).
    parts: Vec<String>,
    /// Whether the text ends in a hole (or in no newline: `pr_cont!` continues the line).
    open_end: bool,
}

impl Expected {
    /// Whether a console line (without its stamp) is this one.
    pub(crate) fn matches(&self, line: &str) -> bool {
        let Some((first, others)) = self.parts.split_first() else {
            return true;
        };
        let Some(mut rest) = line.strip_prefix(first.as_str()) else {
            return false;
        };
        // Without an open end, the last literal is the line's end; the ones between go
        // leftmost first.
        let (middle, last) = match others.split_last() {
            Some((last, middle)) if !self.open_end => (middle, Some(last)),
            _ => (others, None),
        };
        for part in middle {
            let Some(at) = rest.find(part.as_str()) else {
                return false;
            };
            rest = &rest[at + part.len()..];
        }
        match last {
            Some(last) => rest.ends_with(last.as_str()),
            None => self.open_end || rest.is_empty(),
        }
    }
}

/// A sample built in, and what it prints at init (nothing: not checked).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Sample {
    /// Its module's name, or its Kconfig symbol when it builds no module of its own.
    pub name: String,
    pub expected: Vec<Expected>,
}

/// The samples the Kconfig symbols `symbols` build, from the tree's `samples/rust/` sources.
pub(crate) fn samples(tree: &Path, symbols: &[String]) -> Vec<Sample> {
    symbols
        .iter()
        .map(|symbol| {
            let sources: Vec<Vec<Spanned>> = super::super::symbols::objects_of(tree, symbol)
                .iter()
                .filter_map(|object| {
                    let source = tree.join(object).with_extension("rs");
                    tokens(&std::fs::read_to_string(source).ok()?)
                })
                .collect();
            let Some(name) = sources.iter().find_map(|tokens| module_name(tokens)) else {
                return Sample {
                    name: symbol.clone(),
                    expected: Vec::new(),
                };
            };
            let expected = sources
                .iter()
                .filter_map(|tokens| init_body(tokens))
                .flat_map(pr_info_formats)
                .map(|format| expected(&name, &format))
                .collect();
            Sample { name, expected }
        })
        .collect()
}

/// A source file's token trees (comments gone, literals decoded); `None` where it does not lex.
pub(crate) fn tokens(text: &str) -> Option<Vec<Spanned>> {
    let mut lexer = Lexer::new(text);
    let mut tokens = Vec::new();
    while lexer.skip_trivia().is_ok() && lexer.peek_at(0).is_some() {
        tokens.push(lexer.token().ok()?);
    }
    Some(tokens)
}

/// The `name: "..."` of the file's `module!`-style macro (`module!`, `module_platform_driver!`,
/// `module_misc_device!` ...).
pub(crate) fn module_name(tokens: &[Spanned]) -> Option<String> {
    let fields = *macro_calls(tokens, &|name| name.starts_with("module")).first()?;
    fields.windows(3).find_map(|field| match field {
        [name, colon, value]
            if name.token == Token::Ident("name".into()) && colon.token == Token::Punct(':') =>
        {
            string(value)
        }
        _ => None,
    })
}

/// The body of the first `fn init(`, nested items searched in the order they are written.
pub(crate) fn init_body(tokens: &[Spanned]) -> Option<&[Spanned]> {
    tokens
        .iter()
        .enumerate()
        .find_map(|(at, spanned)| match (&spanned.token, &tokens[at..]) {
            (Token::Ident(word), [_, name, arguments, ..])
                if word == "fn"
                    && name.token == Token::Ident("init".into())
                    && matches!(arguments.token, Token::Group('(', _)) =>
            {
                tokens[at..]
                    .iter()
                    .find_map(|spanned| match &spanned.token {
                        Token::Group('{', body) => Some(body.as_slice()),
                        _ => None,
                    })
            }
            (Token::Group(_, inner), _) => init_body(inner),
            _ => None,
        })
}

/// The format string of every `pr_info!` in `body`, decoded: its first string literal.
pub(crate) fn pr_info_formats(body: &[Spanned]) -> Vec<String> {
    let calls = macro_calls(body, &|name| name == "pr_info");
    let format = |arguments: &&[Spanned]| arguments.iter().find_map(string);
    calls.iter().filter_map(format).collect()
}

/// The arguments of every macro call `NAME!(...)` in `tokens` whose name `wanted` takes, in the
/// order they are written, those inside brackets too.
fn macro_calls<'a>(tokens: &'a [Spanned], wanted: &dyn Fn(&str) -> bool) -> Vec<&'a [Spanned]> {
    let mut calls = Vec::new();
    for (at, spanned) in tokens.iter().enumerate() {
        let call = tokens
            .get(at + 1..at + 3)
            .map(|after| (&after[0].token, &after[1].token));
        match (&spanned.token, call) {
            (Token::Ident(name), Some((Token::Punct('!'), Token::Group(_, arguments))))
                if wanted(name) =>
            {
                calls.push(arguments.as_slice());
            }
            (Token::Group(_, inner), _) => calls.extend(macro_calls(inner, wanted)),
            _ => {}
        }
    }
    calls
}

fn string(spanned: &Spanned) -> Option<String> {
    match &spanned.token {
        Token::Str(text) => Some(text.clone()),
        _ => None,
    }
}

/// What `sample` prints for `format`: the kernel's `NAME: ` prefix, then the format's first
/// line, holes as wildcards.
fn expected(sample: &str, format: &str) -> Expected {
    let line = format.split('\n').next().unwrap_or("");
    let ends_line = format.contains('\n');
    let mut part = format!("{sample}: ");
    let mut text = part.clone();
    let mut parts = Vec::new();
    let mut chars = line.chars().peekable();
    let mut ends_in_hole = false;
    while let Some(c) = chars.next() {
        ends_in_hole = false;
        match c {
            '{' | '}' if chars.next_if_eq(&c).is_some() => {
                part.push(c);
                text.extend([c, c]);
            }
            '{' => {
                chars.by_ref().find(|&c| c == '}');
                text.push_str("{}");
                parts.push(std::mem::take(&mut part));
                ends_in_hole = true;
            }
            c => {
                part.push(c);
                text.push(c);
            }
        }
    }
    parts.push(part);
    parts.retain(|part| !part.is_empty());
    Expected {
        text,
        parts,
        open_end: ends_in_hole || !ends_line,
    }
}
