// SPDX-License-Identifier: GPL-2.0
//! Cfg predicates (`all(unix, not(feature = "std"))`): the one type, reader and evaluator that
//! the audit, the expectations and the repository tests share, together with the small lexer
//! of Rust token trees that reads them and that [`crate::features::attributes`] uses for whole
//! attributes; errors carry line and column.

use crate::catalog::Release;
use std::fmt;

/// How deep brackets may nest in an attribute or a predicate: rustc accepts thousands of
/// levels (1.95.0 takes 5000 nested `cfg_attr`s), real crates use a handful, and the cap keeps
/// every recursion over a token tree or a predicate far from the end of a thread's stack.
pub const MAX_NESTING: usize = 128;

/// A cfg predicate, as in `#[cfg(...)]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Predicate {
    /// `true` or `false`, accepted by rustc from 1.88.0 on.
    Bool(bool),
    /// A bare name: `CONFIG_RUSTC_HAS_COERCE_POINTEE`.
    Name(String),
    /// A name with a value: `target_arch = "x86_64"`.
    KeyValue(String, String),
    /// `version("1.79")`: the compiler is this release or later (the unstable `cfg_version`).
    Version(Release),
    All(Vec<Predicate>),
    Any(Vec<Predicate>),
    Not(Box<Predicate>),
}

/// What [`Predicate::evaluate`] asks its lookup about: one leaf of the predicate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Query<'a> {
    Name(&'a str),
    KeyValue(&'a str, &'a str),
    /// Whether the compiler is this release or later.
    Version(Release),
}

impl fmt::Display for Predicate {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |name: &str, items: &[Predicate]| {
            let items: Vec<String> = items.iter().map(ToString::to_string).collect();
            format!("{name}({})", items.join(", "))
        };
        match self {
            Predicate::Bool(value) => write!(formatter, "{value}"),
            Predicate::Name(name) => formatter.write_str(name),
            Predicate::KeyValue(key, value) => write!(formatter, "{key} = {value:?}"),
            Predicate::Version(release) => write!(formatter, "version(\"{release}\")"),
            Predicate::All(items) => formatter.write_str(&list("all", items)),
            Predicate::Any(items) => formatter.write_str(&list("any", items)),
            Predicate::Not(inner) => write!(formatter, "not({inner})"),
        }
    }
}

impl Predicate {
    /// Reads a predicate written as in `#[cfg(...)]`, such as a catalog gate.
    pub fn parse(text: &str) -> Result<Predicate, SyntaxError> {
        let mut lexer = Lexer::new(text);
        let mut tokens = Vec::new();
        loop {
            lexer.skip_trivia()?;
            if lexer.peek_at(0).is_none() {
                break;
            }
            tokens.push(lexer.token()?);
        }
        let Some(first) = tokens.first() else {
            return Err(lexer.error("expected a cfg predicate, found nothing"));
        };
        Predicate::from_tokens(&tokens, first)
    }

    /// Reads a predicate from its tokens; an empty one is reported at `context`, the bracket
    /// group or attribute it stands in.
    pub(crate) fn from_tokens(
        tokens: &[Spanned],
        context: &Spanned,
    ) -> Result<Predicate, SyntaxError> {
        let Some((first, rest)) = tokens.split_first() else {
            return Err(context.error("expected a cfg predicate"));
        };
        let Token::Ident(name) = &first.token else {
            return Err(first.error("expected a cfg predicate"));
        };
        let tokens: Vec<&Token> = rest.iter().map(|spanned| &spanned.token).collect();
        match (name.as_str(), tokens.as_slice()) {
            ("true", []) => Ok(Predicate::Bool(true)),
            ("false", []) => Ok(Predicate::Bool(false)),
            (_, []) => Ok(Predicate::Name(name.clone())),
            (_, [Token::Punct('='), Token::Str(value)]) => {
                Ok(Predicate::KeyValue(name.clone(), value.clone()))
            }
            (_, [Token::Punct('='), _]) => {
                Err(rest[1].error("a cfg value must be a string literal"))
            }
            ("version", [Token::Group('(', inner)]) => read_version(&rest[0], inner),
            ("all" | "any" | "not", [Token::Group('(', inner)]) => {
                let group = &rest[0];
                let items: Vec<Predicate> = split_commas(inner)?
                    .into_iter()
                    .map(|item| Predicate::from_tokens(item, group))
                    .collect::<Result<_, _>>()?;
                match name.as_str() {
                    "all" => Ok(Predicate::All(items)),
                    "any" => Ok(Predicate::Any(items)),
                    _ => match <[Predicate; 1]>::try_from(items) {
                        Ok([inner]) => Ok(Predicate::Not(Box::new(inner))),
                        Err(_) => Err(group.error("`not` takes exactly one predicate")),
                    },
                }
            }
            (other, [Token::Group('(', _)]) => {
                Err(first.error(format!("unknown cfg predicate `{other}(...)`")))
            }
            _ => Err(rest[0].error("malformed cfg predicate")),
        }
    }

    /// Evaluates the predicate in three-valued logic: `lookup` answers each leaf, or `None`
    /// when nothing is known about it.
    pub fn evaluate<'a>(&'a self, lookup: &dyn Fn(Query<'a>) -> Option<bool>) -> Option<bool> {
        match self {
            Predicate::Bool(value) => Some(*value),
            Predicate::Name(name) => lookup(Query::Name(name)),
            Predicate::KeyValue(key, value) => lookup(Query::KeyValue(key, value)),
            Predicate::Version(release) => lookup(Query::Version(*release)),
            Predicate::Not(inner) => inner.evaluate(lookup).map(|value| !value),
            // `all` is decided by a false item, `any` by a true one; an undecided item leaves
            // the answer undecided unless a deciding one follows.
            Predicate::All(items) | Predicate::Any(items) => {
                let deciding = matches!(self, Predicate::Any(_));
                let folded = items.iter().try_fold(Some(!deciding), |result, item| {
                    match item.evaluate(lookup) {
                        Some(value) if value == deciding => Err(deciding),
                        value => Ok(result.and(value)),
                    }
                });
                folded.unwrap_or_else(Some)
            }
        }
    }

    /// Whether the predicate holds when exactly the cfg names in `set` are set (no `key =
    /// "value"` pair), as with one `rustc --cfg NAME` each; `None` when it asks for a `version`.
    pub fn holds_with(&self, set: &[&str]) -> Option<bool> {
        self.evaluate(&|query| match query {
            Query::Name(name) => Some(set.contains(&name)),
            Query::KeyValue(..) => Some(false),
            Query::Version(_) => None,
        })
    }
}

/// Reads the argument of `version(...)`, a string literal.
fn read_version(group: &Spanned, inner: &[Spanned]) -> Result<Predicate, SyntaxError> {
    let [literal @ Spanned {
        token: Token::Str(text),
        ..
    }] = inner
    else {
        return Err(group.error("`version` takes one string literal, as in `version(\"1.79\")`"));
    };
    // rustc only warns about another form, and takes it for a future release.
    Release::parse(text)
        .or_else(|| Release::parse(&format!("{text}.0")))
        .map(Predicate::Version)
        .ok_or_else(|| {
            literal.error(format!(
                "`version({text:?})` is not a release: write \"MAJOR.MINOR\" or \
                 \"MAJOR.MINOR.PATCH\""
            ))
        })
}

/// Why a predicate or a crate root could not be read, with where (1-based, the column in
/// characters).
#[derive(Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl SyntaxError {
    pub(crate) fn at((line, column): (usize, usize), message: impl Into<String>) -> Self {
        SyntaxError {
            line,
            column,
            message: message.into(),
        }
    }
}

/// One token tree of an attribute or a predicate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Token {
    /// An identifier or keyword; a raw one keeps its `r#`, so `r#true` is no boolean.
    Ident(String),
    /// A string literal, plain or raw, by its value.
    Str(String),
    /// Any other literal (number, character, byte or C string), as far as it was read.
    Literal(String),
    Punct(char),
    /// A bracketed group: its opening bracket and its tokens.
    Group(char, Vec<Spanned>),
}

/// A token and where it starts, 1-based.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Spanned {
    pub(crate) token: Token,
    pub(crate) line: usize,
    pub(crate) column: usize,
}

impl Spanned {
    pub(crate) fn error(&self, message: impl Into<String>) -> SyntaxError {
        SyntaxError::at((self.line, self.column), message)
    }
}

/// Splits a group's tokens at its top-level commas into non-empty items; a trailing comma is
/// allowed, an empty item elsewhere is an error, as in rustc.
pub(crate) fn split_commas(tokens: &[Spanned]) -> Result<Vec<&[Spanned]>, SyntaxError> {
    let mut items = Vec::new();
    let mut start = 0;
    for (index, spanned) in tokens.iter().enumerate() {
        if spanned.token == Token::Punct(',') {
            if index == start {
                return Err(spanned.error("expected an item before `,`"));
            }
            items.push(&tokens[start..index]);
            start = index + 1;
        }
    }
    if start < tokens.len() {
        items.push(&tokens[start..]);
    }
    Ok(items)
}

/// Reads Rust token trees from text, keeping line and column.
pub(crate) struct Lexer<'a> {
    rest: &'a str,
    pub(crate) line: usize,
    pub(crate) column: usize,
    depth: usize,
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_continue(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Self {
            rest: text,
            line: 1,
            column: 1,
            depth: 0,
        }
    }

    pub(crate) fn error(&self, message: impl Into<String>) -> SyntaxError {
        SyntaxError::at((self.line, self.column), message)
    }

    pub(crate) fn bump(&mut self) -> Option<char> {
        let next = self.rest.chars().next()?;
        self.rest = &self.rest[next.len_utf8()..];
        if next == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(next)
    }

    pub(crate) fn peek_at(&self, ahead: usize) -> Option<char> {
        self.rest.chars().nth(ahead)
    }

    fn take_while(&mut self, keep: impl Fn(char) -> bool) -> &'a str {
        let start = self.rest;
        let length = start.find(|c| !keep(c)).unwrap_or(start.len());
        while self.rest.len() > start.len() - length {
            self.bump();
        }
        &start[..length]
    }

    /// Skips whitespace and comments (block comments nest, as in Rust).
    pub(crate) fn skip_trivia(&mut self) -> Result<(), SyntaxError> {
        loop {
            match (self.peek_at(0), self.peek_at(1)) {
                (Some(c), _) if c.is_whitespace() => {
                    self.bump();
                }
                (Some('/'), Some('/')) => {
                    self.take_while(|c| c != '\n');
                }
                (Some('/'), Some('*')) => {
                    let start = self.error("unterminated block comment");
                    self.bump();
                    self.bump();
                    let mut depth = 1;
                    while depth > 0 {
                        match (self.bump(), self.peek_at(0)) {
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

    pub(crate) fn token(&mut self) -> Result<Spanned, SyntaxError> {
        self.skip_trivia()?;
        let (line, column) = (self.line, self.column);
        let spanned = |token| Spanned {
            token,
            line,
            column,
        };
        let start = (line, column);
        let Some(first) = self.peek_at(0) else {
            return Err(self.error("unexpected end of file inside an attribute"));
        };
        if is_ident_start(first) {
            let word = self.take_while(is_ident_continue);
            let hashes = self.rest.chars().take_while(|c| *c == '#').count();
            let raw_string = self.peek_at(hashes) == Some('"');
            return match (word, self.peek_at(0)) {
                ("r", Some('"' | '#')) if raw_string => Ok(spanned(Token::Str(self.raw(start)?))),
                ("br" | "cr", Some('"' | '#')) if raw_string => {
                    Ok(spanned(Token::Literal(self.raw(start)?)))
                }
                ("r", Some('#')) if self.peek_at(1).is_some_and(is_ident_start) => {
                    self.bump();
                    let name = self.take_while(is_ident_continue);
                    Ok(spanned(Token::Ident(format!("r#{name}"))))
                }
                ("b" | "c", Some('"')) | ("b", Some('\'')) => {
                    Ok(spanned(Token::Literal(self.quoted(start)?)))
                }
                _ => Ok(spanned(Token::Ident(word.to_string()))),
            };
        }
        let close = match first {
            '"' => return Ok(spanned(Token::Str(self.quoted(start)?))),
            // A character literal; a lone quote is a lifetime's.
            '\'' if self.peek_at(1) == Some('\\') || self.peek_at(2) == Some('\'') => {
                return Ok(spanned(Token::Literal(self.quoted(start)?)));
            }
            _ if first.is_ascii_digit() => {
                let number = self.take_while(|c| is_ident_continue(c) || c == '.');
                return Ok(spanned(Token::Literal(number.to_string())));
            }
            '(' => ')',
            '[' => ']',
            '{' => '}',
            ')' | ']' | '}' => return Err(SyntaxError::at(start, format!("unbalanced `{first}`"))),
            _ => {
                self.bump();
                return Ok(spanned(Token::Punct(first)));
            }
        };
        if self.depth == MAX_NESTING {
            let message = format!(
                "brackets nested more than {MAX_NESTING} deep, which this reader does not follow"
            );
            return Err(SyntaxError::at(start, message));
        }
        self.bump();
        self.depth += 1;
        let mut inner = Vec::new();
        loop {
            self.skip_trivia()?;
            match self.peek_at(0) {
                Some(c) if c == close => {
                    self.bump();
                    self.depth -= 1;
                    return Ok(spanned(Token::Group(first, inner)));
                }
                Some(')' | ']' | '}') => {
                    return Err(self.error(format!(
                        "expected `{close}` to close the `{first}` at {line}:{column}"
                    )))
                }
                None => return Err(SyntaxError::at(start, format!("`{first}` is never closed"))),
                Some(_) => inner.push(self.token()?),
            }
        }
    }

    /// Reads a raw string's body, from its `#`s to its closing quote and `#`s; escapes mean
    /// nothing there, so `r"C:\dir\"` ends at its last quote.
    fn raw(&mut self, start: (usize, usize)) -> Result<String, SyntaxError> {
        let hashes = self.take_while(|c| c == '#').len();
        self.bump();
        let mut value = String::new();
        loop {
            match self.bump() {
                Some('"') if self.rest.bytes().take_while(|b| *b == b'#').count() >= hashes => {
                    for _ in 0..hashes {
                        self.bump();
                    }
                    return Ok(value);
                }
                Some(c) => value.push(c),
                None => return Err(SyntaxError::at(start, "unterminated raw string literal")),
            }
        }
    }

    /// Reads a quoted literal (string or character) from its opening quote, escapes resolved.
    fn quoted(&mut self, start: (usize, usize)) -> Result<String, SyntaxError> {
        let quote = self.bump();
        let mut value = String::new();
        loop {
            match self.bump() {
                Some(c) if Some(c) == quote => return Ok(value),
                Some('\\') => self.escape(&mut value)?,
                Some(c) => value.push(c),
                None if quote == Some('"') => {
                    return Err(SyntaxError::at(start, "unterminated string literal"))
                }
                None => return Err(SyntaxError::at(start, "unterminated character literal")),
            }
        }
    }

    /// Reads one escape after its backslash into `value`.
    fn escape(&mut self, value: &mut String) -> Result<(), SyntaxError> {
        let at = self.error("unknown character escape");
        let escaped = match self.bump() {
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some('0') => '\0',
            Some(c @ ('\\' | '\'' | '"')) => c,
            Some('\n') => {
                // A line continuation: the newline and the next line's indentation vanish.
                self.take_while(char::is_whitespace);
                return Ok(());
            }
            Some('x') => {
                let digits: String = [self.bump(), self.bump()].into_iter().flatten().collect();
                u8::from_str_radix(&digits, 16)
                    .ok()
                    .map(char::from)
                    .ok_or_else(|| SyntaxError {
                        message: format!("`\\x{digits}` is not an escape of two hex digits"),
                        ..at
                    })?
            }
            Some('u') if self.peek_at(0) == Some('{') => {
                self.bump();
                let digits = self.take_while(|c| c.is_ascii_hexdigit() || c == '_');
                let closed = self.bump() == Some('}');
                u32::from_str_radix(&digits.replace('_', ""), 16)
                    .ok()
                    .and_then(char::from_u32)
                    .filter(|_| closed)
                    .ok_or_else(|| SyntaxError {
                        message: "malformed `\\u{...}` escape".into(),
                        ..at
                    })?
            }
            _ => return Err(at),
        };
        value.push(escaped);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
