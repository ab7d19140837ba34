// SPDX-License-Identifier: GPL-2.0
//! What a build's tools said: the first error among them, the refusal or warning of the tree's
//! own Rust check, and whether a failure was the machine's rather than the compiler's.

use crate::util::process::{self, ProcessOutput};
use std::time::Duration;

/// The `***` lines of `scripts/rust_is_available.sh`, joined: "Rust compiler '…' is too old.
/// Your version: 1.78.0 Minimum version: 1.85.0".
pub(crate) fn summary_of_stars(said: &str) -> String {
    let stars = said
        .lines()
        .filter_map(|line| line.trim().strip_prefix("***"));
    let words: Vec<&str> = stars.flat_map(str::split_whitespace).collect();
    if words.is_empty() {
        process::last_line(said)
    } else {
        words.join(" ")
    }
}

/// Why a failed `make` is the machine's fault rather than the compiler's, if it is.
pub(crate) fn machine_failure(output: &ProcessOutput, timeout: Duration) -> Option<String> {
    if output.status.is_err() {
        return Some(output.describe_ending(timeout));
    }
    let said = format!("{}\n{}", output.stdout, output.stderr);
    for (sign, what) in [
        ("No space left on device", "the disk is full"),
        ("Cannot allocate memory", "the machine ran out of memory"),
        ("command not found", "a tool is missing"),
        ("No such file or directory", "a file or tool is missing"),
    ] {
        if said.contains(sign) && !said.contains("error[E") {
            return Some(format!(
                "{what}: {}",
                first_error(&said).unwrap_or_default()
            ));
        }
    }
    let no_exit_code = output.code().is_none();
    no_exit_code.then(|| output.describe_ending(timeout))
}

/// The first error line of a build's output, in the words of the tool that failed first: rustc's
/// or bindgen's `error...` (rustc's with the line after it, its place), a C compiler's or
/// libclang's `FILE:LINE: error:`, a Rust tool's panic (bindgen's "Unable to generate bindings",
/// with its message when it is on the next line); only when no tool said anything, make's own
/// (`*** [...] Error 1`, `*** No rule ... Stop.`). The banner lines of
/// `scripts/rust_is_available.sh` (`*** Rust compiler ... is too new`) are warnings.
pub(crate) fn first_error(said: &str) -> Option<String> {
    let lines: Vec<&str> = said.lines().collect();
    let by_a_tool = |line: &&str| {
        line.starts_with("error")
            || line.starts_with("fatal error")
            || line.contains(": error:")
            || line.contains(": fatal error:")
            || line.contains(" panicked at ")
    };
    let by_make = |line: &&str| {
        !line.trim_start().starts_with("***")
            && line.contains("*** ")
            && (line.contains("Error") || line.contains("Stop."))
    };
    let at = lines
        .iter()
        .position(by_a_tool)
        .or_else(|| lines.iter().position(by_make))?;
    let mut text = lines[at].trim().to_owned();
    let next = lines.get(at + 1).map_or("", |next| next.trim());
    if let Some(place) = next.strip_prefix("-->") {
        text.push_str(&format!(" ({})", place.trim()));
    } else if text.contains(" panicked at ") && text.ends_with(':') && !next.is_empty() {
        // Since Rust 1.73 a panic's message follows the line that names its place.
        text.push(' ');
        text.push_str(next);
    }
    Some(text)
}

/// The targets make's error lines name: `rust/bindings/bindings_generated.rs` in
/// `make[2]: *** [rust/Makefile:308: rust/bindings/bindings_generated.rs] Error 1`.
pub(crate) fn failed_targets(said: &str) -> impl Iterator<Item = &str> {
    said.lines().filter_map(|line| {
        let (_, rest) = line.split_once("*** [")?;
        let (inside, after) = rest.split_once(']')?;
        after
            .trim_start()
            .starts_with("Error")
            .then(|| inside.rsplit(": ").next().unwrap_or(inside).trim())
    })
}
