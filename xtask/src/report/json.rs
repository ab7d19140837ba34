//! A small JSON value with a strict reader and a writer, enough for rustc's diagnostics, the
//! matrix report and the result cache.
//!
//! Hand-written rather than `serde_json` to keep the xtask's dependency list short (see its
//! `Cargo.toml`): everything the matrix reads or writes is a few kilobytes of plain JSON.

use std::fmt::{self, Write};

/// A JSON value; objects keep their keys in the order they were written.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number; integers up to 2^53 round-trip exactly.
    Number(f64),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object, as key-value pairs in order.
    Object(Vec<(String, Value)>),
}

impl Value {
    /// The member `key` of an object, or `None` for a missing key or a non-object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(members) => members
                .iter()
                .find(|(name, _)| name == key)
                .map(|(_, value)| value),
            _ => None,
        }
    }

    /// The text of a string value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(text) => Some(text),
            _ => None,
        }
    }

    /// The value of a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(number) => Some(*number),
            _ => None,
        }
    }

    /// The value of a number that is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        let number = self.as_f64()?;
        (number >= 0.0 && number.fract() == 0.0 && number < 9.0e15).then_some(number as u64)
    }

    /// The value of a boolean.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(value) => Some(*value),
            _ => None,
        }
    }

    /// The elements of an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(elements) => Some(elements),
            _ => None,
        }
    }

    /// The members of an object.
    pub fn as_object(&self) -> Option<&[(String, Value)]> {
        match self {
            Value::Object(members) => Some(members),
            _ => None,
        }
    }

    /// A string value, or `null` for `None`.
    pub fn opt_string(text: Option<impl Into<String>>) -> Value {
        text.map_or(Value::Null, |text| Value::String(text.into()))
    }

    /// Writes the value with two-space indentation, one member or element per line.
    pub fn to_pretty(&self) -> String {
        let mut out = String::new();
        self.write_pretty(&mut out, 0);
        out.push('\n');
        out
    }

    fn write_pretty(&self, out: &mut String, depth: usize) {
        let indent = |out: &mut String, depth: usize| {
            out.push('\n');
            for _ in 0..depth {
                out.push_str("  ");
            }
        };
        match self {
            Value::Array(elements) if !elements.is_empty() => {
                out.push('[');
                for (index, element) in elements.iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    indent(out, depth + 1);
                    element.write_pretty(out, depth + 1);
                }
                indent(out, depth);
                out.push(']');
            }
            Value::Object(members) if !members.is_empty() => {
                out.push('{');
                for (index, (key, value)) in members.iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    indent(out, depth + 1);
                    write_string(out, key);
                    out.push_str(": ");
                    value.write_pretty(out, depth + 1);
                }
                indent(out, depth);
                out.push('}');
            }
            other => {
                // Writing to a String cannot fail.
                let _ = write!(out, "{other}");
            }
        }
    }
}

/// Compact JSON, on one line.
impl fmt::Display for Value {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => formatter.write_str("null"),
            Value::Bool(value) => write!(formatter, "{value}"),
            Value::Number(number) if !number.is_finite() => formatter.write_str("null"),
            Value::Number(number) if number.fract() == 0.0 && number.abs() < 9.0e15 => {
                write!(formatter, "{}", *number as i64)
            }
            Value::Number(number) => write!(formatter, "{number}"),
            Value::String(text) => {
                let mut out = String::with_capacity(text.len() + 2);
                write_string(&mut out, text);
                formatter.write_str(&out)
            }
            Value::Array(elements) => {
                formatter.write_char('[')?;
                for (index, element) in elements.iter().enumerate() {
                    if index > 0 {
                        formatter.write_char(',')?;
                    }
                    write!(formatter, "{element}")?;
                }
                formatter.write_char(']')
            }
            Value::Object(members) => {
                formatter.write_char('{')?;
                for (index, (key, value)) in members.iter().enumerate() {
                    if index > 0 {
                        formatter.write_char(',')?;
                    }
                    write!(formatter, "{}:{value}", Value::String(key.clone()))?;
                }
                formatter.write_char('}')
            }
        }
    }
}

/// Appends `text` as a JSON string literal, escaping what RFC 8259 requires.
pub fn write_string(out: &mut String, text: &str) {
    out.push('"');
    for character in text.chars() {
        match character {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            control if (control as u32) < 0x20 || control == '\u{7f}' => {
                let _ = write!(out, "\\u{:04x}", control as u32);
            }
            other => out.push(other),
        }
    }
    out.push('"');
}

/// Parses one JSON value that makes up the whole of `text` (surrounding whitespace allowed).
///
/// The error says what was wrong and at which byte offset.
pub fn parse(text: &str) -> Result<Value, String> {
    let mut parser = Parser {
        bytes: text.as_bytes(),
        position: 0,
    };
    let value = parser.value(0)?;
    parser.skip_whitespace();
    if parser.position != parser.bytes.len() {
        return Err(parser.error("trailing characters after the value"));
    }
    Ok(value)
}

/// Nesting deeper than this is refused rather than risking the stack.
const MAX_DEPTH: usize = 128;

struct Parser<'text> {
    bytes: &'text [u8],
    position: usize,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> String {
        format!("invalid JSON at byte {}: {what}", self.position)
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.position) {
            self.position += 1;
        }
    }

    fn expect_literal(&mut self, literal: &str, value: Value) -> Result<Value, String> {
        if self.bytes[self.position..].starts_with(literal.as_bytes()) {
            self.position += literal.len();
            Ok(value)
        } else {
            Err(self.error("unknown literal"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        self.skip_whitespace();
        match self.bytes.get(self.position) {
            None => Err(self.error("unexpected end of input")),
            Some(b'n') => self.expect_literal("null", Value::Null),
            Some(b't') => self.expect_literal("true", Value::Bool(true)),
            Some(b'f') => self.expect_literal("false", Value::Bool(false)),
            Some(b'"') => self.string().map(Value::String),
            Some(b'[') => {
                self.position += 1;
                let mut elements = Vec::new();
                self.skip_whitespace();
                if self.bytes.get(self.position) == Some(&b']') {
                    self.position += 1;
                    return Ok(Value::Array(elements));
                }
                loop {
                    elements.push(self.value(depth + 1)?);
                    self.skip_whitespace();
                    match self.bytes.get(self.position) {
                        Some(b',') => self.position += 1,
                        Some(b']') => {
                            self.position += 1;
                            return Ok(Value::Array(elements));
                        }
                        _ => return Err(self.error("expected `,` or `]`")),
                    }
                }
            }
            Some(b'{') => {
                self.position += 1;
                let mut members = Vec::new();
                self.skip_whitespace();
                if self.bytes.get(self.position) == Some(&b'}') {
                    self.position += 1;
                    return Ok(Value::Object(members));
                }
                loop {
                    self.skip_whitespace();
                    if self.bytes.get(self.position) != Some(&b'"') {
                        return Err(self.error("expected a string key"));
                    }
                    let key = self.string()?;
                    self.skip_whitespace();
                    if self.bytes.get(self.position) != Some(&b':') {
                        return Err(self.error("expected `:`"));
                    }
                    self.position += 1;
                    members.push((key, self.value(depth + 1)?));
                    self.skip_whitespace();
                    match self.bytes.get(self.position) {
                        Some(b',') => self.position += 1,
                        Some(b'}') => {
                            self.position += 1;
                            return Ok(Value::Object(members));
                        }
                        _ => return Err(self.error("expected `,` or `}`")),
                    }
                }
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("unexpected character")),
        }
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.position;
        while let Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') =
            self.bytes.get(self.position)
        {
            self.position += 1;
        }
        // The slice is ASCII by construction.
        let text = std::str::from_utf8(&self.bytes[start..self.position]).unwrap_or_default();
        text.parse()
            .map(Value::Number)
            .map_err(|_| self.error("malformed number"))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .bytes
            .get(self.position..self.position + 4)
            .and_then(|digits| std::str::from_utf8(digits).ok())
            .and_then(|digits| u32::from_str_radix(digits, 16).ok())
            .ok_or_else(|| self.error("malformed \\u escape"))?;
        self.position += 4;
        Ok(digits)
    }

    fn string(&mut self) -> Result<String, String> {
        // The opening quote.
        self.position += 1;
        let mut text = String::new();
        loop {
            let start = self.position;
            while let Some(&byte) = self.bytes.get(self.position) {
                if byte == b'"' || byte == b'\\' || byte < 0x20 {
                    break;
                }
                self.position += 1;
            }
            // Input came from a &str and we stopped at an ASCII byte, so this is a whole
            // number of UTF-8 characters.
            text.push_str(
                std::str::from_utf8(&self.bytes[start..self.position]).unwrap_or_default(),
            );
            match self.bytes.get(self.position) {
                Some(b'"') => {
                    self.position += 1;
                    return Ok(text);
                }
                Some(b'\\') => {
                    self.position += 1;
                    let escape = self.bytes.get(self.position).copied();
                    self.position += 1;
                    match escape {
                        Some(b'"') => text.push('"'),
                        Some(b'\\') => text.push('\\'),
                        Some(b'/') => text.push('/'),
                        Some(b'b') => text.push('\u{8}'),
                        Some(b'f') => text.push('\u{c}'),
                        Some(b'n') => text.push('\n'),
                        Some(b'r') => text.push('\r'),
                        Some(b't') => text.push('\t'),
                        Some(b'u') => {
                            let first = self.hex4()?;
                            let code = if (0xd800..0xdc00).contains(&first) {
                                if !self.bytes[self.position..].starts_with(b"\\u") {
                                    return Err(self.error("unpaired surrogate"));
                                }
                                self.position += 2;
                                let second = self.hex4()?;
                                if !(0xdc00..0xe000).contains(&second) {
                                    return Err(self.error("unpaired surrogate"));
                                }
                                0x10000 + ((first - 0xd800) << 10) + (second - 0xdc00)
                            } else {
                                first
                            };
                            text.push(
                                char::from_u32(code)
                                    .ok_or_else(|| self.error("invalid code point"))?,
                            );
                        }
                        _ => return Err(self.error("unknown escape")),
                    }
                }
                Some(_) => return Err(self.error("control character in string")),
                None => return Err(self.error("unterminated string")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_nested_values_with_escapes() {
        let value = Value::Object(vec![
            (
                "name".into(),
                Value::String("a \"quoted\"\n\\ line\u{1}é😀".into()),
            ),
            ("count".into(), Value::Number(42.0)),
            ("seconds".into(), Value::Number(0.25)),
            (
                "list".into(),
                Value::Array(vec![Value::Null, Value::Bool(true), Value::Array(vec![])]),
            ),
            ("empty".into(), Value::Object(vec![])),
        ]);
        assert_eq!(parse(&value.to_string()).unwrap(), value);
        assert_eq!(parse(&value.to_pretty()).unwrap(), value);
        assert!(value.to_string().contains(r#""count":42,"#));
        assert!(value.to_string().contains(r"\u0001"));
    }

    #[test]
    fn reads_surrogate_pairs_and_rejects_garbage() {
        assert_eq!(
            parse(r#""\ud83d\ude00 \u00e9""#).unwrap(),
            Value::String("😀 é".into())
        );
        for bad in [
            "",
            "{",
            "[1,]",
            "{\"a\" 1}",
            "\"\\ud83d\"",
            "nul",
            "1 2",
            "\"\u{1}\"",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} parsed");
        }
    }
}
