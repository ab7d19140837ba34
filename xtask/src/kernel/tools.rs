// SPDX-License-Identifier: GPL-2.0
//! The tools a kernel build runs besides the compiler: clang, lld and LLVM's binutils from the
//! system, bindgen of the version a tree asks for, and the wrapper through which Kbuild starts
//! one compiler.

use crate::catalog::Release;
use crate::kernel::stamps::Facts;
use crate::toolchains::loader::Launch;
use crate::util::process::{self, Invocation};
use anyhow::{anyhow, ensure, Context as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The bindgen every tree from 6.11 on is built with: bindgen-cli 0.71.1, installed under
/// `target/kernel/tools/` (it meets 6.12's 0.65.1 and 7.3's 0.71.1 minimums), with LLVM 19.
pub(crate) const BINDGEN: Bindgen = Bindgen {
    version: "0.71.1",
    krate: "bindgen-cli",
    llvm: "19",
};

/// The bindgen of trees that still pass `--size_t-is-usize` (6.1: its minimum is 0.56.0), which
/// bindgen 0.65 removed: the `bindgen` crate 0.56.0 carries that command line. It runs with
/// bookworm's LLVM 15: from 16 on, libclang spells an anonymous struct or union
/// `(anonymous at FILE:LINE:COL)` where it gave an empty name, and bindgen before 0.62
/// (rust-bindgen#2312, fixed by #2319) then panics: "`..._union_(anonymous_at_..._h_133_2)` is
/// not a valid Ident", on 6.1's `include/linux/compiler_types.h`. Kbuild passes bindgen the C
/// compiler's flags, so C is compiled with clang 15 too: libclang 15 rejects clang 19's
/// `-mindirect-branch-cs-prefix`.
pub(crate) const OLD_BINDGEN: Bindgen = Bindgen {
    version: "0.56.0",
    krate: "bindgen",
    llvm: "15",
};

/// The bindgen a tree is built with: [`OLD_BINDGEN`] where its minimum predates 0.65, the first
/// bindgen without `--size_t-is-usize`, else [`BINDGEN`].
pub(crate) fn bindgen_for(facts: &Facts) -> Bindgen {
    match Release::parse(&facts.minimum_bindgen) {
        Some(minimum) if minimum < Release::new(0, 65, 0) => OLD_BINDGEN,
        _ => BINDGEN,
    }
}

/// The build tools of a run: today's, and the older ones, looked for once a tree needs them.
pub(crate) struct Toolbox {
    dir: PathBuf,
    pub today: anyhow::Result<Tools>,
    old: Option<anyhow::Result<Tools>>,
}

impl Toolbox {
    pub(crate) fn find(kernel_dir: &Path) -> Toolbox {
        Toolbox {
            dir: kernel_dir.to_owned(),
            today: find_tools(kernel_dir, BINDGEN),
            old: None,
        }
    }

    /// The tools `facts`' tree is built with ([`bindgen_for`]).
    pub(crate) fn for_tree(&mut self, facts: &Facts) -> Result<&Tools, &anyhow::Error> {
        if bindgen_for(facts).version == BINDGEN.version {
            return self.today.as_ref();
        }
        let dir = &self.dir;
        let old = self.old.get_or_insert_with(|| {
            find_tools(dir, OLD_BINDGEN).map_err(|missing| {
                anyhow!(
                    "{missing:#} (this tree passes bindgen `--size_t-is-usize`, which bindgen \
                     0.65 removed; its minimum is {})",
                    facts.minimum_bindgen
                )
            })
        });
        old.as_ref()
    }
}

/// One bindgen release, the crate whose `cargo install` provides its command line, and the
/// LLVM (clang, lld, libclang) the build runs with it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bindgen {
    pub version: &'static str,
    pub krate: &'static str,
    /// The LLVM's major version: Kbuild gets `LLVM=-N`, bindgen `/usr/lib/llvm-N/lib`'s libclang.
    pub llvm: &'static str,
}

/// The build tools, found.
#[derive(Clone, Debug)]
pub(crate) struct Tools {
    pub bindgen: PathBuf,
    /// The directory holding `libclang.so` for bindgen.
    pub libclang: PathBuf,
    /// Kbuild's `LLVM=`: `-19` runs `clang-19`, `ld.lld-19`...
    pub llvm_suffix: String,
    /// What they are, exactly (clang's, lld's and bindgen's first line of `--version`, and the
    /// libclang bindgen loads), for cache keys and the report.
    pub identity: String,
}

/// The tools a build needs, or what is missing and the command that installs it.
pub(crate) fn find_tools(kernel_dir: &Path, wanted: Bindgen) -> anyhow::Result<Tools> {
    let llvm = wanted.llvm;
    let programs = ["clang", "ld.lld", "llvm-ar", "llvm-nm", "llvm-objcopy"]
        .map(|program| format!("{program}-{llvm}"));
    let libclang = PathBuf::from(format!("/usr/lib/llvm-{llvm}/lib"));
    let files = [
        "/usr/include/gelf.h".to_owned(),
        "/usr/include/openssl/ssl.h".to_owned(),
        format!("{}/libclang.so", libclang.display()),
    ];
    let missing: Vec<String> = programs
        .iter()
        .map(String::as_str)
        .chain(["flex", "bison", "bc"])
        .filter(|program| !Path::new("/usr/bin").join(program).exists())
        .map(str::to_owned)
        .chain(files.into_iter().filter(|file| !Path::new(file).exists()))
        .collect();
    let mut problems = Vec::new();
    if !missing.is_empty() {
        problems.push(format!(
            "{} missing: install them with `apt-get install clang-{llvm} lld-{llvm} llvm-{llvm} \
             libclang-{llvm}-dev flex bison libelf-dev libssl-dev bc cpio kmod`",
            missing.join(", ")
        ));
    }
    let root = kernel_dir.join(format!("tools/bindgen-{}", wanted.version));
    let bindgen = root.join("bin/bindgen");
    if !bindgen.is_file() {
        problems.push(format!(
            "no bindgen {} at {}: install it with `cargo install {} --version {} --locked \
             --root {}`",
            wanted.version,
            bindgen.display(),
            wanted.krate,
            wanted.version,
            root.display()
        ));
    }
    ensure!(problems.is_empty(), problems.join("; "));
    let clang = version_of(&Path::new("/usr/bin").join(&programs[0]), Vec::new())?;
    let lld = version_of(&Path::new("/usr/bin").join(&programs[1]), Vec::new())?;
    let bindgen_says = version_of(&bindgen, vec![libclang_env(&libclang)])?;
    let loaded = libclang_version(&bindgen, &libclang)?;
    Ok(Tools {
        identity: format!(
            "{clang}; {lld}; {bindgen_says} with libclang {loaded} ({})",
            libclang.display()
        ),
        bindgen,
        libclang,
        llvm_suffix: format!("-{llvm}"),
    })
}

/// The first line `program --version` prints.
fn version_of(program: &Path, env: Vec<(String, String)>) -> anyhow::Result<String> {
    let invocation = Invocation::new(program, vec!["--version".into()]).with_env(env);
    let timeout = Duration::from_secs(60);
    let output = process::run(&invocation, timeout)
        .map_err(|error| anyhow!(process::describe_spawn_error(program, &error)))?;
    ensure!(
        output.success(),
        "`{} --version` failed: {}",
        program.display(),
        output.describe_ending(timeout)
    );
    let mut lines = output.stdout.lines().map(str::trim);
    Ok(lines
        .find(|line| !line.is_empty())
        .unwrap_or_default()
        .into())
}

/// The version of the libclang `bindgen` loads from `libclang`, asked as the kernel asks it
/// (`scripts/rust_is_available_bindgen_libclang.h`): bindgen parses a header whose
/// `#pragma message` prints `__clang_version__`, which works with every bindgen. The header
/// goes to the system's temporary directory, so that asking (as `--dry-run` does) writes nothing
/// under `target/kernel/`.
fn libclang_version(bindgen: &Path, libclang: &Path) -> anyhow::Result<String> {
    let header =
        std::env::temp_dir().join(format!("kshim-libclang-version-{}.h", std::process::id()));
    std::fs::write(
        &header,
        b"#pragma message(\"clang version \" __clang_version__)\n",
    )
    .with_context(|| format!("writing {}", header.display()))?;
    let invocation = Invocation::new(bindgen, vec![header.display().to_string()])
        .with_env(vec![libclang_env(libclang)]);
    let timeout = Duration::from_secs(60);
    let output = process::run(&invocation, timeout);
    let _ = std::fs::remove_file(&header);
    let output = output.map_err(|error| anyhow!(process::describe_spawn_error(bindgen, &error)))?;
    let said = format!("{}\n{}", output.stdout, output.stderr);
    said.lines()
        .find_map(|line| {
            let version = line.split("clang version ").nth(1)?;
            Some(version.split(" [-W").next()?.trim().to_owned())
        })
        .with_context(|| {
            format!(
                "`{} {}` did not say libclang's version: {}",
                bindgen.display(),
                header.display(),
                output.describe_ending(timeout)
            )
        })
}

pub(crate) fn libclang_env(libclang: &Path) -> (String, String) {
    ("LIBCLANG_PATH".to_owned(), libclang.display().to_string())
}

/// Writes the wrapper that starts the compiler of `launch` with Kbuild's arguments: a POSIX
/// shell script. A leading `--sysroot` (a compiler run through its own loader names its
/// sysroot) is passed only when the caller gave none: Kbuild passes `--sysroot=/dev/null` itself.
pub(crate) fn write_wrapper(path: &Path, launch: &Launch) -> anyhow::Result<()> {
    let start = launch.invocation(Vec::new(), launch.env.clone());
    let quote = |word: &str| process::shell_quote(word);
    let mut without_sysroot = Vec::new();
    let mut words = start.args.iter();
    while let Some(word) = words.next() {
        if word == "--sysroot" {
            words.next();
        } else if !word.starts_with("--sysroot=") {
            without_sysroot.push(quote(word));
        }
    }
    let with_sysroot: Vec<String> = start.args.iter().map(|word| quote(word)).collect();
    let mut text = String::from(
        "#!/bin/sh\n# Written by cargo xtask kernel: starts one compiler for Kbuild.\n",
    );
    for (name, value) in &start.env {
        text.push_str(&format!("export {name}={}\n", quote(value)));
    }
    let program = quote(&start.program.to_string_lossy());
    text.push_str(&format!(
        "for arg in \"$@\"; do\n  case \"$arg\" in\n    --sysroot|--sysroot=*) exec {program} {} \"$@\" ;;\n  esac\ndone\nexec {program} {} \"$@\"\n",
        without_sysroot.join(" "),
        with_sysroot.join(" ")
    ));
    crate::util::files::write_atomically(path, text.as_bytes())?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}
