// SPDX-License-Identifier: GPL-2.0
//! The shim and every example built, tested and run through Cargo on the toolchain running
//! these tests (the pinned one, under README's `cargo test --workspace`), in both modes as
//! `.ci/run` builds them: stable mode, and kernel mode with `RUSTC_BOOTSTRAP=1`, where the
//! shim's build script turns kernel mode on and `.cargo/kbuild-rustc` (Cargo's
//! `rustc-workspace-wrapper`) gives the examples Kbuild's flags for a driver.
//!
//! Each mode checks that every test passes, that each feature's `gated_matches_replacement_*`
//! test ran where the catalog says the gated form exists, and that each example prints what
//! its source says it prints. The kernel mode Kbuild builds with rustc directly, the pre-1.84
//! `CoerceUnsized` path and the two modes' logs compared are `xtask/src/tests/kernel_mode.rs`'s.

use crate::support::*;
use kernel::catalog::{derived_cfgs, Release, FEATURES};
use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

#[derive(Clone, Copy)]
enum Mode {
    Stable,
    Kernel,
}

impl Mode {
    fn word(self) -> &'static str {
        match self {
            Mode::Stable => "stable",
            Mode::Kernel => "kernel",
        }
    }
}

/// `cargo ARGS` in this checkout, in `mode`: stable mode in `target/`, where `cargo test
/// --workspace` has already built it, kernel mode in `target/kernel-mode/` as `.ci/run` builds
/// it, so that neither rebuilds the other's.
fn cargo_in(mode: Mode, args: &[&str]) -> Command {
    let mut command = Command::new(cargo());
    command
        .args(args)
        .current_dir(root())
        .env("CARGO_TERM_COLOR", "never")
        .env_remove("KSHIM_MODE");
    match mode {
        Mode::Stable => command.env_remove("RUSTC_BOOTSTRAP"),
        Mode::Kernel => command
            .env("RUSTC_BOOTSTRAP", "1")
            .args(["--target-dir", "target/kernel-mode"]),
    };
    command
}

/// Whether a catalog gate (`NAME`, `all(..)`, `any(..)`, `not(..)`) holds with `cfgs` set.
fn holds(gate: &str, cfgs: &[&str]) -> bool {
    let gate = gate.trim();
    let Some((operator, rest)) = gate.split_once('(') else {
        return cfgs.contains(&gate);
    };
    let inside = rest
        .strip_suffix(')')
        .expect("a catalog gate closes its parenthesis");
    // The operands, split at the commas outside parentheses.
    let mut operands = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (at, c) in inside.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                operands.push(&inside[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    operands.push(&inside[start..]);
    match operator.trim() {
        "all" => operands.iter().all(|operand| holds(operand, cfgs)),
        "any" => operands.iter().any(|operand| holds(operand, cfgs)),
        "not" => !holds(operands[0], cfgs),
        other => panic!("unknown operator {other} in the gate {gate}"),
    }
}

/// The features whose `gated_matches_replacement_*` test exists in `mode`, as the catalog
/// says: in stable mode where the feature is stable, in kernel mode where its gate holds.
fn features_with_a_gated_form(mode: Mode) -> BTreeSet<&'static str> {
    let release = Release::parse(release()).expect("rustc's release is MAJOR.MINOR.PATCH");
    let cfgs: Vec<&str> = derived_cfgs(release, matches!(mode, Mode::Kernel)).collect();
    FEATURES
        .iter()
        .filter(|feature| match mode {
            Mode::Stable => feature.is_stable_on(release),
            Mode::Kernel => holds(feature.gate, &cfgs),
        })
        .map(|feature| feature.name)
        .collect()
}

/// The features whose `gated_matches_replacement_*` test passed, from libtest's lines.
fn passed_gated_tests(stdout: &str) -> BTreeSet<String> {
    stdout
        .lines()
        .filter_map(|line| {
            let test = line.strip_prefix("test ")?.strip_suffix(" ... ok")?;
            let name = test.rsplit("::").next()?;
            Some(name.strip_prefix("gated_matches_replacement_")?.to_string())
        })
        .collect()
}

/// The examples `examples/Cargo.toml` declares.
fn declared_examples() -> Vec<String> {
    let manifest = std::fs::read_to_string(root().join("examples/Cargo.toml")).unwrap();
    let mut names = Vec::new();
    let mut in_example = false;
    for line in manifest.lines() {
        if line.starts_with('[') {
            in_example = line == "[[example]]";
        } else if let (true, Some(name)) = (in_example, line.strip_prefix("name = ")) {
            names.push(name.trim_matches('"').to_string());
        }
    }
    names
}

/// What a `pr_*!` call can print: its level and its format string's literal pieces, in order
/// (a line matches when it starts with the first, ends with the last, and holds the others in
/// between, where the arguments go).
struct Message {
    level: String,
    pieces: Vec<String>,
}

impl Message {
    fn matches(&self, level: &str, text: &str) -> bool {
        if level != self.level {
            return false;
        }
        let (first, rest) = self.pieces.split_first().expect("at least one piece");
        let Some(mut text) = text.strip_prefix(first.as_str()) else {
            return false;
        };
        let Some((last, middle)) = rest.split_last() else {
            return text.is_empty();
        };
        for piece in middle {
            match text.find(piece.as_str()) {
                Some(at) => text = &text[at + piece.len()..],
                None => return false,
            }
        }
        text.ends_with(last.as_str())
    }
}

/// The string literal at the start of `source`, unescaped, and the text after it.
fn string_literal(source: &str) -> Option<(String, &str)> {
    let body = source.strip_prefix('"')?;
    let mut chars = body.char_indices().peekable();
    let mut value = String::new();
    while let Some((at, c)) = chars.next() {
        match c {
            '"' => return Some((value, &body[at + 1..])),
            '\\' => match chars.next()?.1 {
                'n' => value.push('\n'),
                't' => value.push('\t'),
                // A continued line: the next line's leading whitespace is not in the string.
                '\n' => while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {},
                other => value.push(other),
            },
            c => value.push(c),
        }
    }
    None
}

/// The literal pieces of a format string, split where an argument goes.
fn pieces(format: &str) -> Vec<String> {
    let mut pieces = vec![String::new()];
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                pieces.last_mut().unwrap().push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                pieces.last_mut().unwrap().push('}');
            }
            '{' => {
                for c in chars.by_ref() {
                    if c == '}' {
                        break;
                    }
                }
                pieces.push(String::new());
            }
            c => pieces.last_mut().unwrap().push(c),
        }
    }
    pieces
}

/// Every message the source's `pr_*!` calls can print.
fn messages(source: &str) -> Vec<Message> {
    let mut found = Vec::new();
    for (at, _) in source.match_indices("pr_") {
        let after = &source[at + 3..];
        let Some((level, rest)) = after.split_once("!(") else {
            continue;
        };
        if level.is_empty() || !level.chars().all(|c| c.is_ascii_lowercase()) {
            continue;
        }
        let Some((format, _)) = string_literal(rest.trim_start()) else {
            continue;
        };
        let format = format.strip_suffix('\n').unwrap_or(&format);
        found.push(Message {
            level: level.to_string(),
            pieces: pieces(format),
        });
    }
    found
}

/// Checks one example's output against its source: every line is `[LEVEL] NAME: TEXT` with
/// NAME the `module!`'s name and TEXT what one of its `pr_*!` calls prints; the first line is
/// its `(init)` message, and its `(exit)` message comes (what the module's fields log when they
/// are dropped comes after it). Returns what is wrong.
/// Whether a file of the shim logs under `name` itself, as its C stand-ins do (a string
/// literal passed to `call_printk`).
fn shim_logs_as(name: &str) -> bool {
    let task = std::fs::read_to_string(root().join("kernel-shim/src/task.rs")).unwrap_or_default();
    let print =
        std::fs::read_to_string(root().join("kernel-shim/src/print.rs")).unwrap_or_default();
    let literal = format!("\"{name}\",");
    [task, print].iter().any(|source| {
        source.contains("call_printk(") && source.lines().any(|line| line.trim() == literal)
    })
}

fn check_output(example: &str, source: &str, stdout: &str) -> Vec<String> {
    let module = source
        .split_once("module! {")
        .and_then(|(_, rest)| rest.split_once("name: "))
        .and_then(|(_, rest)| string_literal(rest))
        .map(|(name, _)| name)
        .unwrap_or_else(|| panic!("examples/{example}.rs has no module! with a name"));
    let messages = messages(source);
    let mut problems = Vec::new();
    let lines: Vec<&str> = stdout.lines().collect();
    if lines.is_empty() {
        problems.push(format!("{example}: it printed nothing"));
    }
    for line in &lines {
        let parsed = line
            .strip_prefix('[')
            .and_then(|rest| rest.split_once("] "))
            .and_then(|(level, rest)| Some((level, rest.strip_prefix(&format!("{module}: "))?)));
        let Some((level, text)) = parsed else {
            // The shim's own stand-ins for C (`__might_sleep`) log under their C name.
            let from_the_shim = line
                .strip_prefix('[')
                .and_then(|rest| rest.split_once("] "))
                .and_then(|(_, rest)| rest.split_once(": "))
                .is_some_and(|(name, _)| shim_logs_as(name));
            if !from_the_shim {
                problems.push(format!("{example}: not `[LEVEL] {module}: ...`: {line:?}"));
            }
            continue;
        };
        if !messages.iter().any(|message| message.matches(level, text)) {
            problems.push(format!(
                "{example}: no pr_{level}! in its source prints {line:?}"
            ));
        }
    }
    if !lines.first().is_some_and(|line| line.ends_with(" (init)")) {
        problems.push(format!(
            "{example}: its first line is not its (init) message"
        ));
    }
    if !lines.iter().skip(1).any(|line| line.ends_with(" (exit)")) {
        problems.push(format!("{example}: no (exit) message after the first line"));
    }
    problems
}

/// Tests the shim and the examples, then runs every example, in `mode`.
fn shim_and_examples_in(mode: Mode) {
    let tests = cargo_in(mode, &["test", "-p", "kernel-shim", "-p", "kshim-examples"])
        .run_within(Duration::from_secs(1200));
    tests.success();
    let expected = features_with_a_gated_form(mode);
    let passed = passed_gated_tests(&tests.stdout);
    let missing: Vec<&&str> = expected
        .iter()
        .filter(|name| !passed.contains(**name))
        .collect();
    tests.check(
        missing.is_empty() && !expected.is_empty(),
        &format!(
            "{} mode: no gated_matches_replacement_* test passed for {missing:?}",
            mode.word()
        ),
    );

    let examples = declared_examples();
    assert!(examples.len() > 10, "{examples:?}");
    for example in &examples {
        let source =
            std::fs::read_to_string(root().join(format!("examples/{example}.rs"))).unwrap();
        let run = cargo_in(
            mode,
            &["run", "-q", "-p", "kshim-examples", "--example", example],
        )
        .run_within(Duration::from_secs(600));
        let problems = check_output(example, &source, &run.stdout);
        run.success()
            .check(problems.is_empty(), &problems.join("\n"));
    }
}

#[test]
fn the_shim_and_every_example_in_stable_mode() {
    shim_and_examples_in(Mode::Stable);
}

#[test]
fn the_shim_and_every_example_in_kernel_mode() {
    shim_and_examples_in(Mode::Kernel);
}

#[test]
fn an_output_that_its_source_does_not_print_is_caught() {
    let source = "module! {\n    type: M,\n    name: \"m\",\n}\n\
                  fn init() { pr_info!(\"M sample (init)\\n\"); pr_warn!(\n\"got {} of {:?}\\n\", a, b); }\n\
                  fn exit() { pr_info!(\"M sample (exit)\\n\"); }\n";
    let good = "[info] m: M sample (init)\n[warn] m: got 3 of [1]\n[info] m: M sample (exit)\n";
    assert_eq!(check_output("m", source, good), Vec::<String>::new());
    for bad in [
        "[info] m: M sample (init)\n[info] m: got 3 of [1]\n[info] m: M sample (exit)\n",
        "[info] m: M sample (init)\n[warn] m: had 3 of [1]\n[info] m: M sample (exit)\n",
        "[info] x: M sample (init)\n[info] m: M sample (exit)\n",
        "[info] m: M sample (exit)\n[info] m: M sample (init)\n",
        "[info] m: M sample (init)\n",
        "",
    ] {
        assert!(!check_output("m", source, bad).is_empty(), "{bad:?} passed");
    }
}
