// SPDX-License-Identifier: GPL-2.0
//! The repository's rules that need no internals: every source file opens with its licence and
//! a `//!` doc and stays short, every feature has its example, the generated files are up to
//! date (`docs --check`), links lead somewhere, and CI runs what README shows, with the job
//! matrix `ci-matrix` prints from the pin file.
//!
//! These read files, and run the `xtask` binary where a user would.

use crate::support::*;
use std::fs;
use std::path::{Path, PathBuf};

fn read(relative: &str) -> String {
    let path = root().join(relative);
    fs::read_to_string(&path).unwrap_or_else(|error| panic!("reading {}: {error}", path.display()))
}

/// Every `.rs` file below `dir`, skipping build output and third-party crate roots.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        {
            let path = entry.unwrap().path();
            if path.is_dir() {
                // Third-party crate roots are kept as published (see their README).
                let third_party = path.ends_with("xtask/tests/fixtures/audit/crates");
                if path.file_name().is_some_and(|name| name != "target") && !third_party {
                    pending.push(path);
                }
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The workspace's members, from the root manifest's one `members = [...]` line.
fn members() -> Vec<String> {
    read("Cargo.toml")
        .lines()
        .find_map(|line| line.strip_prefix("members = "))
        .expect("Cargo.toml lists the workspace's members on one `members = [...]` line")
        .trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .map(|member| member.trim().trim_matches('"').to_string())
        .collect()
}

/// The licence line every source file opens with, as the kernel's do.
const SPDX: &str = "// SPDX-License-Identifier: GPL-2.0";

#[test]
fn every_source_file_starts_with_its_licence_and_a_module_doc() {
    let root = root();
    let mut checked = 0;
    for member in members() {
        for file in rust_files(&root.join(member)) {
            let text = fs::read_to_string(&file).unwrap();
            // Fixtures are inputs whose lines tests quote, kept as the files they copy.
            let fixture = file.starts_with(root.join("xtask/tests/fixtures"));
            let mut lines = text.lines().filter(|line| !line.trim().is_empty());
            if !fixture {
                assert_eq!(
                    lines.next(),
                    Some(SPDX),
                    "{} must open with `{SPDX}`",
                    file.display()
                );
            }
            let first = lines.next().unwrap_or("");
            assert!(
                first.starts_with("//!"),
                "{} must start with a `//!` doc comment, not {first:?}",
                file.display()
            );
            checked += 1;
        }
    }
    assert!(
        checked > 50,
        "only {checked} source files found: is the walk broken?"
    );
}

/// The most lines a source file may have (`wc -l`): past it, a file holds more than one idea.
const MOST_LINES: usize = 700;

#[test]
fn no_source_file_is_over_700_lines() {
    let root = root();
    let mut checked = 0;
    let mut long = Vec::new();
    for member in members() {
        for file in rust_files(&root.join(member)) {
            let lines = fs::read_to_string(&file).unwrap().lines().count();
            if lines > MOST_LINES {
                long.push(format!(
                    "{}: {lines} lines",
                    file.strip_prefix(&root).unwrap().display()
                ));
            }
            checked += 1;
        }
    }
    assert!(
        checked > 50,
        "only {checked} source files found: is the walk broken?"
    );
    assert!(
        long.is_empty(),
        "no source file may be over {MOST_LINES} lines: split these along their seams:\n{}",
        long.join("\n")
    );
}

#[test]
fn every_feature_has_an_example_declared_in_cargo_toml() {
    let manifest = read("examples/Cargo.toml");
    for feature in kernel::catalog::FEATURES {
        let file = root().join(format!("examples/{}.rs", feature.example));
        assert!(
            file.is_file(),
            "catalog entry `{}` names example `{}`, but {} does not exist",
            feature.name,
            feature.example,
            file.display()
        );
        let declaration = format!(
            "name = \"{}\"\npath = \"{}.rs\"",
            feature.example, feature.example
        );
        assert!(
            manifest.contains(&declaration),
            "examples/Cargo.toml has no [[example]] for `{}`",
            feature.example
        );
        let text = read(&format!("examples/{}.rs", feature.example));
        assert!(
            text.contains(feature.name),
            "examples/{}.rs never names the feature `{}` it teaches",
            feature.example,
            feature.name
        );
        assert!(
            text.contains("#[cfg(test)]"),
            "examples/{}.rs has no tests",
            feature.example
        );
    }
}

#[test]
fn the_generated_files_and_the_compatibility_page_are_up_to_date() {
    // The page is generated from the reports recorded under docs/; `docs --check` checks it,
    // the reports and every generated region, as CI runs it.
    for recorded in [
        "docs/matrix-report.json",
        "docs/usage-report.json",
        "docs/compat.html",
    ] {
        assert!(
            root().join(recorded).is_file(),
            "{recorded} is missing: record a real run with `cargo xtask docs --report FILE --usage FILE`"
        );
    }
    xtask(&["docs", "--check"])
        .current_dir(root())
        .run_within(std::time::Duration::from_secs(120))
        .success()
        .stderr_has("generated files are up to date");
}

/// The anchor GitHub gives a heading.
fn heading_anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown page's headings, outside fenced code.
fn anchors(markdown: &str) -> Vec<String> {
    let mut fenced = false;
    let mut anchors = Vec::new();
    for line in markdown.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            anchors.push(heading_anchor(line.trim_start_matches('#')));
        }
    }
    anchors
}

#[test]
fn readme_and_docs_link_only_to_what_exists() {
    let root = root();
    let mut pages = vec![PathBuf::from("README.md")];
    for top in [".", "docs"] {
        for entry in fs::read_dir(root.join(top)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|extension| extension == "md") {
                let page = path.strip_prefix(&root).unwrap();
                let page = page.strip_prefix(".").unwrap_or(page).to_path_buf();
                if !pages.contains(&page) {
                    pages.push(page);
                }
            }
        }
    }
    let mut broken = Vec::new();
    for page in &pages {
        let text = read(page.to_str().unwrap());
        let directory = page.parent().unwrap_or(Path::new(""));
        for link in text.split("](").skip(1) {
            let Some(target) = link.split(')').next() else {
                continue;
            };
            if target.contains("://") || target.starts_with("crate::") {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            let file = if file.is_empty() {
                page.clone()
            } else {
                directory.join(file)
            };
            let path = root.join(&file);
            if !path.exists() {
                broken.push(format!("{}: {target} (no such file)", page.display()));
                continue;
            }
            let is_markdown = file.extension().is_some_and(|extension| extension == "md");
            if !anchor.is_empty() && is_markdown {
                let text = fs::read_to_string(&path).unwrap();
                if !anchors(&text).iter().any(|known| known == anchor) {
                    broken.push(format!("{}: {target} (no such heading)", page.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

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

/// The `[[pin]]` entries of the pin file, as `(id, release)`.
fn pins() -> Vec<(String, String)> {
    let mut pins: Vec<(String, String)> = Vec::new();
    let mut in_pin = false;
    for line in read("toolchains.toml").lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_pin = line == "[[pin]]";
            if in_pin {
                pins.push(Default::default());
            }
            continue;
        }
        let value = |key: &str| {
            let rest = line.strip_prefix(key)?.trim_start().strip_prefix('=')?;
            Some(rest.trim().trim_matches('"').to_string())
        };
        if let (true, Some(pin)) = (in_pin, pins.last_mut()) {
            if let Some(id) = value("id") {
                pin.0 = id;
            } else if let Some(release) = value("release") {
                pin.1 = release;
            }
        }
    }
    assert!(
        pins.iter()
            .all(|(id, release)| !id.is_empty() && !release.is_empty()),
        "every [[pin]] has an id and a release: {pins:?}"
    );
    pins
}

#[test]
fn workflow_takes_its_toolchains_from_the_pin_file() {
    let workflow = read(".github/workflows/matrix.yml");
    let pins = pins();
    assert!(pins.len() > 3, "{pins:?}");
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
    for (_, release) in &pins {
        assert!(
            !without_image.contains(release.as_str()),
            "the workflow names {release} itself; it must come from toolchains.toml through \
             `cargo xtask ci-matrix`"
        );
    }
    // No expression is part of a script, where the shell would evaluate what it expands to:
    // values reach the commands through `env:`, quoted. `script_of` is the indentation of the
    // `run: |` whose script the line is in.
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
    // And the job matrix the workflow takes (`cargo xtask ci-matrix`) covers every pin, once.
    let run = xtask(&["ci-matrix"]).current_dir(root()).run();
    let matrix = run.success().json();
    let ids: Vec<&str> = matrix["include"]
        .as_array()
        .unwrap_or_else(|| run.fail("no `include` array"))
        .iter()
        .flat_map(|job| job["pins"].as_str().unwrap_or_default().split(' '))
        .collect();
    for (id, _) in &pins {
        run.check(
            ids.iter().filter(|known| **known == id).count() == 1,
            &format!("pin {id} is in the job matrix once"),
        );
    }
}

/// The repository speaks to its users: no text speaks of "this" machine (whose?), and none points
/// to the team's own notes beside the checkout, which a user does not have.
#[test]
fn nothing_speaks_of_this_machine_or_points_outside_the_repository() {
    let listed = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root())
        .output()
        .expect("running git ls-files");
    assert!(listed.status.success(), "git ls-files failed");
    // Built so that this file does not name them itself.
    let phrases = [["this", "machine"].join(" "), ["..", "shared/"].join("/")];
    let mut found = Vec::new();
    for file in listed
        .stdout
        .split(|byte| *byte == 0)
        .filter(|file| !file.is_empty())
    {
        let file = String::from_utf8_lossy(file).into_owned();
        let Ok(text) = fs::read_to_string(root().join(&file)) else {
            continue;
        };
        for (number, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            if phrases.iter().any(|phrase| lower.contains(phrase.as_str())) {
                found.push(format!("{file}:{}: {}", number + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "say whose machine, or what the file says:\n{}",
        found.join("\n")
    );
}
