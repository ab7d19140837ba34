// SPDX-License-Identifier: GPL-2.0
//! Tests of the pin file: its TOML, every value checked against what it names, the
//! repository's own pins, and the shards.

mod repository;
mod selection;
mod syntax;
mod values;

use super::*;
use crate::catalog::{self, Release};
use crate::toolchains::version::parse_verbose_version;

/// A pin file with two pins, one of them a nightly.
pub(crate) const GOOD: &str = r#"# A comment line.
[[pin]]
id = "1.85.0"   # a trailing comment
release = "1.85.0"
role = "debian"
debian = "bookworm:rustc-web"
rustup = "1.85.0"
note = "a \"quoted\" word and a # that is not a comment"

[[pin]]  # comment after a header
id = "nightly"
release = "1.97.0-nightly"
commit-date = "2026-05-19"
role = "nightly"
debian = "sid:rustc"
"#;

fn parse(text: &str) -> anyhow::Result<Pins> {
    Pins::parse(text, Path::new("pins.toml"))
}

fn error_of(text: &str) -> String {
    match parse(text) {
        Ok(pins) => panic!("parsed {pins:?}"),
        Err(error) => format!("{error:#}"),
    }
}

/// A one-pin file with `line` added to the pin (which starts on line 1).
fn with_line(line: &str) -> String {
    format!("[[pin]]\nid = \"a\"\nrelease = \"1.85.0\"\nrole = \"feature\"\n{line}\n")
}

/// The pins of a file of `count` pins, `1.0.0` to `1.{count - 1}.0`, each with its rustup
/// name.
pub(crate) fn numbered_pins(count: usize) -> Pins {
    Pins::parse(&numbered_pins_text(count), Path::new("test.toml")).unwrap()
}

fn numbered_pins_text(count: usize) -> String {
    (0..count)
        .map(|n| format!("[[pin]]\nid = \"1.{n}.0\"\nrelease = \"1.{n}.0\"\nrole = \"feature\"\nrustup = \"1.{n}.0\"\n\n"))
        .collect()
}
