// SPDX-License-Identifier: GPL-2.0
//! The boot configuration of one tree, read from its own Kconfig: `tinyconfig` plus a fragment
//! with a 64-bit kernel, a serial console, the PVH entry (QEMU starts `vmlinux` itself, with no
//! decompressor), `CONFIG_RUST`, KUnit, and every Rust sample, Rust KUnit suite and the doctests
//! that the tree has and that need no hardware, all built in.

use super::super::symbols::{kconfig_entries, KconfigEntry};
use std::collections::BTreeSet;
use std::path::Path;

/// What every boot configuration turns on above `tinyconfig` (which has `EXPERT`, no modules,
/// no initrd, `KUNIT_DEFAULT_ENABLED`): a 64-bit x86 kernel (`tinyconfig` is 32-bit without
/// `ARCH=x86_64`, and Rust needs `X86_64`), `printk` with times on the 8250 serial console,
/// the PVH entry, Rust, the samples' menus and KUnit.
pub(crate) const BASE: [&str; 13] = [
    "64BIT",
    "PRINTK",
    "PRINTK_TIME",
    "EARLY_PRINTK",
    "TTY",
    "SERIAL_8250",
    "SERIAL_8250_CONSOLE",
    "HYPERVISOR_GUEST",
    "PVH",
    "RUST",
    "SAMPLES",
    "SAMPLES_RUST",
    "KUNIT",
];

/// What the fragment turns off: module versions, which Rust cannot have with some trees'
/// `MODVERSIONS` (and which a kernel without modules does not need).
pub(crate) const OFF: [&str; 1] = ["MODVERSIONS"];

/// Subsystems that need no hardware, turned on only for a sample or suite that depends on one.
pub(crate) const SOFTWARE: [&str; 2] = ["CONFIGFS_FS", "DEBUG_FS"];

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct BootConfig {
    /// Every symbol the fragment sets `=y`, in the fragment's order.
    pub on: Vec<String>,
    /// The Rust samples among them (`SAMPLE_RUST_*`).
    pub samples: Vec<String>,
}

impl BootConfig {
    /// The fragment appended to `tinyconfig`'s `.config`.
    pub(crate) fn fragment(&self) -> String {
        let on = self.on.iter().map(|symbol| format!("CONFIG_{symbol}=y\n"));
        let off = OFF
            .iter()
            .map(|symbol| format!("# CONFIG_{symbol} is not set\n"));
        on.chain(off).collect()
    }

    /// The symbols of the fragment (`CONFIG_X`) that `config` (a `.config`'s text) no longer has
    /// `=y`.
    pub(crate) fn lost(&self, config: &str) -> Vec<String> {
        let set: BTreeSet<&str> = config.lines().collect();
        let names = self.on.iter().map(|symbol| format!("CONFIG_{symbol}"));
        names
            .filter(|name| !set.contains(format!("{name}=y").as_str()))
            .collect()
    }
}

/// Reads the boot configuration of `tree` from its Kconfig files: the samples of
/// `samples/rust/Kconfig`, the KUnit entries of `rust/`'s Kconfig files and of
/// `lib/Kconfig.debug` that depend on both `RUST` and `KUNIT` (the doctests'
/// `RUST_KERNEL_DOCTESTS`, 7.3's `rust/kernel/Kconfig.test`), each kept when its conditions can
/// hold with no hardware.
pub(crate) fn boot_config(tree: &Path) -> BootConfig {
    let read = |path: &Path| {
        std::fs::read_to_string(path)
            .map(|text| kconfig_entries(&text))
            .unwrap_or_default()
    };
    let sample_entries: Vec<KconfigEntry> = read(&tree.join("samples/rust/Kconfig"))
        .into_iter()
        .filter(|entry| entry.name.starts_with("SAMPLE_RUST_"))
        .collect();
    let mut kconfigs = Vec::new();
    crate::kernel::rules::files_under(
        &tree.join("rust"),
        &|name| name.starts_with("Kconfig"),
        &mut kconfigs,
    );
    kconfigs.push(tree.join("lib/Kconfig.debug"));
    kconfigs.sort();
    let mut suite_entries: Vec<KconfigEntry> = Vec::new();
    for file in kconfigs {
        let in_rust = file.starts_with(tree.join("rust"));
        for entry in read(&file) {
            let words = words_of(entry.depends.iter().chain(&entry.within));
            // Under rust/, a KUnit entry, or one inside a KUnit menu (`if RUST_KUNIT_TESTS`).
            let in_menu = suite_entries
                .iter()
                .any(|taken| words.contains(&taken.name));
            let kunit = words.contains("KUNIT");
            if (in_rust && (kunit || in_menu)) || (kunit && words.contains("RUST")) {
                suite_entries.push(entry);
            }
        }
    }
    choose(&sample_entries, &suite_entries)
}

/// The symbols named in some conditions.
fn words_of<'a>(conditions: impl Iterator<Item = &'a String>) -> BTreeSet<String> {
    conditions
        .flat_map(|condition| {
            condition
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .filter(|word| !word.is_empty() && !["y", "m", "n"].contains(word))
                .map(str::to_owned)
        })
        .collect()
}

/// Keeps the entries whose conditions hold with what the configuration turns on, until nothing
/// changes (a suite menu's members follow their menu).
fn choose(samples: &[KconfigEntry], suites: &[KconfigEntry]) -> BootConfig {
    let mut on: Vec<String> = BASE.iter().map(|symbol| symbol.to_string()).collect();
    let candidates = samples.iter().chain(suites);
    let mut chosen: BTreeSet<String> = BTreeSet::new();
    loop {
        let before = chosen.len();
        for entry in candidates.clone() {
            let mut conditions = entry.depends.iter().chain(&entry.within);
            if conditions.all(|condition| holds(condition, &on, &chosen)) {
                chosen.insert(entry.name.clone());
            }
        }
        if chosen.len() == before {
            break;
        }
    }
    let chosen = |entry: &&KconfigEntry| chosen.contains(&entry.name);
    // The software a chosen entry needs goes before it.
    for entry in candidates.clone().filter(chosen) {
        let words = words_of(entry.depends.iter().chain(&entry.within)).into_iter();
        let software = words.filter(|word| SOFTWARE.contains(&word.as_str()));
        software.for_each(|word| crate::push_once(&mut on, word));
    }
    for entry in candidates.filter(chosen) {
        crate::push_once(&mut on, entry.name.clone());
    }
    let samples = samples.iter().filter(chosen);
    let samples = samples.map(|entry| entry.name.clone()).collect();
    BootConfig { on, samples }
}

/// Whether a Kconfig condition can hold: `A && (B || !C) && D=y`, with `on` and `chosen` set
/// and [`SOFTWARE`] available, everything else unset.
fn holds(condition: &str, on: &[String], chosen: &BTreeSet<String>) -> bool {
    let set = |word: &str| {
        on.iter().any(|symbol| symbol == word) || chosen.contains(word) || SOFTWARE.contains(&word)
    };
    let cleaned = condition.replace(['(', ')'], " ");
    cleaned.split("&&").all(|conjunct| {
        conjunct.split("||").any(|alternative| {
            let alternative = alternative.trim();
            let (negated, word) = match alternative.strip_prefix('!') {
                Some(word) => (true, word.trim()),
                None => (false, alternative),
            };
            // `KUNIT=y`, `X != n`: the symbol, which is `y` when set.
            let word = word.split(['=', '!']).next().unwrap_or(word).trim();
            set(word) != negated
        })
    })
}
