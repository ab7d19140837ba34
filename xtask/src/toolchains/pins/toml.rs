// SPDX-License-Identifier: GPL-2.0
//! Reading the pin file's TOML with `toml_parser`: the `[[pin]]` and `[[tree]]` tables, each
//! key's line and decoded string value, and every error at its `FILE:LINE`.

use crate::util::output::escape;
use std::collections::BTreeMap;
use toml_parser::parser::EventKind::*;
use toml_parser::parser::{Event, ValidateWhitespace};
use toml_parser::{ParseError, Source};

/// One `[[pin]]` or `[[tree]]` table as read: each key's line and string value.
pub(super) type RawTable = BTreeMap<String, (usize, String)>;

/// Which table a [`RawTable`] is: `[[pin]]` or `[[tree]]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TableKind {
    Pin,
    Tree,
}

/// An error at a line of the pin file.
pub(super) type LineError = (usize, String);

/// The keys of a `[[pin]]` and of a `[[tree]]`, as an unknown key's error lists them.
const PIN_KEYS: &str = "id, release, commit-date, role, rustup, debian, note";
const TREE_KEYS: &str = "id, debian, path, note";

/// Reads the `[[pin]]` and `[[tree]]` tables of a TOML document, each with its header's line.
///
/// The first error in the file wins. `toml_parser` checks the syntax and leaves decoding to
/// the reader, so an error the reader finds after the first syntax error may be its echo.
pub(super) fn read_tables(text: &str) -> Result<Vec<(TableKind, usize, RawTable)>, LineError> {
    let source = Source::new(text);
    let tokens = source.lex().into_vec();
    let mut events: Vec<Event> = Vec::new();
    let mut syntax_errors: Vec<ParseError> = Vec::new();
    toml_parser::parser::parse_document(
        &tokens,
        &mut ValidateWhitespace::new(&mut events, source),
        &mut syntax_errors,
    );
    let after_newlines = text.match_indices('\n').map(|(index, _)| index + 1);
    let reader = TableReader {
        source,
        line_starts: std::iter::once(0).chain(after_newlines).collect(),
    };
    let read = reader.read(&events);
    let first_syntax_error = syntax_errors
        .iter()
        .map(|error| (error_offset(error), error))
        .min_by_key(|(offset, _)| *offset);
    let at = |offset: usize, message: String| Err((reader.line_of(offset), message));
    match (read, first_syntax_error) {
        (Err(Misread::Invalid(offset, message)), Some((syntax, _))) if offset < syntax => {
            at(offset, message)
        }
        (Err(Misread::Syntax(offset, message)), Some((syntax, _))) if offset <= syntax => {
            at(offset, message)
        }
        (_, Some((offset, error))) => at(offset, describe_toml_error(text, error)),
        (Err(Misread::Invalid(offset, message) | Misread::Syntax(offset, message)), None) => {
            at(offset, message)
        }
        (Err(Misread::Malformed(offset)), None) => at(offset, "malformed TOML".to_owned()),
        (Ok(tables), None) => Ok(tables),
    }
}

fn error_offset(error: &ParseError) -> usize {
    error
        .unexpected()
        .or(error.context())
        .map_or(0, |span| span.start())
}

/// What `toml_parser` says, what it expected, what it found.
fn describe_toml_error(text: &str, error: &ParseError) -> String {
    let mut message = error.description().to_owned();
    if let Some(expected) = error.expected().filter(|expected| !expected.is_empty()) {
        let expected: Vec<String> = expected
            .iter()
            .map(|expected| match expected {
                toml_parser::Expected::Literal(literal) => format!("`{}`", escape(literal)),
                toml_parser::Expected::Description(description) => description.to_string(),
                _ => "something else".to_owned(),
            })
            .collect();
        message.push_str(&format!(", expected {}", expected.join(" or ")));
    }
    let offset = error_offset(error);
    // What it found: the rest of the line from the error on.
    let rest = text
        .get(offset..)
        .and_then(|rest| rest.lines().next())
        .map(str::trim)
        .unwrap_or_default();
    if !rest.is_empty() {
        message.push_str(&format!(", found `{}`", escape(rest)));
    }
    message
}

/// Why [`TableReader`] stopped.
enum Misread {
    /// A table, key or value the pin file may not have, at a byte offset.
    Invalid(usize, String),
    /// A syntax error that `toml_parser` reports too, said with what the reader knows.
    Syntax(usize, String),
    /// Events that only come with a TOML syntax error, which `toml_parser` reports.
    Malformed(usize),
}

/// Walks `toml_parser`'s events, decoding keys and strings; errors are at byte offsets.
struct TableReader<'t> {
    source: Source<'t>,
    line_starts: Vec<usize>,
}

impl TableReader<'_> {
    /// The 1-based line of the byte at `offset`.
    fn line_of(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&start| start <= offset)
    }

    fn read(&self, events: &[Event]) -> Result<Vec<(TableKind, usize, RawTable)>, Misread> {
        let input = self.source.input();
        let mut events = events
            .iter()
            .filter(|event| !matches!(event.kind(), Whitespace | Comment | Newline))
            .peekable();
        let mut tables: Vec<(TableKind, usize, RawTable)> = Vec::new();
        while let Some(event) = events.next() {
            let start = event.span().start();
            match event.kind() {
                ArrayTableOpen | StdTableOpen => {
                    let key = self.key(&mut events)?;
                    let close = events
                        .next()
                        .map(|close| (close.kind(), close.span().end()));
                    let Some((ArrayTableClose | StdTableClose, end)) = close else {
                        return Err(Misread::Malformed(start));
                    };
                    let array = event.kind() == ArrayTableOpen;
                    let kind = match key.as_slice() {
                        [name] if array && name == "pin" => TableKind::Pin,
                        [name] if array && name == "tree" => TableKind::Tree,
                        _ => {
                            let header = &input[start..end];
                            let message = format!(
                                "unknown table `{header}`; the tables are `[[pin]]` and `[[tree]]`"
                            );
                            return Err(Misread::Invalid(start, message));
                        }
                    };
                    tables.push((kind, self.line_of(start), BTreeMap::new()));
                }
                SimpleKey => {
                    let mut key = vec![self.simple_key(event)?];
                    key.extend(self.key(&mut events)?);
                    let key = key.join(".");
                    if events.next_if(|event| event.kind() == KeyValSep).is_none() {
                        let found =
                            escape(input[start..].lines().next().unwrap_or_default().trim());
                        let message = format!("expected `key = \"value\"`, found `{found}`");
                        return Err(Misread::Syntax(start, message));
                    }
                    let value = self.string_value(&key, &mut events)?;
                    if let Some(first) = events.next_if(|event| event.kind() == Error) {
                        // `toml_parser` marks each token up to the end of the line.
                        let more = std::iter::from_fn(|| events.next_if(|e| e.kind() == Error));
                        let end = more.last().unwrap_or(first).span().end();
                        let extra = escape(&input[first.span().start()..end]);
                        let message =
                            format!("unexpected text `{extra}` after the value of `{key}`");
                        return Err(Misread::Syntax(first.span().start(), message));
                    }
                    let Some((kind, _, table)) = tables.last_mut() else {
                        let message = format!(
                            "`{key}` is outside any `[[pin]]` table; start each pin with `[[pin]]`"
                        );
                        return Err(Misread::Invalid(start, message));
                    };
                    let (keys, what) = match kind {
                        TableKind::Pin => (PIN_KEYS, "a pin"),
                        TableKind::Tree => (TREE_KEYS, "a tree"),
                    };
                    if !keys.split(", ").any(|known| known == key) {
                        let message = format!("unknown key `{key}`; {what} has {keys}");
                        return Err(Misread::Invalid(start, message));
                    }
                    if let Some((first_line, _)) = table.get(&key) {
                        let message =
                            format!("duplicate key `{key}` (first set on line {first_line})");
                        return Err(Misread::Invalid(start, message));
                    }
                    table.insert(key, (self.line_of(start), value));
                }
                _ => return Err(Misread::Malformed(start)),
            }
        }
        Ok(tables)
    }

    /// The parts of a key after its first (`.b.c` of `a.b.c`), or all of a table header's.
    fn key<'e>(
        &self,
        events: &mut std::iter::Peekable<impl Iterator<Item = &'e Event>>,
    ) -> Result<Vec<String>, Misread> {
        std::iter::from_fn(|| events.next_if(|event| matches!(event.kind(), SimpleKey | KeySep)))
            .filter(|event| event.kind() == SimpleKey)
            .map(|event| self.simple_key(event))
            .collect()
    }

    fn simple_key(&self, event: &Event) -> Result<String, Misread> {
        let mut key = String::new();
        let mut errors: Vec<ParseError> = Vec::new();
        self.raw(event).decode_key(&mut key, &mut errors);
        errors.first().map_or(Ok(key), |error| {
            let message = describe_toml_error(self.source.input(), error);
            Err(Misread::Invalid(error_offset(error), message))
        })
    }

    fn string_value<'e>(
        &self,
        key: &str,
        events: &mut std::iter::Peekable<impl Iterator<Item = &'e Event>>,
    ) -> Result<String, Misread> {
        let Some(event) = events.next() else {
            return Err(Misread::Malformed(self.source.input().len()));
        };
        let start = event.span().start();
        let not_a_string = |end: usize| {
            let found = &self.source.input()[start..end];
            let message = format!("the value of `{key}` must be a string, found `{found}`");
            Misread::Invalid(start, message)
        };
        match event.kind() {
            Scalar => {
                let mut value = String::new();
                let mut errors: Vec<ParseError> = Vec::new();
                let kind = self.raw(event).decode_scalar(&mut value, &mut errors);
                if let Some(error) = errors.first() {
                    let offset = error_offset(error);
                    // The decoder reports a missing closing quote at the string's end, which
                    // for a multi-line string is the end of the file.
                    if offset == event.span().end() {
                        let message = format!("the string value of `{key}` is not closed");
                        return Err(Misread::Invalid(start, message));
                    }
                    let message = format!(
                        "in the value of `{key}`: {}",
                        describe_toml_error(self.source.input(), error)
                    );
                    return Err(Misread::Invalid(offset, message));
                }
                if kind != toml_parser::decoder::ScalarKind::String {
                    return Err(not_a_string(event.span().end()));
                }
                Ok(value)
            }
            ArrayOpen | InlineTableOpen => {
                // Skip to the matching close, to quote the whole value.
                let (mut depth, mut end) = (1, event.span().end());
                events.by_ref().find(|inner| {
                    end = inner.span().end();
                    depth += match inner.kind() {
                        ArrayOpen | InlineTableOpen => 1,
                        ArrayClose | InlineTableClose => -1,
                        _ => 0,
                    };
                    depth == 0
                });
                Err(not_a_string(end))
            }
            _ => Err(Misread::Malformed(start)),
        }
    }

    fn raw(&self, event: &Event) -> toml_parser::Raw<'_> {
        self.source
            .get(event)
            .expect("toml_parser's events lie within its source")
    }
}
