// SPDX-License-Identifier: GPL-2.0
//! What the tree's Makefiles say: its version, the allowed list and the flags Kbuild gives a
//! driver, the levels it gives the feature lints, the crate roots, and the `--cfg`s
//! `rust/Makefile` gives each crate of `rust/`.
//!
//! Make is not evaluated: the reader takes the few shapes these files have used from 6.1 to
//! 7.3 (`NAME := words`, `\` continuations, `$(if $(call rustc-min-version,N),words)`) and
//! errors where a needed one is missing.

use super::Build;
use crate::catalog::Release;
use crate::features::kconfig::release_of_rustc_version;
use anyhow::{ensure, Context};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The version as the top Makefile sets it: `VERSION.PATCHLEVEL.SUBLEVEL` and `EXTRAVERSION`
/// (`7.3.0-rc7`).
pub(super) fn version(makefile: &str) -> Option<String> {
    let value = |name: &str| {
        makefile.lines().find_map(|line| {
            let (key, value) = line.split_once('=')?;
            (key.trim() == name).then(|| value.trim().to_string())
        })
    };
    let numbers = [value("VERSION")?, value("PATCHLEVEL")?, value("SUBLEVEL")?];
    let numeric =
        |number: &String| !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit());
    let extra = value("EXTRAVERSION").unwrap_or_default();
    numbers
        .iter()
        .all(numeric)
        .then(|| format!("{}{extra}", numbers.join(".")))
}

/// The logical lines of a Makefile: `\`-continued lines joined with a space, comments kept.
fn logical_lines(text: &str) -> Vec<String> {
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    joined.lines().map(String::from).collect()
}

/// The value of the first assignment to `name` (`name := value`, `name = value`, with or
/// without `export`).
pub(super) fn assignment(text: &str, name: &str) -> Option<String> {
    logical_lines(text).into_iter().find_map(|line| {
        let line = line.strip_prefix("export ").unwrap_or(&line);
        let rest = line.strip_prefix(name)?.trim_start();
        let operators = [":=", "?=", "="];
        let value = operators.iter().find_map(|op| rest.strip_prefix(op))?;
        Some(value.trim().to_string())
    })
}

/// `rust_allowed_features` of `scripts/Makefile.build`, or `None` when it sets none.
pub(super) fn allowed_features(makefile_build: &str) -> Option<Vec<String>> {
    let value = assignment(makefile_build, "rust_allowed_features")?;
    let names = value
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty());
    Some(names.map(String::from).collect())
}

/// The words of `rust_common_cmd`, as written.
pub(super) fn rust_common_cmd(makefile_build: &str) -> anyhow::Result<Vec<String>> {
    let command =
        assignment(makefile_build, "rust_common_cmd").context("it defines no `rust_common_cmd`")?;
    Ok(command.split_whitespace().map(str::to_string).collect())
}

/// The words of `rust_common_cmd` that say which features a driver may use and has on
/// (`-Zallow-features=`, `-Zcrate-attr=`), quotes removed and the allowed list put in.
pub(super) fn driver_flags(command: &[String], allowed: &[String]) -> anyhow::Result<Vec<String>> {
    let list = allowed.join(",");
    let flags: Vec<String> = command
        .iter()
        .filter(|word| word.starts_with("-Zallow-features=") || word.starts_with("-Zcrate-attr="))
        .map(|word| {
            word.replace(['\'', '"'], "")
                .replace("$(rust_allowed_features)", &list)
        })
        .collect();
    ensure!(
        flags
            .iter()
            .any(|flag| flag.starts_with("-Zallow-features=")),
        "`rust_common_cmd` passes no -Zallow-features"
    );
    Ok(flags)
}

/// The lints about a feature attribute itself, which fire whether or not the crate uses the
/// feature, so a probe meets them as the real crate does (`unused_features` depends on use).
pub(super) const FEATURE_LINTS: [&str; 3] = [
    "stable_features",
    "internal_features",
    "incomplete_features",
];

/// The [`FEATURE_LINTS`] Kbuild makes errors for every crate, by the `-A`/`-W`/`-D`/`-F`
/// words of the top Makefile's `rust_common_flags` and `KBUILD_RUSTFLAGS`, then, when `werror`
/// (the configuration sets `CONFIG_WERROR`), those it adds under `CONFIG_WERROR` in the top
/// Makefile or `warn` (`scripts/Makefile.extrawarn`, 7.3's `scripts/Makefile.warn`): a
/// `-Dwarnings` there makes each lint still at warn an error (6.1's `stable_features`; 6.12
/// and 7.3 allow it first).
pub(super) fn denied_feature_lints(makefile: &str, warn: &str, werror: bool) -> Vec<String> {
    let mut values: Vec<String> = ["rust_common_flags", "KBUILD_RUSTFLAGS"]
        .iter()
        .filter_map(|name| assignment(makefile, name))
        .collect();
    if werror {
        values.extend(werror_rustflags(makefile));
        values.extend(werror_rustflags(warn));
    }
    let mut levels = FEATURE_LINTS.map(|lint| (lint, 'W'));
    let mut warnings = 'W';
    for word in values.iter().flat_map(|value| value.split_whitespace()) {
        let Some((level, lint)) = word.strip_prefix('-').and_then(|flag| {
            let level = flag.chars().next().filter(|c| "AWDF".contains(*c))?;
            Some((level, &flag[1..]))
        }) else {
            continue;
        };
        if lint == "warnings" {
            warnings = level;
        } else if let Some(entry) = levels.iter_mut().find(|(name, _)| *name == lint) {
            entry.1 = level;
        }
    }
    levels
        .into_iter()
        .filter(|&(_, level)| matches!((level, warnings), ('D' | 'F', _) | ('W', 'D' | 'F')))
        .map(|(lint, _)| lint.to_string())
        .collect()
}

/// What is added to `KBUILD_RUSTFLAGS` only under `CONFIG_WERROR`: by a
/// `KBUILD_RUSTFLAGS-$(CONFIG_WERROR) +=` line (6.1, 6.12), or by `KBUILD_RUSTFLAGS +=` inside
/// an `ifdef CONFIG_WERROR` or `ifneq (...$(CONFIG_WERROR),)` block (7.3).
fn werror_rustflags(text: &str) -> Vec<String> {
    let mut values = Vec::new();
    // Per open conditional, whether it is one that `CONFIG_WERROR` turns on.
    let mut blocks: Vec<bool> = Vec::new();
    for line in logical_lines(text) {
        let line = line.trim();
        let first = line.split_whitespace().next().unwrap_or_default();
        match first {
            "ifdef" | "ifneq" => blocks.push(line.contains("CONFIG_WERROR")),
            "ifndef" | "ifeq" => blocks.push(false),
            "else" => blocks.last_mut().into_iter().for_each(|on| *on = false),
            "endif" => drop(blocks.pop()),
            _ => {}
        }
        let value = line
            .strip_prefix("KBUILD_RUSTFLAGS-$(CONFIG_WERROR)")
            .or_else(|| {
                let rest = line.strip_prefix("KBUILD_RUSTFLAGS")?;
                blocks.contains(&true).then_some(rest)
            })
            .and_then(|rest| rest.trim_start().strip_prefix("+="));
        values.extend(value.map(str::to_string));
    }
    values
}

/// Top directories whose `.rs` files are no Kbuild objects: `rust/` has its own Makefile, the
/// others hold host programs and user-space tools.
const NOT_KBUILD: [&str; 5] = ["rust", "scripts", "tools", "Documentation", ".git"];

/// The crate roots of the tree: those `rust/Makefile` compiles (`$(src)/PATH.rs`), then every
/// `.rs` file whose `NAME.o` its directory's `Makefile` or `Kbuild` names, the test the
/// kernel's own `scripts/generate_rust_analyzer.py` applies; it looks under `samples/` and
/// `drivers/` only, this everywhere but [`NOT_KBUILD`] (7.3 also has `mm/kasan/` and `lib/`).
pub(super) fn crate_roots(
    root: &Path,
    rust_makefile: &str,
) -> anyhow::Result<Vec<(String, Build)>> {
    let mut roots: Vec<(String, Build)> = Vec::new();
    for word in rust_makefile.split(|c: char| c.is_whitespace() || c == ':') {
        let Some(path) = word.strip_prefix("$(src)/") else {
            continue;
        };
        let path = format!("rust/{path}");
        if path.ends_with(".rs")
            && root.join(&path).is_file()
            && !roots.iter().any(|(known, _)| *known == path)
        {
            roots.push((path, Build::Library));
        }
    }
    let mut sources = Vec::new();
    let entries = std::fs::read_dir(root).with_context(|| format!("listing {}", root.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("listing {}", root.display()))?;
        let name = entry.file_name();
        if entry.file_type()?.is_dir() && !NOT_KBUILD.iter().any(|skip| name == *skip) {
            super::files_under(&entry.path(), &|name| name.ends_with(".rs"), &mut sources);
        }
    }
    // Each directory's `Makefile` and `Kbuild`, read once.
    let mut build_files: HashMap<PathBuf, String> = HashMap::new();
    let mut others = Vec::new();
    for path in sources {
        let dir = path.parent().unwrap_or(root);
        let text = build_files.entry(dir.to_owned()).or_insert_with(|| {
            ["Makefile", "Kbuild"]
                .iter()
                .filter_map(|name| std::fs::read_to_string(dir.join(name)).ok())
                .collect::<Vec<_>>()
                .join("\n")
        });
        let stem = path.file_stem().unwrap_or_default().to_string_lossy();
        if text.contains(&format!("{stem}.o")) {
            let relative = path.strip_prefix(root).unwrap_or(&path);
            others.push(relative.to_string_lossy().into_owned());
        }
    }
    others.sort();
    roots.extend(others.into_iter().map(|path| (path, Build::Kbuild)));
    Ok(roots)
}

/// A crate's name from its root, as Kbuild and `rust/Makefile` name it: `rust/kernel/lib.rs`
/// is `kernel`, `rust/pin-init/internal/src/lib.rs` is `pin_init_internal`,
/// `samples/rust/rust_minimal.rs` is `rust_minimal`.
pub(super) fn crate_name(root: &str) -> String {
    let path = root.strip_prefix("rust/").unwrap_or(root);
    let file = path.rsplit('/').next().unwrap_or(path);
    let ends = ["/src/lib.rs", "/lib.rs"];
    let crate_dir = ends.iter().find_map(|end| path.strip_suffix(end));
    let name = crate_dir.unwrap_or_else(|| file.trim_end_matches(".rs"));
    name.replace(['/', '-'], "_")
}

/// The `--cfg`s `rust/Makefile` gives crate `name` (`NAME-cfgs := ...`), each with the release
/// from which it is given when it stands in `$(if $(call rustc-min-version,N),...)`.
pub(super) fn crate_cfgs(rust_makefile: &str, name: &str) -> Vec<(String, Option<Release>)> {
    let Some(value) = assignment(rust_makefile, &format!("{name}-cfgs")) else {
        return Vec::new();
    };
    let mut cfgs = Vec::new();
    let mut rest = value.as_str();
    while !rest.trim().is_empty() {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix("$(if $(call rustc-min-version,") {
            let Some((number, after)) = after.split_once(')') else {
                break;
            };
            let Some((words, after)) = after.trim_start_matches(',').split_once(')') else {
                break;
            };
            let from = number.trim().parse().ok().map(release_of_rustc_version);
            cfgs.extend(
                words
                    .split_whitespace()
                    .map(|word| (word.to_string(), from)),
            );
            rest = after;
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            cfgs.push((rest[..end].to_string(), None));
            rest = &rest[end..];
        }
    }
    cfgs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shapes of 6.1's top Makefile (6.12's adds `-Astable_features` to the first).
    const MAKEFILE_6_1: &str = "\
export rust_common_flags := --edition=2021 \\
\t\t\t    -Dunsafe_op_in_unsafe_fn -Drust_2018_idioms \\
\t\t\t    -Wmissing_docs
KBUILD_RUSTFLAGS := $(rust_common_flags) \\
\t\t    -Cpanic=abort -Dclippy::float_arithmetic
KBUILD_RUSTFLAGS_KERNEL :=
KBUILD_RUSTFLAGS-$(CONFIG_WERROR) += -Dwarnings
KBUILD_RUSTFLAGS += $(KBUILD_RUSTFLAGS-y)
";

    #[test]
    fn werror_denies_the_feature_lints_the_flags_leave_at_warn() {
        assert_eq!(denied_feature_lints(MAKEFILE_6_1, "", true), FEATURE_LINTS);
        assert!(denied_feature_lints(MAKEFILE_6_1, "", false).is_empty());
        let allows = MAKEFILE_6_1.replace("--edition=2021", "--edition=2021 -Astable_features");
        assert_eq!(
            denied_feature_lints(&allows, "", true),
            ["internal_features", "incomplete_features"]
        );
        // 7.3 sets it in a block of scripts/Makefile.warn; a `-D` needs no `-Dwarnings`.
        let moved = MAKEFILE_6_1.replace("KBUILD_RUSTFLAGS-$(CONFIG_WERROR) += -Dwarnings", "");
        let warn = "ifneq ($(findstring e, $(KBUILD_EXTRA_WARN))$(CONFIG_WERROR),)\n\
                    KBUILD_CPPFLAGS\t\t+= -Werror\nKBUILD_RUSTFLAGS\t+= -Dwarnings\nendif\n\
                    ifdef CONFIG_X\nKBUILD_RUSTFLAGS += -Dstable_features\nendif\n";
        assert_eq!(denied_feature_lints(&moved, warn, true), FEATURE_LINTS);
        assert!(denied_feature_lints(&moved, warn, false).is_empty());
        let denies = moved.replace("-Wmissing_docs", "-Wmissing_docs -Dincomplete_features");
        assert_eq!(
            denied_feature_lints(&denies, "", false),
            ["incomplete_features"]
        );
    }

    /// The Kbuild crate roots are the `.rs` files whose `NAME.o` their directory's `Makefile`
    /// or `Kbuild` names, anywhere but `rust/`, `scripts/`, `tools/`...; `rust/`'s come from
    /// `rust/Makefile`, in its order.
    #[test]
    fn crate_roots_are_the_rust_files_kbuild_names() {
        let root = crate::tests::support::scratch_dir("kernel-tree-crate-roots");
        for (path, text) in [
            ("rust/kernel/lib.rs", ""),
            ("rust/macros/lib.rs", ""),
            (
                "samples/rust/Makefile",
                "obj-$(CONFIG_SAMPLE_RUST_MINIMAL) += rust_minimal.o\n",
            ),
            ("samples/rust/rust_minimal.rs", ""),
            ("samples/rust/helper.rs", ""),
            ("drivers/block/rnull/Kbuild", "obj-m := rnull.o\n"),
            ("drivers/block/rnull/rnull.rs", ""),
            ("drivers/block/rnull/configfs.rs", ""),
            ("mm/kasan/Makefile", "obj-y += kasan_test_rust.o\n"),
            ("mm/kasan/kasan_test_rust.rs", ""),
            ("scripts/Makefile", "hostprogs += generate.o\n"),
            ("scripts/generate.rs", ""),
        ] {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let rust_makefile = "$(obj)/macros.o: $(src)/macros/lib.rs FORCE\n\
                             $(obj)/kernel.o: $(src)/kernel/lib.rs $(obj)/macros.o FORCE\n\
                             $(obj)/gone.o: $(src)/gone/lib.rs\n";
        let roots = crate_roots(&root, rust_makefile).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(
            roots,
            [
                ("rust/macros/lib.rs", Build::Library),
                ("rust/kernel/lib.rs", Build::Library),
                ("drivers/block/rnull/rnull.rs", Build::Kbuild),
                ("mm/kasan/kasan_test_rust.rs", Build::Kbuild),
                ("samples/rust/rust_minimal.rs", Build::Kbuild),
            ]
            .map(|(path, build)| (path.to_owned(), build))
        );
    }
}
