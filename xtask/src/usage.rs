//! Where a feature is used, as the compiler says: the shim compiled in kernel mode with
//! `-Zallow-features` set to every feature it enables but one reports E0725 on that feature's
//! attribute and E0658 at each place that needs it; this module builds that compile and reads
//! the places (the building block of a usage report, not yet a command).

use crate::json::{self, Value};
use crate::plan::{Mode, Output, Product, Rustc};
use crate::process::Invocation;
use std::path::Path;

/// One place the compiler says needs the feature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The file, as rustc names it.
    pub file: String,
    /// 1-based line.
    pub line: u64,
    /// 1-based column.
    pub column: u64,
}

/// The metadata-only kernel-mode compile of the shim at `root` that leaves `feature` out of
/// `-Zallow-features` (`enabled` is every feature the shim enables on this compiler).
pub fn shim_without(
    rustc: &Rustc,
    root: &Path,
    cfgs: &[&str],
    enabled: &[&str],
    feature: &str,
    out_dir: &Path,
) -> Invocation {
    let mut invocation = rustc.shim(
        root,
        Mode::Kernel,
        cfgs,
        Product::Crate,
        Output::Directory(out_dir),
    );
    for arg in &mut invocation.args {
        if arg == "--emit=link" {
            *arg = "--emit=metadata".into();
        }
    }
    let allowed: Vec<&str> = enabled.iter().copied().filter(|f| *f != feature).collect();
    invocation.args.push("--error-format=json".into());
    invocation
        .args
        .push(format!("-Zallow-features={}", allowed.join(",")));
    invocation
}

/// The primary spans of every E0658 error in rustc's JSON diagnostics, in order, each once.
pub fn read_places(stderr: &str) -> Vec<Place> {
    let mut places = Vec::new();
    for line in stderr.lines().filter(|line| line.starts_with('{')) {
        let Ok(diagnostic) = json::parse(line) else {
            continue;
        };
        let code = diagnostic
            .get("code")
            .and_then(|code| code.get("code"))
            .and_then(Value::as_str);
        if code != Some("E0658") {
            continue;
        }
        let spans = diagnostic.get("spans").and_then(Value::as_array);
        for span in spans.into_iter().flatten() {
            if span.get("is_primary").and_then(Value::as_bool) != Some(true) {
                continue;
            }
            let field = |key: &str| span.get(key).and_then(Value::as_u64).unwrap_or(0);
            let place = Place {
                file: span
                    .get("file_name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                line: field("line_start"),
                column: field("column_start"),
            };
            if !places.contains(&place) {
                places.push(place);
            }
        }
    }
    places
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_primary_spans_of_e0658_once() {
        let error = |file: &str, line: u64| {
            json::object(vec![
                ("message".into(), Value::String("x is experimental".into())),
                (
                    "code".into(),
                    json::object(vec![("code".into(), Value::String("E0658".into()))]),
                ),
                (
                    "spans".into(),
                    Value::Array(vec![json::object(vec![
                        ("file_name".into(), Value::String(file.into())),
                        ("line_start".into(), Value::from(line)),
                        ("column_start".into(), Value::from(5u64)),
                        ("is_primary".into(), Value::Bool(true)),
                    ])]),
                ),
            ])
            .to_string()
        };
        let stderr = [error("a.rs", 3), error("a.rs", 3), error("b.rs", 9)].join("\n");
        assert_eq!(
            read_places(&stderr),
            [
                Place {
                    file: "a.rs".into(),
                    line: 3,
                    column: 5
                },
                Place {
                    file: "b.rs".into(),
                    line: 9,
                    column: 5
                }
            ]
        );
    }
}
