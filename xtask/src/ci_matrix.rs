//! `cargo xtask ci-matrix`: the CI job matrix, from the pin file, so the workflow never
//! repeats the list of toolchains.
//!
//! It also owns the one rule for splitting the pins into shards, which `matrix --shard K/N`
//! and `merge` use too: pins are dealt out in file order, round robin, so shard sizes differ
//! by at most one and the split depends only on the pin file.

use crate::toolchain::{Pin, Pins};
use crate::{flags, Verdict};
use anyhow::Context;
use xshell::Shell;

/// One shard of the matrix: the `K` in `--shard K/N`, 1-based, out of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Which shard, from 1 to `count`.
    pub index: usize,
    /// How many shards there are.
    pub count: usize,
}

impl Shard {
    /// Parses `K/N`, with `1 <= K <= N`.
    pub fn parse(text: &str) -> anyhow::Result<Shard> {
        let usage = || format!("--shard takes K/N with 1 <= K <= N (such as 2/5), not {text:?}");
        let (index, count) = text.split_once('/').with_context(usage)?;
        let index: usize = index.trim().parse().ok().with_context(usage)?;
        let count: usize = count.trim().parse().ok().with_context(usage)?;
        if index == 0 || index > count {
            anyhow::bail!(usage());
        }
        Ok(Shard { index, count })
    }

    /// Whether the pin at `position` (0-based, in file order) belongs to this shard.
    pub fn owns(&self, position: usize) -> bool {
        position % self.count == self.index - 1
    }

    /// This shard's pins, in file order.
    pub fn pins<'a>(&self, pins: &'a [Pin]) -> Vec<&'a Pin> {
        pins.iter()
            .enumerate()
            .filter(|(position, _)| self.owns(*position))
            .map(|(_, pin)| pin)
            .collect()
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}/{}", self.index, self.count)
    }
}

/// The command a CI job runs to install one pin: Debian's package for the Debian pins (the
/// point of those pins is the distribution's own build), rustup for the rest.
fn install_command(pin: &Pin) -> Option<String> {
    match (&pin.debian, &pin.rustup) {
        (Some(_), _) => Some("cargo xtask toolchains install".to_string()),
        (None, Some(name)) => Some(format!("rustup toolchain install {name} --profile minimal")),
        (None, None) => None,
    }
}

fn json_string(text: &str) -> String {
    crate::json::quote(text)
}

/// The job matrix for GitHub Actions: `{"include": [{"shard", "pins", "install"}, ...]}`.
///
/// `install` is one shell command line that installs every pin of the shard (deduplicated,
/// in order), or `true` when none can be installed.
pub fn job_matrix(pins: &Pins, shards: usize) -> anyhow::Result<String> {
    if shards == 0 || shards > pins.pins.len() {
        anyhow::bail!(
            "--shards must be from 1 to the number of pins ({}), not {shards}",
            pins.pins.len()
        );
    }
    let mut jobs = Vec::new();
    for index in 1..=shards {
        let shard = Shard {
            index,
            count: shards,
        };
        let members = shard.pins(&pins.pins);
        let ids: Vec<&str> = members.iter().map(|pin| pin.id.as_str()).collect();
        let mut commands: Vec<String> = Vec::new();
        for command in members.iter().filter_map(|pin| install_command(pin)) {
            if !commands.contains(&command) {
                commands.push(command);
            }
        }
        let install = if commands.is_empty() {
            "true".to_string()
        } else {
            commands.join(" && ")
        };
        jobs.push(format!(
            "{{\"shard\":{},\"pins\":{},\"install\":{}}}",
            json_string(&shard.to_string()),
            json_string(&ids.join(" ")),
            json_string(&install)
        ));
    }
    Ok(format!("{{\"include\":[{}]}}", jobs.join(",")))
}

impl flags::CiMatrix {
    /// Runs `cargo xtask ci-matrix`.
    pub fn run(&self, _sh: &Shell) -> anyhow::Result<Verdict> {
        let path = self.pins.clone().unwrap_or_else(Pins::default_path);
        let pins = Pins::load(&path)?;
        let shards = self.shards.unwrap_or(pins.pins.len());
        println!("{}", job_matrix(&pins, shards)?);
        Ok(Verdict::Success)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn pins(count: usize) -> Pins {
        let text: String = (0..count)
            .map(|n| format!("[[pin]]\nid = \"1.{n}.0\"\nrelease = \"1.{n}.0\"\nrole = \"feature\"\nrustup = \"1.{n}.0\"\n\n"))
            .collect();
        Pins::parse(&text, Path::new("test.toml")).unwrap()
    }

    #[test]
    fn shards_are_balanced_disjoint_and_complete() {
        let pins = pins(11);
        for count in 1..=11 {
            let mut seen = Vec::new();
            let mut sizes = Vec::new();
            for index in 1..=count {
                let members = Shard { index, count }.pins(&pins.pins);
                sizes.push(members.len());
                seen.extend(members.iter().map(|pin| pin.id.clone()));
            }
            seen.sort();
            let mut all: Vec<String> = pins.pins.iter().map(|pin| pin.id.clone()).collect();
            all.sort();
            assert_eq!(
                seen, all,
                "{count} shards must cover every pin exactly once"
            );
            let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            assert!(max - min <= 1, "{count} shards are unbalanced: {sizes:?}");
        }
    }

    #[test]
    fn shard_syntax() {
        assert_eq!(Shard::parse("2/5").unwrap(), Shard { index: 2, count: 5 });
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", ""] {
            let error = Shard::parse(bad).unwrap_err().to_string();
            assert!(error.contains("K/N"), "{bad:?}: {error}");
        }
    }

    #[test]
    fn job_matrix_lists_every_pin_once_with_its_install_command() {
        let matrix = job_matrix(&pins(3), 2).unwrap();
        assert_eq!(
            matrix,
            "{\"include\":[\
             {\"shard\":\"1/2\",\"pins\":\"1.0.0 1.2.0\",\"install\":\"rustup toolchain install 1.0.0 --profile minimal && rustup toolchain install 1.2.0 --profile minimal\"},\
             {\"shard\":\"2/2\",\"pins\":\"1.1.0\",\"install\":\"rustup toolchain install 1.1.0 --profile minimal\"}]}"
        );
        assert!(job_matrix(&pins(3), 4).is_err());
        assert!(job_matrix(&pins(3), 0).is_err());
    }
}
