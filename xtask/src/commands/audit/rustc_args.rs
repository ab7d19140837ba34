// SPDX-License-Identifier: GPL-2.0
//! `audit --usage --rustc-args FILE`: which of a crate's rustc arguments its compiles pass on.
//!
//! Only flags known to change what the crate means and to write nothing are kept: cfgs, the
//! edition, the crate's type and name, the target, lints, the code-generation options Kbuild
//! passes, the crates it is built against and the one crate root; every other argument is left
//! out and named, since refusing known bad flags one by one missed `-Zself-profile=DIR`,
//! `-Zdump-mir-dir=DIR`, `--print=crate-name=PATH` and `-Zparse-crate-root-only` (which writes
//! nothing, so that every feature looked unused). A path the kept flags name is read by rustc,
//! so it must be a regular file (a directory for `-L` and `--sysroot`): a FIFO would block it.

use crate::util::files;
use anyhow::{bail, ensure, Context};
use std::path::Path;

/// The `-C` options kept: code generation that writes no file of its own.
const CODEGEN: &[&str] = &[
    "code-model",
    "codegen-units",
    "debug-assertions",
    "debuginfo",
    "embed-bitcode",
    "force-frame-pointers",
    "force-unwind-tables",
    "jump-tables",
    "lto",
    "metadata",
    "no-redzone",
    "opt-level",
    "overflow-checks",
    "panic",
    "relocation-model",
    "soft-float",
    "strip",
    "symbol-mangling-version",
    "target-cpu",
    "target-feature",
    "unsafe-allow-abi-mismatch",
];

/// The `-Z` options kept: those the kernel's Makefiles pass that name no path.
const UNSTABLE: &[&str] = &[
    "binary-dep-depinfo",
    "branch-protection",
    "cf-protection",
    "crate-attr",
    "direct-access-external-data",
    "dwarf-version",
    "fixed-x18",
    "function-return",
    "function-sections",
    "indirect-branch-cs-prefix",
    "llvm-module-flag",
    "merge-functions",
    "min-function-alignment",
    "no-jump-tables",
    "packed-stack",
    "panic-abort-tests",
    "patchable-function-entry",
    "reg-struct-return",
    "regparm",
    "sanitizer",
    "sanitizer-cfi-normalize-integers",
    "tune-cpu",
    "unstable-options",
    "use-sync-unwind",
];

/// The long flags kept whose value names no path.
const LONG: &[&str] = &[
    "--allow",
    "--cap-lints",
    "--cfg",
    "--check-cfg",
    "--crate-name",
    "--crate-type",
    "--deny",
    "--edition",
    "--forbid",
    "--force-warn",
    "--warn",
];

/// Every flag rustc reads a value for besides those of [`LONG`], so that a value given as the
/// next argument goes with its flag, kept or left out.
const TAKES_VALUE: &[&str] = &[
    "-A",
    "-C",
    "-D",
    "-F",
    "-L",
    "-W",
    "-Z",
    "-l",
    "-o",
    "--codegen",
    "--color",
    "--diagnostic-width",
    "--emit",
    "--env-set",
    "--error-format",
    "--explain",
    "--extern",
    "--extern-location",
    "--json",
    "--out-dir",
    "--pretty",
    "--print",
    "--remap-path-prefix",
    "--remap-path-scope",
    "--sysroot",
    "--target",
    "--unpretty",
];

/// One argument as written, split into its flag and value: `("--cfg", Some("x"))` from
/// `--cfg=x`, `-Cpanic=abort` as `("-C", Some("panic=abort"))`; a value given as the next
/// argument is joined by the caller.
fn split(arg: &str) -> (&str, Option<&str>) {
    if let Some(long) = arg.strip_prefix("--") {
        return match long.split_once('=') {
            Some((name, value)) => (&arg[..2 + name.len()], Some(value)),
            None => (arg, None),
        };
    }
    let short = arg.get(..2).filter(|flag| TAKES_VALUE.contains(flag));
    match short {
        Some(flag) if arg.len() > 2 => (flag, Some(&arg[2..])),
        _ => (arg, None),
    }
}

/// A `-C` or `-Z` option's name, spelt with dashes as rustc accepts either.
fn option_name(value: &str) -> String {
    value.split('=').next().unwrap_or("").replace('_', "-")
}

/// Refuses a path rustc would read that is not a regular file.
fn regular(what: &str, path: &str) -> anyhow::Result<()> {
    files::open_regular(Path::new(path))
        .map(drop)
        .with_context(|| format!("{what} {path}"))
}

/// Refuses a directory rustc would search that is not one.
fn directory(what: &str, path: &str) -> anyhow::Result<()> {
    let metadata = std::fs::metadata(path).with_context(|| format!("{what} {path}"))?;
    ensure!(metadata.is_dir(), "{what} {path}: it is not a directory");
    Ok(())
}

/// Why the audit leaves out `flag`'s `value`, or `None` to keep it: a specific reason for
/// what it sets itself, a general one for anything else.
fn why_left_out(flag: &str, value: Option<&str>) -> anyhow::Result<Option<&'static str>> {
    const NOT_LISTED: &str = "not on the list of flags the audit passes on";
    let value_text = value.unwrap_or("");
    let option = option_name(value_text);
    Ok(match flag {
        "-o" | "--out-dir" | "--emit" => Some("an output path"),
        "--error-format" => Some(""),
        _ if flag.starts_with('@') => Some("another argument file"),
        "-C" | "--codegen" => match option.as_str() {
            name if CODEGEN.contains(&name) => None,
            "linker" | "linker-flavor" | "link-arg" | "link-args" => Some("a linker"),
            "incremental" => Some("an output path"),
            _ => Some(NOT_LISTED),
        },
        "-Z" => match option.as_str() {
            "allow-features" => Some(""),
            name if UNSTABLE.contains(&name) => None,
            "temps-dir" => Some("an output path"),
            "llvm-plugins" | "codegen-backend" => Some("a plugin"),
            _ => Some(NOT_LISTED),
        },
        "-A" | "-W" | "-D" | "-F" | "-O" | "-g" | "--test" => None,
        _ if LONG.contains(&flag) => None,
        "--target" => {
            if value_text.ends_with(".json") || value_text.contains('/') {
                regular("--target", value_text)?;
            }
            None
        }
        "--extern" => {
            if let Some((_, path)) = value_text.split_once('=') {
                regular("--extern", path)?;
            }
            None
        }
        "-L" => {
            let path = value_text
                .split_once('=')
                .map_or(value_text, |(_, path)| path);
            directory("-L", path)?;
            None
        }
        // Kbuild's `--sysroot=/dev/null` means no sysroot at all.
        "--sysroot" if value_text == "/dev/null" => None,
        "--sysroot" => {
            directory("--sysroot", value_text)?;
            None
        }
        _ => Some(NOT_LISTED),
    })
}

/// Reads a `--rustc-args` file (one argument a line, as rustc's `@FILE`): the arguments the
/// audit's compiles pass on, and those it leaves out, each as written with why. Its own
/// `--error-format` and `-Z allow-features` go silently: the audit sets both. The file, the
/// crate root and every path a kept flag names must be there and of the right kind, and there
/// must be exactly one crate root.
pub fn read_rustc_args(file: &Path) -> anyhow::Result<(Vec<String>, Vec<String>)> {
    let text = files::read_text(file, 16 << 20)
        .with_context(|| format!("--rustc-args: cannot read {}", file.display()))?;
    let context = || format!("--rustc-args {}", file.display());
    let mut lines = text.lines();
    let (mut kept, mut left_out, mut roots) = (Vec::new(), Vec::new(), Vec::new());
    while let Some(line) = lines.next() {
        if line.is_empty() {
            continue;
        }
        if line == "-" || !line.starts_with('-') && !line.starts_with('@') {
            if line != "-" {
                regular("the crate root", line).with_context(context)?;
            }
            roots.push(line);
            continue;
        }
        let (flag, value) = split(line);
        let takes_next = value.is_none() && (LONG.contains(&flag) || TAKES_VALUE.contains(&flag));
        let next = takes_next.then(|| lines.next()).flatten();
        let written: Vec<&str> = std::iter::once(line).chain(next).collect();
        match why_left_out(flag, value.or(next)).with_context(context)? {
            Some("") => {}
            Some(why) => left_out.push(format!("`{}` ({why})", written.join(" "))),
            None => kept.extend(written.iter().map(|arg| arg.to_string())),
        }
    }
    match roots[..] {
        [root] if root != "-" => kept.push(root.to_string()),
        [] => bail!("{}: it names no crate root", context()),
        ["-"] => bail!(
            "{}: `-` (the source from standard input) is no crate root",
            context()
        ),
        _ => bail!(
            "{}: it names more than one crate root: {}",
            context(),
            roots.join(", ")
        ),
    }
    Ok((kept, left_out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_listed_flags_are_kept_and_every_other_is_named() {
        let directory = crate::project_root().join("target/kshim/unit-tests/audit-rustc-args");
        std::fs::create_dir_all(&directory).unwrap();
        let root = directory.join("lib.rs");
        std::fs::write(&root, "").unwrap();
        let file = directory.join("given.args");
        let args = [
            "--edition=2021",
            "--cfg",
            "MODULE",
            "-Cpanic=abort",
            "-C",
            "target-feature=-sse",
            "-Zcrate_attr=no_std",
            "-Dwarnings",
            "--print=crate-name",
            "--print",
            "cfg",
            "-Zparse-crate-root-only",
            "-Zself-profile=/x",
            "-Z",
            "dump-mir-dir=/x",
            "-Cllvm-args=-info-output-file=/x",
            "--remap-path-prefix=/a=/b",
            "-Zallow-features=a",
            "--error-format=short",
            "--sysroot=/dev/null",
        ];
        let mut text = args.join("\n");
        text.push('\n');
        text.push_str(&root.display().to_string());
        std::fs::write(&file, &text).unwrap();
        let (kept, left_out) = read_rustc_args(&file).unwrap();
        // The first eight and the sysroot are kept, with the root.
        let expected = [
            &args[..8],
            &["--sysroot=/dev/null", &root.display().to_string()],
        ];
        assert_eq!(kept, expected.concat());
        let named: Vec<&str> = left_out
            .iter()
            .map(|item| item.split(" (").next().unwrap())
            .collect();
        assert_eq!(
            named,
            [
                "`--print=crate-name`",
                "`--print cfg`",
                "`-Zparse-crate-root-only`",
                "`-Zself-profile=/x`",
                "`-Z dump-mir-dir=/x`",
                "`-Cllvm-args=-info-output-file=/x`",
                "`--remap-path-prefix=/a=/b`",
            ]
        );

        let second = directory.join("second.rs");
        std::fs::write(&second, "").unwrap();
        std::fs::write(&file, format!("{text}\n{}", second.display())).unwrap();
        let two = format!("{:#}", read_rustc_args(&file).unwrap_err());
        assert!(two.contains("names more than one crate root: "), "{two}");
        std::fs::write(&file, "--cfg=x\n").unwrap();
        let none = format!("{:#}", read_rustc_args(&file).unwrap_err());
        assert!(none.ends_with("it names no crate root"), "{none}");
    }
}
