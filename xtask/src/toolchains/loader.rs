// SPDX-License-Identifier: GPL-2.0
//! How to start a compiler unpacked under a prefix: with the host's loader and
//! `LD_LIBRARY_PATH` when the host's C library is new enough for it, or else through the
//! loader unpacked beside it, read from the ELF files themselves.

use crate::util::files::sorted_entries;
use crate::util::process::{self, Invocation};
use anyhow::{anyhow, ensure, Context};
use object::elf::FileHeader64;
use object::read::elf::{FileHeader, ProgramHeader, SectionHeader};
use object::{LittleEndian, ReadCache, ReadRef};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What an ELF file says about loading it: its interpreter (`PT_INTERP`), every `GLIBC_x.y[.z]`
/// version it needs, and whether it defines such versions itself (belongs to glibc).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ElfLinkage {
    pub interpreter: Option<String>,
    pub glibc_needed: Vec<GlibcVersion>,
    pub is_glibc: bool,
}

/// A glibc symbol version: `GLIBC_2.39` is `[2, 39]`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct GlibcVersion(pub Vec<u32>);

impl GlibcVersion {
    /// Parses `GLIBC_2.39` (or `2.39`); the unnumbered names (`GLIBC_PRIVATE`) are `None`.
    pub(crate) fn parse(text: &str) -> Option<GlibcVersion> {
        let numbers = text.strip_prefix("GLIBC_").unwrap_or(text);
        let parts: Option<Vec<u32>> = numbers.split('.').map(|part| part.parse().ok()).collect();
        parts.filter(|parts| parts.len() >= 2).map(GlibcVersion)
    }
}

impl std::fmt::Display for GlibcVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.0.iter().map(u32::to_string).collect();
        write!(f, "{}", parts.join("."))
    }
}

type Elf = FileHeader64<LittleEndian>;

/// Reads the interpreter and glibc versions of a little-endian ELF64 file, reading only its
/// headers and version sections (a compiler's libraries are hundreds of megabytes).
pub(crate) fn elf_linkage(path: &Path) -> anyhow::Result<ElfLinkage> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    linkage(&ReadCache::new(file)).with_context(|| format!("reading {}", path.display()))
}

pub(crate) fn linkage<'a, R: ReadRef<'a>>(data: R) -> anyhow::Result<ElfLinkage> {
    let header = Elf::parse(data)
        .ok()
        .filter(|header| header.endian().is_ok());
    let header = header.context("not a little-endian 64-bit ELF file")?;
    read_linkage(header, data).map_err(|error| anyhow!("a malformed ELF file: {error}"))
}

fn read_linkage<'a, R: ReadRef<'a>>(header: &Elf, data: R) -> object::read::Result<ElfLinkage> {
    let endian = LittleEndian;
    let mut linkage = ElfLinkage::default();
    for program in header.program_headers(endian, data)? {
        if let Some(path) = program.interpreter(endian, data)? {
            linkage.interpreter = Some(String::from_utf8_lossy(path).into_owned());
            break;
        }
    }
    let sections = header.sections(endian, data)?;
    for section in sections.iter() {
        if let Some((mut needs, link)) = section.gnu_verneed(endian, data)? {
            let strings = sections.strings(endian, data, link)?;
            while let Some((_, mut versions)) = needs.next()? {
                while let Some(version) = versions.next()? {
                    let name = version.name(endian, strings)?;
                    linkage
                        .glibc_needed
                        .extend(GlibcVersion::parse(&String::from_utf8_lossy(name)));
                }
            }
        }
        if let Some((mut definitions, link)) = section.gnu_verdef(endian, data)? {
            let strings = sections.strings(endian, data, link)?;
            while let Some((_, mut names)) = definitions.next()? {
                // The first name is the version's own; any others are its parents.
                if let Some(name) = names.next()? {
                    let name = name.name(endian, strings)?;
                    linkage.is_glibc |=
                        GlibcVersion::parse(&String::from_utf8_lossy(name)).is_some();
                }
            }
        }
    }
    linkage.glibc_needed.sort();
    linkage.glibc_needed.dedup();
    Ok(linkage)
}

/// The glibc version of the running process (the host's), as `gnu_get_libc_version` says.
pub(crate) fn host_glibc() -> GlibcVersion {
    extern "C" {
        fn gnu_get_libc_version() -> *const libc::c_char;
    }
    // SAFETY: gnu_get_libc_version takes nothing and returns a pointer to a static,
    // NUL-terminated string that lives as long as the process.
    let text = unsafe { std::ffi::CStr::from_ptr(gnu_get_libc_version()) };
    GlibcVersion::parse(&text.to_string_lossy()).unwrap_or(GlibcVersion(vec![0, 0]))
}

/// The multiarch library directories of `prefix` (`usr/lib/x86_64-linux-gnu`), `usr/lib` first.
pub(crate) fn library_dirs(prefix: &Path) -> Vec<PathBuf> {
    ["usr/lib", "lib"]
        .iter()
        .flat_map(|base| sorted_entries(&prefix.join(base)))
        .filter(|path| {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            name.contains("-linux-") && path.is_dir()
        })
        .collect()
}

/// The newest glibc version that the compiler under `prefix` or a library beside it needs
/// (glibc's own files aside), with the file that needs it.
pub(crate) fn newest_glibc_needed(prefix: &Path) -> Option<(GlibcVersion, PathBuf)> {
    let libraries = library_dirs(prefix)
        .into_iter()
        .flat_map(|dir| sorted_entries(&dir));
    let libraries = libraries.filter(|path| {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        name.contains(".so") && path.symlink_metadata().is_ok_and(|meta| meta.is_file())
    });
    let files = std::iter::once(prefix.join("usr/bin/rustc")).chain(libraries);
    let needs = files.filter_map(|file| {
        // Not an ELF file (a linker script that happens to match) needs nothing.
        let linkage = elf_linkage(&file)
            .ok()
            .filter(|linkage| !linkage.is_glibc)?;
        Some((linkage.glibc_needed.last()?.clone(), file))
    });
    needs.reduce(|newest, next| if next.0 > newest.0 { next } else { newest })
}

/// The loader a compiler runs through instead of the host's (the prefix's `ld-linux-*.so.2`),
/// and the arguments before rustc's own: `--library-path DIRS PREFIX/usr/bin/rustc --sysroot
/// PREFIX/usr` (rustc would look for its sysroot beside the loader otherwise).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OwnLoader {
    pub program: PathBuf,
    pub leading_args: Vec<String>,
}

/// The command that runs a compiler: the real rustc, through its own loader or the host's
/// with `env` added.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Launch {
    /// The real rustc (never the rustup proxy, never a loader).
    pub rustc: PathBuf,
    pub loader: Option<OwnLoader>,
    /// Set for rustc and the programs it builds: `LD_LIBRARY_PATH` under the host's loader.
    pub env: Vec<(String, String)>,
}

impl Launch {
    /// How to start the compiler unpacked under `prefix`: through the prefix's own loader if it
    /// has one (then `--library-path` reaches only the compiler, and the `cc` it starts keeps the
    /// host's libraries), else under the host's with `LD_LIBRARY_PATH`, which needs the host's
    /// glibc to be at least the newest the compiler and its libraries need.
    pub(crate) fn for_prefix(prefix: &Path) -> anyhow::Result<Launch> {
        let prefix = std::path::absolute(prefix)
            .with_context(|| format!("making {} absolute", prefix.display()))?;
        let rustc = prefix.join("usr/bin/rustc");
        ensure!(rustc.is_file(), "{} does not exist", rustc.display());
        let linkage = elf_linkage(&rustc)?;
        let dirs = library_dirs(&prefix);
        let joined = std::env::join_paths(&dirs)
            .context("joining the library directories (a path holds a `:`)")?
            .to_string_lossy()
            .into_owned();
        let own_loader = linkage.interpreter.as_deref().and_then(|interpreter| {
            let name = Path::new(interpreter).file_name()?;
            dirs.iter()
                .map(|dir| dir.join(name))
                .find(|candidate| candidate.is_file())
        });
        if let Some(loader) = own_loader {
            return Ok(Launch {
                loader: Some(OwnLoader {
                    program: loader,
                    leading_args: vec![
                        "--library-path".to_owned(),
                        joined,
                        rustc.display().to_string(),
                        "--sysroot".to_owned(),
                        prefix.join("usr").display().to_string(),
                    ],
                }),
                rustc,
                env: Vec::new(),
            });
        }
        let host = host_glibc();
        if let Some((needed, file)) = newest_glibc_needed(&prefix) {
            ensure!(
                needed <= host,
                "{} needs glibc {needed}, the host has {host}, and {} has no loader of its own \
                 (provision it with its C library)",
                file.display(),
                prefix.display()
            );
        }
        let env = (!dirs.is_empty()).then(|| ("LD_LIBRARY_PATH".to_owned(), joined));
        Ok(Launch {
            rustc,
            loader: None,
            env: env.into_iter().collect(),
        })
    }

    /// The same start for another program of the compiler's `bin/` (its `rustdoc`): the same
    /// loader, library path, sysroot and environment.
    pub(crate) fn sibling(&self, name: &str) -> Launch {
        let mut launch = self.clone();
        launch.rustc = self.rustc.with_file_name(name);
        let rustc = self.rustc.display().to_string();
        let program = launch.rustc.display().to_string();
        let own_args = launch
            .loader
            .iter_mut()
            .flat_map(|own| &mut own.leading_args);
        for arg in own_args.filter(|arg| **arg == rustc) {
            arg.clone_from(&program);
        }
        launch
    }

    pub(crate) fn invocation(&self, args: Vec<String>, env: Vec<(String, String)>) -> Invocation {
        let (program, mut leading) = match &self.loader {
            Some(loader) => (loader.program.clone(), loader.leading_args.clone()),
            None => (self.rustc.clone(), Vec::new()),
        };
        leading.extend(args);
        Invocation::new(program, leading).with_env(env)
    }

    /// Runs the compiler with `args` as every monitored step runs (a clean environment plus its
    /// own, killed after `timeout`); returns its stdout, or how it failed with its first stderr.
    pub(crate) fn run(&self, args: &[&str], timeout: Duration) -> anyhow::Result<String> {
        let invocation = self.invocation(
            args.iter().map(|arg| arg.to_string()).collect(),
            self.env.clone(),
        );
        let output = process::run(&invocation, timeout)
            .map_err(|error| anyhow!(process::describe_spawn_error(&self.rustc, &error)))?;
        let stderr = output.stderr.trim();
        let mut shown = stderr.lines().take(5).collect::<Vec<_>>().join(" | ");
        if stderr.is_empty() {
            shown = "(empty)".to_owned();
        } else if stderr.lines().count() > 5 {
            shown.push_str(" ...");
        }
        ensure!(
            output.success(),
            "`{} {}` failed ({}); stderr: {shown}",
            self.rustc.display(),
            args.join(" "),
            output.describe_ending(timeout)
        );
        Ok(output.stdout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xshell::{cmd, Shell};

    /// The shared libraries the compiler's process loads from outside `prefix`, as its loader
    /// resolves them (`ld.so --list`); for a compiler under its own loader this must be empty.
    fn libraries_outside(launch: &Launch, prefix: &Path) -> anyhow::Result<Vec<String>> {
        let prefix = std::path::absolute(prefix)
            .with_context(|| format!("making {} absolute", prefix.display()))?;
        let sh = Shell::new()?;
        let listing = match &launch.loader {
            Some(loader) => {
                let mut args: Vec<&str> = loader.leading_args[..3]
                    .iter()
                    .map(String::as_str)
                    .collect();
                args.insert(2, "--list");
                let program = &loader.program;
                crate::tests::support::read_quietly(cmd!(sh, "{program} {args...}").env_clear())
            }
            None => {
                let rustc = &launch.rustc;
                let ldd = cmd!(sh, "ldd {rustc}")
                    .env_clear()
                    .envs(launch.env.iter().cloned());
                crate::tests::support::read_quietly(ldd)
            }
        };
        Ok(listing
            .lines()
            .filter_map(|line| {
                let path = line
                    .split("=>")
                    .nth(1)
                    .unwrap_or(line)
                    .split_whitespace()
                    .next()?;
                (path.starts_with('/') && !Path::new(path).starts_with(&prefix))
                    .then(|| path.to_owned())
            })
            .collect())
    }

    /// The host's `libc.so.6` and loader, as this process has them mapped.
    fn host_file(name: &str) -> PathBuf {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        maps.lines()
            .filter_map(|line| line.split_whitespace().nth(5))
            .map(PathBuf::from)
            .find(|path| {
                path.file_name()
                    .is_some_and(|file| file.to_string_lossy().starts_with(name))
            })
            .unwrap_or_else(|| panic!("no {name} mapped"))
    }

    #[test]
    fn glibc_versions_order_numerically() {
        let parse = |text| GlibcVersion::parse(text).unwrap();
        assert!(parse("GLIBC_2.2.5") < parse("GLIBC_2.14"));
        assert!(parse("GLIBC_2.36") < parse("2.39"));
        assert_eq!(parse("GLIBC_2.39").to_string(), "2.39");
        assert_eq!(GlibcVersion::parse("GLIBC_PRIVATE"), None);
        assert_eq!(GlibcVersion::parse("GLIBC_ABI_DT_RELR"), None);
    }

    #[test]
    fn the_hosts_glibc_is_what_getconf_says() {
        let sh = Shell::new().unwrap();
        let said = crate::tests::support::read_quietly(cmd!(sh, "getconf GNU_LIBC_VERSION"));
        assert_eq!(format!("glibc {}", host_glibc()), said.trim());
    }

    #[test]
    fn reads_the_linkage_of_real_elf_files() {
        let test_binary = elf_linkage(&std::env::current_exe().unwrap()).unwrap();
        assert_eq!(
            test_binary.interpreter.as_deref(),
            Some("/lib64/ld-linux-x86-64.so.2")
        );
        assert!(!test_binary.is_glibc);
        let newest = test_binary.glibc_needed.last().unwrap();
        assert!(
            *newest <= host_glibc() && *newest >= GlibcVersion(vec![2, 2, 5]),
            "{newest}"
        );

        let libc = elf_linkage(&host_file("libc.so.6")).unwrap();
        assert!(libc.is_glibc);
        let error = format!(
            "{:#}",
            elf_linkage(Path::new("/etc/os-release")).unwrap_err()
        );
        assert!(
            error.contains("not a little-endian 64-bit ELF file"),
            "{error}"
        );
    }

    /// A 160-byte ELF file: the header, a version-needs section at 64 and, at 96, the one
    /// section header, whose `sh_link` names section 5 of 1. The hand-written reader this
    /// replaced indexed its section table with it and panicked. With `names`, a second
    /// section header, a string table, makes it the section name table, as readers expect.
    fn bad_sh_link(names: bool) -> Vec<u8> {
        let mut elf = b"\x7fELF\x02\x01\x01".to_vec();
        elf.resize(16, 0);
        elf.extend(3u16.to_le_bytes()); // ET_DYN
        elf.extend(62u16.to_le_bytes()); // EM_X86_64
        elf.extend(1u32.to_le_bytes());
        elf.extend([0u64, 0, 96].iter().flat_map(|word| word.to_le_bytes())); // entry, phoff, shoff
        elf.extend(0u32.to_le_bytes());
        let (count, names_index) = if names { (2, 1) } else { (1, 0) };
        for half in [64u16, 56, 0, 64, count, names_index] {
            elf.extend(half.to_le_bytes());
        }
        elf.resize(96, 0); // a zeroed version need: one entry, no names
        let mut section = |kind: u32, offset: u64, size: u64, link: u32| {
            elf.extend(0u32.to_le_bytes()); // sh_name
            elf.extend(kind.to_le_bytes());
            elf.extend(
                [0u64, 0, offset, size]
                    .iter()
                    .flat_map(|word| word.to_le_bytes()),
            );
            elf.extend(link.to_le_bytes());
            elf.extend([0u8; 20]);
        };
        section(0x6fff_fffe, 64, 32, 5); // SHT_GNU_VERNEED, sh_link 5: no such section
        if names {
            section(3, 64, 1, 0); // SHT_STRTAB: the first byte of the zeroes, ""
        }
        elf
    }

    #[test]
    fn a_malformed_file_is_an_error_not_a_panic() {
        let bytes = bad_sh_link(false);
        assert_eq!(bytes.len(), 160);
        let error = linkage(&bytes[..]).unwrap_err().to_string();
        assert!(error.contains("malformed ELF"), "{error}");
        let path = scratch("bad-sh-link").join("bad.so");
        std::fs::write(&path, &bytes).unwrap();
        assert!(elf_linkage(&path).is_err());
        let named = bad_sh_link(true);
        let error = linkage(&named[..]).unwrap_err().to_string();
        assert_eq!(error, "a malformed ELF file: Invalid ELF section index");
        for bytes in [bytes, named] {
            for length in 0..bytes.len() {
                assert!(linkage(&bytes[..length]).is_err(), "{length} bytes");
            }
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = crate::project_root()
            .join("target/kshim/test-scratch/loader")
            .join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("usr/bin")).unwrap();
        dir
    }

    /// A prefix whose "rustc" is the host's `echo`, which prints the arguments it is given.
    fn echo_prefix(name: &str) -> PathBuf {
        let prefix = scratch(name);
        let echo =
            crate::util::process::which("echo").unwrap_or_else(|| PathBuf::from("/bin/echo"));
        std::fs::copy(echo, prefix.join("usr/bin/rustc")).unwrap();
        prefix
    }

    #[test]
    fn a_prefix_without_a_loader_runs_under_the_hosts() {
        let prefix = echo_prefix("host");
        let libs = prefix.join("usr/lib/x86_64-linux-gnu");
        std::fs::create_dir_all(&libs).unwrap();
        let launch = Launch::for_prefix(&prefix).unwrap();
        assert_eq!(launch.loader, None);
        assert_eq!(launch.rustc, prefix.join("usr/bin/rustc"));
        assert_eq!(
            launch.env,
            [("LD_LIBRARY_PATH".to_owned(), libs.display().to_string())]
        );
        assert_eq!(
            launch.run(&["-vV"], Duration::from_secs(10)).unwrap(),
            "-vV\n"
        );
    }

    #[test]
    fn a_prefix_with_its_own_loader_runs_through_it() {
        let prefix = echo_prefix("own");
        let libs = prefix.join("usr/lib/x86_64-linux-gnu");
        std::fs::create_dir_all(&libs).unwrap();
        std::fs::copy(
            host_file("ld-linux-x86-64.so.2"),
            libs.join("ld-linux-x86-64.so.2"),
        )
        .unwrap();
        std::fs::copy(host_file("libc.so.6"), libs.join("libc.so.6")).unwrap();
        let launch = Launch::for_prefix(&prefix).unwrap();
        assert_eq!(launch.rustc, prefix.join("usr/bin/rustc"));
        let rustc = prefix.join("usr/bin/rustc").display().to_string();
        let sysroot = prefix.join("usr").display().to_string();
        assert_eq!(
            launch.loader,
            Some(OwnLoader {
                program: libs.join("ld-linux-x86-64.so.2"),
                leading_args: vec![
                    "--library-path".into(),
                    libs.display().to_string(),
                    rustc,
                    "--sysroot".into(),
                    sysroot.clone(),
                ],
            })
        );
        assert!(launch.env.is_empty());
        // The real program gets `--sysroot` first: the loader passed it on as it stands.
        assert_eq!(
            launch.run(&["-vV"], Duration::from_secs(10)).unwrap(),
            format!("--sysroot {sysroot} -vV\n")
        );
        assert_eq!(
            libraries_outside(&launch, &prefix).unwrap(),
            Vec::<String>::new()
        );
        let rustdoc = launch.sibling("rustdoc");
        let leading = &rustdoc.loader.as_ref().unwrap().leading_args;
        assert_eq!(rustdoc.rustc, prefix.join("usr/bin/rustdoc"));
        assert_eq!(leading[2], rustdoc.rustc.display().to_string());
        assert_eq!(
            (&leading[..2], &leading[3..]),
            (
                &launch.loader.as_ref().unwrap().leading_args[..2],
                &launch.loader.as_ref().unwrap().leading_args[3..]
            )
        );
        assert_eq!(rustdoc.env, launch.env);
    }
}
