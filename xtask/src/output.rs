//! How results reach people: the `--format` choice, colour, and the tables that the matrix,
//! `merge` and `audit` print.

use crate::json::{self, Value};
use anyhow::bail;
use std::fmt::Write;
use std::io::IsTerminal;

/// The output formats of `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Tables and summary lines for a terminal.
    Human,
    /// The JSON report.
    Json,
    /// The tables as Markdown.
    Markdown,
}

impl Format {
    /// Reads `--format`.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        match text {
            "human" => Ok(Format::Human),
            "json" => Ok(Format::Json),
            "markdown" => Ok(Format::Markdown),
            other => bail!("--format must be `human`, `json` or `markdown`, not `{other}`"),
        }
    }

    /// Prints a report on stdout in this format; the human form is coloured only on a terminal
    /// and never when `NO_COLOR` is set. The matrix, `merge` and `audit` all print this way.
    pub fn print(
        self,
        json: impl FnOnce() -> Value,
        markdown: impl FnOnce() -> String,
        human: impl FnOnce(bool) -> String,
    ) {
        match self {
            Format::Json => print!("{}", json::to_pretty(&json())),
            Format::Markdown => print!("{}", markdown()),
            Format::Human => print!("{}", human(colour_on(std::io::stdout().is_terminal()))),
        }
    }
}

/// Whether to colour output for a stream that is (or is not) a terminal: `NO_COLOR` turns it
/// off, `CLICOLOR_FORCE` on even for a pipe, and a `TERM=dumb` terminal gets none.
pub fn colour_on(terminal: bool) -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|value| !value.is_empty());
    if set("NO_COLOR") {
        return false;
    }
    if std::env::var_os("CLICOLOR_FORCE").is_some_and(|value| !value.is_empty() && value != "0") {
        return true;
    }
    terminal && std::env::var_os("TERM").is_none_or(|term| term != "dumb")
}

/// Whether stderr is a terminal that can redraw a line in place: not a pipe or file, and not
/// a `TERM=dumb` one.
pub fn updating_terminal() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("TERM").is_none_or(|term| term != "dumb")
}

/// The width of the terminal on stderr, in columns: what the kernel says it is, else
/// `COLUMNS`, else 80.
pub fn terminal_columns() -> usize {
    // SAFETY: `winsize` is plain old data, for which all-zero is a valid value.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ only writes a `winsize` into the live value it is given.
    let asked = unsafe { libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut size) };
    if asked == 0 && size.ws_col > 0 {
        return usize::from(size.ws_col);
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|columns| columns.parse().ok())
        .filter(|&columns| columns > 0)
        .unwrap_or(80)
}

/// A toolchain's column header, the same in every table: its id, with the release when the id
/// does not already end in it, and the path of a compiler given as one (which tells two
/// compilers of one release apart).
pub fn column_label(id: &str, release: Option<&str>, path: Option<&str>) -> String {
    let mut notes: Vec<&str> = Vec::new();
    if let Some(release) = release.filter(|release| !id.ends_with(release)) {
        notes.push(release);
    }
    notes.extend(path);
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

/// A table with a row-name column and one column per toolchain (`audit` renders with it too).
pub struct Table {
    corner: String,
    headers: Vec<String>,
    /// Row name, then (text, differs) per column.
    pub rows: Vec<(String, Vec<(String, bool)>)>,
}

impl Table {
    pub fn new(corner: &str, headers: &[String]) -> Self {
        Self {
            corner: corner.to_string(),
            headers: headers.to_vec(),
            rows: Vec::new(),
        }
    }

    fn cell_text((text, differs): &(String, bool)) -> String {
        if *differs {
            format!("{text} !")
        } else {
            text.clone()
        }
    }

    pub fn render_text(&self, out: &mut String, colour: bool) {
        let first_width = self
            .rows
            .iter()
            .map(|(name, _)| name.len())
            .chain([self.corner.len()])
            .max()
            .unwrap_or(0);
        let widths: Vec<usize> = self
            .headers
            .iter()
            .enumerate()
            .map(|(column, header)| {
                self.rows
                    .iter()
                    .map(|(_, cells)| Self::cell_text(&cells[column]).chars().count())
                    .chain([header.chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let _ = write!(out, "{:first_width$}", self.corner);
        for (header, width) in self.headers.iter().zip(&widths) {
            let _ = write!(out, "  {header:width$}");
        }
        out.push('\n');
        for (name, cells) in &self.rows {
            let _ = write!(out, "{name:first_width$}");
            for (cell, width) in cells.iter().zip(&widths) {
                let text = format!("{:width$}", Self::cell_text(cell));
                let _ = write!(
                    out,
                    "  {}",
                    if cell.1 {
                        paint_red(&text, colour)
                    } else {
                        text
                    }
                );
            }
            out.push('\n');
        }
    }

    pub fn render_markdown(&self, out: &mut String) {
        let _ = write!(out, "| {} |", self.corner);
        for header in &self.headers {
            let _ = write!(out, " {header} |");
        }
        out.push_str("\n|---|");
        for _ in &self.headers {
            out.push_str("---|");
        }
        out.push('\n');
        for (name, cells) in &self.rows {
            let _ = write!(out, "| `{name}` |");
            for cell in cells {
                let text = Self::cell_text(cell);
                if cell.1 {
                    let _ = write!(out, " **{text}** |");
                } else {
                    let _ = write!(out, " {text} |");
                }
            }
            out.push('\n');
        }
    }
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
}
