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

#[cfg(test)]
mod tests {
    use super::*;

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
