// SPDX-License-Identifier: GPL-2.0
//! Four of the kernel's Rust architectures, one row each: the matrix's target axis, which
//! compilers know each target, what its objects look like and how its programs run here. Every
//! other module asks this table; the shim's `arch/` modules hold the instructions themselves.

pub(crate) mod jump_table;

use crate::catalog::Release;
use anyhow::bail;
use object::elf::{self, Machine, RelocationType};

/// One architecture the kernel builds Rust code for, and the built-in target the matrix uses.
#[derive(Debug, PartialEq, Eq)]
pub struct KernelTarget {
    /// The target triple: a freestanding target, since the kernel brings its own runtime.
    pub triple: &'static str,
    /// `target_arch` as Rust spells it; also the name of its qemu user-mode emulator.
    pub arch: &'static str,
    /// The first release that knows the target, and the public source or compiler that says so.
    pub known_from: (Release, &'static str),
    /// The last release that cannot know it (the target did not exist yet), and why.
    pub absent_through: Option<(Release, &'static str)>,
    /// `e_machine` of its objects.
    pub machine: Machine,
    pub little_endian: bool,
    /// The instruction at every disabled static-branch site, as the shim's `arch::*::NOP`.
    pub nop: &'static [u8],
    /// The relocation types that may carry a `__jump_table` field (`.long x - .`, `.quad x - .`),
    /// each with its role and width in bytes: those measured on the sample with rustc 1.95.0
    /// (x86-64) and Debian's 1.96.0 (all four, LLVM 22).
    pub jump_table: &'static [(RelocationType, Role, u64)],
    /// Whether its test programs run under qemu's user-mode emulator.
    pub emulated: bool,
}

/// What a relocation contributes to a `__jump_table` field: a PC-relative value, or one half of
/// a pair that adds the target and subtracts the field's own address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    PcRelative,
    Add,
    Sub,
}

/// The four architectures, in the order the report shows them.
pub const KERNEL_TARGETS: &[KernelTarget] = &[
    KernelTarget {
        triple: "x86_64-unknown-none",
        arch: "x86_64",
        known_from: (
            Release::new(1, 62, 0),
            "tier 2 from 1.62.0: rust-lang/rust#95705, merged 2022-04-08",
        ),
        absent_through: Some((
            Release::new(1, 56, 0),
            "added by rust-lang/rust#89062, opened 2021-09-18 while 1.57.0 was in development",
        )),
        machine: elf::EM_X86_64,
        little_endian: true,
        nop: &[0x0f, 0x1f, 0x44, 0x00, 0x00],
        // Against the function's section symbol plus the offset; the key field against the
        // key's own symbol plus the field offset.
        jump_table: &[
            (elf::R_X86_64_PC32, Role::PcRelative, 4),
            (elf::R_X86_64_PC64, Role::PcRelative, 8),
        ],
        emulated: false,
    },
    KernelTarget {
        triple: "aarch64-unknown-none",
        arch: "aarch64",
        known_from: (
            Release::new(1, 48, 0),
            "listed by Debian's rustc 1.48.0, the oldest compiler checked",
        ),
        absent_through: None,
        machine: elf::EM_AARCH64,
        little_endian: true,
        nop: &[0x1f, 0x20, 0x03, 0xd5],
        // Against the same symbols as on x86-64.
        jump_table: &[
            (elf::R_AARCH64_PREL32, Role::PcRelative, 4),
            (elf::R_AARCH64_PREL64, Role::PcRelative, 8),
        ],
        emulated: true,
    },
    KernelTarget {
        triple: "riscv64imac-unknown-none-elf",
        arch: "riscv64",
        known_from: (
            Release::new(1, 48, 0),
            "listed by Debian's rustc 1.48.0, the oldest compiler checked",
        ),
        absent_through: None,
        machine: elf::EM_RISCV,
        little_endian: true,
        nop: &[0x13, 0x00, 0x00, 0x00],
        // Every field is an ADD/SUB pair, since linker relaxation may still move the code: the
        // ADD names the target (local labels `.Ltmp`/`.LBB` kept in the symbol table), the SUB a
        // local label at the field itself. The keys are merged into one local
        // `.L_MergedGlobals`, which the key field names with the key's offset in it.
        jump_table: &[
            (elf::R_RISCV_32_PCREL, Role::PcRelative, 4),
            (elf::R_RISCV_ADD32, Role::Add, 4),
            (elf::R_RISCV_ADD64, Role::Add, 8),
            (elf::R_RISCV_SUB32, Role::Sub, 4),
            (elf::R_RISCV_SUB64, Role::Sub, 8),
        ],
        emulated: true,
    },
    KernelTarget {
        triple: "loongarch64-unknown-none",
        arch: "loongarch64",
        known_from: (
            Release::new(1, 72, 0),
            "added by rust-lang/rust#112310, merged 2023-06-07 while 1.72.0 was in development",
        ),
        absent_through: Some((
            Release::new(1, 71, 0),
            "rust-lang/rust#112310 came after 1.71.0 branched",
        )),
        machine: elf::EM_LOONGARCH,
        little_endian: true,
        nop: &[0x00, 0x00, 0x40, 0x03],
        // Against local labels, and the key field against the key's symbol; older LLVMs emit
        // pairs, as riscv64 does (none were seen).
        jump_table: &[
            (elf::R_LARCH_32_PCREL, Role::PcRelative, 4),
            (elf::R_LARCH_64_PCREL, Role::PcRelative, 8),
            (elf::R_LARCH_ADD32, Role::Add, 4),
            (elf::R_LARCH_ADD64, Role::Add, 8),
            (elf::R_LARCH_SUB32, Role::Sub, 4),
            (elf::R_LARCH_SUB64, Role::Sub, 8),
        ],
        emulated: true,
    },
];

/// Compilers whose LLVM writes a target's `__jump_table` entries wrongly: an entry does not
/// lead back to its key, so enabling the key patches nothing.
#[derive(Debug, PartialEq, Eq)]
pub struct BrokenJumpTables {
    /// `target_arch` of the target.
    pub arch: &'static str,
    /// The newest LLVM major version known to do it; every older one is predicted to as well.
    pub llvm_through: u32,
    pub evidence: &'static str,
}

pub const BROKEN_JUMP_TABLES: &[BrokenJumpTables] = &[BrokenJumpTables {
    arch: "loongarch64",
    llvm_through: 16,
    evidence: "LLVM 16 (Debian's rustc 1.78.0, LLVM 16.0.6) assembles the key field \
               `.quad key + offset + branch - .` as an absolute R_LARCH_64, dropping `- .`; \
               LLVM 19 (Debian's 1.85.0) writes R_LARCH_64_PCREL",
}];

/// Why a compiler with LLVM `llvm` (major) writes `target`'s static-branch entries wrongly.
pub fn broken_jump_tables(target: &KernelTarget, llvm: Option<u32>) -> Option<&'static str> {
    let llvm = llvm?;
    BROKEN_JUMP_TABLES
        .iter()
        .find(|broken| broken.arch == target.arch && llvm <= broken.llvm_through)
        .map(|broken| broken.evidence)
}

/// The major version of an LLVM version string (`16.0.6`, `19.1.7-rust-1.85.0-stable`).
pub fn llvm_major(version: &str) -> Option<u32> {
    version.split('.').next()?.parse().ok()
}

pub fn kernel_target(triple: &str) -> Option<&'static KernelTarget> {
    KERNEL_TARGETS.iter().find(|target| target.triple == triple)
}

pub fn target_of_arch(arch: &str) -> Option<&'static KernelTarget> {
    KERNEL_TARGETS.iter().find(|target| target.arch == arch)
}

impl KernelTarget {
    /// Whether a compiler of `release` knows the target: `None` where no source speaks.
    pub fn known_on(&self, release: Release) -> Option<bool> {
        let absent = self
            .absent_through
            .is_some_and(|(through, _)| release <= through);
        (release >= self.known_from.0 || absent).then_some(!absent)
    }
}

/// Reads `--target` values: kernel target triples, each once and in catalog order, or `none`
/// alone for the host only (an empty list).
pub fn parse_targets(values: &[String]) -> anyhow::Result<Vec<&'static KernelTarget>> {
    if values.iter().any(|value| value == "none") {
        if values.len() > 1 {
            bail!("--target none means the host alone; it cannot be given with other targets");
        }
        return Ok(Vec::new());
    }
    if let Some(value) = values.iter().find(|value| kernel_target(value).is_none()) {
        let known: Vec<&str> = KERNEL_TARGETS.iter().map(|target| target.triple).collect();
        bail!(
            "--target {}: not one of the kernel's targets ({}), nor `none`",
            crate::util::output::escape(value),
            known.join(", ")
        );
    }
    // Each once, in catalog order, so that reports of one selection line up.
    Ok(KERNEL_TARGETS
        .iter()
        .filter(|target| values.iter().any(|value| value == target.triple))
        .collect())
}

/// The target names of `rustc --print target-list`, without what is no plausible name (a
/// warning, a blank line).
pub fn parse_target_list(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .map(str::trim)
        .filter(|line| {
            !line.is_empty()
                && line.len() <= 100
                && line
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        })
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn release(text: &str) -> Release {
        Release::parse(text).unwrap()
    }

    #[test]
    fn predictions_speak_only_where_a_source_does() {
        let loongarch = kernel_target("loongarch64-unknown-none").unwrap();
        assert_eq!(loongarch.known_on(release("1.48.0")), Some(false));
        assert_eq!(loongarch.known_on(release("1.71.0")), Some(false));
        assert_eq!(loongarch.known_on(release("1.72.0")), Some(true));
        let x86 = kernel_target("x86_64-unknown-none").unwrap();
        assert_eq!(x86.known_on(release("1.48.0")), Some(false));
        assert_eq!(x86.known_on(release("1.60.0")), None);
        assert_eq!(x86.known_on(release("1.63.0")), Some(true));
        let arm64 = kernel_target("aarch64-unknown-none").unwrap();
        assert_eq!(arm64.known_on(release("1.40.0")), None);
        assert_eq!(arm64.known_on(release("1.78.0")), Some(true));
        for target in KERNEL_TARGETS {
            assert!(
                target.known_on(crate::catalog::MINIMUM_RELEASE) == Some(true),
                "{} must be known from the kernel's minimum on",
                target.triple
            );
        }
    }

    #[test]
    fn target_flags_name_kernel_targets_or_none() {
        let values = |list: &[&str]| {
            list.iter()
                .map(|value| value.to_string())
                .collect::<Vec<_>>()
        };
        let picked = parse_targets(&values(&["aarch64-unknown-none", "aarch64-unknown-none"]));
        assert_eq!(picked.unwrap().len(), 1, "named twice, built once");
        let picked = parse_targets(&values(&[
            "loongarch64-unknown-none",
            "x86_64-unknown-none",
        ]))
        .unwrap();
        assert_eq!(picked[0].triple, "x86_64-unknown-none", "catalog order");
        assert_eq!(parse_targets(&values(&["none"])).unwrap().len(), 0);
        let error = parse_targets(&values(&["none", "x86_64-unknown-none"]))
            .unwrap_err()
            .to_string();
        assert!(error.contains("the host alone"), "{error}");
        let error = parse_targets(&values(&["aarch64-linux\u{1b}[2J"]))
            .unwrap_err()
            .to_string();
        assert!(error.contains("not one of the kernel's targets"), "{error}");
        assert!(!error.contains('\u{1b}'), "escaped: {error}");
    }

    #[test]
    fn broken_jump_tables_follow_the_llvm_version() {
        let loongarch = kernel_target("loongarch64-unknown-none").unwrap();
        let arm64 = kernel_target("aarch64-unknown-none").unwrap();
        assert!(broken_jump_tables(loongarch, llvm_major("16.0.6")).is_some());
        assert!(broken_jump_tables(loongarch, llvm_major("19.1.7")).is_none());
        assert!(
            broken_jump_tables(loongarch, None).is_none(),
            "no claim without a version"
        );
        assert!(broken_jump_tables(arm64, llvm_major("16.0.6")).is_none());
        assert_eq!(llvm_major("22.1.8-rust-1.97.1-stable"), Some(22));
        assert_eq!(llvm_major("garbage"), None);
    }

    #[test]
    fn the_shims_arch_cfg_is_set_for_exactly_the_rows() {
        let arches: Vec<&str> = KERNEL_TARGETS.iter().map(|target| target.arch).collect();
        assert_eq!(arches, crate::catalog::ARCH_MODULES);
    }

    #[test]
    fn target_lists_keep_only_names() {
        let listed =
            parse_target_list("aarch64-unknown-none\n\nwarning: x y\nx86_64-unknown-none\n");
        assert_eq!(listed, ["aarch64-unknown-none", "x86_64-unknown-none"]);
    }
}
