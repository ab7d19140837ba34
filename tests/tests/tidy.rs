// SPDX-License-Identifier: GPL-2.0
//! Tidy tests: the repository agrees with its catalog and its own rules.
//!
//! These read files only; they run in milliseconds and need no compiler.

use std::fs;
use std::path::{Path, PathBuf};
use xtask::attributes::read_features;
use xtask::catalog::FEATURES;
use xtask::cfg::{Predicate, SyntaxError};
use xtask::project_root;

fn read(relative: &str) -> String {
    let path = project_root().join(relative);
    fs::read_to_string(&path).unwrap_or_else(|error| panic!("reading {}: {error}", path.display()))
}

/// One feature that `lib.rs` enables, with the comment above its attribute.
#[derive(Debug)]
struct FeatureLine {
    gate: String,
    name: String,
    comment: String,
    line_number: usize,
}

/// Reads the feature block of the shim's `lib.rs` with the audit's attribute reader.
fn lib_rs_feature_lines() -> Vec<FeatureLine> {
    let text = read("kernel-shim/src/lib.rs");
    let features = read_features(&text)
        .unwrap_or_else(|error| panic!("kernel-shim/src/lib.rs:{error}: malformed attribute"));
    let lines: Vec<&str> = text.lines().collect();
    features
        .into_iter()
        .map(|feature| FeatureLine {
            gate: feature
                .condition()
                .map_or_else(|| "(unconditional)".to_string(), |gate| gate.to_string()),
            comment: comment_heading(&lines[..feature.line - 1]),
            line_number: feature.line,
            name: feature.name,
        })
        .collect()
}

/// The comment that heads what follows `lines`: their last group of `//` lines.
fn comment_heading(lines: &[&str]) -> String {
    // One comment heads a group of lines with the same status, as in the kernel: it lasts
    // until the next comment starts.
    let mut comment = String::new();
    let mut previous_was_comment = false;
    for line in lines {
        let Some(text) = line.trim().strip_prefix("//") else {
            previous_was_comment = false;
            continue;
        };
        if !previous_was_comment {
            comment.clear();
        }
        comment.push_str(text.trim());
        comment.push(' ');
        previous_was_comment = true;
    }
    comment
}

#[test]
fn lib_rs_feature_block_matches_the_catalog() {
    let lines = lib_rs_feature_lines();
    let found: Vec<(&str, &str)> = lines
        .iter()
        .map(|line| (line.name.as_str(), line.gate.as_str()))
        .collect();
    // Both sides as the reader prints them, so that spacing and line breaks do not count.
    let gates: Vec<String> = FEATURES
        .iter()
        .map(|feature| match Predicate::parse(feature.gate) {
            Ok(gate) => gate.to_string(),
            Err(error) => panic!("catalog gate of `{}`: {error}", feature.name),
        })
        .collect();
    let expected: Vec<(&str, &str)> = FEATURES
        .iter()
        .zip(&gates)
        .map(|(feature, gate)| (feature.name, gate.as_str()))
        .collect();
    assert_eq!(
        found, expected,
        "kernel-shim/src/lib.rs's feature block must list the catalog's features, in its \
         order, each under the catalog's gate"
    );
    for (line, feature) in lines.iter().zip(FEATURES) {
        let comment = line.comment.to_lowercase();
        match feature.stable_since {
            Some(release) => assert!(
                comment.contains(&format!("stable since rust {release}.")),
                "lib.rs:{}: `{}` needs a `// Stable since Rust {release}.` comment above it, \
                 found {:?}",
                line.line_number,
                feature.name,
                line.comment
            ),
            None => assert!(
                comment.contains("expected to become stable"),
                "lib.rs:{}: unstable `{}` needs an `Expected to become stable.` comment, \
                 found {:?}",
                line.line_number,
                feature.name,
                line.comment
            ),
        }
    }
}

#[test]
fn every_feature_has_an_example_declared_in_cargo_toml() {
    let manifest = read("examples/Cargo.toml");
    for feature in FEATURES {
        let file = project_root().join(format!("examples/{}.rs", feature.example));
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

/// Every `feature(NAME)` that a crate root enables, with or without `cfg_attr`.
fn enabled_features(text: &str) -> Result<Vec<String>, SyntaxError> {
    Ok(read_features(text)?
        .into_iter()
        .map(|feature| feature.name)
        .collect())
}

#[test]
fn drivers_enable_no_feature() {
    // Kbuild turns the allowed features on for every driver (`-Zcrate-attr='feature(...)'`),
    // so a driver that enables one itself fails (E0636), and one outside the list is refused
    // (E0725): the examples and the target programs, built as drivers, enable none.
    let root = project_root();
    let mut drivers = rust_files(&root.join("examples"));
    drivers.extend(["tests/targets/run.rs", "tests/targets/sites.rs"].map(|file| root.join(file)));
    for file in drivers {
        let text = fs::read_to_string(&file).unwrap();
        let names = enabled_features(&text)
            .unwrap_or_else(|error| panic!("{}:{error}: malformed attribute", file.display()));
        assert!(
            names.is_empty(),
            "{} enables {names:?}: a driver writes no #![feature], since Kbuild already turns \
             on the kernel's rust_allowed_features ({}) for it, and allows no other",
            file.display(),
            xtask::catalog::RUST_ALLOWED_FEATURES
        );
    }
}

#[test]
fn the_feature_extractor_sees_cfg_attr_lines() {
    let text =
        "#![no_std]\n#![cfg_attr(kshim_kernel_mode, feature(raw_ref_op))]\n#![feature(a, b)]\n";
    assert_eq!(enabled_features(text).unwrap(), ["raw_ref_op", "a", "b"]);
}

/// Every `.rs` file below `dir`, skipping build output.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        {
            let path = entry.unwrap().path();
            if path.is_dir() {
                // Third-party crate roots are kept as published (see their README).
                let third_party = path.ends_with("tests/fixtures/audit/crates");
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

/// The licence line every source file opens with, as the kernel's do.
const SPDX: &str = "// SPDX-License-Identifier: GPL-2.0";

#[test]
fn every_source_file_starts_with_its_licence_and_a_module_doc() {
    let root = project_root();
    let mut checked = 0;
    for top in ["kernel-shim", "examples", "xtask", "tests"] {
        for file in rust_files(&root.join(top)) {
            let text = fs::read_to_string(&file).unwrap();
            // Fixtures are inputs whose lines tests quote, kept as the files they copy.
            let fixture = file.starts_with(root.join("tests/fixtures"));
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
        checked > 20,
        "only {checked} source files found: is the walk broken?"
    );
}

#[test]
fn generated_docs_are_up_to_date() {
    // Without a report, the statuses region of docs/features.md is kept as it is: the check is
    // that every part generated from the catalog agrees with it.
    for (path, expected) in xtask::docs::generated_files(&project_root(), None).unwrap() {
        let found = fs::read_to_string(&path).unwrap_or_default();
        assert!(
            found == expected,
            "{} is stale: run `cargo xtask docs` to regenerate it",
            path.display()
        );
    }
}

#[test]
fn the_compatibility_page_is_generated_from_the_recorded_reports() {
    // The page, its reports and the regions of docs/features.md: what `cargo xtask docs
    // --check` checks in CI, here for `cargo test` too.
    let root = project_root();
    for recorded in [
        xtask::docs::MATRIX_REPORT,
        xtask::docs::USAGE_REPORT,
        xtask::docs::page::PAGE,
    ] {
        assert!(
            root.join(recorded).is_file(),
            "{recorded} is missing: record a real run with `cargo xtask docs --report FILE --usage FILE`"
        );
    }
    assert_eq!(
        xtask::docs::regenerate(&root, None, None, true).unwrap(),
        xtask::Verdict::Success,
        "a generated file is stale: run `cargo xtask docs`"
    );
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

#[test]
fn workflow_takes_its_toolchains_from_the_pin_file() {
    let workflow = read(".github/workflows/matrix.yml");
    let pins = xtask::pins::Pins::load(&project_root().join("toolchains.toml")).unwrap();
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
    let matrix = xtask::ci_matrix::job_matrix(&pins, pins.pins.len()).unwrap();
    for pin in &pins.pins {
        assert_eq!(
            matrix.matches(&format!("\"pins\":\"{}\"", pin.id)).count(),
            1,
            "pin {} in {matrix}",
            pin.id
        );
    }
}

/// Every key of a JSON value, at any depth.
fn json_keys(value: &xtask::json::Value, keys: &mut std::collections::BTreeSet<String>) {
    match value {
        xtask::json::Value::Object(members) => {
            for (key, member) in members {
                keys.insert(key.clone());
                json_keys(member, keys);
            }
        }
        xtask::json::Value::Array(elements) => {
            for element in elements {
                json_keys(element, keys);
            }
        }
        _ => {}
    }
}

/// A report with one toolchain, every feature cell and one failing build, so that its JSON
/// holds every key the layout has.
fn sample_report() -> xtask::report::Report {
    use xtask::catalog::{Release, FEATURES};
    use xtask::expect::{Outcome, ToolchainVerdict};
    use xtask::plan::{Kind, Mode};
    use xtask::report::platforms::{CrossCell, KnownCell, Platforms};
    use xtask::report::{BuildCell, FeatureCell, Observed, Report, ToolchainEntry};
    use xtask::status::Status;
    let release = Release::new(1, 85, 0);
    Report {
        toolchains: vec![ToolchainEntry {
            id: "t".into(),
            spec: "t".into(),
            source: None,
            pin: None,
            rustc: Some("/r".into()),
            release_text: Some("1.85.0".into()),
            release: Some(release),
            channel: Some("stable".into()),
            commit_date: None,
            host: None,
            verdict: ToolchainVerdict::Ok,
        }],
        features: FEATURES
            .iter()
            .map(|feature| {
                let status = xtask::expect::expected_status(feature, release);
                vec![FeatureCell {
                    observed: Observed::Status(status),
                    expected: Some(Status::Gated),
                }]
            })
            .collect(),
        builds: vec![BuildCell {
            toolchain: 0,
            target: "kernel".into(),
            mode: Mode::Kernel,
            kind: Kind::Test,
            outcome: Outcome::Fail,
            expected: Outcome::Pass,
            first_error: Some("1 of 2 tests failed".into()),
            seconds: 1.0,
            cached: false,
            tests: Some((1, 1, 0)),
        }],
        strict: false,
        kbuild: vec![xtask::report::kbuild::KbuildCell {
            toolchain: 0,
            fixture: "outside_allow_list".into(),
            expected: Some("E0725".into()),
            observed: Some(vec!["E0725".into()]),
            first_error: Some(
                "error[E0725]: the feature `coerce_unsized` is not in the list".into(),
            ),
            seconds: 0.1,
            cached: false,
        }],
        shard: None,
        platforms: Platforms {
            triples: vec!["aarch64-unknown-none".into()],
            sources: vec![Some(Ok("rust-web-src=1.85.0".into()))],
            known: vec![KnownCell {
                toolchain: 0,
                triple: "aarch64-unknown-none".into(),
                observed: Some(true),
                expected: Some(true),
                error: None,
            }],
            cross: vec![CrossCell {
                toolchain: 0,
                triple: "aarch64-unknown-none".into(),
                target: "sites".into(),
                kind: Kind::Objects,
                mode: Some(Mode::Kernel),
                outcome: Outcome::Pass,
                expected: Outcome::Pass,
                first_error: None,
                detail: Some("3 static-branch sites".into()),
                seconds: 0.4,
                cached: false,
            }],
        },
    }
}

#[test]
fn the_matrix_page_documents_the_report_schema_as_the_code_does() {
    let readme = read("docs/matrix.md");
    let block = readme
        .split("## The JSON report")
        .nth(1)
        .and_then(|section| section.split("```text\n").nth(1))
        .and_then(|block| block.split("```").next())
        .expect("docs/matrix.md has a ```text block under \"## The JSON report\"");
    let documented: std::collections::BTreeSet<String> = block
        .split('"')
        .collect::<Vec<_>>()
        .windows(2)
        .filter(|pair| pair[1].trim_start().starts_with(':'))
        .map(|pair| pair[0].to_string())
        .collect();
    let mut written = std::collections::BTreeSet::new();
    // As `matrix` writes it: stamped with the run's date.
    json_keys(&xtask::date::stamp(sample_report().to_json()), &mut written);
    // The per-toolchain objects are keyed by toolchain id, which the layout shows by example.
    written.remove("t");
    let undocumented: Vec<&String> = written.difference(&documented).collect();
    let stale: Vec<&String> = documented
        .difference(&written)
        .filter(|key| !key.contains('.') && !key.contains('-'))
        .collect();
    assert!(
        undocumented.is_empty() && stale.is_empty(),
        "docs/matrix.md's JSON layout is out of step with `Report::to_json`: keys written but not \
         documented {undocumented:?}, documented but not written {stale:?}"
    );
}

/// What of `text` is product code: its `#[cfg(test)]` module and its `//` comments left out.
fn code_only(text: &str) -> String {
    let text = text
        .split("#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or_default();
    let lines = text
        .lines()
        .map(|line| line.split("//").next().unwrap_or_default());
    lines.collect::<Vec<_>>().join("\n")
}

/// The facts about one kernel architecture that a file states, as `(fact, line)`.
fn architecture_facts(code: &str) -> Vec<(String, usize)> {
    let mut found = Vec::new();
    for (number, line) in code.lines().enumerate() {
        for target in xtask::targets::KERNEL_TARGETS {
            if line.contains(&format!("\"{}", target.triple)) {
                found.push((format!("the triple {}", target.triple), number + 1));
            }
        }
        let words = line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
        for word in words.filter(|word| word.starts_with("EM_")) {
            found.push((format!("the ELF machine {word}"), number + 1));
        }
    }
    // A cfg naming two or more architectures in one `any(...)`, however it is wrapped.
    for (at, _) in code.match_indices("any(") {
        let inside = code[at..].split(')').next().unwrap_or_default();
        if inside.matches("target_arch").count() >= 2 {
            let line = code[..at].matches('\n').count() + 1;
            found.push(("a list of target_arch values".to_owned(), line));
        }
    }
    found
}

#[test]
fn architecture_facts_live_in_the_one_table() {
    // The table, and the shim's per-architecture modules (as the kernel's `arch/` headers).
    let homes = [
        "xtask/src/targets.rs",
        "kernel-shim/src/arch.rs",
        "kernel-shim/src/arch/",
    ];
    let root = project_root();
    let mut misplaced = Vec::new();
    let mut checked = 0;
    for top in ["kernel-shim", "examples", "xtask", "tests"] {
        for file in rust_files(&root.join(top)) {
            let relative = file
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            // Tests name the architectures they test: a test's data is not a second table.
            let is_test = relative.starts_with("tests/tests/")
                || relative.ends_with("/tests.rs")
                || relative.contains("/tests/") && relative.starts_with("xtask/");
            if is_test || homes.iter().any(|home| relative.starts_with(home)) {
                continue;
            }
            let code = code_only(&fs::read_to_string(&file).unwrap());
            for (fact, line) in architecture_facts(&code) {
                misplaced.push(format!("{relative}:{line}: {fact}"));
            }
            checked += 1;
        }
    }
    assert!(
        checked > 50,
        "only {checked} files checked: is the walk broken?"
    );
    assert!(
        misplaced.is_empty(),
        "architecture facts belong in xtask/src/targets.rs's KERNEL_TARGETS (or the shim's \
         arch/ modules; the shim's code asks `cfg(kshim_have_arch)`):\n{}",
        misplaced.join("\n")
    );
}

#[test]
fn the_architecture_check_sees_what_it_looks_for() {
    let wrapped = "#[cfg(any(\n    target_arch = \"x86_64\",\n    target_arch = \"s390x\"\n))]";
    assert_eq!(architecture_facts(wrapped).len(), 1);
    let triple = "let t = \"aarch64-unknown-none\";";
    assert_eq!(
        architecture_facts(triple)[0].0,
        "the triple aarch64-unknown-none"
    );
    assert_eq!(architecture_facts("machine: elf::EM_S390,").len(), 1);
    let single = "#[cfg(target_arch = \"x86_64\")]\n#[cfg(any(unix, windows))]";
    assert!(architecture_facts(single).is_empty());
    assert!(architecture_facts(&code_only("// x86_64-unknown-none\n")).is_empty());
}

/// GitHub's anchor for a Markdown heading: lower case, spaces to `-`, punctuation dropped.
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

/// The anchors of a Markdown file's headings, fenced code left out.
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
    let root = project_root();
    let mut pages = vec![PathBuf::from("README.md")];
    for entry in fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|extension| extension == "md") {
            pages.push(path.strip_prefix(&root).unwrap().to_path_buf());
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
fn the_layout_page_names_every_module_of_the_xtask() {
    let layout = read("docs/layout.md");
    let lib = read("xtask/src/lib.rs");
    let missing: Vec<&str> = lib
        .lines()
        .filter_map(|line| {
            let line = line.trim_start_matches("pub ");
            line.strip_prefix("mod ")?.strip_suffix(';')
        })
        .filter(|module| !layout.contains(&format!("`{module}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/layout.md does not say where these modules stand: {missing:?}"
    );
}

/// The most lines a source file may have (`wc -l`): past it, a file holds more than one idea.
const MOST_LINES: usize = 700;

#[test]
fn no_source_file_is_over_700_lines() {
    let root = project_root();
    let manifest = read("Cargo.toml");
    let members: Vec<&str> = manifest
        .lines()
        .find_map(|line| line.strip_prefix("members = "))
        .expect("Cargo.toml lists the workspace's members on one `members = [...]` line")
        .trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .map(|member| member.trim().trim_matches('"'))
        .collect();
    let mut checked = 0;
    let mut long = Vec::new();
    for member in members {
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
