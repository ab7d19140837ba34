//! The matrix's report: every cell observed next to its prediction, the failures and a summary
//! per toolchain, as tables for people, Markdown, or the JSON whose layout README.md documents
//! (section "The JSON report").

pub mod assemble;

use crate::catalog::{Release, FEATURES, MINIMUM_RELEASE};
use crate::expect::{enabled_in_kernel_mode, Outcome, ToolchainVerdict};
use crate::json::{self, Value};
use crate::output::{paint_red, Table};
use crate::plan::{Kind, Mode};
use crate::status::Status;
use std::fmt::Write;

/// The version of the JSON layout above; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// One toolchain column.
#[derive(Clone, Debug)]
pub struct ToolchainEntry {
    /// The unique id.
    pub id: String,
    /// What was asked for, or how it was found.
    pub spec: String,
    /// `rustup`, `debian`, `path`, or `None` when missing.
    pub source: Option<String>,
    /// The pin it satisfies.
    pub pin: Option<String>,
    /// The rustc executable.
    pub rustc: Option<String>,
    /// The release as `rustc -vV` writes it.
    pub release_text: Option<String>,
    /// The release number.
    pub release: Option<Release>,
    /// The channel's name.
    pub channel: Option<String>,
    /// The commit date.
    pub commit_date: Option<String>,
    /// The host triple.
    pub host: Option<String>,
    /// Whether it can take part.
    pub verdict: ToolchainVerdict,
}

impl ToolchainEntry {
    /// The column header: the id, with the release if the id does not already say it.
    pub fn label(&self) -> String {
        match &self.release_text {
            Some(release) if release != &self.id && !self.id.ends_with(release.as_str()) => {
                format!("{} ({release})", self.id)
            }
            _ => self.id.clone(),
        }
    }
}

/// What the probe found for one feature on one toolchain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Observed {
    /// The compiler's answer.
    Status(Status),
    /// The toolchain is missing or broken.
    NotProbed,
    /// The probe compilation failed in an unexpected way (the message says how).
    ProbeFailed(String),
}

impl Observed {
    fn word(&self) -> &'static str {
        match self {
            Observed::Status(status) => status.word(),
            Observed::NotProbed => "not-probed",
            Observed::ProbeFailed(_) => "probe-failed",
        }
    }

    fn cell(&self) -> String {
        match self {
            Observed::Status(status) => status.to_string(),
            Observed::NotProbed => "-".into(),
            Observed::ProbeFailed(_) => "probe failed".into(),
        }
    }
}

/// One feature on one toolchain.
#[derive(Clone, Debug)]
pub struct FeatureCell {
    /// What the compiler said.
    pub observed: Observed,
    /// What the catalog predicts; `None` where the cell is informational.
    pub expected: Option<Status>,
}

impl FeatureCell {
    /// Whether observation and prediction agree (an informational cell always does, unless
    /// its probe failed).
    pub fn ok(&self) -> bool {
        match (&self.observed, self.expected) {
            (Observed::Status(observed), Some(expected)) => *observed == expected,
            (Observed::ProbeFailed(_), _) => false,
            (_, None) => true,
            (Observed::NotProbed, Some(_)) => false,
        }
    }
}

/// One build or test on one toolchain in one mode.
#[derive(Clone, Debug)]
pub struct BuildCell {
    /// The index of the toolchain.
    pub toolchain: usize,
    /// `kernel` or an example's name.
    pub target: String,
    /// The mode.
    pub mode: Mode,
    /// Build or test.
    pub kind: Kind,
    /// What happened.
    pub outcome: Outcome,
    /// What the catalog predicts.
    pub expected: Outcome,
    /// The first error line, for failures and skips.
    pub first_error: Option<String>,
    /// Seconds of the run that produced the result.
    pub seconds: f64,
    /// Whether the result came from the cache.
    pub cached: bool,
    /// Passed, failed, ignored tests.
    pub tests: Option<(u64, u64, u64)>,
}

impl BuildCell {
    /// Whether the outcome is the predicted one.
    pub fn ok(&self) -> bool {
        self.outcome == self.expected
    }
}

/// One difference between the compilers and the catalog, as printed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The toolchain's id.
    pub toolchain: String,
    /// Which cell: `feature inline_const`, `build rust_minimal (kernel)`, `toolchain`.
    pub cell: String,
    /// What the catalog predicted.
    pub expected: String,
    /// What happened.
    pub observed: String,
    /// The compiler's first error line, if there is one.
    pub first_error: Option<String>,
}

/// Everything one matrix run found.
#[derive(Clone, Debug)]
pub struct Report {
    /// The toolchain columns.
    pub toolchains: Vec<ToolchainEntry>,
    /// Per catalog feature (catalog order), one cell per toolchain.
    pub features: Vec<Vec<FeatureCell>>,
    /// Every build and test cell.
    pub builds: Vec<BuildCell>,
    /// Whether missing pins count as failures.
    pub strict: bool,
    /// `K/N` when the run was one shard.
    pub shard: Option<String>,
}

impl Report {
    /// Every difference, in the order the tables show them.
    pub fn failures(&self) -> Vec<Failure> {
        let mut failures = Vec::new();
        for toolchain in &self.toolchains {
            let failed = match &toolchain.verdict {
                ToolchainVerdict::Broken(message) => Some(("ok", "broken", message.clone())),
                ToolchainVerdict::Missing(hint) if self.strict => {
                    Some(("found", "missing", hint.clone()))
                }
                _ => None,
            };
            if let Some((expected, observed, message)) = failed {
                failures.push(Failure {
                    toolchain: toolchain.id.clone(),
                    cell: "toolchain".into(),
                    expected: expected.into(),
                    observed: observed.into(),
                    first_error: Some(message),
                });
            }
        }
        for (feature, cells) in FEATURES.iter().zip(&self.features) {
            for (toolchain, cell) in self.toolchains.iter().zip(cells) {
                if cell.ok() {
                    continue;
                }
                failures.push(Failure {
                    toolchain: toolchain.id.clone(),
                    cell: format!("feature {}", feature.name),
                    expected: cell
                        .expected
                        .map_or_else(|| "-".to_string(), |status| status.to_string()),
                    observed: cell.observed.cell(),
                    first_error: match &cell.observed {
                        Observed::ProbeFailed(error) => Some(error.clone()),
                        _ => None,
                    },
                });
            }
        }
        for build in self.builds.iter().filter(|build| !build.ok()) {
            failures.push(Failure {
                toolchain: self.toolchains[build.toolchain].id.clone(),
                cell: format!(
                    "{} {} ({})",
                    build.kind.word(),
                    build.target,
                    build.mode.word()
                ),
                expected: build.expected.word().into(),
                observed: build.outcome.word().into(),
                first_error: build.first_error.clone(),
            });
        }
        failures
    }

    /// Success when nothing differs.
    pub fn verdict(&self) -> crate::Verdict {
        if self.failures().is_empty() {
            crate::Verdict::Success
        } else {
            crate::Verdict::Failure
        }
    }

    fn builds_of(&self, toolchain: usize) -> impl Iterator<Item = &BuildCell> {
        self.builds
            .iter()
            .filter(move |build| build.toolchain == toolchain)
    }

    /// One line per toolchain: "1.85.0: 8 of 14 features stable; kernel mode still needs
    /// RUSTC_BOOTSTRAP for 3 (...); 52 of 52 builds and tests pass".
    pub fn summary_line(&self, index: usize) -> String {
        let toolchain = &self.toolchains[index];
        let label = toolchain.label();
        let observed: Vec<Option<Status>> = self
            .features
            .iter()
            .map(|cells| match cells[index].observed {
                Observed::Status(status) => Some(status),
                _ => None,
            })
            .collect();
        let stable = observed
            .iter()
            .filter(|status| matches!(status, Some(Status::Stable(_))))
            .count();
        let probe = if observed.iter().all(Option::is_some) {
            format!("{stable} of {} features stable", FEATURES.len())
        } else {
            "the probe failed".to_string()
        };
        match (&toolchain.verdict, toolchain.release) {
            (ToolchainVerdict::Ok, Some(release)) => {
                let still_gated: Vec<&str> = enabled_in_kernel_mode(release)
                    .into_iter()
                    .filter(|feature| {
                        let index = FEATURES
                            .iter()
                            .position(|candidate| candidate.name == feature.name);
                        !matches!(
                            index.and_then(|index| observed[index]),
                            Some(Status::Stable(_))
                        )
                    })
                    .map(|feature| feature.name)
                    .collect();
                let bootstrap = match still_gated.len() {
                    0 => "kernel mode no longer needs RUSTC_BOOTSTRAP".to_string(),
                    count => format!(
                        "kernel mode still needs RUSTC_BOOTSTRAP for {count} ({})",
                        still_gated.join(", ")
                    ),
                };
                let builds: Vec<&BuildCell> = self.builds_of(index).collect();
                let passed = builds
                    .iter()
                    .filter(|build| build.outcome == Outcome::Pass)
                    .count();
                let unit_tests: u64 = builds
                    .iter()
                    .filter_map(|build| build.tests)
                    .map(|(passed, _, _)| passed)
                    .sum();
                format!(
                    "{label}: {probe}; {bootstrap}; {passed} of {} builds, runs and test runs pass ({unit_tests} tests passed)",
                    builds.len()
                )
            }
            (ToolchainVerdict::TooOld, _) => {
                let unknown = observed
                    .iter()
                    .filter(|status| matches!(status, Some(Status::Unknown)))
                    .count();
                format!(
                    "{label}: below the minimum ({MINIMUM_RELEASE}), builds skipped; for information, {probe}, {unknown} unknown to it"
                )
            }
            (verdict, _) => format!("{label}: {}", verdict.describe()),
        }
    }

    /// The report as JSON, in the layout documented at the top of this module.
    pub fn to_json(&self) -> Value {
        let string = |text: &str| Value::String(text.to_string());
        let release = |release: Option<Release>| json::opt_string(release.map(|r| r.to_string()));
        let toolchains = self
            .toolchains
            .iter()
            .enumerate()
            .map(|(index, toolchain)| {
                let error = match &toolchain.verdict {
                    ToolchainVerdict::Ok => None,
                    ToolchainVerdict::TooOld => Some(toolchain.verdict.describe()),
                    ToolchainVerdict::Broken(message) | ToolchainVerdict::Missing(message) => {
                        Some(message.clone())
                    }
                };
                json::object(vec![
                    ("id".into(), string(&toolchain.id)),
                    ("spec".into(), string(&toolchain.spec)),
                    ("source".into(), json::opt_string(toolchain.source.clone())),
                    ("pin".into(), json::opt_string(toolchain.pin.clone())),
                    ("rustc".into(), json::opt_string(toolchain.rustc.clone())),
                    (
                        "release".into(),
                        json::opt_string(toolchain.release_text.clone()),
                    ),
                    (
                        "channel".into(),
                        json::opt_string(toolchain.channel.clone()),
                    ),
                    (
                        "commit_date".into(),
                        json::opt_string(toolchain.commit_date.clone()),
                    ),
                    ("host".into(), json::opt_string(toolchain.host.clone())),
                    ("verdict".into(), string(toolchain.verdict.word())),
                    ("error".into(), json::opt_string(error)),
                    ("summary".into(), string(&self.summary_line(index))),
                ])
            })
            .collect();
        let features = FEATURES
            .iter()
            .zip(&self.features)
            .map(|(feature, cells)| {
                let per_toolchain = self
                    .toolchains
                    .iter()
                    .zip(cells)
                    .map(|(toolchain, cell)| {
                        let observed_since = match cell.observed {
                            Observed::Status(status) => status.stable_since(),
                            _ => None,
                        };
                        (
                            toolchain.id.clone(),
                            json::object(vec![
                                ("observed".into(), string(cell.observed.word())),
                                ("stable_since".into(), release(observed_since)),
                                (
                                    "expected".into(),
                                    json::opt_string(cell.expected.map(|status| status.word())),
                                ),
                                (
                                    "expected_stable_since".into(),
                                    release(cell.expected.and_then(Status::stable_since)),
                                ),
                                ("ok".into(), Value::Bool(cell.ok())),
                            ]),
                        )
                    })
                    .collect();
                json::object(vec![
                    ("name".into(), string(feature.name)),
                    ("catalog_stable_since".into(), release(feature.stable_since)),
                    ("toolchains".into(), Value::Object(per_toolchain)),
                ])
            })
            .collect();
        let builds = self
            .builds
            .iter()
            .map(|build| {
                json::object(vec![
                    (
                        "toolchain".into(),
                        string(&self.toolchains[build.toolchain].id),
                    ),
                    ("target".into(), string(&build.target)),
                    ("mode".into(), string(build.mode.word())),
                    ("kind".into(), string(build.kind.word())),
                    ("outcome".into(), string(build.outcome.word())),
                    ("expected".into(), string(build.expected.word())),
                    ("ok".into(), Value::Bool(build.ok())),
                    (
                        "first_error".into(),
                        json::opt_string(build.first_error.clone()),
                    ),
                    (
                        "seconds".into(),
                        Value::from((build.seconds * 1000.0).round() / 1000.0),
                    ),
                    ("cached".into(), Value::Bool(build.cached)),
                    (
                        "tests".into(),
                        build
                            .tests
                            .map_or(Value::Null, |(passed, failed, ignored)| {
                                json::object(vec![
                                    ("passed".into(), Value::from(passed)),
                                    ("failed".into(), Value::from(failed)),
                                    ("ignored".into(), Value::from(ignored)),
                                ])
                            }),
                    ),
                ])
            })
            .collect();
        let failures = self
            .failures()
            .into_iter()
            .map(|failure| {
                json::object(vec![
                    ("toolchain".into(), Value::String(failure.toolchain)),
                    ("cell".into(), Value::String(failure.cell)),
                    ("expected".into(), Value::String(failure.expected)),
                    ("observed".into(), Value::String(failure.observed)),
                    ("first_error".into(), json::opt_string(failure.first_error)),
                ])
            })
            .collect();
        let verdict = match self.verdict() {
            crate::Verdict::Success => "success",
            crate::Verdict::Failure => "failure",
        };
        json::object(vec![
            ("schema".into(), Value::from(SCHEMA_VERSION)),
            (
                "minimum_release".into(),
                string(&MINIMUM_RELEASE.to_string()),
            ),
            ("strict".into(), Value::Bool(self.strict)),
            ("shard".into(), json::opt_string(self.shard.clone())),
            ("verdict".into(), string(verdict)),
            ("toolchains".into(), Value::Array(toolchains)),
            ("features".into(), Value::Array(features)),
            ("builds".into(), Value::Array(builds)),
            ("failures".into(), Value::Array(failures)),
        ])
    }

    /// Reads a report file that `cargo xtask matrix --format json` wrote.
    pub fn read(path: &std::path::Path) -> anyhow::Result<Report> {
        use anyhow::Context as _;
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the report {}", path.display()))?;
        let value = json::parse(&text).map_err(|error| {
            anyhow::anyhow!(
                "{} is not a matrix report (written by `cargo xtask matrix --format json`): {error}",
                path.display()
            )
        })?;
        Report::from_json(&value)
            .map_err(|error| anyhow::anyhow!("{} is not a matrix report: {error}", path.display()))
    }

    /// Reads a report back from its JSON (what [`Report::to_json`] wrote), for `merge` and `docs`.
    ///
    /// The report must have this schema and this catalog's features, in catalog order. What
    /// the JSON does not keep is recomputed: the verdict, the failures and the summaries.
    pub fn from_json(value: &Value) -> Result<Report, String> {
        fn field<'a>(value: &'a Value, key: &str, what: &str) -> Result<&'a Value, String> {
            value
                .get(key)
                .ok_or_else(|| format!("{what} has no `{key}`"))
        }
        fn text<'a>(value: &'a Value, key: &str, what: &str) -> Result<&'a str, String> {
            field(value, key, what)?
                .as_str()
                .ok_or_else(|| format!("{what}: `{key}` is not a string"))
        }
        fn optional(value: &Value, key: &str, what: &str) -> Result<Option<String>, String> {
            match field(value, key, what)? {
                Value::Null => Ok(None),
                Value::String(text) => Ok(Some(text.clone())),
                _ => Err(format!("{what}: `{key}` is neither a string nor null")),
            }
        }
        fn array<'a>(value: &'a Value, key: &str, what: &str) -> Result<&'a [Value], String> {
            field(value, key, what)?
                .as_array()
                .map(Vec::as_slice)
                .ok_or_else(|| format!("{what}: `{key}` is not an array"))
        }
        fn release(text: Option<String>, what: &str) -> Result<Option<Release>, String> {
            text.map(|text| {
                crate::version::parse_release(&text)
                    .map(|(release, _)| release)
                    .map_err(|error| format!("{what}: {error}"))
            })
            .transpose()
        }
        fn status(
            word: Option<String>,
            since: Option<Release>,
            what: &str,
        ) -> Result<Option<Status>, String> {
            match word {
                None => Ok(None),
                Some(word) => Status::from_parts(&word, since)
                    .map(Some)
                    .ok_or_else(|| format!("{what}: unknown status `{word}`")),
            }
        }

        let schema = field(value, "schema", "the report")?.as_u64();
        if schema != Some(u64::from(SCHEMA_VERSION)) {
            return Err(format!(
                "the report has schema {}, this xtask reads schema {SCHEMA_VERSION}",
                schema.map_or_else(|| "?".to_string(), |schema| schema.to_string())
            ));
        }
        let failures = array(value, "failures", "the report")?;
        let mut toolchains = Vec::new();
        for (index, entry) in array(value, "toolchains", "the report")?.iter().enumerate() {
            let what = format!("toolchains[{index}]");
            let id = text(entry, "id", &what)?.to_string();
            let error = optional(entry, "error", &what)?;
            let verdict = match text(entry, "verdict", &what)? {
                "ok" => ToolchainVerdict::Ok,
                "too-old" => ToolchainVerdict::TooOld,
                "broken" => ToolchainVerdict::Broken(error.unwrap_or_default()),
                "missing" => ToolchainVerdict::Missing(error.unwrap_or_default()),
                other => return Err(format!("{what}: unknown verdict `{other}`")),
            };
            let release_text = optional(entry, "release", &what)?;
            // A missing pin's release is what the pin file asks for, not a compiler's.
            let release = match verdict {
                ToolchainVerdict::Missing(_) => None,
                _ => release(release_text.clone(), &what)?,
            };
            toolchains.push(ToolchainEntry {
                id,
                spec: text(entry, "spec", &what)?.to_string(),
                source: optional(entry, "source", &what)?,
                pin: optional(entry, "pin", &what)?,
                rustc: optional(entry, "rustc", &what)?,
                release_text,
                release,
                channel: optional(entry, "channel", &what)?,
                commit_date: optional(entry, "commit_date", &what)?,
                host: optional(entry, "host", &what)?,
                verdict,
            });
        }
        let index_of = |id: &str, what: &str| {
            toolchains
                .iter()
                .position(|toolchain| toolchain.id == id)
                .ok_or_else(|| format!("{what}: no toolchain `{id}` in the report"))
        };

        let entries = array(value, "features", "the report")?;
        let names: Vec<&str> = entries
            .iter()
            .map(|entry| entry.get("name").and_then(Value::as_str).unwrap_or("?"))
            .collect();
        let catalog: Vec<&str> = FEATURES.iter().map(|feature| feature.name).collect();
        if names != catalog {
            return Err(format!(
                "the report's features ({}) are not this catalog's ({}): it was made from another \
                 version of kernel-shim/src/catalog.rs",
                names.join(", "),
                catalog.join(", ")
            ));
        }
        let mut features = Vec::new();
        for (feature, entry) in FEATURES.iter().zip(entries) {
            let cells_value = field(entry, "toolchains", feature.name)?;
            let mut cells = Vec::new();
            for toolchain in &toolchains {
                let what = format!("feature {} on {}", feature.name, toolchain.id);
                let cell = field(cells_value, &toolchain.id, &what)?;
                let observed_since = release(optional(cell, "stable_since", &what)?, &what)?;
                let observed = match text(cell, "observed", &what)? {
                    "not-probed" => Observed::NotProbed,
                    "probe-failed" => {
                        // The message is kept in the failure list, which names the cell.
                        let cell_name = format!("feature {}", feature.name);
                        let message = failures
                            .iter()
                            .find(|failure| {
                                failure.get("toolchain").and_then(Value::as_str)
                                    == Some(toolchain.id.as_str())
                                    && failure.get("cell").and_then(Value::as_str)
                                        == Some(cell_name.as_str())
                            })
                            .and_then(|failure| failure.get("first_error"))
                            .and_then(Value::as_str)
                            .unwrap_or("the probe failed")
                            .to_string();
                        Observed::ProbeFailed(message)
                    }
                    word => Observed::Status(
                        status(Some(word.to_string()), observed_since, &what)?
                            .ok_or_else(|| format!("{what}: no status"))?,
                    ),
                };
                let expected_since =
                    release(optional(cell, "expected_stable_since", &what)?, &what)?;
                let expected = status(optional(cell, "expected", &what)?, expected_since, &what)?;
                cells.push(FeatureCell { observed, expected });
            }
            features.push(cells);
        }

        let mut builds = Vec::new();
        for (index, build) in array(value, "builds", "the report")?.iter().enumerate() {
            let what = format!("builds[{index}]");
            let word = |key: &str| text(build, key, &what);
            let outcome = |key: &str| -> Result<Outcome, String> {
                let word = word(key)?;
                Outcome::from_word(word).ok_or_else(|| format!("{what}: unknown outcome `{word}`"))
            };
            let mode = word("mode")?;
            let kind = word("kind")?;
            let tests = match field(build, "tests", &what)? {
                Value::Null => None,
                counts => {
                    let count = |key: &str| {
                        counts
                            .get(key)
                            .and_then(Value::as_u64)
                            .ok_or_else(|| format!("{what}: tests.{key} is not a count"))
                    };
                    Some((count("passed")?, count("failed")?, count("ignored")?))
                }
            };
            builds.push(BuildCell {
                toolchain: index_of(word("toolchain")?, &what)?,
                target: word("target")?.to_string(),
                mode: Mode::ALL
                    .into_iter()
                    .find(|candidate| candidate.word() == mode)
                    .ok_or_else(|| format!("{what}: unknown mode `{mode}`"))?,
                kind: [Kind::Probe, Kind::Build, Kind::Run, Kind::Test]
                    .into_iter()
                    .find(|candidate| candidate.word() == kind)
                    .ok_or_else(|| format!("{what}: unknown kind `{kind}`"))?,
                outcome: outcome("outcome")?,
                expected: outcome("expected")?,
                first_error: optional(build, "first_error", &what)?,
                seconds: field(build, "seconds", &what)?
                    .as_f64()
                    .ok_or_else(|| format!("{what}: `seconds` is not a number"))?,
                cached: field(build, "cached", &what)?
                    .as_bool()
                    .ok_or_else(|| format!("{what}: `cached` is not a boolean"))?,
                tests,
            });
        }
        Ok(Report {
            toolchains,
            features,
            builds,
            strict: field(value, "strict", "the report")?
                .as_bool()
                .ok_or("the report: `strict` is not a boolean")?,
            shard: optional(value, "shard", "the report")?,
        })
    }

    /// The feature table and the build-and-test table, as rows of cells; a cell's flag says
    /// whether it differs from the prediction.
    ///
    /// Missing toolchains have no column: their summary line says how to install them.
    fn tables(&self) -> (Table, Table) {
        let shown: Vec<usize> = (0..self.toolchains.len())
            .filter(|&index| {
                !matches!(self.toolchains[index].verdict, ToolchainVerdict::Missing(_))
            })
            .collect();
        let headers: Vec<String> = shown
            .iter()
            .map(|&index| self.toolchains[index].label())
            .collect();
        let mut features = Table::new("feature", &headers);
        for (feature, cells) in FEATURES.iter().zip(&self.features) {
            features.rows.push((
                feature.name.to_string(),
                shown
                    .iter()
                    .map(|&index| (cells[index].observed.cell(), !cells[index].ok()))
                    .collect(),
            ));
        }
        let mut builds = Table::new("build / run / test (kernel mode / stable mode)", &headers);
        let mut row_keys: Vec<(String, Kind)> = Vec::new();
        for build in &self.builds {
            let key = (build.target.clone(), build.kind);
            if !row_keys.contains(&key) {
                row_keys.push(key);
            }
        }
        for (target, kind) in row_keys {
            let cells = shown
                .iter()
                .map(|&index| {
                    let cell = |mode: Mode| {
                        self.builds.iter().find(|build| {
                            build.toolchain == index
                                && build.target == target
                                && build.kind == kind
                                && build.mode == mode
                        })
                    };
                    let word = |build: Option<&BuildCell>| match build.map(|build| build.outcome) {
                        Some(Outcome::Pass) => "pass",
                        Some(Outcome::Fail) => "FAIL",
                        Some(Outcome::Skipped) => "skip",
                        None => "-",
                    };
                    let (kernel, stable) = (cell(Mode::Kernel), cell(Mode::Stable));
                    let differs = [kernel, stable]
                        .iter()
                        .any(|build| build.is_some_and(|build| !build.ok()));
                    (format!("{}/{}", word(kernel), word(stable)), differs)
                })
                .collect();
            builds
                .rows
                .push((format!("{} {}", kind.word(), target), cells));
        }
        (features, builds)
    }

    /// The tables, the failures and the summary lines for a terminal or a log.
    pub fn human(&self, colour: bool) -> String {
        let (features, builds) = self.tables();
        let mut out = String::new();
        features.render_text(&mut out, colour);
        out.push('\n');
        builds.render_text(&mut out, colour);
        out.push_str("\n`!` marks a cell that differs from the catalog's prediction.\n");
        let failures = self.failures();
        if !failures.is_empty() {
            let _ = writeln!(out, "\n{} failure(s):", failures.len());
            for failure in &failures {
                let _ = writeln!(out, "  {}", paint_red(&failure_line(failure), colour));
            }
        }
        out.push('\n');
        for index in 0..self.toolchains.len() {
            let _ = writeln!(out, "{}", self.summary_line(index));
        }
        out
    }

    /// The same tables, failures and summaries as Markdown.
    pub fn markdown(&self) -> String {
        let (features, builds) = self.tables();
        let mut out = String::from("## Features\n\n");
        features.render_markdown(&mut out);
        out.push_str("\n## Builds, runs and tests (kernel mode / stable mode)\n\n");
        builds.render_markdown(&mut out);
        out.push_str("\n`!` marks a cell that differs from the catalog's prediction.\n");
        let failures = self.failures();
        if !failures.is_empty() {
            out.push_str("\n## Failures\n\n");
            for failure in &failures {
                let _ = writeln!(out, "- {}", failure_line(failure).replace('|', "\\|"));
            }
        }
        out.push_str("\n## Summary\n\n");
        for index in 0..self.toolchains.len() {
            let _ = writeln!(out, "- {}", self.summary_line(index));
        }
        out
    }
}

/// A failure as one line: toolchain, cell, expected, observed, first error.
pub fn failure_line(failure: &Failure) -> String {
    let mut line = format!(
        "{}: {}: expected {}, observed {}",
        failure.toolchain, failure.cell, failure.expected, failure.observed
    );
    if let Some(error) = &failure.first_error {
        // One failure, one line: a multi-line message (a broken compiler's output) is joined.
        let error: Vec<&str> = error
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .collect();
        let _ = write!(line, ": {}", error.join(" | "));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expect::expected_status;

    fn toolchain(id: &str, release: &str, verdict: ToolchainVerdict) -> ToolchainEntry {
        ToolchainEntry {
            id: id.into(),
            spec: format!("rustup:{id}"),
            source: Some("rustup".into()),
            pin: Some(id.into()),
            rustc: Some(format!("/toolchains/{id}/bin/rustc")),
            release_text: Some(release.into()),
            release: Release::parse(release),
            channel: Some("stable".into()),
            commit_date: Some("2025-02-17".into()),
            host: Some("x86_64-unknown-linux-gnu".into()),
            verdict,
        }
    }

    /// A report for 1.85.0 where the compiler agrees with the catalog except that it calls
    /// `asm_goto` stable since 1.86.0, and one example fails in kernel mode.
    fn sample() -> Report {
        let release = Release::new(1, 85, 0);
        let features = FEATURES
            .iter()
            .map(|feature| {
                let expected = expected_status(feature, release);
                let observed = if feature.name == "asm_goto" {
                    Status::Stable(Release::new(1, 86, 0))
                } else {
                    expected
                };
                vec![
                    FeatureCell {
                        observed: Observed::Status(observed),
                        expected: Some(expected),
                    },
                    FeatureCell {
                        observed: Observed::NotProbed,
                        expected: None,
                    },
                ]
            })
            .collect();
        let build = |target: &str, mode, kind, outcome, first_error: Option<&str>| BuildCell {
            toolchain: 0,
            target: target.into(),
            mode,
            kind,
            outcome,
            expected: Outcome::Pass,
            first_error: first_error.map(String::from),
            seconds: 0.5,
            cached: false,
            tests: (kind == Kind::Test).then_some((3, 0, 0)),
        };
        Report {
            toolchains: vec![
                toolchain("1.85.0", "1.85.0", ToolchainVerdict::Ok),
                ToolchainEntry {
                    source: None,
                    rustc: None,
                    release_text: None,
                    release: None,
                    ..toolchain("1.78.0", "1.78.0", ToolchainVerdict::Missing("rustup toolchain install 1.78.0".into()))
                },
            ],
            features,
            builds: vec![
                build("kernel", Mode::Kernel, Kind::Build, Outcome::Pass, None),
                build("kernel", Mode::Stable, Kind::Build, Outcome::Pass, None),
                build(
                    "rust_asm_goto",
                    Mode::Kernel,
                    Kind::Build,
                    Outcome::Fail,
                    Some("error[E0658]: label operands are unstable (at examples/rust_asm_goto.rs:9:5)"),
                ),
                build("rust_asm_goto", Mode::Stable, Kind::Test, Outcome::Pass, None),
            ],
            strict: false,
            shard: None,
        }
    }

    #[test]
    fn failures_name_toolchain_cell_expected_observed_and_error() {
        let report = sample();
        let failures = report.failures();
        assert_eq!(failures.len(), 2, "{failures:#?}");
        assert_eq!(
            failure_line(&failures[0]),
            "1.85.0: feature asm_goto: expected gated, observed stable 1.86"
        );
        assert_eq!(
            failure_line(&failures[1]),
            "1.85.0: build rust_asm_goto (kernel): expected pass, observed fail: \
             error[E0658]: label operands are unstable (at examples/rust_asm_goto.rs:9:5)"
        );
        assert_eq!(report.verdict(), crate::Verdict::Failure);
        let strict = Report {
            strict: true,
            ..sample()
        };
        assert_eq!(strict.failures().len(), 3);
        assert_eq!(strict.failures()[0].observed, "missing");
    }

    #[test]
    fn a_broken_toolchain_fails_on_one_line() {
        let mut report = sample();
        report.toolchains[1].verdict = ToolchainVerdict::Broken(
            "cannot read `rustc -vV` output; it printed:\ngarbage\n".into(),
        );
        let failures = report.failures();
        assert_eq!(
            failure_line(&failures[0]),
            "1.78.0: toolchain: expected ok, observed broken: \
             cannot read `rustc -vV` output; it printed: | garbage"
        );
    }

    #[test]
    fn json_has_the_documented_shape() {
        let report = sample();
        let value = json::parse(&json::to_pretty(&report.to_json())).unwrap();
        assert_eq!(value.get("schema").and_then(Value::as_u64), Some(1));
        assert_eq!(
            value.get("verdict").and_then(Value::as_str),
            Some("failure")
        );
        let toolchains = value.get("toolchains").and_then(Value::as_array).unwrap();
        for key in [
            "id",
            "spec",
            "source",
            "pin",
            "rustc",
            "release",
            "channel",
            "commit_date",
            "host",
            "verdict",
            "error",
            "summary",
        ] {
            assert!(toolchains[0].get(key).is_some(), "toolchains[].{key}");
        }
        assert_eq!(
            toolchains[1].get("verdict").and_then(Value::as_str),
            Some("missing")
        );
        assert_eq!(
            toolchains[1].get("error").and_then(Value::as_str),
            Some("rustup toolchain install 1.78.0")
        );
        let features = value.get("features").and_then(Value::as_array).unwrap();
        assert_eq!(features.len(), FEATURES.len());
        let asm_goto = features
            .iter()
            .find(|feature| feature.get("name").and_then(Value::as_str) == Some("asm_goto"))
            .unwrap();
        let cell = asm_goto
            .get("toolchains")
            .and_then(|t| t.get("1.85.0"))
            .unwrap();
        assert_eq!(cell.get("observed").and_then(Value::as_str), Some("stable"));
        assert_eq!(
            cell.get("stable_since").and_then(Value::as_str),
            Some("1.86.0")
        );
        assert_eq!(cell.get("expected").and_then(Value::as_str), Some("gated"));
        assert_eq!(cell.get("ok").and_then(Value::as_bool), Some(false));
        let builds = value.get("builds").and_then(Value::as_array).unwrap();
        assert_eq!(builds.len(), 4);
        for key in [
            "toolchain",
            "target",
            "mode",
            "kind",
            "outcome",
            "expected",
            "ok",
            "first_error",
            "seconds",
            "cached",
            "tests",
        ] {
            assert!(builds[0].get(key).is_some(), "builds[].{key}");
        }
        assert_eq!(builds[2].get("ok").and_then(Value::as_bool), Some(false));
        assert_eq!(
            builds[3]
                .get("tests")
                .and_then(|t| t.get("passed"))
                .and_then(Value::as_u64),
            Some(3)
        );
        assert_eq!(
            value
                .get("failures")
                .and_then(Value::as_array)
                .map(Vec::len),
            Some(2)
        );
    }

    #[test]
    fn json_reads_back_into_the_same_report() {
        let mut report = sample();
        report.features[0][0].observed = Observed::ProbeFailed("error: rustc crashed".into());
        report.toolchains[1].verdict =
            ToolchainVerdict::Missing("rustup toolchain install 1.78.0".into());
        let json = report.to_json();
        let back = Report::from_json(&json::parse(&json::to_pretty(&json)).unwrap()).unwrap();
        assert_eq!(back.to_json(), json);
        assert_eq!(back.human(false), report.human(false));
        assert_eq!(back.verdict(), report.verdict());
        assert_eq!(
            back.features[0][0].observed,
            Observed::ProbeFailed("error: rustc crashed".into())
        );

        let Value::Object(mut members) = json.clone() else {
            unreachable!()
        };
        members.remove("builds");
        let error = Report::from_json(&Value::Object(members)).unwrap_err();
        assert_eq!(error, "the report has no `builds`");
        let error = Report::from_json(&Value::Array(vec![])).unwrap_err();
        assert_eq!(error, "the report has no `schema`");
    }

    #[test]
    fn tables_mark_differences_and_summaries_count() {
        let report = sample();
        let text = report.human(false);
        assert!(text.contains("stable 1.86 !"), "{text}");
        assert!(text.contains("FAIL/- !"), "{text}");
        assert!(text.contains("stable 1.79 "), "{text}");
        assert!(!text.contains('\x1b'));
        assert!(report.human(true).contains("\x1b[31m"));
        let summary = report.summary_line(0);
        assert!(
            summary.starts_with("1.85.0: 9 of 14 features stable; kernel mode still needs RUSTC_BOOTSTRAP for 2 (arbitrary_self_types, derive_coerce_pointee);"),
            "{summary}"
        );
        assert!(
            summary.contains("3 of 4 builds, runs and test runs pass"),
            "{summary}"
        );
        let markdown = report.markdown();
        assert!(
            markdown.contains("| `inline_const` | stable 1.79 |\n"),
            "{markdown}"
        );
        // The missing toolchain has no column, only its summary line.
        assert!(!markdown.contains("1.78.0 |"), "{markdown}");
        assert!(
            markdown.contains("- 1.78.0: missing; install it with: rustup toolchain install"),
            "{markdown}"
        );
        assert!(markdown.contains("**stable 1.86 !**"), "{markdown}");
    }
}
