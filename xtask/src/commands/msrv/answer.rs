// SPDX-License-Identifier: GPL-2.0
//! The answer of `msrv`, whatever was asked about: one row per compiler in release order (built
//! in stable and kernel mode, or why not), and per mode the oldest and the newest compiler that
//! built it, with the compilers between them that failed, were not tried or were not there.

use crate::catalog::Release;
use crate::run::plan::Mode;
use crate::toolchains::discovery::{Availability, Toolchain};
use crate::toolchains::version::RustcVersion;
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
    /// Nothing says, and why: no build was made (a kernel tree not built with it yet), or the
    /// compiler is not there.
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

/// Why a compiler took no part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unavailable {
    /// A pin that is not provisioned, with the command that provisions it.
    Missing(String),
    /// A compiler that was found and does not work, with its error.
    Broken(String),
}

impl Unavailable {
    fn word(&self) -> &'static str {
        match self {
            Unavailable::Missing(_) => "missing",
            Unavailable::Broken(_) => "broken",
        }
    }

    fn detail(&self) -> &str {
        match self {
            Unavailable::Missing(hint) => hint,
            Unavailable::Broken(error) => error,
        }
    }
}

/// One compiler of the answer.
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
    /// In kernel mode, the features the subject enables that this compiler gates, which
    /// `RUSTC_BOOTSTRAP=1` lets it build (none on a nightly, which needs no such variable).
    pub bootstrap_for: Vec<String>,
    /// Whether its results came from a cache, with nothing built now.
    pub cached: bool,
}

impl Row {
    /// The compiler `availability` found, with its version, or the row of one that is not there.
    pub fn found(availability: &Availability) -> Result<(&Toolchain, &RustcVersion), Box<Row>> {
        match availability {
            Availability::Found { toolchain, version } => Ok((toolchain, version)),
            Availability::Broken { toolchain, error } => {
                let why = Unavailable::Broken(error.clone());
                Err(Box::new(Row::unavailable(&toolchain.id, None, why)))
            }
            Availability::Missing { pin, install_hint } => {
                let why = Unavailable::Missing(install_hint.clone());
                let row = Row::unavailable(&pin.id, Some(pin.release.clone()), why);
                Err(Box::new(row))
            }
        }
    }

    /// A compiler that took no part: both modes unknown for the same reason.
    pub fn unavailable(id: &str, release_text: Option<String>, why: Unavailable) -> Row {
        let said = format!("not available ({})", why.word());
        Row {
            id: id.to_string(),
            release: release_text.as_deref().and_then(release_of),
            release_text,
            unavailable: Some(why),
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

/// The release a `rustc -vV` or pin release string names: `1.97.0` for `1.97.0-nightly`.
pub fn release_of(text: &str) -> Option<Release> {
    Release::parse(text.split('-').next().unwrap_or(text))
}

/// The answer for one mode: positions among [`Answer::rows`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModeAnswer {
    pub oldest: Option<usize>,
    pub newest: Option<usize>,
    /// Between the oldest and the newest: compilers that took part and failed, or whose result
    /// is unknown though they are there.
    pub fails_between: Vec<usize>,
    pub unknown_between: Vec<usize>,
    /// Compilers that were not there: between the two, older than the oldest (the oldest may be
    /// older still) and newer than the newest.
    pub unavailable_between: Vec<usize>,
    pub unavailable_older: Vec<usize>,
    pub unavailable_newer: Vec<usize>,
    /// Compilers that are there and whose result is unknown (no build made), older than the
    /// oldest and newer than the newest.
    pub unknown_older: Vec<usize>,
    pub unknown_newer: Vec<usize>,
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
    /// The modes asked about, each with its answer: both for the shim and a crate root, kernel
    /// mode alone for a kernel tree, which Kbuild builds only so.
    pub modes: Vec<(Mode, ModeAnswer)>,
    /// Lines that say what the answer rests on (the cache, a build's cost), shown under it.
    pub notes: Vec<String>,
}

/// The modes in the order the answer states them.
pub const BOTH_MODES: [Mode; 2] = [Mode::Stable, Mode::Kernel];

/// Decides one mode over rows in release order.
pub fn decide(rows: &[Row], mode: Mode) -> ModeAnswer {
    let builds: Vec<usize> = (0..rows.len())
        .filter(|&index| rows[index].built(mode) == &Built::Builds)
        .collect();
    let (Some(&oldest), Some(&newest)) = (builds.first(), builds.last()) else {
        return ModeAnswer {
            unavailable_between: (0..rows.len())
                .filter(|&index| rows[index].unavailable.is_some())
                .collect(),
            ..ModeAnswer::default()
        };
    };
    let mut answer = ModeAnswer {
        oldest: Some(oldest),
        newest: Some(newest),
        ..ModeAnswer::default()
    };
    for (index, row) in rows.iter().enumerate() {
        let (older, newer) = (index < oldest, index > newest);
        let list = match (&row.unavailable, row.built(mode)) {
            (Some(_), _) if older => &mut answer.unavailable_older,
            (Some(_), _) if newer => &mut answer.unavailable_newer,
            (Some(_), _) => &mut answer.unavailable_between,
            (None, Built::Unknown(_)) if older => &mut answer.unknown_older,
            (None, Built::Unknown(_)) if newer => &mut answer.unknown_newer,
            (None, Built::Unknown(_)) => &mut answer.unknown_between,
            // Outside the two a failure is the answer itself.
            (None, Built::Fails(_)) if !older && !newer => &mut answer.fails_between,
            (None, _) => continue,
        };
        list.push(index);
    }
    answer
}

/// Puts `rows` in release order (then by id), those without a release last in their order.
pub fn in_release_order(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort_by_key(|row| {
        (
            row.release.is_none(),
            row.release,
            row.release.and(Some(row.id.clone())),
        )
    });
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

    /// Success when some compiler builds the subject in some mode.
    pub fn verdict(&self) -> Verdict {
        Verdict::failure_if(self.modes.iter().all(|(_, answer)| answer.oldest.is_none()))
    }

    fn ids(&self, positions: &[usize]) -> Vec<String> {
        positions
            .iter()
            .map(|&index| self.rows[index].label())
            .collect()
    }

    /// One mode's answer as lines for people, each without its mode's name.
    fn mode_lines(&self, mode: Mode, answer: &ModeAnswer) -> Vec<String> {
        let (Some(oldest), Some(newest)) = (answer.oldest, answer.newest) else {
            let mut lines = vec!["no compiler here builds it".to_string()];
            if !answer.unavailable_between.is_empty() {
                lines.push(format!(
                    "not available: {}",
                    self.ids(&answer.unavailable_between).join(", ")
                ));
            }
            return lines;
        };
        let building = (oldest..=newest)
            .filter(|&index| self.rows[index].built(mode) == &Built::Builds)
            .count();
        let mut lines = vec![if oldest == newest {
            format!("only {} builds it", self.rows[oldest].label())
        } else {
            format!(
                "oldest {}, newest {} ({building} compilers here build it)",
                self.rows[oldest].label(),
                self.rows[newest].label(),
            )
        }];
        let gated = |index: usize| self.rows[index].bootstrap_for.len();
        if mode == Mode::Kernel && gated(oldest) + gated(newest) > 0 {
            lines.push(if oldest == newest {
                format!(
                    "with RUSTC_BOOTSTRAP=1 for {} gated features",
                    gated(oldest)
                )
            } else {
                format!(
                    "with RUSTC_BOOTSTRAP=1: the oldest for {} gated features, the newest for {}",
                    gated(oldest),
                    gated(newest)
                )
            });
        }
        let mut list = |what: &str, positions: &[usize]| {
            if !positions.is_empty() {
                lines.push(format!("{what}: {}", self.ids(positions).join(", ")));
            }
        };
        list("fail between them", &answer.fails_between);
        list("not built between them", &answer.unknown_between);
        list("not available between them", &answer.unavailable_between);
        list(
            "not available and older (the oldest may be older still)",
            &answer.unavailable_older,
        );
        list("not available and newer", &answer.unavailable_newer);
        list(
            "not built and older (the oldest may be older still)",
            &answer.unknown_older,
        );
        list("not built and newer", &answer.unknown_newer);
        lines
    }

    fn table(&self) -> Table {
        let mut headers: Vec<String> = self
            .modes
            .iter()
            .map(|(mode, _)| mode.word().into())
            .collect();
        headers.push("note".into());
        let mut table = Table::new("compiler", &headers).with_free_last_column();
        for row in &self.rows {
            let cell = |built: &Built| match &row.unavailable {
                Some(why) => (why.word().to_string(), false),
                None => (built.word().to_string(), matches!(built, Built::Fails(_))),
            };
            // The first thing that went wrong: why it is not there, else the first mode's error.
            let detail = self
                .modes
                .iter()
                .find_map(|(mode, _)| row.built(*mode).detail());
            let unavailable = row.unavailable.as_ref().map(Unavailable::detail);
            let mut note = unavailable.or(detail).unwrap_or_default().to_string();
            let kernel_asked = self.modes.iter().any(|(mode, _)| *mode == Mode::Kernel);
            if kernel_asked && row.kernel == Built::Builds && !row.bootstrap_for.is_empty() {
                // Counted: a list would make the table too wide to read; the JSON has it.
                let with = format!(
                    "kernel mode with RUSTC_BOOTSTRAP=1 for {} gated features",
                    row.bootstrap_for.len()
                );
                let separator = if note.is_empty() { "" } else { "; " };
                note = format!("{note}{separator}{with}");
            }
            let note = note.lines().next().unwrap_or_default().to_string();
            let mut cells: Vec<(String, bool)> = self
                .modes
                .iter()
                .map(|(mode, _)| cell(row.built(*mode)))
                .collect();
            cells.push((note, false));
            table.rows.push((row.label(), cells));
        }
        table
    }

    /// The answer for a terminal, its table laid out for `style`'s width.
    pub fn human(&self, style: &Style) -> String {
        let mut out = format!("msrv: {}\n", self.subject);
        for (mode, answer) in &self.modes {
            let lines = self.mode_lines(*mode, answer);
            let _ = writeln!(out, "  {} mode: {}", mode.word(), output::escape(&lines[0]));
            for line in &lines[1..] {
                let _ = writeln!(out, "    {}", output::escape(line));
            }
        }
        for note in &self.notes {
            let _ = writeln!(out, "  {}", output::escape(note));
        }
        out.push('\n');
        self.table().render_text(&mut out, style);
        out
    }

    pub fn markdown(&self) -> String {
        let mut out = format!(
            "## Which compiler builds {}?\n\n",
            output::escape_markdown(&self.subject)
        );
        for (mode, answer) in &self.modes {
            let lines = self.mode_lines(*mode, answer);
            let _ = writeln!(
                out,
                "- **{} mode**: {}",
                mode.word(),
                output::escape_markdown(&lines[0])
            );
            for line in &lines[1..] {
                let _ = writeln!(out, "  - {}", output::escape_markdown(line));
            }
        }
        for note in &self.notes {
            let _ = writeln!(out, "- {}", output::escape_markdown(note));
        }
        out.push('\n');
        self.table().render_markdown(&mut out);
        out
    }

    pub fn to_json(&self) -> Value {
        let id = |index: Option<usize>| index.map(|index| self.rows[index].id.clone());
        let ids = |positions: &[usize]| -> Vec<String> {
            positions
                .iter()
                .map(|&index| self.rows[index].id.clone())
                .collect()
        };
        let modes: Vec<Value> = self
            .modes
            .iter()
            .map(|(mode, answer)| {
                json!({
                    "mode": mode.word(),
                    "oldest": id(answer.oldest),
                    "newest": id(answer.newest),
                    "fails_between": ids(&answer.fails_between),
                    "unknown_between": ids(&answer.unknown_between),
                    "unavailable_between": ids(&answer.unavailable_between),
                    "unavailable_older": ids(&answer.unavailable_older),
                    "unavailable_newer": ids(&answer.unavailable_newer),
                    "unknown_older": ids(&answer.unknown_older),
                    "unknown_newer": ids(&answer.unknown_newer),
                })
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
                    "available": row.unavailable.as_ref().map_or("yes", Unavailable::word),
                    "unavailable": row.unavailable.as_ref().map(Unavailable::detail),
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
