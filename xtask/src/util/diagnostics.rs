// SPDX-License-Identifier: GPL-2.0
//! What rustc printed: its first error for a failure line, the errors among its JSON
//! diagnostics, and which files its errors name.

use crate::util::json::Value;

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
            return Some(location.map_or(line.to_string(), |at| format!("{line} (at {at})")));
        }
    }
    stderr
        .lines()
        .find(|line| !line.trim().is_empty())
        .map(str::to_string)
}

/// The errors among rustc's JSON diagnostics (`--error-format=json`) on `stderr`, in order.
pub fn json_errors(stderr: &str) -> impl Iterator<Item = Value> + '_ {
    stderr
        .lines()
        .filter(|line| line.starts_with('{'))
        .filter_map(|line| crate::util::json::parse(line).ok())
        .filter(|diagnostic| diagnostic["level"] == "error")
}

/// The code and message of every error among rustc's JSON diagnostics on `stderr`, in order:
/// the code is rustc's (`E0636`) or, for a lint denied by default, the lint's name
/// (`duplicate_features`); an error with neither has an empty code.
pub fn error_diagnostics(stderr: &str) -> Vec<(String, String)> {
    let text = |value: &Value| value.as_str().unwrap_or_default().to_string();
    json_errors(stderr)
        .map(|diagnostic| {
            (
                text(&diagnostic["code"]["code"]),
                text(&diagnostic["message"]),
            )
        })
        .collect()
}

/// An error's first line as rustc prints it: `error[E0658]: message`, `error: message` uncoded.
pub fn error_line(code: &str, message: &str) -> String {
    match code {
        "" => format!("error: {message}"),
        code => format!("error[{code}]: {message}"),
    }
}

/// rustc's JSON diagnostics, one a line, from what `cargo --message-format=json` printed on
/// stdout (each wrapped in a `compiler-message`).
pub fn cargo_diagnostics(stdout: &str) -> String {
    stdout
        .lines()
        .filter_map(|line| crate::util::json::parse(line).ok())
        .filter(|message| message["reason"] == "compiler-message")
        .map(|message| message["message"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The files that rustc's errors on `stderr` name, in either format: for the human one, the
/// `-->` and `:::` lines of every `error` up to the next message; for JSON, every span of every
/// error-level diagnostic, their macro expansions' spans included. An error that names no file
/// (a linker's failure, `could not write output`) adds nothing.
pub fn error_files(stderr: &str) -> Vec<String> {
    let mut files = Vec::new();
    let mut in_error = false;
    for line in stderr.lines() {
        if line.starts_with('{') {
            in_error = false;
            json_errors(line).for_each(|diagnostic| span_files(&diagnostic, &mut files));
            continue;
        }
        // A message starts at the line's first column with a word; its source lines, `|`
        // gutters and notes are indented or numbered.
        if line.starts_with(|c: char| c.is_ascii_alphabetic()) {
            in_error = line.starts_with("error") && !line.starts_with("error: aborting due to");
            continue;
        }
        if !in_error {
            continue;
        }
        let trimmed = line.trim_start();
        if let Some(location) = trimmed
            .strip_prefix("--> ")
            .or_else(|| trimmed.strip_prefix("::: "))
        {
            // `file:line:column`, and the file may hold colons of its own.
            let file = location.rsplitn(3, ':').nth(2).unwrap_or(location);
            files.push(file.to_string());
        }
    }
    files
}

/// Adds the `file_name` of every span below `value` (children, expansions) to `files`.
fn span_files(value: &Value, files: &mut Vec<String>) {
    match value {
        Value::Object(members) => {
            if let Some(Value::String(file)) = members.get("file_name") {
                files.push(file.clone());
            }
            for (name, member) in members {
                // `rendered` repeats the message as text; `children` are notes, not errors.
                if name != "rendered" && name != "children" {
                    span_files(member, files);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| span_files(item, files)),
        _ => {}
    }
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
    fn error_lines_carry_the_code_when_there_is_one() {
        assert_eq!(
            error_line("E0725", "not allowed"),
            "error[E0725]: not allowed"
        );
        assert_eq!(error_line("", "aborting"), "error: aborting");
    }

    #[test]
    fn error_files_are_the_files_errors_name() {
        let human = "warning: unused\n --> a.rs:1:1\n\
            error[E0425]: cannot find value `x`\n  --> examples/x.rs:3:5\n   |\n\
            3  |     x\n   |     ^\n  ::: kernel-shim/src/lib.rs:9:1\n\
            error: linking with `cc` failed: exit status: 1\n  |\n  = note: \"cc\"\n\
            error: aborting due to 2 previous errors\n";
        assert_eq!(
            error_files(human),
            ["examples/x.rs", "kernel-shim/src/lib.rs"]
        );
        assert!(error_files("error: linking with `cc` failed: exit status: 1\n").is_empty());
        let json = r#"{"level":"error","message":"m","spans":[{"file_name":"p.rs","expansion":{"span":{"file_name":"q.rs"}}}],"children":[{"spans":[{"file_name":"note.rs"}]}]}"#;
        assert_eq!(error_files(json), ["p.rs", "q.rs"]);
        let warning = r#"{"level":"warning","spans":[{"file_name":"p.rs"}]}"#;
        assert!(error_files(warning).is_empty());
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
