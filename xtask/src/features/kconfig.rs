// SPDX-License-Identifier: GPL-2.0
//! The kernel's compiler cfgs (`CONFIG_RUSTC_HAS_X`, set from a `RUSTC_VERSION` threshold in
//! `init/Kconfig`): the pinned trees' thresholds as a built-in table generated from them, and a
//! reader for a tree's own Kconfig file (`audit --kconfig`, `cargo xtask kernel`).

use crate::catalog::Release;
use anyhow::Context;
use std::path::Path;

/// One `config RUSTC_HAS_X` symbol that is `def_bool RUSTC_VERSION >= N`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KconfigSymbol {
    /// The cfg name the Rust code sees: `CONFIG_RUSTC_HAS_X`.
    pub cfg: String,
    /// The first release for which it is set; `None` for a cfg that Rust code tests but no
    /// Kconfig defines, so that it is never set.
    pub from: Option<Release>,
    /// Where the threshold comes from.
    pub source: String,
}

/// The pinned trees that define a threshold, each with the line: `[("7.3", 198)]`.
pub type TreeLines = &'static [(&'static str, usize)];

/// The `RUSTC_HAS_*` release thresholds of the pinned trees' own `init/Kconfig`, for a checkout
/// where they are not unpacked: `(name, RUSTC_VERSION number, [(tree id, line)])`. Generated
/// from the trees by `kernel::rules::pinned`; a test that reads the unpacked trees fails,
/// printing the table anew, when they say otherwise. 6.1's defines none.
#[rustfmt::skip]
pub const PINNED_TREES: &[(&str, u32, TreeLines)] = &[
    // generated table: start
    ("RUSTC_HAS_SPAN_FILE", 108800, &[("7.2", 186), ("7.3", 186)]),
    ("RUSTC_HAS_UNNECESSARY_TRANSMUTES", 108800, &[("6.12", 145), ("7.2", 189), ("7.3", 189)]),
    ("RUSTC_HAS_FILE_WITH_NUL", 108900, &[("7.2", 192), ("7.3", 192)]),
    ("RUSTC_HAS_FILE_AS_C_STR", 109100, &[("7.2", 195), ("7.3", 195)]),
    ("RUSTC_HAS_SUSPICIOUS_RUNTIME_SYMBOL_DEFINITIONS", 109800, &[("6.12", 148), ("7.2", 198), ("7.3", 198)]),
    // generated table: end
];

/// Where a threshold comes from: `init/Kconfig of 6.12 (line 148), 7.3 (line 198)`.
pub fn trees_source(trees: &[(&str, usize)]) -> String {
    let trees: Vec<String> = trees
        .iter()
        .map(|(id, line)| format!("{id} (line {line})"))
        .collect();
    format!("init/Kconfig of {}", trees.join(", "))
}

/// The cfgs that the trees' Rust code tests but no pinned tree's `init/Kconfig` defines, with
/// why: never set, as in the kernel.
pub fn never_set() -> impl Iterator<Item = KconfigSymbol> {
    std::iter::once(KconfigSymbol {
        cfg: "CONFIG_RUSTC_HAS_UNSAFE_PINNED".to_owned(),
        from: None,
        source: "no tree's init/Kconfig defines it (7.3's included), though pin-init's lib.rs \
                 tests it in a cfg_attr (`all(feature = \"unsafe-pinned\", \
                 CONFIG_RUSTC_HAS_UNSAFE_PINNED)`, for `feature(unsafe_pinned)`): in the kernel \
                 that branch is never on"
            .to_owned(),
    })
}

/// Reads Kconfig's `RUSTC_VERSION` number (`MAJOR * 100000 + MINOR * 100 + PATCH`): `108400`
/// is 1.84.0.
pub fn release_of_rustc_version(number: u32) -> Release {
    Release::new(number / 100_000, number / 100 % 1000, number % 100)
}

/// Reads every `config NAME` whose entry is `def_bool RUSTC_VERSION >= N` from Kconfig text;
/// any other entry (a `$(rustc-option,...)` probe, a `depends on`) says nothing about the
/// release alone and is left out, so its cfg stays undecided.
pub fn read_kconfig(text: &str, file: &str) -> Vec<KconfigSymbol> {
    thresholds(text)
        .into_iter()
        .map(|(name, line, number)| KconfigSymbol {
            cfg: format!("CONFIG_{name}"),
            from: Some(release_of_rustc_version(number)),
            source: format!("{file}:{line}"),
        })
        .collect()
}

/// [`read_kconfig`]'s entries as they are written: each name, its line and its `RUSTC_VERSION`
/// number.
pub fn thresholds(text: &str) -> Vec<(&str, usize, u32)> {
    // Each entry's name, line and threshold, and whether it is nothing more than that threshold.
    let mut entries: Vec<(&str, usize, Option<u32>, bool)> = Vec::new();
    // Whether the lines still belong to the last entry: its help text ends it.
    let mut open = false;
    for (index, line) in text.lines().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match (words.as_slice(), entries.last_mut().filter(|_| open)) {
            (["config" | "menuconfig", name], _) => {
                entries.push((name, index + 1, None, true));
                open = true;
            }
            (["def_bool", "RUSTC_VERSION", ">=", number], Some(entry)) => {
                entry.2 = number.parse().ok();
            }
            ([], _) | (_, None) => {}
            ([first, ..], _) if first.starts_with('#') => {}
            (["help" | "---help---", ..], _) => open = false,
            // Anything else (`depends on`, another default) makes the entry more than a
            // release threshold.
            (_, Some(entry)) => entry.3 = false,
        }
    }
    let symbols = entries.into_iter().filter(|entry| entry.3);
    symbols
        .filter_map(|(name, line, threshold, _)| Some((name, line, threshold?)))
        .collect()
}

/// A table (the pinned trees') with a Kconfig file's symbols in place of (or next to) its own.
pub fn with_given(
    mut symbols: Vec<KconfigSymbol>,
    given: Vec<KconfigSymbol>,
) -> Vec<KconfigSymbol> {
    for symbol in given {
        symbols.retain(|known| known.cfg != symbol.cfg);
        symbols.push(symbol);
    }
    symbols
}

/// Reads a Kconfig file's thresholds (none, for a tree older than them, such as 6.1's), refusing
/// a `.config` (a configuration, not the Kconfig that defines the symbols).
pub fn read_kconfig_file(path: &Path) -> anyhow::Result<Vec<KconfigSymbol>> {
    let file = path.display().to_string();
    let text = crate::util::files::read_text(path, 16 << 20)
        .with_context(|| format!("--kconfig: cannot read {file}"))?;
    let is_symbol = |name: &str| {
        name.strip_prefix("CONFIG_").is_some_and(|rest| {
            !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    let mut has_entry = false;
    for (index, line) in text.lines().enumerate() {
        // A `.config` line stands at the start of its line; a Kconfig's help text that quotes
        // one is indented.
        let assignment = line
            .split_once('=')
            .is_some_and(|(name, _)| is_symbol(name));
        let unset = line
            .strip_prefix("# ")
            .and_then(|rest| rest.strip_suffix(" is not set"));
        let (line, number) = (line.trim(), index + 1);
        anyhow::ensure!(
            !assignment && !unset.is_some_and(is_symbol),
            "--kconfig: {file} is a .config (line {number}: `{line}`), not a Kconfig: give the \
             tree's init/Kconfig, which defines the RUSTC_HAS_* thresholds"
        );
        has_entry |= matches!(
            line.split_whitespace().next(),
            Some("config" | "menuconfig")
        );
    }
    anyhow::ensure!(
        has_entry,
        "--kconfig: {file} is no Kconfig: it has no `config` entry; give the tree's init/Kconfig"
    );
    Ok(read_kconfig(&text, &file))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The pinned trees' thresholds as [`PINNED_TREES`] records them, then the cfgs no Kconfig
    /// defines (never set): what `kernel::rules::pinned` builds without the trees.
    pub(crate) fn built_in() -> Vec<KconfigSymbol> {
        PINNED_TREES
            .iter()
            .map(|(name, number, trees)| KconfigSymbol {
                cfg: format!("CONFIG_{name}"),
                from: Some(release_of_rustc_version(*number)),
                source: trees_source(trees),
            })
            .chain(never_set())
            .collect()
    }

    #[test]
    fn reads_release_thresholds_and_leaves_the_rest() {
        let text = "config RUSTC_HAS_COERCE_POINTEE\n\
                    \tdef_bool RUSTC_VERSION >= 108400\n\
                    \n\
                    config RUSTC_HAS_ANNOTATE_TABLEJUMP\n\
                    \tdepends on RUST\n\
                    \tdef_bool $(rustc-option,-Cllvm-args=--loongarch-annotate-tablejump)\n\
                    \n\
                    # a comment\n\
                    config RUSTC_HAS_GUARDED\n\
                    \tdepends on X86\n\
                    \tdef_bool RUSTC_VERSION >= 109000\n\
                    config RUSTC_HAS_FILE_WITH_NUL\n\
                    \tdef_bool RUSTC_VERSION >= 108900\n";
        let symbols = read_kconfig(text, "init/Kconfig");
        assert_eq!(
            symbols,
            [
                KconfigSymbol {
                    cfg: "CONFIG_RUSTC_HAS_COERCE_POINTEE".into(),
                    from: Some(Release::new(1, 84, 0)),
                    source: "init/Kconfig:1".into(),
                },
                KconfigSymbol {
                    cfg: "CONFIG_RUSTC_HAS_FILE_WITH_NUL".into(),
                    from: Some(Release::new(1, 89, 0)),
                    source: "init/Kconfig:12".into(),
                },
            ]
        );
        assert_eq!(release_of_rustc_version(109701), Release::new(1, 97, 1));
        assert!(built_in()
            .iter()
            .all(|symbol| symbol.source.contains("init/Kconfig")));
        let pinned = built_in()
            .into_iter()
            .find(|symbol| symbol.cfg == "CONFIG_RUSTC_HAS_UNSAFE_PINNED")
            .unwrap();
        assert_eq!(pinned.from, None);
        assert!(pinned.source.contains("never on"), "{}", pinned.source);
    }
    fn scratch(name: &str, text: &str) -> std::path::PathBuf {
        let directory = crate::project_root().join("target/kshim/unit-tests/kconfig");
        std::fs::create_dir_all(&directory).unwrap();
        let path = directory.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_dot_config_is_no_kconfig() {
        let dot_config = scratch(
            "dot-config",
            "#\n# Automatically generated file; DO NOT EDIT.\n#\nCONFIG_RUST=y\n\
             # CONFIG_RUST_DEBUG_ASSERTIONS is not set\nCONFIG_RUSTC_VERSION=108500\n",
        );
        let error = format!("{:#}", read_kconfig_file(&dot_config).unwrap_err());
        assert!(
            error.contains("is a .config") && error.contains("line 4: `CONFIG_RUST=y`"),
            "{error}"
        );
        let empty = scratch("empty", "# nothing\n");
        let error = format!("{:#}", read_kconfig_file(&empty).unwrap_err());
        assert!(error.contains("has no `config` entry"), "{error}");
    }

    #[test]
    fn the_given_kconfig_replaces_the_built_in_threshold() {
        let raised = scratch(
            "raised",
            "config RUSTC_HAS_FILE_WITH_NUL\n\tdef_bool RUSTC_VERSION >= 109900\n",
        );
        let symbols = with_given(built_in(), read_kconfig_file(&raised).unwrap());
        let pointee: Vec<&KconfigSymbol> = symbols
            .iter()
            .filter(|symbol| symbol.cfg == "CONFIG_RUSTC_HAS_FILE_WITH_NUL")
            .collect();
        assert_eq!(pointee.len(), 1);
        assert_eq!(pointee[0].from, Some(Release::new(1, 99, 0)));
    }

    #[test]
    fn a_kconfig_without_thresholds_is_read() {
        // 6.1's init/Kconfig, whose Rust entries are no release thresholds.
        let six_one = scratch(
            "6.1",
            "config RUST_IS_AVAILABLE\n\tdef_bool $(success,$(srctree)/scripts/rust_is_available.sh)\n\
             \thelp\n\t  This shows whether a suitable Rust toolchain is available (found).\n\
             \t  CONFIG_BFQ_GROUP_IOSCHED=y; (help text may quote a .config line)\n\n\
             config RUSTC_VERSION_TEXT\n\tstring\n\tdepends on RUST\n\
             \tdefault \"$(shell,$(RUSTC) --version 2>/dev/null)\"\n",
        );
        assert_eq!(read_kconfig_file(&six_one).unwrap(), []);
    }
}
