// SPDX-License-Identifier: GPL-2.0
//! JSON, the one layer every reader and writer of the reports and the cache goes through:
//! typed structs with serde's derive for the files the xtask writes and reads back, [`json!`]
//! for output nothing here reads (the audit's report), serde_json's untyped [`Value`] for what
//! others write (rustc's diagnostics, libtest's events).

pub use serde::{Deserialize, Serialize};
pub use serde_json::{json, Map, Value};

/// Parses JSON text; the error says what is wrong and where.
pub fn parse(text: &str) -> anyhow::Result<Value> {
    Ok(serde_json::from_str(text)?)
}

/// Reads JSON text as `T`; the error names the member that is missing or of the wrong type,
/// with its path from the top (`cells[2].cached: invalid type ...`), and the line and column.
pub fn read<T: serde::de::DeserializeOwned>(text: &str) -> anyhow::Result<T> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut deserializer)?;
    // Text after the value is refused, as `serde_json::from_str` does.
    deserializer.end()?;
    Ok(value)
}

/// Reads a [`Value`] as `T`, the error naming the member as [`read`]'s does (without a line).
pub fn read_value<T: serde::de::DeserializeOwned>(value: Value) -> anyhow::Result<T> {
    Ok(serde_path_to_error::deserialize(value)?)
}

/// A value as a [`Value`], whose objects keep their keys sorted, as the reports are written.
pub fn to_value(value: &impl Serialize) -> Value {
    // The xtask's types serialize without fail (their maps have string keys); only a path that
    // is not UTF-8 (a kept compiler answer's sysroot) would come out as null, and miss later.
    serde_json::to_value(value).unwrap_or_default()
}

/// A value written with two-space indentation and a final newline, as the reports are.
pub fn to_pretty(value: &Value) -> String {
    // `{:#}` is serde_json's pretty printer.
    format!("{value:#}\n")
}

/// For `#[serde(deserialize_with = "json::nullable")]` on an `Option` member: it may be null but
/// must be there (serde's derive reads a missing `Option` as `None`).
pub fn nullable<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::deserialize(deserializer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_json_does_not_allow() {
        for text in [
            "01",
            "1.",
            "-.5",
            r#""\u+041""#,
            "1e400",
            "[1,]",
            "{\"a\":1,}",
            "nul",
        ] {
            assert!(parse(text).is_err(), "{text}");
        }
        assert_eq!(parse(r#""\u0041""#).unwrap(), Value::String("A".into()));
        assert_eq!(parse("1e2").unwrap().as_f64(), Some(100.0));
    }

    #[test]
    fn a_typed_read_names_the_member_by_its_path() {
        #[derive(Debug, Deserialize)]
        struct Outer {
            #[allow(dead_code)]
            cells: Vec<Inner>,
        }
        #[derive(Debug, Deserialize)]
        struct Inner {
            #[allow(dead_code)]
            cached: bool,
        }
        let error = read::<Outer>(r#"{"cells": [{"cached": true}, {"cached": "no"}]}"#)
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "cells[1].cached: invalid type: string \"no\", expected a boolean at line 1 column 44"
        );
        let error = read::<Outer>(r#"{"cells": [{}]}"#).unwrap_err().to_string();
        assert_eq!(
            error,
            "cells[0]: missing field `cached` at line 1 column 13"
        );
        let error = read::<Outer>(r#"{"cells": []} []"#)
            .unwrap_err()
            .to_string();
        assert_eq!(error, "trailing characters at line 1 column 15");
    }

    #[test]
    fn writes_the_reports_layout() {
        let value = json!({ "b": [1, null], "a": "x\u{1b}" });
        assert_eq!(
            to_pretty(&value),
            "{\n  \"a\": \"x\\u001b\",\n  \"b\": [\n    1,\n    null\n  ]\n}\n"
        );
    }
}
