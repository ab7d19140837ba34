// SPDX-License-Identifier: GPL-2.0
//! CI runs what README shows, and its workflow takes its toolchains from the pin file.

use super::read;
use crate::project_root;

#[test]
fn readme_shows_the_two_commands_and_ci_runs_the_test_command() {
    let readme = read("README.md");
    assert!(readme.contains("cargo xtask matrix"));
    let ci = read(".ci/run");
    let test_command = "cargo test --workspace";
    assert!(
        readme.contains(test_command),
        "README.md must show `{test_command}`"
    );
    assert!(
        ci.contains(test_command),
        ".ci/run must run README's `{test_command}`"
    );
}

#[test]
fn workflow_takes_its_toolchains_from_the_pin_file() {
    let workflow = read(".github/workflows/matrix.yml");
    let pins =
        crate::toolchains::pins::Pins::load(&project_root().join("toolchains.toml")).unwrap();
    // The job matrix comes from the pin file, and each job runs its own shard of it.
    for needed in [
        "cargo xtask ci-matrix",
        "fromJSON(needs.plan.outputs.jobs)",
        "cargo xtask toolchains install --shard \"$SHARD\"",
        "cargo xtask matrix --shard \"$SHARD\"",
        "cargo xtask merge",
    ] {
        assert!(
            workflow.contains(needed),
            "the workflow must use `{needed}`"
        );
    }
    // The only toolchain the workflow names itself is the image's, which must be the one
    // rust-toolchain.toml pins; every other release must come from the pin file.
    let channel = read("rust-toolchain.toml")
        .lines()
        .find_map(|line| line.strip_prefix("channel = "))
        .map(|value| value.trim_matches('"').to_string())
        .expect("rust-toolchain.toml has a channel");
    for image in workflow
        .lines()
        .filter_map(|line| line.trim().strip_prefix("container: "))
    {
        assert_eq!(
            image,
            format!("rust:{channel}-bookworm"),
            "the workflow's image"
        );
    }
    let without_image = workflow.replace(&format!("rust:{channel}-bookworm"), "");
    for pin in &pins.pins {
        assert!(
            !without_image.contains(&pin.release),
            "the workflow names {} itself; it must come from toolchains.toml through \
             `cargo xtask ci-matrix`",
            pin.release
        );
    }
    // No expression is part of a script, where the shell would evaluate what it expands to:
    // values reach the commands through `env:`, quoted.
    // The indentation of the `run: |` whose script the line is in.
    let mut script_of: Option<usize> = None;
    for (number, line) in workflow.lines().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let Some(rest) = trimmed
            .strip_prefix("run:")
            .or_else(|| trimmed.strip_prefix("- run:"))
        {
            script_of = (rest.trim() == "|").then_some(indent);
            assert!(
                !rest.contains("${{"),
                ".github/workflows/matrix.yml:{}: an expression in a script: {line}",
                number + 1
            );
            continue;
        }
        if script_of.is_some_and(|run| !trimmed.is_empty() && indent <= run) {
            script_of = None;
        }
        assert!(
            !(script_of.is_some() && line.contains("${{")),
            ".github/workflows/matrix.yml:{}: an expression in a script: {line}",
            number + 1
        );
    }
    // And the job matrix really covers every pin, once.
    let matrix = crate::commands::ci_matrix::job_matrix(&pins, pins.pins.len()).unwrap();
    for pin in &pins.pins {
        assert_eq!(
            matrix.matches(&format!("\"pins\":\"{}\"", pin.id)).count(),
            1,
            "pin {} in {matrix}",
            pin.id
        );
    }
}
