// SPDX-License-Identifier: GPL-2.0
//! The report as JSON and back, in the layout docs/matrix.md documents; reading checks every field,
//! so a damaged or foreign file is refused with what is wrong.

use super::kbuild::{kbuild_from_json, kbuild_to_json};
use super::platforms::Platforms;
use super::{BuildCell, FeatureCell, Observed, Report, ToolchainEntry, SCHEMA_VERSION};
use crate::catalog::{Release, FEATURES, MINIMUM_RELEASE};
use crate::expect::{Outcome, ToolchainVerdict};
use crate::json::{self, Value};
use crate::output::escape;
use crate::plan::{Kind, Mode};
use crate::status::Status;
use crate::toolchain::SourceKind;
use std::collections::HashMap;

/// The largest report file read: about two thousand toolchains' worth.
pub(super) const REPORT_LIMIT: u64 = 64 << 20;

impl Report {
    /// The report as JSON, in the layout documented at the top of this module.
    pub fn to_json(&self) -> Value {
        let string = |text: &str| Value::String(text.to_string());
        let release = |release: Option<Release>| json::opt_string(release.map(|r| r.to_string()));
        let summaries = self.summary_lines();
        let toolchains = self
            .toolchains
            .iter()
            .zip(summaries)
            .map(|(toolchain, summary)| {
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
                    (
                        "source".into(),
                        json::opt_string(toolchain.source.map(|kind| kind.word().to_string())),
                    ),
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
                    ("summary".into(), Value::String(summary)),
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
            (
                "kbuild".into(),
                kbuild_to_json(&self.kbuild, &self.toolchains),
            ),
            ("platforms".into(), self.platforms.to_json(&self.toolchains)),
            ("failures".into(), Value::Array(failures)),
        ])
    }

    /// Reads a report file that `cargo xtask matrix --format json` wrote.
    pub fn read(path: &std::path::Path) -> anyhow::Result<Report> {
        use anyhow::Context as _;
        let text = crate::files::read_text(path, REPORT_LIMIT)
            .with_context(|| format!("cannot read the report {}", path.display()))?;
        let value = json::parse(&text).map_err(|error| {
            anyhow::anyhow!(
                "{} is not a matrix report (written by `cargo xtask matrix --format json`): {error}",
                path.display()
            )
        })?;
        // The message may quote the file's own text.
        Report::from_json(&value).map_err(|error| {
            anyhow::anyhow!(
                "{} is not a matrix report: {}",
                path.display(),
                escape(&error)
            )
        })
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
                source: optional(entry, "source", &what)?
                    .map(|word| {
                        SourceKind::from_word(&word)
                            .ok_or_else(|| format!("{what}: unknown source `{word}`"))
                    })
                    .transpose()?,
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
        // Cells name their toolchain by id: two toolchains with one id would share cells.
        let mut positions: HashMap<&str, usize> = HashMap::with_capacity(toolchains.len());
        for (index, toolchain) in toolchains.iter().enumerate() {
            if let Some(first) = positions.insert(&toolchain.id, index) {
                return Err(format!(
                    "toolchains[{index}] has the id `{}` of toolchains[{first}]: every toolchain \
                     needs an id of its own",
                    escape(&toolchain.id)
                ));
            }
        }
        let index_of = |id: &str, what: &str| {
            positions
                .get(id)
                .copied()
                .ok_or_else(|| format!("{what}: no toolchain `{}` in the report", escape(id)))
        };
        // A failed probe's message is kept in the failure list, which names the cell.
        let mut failure_errors: HashMap<(&str, &str), &str> = HashMap::new();
        for failure in failures {
            let part = |key: &str| failure.get(key).and_then(Value::as_str);
            if let (Some(toolchain), Some(cell), Some(error)) =
                (part("toolchain"), part("cell"), part("first_error"))
            {
                failure_errors.entry((toolchain, cell)).or_insert(error);
            }
        }
        // The `ok` the file states must be what its cell says: a report edited into
        // contradiction is not trusted.
        let stated_ok = |entry: &Value, ok: bool, what: &str| -> Result<(), String> {
            match field(entry, "ok", what)?.as_bool() {
                Some(stated) if stated == ok => Ok(()),
                Some(stated) => Err(format!(
                    "{what}: `ok` is {stated}, but what was observed and what was expected say {ok}"
                )),
                None => Err(format!("{what}: `ok` is not a boolean")),
            }
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
                        let cell_name = format!("feature {}", feature.name);
                        let message = failure_errors
                            .get(&(toolchain.id.as_str(), cell_name.as_str()))
                            .copied()
                            .unwrap_or("the probe failed");
                        Observed::ProbeFailed(message.to_string())
                    }
                    word => Observed::Status(
                        status(Some(word.to_string()), observed_since, &what)?
                            .ok_or_else(|| format!("{what}: no status"))?,
                    ),
                };
                let expected_since =
                    release(optional(cell, "expected_stable_since", &what)?, &what)?;
                let expected = status(optional(cell, "expected", &what)?, expected_since, &what)?;
                let cell_read = FeatureCell { observed, expected };
                stated_ok(cell, cell_read.ok(), &what)?;
                cells.push(cell_read);
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
            let seconds = field(build, "seconds", &what)?
                .as_f64()
                .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
                .ok_or_else(|| format!("{what}: `seconds` is not a number of seconds"))?;
            let (outcome, expected) = (outcome("outcome")?, outcome("expected")?);
            stated_ok(build, outcome == expected, &what)?;
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
                outcome,
                expected,
                first_error: optional(build, "first_error", &what)?,
                seconds,
                cached: field(build, "cached", &what)?
                    .as_bool()
                    .ok_or_else(|| format!("{what}: `cached` is not a boolean"))?,
                tests,
            });
        }
        let platforms = Platforms::from_json(
            field(value, "platforms", "the report")?,
            &toolchains,
            &|id, what| index_of(id, what),
        )?;
        let kbuild = kbuild_from_json(value.get("kbuild"), &|id, what| index_of(id, what))?;
        let report = Report {
            platforms,
            toolchains,
            features,
            builds,
            strict: field(value, "strict", "the report")?
                .as_bool()
                .ok_or("the report: `strict` is not a boolean")?,
            kbuild,
            shard: optional(value, "shard", "the report")?,
        };
        let verdict = match report.verdict() {
            crate::Verdict::Success => "success",
            crate::Verdict::Failure => "failure",
        };
        let stated = text(value, "verdict", "the report")?;
        if stated != verdict {
            return Err(format!(
                "the report's verdict is `{}`, but its cells make it `{verdict}`",
                escape(stated)
            ));
        }
        Ok(report)
    }
}
