// SPDX-License-Identifier: GPL-2.0
//! A kernel architecture's facts are written in the one table, nowhere else.

use super::rust_files;
use crate::project_root;
use std::fs;

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
        for target in crate::targets::KERNEL_TARGETS {
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
            let is_test = relative.ends_with("/tests.rs")
                || relative.contains("/tests/") && relative.starts_with("xtask/")
                || relative.starts_with("tests/tests/");
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
