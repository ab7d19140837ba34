// SPDX-License-Identifier: GPL-2.0
//! `kernel --boot --dry-run`'s part of the plan: per tree a first boot image, then a switch and
//! relink per other compiler, and the boot of each cell whose build passes, or its cached
//! verdict; QEMU and the accelerator as the run would find them (only read); and the cost.

use super::{Estimate, Kept};
use crate::kernel::boot::load;
use crate::kernel::boot::qemu::{self, Accel, Host, Qemu};
use crate::kernel::report::json::BOOT_NOT_RUN;
use std::path::{Path, PathBuf};

/// What the boot stage costs when nothing measured says otherwise (two loaded cores, `-j 2`):
/// a tree's first boot image (`tinyconfig`, the fragment and `olddefconfig` in 13-24 s, then
/// `vmlinux` with every C and Rust object in 211-277 s); a compiler switch in a built boot
/// directory (`olddefconfig`, the Rust objects again and the link: 48-84 s); one boot under TCG
/// to QEMU's exit, KUnit's suites included (0.9-1.5 s).
const FIRST_IMAGE_SECONDS: (f64, f64) = (225.0, 300.0);
const SWITCH_IMAGE_SECONDS: (f64, f64) = (50.0, 85.0);
const BOOT_SECONDS: (f64, f64) = (1.0, 2.0);
/// A boot build directory holds 190-331 MB.
const BOOT_DIR_MB: u64 = 330;

/// The boot stage's plan, gathered pair by pair.
pub(super) struct BootPlan {
    pub qemu: Result<Qemu, String>,
    pub accel: Accel,
    why: String,
    firsts: usize,
    switches: usize,
    cached: usize,
}

impl BootPlan {
    /// QEMU and the accelerator, as the run would find them.
    pub(super) fn find() -> BootPlan {
        let (accel, why) = Host::this().accel();
        BootPlan {
            qemu: qemu::find(),
            accel,
            why,
            firsts: 0,
            switches: 0,
            cached: 0,
        }
    }

    /// The line that says what boots and how.
    pub(super) fn header(&self) -> String {
        match &self.qemu {
            Ok(qemu) => format!(
                "boot: {} under {} ({})",
                qemu.version,
                self.accel.word(),
                self.why
            ),
            Err(why) => format!("boot: not run: {why}"),
        }
    }

    /// What happens to the boot of a pair whose build passes (`cached` its verdict in the
    /// cache, if there is one); `first` is whether the tree's boot directory is still to be
    /// built, and it is once this pair boots.
    pub(super) fn pair(&mut self, cached: Option<PathBuf>, first: &mut bool) -> String {
        if let Err(why) = &self.qemu {
            return format!("boot {BOOT_NOT_RUN}: {why}");
        }
        if let Some(boot) = cached.as_deref().and_then(load) {
            self.cached += 1;
            return format!("boot cached: {}", boot.result);
        }
        if std::mem::take(first) {
            self.firsts += 1;
            "boot (the tree's first boot image: tinyconfig, vmlinux)".into()
        } else {
            self.switches += 1;
            "boot (a switch and relink in the boot directory)".into()
        }
    }

    /// Adds the estimate's lines, the boot times from the verdicts kept under `dir/results/`,
    /// else the defaults above; the disk it takes in MB.
    pub(super) fn estimate(&self, dir: &Path, estimate: &mut Estimate) -> u64 {
        let boots = self.firsts + self.switches;
        let round = f64::round_ties_even;
        let image = "first boot image(s) of a tree";
        estimate.row(self.firsts, image, (FIRST_IMAGE_SECONDS, "default"), round);
        let switch = "boot image switch(es) and relink(s)";
        estimate.row(
            self.switches,
            switch,
            (SWITCH_IMAGE_SECONDS, "default"),
            round,
        );
        let booted = "boot(s) under QEMU with KUnit";
        estimate.row(boots, booted, kept_boot_seconds(dir), round);
        if boots > 0 {
            estimate.lines.push(
                "(each boot only where the pair's build passes; the boot images' build times \
                 are not kept, so those are defaults)"
                    .into(),
            );
        }
        if self.cached > 0 {
            estimate
                .lines
                .push(format!("{} boot(s) cached: read back", self.cached));
        }
        self.firsts as u64 * BOOT_DIR_MB
    }
}

/// The range of the boot times kept with the verdicts under `dir/results/` (`boot-*.json`), else
/// the default.
fn kept_boot_seconds(dir: &Path) -> Kept {
    let entries = std::fs::read_dir(dir.join("results")).into_iter().flatten();
    let times: Vec<f64> = entries
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("boot-"))
        .filter_map(|entry| load(&entry.path())?.seconds)
        .collect();
    let from = "from the boot times kept in target/kernel/results/";
    super::kept_range(&times, from, BOOT_SECONDS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::boot;
    use crate::kernel::report::json::BootJson;
    use crate::kernel::stamps::write_entry;
    use crate::tests::support::scratch_dir;

    /// A pair's boot is a tree's first image once, then switches; a kept verdict is read back;
    /// without QEMU nothing is built; the boot times come from the kept verdicts, else the
    /// defaults.
    #[test]
    fn boots_are_planned_per_tree_and_estimated_from_kept_times() {
        let dir = scratch_dir("kernel-plan-boot");
        let results = dir.join("results");
        std::fs::create_dir_all(&results).unwrap();
        let mut plan = BootPlan {
            qemu: Ok(Qemu {
                program: PathBuf::from("qemu-system-x86_64"),
                version: "QEMU emulator version 7.2.0".into(),
            }),
            accel: Accel::Tcg,
            why: "the CPU has no vmx or svm flag in /proc/cpuinfo".into(),
            firsts: 0,
            switches: 0,
            cached: 0,
        };
        let verdict = |seconds| BootJson {
            result: "pass".into(),
            reason: "rebooted".into(),
            accel: Some("tcg".into()),
            samples: Vec::new(),
            kunit: None,
            console_tail: None,
            seconds,
            cached: false,
        };
        let ids = ("library", "tools");
        let kept = boot::result_entry(&results, (1, 2), ids, &plan.qemu, plan.accel);
        write_entry(&kept, &verdict(Some(3.0))).unwrap();
        write_entry(&results.join("boot-b.json"), &verdict(Some(7.0))).unwrap();
        write_entry(&results.join("boot-c.json"), &verdict(None)).unwrap();
        let other = boot::result_entry(&results, (1, 3), ids, &plan.qemu, plan.accel);
        assert_ne!(kept, other, "another compiler's boot has another entry");

        let mut first = true;
        assert_eq!(
            plan.pair(Some(other.clone()), &mut first),
            "boot (the tree's first boot image: tinyconfig, vmlinux)"
        );
        assert_eq!(
            plan.pair(None, &mut first),
            "boot (a switch and relink in the boot directory)"
        );
        assert_eq!(plan.pair(Some(kept), &mut first), "boot cached: pass");
        let mut estimate = Estimate {
            lines: Vec::new(),
            seconds: (0.0, 0.0),
        };
        let disk = plan.estimate(&dir, &mut estimate);
        assert_eq!(
            estimate.lines[..3],
            [
                "1 first boot image(s) of a tree: 4-5 min (225-300 s each, default)",
                "1 boot image switch(es) and relink(s): 50-85 s (50-85 s each, default)",
                "2 boot(s) under QEMU with KUnit: 6-14 s (3-7 s each, from the boot times kept \
                 in target/kernel/results/)",
            ]
        );
        assert_eq!(
            estimate.lines.last().unwrap(),
            "1 boot(s) cached: read back"
        );
        assert_eq!(estimate.seconds, (225.0 + 50.0 + 6.0, 300.0 + 85.0 + 14.0));
        assert_eq!(disk, BOOT_DIR_MB);

        let empty = scratch_dir("kernel-plan-boot-empty");
        let mut missing = BootPlan {
            qemu: Err(
                "qemu-system-x86_64 is not installed: `apt-get install qemu-system-x86`".into(),
            ),
            ..plan
        };
        missing.firsts = 0;
        missing.switches = 0;
        missing.cached = 0;
        let mut first = true;
        assert_eq!(
            missing.pair(None, &mut first),
            "boot not run: qemu-system-x86_64 is not installed: `apt-get install qemu-system-x86`"
        );
        assert!(first, "without QEMU no boot image is built");
        let mut estimate = Estimate {
            lines: Vec::new(),
            seconds: (0.0, 0.0),
        };
        assert_eq!(missing.estimate(&empty, &mut estimate), 0);
        assert!(estimate.lines.is_empty() && estimate.seconds == (0.0, 0.0));
        assert_eq!(kept_boot_seconds(&empty), (BOOT_SECONDS, "default"));
    }
}
