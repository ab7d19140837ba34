// SPDX-License-Identifier: GPL-2.0
//! Reading the pin file's TOML with the `toml` crate into the `[[pin]]` and `[[tree]]` tables,
//! each value with its line, and every error at its `FILE:LINE`.

use crate::output::escape;
use serde::Deserialize;
use toml::Spanned;

/// The pin file as TOML says it: its only tables are `[[pin]]` and `[[tree]]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFile {
    #[serde(default)]
    pub pin: Vec<Spanned<RawPin>>,
    #[serde(default)]
    pub tree: Vec<Spanned<RawTree>>,
}

/// One `[[pin]]` table, every value a string.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawPin {
    pub id: Spanned<String>,
    pub release: Spanned<String>,
    pub commit_date: Option<Spanned<String>>,
    pub role: Spanned<String>,
    pub rustup: Option<Spanned<String>>,
    pub debian: Option<Spanned<String>>,
    pub note: Option<String>,
}

/// One `[[tree]]` table.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTree {
    pub id: Spanned<String>,
    pub debian: Option<Spanned<String>>,
    pub path: Option<Spanned<String>>,
    pub note: Option<String>,
}

/// Reads the tables of a pin file; the error is a line, `toml`'s message, and the line quoted
/// (which names the key or table at fault).
pub(super) fn read(text: &str, lines: &LineStarts) -> Result<RawFile, (usize, String)> {
    toml::from_str(text).map_err(|error| {
        let line = lines.line_of(error.span().map_or(0, |span| span.start));
        let mut message = error.message().trim_end().to_owned();
        let quoted = text.lines().nth(line - 1).unwrap_or_default().trim();
        if !quoted.is_empty() {
            message.push_str(&format!(", in `{}`", escape(quoted)));
        }
        (line, message)
    })
}

/// The byte offsets at which the lines of a text start, to turn offsets into line numbers.
pub(super) struct LineStarts(Vec<usize>);

impl LineStarts {
    pub fn new(text: &str) -> LineStarts {
        let after_newlines = text.match_indices('\n').map(|(index, _)| index + 1);
        LineStarts(std::iter::once(0).chain(after_newlines).collect())
    }

    /// The 1-based line that holds the byte at `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        self.0.partition_point(|&start| start <= offset)
    }

    /// The line of a value.
    pub fn of<T>(&self, value: &Spanned<T>) -> usize {
        self.line_of(value.span().start)
    }
}
