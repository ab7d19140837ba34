// SPDX-License-Identifier: GPL-2.0
//! The answer of `msrv`: a row per compiler in release order, and per mode the oldest and the
//! newest that built it, with the compilers around them that failed or were not there.

use crate::catalog::Release;
use crate::report::release_key;
use crate::run::plan::Mode;
use crate::toolchains::discovery::{Availability, Toolchain};
use crate::toolchains::version::{Channel, RustcVersion};
use crate::util::json::{json, Value};
use crate::util::output::{self, Style, Table};
use crate::Verdict;
use std::fmt::Write as _;

/// What one compiler did with the subject in one mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Built {
    Builds,
    /// It failed; the first error.
    Fails(String),
    /// Nothing says, and why: no build was made, or the compiler is not there.
    Unknown(String),
}

impl Built {
    pub fn word(&self) -> &'static str {
        match self {
            Built::Builds => "builds",
            Built::Fails(_) => "fails",
            Built::Unknown(_) => "unknown",
        }
    }

    fn detail(&self) -> Option<&str> {
        match self {
            Built::Builds => None,
            Built::Fails(why) | Built::Unknown(why) => Some(why),
        }
    }
}

/// Why a compiler took no part: `missing`, a pin not provisioned, with the command that
/// provisions it; or `broken`, found and not working, with its error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unavailable {
    pub word: &'static str,
    pub detail: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub id: String,
    /// Its release, or the pin's for a missing one: where it stands in release order.
    pub release: Option<Release>,
    /// The release as `rustc -vV` (or the pin) writes it: `1.97.0-nightly`.
    pub release_text: Option<String>,
    /// `None` when the compiler took part.
    pub unavailable: Option<Unavailable>,
    pub stable: Built,
    pub kernel: Built,
    /// In kernel mode, the features this compiler gates that `RUSTC_BOOTSTRAP=1` lets it build.
    pub bootstrap_for: Vec<String>,
    /// Whether its results came from a cache, with nothing built now.
    pub cached: bool,
}

impl Row {
    /// The row of the compiler `availability` names. Where it is there, `found` says what it
    /// did in each mode, the features it gates and whether that came from a cache; of those
    /// features kernel mode needs `RUSTC_BOOTSTRAP=1` for all, but on a nightly, which takes
    /// `#![feature]` without it.
    pub fn of(
        availability: &Availability,
        found: impl FnOnce(&Toolchain, &RustcVersion) -> ([Built; 2], Vec<String>, bool),
    ) -> Row {
        let (id, release_text, (word, detail)) = match availability {
            Availability::Found { toolchain, version } => {
                let ([stable, kernel], gated, cached) = found(toolchain, version);
                let needs_variable = !matches!(version.channel, Channel::Nightly | Channel::Dev);
                return Row {
                    id: toolchain.id.clone(),
                    release: Some(version.release),
                    release_text: Some(version.release_string()),
                    unavailable: None,
                    stable,
                    kernel,
                    bootstrap_for: if needs_variable { gated } else { Vec::new() },
                    cached,
                };
            }
            Availability::Broken { toolchain, error } => (&toolchain.id, None, ("broken", error)),
            Availability::Missing { pin, install_hint } => {
                let release = Some(pin.release.clone());
                (&pin.id, release, ("missing", install_hint))
            }
        };
        // Took no part: both modes unknown for the same reason.
        let said = format!("not available ({word})");
        Row {
            id: id.to_string(),
            // `1.97.0` for `1.97.0-nightly`.
            release: release_text
                .as_deref()
                .and_then(|text| Release::parse(text.split('-').next()?)),
            release_text,
            unavailable: Some(Unavailable {
                word,
                detail: detail.clone(),
            }),
            stable: Built::Unknown(said.clone()),
            kernel: Built::Unknown(said),
            bootstrap_for: Vec::new(),
            cached: false,
        }
    }

    pub fn built(&self, mode: Mode) -> &Built {
        match mode {
            Mode::Stable => &self.stable,
            Mode::Kernel => &self.kernel,
        }
    }

    fn label(&self) -> String {
        output::column_label(&self.id, self.release_text.as_deref(), None)
    }
}

/// The lists of a mode's answer, in the order people read them: what the compilers did (a
/// [`Built::word`], or `unavailable`), where they stand against the oldest and the newest (the
/// JSON's `{what}_{side}`), and the line for people. A build, and a failure outside the two, is
/// the answer itself.
pub(super) const LISTS: [(&str, &str, &str); 7] = [
    ("fails", "between", "fail between them"),
    ("unknown", "between", "not built between them"),
    ("unavailable", "between", "not available between them"),
    ("unavailable", "older", "not available and older"),
    ("unavailable", "newer", "not available and newer"),
    ("unknown", "older", "not built and older"),
    ("unknown", "newer", "not built and newer"),
];

/// The answer for one mode: positions among [`Answer::rows`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModeAnswer {
    pub oldest: Option<usize>,
    pub newest: Option<usize>,
    /// One list per [`LISTS`] entry; with nothing that builds, only the compilers not there.
    pub lists: [Vec<usize>; 7],
}

/// Decides one mode over rows in release order.
pub fn decide(rows: &[Row], mode: Mode) -> ModeAnswer {
    let builds = || (0..rows.len()).filter(|&index| rows[index].built(mode) == &Built::Builds);
    let mut answer = ModeAnswer {
        oldest: builds().next(),
        newest: builds().next_back(),
        ..ModeAnswer::default()
    };
    for (index, row) in rows.iter().enumerate() {
        let side = match (answer.oldest, answer.newest) {
            (Some(oldest), _) if index < oldest => "older",
            (_, Some(newest)) if index > newest => "newer",
            _ => "between",
        };
        let what = match (&row.unavailable, row.built(mode)) {
            (Some(_), _) => "unavailable",
            (None, _) if answer.oldest.is_none() => continue,
            (None, built) => built.word(),
        };
        if let Some(list) = LISTS.iter().position(|&(w, s, _)| (w, s) == (what, side)) {
            answer.lists[list].push(index);
        }
    }
    answer
}

/// What `msrv` answers about one subject.
#[derive(Clone, Debug)]
pub struct Answer {
    /// What was asked about, for people: `the shim (kernel-shim/src/lib.rs)`.
    pub subject: String,
    /// `shim`, `crate-root` or `kernel-tree`.
    pub kind: &'static str,
    /// In release order (then by id); compilers without a release last.
    pub rows: Vec<Row>,
    /// The modes asked about (a kernel tree's kernel mode alone), each with its answer.
    pub modes: Vec<(Mode, ModeAnswer)>,
    /// Lines that say what the answer rests on (the cache, a build's cost), shown under it.
    pub notes: Vec<String>,
}

/// The modes in the order the answer states them.
pub const BOTH_MODES: [Mode; 2] = [Mode::Stable, Mode::Kernel];

/// Puts `rows` in [`release_key`] order.
pub fn in_release_order(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort_by(|a, b| release_key(a.release, &a.id).cmp(&release_key(b.release, &b.id)));
    rows
}

impl Answer {
    pub fn new(
        (subject, kind): (String, &'static str),
        modes: &[Mode],
        rows: Vec<Row>,
        notes: Vec<String>,
    ) -> Self {
        let rows = in_release_order(rows);
        let modes = modes
            .iter()
            .map(|&mode| (mode, decide(&rows, mode)))
            .collect();
        Answer {
            subject,
            kind,
            rows,
            modes,
            notes,
        }
    }

    pub fn verdict(&self) -> Verdict {
        Verdict::failure_if(self.modes.iter().all(|(_, answer)| answer.oldest.is_none()))
    }

    /// One mode's answer as lines for people, each without its mode's name.
    fn mode_lines(&self, mode: Mode, answer: &ModeAnswer) -> Vec<String> {
        let label = |index: usize| self.rows[index].label();
        let gated = |index: usize| self.rows[index].bootstrap_for.len();
        let mut lines = Vec::new();
        match (answer.oldest, answer.newest) {
            (Some(oldest), Some(newest)) if oldest == newest => {
                lines.push(format!("only {} builds it", label(oldest)));
                if mode == Mode::Kernel && gated(oldest) > 0 {
                    let count = gated(oldest);
                    lines.push(format!("with RUSTC_BOOTSTRAP=1 for {count} gated features"));
                }
            }
            (Some(oldest), Some(newest)) => {
                let building = (oldest..=newest)
                    .filter(|&index| self.rows[index].built(mode) == &Built::Builds)
                    .count();
                lines.push(format!(
                    "oldest {}, newest {} ({building} compilers here build it)",
                    label(oldest),
                    label(newest),
                ));
                if mode == Mode::Kernel && gated(oldest) + gated(newest) > 0 {
                    lines.push(format!(
                        "with RUSTC_BOOTSTRAP=1: the oldest for {} gated features, the newest \
                         for {}",
                        gated(oldest),
                        gated(newest)
                    ));
                }
            }
            _ => lines.push("no compiler here builds it".to_string()),
        }
        for (&(_, side, words), positions) in LISTS.iter().zip(&answer.lists) {
            let words = match (answer.oldest, side) {
                // With nothing that builds there is no "between": only the compilers not there.
                (None, _) => "not available".to_string(),
                (_, "older") => format!("{words} (the oldest may be older still)"),
                _ => words.to_string(),
            };
            if !positions.is_empty() {
                let ids: Vec<String> = positions.iter().map(|&index| label(index)).collect();
                lines.push(format!("{words}: {}", ids.join(", ")));
            }
        }
        lines
    }

    fn table(&self) -> Table {
        let modes = || self.modes.iter().map(|(mode, _)| *mode);
        let mut headers: Vec<String> = modes().map(|mode| mode.word().into()).collect();
        headers.push("note".into());
        let mut table = Table::new("compiler", &headers).with_free_last_column();
        for row in &self.rows {
            let cell = |built: &Built| match &row.unavailable {
                Some(why) => (why.word.to_string(), false),
                None => (built.word().to_string(), matches!(built, Built::Fails(_))),
            };
            // The first thing that went wrong: why it is not there, else the first mode's error.
            let detail = modes().find_map(|mode| row.built(mode).detail());
            let unavailable = row.unavailable.as_ref().map(|why| why.detail.as_str());
            let mut note = unavailable.or(detail).unwrap_or_default().to_string();
            if modes().any(|mode| mode == Mode::Kernel)
                && row.kernel == Built::Builds
                && !row.bootstrap_for.is_empty()
            {
                // Counted: a list would make the table too wide to read; the JSON has it.
                let with = format!(
                    "kernel mode with RUSTC_BOOTSTRAP=1 for {} gated features",
                    row.bootstrap_for.len()
                );
                let separator = if note.is_empty() { "" } else { "; " };
                note = format!("{note}{separator}{with}");
            }
            let note = note.lines().next().unwrap_or_default().to_string();
            let mut cells: Vec<(String, bool)> =
                modes().map(|mode| cell(row.built(mode))).collect();
            cells.push((note, false));
            table.rows.push((row.label(), cells));
        }
        table
    }

    /// The answer for a terminal laid out for `style`, or without one as Markdown.
    pub fn text(&self, style: Option<&Style>) -> String {
        let escape = |text: &str| match style {
            Some(_) => output::escape(text).into_owned(),
            None => output::escape_markdown(text),
        };
        let (mut out, [lead, bold, under, note]) = match style {
            Some(_) => (
                format!("msrv: {}\n", self.subject),
                ["  ", "", "    ", "  "],
            ),
            None => (
                format!("## Which compiler builds {}?\n\n", escape(&self.subject)),
                ["- **", "**", "  - ", "- "],
            ),
        };
        for (mode, answer) in &self.modes {
            let lines = self.mode_lines(*mode, answer);
            let first = escape(&lines[0]);
            let _ = writeln!(out, "{lead}{} mode{bold}: {first}", mode.word());
            for line in &lines[1..] {
                let _ = writeln!(out, "{under}{}", escape(line));
            }
        }
        for line in &self.notes {
            let _ = writeln!(out, "{note}{}", escape(line));
        }
        out.push('\n');
        match style {
            Some(style) => self.table().render_text(&mut out, style),
            None => self.table().render_markdown(&mut out),
        }
        out
    }

    pub fn to_json(&self) -> Value {
        let id = |index: usize| &self.rows[index].id;
        let ids =
            |positions: &[usize]| positions.iter().map(|&index| id(index)).collect::<Vec<_>>();
        let modes: Vec<Value> = self
            .modes
            .iter()
            .map(|(mode, answer)| {
                let mut json = json!({
                    "mode": mode.word(),
                    "oldest": answer.oldest.map(id),
                    "newest": answer.newest.map(id),
                });
                for ((what, side, _), positions) in LISTS.iter().zip(&answer.lists) {
                    json[format!("{what}_{side}")] = json!(ids(positions));
                }
                json
            })
            .collect();
        let built = |built: &Built| json!({"outcome": built.word(), "detail": built.detail()});
        let asked = |row: &Row, mode: Mode| {
            let asked = self.modes.iter().any(|(asked, _)| *asked == mode);
            asked.then(|| built(row.built(mode)))
        };
        let toolchains: Vec<Value> = self
            .rows
            .iter()
            .map(|row| {
                json!({
                    "id": row.id,
                    "release": row.release_text,
                    "available": row.unavailable.as_ref().map_or("yes", |why| why.word),
                    "unavailable": row.unavailable.as_ref().map(|why| &why.detail),
                    "stable": asked(row, Mode::Stable),
                    "kernel": asked(row, Mode::Kernel),
                    "bootstrap_for": row.bootstrap_for,
                    "cached": row.cached,
                })
            })
            .collect();
        json!({
            "subject": self.subject,
            "kind": self.kind,
            "verdict": self.verdict().word(),
            "modes": modes,
            "notes": self.notes,
            "toolchains": toolchains,
        })
    }
}
