// SPDX-License-Identifier: GPL-2.0
//! The tools a kernel build runs besides the compiler: clang, lld and LLVM's binutils from the
//! system, bindgen of the version a tree asks for, and the wrapper through which Kbuild starts
//! one compiler.

use crate::process::{self, Invocation};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The LLVM the trees are built with: `LLVM=-19` makes Kbuild run `clang-19`, `ld.lld-19`...
pub(crate) const LLVM_SUFFIX: &str = "-19";

/// The bindgen every tree from 6.11 on is built with: bindgen-cli 0.71.1, installed under
/// `target/kernel/tools/` (it meets 6.12's 0.65.1 and 7.3's 0.71.1 minimums).
pub(crate) const BINDGEN: Bindgen = Bindgen {
    version: "0.71.1",
    krate: "bindgen-cli",
};

/// The bindgen of trees that still pass `--size_t-is-usize` (6.1: its minimum is 0.56.0), which
/// bindgen 0.65 removed: the `bindgen` crate 0.56.0 carries that command line.
pub(crate) const OLD_BINDGEN: Bindgen = Bindgen {
    version: "0.56.0",
    krate: "bindgen",
};

/// The first bindgen without `--size_t-is-usize`: a tree whose minimum is below it gets
/// [`OLD_BINDGEN`].
pub(crate) const SIZE_T_IS_USIZE_REMOVED: crate::catalog::Release =
    crate::catalog::Release::new(0, 65, 0);

/// One bindgen release and the crate whose `cargo install` provides its command line.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bindgen {
    /// Its version.
    pub version: &'static str,
    /// The crate that installs it.
    pub krate: &'static str,
}

/// The packages the kernel's build needs from the system's apt.
pub(crate) const SYSTEM_PACKAGES: &str =
    "clang-19 lld-19 llvm-19 libclang-19-dev flex bison libelf-dev libssl-dev bc cpio kmod";

/// The build tools, found.
#[derive(Clone, Debug)]
pub(crate) struct Tools {
    /// bindgen's command line.
    pub bindgen: PathBuf,
    /// The directory holding `libclang.so` for bindgen.
    pub libclang: PathBuf,
    /// What they are, exactly (clang's, lld's and bindgen's first line of
    /// `--version`, and the libclang bindgen loads), for cache keys and the report.
    pub identity: String,
}

/// Where `bindgen` is installed: `target/kernel/tools/bindgen-VERSION/bin/bindgen`.
pub(crate) fn bindgen_root(kernel_dir: &Path, bindgen: Bindgen) -> PathBuf {
    kernel_dir
        .join("tools")
        .join(format!("bindgen-{}", bindgen.version))
}

/// The command that installs `bindgen` where [`find_tools`] looks.
pub(crate) fn bindgen_install_command(kernel_dir: &Path, bindgen: Bindgen) -> String {
    format!(
        "cargo install {} --version {} --locked --root {}",
        bindgen.krate,
        bindgen.version,
        bindgen_root(kernel_dir, bindgen).display()
    )
}

/// The tools a build needs, or what is missing and the command that installs it.
pub(crate) fn find_tools(kernel_dir: &Path, wanted: Bindgen) -> Result<Tools, String> {
    let mut missing = Vec::new();
    for program in [
        "clang-19",
        "ld.lld-19",
        "llvm-ar-19",
        "llvm-nm-19",
        "llvm-objcopy-19",
        "flex",
        "bison",
        "bc",
    ] {
        if !Path::new("/usr/bin").join(program).exists() {
            missing.push(program.to_owned());
        }
    }
    for header in ["/usr/include/gelf.h", "/usr/include/openssl/ssl.h"] {
        if !Path::new(header).is_file() {
            missing.push(header.to_owned());
        }
    }
    let libclang = PathBuf::from("/usr/lib/llvm-19/lib");
    if !libclang.join("libclang.so").exists() && !libclang.join("libclang.so.1").exists() {
        missing.push(format!("{}/libclang.so", libclang.display()));
    }
    let mut problems = Vec::new();
    if !missing.is_empty() {
        problems.push(format!(
            "{} missing: install them with `apt-get install {SYSTEM_PACKAGES}`",
            missing.join(", ")
        ));
    }
    let bindgen = bindgen_root(kernel_dir, wanted).join("bin/bindgen");
    if !bindgen.is_file() {
        problems.push(format!(
            "no bindgen {} at {}: install it with `{}`",
            wanted.version,
            bindgen.display(),
            bindgen_install_command(kernel_dir, wanted)
        ));
    }
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    let first = |lines: &[String]| lines.first().cloned().unwrap_or_default();
    let clang = version_of(Path::new("/usr/bin/clang-19"), Vec::new())?;
    let lld = version_of(Path::new("/usr/bin/ld.lld-19"), Vec::new())?;
    let bindgen_says = version_of(&bindgen, vec![libclang_env(&libclang)])?;
    // With `--verbose`, bindgen names the libclang it loaded; one that does not has the LLVM
    // that libclang's directory belongs to say its version.
    let loaded = match bindgen_says
        .iter()
        .find_map(|line| line.strip_prefix("Clang: "))
    {
        Some(loaded) => loaded.to_owned(),
        None => {
            let config = libclang
                .parent()
                .unwrap_or(&libclang)
                .join("bin/llvm-config");
            let llvm = version_of(&config, Vec::new())?;
            format!("LLVM {} ({})", llvm.join(" "), libclang.display())
        }
    };
    Ok(Tools {
        identity: format!(
            "{}; {}; {} with libclang {loaded}",
            first(&clang),
            first(&lld),
            first(&bindgen_says)
        ),
        bindgen,
        libclang,
    })
}

/// The lines `program --version` prints (bindgen's with `--verbose`).
fn version_of(program: &Path, env: Vec<(String, String)>) -> Result<Vec<String>, String> {
    let verbose = program.ends_with("bindgen").then(|| "--verbose".to_owned());
    let invocation = Invocation {
        program: program.to_owned(),
        args: std::iter::once("--version".to_owned()).chain(verbose).collect(),
        env,
        env_remove: Vec::new(),
    };
    let timeout = Duration::from_secs(60);
    match process::run(&invocation, timeout) {
        Ok(output) if output.success() => Ok(output
            .stdout
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .map(str::to_owned)
            .collect()),
        Ok(output) => Err(format!(
            "`{} --version` failed: {}",
            program.display(),
            output.describe_ending(timeout)
        )),
        Err(error) => Err(process::describe_spawn_error(program, &error)),
    }
}

pub(crate) fn libclang_env(libclang: &Path) -> (String, String) {
    ("LIBCLANG_PATH".to_owned(), libclang.display().to_string())
}

/// The compiler of one pair, ready for Kbuild.
#[derive(Clone, Debug)]
pub(crate) struct Compiler {
    /// The wrapper Kbuild runs as `RUSTC` and `HOSTRUSTC`.
    pub wrapper: PathBuf,
    /// The `library/` directory of its own sources (`RUST_LIB_SRC`).
    pub library: PathBuf,
}

/// Writes the wrapper that starts a compiler as `program` with `leading` arguments and `env`:
/// a POSIX shell script. A leading `--sysroot` (a compiler run through its own loader names its
/// sysroot) is passed only when the caller gave none: Kbuild passes `--sysroot=/dev/null` itself.
pub(crate) fn write_wrapper(
    path: &Path,
    program: &Path,
    leading: &[String],
    env: &[(String, String)],
) -> anyhow::Result<()> {
    let quote = |word: &str| format!("'{}'", word.replace('\'', r"'\''"));
    let mut without_sysroot = Vec::new();
    let mut words = leading.iter();
    while let Some(word) = words.next() {
        if word == "--sysroot" {
            words.next();
        } else if !word.starts_with("--sysroot=") {
            without_sysroot.push(quote(word));
        }
    }
    let with_sysroot: Vec<String> = leading.iter().map(|word| quote(word)).collect();
    let mut text = String::from(
        "#!/bin/sh\n# Written by cargo xtask kernel: starts one compiler for Kbuild.\n",
    );
    for (name, value) in env {
        text.push_str(&format!("export {name}={}\n", quote(value)));
    }
    let program = quote(&program.to_string_lossy());
    text.push_str(&format!(
        "for arg in \"$@\"; do\n  case \"$arg\" in\n    --sysroot|--sysroot=*) exec {program} {} \"$@\" ;;\n  esac\ndone\nexec {program} {} \"$@\"\n",
        without_sysroot.join(" "),
        with_sysroot.join(" ")
    ));
    crate::files::write_atomically(path, text.as_bytes())?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}
