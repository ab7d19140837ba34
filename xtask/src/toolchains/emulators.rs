// SPDX-License-Identifier: GPL-2.0
//! qemu's user-mode emulators, which run the test binaries of the kernel's targets: Debian's
//! static ones from the host's release and its backports, extracted into
//! `target/toolchains/qemu/`. Up to qemu 8 they are `qemu-user-static`'s `qemu-ARCH-static`;
//! from qemu 9 on, `qemu-user` itself is static and `qemu-user-static` holds only links to it.

use crate::targets::KERNEL_TARGETS;
use crate::toolchains::debian::{self, Provisioner};
use crate::toolchains::extracted::{Extracted, Marker, Wanted};
use crate::toolchains::loader::elf_linkage;
use anyhow::{bail, ensure, Context};
use std::path::{Path, PathBuf};

/// The architectures (as Rust spells them, and as qemu names its emulators) whose emulators are
/// provisioned: those of the kernel's targets other than the host's.
pub fn emulated() -> impl Iterator<Item = &'static str> {
    KERNEL_TARGETS
        .iter()
        .filter(|target| target.emulated)
        .map(|target| target.arch)
}

/// The packages that may hold the static emulators, in order of preference, with their paths.
const PACKAGES: [(&str, &str); 2] = [
    ("qemu-user-static", "usr/bin/qemu-ARCH-static"),
    ("qemu-user", "usr/bin/qemu-ARCH"),
];

/// The provisioned emulator of `target_arch`; `None` for the host's own, or any arch not
/// [`emulated`].
pub fn qemu_user(target_arch: &str) -> Option<PathBuf> {
    if !emulated().any(|arch| arch == target_arch) {
        return None;
    }
    let dir = debian::toolchains_dir().join("qemu");
    let marker = Marker::read(&dir)?;
    let emulator = dir.join(marker.get(target_arch)?);
    emulator.is_file().then_some(emulator)
}

/// The provisioned emulators' package, `qemu-user-static=VERSION (SUITE)`, if there are any.
pub(crate) fn provisioned_qemu() -> Option<String> {
    Marker::read(&debian::toolchains_dir().join("qemu")).map(|marker| marker.identity())
}

/// The codename of the host's Debian release.
pub(crate) fn host_codename() -> anyhow::Result<String> {
    let text = std::fs::read_to_string("/etc/os-release").context("reading /etc/os-release")?;
    codename(&text).context("/etc/os-release names no VERSION_CODENAME")
}

fn codename(os_release: &str) -> Option<String> {
    os_release.lines().find_map(|line| {
        let value = line.trim().strip_prefix("VERSION_CODENAME=")?;
        let value = value.trim_matches(|c| c == '"' || c == '\'');
        crate::toolchains::apt::is_suite(value).then(|| value.to_owned())
    })
}

/// The suites the emulators come from: the host release's family with its backports first.
pub(crate) fn qemu_suites(codename: &str) -> Vec<String> {
    debian::suite_family(&format!("{codename}-backports"))
}

/// The members that hold the emulators of [`emulated`], named as `pattern` says; an emulator
/// the package lacks is an error.
fn emulator_members(members: &[String], pattern: &str) -> anyhow::Result<Vec<String>> {
    emulated()
        .map(|arch| {
            let wanted = format!("./{}", pattern.replace("ARCH", arch));
            ensure!(members.contains(&wanted), "it has no {wanted}");
            Ok(wanted)
        })
        .collect()
}

/// Provisions the newest static emulators of `suites` into `qemu/` unless they are there.
pub(crate) fn provision_qemu(
    provisioner: &mut Provisioner<'_>,
    suites: &[String],
) -> anyhow::Result<Extracted> {
    let prefix = provisioner.root().join("qemu");
    if let Some(marker) =
        Marker::read(&prefix).filter(|marker| emulated().all(|arch| marker.get(arch).is_some()))
    {
        return Ok(Extracted {
            prefix,
            marker,
            already: true,
            ..Default::default()
        });
    }
    let mut refusals = Vec::new();
    for (package, pattern) in PACKAGES {
        let select = |members: &[String]| emulator_members(members, pattern);
        let wanted = Wanted {
            package,
            version: None,
            suites,
            prefix: prefix.clone(),
            select: &select,
        };
        let outcome = provisioner.extract(&wanted, |staging| {
            let mut fields = Vec::new();
            let mut said = String::new();
            for arch in emulated() {
                let relative = pattern.replace("ARCH", arch);
                said = checked_emulator(&staging.join(&relative))?;
                fields.push((arch.to_owned(), relative));
            }
            fields.push(("version".to_owned(), said));
            Ok(fields)
        });
        match outcome {
            Ok(done) => return Ok(done),
            Err(error) => refusals.push(format!("{package}: {error:#}")),
        }
    }
    bail!("{}", refusals.join("; "))
}

/// Checks that `emulator` is a statically linked executable (a symbolic link into a package
/// not extracted is not) that answers `--version`; returns its first line.
fn checked_emulator(emulator: &Path) -> anyhow::Result<String> {
    let shown = emulator.display();
    let metadata = std::fs::symlink_metadata(emulator)
        .with_context(|| format!("{shown} was not extracted"))?;
    ensure!(metadata.is_file(), "{shown} is not a regular file");
    let dynamic = elf_linkage(emulator)?.interpreter.is_some();
    ensure!(!dynamic, "{shown} is dynamically linked");
    let sh = xshell::Shell::new()?;
    let output = xshell::cmd!(sh, "{emulator} --version")
        .ignore_status()
        .quiet()
        .output()
        .with_context(|| format!("running {shown} --version"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let first = stdout.lines().next().unwrap_or_default().to_owned();
    let status = output.status;
    ensure!(
        !first.is_empty() && status.success(),
        "{shown} --version failed ({status})"
    );
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchains::loader::linkage;
    use xshell::cmd;

    #[test]
    fn host_release_and_suites() {
        let bookworm = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nVERSION_ID=\"12\"\n\
                        VERSION_CODENAME=bookworm\nID=debian\n";
        assert_eq!(codename(bookworm).as_deref(), Some("bookworm"));
        assert_eq!(codename("ID=debian\n"), None);
        assert_eq!(codename("VERSION_CODENAME=\"$(reboot)\"\n"), None);
        assert_eq!(
            qemu_suites("bookworm"),
            [
                "bookworm-backports",
                "bookworm-security",
                "bookworm-updates",
                "bookworm"
            ]
        );
        assert_eq!(qemu_suites("sid"), ["sid"]);
    }

    #[test]
    fn emulators_are_chosen_or_missed() {
        let pattern = "usr/bin/qemu-ARCH-static";
        let mut members: Vec<String> = emulated()
            .map(|arch| format!("./usr/bin/qemu-{arch}-static"))
            .collect();
        members.push("./usr/bin/qemu-aarch64_be-static".into());
        assert_eq!(
            emulator_members(&members, pattern).unwrap(),
            members[..emulated().count()]
        );
        assert!(emulator_members(&members, "usr/bin/qemu-ARCH").is_err());
        members.retain(|member| !member.contains("loongarch64"));
        let error = emulator_members(&members, pattern).unwrap_err().to_string();
        assert!(error.contains("qemu-loongarch64-static"), "{error}");
    }

    #[test]
    fn static_and_dynamic_executables_are_told_apart() {
        let host_dynamic = std::fs::read("/bin/sh").unwrap();
        let interpreter = |bytes: &[u8]| linkage(bytes).map(|linkage| linkage.interpreter);
        assert!(interpreter(&host_dynamic[..]).unwrap().is_some());
        assert!(interpreter(&b"#!/bin/sh\n"[..]).is_err());
        assert!(interpreter(&host_dynamic[..40]).is_err());
        // A static executable: the header with no program header asking for an interpreter (and
        // no sections).
        let mut header = host_dynamic[..64].to_vec();
        header[0x38..0x3a].copy_from_slice(&0u16.to_le_bytes());
        header[0x28..0x30].copy_from_slice(&0u64.to_le_bytes());
        assert_eq!(interpreter(&header[..]).unwrap(), None);
    }

    /// A static ELF executable for `machine` whose code is `instructions` (little-endian):
    /// one loadable segment, the code right after the headers.
    fn tiny_program(machine: u16, instructions: &[u32]) -> Vec<u8> {
        const BASE: u64 = 0x40_0000;
        const HEADERS: u64 = 64 + 56;
        let mut elf = b"\x7fELF\x02\x01\x01".to_vec();
        elf.resize(16, 0);
        elf.extend(2u16.to_le_bytes()); // ET_EXEC
        elf.extend(machine.to_le_bytes());
        elf.extend(1u32.to_le_bytes());
        elf.extend((BASE + HEADERS).to_le_bytes()); // the entry point
        elf.extend(64u64.to_le_bytes()); // program headers
        elf.extend(0u64.to_le_bytes()); // no section headers
        elf.extend(0u32.to_le_bytes());
        for half in [64u16, 56, 1, 64, 0, 0] {
            elf.extend(half.to_le_bytes());
        }
        let size = HEADERS + 4 * instructions.len() as u64;
        elf.extend(1u32.to_le_bytes()); // PT_LOAD
        elf.extend(5u32.to_le_bytes()); // readable, executable
        for word in [0, BASE, BASE, size, size, 0x1000] {
            elf.extend(u64::to_le_bytes(word));
        }
        for instruction in instructions {
            elf.extend(instruction.to_le_bytes());
        }
        elf
    }

    /// Each provisioned emulator runs a program of its architecture: `exit(42)`.
    #[test]
    fn provisioned_emulators_run_their_architectures_programs() {
        use std::os::unix::fs::PermissionsExt;
        // The instructions of `a0 = 42; syscall number = 93 (exit); syscall`.
        let programs: [(&str, [u32; 3]); 3] = [
            ("aarch64", [0xd280_0540, 0xd280_0ba8, 0xd400_0001]),
            ("riscv64", [0x02a0_0513, 0x05d0_0893, 0x0000_0073]),
            ("loongarch64", [0x0380_a804, 0x0381_740b, 0x002b_0000]),
        ];
        assert!(programs.map(|(arch, _)| arch).into_iter().eq(emulated()));
        let Some(_) = qemu_user("aarch64") else {
            eprintln!("qemu's emulators are not provisioned: run `cargo xtask toolchains install`");
            return;
        };
        let sh = xshell::Shell::new().unwrap();
        let dir = crate::project_root().join("target/kshim/test-scratch/emulators");
        std::fs::create_dir_all(&dir).unwrap();
        for (arch, instructions) in programs {
            let machine = crate::targets::target_of_arch(arch).unwrap().machine.0;
            let emulator = qemu_user(arch).unwrap();
            let said = checked_emulator(&emulator).unwrap();
            assert!(said.starts_with("qemu-"), "{said}");
            let program = dir.join(format!("exit-42-{arch}"));
            std::fs::write(&program, tiny_program(machine, &instructions)).unwrap();
            std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
            let status = cmd!(sh, "{emulator} {program}")
                .quiet()
                .ignore_status()
                .output()
                .unwrap()
                .status;
            assert_eq!(
                status.code(),
                Some(42),
                "{} {}",
                emulator.display(),
                program.display()
            );
            let linkage = linkage(&std::fs::read(&program).unwrap()[..]).unwrap();
            assert_eq!(linkage.interpreter, None);
        }
        assert_eq!(qemu_user("x86_64"), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
