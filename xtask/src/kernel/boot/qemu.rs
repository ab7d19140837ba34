// SPDX-License-Identifier: GPL-2.0
//! Booting a kernel under `qemu-system-x86_64`: finding it (Debian's `qemu-system-x86`),
//! choosing the accelerator (KVM only where it really works, from what the host says, never
//! by waiting out a timeout), and its arguments to boot with the serial console in a file.

use crate::util::process::{self, Invocation};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The package that installs `qemu-system-x86_64` on Debian.
pub(crate) const PACKAGE: &str = "qemu-system-x86";

/// The kernel's command line: the console on the first serial port, KUnit on, a reboot when it
/// is done (`kunit_shutdown`, a `core_param` with no dot; `-no-reboot` turns the reboot into
/// QEMU's exit), and a panic that reboots at once instead of hanging.
pub(crate) const COMMAND_LINE: &str = "console=ttyS0 kunit.enable=1 kunit_shutdown=reboot panic=-1";

/// QEMU, found, and its version line.
#[derive(Clone, Debug)]
pub(crate) struct Qemu {
    pub program: PathBuf,
    pub version: String,
}

/// `qemu-system-x86_64` from `PATH`, or why it cannot be used, naming the package.
pub(crate) fn find() -> Result<Qemu, String> {
    found(process::which("qemu-system-x86_64"))
}

/// [`find`], once `PATH` has been searched.
pub(crate) fn found(program: Option<PathBuf>) -> Result<Qemu, String> {
    let program = program.ok_or_else(|| {
        format!("qemu-system-x86_64 is not installed: `apt-get install {PACKAGE}`")
    })?;
    let invocation = Invocation::new(&program, vec!["--version".into()]);
    let timeout = Duration::from_secs(60);
    match process::run(&invocation, timeout) {
        Ok(output) if output.success() => Ok(Qemu {
            version: output.stdout.lines().next().unwrap_or("").trim().to_owned(),
            program,
        }),
        Ok(output) => Err(format!(
            "`{} --version` failed ({}): reinstall it with `apt-get install --reinstall {PACKAGE}`",
            program.display(),
            output.describe_ending(timeout)
        )),
        Err(error) => Err(process::describe_spawn_error(&program, &error)),
    }
}

/// What the host says about hardware virtualisation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Host {
    /// `/proc/cpuinfo`'s flags name `vmx` or `svm`.
    pub virtualisation: bool,
    /// `/sys/module/kvm_pvm` exists: `/dev/kvm` is kvm-pvm, a software hypervisor on which a
    /// stock kernel cannot boot (an emulation failure at the FPU's `XRSTOR`, then at the
    /// alternatives' `int3`; a `bzImage`'s decompressor runs for minutes).
    pub kvm_pvm: bool,
    /// Whether `/dev/kvm` opens for reading and writing, or why not.
    pub dev_kvm: Result<(), String>,
}

impl Host {
    /// Reads the host's files: `cpuinfo`, the `kvm_pvm` module's directory and the KVM device.
    pub(crate) fn read(cpuinfo: &Path, kvm_pvm: &Path, dev_kvm: &Path) -> Host {
        let text = std::fs::read_to_string(cpuinfo).unwrap_or_default();
        let virtualisation = text.lines().any(|line| {
            line.starts_with("flags")
                && line
                    .split_whitespace()
                    .any(|flag| flag == "vmx" || flag == "svm")
        });
        let dev_kvm = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(dev_kvm)
            .map(drop)
            .map_err(|error| format!("{}: {error}", dev_kvm.display()));
        Host {
            virtualisation,
            kvm_pvm: kvm_pvm.exists(),
            dev_kvm,
        }
    }

    pub(crate) fn this() -> Host {
        Host::read(
            Path::new("/proc/cpuinfo"),
            Path::new("/sys/module/kvm_pvm"),
            Path::new("/dev/kvm"),
        )
    }

    /// The accelerator to boot with, and why: KVM when the CPU has hardware virtualisation,
    /// `/dev/kvm` opens and it is not kvm-pvm; TCG otherwise.
    pub(crate) fn accel(&self) -> (Accel, String) {
        let kvm_pvm = "/dev/kvm is kvm-pvm (/sys/module/kvm_pvm), which cannot boot a stock kernel";
        match &self.dev_kvm {
            _ if self.kvm_pvm => (Accel::Tcg, kvm_pvm.into()),
            _ if !self.virtualisation => (
                Accel::Tcg,
                "the CPU has no vmx or svm flag in /proc/cpuinfo".into(),
            ),
            Ok(()) => (
                Accel::Kvm,
                "/dev/kvm opens and the CPU has vmx or svm".into(),
            ),
            Err(error) => (Accel::Tcg, format!("/dev/kvm cannot be used: {error}")),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Accel {
    Kvm,
    Tcg,
}

impl Accel {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Accel::Kvm => "kvm",
            Accel::Tcg => "tcg",
        }
    }
}

/// QEMU's arguments to boot `image` (a `vmlinux` with the PVH entry) with `accel`, the serial
/// console written to `console`; `-no-reboot` makes the kernel's reboot end QEMU.
pub(crate) fn arguments(accel: Accel, image: &Path, console: &Path) -> Vec<String> {
    let cpu = if accel == Accel::Kvm { "host" } else { "max" };
    format!(
        "-accel {} -cpu {cpu} -m 256M -smp 1 -nodefaults -display none -no-reboot -monitor none",
        accel.word()
    )
    .split(' ')
    .map(str::to_owned)
    .chain([
        "-serial".to_owned(),
        format!("file:{}", console.display()),
        "-kernel".to_owned(),
        image.display().to_string(),
        "-append".to_owned(),
        COMMAND_LINE.to_owned(),
    ])
    .collect()
}
