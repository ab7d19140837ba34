// SPDX-License-Identifier: GPL-2.0
//! How results reach people: the `--format` choice, colour, and the tables that the matrix,
//! `merge`, `audit`, `usage`, `kernel` and `show` print, fitted to the terminal ([`table`]).

use crate::util::json::{self, Value};
use anyhow::bail;
use std::borrow::Cow;
use std::fmt::Write;
use std::io::IsTerminal;

mod table;

pub use table::{fit, Style, Table, Width};

/// The output formats of `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Tables and summary lines for a terminal.
    Human,
    Json,
    Markdown,
}

impl Format {
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        match text {
            "human" => Ok(Format::Human),
            "json" => Ok(Format::Json),
            "markdown" => Ok(Format::Markdown),
            other => bail!(
                "--format must be `human`, `json` or `markdown`, not `{}`",
                escape(other)
            ),
        }
    }

    /// Prints a command's report on stdout in this format and hands back its `verdict`: the
    /// human form coloured as [`Output::colour_on`] says for stdout, and laid out for
    /// `output.width`. With `-q` a human report that found nothing wrong is not printed, as
    /// cargo's `-q` says nothing on success (asked-for JSON and Markdown are data).
    pub fn print_report(
        self,
        verdict: crate::Verdict,
        output: Output,
        json: impl FnOnce() -> Value,
        markdown: impl FnOnce() -> String,
        human: impl FnOnce(&Style) -> String,
    ) -> crate::Verdict {
        match self {
            Format::Json => print!("{}", json::to_pretty(&json())),
            Format::Markdown => print!("{}", markdown()),
            Format::Human
                if output.verbosity == Verbosity::Quiet && verdict == crate::Verdict::Success => {}
            Format::Human => {
                let style = Style {
                    colour: output.colour_on(std::io::stdout().is_terminal()),
                    width: output.width,
                };
                print!("{}", fit(&human(&style), output.width));
            }
        }
        verdict
    }
}

/// What the flags every command takes say of its output (`--color`, `-q`/`-v`, `--wide`):
/// read once by the command line and handed to the command, which hands it to what prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Output {
    pub colour: Colour,
    pub verbosity: Verbosity,
    pub width: Width,
}

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Colour {
    /// As the environment and the stream say ([`Output::colour_on`]).
    Auto,
    Always,
    Never,
}

/// How much a command says on stderr as it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    /// `-q`: no progress, and no human report that found nothing wrong.
    Quiet,
    Normal,
    /// `-v`: a progress line for cached steps too.
    Verbose,
}

impl Colour {
    /// Reads a `--color` (or `CARGO_TERM_COLOR`) value: `auto`, `always` or `never`.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        match text {
            "auto" => Ok(Colour::Auto),
            "always" => Ok(Colour::Always),
            "never" => Ok(Colour::Never),
            other => bail!(
                "--color must be `auto`, `always` or `never`, not `{}`",
                escape(other)
            ),
        }
    }
}

impl Output {
    /// No flag given: colour as the environment says, progress, and the width of the terminal.
    pub fn of_stdout() -> Self {
        Output {
            colour: Colour::Auto,
            verbosity: Verbosity::Normal,
            width: Width::of_stdout(),
        }
    }

    /// Whether to colour output for a stream that is (or is not) a terminal: `--color always`
    /// or `never` decide, then `CARGO_TERM_COLOR` (as cargo reads it); else `NO_COLOR` turns it
    /// off, `CLICOLOR_FORCE` on even for a pipe, and a `TERM=dumb` terminal gets none.
    pub fn colour_on(self, terminal: bool) -> bool {
        let from_environment = || {
            let text = std::env::var("CARGO_TERM_COLOR").ok()?;
            Colour::parse(&text).ok()
        };
        let choice = match self.colour {
            Colour::Auto => from_environment().unwrap_or(Colour::Auto),
            chosen => chosen,
        };
        if choice != Colour::Auto {
            return choice == Colour::Always;
        }
        if std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty()) {
            return false;
        }
        if std::env::var_os("CLICOLOR_FORCE").is_some_and(|value| !value.is_empty() && value != "0")
        {
            return true;
        }
        terminal && std::env::var_os("TERM").is_none_or(|term| term != "dumb")
    }
}

/// Whether stderr is a terminal that can redraw a line in place: not a pipe or file, and not
/// a `TERM=dumb` one.
pub fn updating_terminal() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("TERM").is_none_or(|term| term != "dumb")
}

/// The width of the terminal on stderr, in columns: what the kernel says it is, else
/// `COLUMNS`, else 80.
pub fn terminal_columns() -> usize {
    tty_columns(libc::STDERR_FILENO)
        .or_else(environment_columns)
        .unwrap_or(80)
}

/// The width the kernel gives the terminal on descriptor `fd`, if it is one.
fn tty_columns(fd: libc::c_int) -> Option<usize> {
    // SAFETY: `winsize` is plain old data, for which all-zero is a valid value.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ only writes a `winsize` into the live value it is given.
    let asked = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut size) };
    (asked == 0 && size.ws_col > 0).then_some(usize::from(size.ws_col))
}

/// A positive `COLUMNS`.
fn environment_columns() -> Option<usize> {
    let columns = std::env::var("COLUMNS").ok()?.trim().parse().ok();
    columns.filter(|&columns| columns > 0)
}

/// A toolchain's column header, the same in every table: its id, with the release when the id
/// does not already end in it, and the path of a compiler given as one (which tells two
/// compilers of one release apart).
pub fn column_label(id: &str, release: Option<&str>, path: Option<&str>) -> String {
    let release = release.filter(|release| !id.ends_with(release));
    let notes: Vec<&str> = release.into_iter().chain(path).collect();
    if notes.is_empty() {
        id.to_string()
    } else {
        format!("{id} ({})", notes.join(", "))
    }
}

/// `text` in red when `enabled`: how every table marks what differs from the prediction.
pub fn paint_red(text: &str, enabled: bool) -> String {
    if enabled {
        format!("\x1b[31m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// `text` as a terminal or a page may show it: every control character (ESC, NUL, a line
/// break, DEL, the C1 controls) and every bidirectional override written as an escape (`\e`,
/// `\0`, `\n`, `\u{202e}`), so that text from a report, a pin file or a compiler can neither
/// drive the terminal nor break a table's lines.
pub fn escape(text: &str) -> Cow<'_, str> {
    let hostile = |character: char| {
        character.is_control()
            || matches!(character, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(hostile) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for character in text.chars() {
        match character {
            '\n' => escaped.push_str("\\n"),
            '\r' => escaped.push_str("\\r"),
            '\t' => escaped.push_str("\\t"),
            '\0' => escaped.push_str("\\0"),
            '\x1b' => escaped.push_str("\\e"),
            character if hostile(character) => {
                let _ = write!(escaped, "\\u{{{:x}}}", u32::from(character));
            }
            character => escaped.push(character),
        }
    }
    Cow::Owned(escaped)
}

/// `text` as Markdown text, a table cell or a heading: [`escape`]d, and Markdown's inline
/// punctuation backslashed, so that it is shown as it is (no HTML tag, no emphasis, no link)
/// and a `|` does not end a table cell.
pub fn escape_markdown(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in escape(text).chars() {
        if "\\`*_[]<>|&~".contains(character) {
            escaped.push('\\');
        }
        escaped.push(character);
    }
    escaped
}

/// `text` as a Markdown code span, the backticks included: [`escape`]d, a `|` written `\|` (a
/// table cell would end there), and fenced by two backticks if it holds one.
pub fn markdown_code(text: &str) -> String {
    let text = escape(text).replace('|', "\\|");
    if text.contains('`') {
        format!("`` {text} ``")
    } else {
        format!("`{text}`")
    }
}

/// `text` as a fenced Markdown code block (`info` after the opening fence), its lines
/// [`escape`]d: the fence is longer than any run of backticks in the text, which would end it.
pub fn markdown_block(info: &str, text: &str) -> String {
    let text = escape_lines(text);
    let longest = text
        .split(|character| character != '`')
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{info}\n{text}\n{fence}")
}

/// `text` with HTML's special characters escaped, for element text and quoted attributes.
pub fn escape_html(text: &str) -> String {
    // `&` first, so that the entities written after it stay as they are.
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// [`escape`] for each line of `text`, keeping its line breaks: for messages whose lines are
/// the tool's own and whose parts may come from input.
pub fn escape_lines(text: &str) -> String {
    text.split('\n').map(escape).collect::<Vec<_>>().join("\n")
}

/// `text` followed by spaces up to `width` characters; unlike `format!("{text:width$}")` it
/// takes any width, where the standard library panics from 65536 on.
pub fn pad(text: &str, width: usize) -> String {
    let fill = width.saturating_sub(text.chars().count());
    format!("{text}{}", " ".repeat(fill))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_formats() {
        assert_eq!(Format::parse("json").unwrap(), Format::Json);
        assert_eq!(Format::parse("markdown").unwrap(), Format::Markdown);
        assert!(Format::parse("yaml").is_err());
    }

    /// A place's path comes from a compiler's output: in a Markdown cell its `|` must not end
    /// the cell, nor its control characters reach the terminal that shows the report.
    #[test]
    fn a_markdown_cell_is_one_cell_and_inert() {
        assert_eq!(escape_markdown("src/a|b.rs:3"), "src/a\\|b.rs:3");
        // Shown as `x\e[31my\nz`.
        assert_eq!(escape_markdown("x\x1b[31my\nz"), "x\\\\e\\[31my\\\\nz");
        assert_eq!(
            escape_markdown("6.12.0-<img src=x onerror=alert(1)>"),
            "6.12.0-\\<img src=x onerror=alert(1)\\>"
        );
        assert_eq!(markdown_code("a|b\x1b]0;t\x07"), "`a\\|b\\e]0;t\\u{7}`");
        assert_eq!(markdown_code("a`b"), "`` a`b ``");
        assert_eq!(markdown_block("text", "a\nb"), "```text\na\nb\n```");
        assert_eq!(
            markdown_block("text", "```\n<b>\x1b"),
            "````text\n```\n<b>\\e\n````"
        );
        assert_eq!(
            escape_html("<a href='x'>&</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;"
        );
    }
}
