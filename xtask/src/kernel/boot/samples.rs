// SPDX-License-Identifier: GPL-2.0
//! What a tree's Rust samples print when they start, read from their own sources: the format
//! strings of the `pr_info!` calls in the body of their module's `fn init`, with the module's
//! name (`module! { name: "rust_minimal", ... }`) as the prefix the kernel prints, and each
//! `{...}` hole a wildcard.

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
            let sources: Vec<String> = super::super::symbols::objects_of(tree, symbol)
                .iter()
                .filter_map(|object| {
                    let source = tree.join(object).with_extension("rs");
                    std::fs::read_to_string(source).ok()
                })
                .collect();
            let Some(name) = sources.iter().find_map(|text| module_name(text)) else {
                return Sample {
                    name: symbol.clone(),
                    expected: Vec::new(),
                };
            };
            let expected = sources
                .iter()
                .filter_map(|text| init_body(text))
                .flat_map(|body| pr_info_formats(&body))
                .map(|format| expected(&name, &format))
                .collect();
            Sample { name, expected }
        })
        .collect()
}

/// The `name: "..."` of the file's `module!`-style macro (`module!`, `module_platform_driver!`,
/// `module_misc_device!` ...).
pub(crate) fn module_name(text: &str) -> Option<String> {
    let code = code_only(text);
    let at = code.find("module")?;
    let after = &code[at..];
    let name_at = after.find("name:")?;
    let quoted = after[name_at + 5..].trim_start().strip_prefix('"')?;
    let literal = &text[text.len() - quoted.len()..];
    let end = literal.find('"')?;
    Some(literal[..end].to_owned())
}

/// The body of the first `fn init(`, as source text (strings kept).
pub(crate) fn init_body(text: &str) -> Option<String> {
    let code = code_only(text);
    let at = code.find("fn init(")?;
    let open = at + code[at..].find('{')?;
    let mut depth = 0usize;
    for (offset, c) in code[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(text[open + 1..open + offset].to_owned());
                }
            }
            _ => {}
        }
    }
    None
}

/// The format string of every `pr_info!` in `body`, decoded (escapes resolved).
pub(crate) fn pr_info_formats(body: &str) -> Vec<String> {
    let code = code_only(body);
    // The first string literal after each macro's opening bracket.
    let format = |(at, _)| string_literal(&body[at + code[at..].find('"')?..]);
    code.match_indices("pr_info!").filter_map(format).collect()
}

/// The decoded text of the string literal `source` starts with.
fn string_literal(source: &str) -> Option<String> {
    let mut chars = source.strip_prefix('"')?.chars();
    let mut text = String::new();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(text),
            '\\' => match chars.next()? {
                'n' => text.push('\n'),
                't' => text.push('\t'),
                'r' => text.push('\r'),
                '0' => text.push('\0'),
                same @ ('\\' | '"' | '\'') => text.push(same),
                // A line continuation skips the newline and the next line's indentation.
                '\n' => chars = chars.as_str().trim_start().chars(),
                other => text.extend(['\\', other]),
            },
            c => text.push(c),
        }
    }
    None
}

/// What `sample` prints for `format`: the kernel's `NAME: ` prefix, then the format's first
/// line, holes as wildcards.
fn expected(sample: &str, format: &str) -> Expected {
    let line = format.split('\n').next().unwrap_or("");
    let ends_line = format.contains('\n');
    let mut parts = vec![format!("{sample}: ")];
    let mut text = format!("{sample}: ");
    let mut chars = line.chars().peekable();
    let mut ends_in_hole = false;
    while let Some(c) = chars.next() {
        ends_in_hole = false;
        match c {
            '{' | '}' if chars.next_if_eq(&c).is_some() => {
                parts.last_mut().unwrap().push(c);
                text.extend([c, c]);
            }
            '{' => {
                chars.by_ref().find(|&c| c == '}');
                text.push_str("{}");
                parts.push(String::new());
                ends_in_hole = true;
            }
            c => {
                parts.last_mut().unwrap().push(c);
                text.push(c);
            }
        }
    }
    parts.retain(|part| !part.is_empty());
    Expected {
        text,
        parts,
        open_end: ends_in_hole || !ends_line,
    }
}

/// `text` with every comment, string and character literal blanked out by spaces (byte for
/// byte, so that offsets stay those of `text`), for finding code.
fn code_only(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut code = bytes.to_vec();
    let mut i = 0;
    let blank = |code: &mut Vec<u8>, from: usize, to: usize| {
        for byte in &mut code[from..to.min(bytes.len())] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
    };
    while i < bytes.len() {
        match bytes[i] {
            b'/' if matches!(bytes.get(i + 1), Some(b'/' | b'*')) => {
                let close = if bytes[i + 1] == b'/' { "\n" } else { "*/" };
                let end = text[i + 2..]
                    .find(close)
                    .map_or(bytes.len(), |at| i + 2 + at + close.len());
                blank(&mut code, i, end);
                i = end;
            }
            b'r' if bytes.get(i + 1) == Some(&b'"') || bytes.get(i + 1) == Some(&b'#') => {
                let hashes = bytes[i + 1..].iter().take_while(|b| **b == b'#').count();
                if bytes.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let body = i + 2 + hashes;
                let end = text[body..]
                    .find(&close)
                    .map_or(bytes.len(), |at| body + at + close.len());
                // The quotes stay, so that a string can still be found where it starts.
                blank(&mut code, i + 2 + hashes, end - close.len());
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != b'"' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut code, i + 1, j);
                i = j + 1;
            }
            b'\'' => {
                // A character literal ('x', '\n', '{'), not a lifetime ('static).
                let end = if bytes.get(i + 1) == Some(&b'\\') {
                    text[i + 2..].find('\'').map(|at| i + 2 + at)
                } else {
                    let width = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                    (bytes.get(i + 1 + width) == Some(&b'\'')).then_some(i + 1 + width)
                };
                match end {
                    Some(end) => {
                        blank(&mut code, i + 1, end);
                        i = end + 1;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    String::from_utf8(code).unwrap_or_default()
}
