// SPDX-License-Identifier: GPL-2.0
//! JSON: serde_json's untyped [`Value`], and the few helpers every reader and writer of the
//! reports, the cache and rustc's diagnostics shares.

pub use serde_json::{Map, Value};

/// Parses JSON text; the error says what is wrong and where.
pub fn parse(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|error| error.to_string())
}

/// A value written with two-space indentation and a final newline, as the reports are.
pub fn to_pretty(value: &Value) -> String {
    // Serializing a `Value` into a `Vec` cannot fail.
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// An object with these members; keys come out sorted, as serde_json keeps them.
pub fn object(members: Vec<(String, Value)>) -> Value {
    Value::Object(members.into_iter().collect())
}

/// A string, or `null` for `None`.
pub fn opt_string(text: Option<impl Into<String>>) -> Value {
    text.map_or(Value::Null, |text| Value::String(text.into()))
}

/// `text` as a JSON string literal, quotes included.
pub fn quote(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
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
    fn writes_the_reports_layout() {
        let value = object(vec![
            ("b".into(), Value::Array(vec![Value::from(1), Value::Null])),
            ("a".into(), opt_string(Some("x\u{1b}"))),
        ]);
        assert_eq!(
            to_pretty(&value),
            "{\n  \"a\": \"x\\u001b\",\n  \"b\": [\n    1,\n    null\n  ]\n}\n"
        );
        assert_eq!(quote("a\"b"), r#""a\"b""#);
    }
}
