// SPDX-License-Identifier: GPL-2.0
//! Which Rust Kconfig symbols a tree has (its samples and drivers) and which objects each builds,
//! read from the tree's own `Kconfig` and `Makefile` files.

use std::path::Path;

/// The Rust Kconfig symbols to turn on: every `SAMPLE_RUST_*` of `samples/rust/Kconfig`, and
/// every symbol under `drivers/` whose `depends on` names `RUST` or, in turn, such a symbol (the
/// PHY driver that depends on `RUST_PHYLIB_ABSTRACTIONS`); each with whether it is a tristate.
pub(crate) fn rust_symbols(tree: &Path) -> Vec<(String, bool)> {
    let mut kconfigs = vec![tree.join("samples/rust/Kconfig")];
    crate::kernel::rules::files_under(
        &tree.join("drivers"),
        &|name| name.starts_with("Kconfig"),
        &mut kconfigs,
    );
    // Every entry, after whether it is a Rust sample.
    let mut entries: Vec<(bool, KconfigEntry)> = Vec::new();
    for file in kconfigs {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let is_samples = file.ends_with("samples/rust/Kconfig");
        for entry in kconfig_entries(&text) {
            entries.push((is_samples && entry.name.starts_with("SAMPLE_RUST_"), entry));
        }
    }
    let mut rust = std::collections::BTreeSet::from(["RUST".to_owned()]);
    while let Some((_, entry)) = entries.iter().find(|(sample, entry)| {
        let mut words = entry.depends.iter().flat_map(|condition| {
            condition.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        });
        !rust.contains(&entry.name) && (*sample || words.any(|word| rust.contains(word)))
    }) {
        rust.insert(entry.name.clone());
    }
    let mut found: Vec<(String, bool)> = entries
        .into_iter()
        .filter(|(_, entry)| rust.contains(&entry.name) && entry.name != "SAMPLES_RUST")
        .map(|(_, entry)| (entry.name, entry.tristate))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// One `config` or `menuconfig` entry of a Kconfig file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KconfigEntry {
    pub name: String,
    pub tristate: bool,
    /// Each `depends on` line's condition, as written.
    pub depends: Vec<String>,
    /// The conditions of the `if ... endif` blocks around it, outermost first.
    pub within: Vec<String>,
}

/// The entries of one Kconfig file's text, in order.
pub(crate) fn kconfig_entries(text: &str) -> Vec<KconfigEntry> {
    let mut entries: Vec<KconfigEntry> = Vec::new();
    let mut blocks: Vec<String> = Vec::new();
    // A help text's lines are prose: they end at the next keyword line.
    let mut in_help = false;
    for line in text.lines() {
        let indented = line.starts_with([' ', '\t']);
        let line = line.trim();
        if in_help && (indented || line.is_empty()) {
            continue;
        }
        in_help = false;
        if let Some(name) = line
            .strip_prefix("config ")
            .or_else(|| line.strip_prefix("menuconfig "))
        {
            entries.push(KconfigEntry {
                name: name.trim().to_owned(),
                tristate: false,
                depends: Vec::new(),
                within: blocks.clone(),
            });
        } else if let Some(condition) = line.strip_prefix("if ") {
            blocks.push(condition.trim().to_owned());
        } else if line.starts_with("endif") {
            blocks.pop();
        } else if line == "help" || line == "---help---" {
            in_help = true;
        } else if let Some(entry) = entries.last_mut() {
            if line.starts_with("tristate") {
                entry.tristate = true;
            }
            if let Some(condition) = line.strip_prefix("depends on") {
                entry.depends.push(condition.trim().to_owned());
            }
        }
    }
    entries
}

/// The symbols of `.config` that are `y` or `m`.
pub(crate) fn enabled_in(config: &str) -> Vec<String> {
    config
        .lines()
        .filter_map(|line| {
            let (name, value) = line.strip_prefix("CONFIG_")?.split_once('=')?;
            (value == "y" || value == "m").then(|| name.to_owned())
        })
        .collect()
}

/// The Rust objects a symbol builds: from the `Makefile` beside the `Kconfig` that declares it,
/// each `obj-$(CONFIG_X) += NAME.o` whose `NAME.rs` exists, or the `.rs` members of a composite
/// `NAME-y := ...`; paths relative to the tree.
pub(crate) fn objects_of(tree: &Path, symbol: &str) -> Vec<String> {
    let mut objects = Vec::new();
    let mut makefiles = Vec::new();
    crate::kernel::rules::files_under(
        &tree.join("drivers"),
        &|name| name == "Makefile",
        &mut makefiles,
    );
    makefiles.push(tree.join("samples/rust/Makefile"));
    let needle = format!("$(CONFIG_{symbol})");
    for makefile in makefiles {
        let Ok(text) = std::fs::read_to_string(&makefile) else {
            continue;
        };
        // A list continued over lines (`rust_binder-y := \` then one member a line) is one.
        let text = text.replace("\\\n", " ");
        let dir = makefile.parent().unwrap_or(tree);
        let relative = dir.strip_prefix(tree).unwrap_or(dir);
        let rust_object = |name: &&str| {
            name.strip_suffix(".o")
                .is_some_and(|stem| dir.join(format!("{stem}.rs")).is_file())
        };
        let object = |name: &str| relative.join(name).display().to_string();
        let lines = text.lines().filter(|line| line.contains(&needle));
        for (_, names) in lines.filter_map(assigned) {
            for name in names.split_whitespace() {
                if rust_object(&name) {
                    objects.push(object(name));
                } else if let Some(stem) = name.strip_suffix(".o") {
                    let composite = [format!("{stem}-y"), format!("{stem}-objs")];
                    let members = text
                        .lines()
                        .filter_map(assigned)
                        .filter(|(left, _)| composite.iter().any(|key| left.trim() == key))
                        .flat_map(|(_, right)| right.split_whitespace());
                    objects.extend(members.filter(rust_object).map(object));
                }
            }
        }
    }
    objects.sort();
    objects.dedup();
    objects
}

/// The right side of a `+=` or `:=` line, with its left.
fn assigned(line: &str) -> Option<(&str, &str)> {
    line.split_once("+=").or_else(|| line.split_once(":="))
}
