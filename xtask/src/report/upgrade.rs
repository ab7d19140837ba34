// SPDX-License-Identifier: GPL-2.0
//! Matrix reports of an older schema brought to the current one before they are read, one step
//! per version, so that the reports recorded before a member was renamed still read
//! (docs/matrix.md, "Older reports").

use super::SCHEMA_VERSION;
use crate::util::json::{Map, Value};
use anyhow::bail;

/// Step `i` turns a report of schema `OLDEST_SCHEMA + i` into one of the next schema.
const STEPS: [fn(&mut Map<String, Value>); 1] = [from_2];

/// The oldest schema still read.
pub const OLDEST_SCHEMA: u32 = SCHEMA_VERSION - STEPS.len() as u32;

/// The `schema` member of a report, if it is a number.
pub fn schema_of(report: &Value) -> Option<u64> {
    report.get("schema").and_then(Value::as_u64)
}

/// `report` at [`SCHEMA_VERSION`], through each step from its own schema; refused if its schema
/// is missing, newer, or older than every step.
pub fn upgrade(mut report: Value) -> anyhow::Result<Value> {
    let schema = schema_of(&report);
    let Some(from) = schema
        .filter(|schema| (u64::from(OLDEST_SCHEMA)..=u64::from(SCHEMA_VERSION)).contains(schema))
    else {
        bail!(
            "the report has schema {}, this xtask reads schemas {OLDEST_SCHEMA} to \
             {SCHEMA_VERSION}",
            schema.map_or_else(|| "?".to_string(), |schema| schema.to_string())
        )
    };
    let Value::Object(members) = &mut report else {
        unreachable!("only an object has a schema");
    };
    for step in &STEPS[(from - u64::from(OLDEST_SCHEMA)) as usize..] {
        step(members);
    }
    members.insert("schema".into(), SCHEMA_VERSION.into());
    Ok(report)
}

/// Schema 2 to 3: the target axis under the one name the code and the docs give it. The member
/// `platforms` became `targets`; in it, the run's kernel targets `targets` became `triples`,
/// and the `cross` cells `cells`. A member that is not there is left out; the typed reading
/// says so.
fn from_2(report: &mut Map<String, Value>) {
    let Some(mut axis) = report.remove("platforms") else {
        return;
    };
    if let Value::Object(axis) = &mut axis {
        for (old, new) in [("targets", "triples"), ("cross", "cells")] {
            if let Some(value) = axis.remove(old) {
                axis.insert(new.into(), value);
            }
        }
    }
    report.insert("targets".into(), axis);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::json::json;

    #[test]
    fn a_schema_2_report_has_its_target_axis_renamed_and_nothing_else() {
        let old = json!({
            "schema": 2,
            "builds": [{"target": "kernel"}],
            "platforms": {"targets": ["x86_64-unknown-none"], "cross": [{"stage": "core"}],
                          "known": [], "sources": {}},
        });
        let new = json!({
            "schema": 3,
            "builds": [{"target": "kernel"}],
            "targets": {"triples": ["x86_64-unknown-none"], "cells": [{"stage": "core"}],
                        "known": [], "sources": {}},
        });
        assert_eq!(SCHEMA_VERSION, 3, "a new schema needs its step here");
        assert_eq!(upgrade(old).unwrap(), new);
        assert_eq!(
            upgrade(new.clone()).unwrap(),
            new,
            "the current schema is kept"
        );
        for (report, schema) in [
            (json!({"schema": 1}), "1"),
            (json!({"schema": 4}), "4"),
            (json!({"schema": "3"}), "?"),
            (json!([]), "?"),
        ] {
            assert_eq!(
                upgrade(report).unwrap_err().to_string(),
                format!("the report has schema {schema}, this xtask reads schemas 2 to 3")
            );
        }
    }
}
