//! `cargo xtask ci-matrix`: the CI job matrix, from the pin file and split by [`Shard`]'s one
//! rule, so the workflow never repeats the list of toolchains.

use crate::pins::{Pin, Pins, Shard};
use crate::{flags, Verdict};
use xshell::Shell;

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
    use crate::pins::tests::numbered_pins as pins;

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
