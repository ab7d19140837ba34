// SPDX-License-Identifier: GPL-2.0
//! The target axis as the report's `platforms` member, and back.

use super::{CrossCell, KnownCell, Platforms, STAGES};
use crate::expect::Outcome;
use crate::json::{self, Value};
use crate::plan::Mode;
use crate::report::ToolchainEntry;

impl Platforms {
    /// The target axis as the report's `platforms` member, cells naming toolchains by id.
    pub fn to_json(&self, toolchains: &[ToolchainEntry]) -> Value {
        let id = |index: usize| {
            Value::String(
                toolchains
                    .get(index)
                    .map_or_else(String::new, |toolchain| toolchain.id.clone()),
            )
        };
        let known = |known: Option<bool>| known.map_or(Value::Null, Value::Bool);
        let sources = toolchains
            .iter()
            .enumerate()
            .map(|(index, toolchain)| {
                let value = match self.sources.get(index).cloned().flatten() {
                    None => Value::Null,
                    Some(Ok(identity)) => {
                        json::object(vec![("identity".into(), Value::String(identity))])
                    }
                    Some(Err(why)) => json::object(vec![("missing".into(), Value::String(why))]),
                };
                (toolchain.id.clone(), value)
            })
            .collect();
        json::object(vec![
            (
                "targets".into(),
                Value::Array(self.triples.iter().cloned().map(Value::String).collect()),
            ),
            ("sources".into(), Value::Object(sources)),
            (
                "known".into(),
                Value::Array(
                    self.known
                        .iter()
                        .map(|cell| {
                            json::object(vec![
                                ("toolchain".into(), id(cell.toolchain)),
                                ("target".into(), Value::String(cell.triple.clone())),
                                ("observed".into(), known(cell.observed)),
                                ("expected".into(), known(cell.expected)),
                                ("error".into(), json::opt_string(cell.error.clone())),
                                ("ok".into(), Value::Bool(cell.ok())),
                            ])
                        })
                        .collect(),
                ),
            ),
            (
                "cross".into(),
                Value::Array(
                    self.cross
                        .iter()
                        .map(|cell| {
                            json::object(vec![
                                ("toolchain".into(), id(cell.toolchain)),
                                ("target".into(), Value::String(cell.triple.clone())),
                                ("stage".into(), Value::String(cell.target.clone())),
                                ("kind".into(), Value::String(cell.kind.word().into())),
                                (
                                    "mode".into(),
                                    json::opt_string(cell.mode.map(|mode| mode.word())),
                                ),
                                ("outcome".into(), Value::String(cell.outcome.word().into())),
                                (
                                    "expected".into(),
                                    Value::String(cell.expected.word().into()),
                                ),
                                ("ok".into(), Value::Bool(cell.ok())),
                                (
                                    "first_error".into(),
                                    json::opt_string(cell.first_error.clone()),
                                ),
                                ("detail".into(), json::opt_string(cell.detail.clone())),
                                (
                                    "seconds".into(),
                                    Value::from((cell.seconds * 1000.0).round() / 1000.0),
                                ),
                                ("cached".into(), Value::Bool(cell.cached)),
                            ])
                        })
                        .collect(),
                ),
            ),
        ])
    }

    /// Reads the `platforms` member back; `index_of` turns a toolchain id into its column.
    pub fn from_json(
        value: &Value,
        toolchains: &[ToolchainEntry],
        index_of: &dyn Fn(&str, &str) -> Result<usize, String>,
    ) -> Result<Platforms, String> {
        let what = "the report's platforms";
        let member = |value: &'_ Value, key: &str, what: &str| -> Result<Value, String> {
            value
                .get(key)
                .cloned()
                .ok_or_else(|| format!("{what} has no `{key}`"))
        };
        let text = |value: &Value, key: &str, what: &str| -> Result<String, String> {
            member(value, key, what)?
                .as_str()
                .map(String::from)
                .ok_or_else(|| format!("{what}: `{key}` is not a string"))
        };
        let optional = |value: &Value, key: &str, what: &str| -> Result<Option<String>, String> {
            match member(value, key, what)? {
                Value::Null => Ok(None),
                Value::String(text) => Ok(Some(text)),
                _ => Err(format!("{what}: `{key}` is neither a string nor null")),
            }
        };
        let known = |value: &Value, key: &str, what: &str| -> Result<Option<bool>, String> {
            match member(value, key, what)? {
                Value::Null => Ok(None),
                Value::Bool(known) => Ok(Some(known)),
                _ => Err(format!("{what}: `{key}` is neither a boolean nor null")),
            }
        };
        let array = |value: &Value, key: &str, what: &str| -> Result<Vec<Value>, String> {
            match member(value, key, what)? {
                Value::Array(items) => Ok(items),
                _ => Err(format!("{what}: `{key}` is not an array")),
            }
        };
        let outcome = |value: &Value, key: &str, what: &str| -> Result<Outcome, String> {
            let word = text(value, key, what)?;
            Outcome::from_word(&word).ok_or_else(|| format!("{what}: unknown outcome `{word}`"))
        };
        let mut platforms = Platforms::default();
        for triple in array(value, "targets", what)? {
            platforms.triples.push(
                triple
                    .as_str()
                    .ok_or_else(|| format!("{what}: a target is not a string"))?
                    .to_string(),
            );
        }
        let sources = member(value, "sources", what)?;
        for toolchain in toolchains {
            platforms.sources.push(match sources.get(&toolchain.id) {
                None | Some(Value::Null) => None,
                Some(entry) => match (entry.get("identity"), entry.get("missing")) {
                    (Some(Value::String(identity)), None) => Some(Ok(identity.clone())),
                    (None, Some(Value::String(why))) => Some(Err(why.clone())),
                    _ => {
                        return Err(format!(
                            "{what}: the sources of `{}` are neither an identity nor a reason",
                            toolchain.id
                        ))
                    }
                },
            });
        }
        for (index, cell) in array(value, "known", what)?.iter().enumerate() {
            let what = format!("{what}: known[{index}]");
            let parsed = KnownCell {
                toolchain: index_of(&text(cell, "toolchain", &what)?, &what)?,
                triple: text(cell, "target", &what)?,
                observed: known(cell, "observed", &what)?,
                expected: known(cell, "expected", &what)?,
                error: optional(cell, "error", &what)?,
            };
            if member(cell, "ok", &what)?.as_bool() != Some(parsed.ok()) {
                return Err(format!("{what}: `ok` does not match its cells"));
            }
            platforms.known.push(parsed);
        }
        for (index, cell) in array(value, "cross", what)?.iter().enumerate() {
            let what = format!("{what}: cross[{index}]");
            let stage = text(cell, "stage", &what)?;
            let (_, kind, _) = STAGES
                .iter()
                .find(|(target, _, _)| *target == stage)
                .copied()
                .ok_or_else(|| format!("{what}: unknown stage `{stage}`"))?;
            let mode = match optional(cell, "mode", &what)? {
                None => None,
                Some(word) => Some(
                    Mode::ALL
                        .into_iter()
                        .find(|mode| mode.word() == word)
                        .ok_or_else(|| format!("{what}: unknown mode `{word}`"))?,
                ),
            };
            let parsed = CrossCell {
                toolchain: index_of(&text(cell, "toolchain", &what)?, &what)?,
                triple: text(cell, "target", &what)?,
                target: stage,
                kind,
                mode,
                outcome: outcome(cell, "outcome", &what)?,
                expected: outcome(cell, "expected", &what)?,
                first_error: optional(cell, "first_error", &what)?,
                detail: optional(cell, "detail", &what)?,
                seconds: member(cell, "seconds", &what)?
                    .as_f64()
                    .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
                    .ok_or_else(|| format!("{what}: `seconds` is not a number of seconds"))?,
                cached: member(cell, "cached", &what)?
                    .as_bool()
                    .ok_or_else(|| format!("{what}: `cached` is not a boolean"))?,
            };
            if member(cell, "ok", &what)?.as_bool() != Some(parsed.ok()) {
                return Err(format!("{what}: `ok` does not match its cells"));
            }
            platforms.cross.push(parsed);
        }
        platforms.check(toolchains.len())?;
        Ok(platforms)
    }
}
