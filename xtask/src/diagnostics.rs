//! What rustc printed: its first error for a failure line, and whether its JSON diagnostics
//! hold an error.

/// The first error a failed rustc printed, with its location: `error[E0658]: ... (at
/// examples/x.rs:3:5)`.
pub fn first_rustc_error(stderr: &str) -> Option<String> {
    let mut lines = stderr.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("error") && !line.starts_with("error: aborting due to") {
            let location = lines
                .clone()
                .take(3)
                .find_map(|next| next.trim_start().strip_prefix("--> "));
            return Some(match location {
                Some(location) => format!("{line} (at {location})"),
                None => line.to_string(),
            });
        }
    }
    stderr
        .lines()
        .find(|line| !line.trim().is_empty())
        .map(str::to_string)
}

/// Whether rustc's JSON diagnostics on `stderr` include an error.
pub fn has_error_diagnostic(stderr: &str) -> bool {
    stderr.lines().any(|line| {
        line.starts_with('{')
            && crate::json::parse(line).is_ok_and(|diagnostic| {
                diagnostic.get("level").and_then(crate::json::Value::as_str) == Some("error")
            })
    })
}

/// The code and message of every error among rustc's JSON diagnostics on `stderr`, in order:
/// the code is rustc's (`E0636`) or, for a lint denied by default, the lint's name
/// (`duplicate_features`); an error with neither has an empty code.
pub fn error_diagnostics(stderr: &str) -> Vec<(String, String)> {
    use crate::json::Value;
    stderr
        .lines()
        .filter(|line| line.starts_with('{'))
        .filter_map(|line| crate::json::parse(line).ok())
        .filter(|diagnostic| diagnostic.get("level").and_then(Value::as_str) == Some("error"))
        .map(|diagnostic| {
            let code = diagnostic
                .get("code")
                .and_then(|code| code.get("code"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let message = diagnostic
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default();
            (code.to_string(), message.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_diagnostics_name_codes_and_lints() {
        let stderr = concat!(
            r#"{"$message_type":"diagnostic","message":"the feature `a` has already been enabled","code":{"code":"duplicate_features","explanation":null},"level":"error","spans":[],"children":[],"rendered":""}"#,
            "\n",
            r#"{"$message_type":"diagnostic","message":"not allowed","code":{"code":"E0725","explanation":""},"level":"error","spans":[],"children":[],"rendered":""}"#,
            "\n",
            r#"{"$message_type":"diagnostic","message":"aborting due to 2 previous errors","code":null,"level":"error","spans":[],"children":[],"rendered":""}"#,
            "\nnot json\n",
        );
        assert_eq!(
            error_diagnostics(stderr),
            [
                (
                    "duplicate_features".to_string(),
                    "the feature `a` has already been enabled".to_string()
                ),
                ("E0725".to_string(), "not allowed".to_string()),
                (
                    String::new(),
                    "aborting due to 2 previous errors".to_string()
                ),
            ]
        );
    }

    #[test]
    fn finds_the_first_rustc_error_and_its_place() {
        let stderr = "warning: unused\n --> a.rs:1:1\n\
            error[E0658]: use of unstable library feature\n  --> examples/x.rs:3:5\n   |\n\
            error: aborting due to 1 previous error\n";
        assert_eq!(
            first_rustc_error(stderr).unwrap(),
            "error[E0658]: use of unstable library feature (at examples/x.rs:3:5)"
        );
    }
}
