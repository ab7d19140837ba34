// SPDX-License-Identifier: GPL-2.0
//! The one table renderer, and the width every human report is laid out for: the full table
//! where it fits, else its columns split into blocks that each repeat the row names, else one
//! block of `column: cell` lines per row; then [`fit`] wraps any line still too wide.

use super::{
    environment_columns, escape, escape_markdown, markdown_code, pad, paint_red, tty_columns,
};
use std::fmt::Write;

/// How wide human output may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// No line wider than this many columns.
    Fit(usize),
    /// `--wide`: every table in its full layout, however wide.
    Wide,
}

impl Width {
    /// The width without `--wide`: `COLUMNS` when set, else the size of the terminal on
    /// stdout, else 100.
    pub fn of_stdout() -> Self {
        let columns = environment_columns().or_else(|| tty_columns(libc::STDOUT_FILENO));
        Width::Fit(columns.unwrap_or(100))
    }

    fn limit(self) -> Option<usize> {
        match self {
            // Narrower than this, no layout is readable; lines are still wrapped to it.
            Width::Fit(columns) => Some(columns.max(20)),
            Width::Wide => None,
        }
    }
}

/// How a human report is drawn: coloured or not, and for which width.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    pub colour: bool,
    pub width: Width,
}

/// A table with a row-name column and one column per toolchain (`audit` and `kernel` render
/// with it too).
///
/// Every name and cell is shown through [`escape`].
pub struct Table {
    corner: String,
    headers: Vec<String>,
    /// Row name, then (text, differs) per column.
    pub rows: Vec<(String, Vec<(String, bool)>)>,
    /// The last column is free text (a reason, an error): not padded, and wrapped rather than
    /// moved to a block of its own when the table is too wide.
    free_last: bool,
}

/// The width of text as a terminal shows it: colour sequences take none.
fn visible_width(text: &str) -> usize {
    units(text).iter().map(|unit| unit.1).sum()
}

/// `text` as units and their widths: a colour sequence (no width) or one character.
fn units(text: &str) -> Vec<(&str, usize)> {
    let mut units = Vec::new();
    let mut rest = text;
    while let Some(character) = rest.chars().next() {
        let length = if character == '\x1b' {
            // A CSI sequence ends at its final byte, `@` to `~`.
            let end = rest[1..]
                .find(|next: char| ('@'..='~').contains(&next) && next != '[')
                .map_or(rest.len(), |at| at + 2);
            units.push((&rest[..end], 0));
            end
        } else {
            units.push((&rest[..character.len_utf8()], 1));
            character.len_utf8()
        };
        rest = &rest[length..];
    }
    units
}

/// How much of a free last column counts when deciding whether a layout fits.
const FREE_TEXT_SHARE: usize = 24;

impl Table {
    pub fn new(corner: &str, headers: &[String]) -> Self {
        Self {
            corner: corner.to_string(),
            headers: headers.to_vec(),
            rows: Vec::new(),
            free_last: false,
        }
    }

    /// The same table whose last column is free text.
    pub fn with_free_last_column(mut self) -> Self {
        self.free_last = true;
        self
    }

    fn cell_text((text, differs): &(String, bool)) -> String {
        let text = escape(text);
        if *differs {
            format!("{text} !")
        } else {
            text.into_owned()
        }
    }

    /// The table as text for `style`: the full layout when it fits (or with `--wide`), else
    /// the columns in blocks, else a block of lines per row.
    pub fn render_text(&self, out: &mut String, style: &Style) {
        let width = |text: &str| text.chars().count();
        let headers = self.headers.iter().map(|header| (header.clone(), false));
        let header_row = (self.corner.clone(), headers.collect());
        let rows: Vec<(String, Vec<(String, bool)>)> = std::iter::once(&header_row)
            .chain(&self.rows)
            .map(|(name, cells)| {
                let cells = cells.iter().map(|cell| (Self::cell_text(cell), cell.1));
                (escape(name).into_owned(), cells.collect())
            })
            .collect();
        let first_width = rows.iter().map(|(name, _)| width(name)).max().unwrap_or(0);
        let widths: Vec<usize> = (0..self.headers.len())
            .map(|column| {
                rows.iter()
                    .filter_map(|(_, cells)| cells.get(column))
                    .map(|(cell, _)| width(cell))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let last = self.headers.len().checked_sub(1);
        // The width a column takes in a line, free text counted only in part.
        let taken = |column: usize| match (self.free_last && Some(column) == last, widths[column]) {
            (true, width) => 2 + width.min(FREE_TEXT_SHARE),
            (false, width) => 2 + width,
        };
        let limit = style.width.limit().unwrap_or(usize::MAX);
        if first_width + (0..widths.len()).map(taken).max().unwrap_or(0) > limit {
            return self.render_rows_as_lines(out, &rows, style.colour);
        }
        // As many columns in a block as fit, each block repeating the row names: one block when
        // the whole table fits.
        let mut blocks: Vec<Vec<usize>> = vec![Vec::new()];
        let mut used = first_width;
        for column in 0..widths.len() {
            if used + taken(column) > limit {
                blocks.push(Vec::new());
                used = first_width;
            }
            blocks.last_mut().expect("one block").push(column);
            used += taken(column);
        }
        for (number, block) in blocks.iter().enumerate() {
            if number > 0 {
                out.push('\n');
            }
            for (name, cells) in &rows {
                let mut line = pad(name, first_width);
                for &column in block {
                    let Some((cell, differs)) = cells.get(column) else {
                        continue;
                    };
                    line.push_str("  ");
                    let shown = if self.free_last && Some(column) == last {
                        cell.clone()
                    } else {
                        pad(cell, widths[column])
                    };
                    line.push_str(&paint_red(&shown, style.colour && *differs));
                }
                if self.free_last {
                    line.truncate(line.trim_end().len());
                }
                out.push_str(&line);
                out.push('\n');
            }
        }
    }

    /// The narrowest layout: each row's name, then one `column: cell` line per column.
    fn render_rows_as_lines(
        &self,
        out: &mut String,
        rows: &[(String, Vec<(String, bool)>)],
        colour: bool,
    ) {
        let (header_row, rows) = rows.split_first().expect("the header row");
        let _ = writeln!(out, "{}:", header_row.0);
        for (name, cells) in rows {
            let _ = writeln!(out, "{name}");
            for ((header, _), (cell, differs)) in header_row.1.iter().zip(cells) {
                let _ = writeln!(out, "  {header}: {}", paint_red(cell, colour && *differs));
            }
        }
    }

    pub fn render_markdown(&self, out: &mut String) {
        let _ = write!(out, "| {} |", escape_markdown(&self.corner));
        for header in &self.headers {
            let _ = write!(out, " {} |", escape_markdown(header));
        }
        let _ = writeln!(out, "\n|---|{}", "---|".repeat(self.headers.len()));
        for (name, cells) in &self.rows {
            let _ = write!(out, "| {} |", markdown_code(name));
            for entry in cells {
                let text = escape_markdown(&Self::cell_text(entry));
                let text = if entry.1 { format!("**{text}**") } else { text };
                let _ = write!(out, " {text} |");
            }
            out.push('\n');
        }
    }
}

/// `text` with every line wider than `width` wrapped: at a space where there is one, its
/// continuation lines indented four columns past the line's own indent.
pub fn fit(text: &str, width: Width) -> String {
    let Some(limit) = width.limit() else {
        return text.to_string();
    };
    let lines = text.split('\n').map(|line| {
        if visible_width(line) <= limit {
            return line.to_string();
        }
        let indent = line.len() - line.trim_start_matches(' ').len();
        let indent = (indent + 4).min(limit / 2);
        wrapped(line, limit, indent).join(&format!("\n{}", " ".repeat(indent)))
    });
    lines.collect::<Vec<_>>().join("\n")
}

/// `line` cut into pieces of at most `limit` visible columns, each after the first `indent`
/// columns narrower; a colour sequence is never split.
fn wrapped(line: &str, limit: usize, indent: usize) -> Vec<String> {
    let units = units(line);
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < units.len() {
        let room = if pieces.is_empty() {
            limit
        } else {
            limit - indent
        };
        // The longest run of units from `start` that fits.
        let mut used = 0;
        let mut end = start;
        while end < units.len() && used + units[end].1 <= room {
            used += units[end].1;
            end += 1;
        }
        if end < units.len() {
            // Break after the last space in the run, if that leaves something on this line.
            if let Some(space) = (start + 1..end).rev().find(|&at| units[at].0 == " ") {
                end = space + 1;
            }
        }
        let piece: String = units[start..end].iter().map(|unit| unit.0).collect();
        pieces.push(piece.trim_end_matches(' ').to_string());
        start = end;
        // A continuation line does not begin with the spaces the break left.
        while start < units.len() && units[start].0 == " " {
            start += 1;
        }
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        let headers: Vec<String> = (1..=6).map(|n| format!("debian-1.8{n}.0")).collect();
        let mut table = Table::new("feature", &headers);
        for name in ["asm_goto", "coerce_pointee"] {
            let cells = (0..6).map(|n| ("gated".to_string(), n == 2)).collect();
            table.rows.push((name.to_string(), cells));
        }
        table
    }

    fn rendered(table: &Table, width: Width, colour: bool) -> String {
        let mut out = String::new();
        table.render_text(&mut out, &Style { colour, width });
        fit(&out, width)
    }

    fn widest(text: &str) -> usize {
        text.lines().map(visible_width).max().unwrap_or(0)
    }

    #[test]
    fn a_table_fits_the_width_in_blocks_or_lines() {
        let table = table();
        let wide = rendered(&table, Width::Wide, false);
        assert_eq!(wide.lines().count(), 3, "{wide}");
        assert!(widest(&wide) > 60, "{wide}");
        let blocks = rendered(&table, Width::Fit(60), false);
        assert!(widest(&blocks) <= 60, "{blocks}");
        // Two blocks of three rows, each naming every feature.
        assert_eq!(blocks.matches("coerce_pointee").count(), 2, "{blocks}");
        assert_eq!(blocks.matches("debian-1.86.0").count(), 1, "{blocks}");
        let lines = rendered(&table, Width::Fit(24), true);
        assert!(widest(&lines) <= 24, "{lines}");
        assert!(
            lines.contains("  debian-1.83.0: \x1b[31mgated !\x1b[0m"),
            "{lines}"
        );
    }

    #[test]
    fn long_lines_wrap_at_spaces_and_keep_colour_whole() {
        let line = format!("  {} tail", paint_red("one two three four", true));
        let wrapped = fit(&line, Width::Fit(20));
        assert!(widest(&wrapped) <= 20, "{wrapped:?}");
        assert_eq!(wrapped, "  \x1b[31mone two three\n      four\x1b[0m tail");
        let word = "x".repeat(45);
        assert_eq!(widest(&fit(&word, Width::Fit(20))), 20);
        assert_eq!(fit(&word, Width::Wide), word);
    }
}
