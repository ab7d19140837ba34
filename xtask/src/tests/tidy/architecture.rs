// SPDX-License-Identifier: GPL-2.0
//! The code map holds: ARCHITECTURE.md's layer list names every folder and top module of
//! `xtask/src/`, and no `crate::` path outside test code runs up the layers or from one command
//! to another.

use super::{read, rust_files};
use crate::project_root;
use std::fs;

/// The map as ARCHITECTURE.md writes it.
struct Map {
    /// The folders of `xtask/src/`, bottom layer first.
    layers: Vec<String>,
    /// What stands beside the layers (the crate's own tests).
    beside: Vec<String>,
    /// The modules of `commands` that every command may use.
    shared: Vec<String>,
}

/// The words in backticks on `line`.
fn quoted(line: &str) -> Vec<String> {
    line.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// Reads the map from its section of ARCHITECTURE.md: the numbered list (one folder a line,
/// numbered from 1 without a gap) and the lines that begin "Beside the layers:" and "Shared by
/// every command:".
fn read_map(text: &str) -> Map {
    let section = text
        .split("\n## The xtask's folders\n")
        .nth(1)
        .expect("ARCHITECTURE.md has a section `## The xtask's folders`");
    let section = section.split("\n## ").next().unwrap_or_default();
    let mut map = Map {
        layers: Vec::new(),
        beside: Vec::new(),
        shared: Vec::new(),
    };
    for line in section.lines() {
        let line = line.trim_start_matches("- ");
        if let Some((number, rest)) = line.split_once(". `") {
            if let Ok(number) = number.parse::<usize>() {
                assert_eq!(
                    number,
                    map.layers.len() + 1,
                    "the layer list skips at {line:?}"
                );
                map.layers
                    .push(rest.split('`').next().unwrap_or_default().to_owned());
            }
        } else if line.starts_with("Beside the layers:") {
            map.beside = quoted(line);
        } else if line.starts_with("Shared by every command:") {
            map.shared = quoted(line);
        }
    }
    assert!(
        map.layers.len() > 3,
        "ARCHITECTURE.md lists {} layers",
        map.layers.len()
    );
    assert!(
        !map.shared.is_empty(),
        "ARCHITECTURE.md names no module the commands share"
    );
    map
}

/// `source` with comments, string and character literals and `#[cfg(test)]` modules blanked
/// out, newlines kept, so that what is left is code at its own line numbers.
fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |out: &mut String, text: &[char]| {
        out.extend(text.iter().map(|&c| if c == '\n' { '\n' } else { ' ' }));
    };
    let identifier = |c: char| c.is_alphanumeric() || c == '_';
    let mut at = 0;
    while at < chars.len() {
        let rest = &chars[at..];
        let starts = |text: &str| rest.iter().take(text.len()).copied().eq(text.chars());
        let after_identifier = at > 0 && identifier(chars[at - 1]);
        let end = if starts("//") {
            at + rest.iter().position(|&c| c == '\n').unwrap_or(rest.len())
        } else if starts("/*") {
            let mut depth = 0;
            let mut end = at;
            while end < chars.len() {
                if chars[end..].starts_with(&['/', '*']) {
                    depth += 1;
                    end += 2;
                } else if chars[end..].starts_with(&['*', '/']) {
                    depth -= 1;
                    end += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    end += 1;
                }
            }
            end
        } else if let Some(hashes) = (!after_identifier).then(|| raw_string(rest)).flatten() {
            let close: Vec<char> = std::iter::once('"')
                .chain("#".repeat(hashes).chars())
                .collect();
            let open = rest.iter().position(|&c| c == '"').unwrap_or(0) + 1;
            let body = &rest[open..];
            let length = (0..body.len()).find(|&end| body[end..].starts_with(&close));
            at + open + length.map_or(body.len(), |end| end + close.len())
        } else if rest[0] == '"' {
            let mut end = at + 1;
            while end < chars.len() && chars[end] != '"' {
                end += if chars[end] == '\\' { 2 } else { 1 };
            }
            end + 1
        } else if rest[0] == '\'' && rest.get(1) == Some(&'\\') {
            at + 2
                + rest[2..]
                    .iter()
                    .position(|&c| c == '\'')
                    .map_or(0, |end| end + 1)
        } else if rest[0] == '\'' && rest.get(2) == Some(&'\'') {
            at + 3
        } else {
            out.push(rest[0]);
            at += 1;
            continue;
        };
        let end = end.min(chars.len());
        blank(&mut out, &chars[at..end]);
        at = end;
    }
    without_test_modules(&out)
}

/// How many `#` a raw string that starts `text` (`r"`, `r#"`, `br##"` ...) has, if it is one.
fn raw_string(text: &[char]) -> Option<usize> {
    let text = text
        .strip_prefix(&['b'])
        .unwrap_or(text)
        .strip_prefix(&['r'])?;
    let hashes = text.iter().take_while(|&&c| c == '#').count();
    (text.get(hashes) == Some(&'"')).then_some(hashes)
}

/// `code` with each `#[cfg(test)] mod NAME { ... }` blanked out.
fn without_test_modules(code: &str) -> String {
    let mut code = code.to_owned();
    let mut from = 0;
    while let Some(found) = code[from..].find("#[cfg(test)]") {
        let start = from + found;
        let after = code[start + "#[cfg(test)]".len()..].trim_start();
        let after = after.strip_prefix("pub(crate) ").unwrap_or(after);
        from = start + 1;
        if !after.starts_with("mod ") {
            continue;
        }
        let Some(open) = code[start..].find(['{', ';']).map(|open| start + open) else {
            break;
        };
        if code[open..].starts_with(';') {
            continue;
        }
        let mut depth = 0;
        let mut end = code.len();
        for (offset, c) in code[open..].char_indices() {
            depth += match c {
                '{' => 1,
                '}' => -1,
                _ => 0,
            };
            if depth == 0 {
                end = open + offset + 1;
                break;
            }
        }
        let blanked: String = code[start..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        code.replace_range(start..end, &blanked);
    }
    code
}

/// The paths of the use tree or path that starts at the beginning of `code` (just past
/// `crate::`), each as its segments; `crate::{a::{b, c}, d}` gives `a::b`, `a::c` and `d`.
fn paths(code: &str) -> Vec<Vec<String>> {
    fn tree(code: &str) -> (Vec<Vec<String>>, &str) {
        let code = code.trim_start();
        if let Some(mut rest) = code.strip_prefix('{') {
            let mut all = Vec::new();
            loop {
                rest = rest.trim_start();
                if let Some(after) = rest.strip_prefix('}') {
                    return (all, after);
                }
                let (found, after) = tree(rest);
                all.extend(found);
                let after = after.trim_start();
                rest = after.strip_prefix(',').unwrap_or(after);
                if rest.len() == after.len() && !rest.starts_with('}') {
                    return (all, rest);
                }
            }
        }
        let length = code
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(code.len());
        if length == 0 {
            return (Vec::new(), code);
        }
        let (name, rest) = code.split_at(length);
        match rest.trim_start().strip_prefix("::") {
            Some(rest) => {
                let (found, rest) = tree(rest);
                let found = if found.is_empty() {
                    vec![Vec::new()]
                } else {
                    found
                };
                let paths = found.into_iter().map(|mut path| {
                    path.insert(0, name.to_owned());
                    path
                });
                (paths.collect(), rest)
            }
            None => (vec![vec![name.to_owned()]], rest),
        }
    }
    tree(code).0
}

/// Where `file` (its path under `xtask/src/`) breaks the map: one line per `crate::` path that
/// runs up the layers or from one command to another, naming the file, line and path.
fn violations(file: &str, source: &str, map: &Map) -> Vec<String> {
    let mut parts = file.trim_end_matches(".rs").split('/');
    let folder = parts.next().unwrap_or_default();
    let Some(own_layer) = map.layers.iter().position(|layer| layer == folder) else {
        return Vec::new();
    };
    let own_command = parts.next().unwrap_or_default();
    let code = code_only(source);
    let mut found = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let line = code[..at].matches('\n').count() + 1;
        let text = source.lines().nth(line - 1).unwrap_or_default().trim();
        for path in paths(&code[at + "crate::".len()..]) {
            let (Some(first), second) = (path.first(), path.get(1)) else {
                continue;
            };
            let Some(layer) = map.layers.iter().position(|layer| layer == first) else {
                continue;
            };
            if layer > own_layer {
                found.push(format!(
                    "xtask/src/{file}:{line}: `{text}`: `{folder}` (layer {}) imports `{first}` \
                     (layer {}), which stands above it",
                    own_layer + 1,
                    layer + 1
                ));
            } else if layer == own_layer && folder == "commands" {
                let other = second.map(String::as_str).unwrap_or_default();
                let shared = |name: &str| map.shared.iter().any(|shared| shared == name);
                if other != own_command && !shared(own_command) && !shared(other) {
                    found.push(format!(
                        "xtask/src/{file}:{line}: `{text}`: the command `{own_command}` imports \
                         the command `{other}`"
                    ));
                }
            }
        }
    }
    found
}

/// Whether `file` (under `xtask/src/`) is test code, which may reach any layer.
fn is_test_code(file: &str) -> bool {
    file.split('/')
        .any(|part| part == "tests" || part == "tests.rs")
}

#[test]
fn no_import_runs_up_the_layers_or_between_commands() {
    let map = read_map(&read("ARCHITECTURE.md"));
    let src = project_root().join("xtask/src");
    let (mut checked, mut paths) = (0, 0);
    let mut found = Vec::new();
    for path in rust_files(&src) {
        let file = path
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if is_test_code(&file) {
            continue;
        }
        let source = fs::read_to_string(&path).unwrap();
        paths += code_only(&source).matches("crate::").count();
        found.extend(violations(&file, &source, &map));
        checked += 1;
    }
    assert!(checked > 50, "only {checked} files under {}", src.display());
    assert!(
        paths > 300,
        "only {paths} `crate::` paths in {checked} files: is the reading broken?"
    );
    assert!(
        found.is_empty(),
        "imports that break ARCHITECTURE.md's layers (move the code to the layer it belongs to, \
         or the map if the map is wrong):\n{}",
        found.join("\n")
    );
}

#[test]
fn every_folder_and_top_module_of_the_xtask_is_on_the_map() {
    let map = read_map(&read("ARCHITECTURE.md"));
    let src = project_root().join("xtask/src");
    let named = |name: &str| {
        map.layers
            .iter()
            .chain(&map.beside)
            .any(|known| known == name)
    };
    let mut unnamed = Vec::new();
    for entry in fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let module = name.strip_suffix(".rs").unwrap_or(&name);
        let root = name == "lib.rs" || name == "main.rs";
        let rust = path.is_dir() || name.ends_with(".rs");
        if rust && !root && !named(module) {
            unnamed.push(format!("xtask/src/{name}"));
        }
    }
    unnamed.sort();
    assert!(
        unnamed.is_empty(),
        "ARCHITECTURE.md's layer list does not name these: {unnamed:?}"
    );
    let missing: Vec<&String> = map
        .layers
        .iter()
        .filter(|layer| !src.join(format!("{layer}.rs")).is_file())
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names layers the xtask does not have: {missing:?}"
    );
}

#[test]
fn the_check_refuses_what_breaks_the_map_and_only_that() {
    let map = read_map(&read("ARCHITECTURE.md"));
    let count = |file: &str, source: &str| violations(file, source, &map).len();
    // Up the layers, as a path, in a group, and nested in a group.
    assert_eq!(count("util/date.rs", "use crate::run::plan::Rustc;\n"), 1);
    assert_eq!(
        count("util/date.rs", "fn f() { crate::kernel::rules::read(); }\n"),
        1
    );
    assert_eq!(
        count(
            "targets.rs",
            "use crate::{util::json, toolchains::{pins, apt}};\n"
        ),
        2
    );
    // Between two commands; a command's own internals and the shared modules are fine.
    assert_eq!(
        count(
            "commands/matrix.rs",
            "use crate::{commands::usage, util::json};"
        ),
        1
    );
    assert_eq!(
        count(
            "commands/audit/render.rs",
            "use crate::commands::audit::Column;"
        ),
        0
    );
    assert_eq!(
        count("commands/matrix.rs", "use crate::commands::flags;"),
        0
    );
    // Down the layers, the crate root, and text that only looks like a path.
    assert_eq!(
        count("kernel/rules/prediction.rs", "use crate::run::plan::Rustc;"),
        0
    );
    assert_eq!(
        count("util/date.rs", "use crate::{project_root, Verdict};"),
        0
    );
    let not_code = "// crate::run\n/* crate::run */\nlet s = \"crate::run\";\n\
                    let r = r#\"crate::run\"#; let c = '\"'; let l: &'static str = \"\";\n\
                    macro_rules! m { () => { $crate::run::x() } }\n\
                    #[cfg(test)]\nmod tests {\n    use crate::run::plan;\n}\n";
    assert_eq!(count("util/date.rs", not_code), 0);
    // Its line is the one the path is on.
    let found = violations(
        "util/date.rs",
        "//! Doc.\n\nuse crate::report::Report;\n",
        &map,
    );
    assert!(
        found[0].starts_with("xtask/src/util/date.rs:3: `use crate::report::Report;`"),
        "{found:?}"
    );
}
