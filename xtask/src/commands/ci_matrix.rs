// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask ci-matrix`: the CI job matrices, from the pin file: the toolchains split by
//! [`Shard`]'s one rule, and the kernel trees one job each, so the workflow never repeats
//! either list.

use crate::toolchains::pins::{Pins, Shard};
use crate::util::json::{json, Value};
use crate::{commands::flags, Verdict};
use xshell::Shell;

/// The job matrix for GitHub Actions: `{"include": [{"shard": "K/N", "pins": "ID ID"}, ...]}`,
/// nothing but shards and pin ids (checked by the pin file's reader), so no pin value ever
/// becomes a command.
pub fn job_matrix(pins: &Pins, shards: usize) -> anyhow::Result<String> {
    if shards == 0 || shards > pins.pins.len() {
        anyhow::bail!(
            "--shards must be from 1 to the number of pins ({}), not {shards}",
            pins.pins.len()
        );
    }
    let jobs: Vec<Value> = (1..=shards)
        .map(|index| {
            let shard = Shard {
                index,
                count: shards,
            };
            let ids: Vec<&str> = shard
                .pins(&pins.pins)
                .iter()
                .map(|pin| pin.id.as_str())
                .collect();
            json!({"shard": shard.to_string(), "pins": ids.join(" ")})
        })
        .collect();
    Ok(json!({ "include": jobs }).to_string())
}

/// The kernel trees' job matrix: `{"include": [{"tree": "ID"}, ...]}`, one job per pinned tree.
pub fn tree_matrix(pins: &Pins) -> anyhow::Result<String> {
    if pins.trees.is_empty() {
        anyhow::bail!("{} pins no kernel tree", pins.path.display());
    }
    let jobs: Vec<Value> = pins
        .trees
        .iter()
        .map(|tree| json!({ "tree": tree.id }))
        .collect();
    Ok(json!({ "include": jobs }).to_string())
}

impl flags::CiMatrix {
    pub fn run(&self, _sh: &Shell) -> anyhow::Result<Verdict> {
        let path = self.pins.clone().unwrap_or_else(Pins::default_path);
        let pins = Pins::load(&path)?;
        let matrix = if self.kernel {
            tree_matrix(&pins)?
        } else {
            job_matrix(&pins, self.shards.unwrap_or(pins.pins.len()))?
        };
        println!("{matrix}");
        Ok(Verdict::Success)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchains::pins::tests::numbered_pins as pins;

    #[test]
    fn job_matrix_lists_every_pin_once_and_no_command() {
        let matrix = job_matrix(&pins(3), 2).unwrap();
        assert_eq!(
            matrix,
            "{\"include\":[\
             {\"pins\":\"1.0.0 1.2.0\",\"shard\":\"1/2\"},\
             {\"pins\":\"1.1.0\",\"shard\":\"2/2\"}]}"
        );
        assert!(job_matrix(&pins(3), 4).is_err());
        assert!(job_matrix(&pins(3), 0).is_err());
    }

    #[test]
    fn tree_matrix_lists_every_pinned_tree_once() {
        let pinned = Pins::load(&Pins::default_path()).unwrap();
        let matrix: serde_json::Value =
            serde_json::from_str(&tree_matrix(&pinned).unwrap()).unwrap();
        let ids: Vec<&str> = matrix["include"]
            .as_array()
            .unwrap()
            .iter()
            .map(|job| job["tree"].as_str().unwrap())
            .collect();
        let trees: Vec<&str> = pinned.trees.iter().map(|tree| tree.id.as_str()).collect();
        assert_eq!(ids, trees);
        assert!(ids.contains(&"6.12") && ids.contains(&"7.3"), "{ids:?}");
        assert!(tree_matrix(&pins(2)).is_err(), "a pin file without trees");
    }
}
