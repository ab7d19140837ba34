// SPDX-License-Identifier: GPL-2.0
//! The feature catalog: the one source of truth for every unstable feature kshim covers.
//!
//! Three readers share this file, and none of them keeps a second copy of it: the shim itself
//! (as [`crate::catalog`], so `cargo doc` renders it), the shim's build script (through
//! `#[path]`, to derive the cfgs from the compiler's release) and the xtask (through `#[path]`,
//! to probe compilers, build the shim the way Kbuild does and predict what each compiler must
//! say). It therefore uses `core` only and refers to nothing else in the crate.
//!
//! Every fact here was confirmed against a real compiler or a public source:
//!
//! - "stable since" releases are what `rustc`'s own `stable_features` lint says ("the feature
//!   `inline_const` has been stable since 1.79.0"), checked on 1.85.0, 1.95.0, 1.96.0 and a
//!   1.97.0 nightly, and agree with the seed commit's comments and the Rust release notes;
//! - tracking issues are the ones `rustc` names in its E0658 "see issue #N" notes where it
//!   names one: 1.63.0 for `inline_const`, `lint_reasons`, `raw_ref_op`, `const_mut_refs` and
//!   `asm_const`, 1.85.0 for `asm_goto`, a 1.97.0 nightly for `arbitrary_self_types`,
//!   `derive_coerce_pointee`, `coerce_unsized` and `unsize`; that nightly names none for
//!   `dispatch_from_dyn` (`issue = "none"` in `core`). Where the compiler's message names no
//!   issue, the public source is: for the library features, `const_ptr_write`, #86302 in
//!   `core`'s `rustc_const_unstable` attribute, and `const_maybe_uninit_as_mut_ptr`, #75251,
//!   which its stabilization (rust-lang/rust #130542, for 1.83.0) cites; for
//!   `const_refs_to_cell`, a language feature (rustc's `accepted.rs` lists it, stable in
//!   1.83.0), #80384 in that table;
//! - `derive_coerce_pointee` first exists in 1.84.0, which is why the kernel's
//!   `CONFIG_RUSTC_HAS_COERCE_POINTEE` is `RUSTC_VERSION >= 108400`.
//!
//! The entries after the seed's fourteen are the features the pinned Debian trees (6.1.192,
//! 6.12.118, 7.2.13, 7.3-rc7) enable besides, each confirmed the same way, and against the
//! trees' own `rust/*/lib.rs`, `scripts/Makefile.build` (`rust_allowed_features`) and
//! `init/Kconfig`:
//!
//! - `core_ffi_c`: 1.78.0 to 1.98.1 and the nightly say "stable since 1.64.0"; 1.63.0 rejects
//!   `core::ffi::c_int` with E0658 naming #94501; 1.48.0 does not know the name (E0635). Only
//!   6.1 enables it, in `rust/kernel/lib.rs`, `rust/bindings/lib.rs` and as its whole
//!   `rust_allowed_features` (its `module!` expands `init_module() -> core::ffi::c_int`); 6.12
//!   has none of them.
//! - `used_with_arg`: unstable on every compiler here, 1.63.0 to the nightly; `#[used(compiler)]`
//!   without it is E0658 naming #93798 (1.63.0, 1.78.0, 1.96.0, the nightly); 1.48.0 does not
//!   know the name. 6.12 and 7.3 enable it in `rust/kernel/lib.rs` (7.3 under "To be
//!   determined.") and `rust_allowed_features`, since `module!`'s `.modinfo` statics say
//!   `#[used(compiler)]` in the driver's crate; 6.1 has neither, its `module!` a plain
//!   `#[used]`.
//! - `file_with_nul`: 1.95.0 to 1.98.1 and the nightly say "stable since 1.92.0" (the method
//!   is `Location::file_as_c_str` there: `#[stable(feature = "file_with_nul", since =
//!   "1.92.0")]` in their `core`); 1.85.0 and 1.85.1 do not know the name (E0635). No compiler
//!   here lies between, so its first release, 1.89.0, and the rename, 1.91.0, are the trees'
//!   `init/Kconfig` thresholds (`RUSTC_HAS_FILE_WITH_NUL`, `RUSTC_HAS_FILE_AS_C_STR`), and
//!   #141727 is `core`'s `#[unstable(feature = "file_with_nul", issue = "141727")]` before the
//!   stabilization. 7.2 and 7.3 enable it in `rust/kernel/lib.rs` under
//!   `CONFIG_RUSTC_HAS_FILE_WITH_NUL`, for `file_from_location` (`might_sleep()` in `task.rs`);
//!   6.12 has neither cfg.
//! - `cfi_encoding`: unstable on every compiler from 1.78.0 to the nightly; `#[cfi_encoding]`
//!   without it is E0658 naming #89653 (1.78.0, 1.96.0, the nightly); 1.63.0 knows no such
//!   attribute or feature (E0635), so it first exists between 1.64.0 and 1.78.0, before the
//!   minimum. 7.2 and 7.3 enable it in `rust/bindings/lib.rs` and `rust/uapi/lib.rs`, for the
//!   `#[cfi_encoding = "10lru_status"]` their `rust/bindgen_parameters` put on `lru_status`;
//!   6.12 has neither.
//!
//! The `cargo xtask matrix` job re-checks the probe-able facts on every run: where a compiler
//! disagrees with this file, the compiler wins and the difference is reported as a failure.

/// A Rust release number, `major.minor.patch`, without channel or build suffixes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Release {
    /// The major version, `1` for every release so far.
    pub major: u32,
    /// The minor version: `85` in 1.85.0.
    pub minor: u32,
    /// The patch version: `1` in 1.84.1.
    pub patch: u32,
}

impl Release {
    /// Builds a release from its three numbers.
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Self {
            major,
            minor,
            patch,
        }
    }

    /// Parses exactly `MAJOR.MINOR.PATCH`, three decimal numbers and nothing else.
    ///
    /// Suffixes such as `-nightly` belong to the caller, which knows what they mean.
    pub fn parse(text: &str) -> Option<Self> {
        let mut parts = text.split('.');
        let mut next = || -> Option<u32> {
            let part = parts.next()?;
            if part.is_empty() || !part.bytes().all(|byte| byte.is_ascii_digit()) {
                return None;
            }
            part.parse().ok()
        };
        let release = Self::new(next()?, next()?, next()?);
        match parts.next() {
            None => Some(release),
            Some(_) => None,
        }
    }
}

impl core::fmt::Display for Release {
    fn fmt(&self, formatter: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(formatter, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The oldest compiler the kernel supported at the time of the seed commit: the minimum from
/// Linux 6.11 on, when the kernel began to support a range of versions (6.10's check refused
/// compilers older than 1.78.0 and warned about newer ones).
pub const MINIMUM_RELEASE: Release = Release::new(1, 78, 0);

/// The cfg that is set when the shim is built the way the kernel builds `rust/kernel`.
///
/// Kernel mode means `RUSTC_BOOTSTRAP=1` (or a nightly compiler) and the whole `#![feature]`
/// block on; without it, the shim enables no feature at all ("stable mode").
pub const KERNEL_MODE_CFG: &str = "kshim_kernel_mode";

/// The cfg that is set where the architecture being built for has a module in the shim's
/// `arch/`: its static-branch NOP and jump entry and its `asm_const` load. It plays the part of
/// the kernel's `HAVE_ARCH_JUMP_LABEL`, which each architecture's Kconfig selects; without it
/// the shim keeps its portable replacements.
pub const ARCH_CFG: &str = "kshim_have_arch";

/// The `target_arch`es that [`ARCH_CFG`] is set for, as the kernel's Kconfig lists the
/// architectures that select `HAVE_ARCH_JUMP_LABEL`. The xtask's table of the kernel's
/// architectures (`xtask/src/targets.rs`) has a row for each, and a test keeps the two equal.
pub const ARCH_MODULES: &[&str] = &["x86_64", "aarch64", "riscv64", "loongarch64"];

/// [`ARCH_CFG`] if a build for `target_arch` gets it.
pub fn arch_cfg(target_arch: &str) -> Option<&'static str> {
    ARCH_MODULES.contains(&target_arch).then_some(ARCH_CFG)
}

/// Where the kernel enables a feature: at the seed commit, or, for a feature the seed does not
/// enable, in the pinned trees that do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelUse {
    /// Only in the `kernel` crate's own list, `rust/kernel/lib.rs`.
    KernelCrate,
    /// Only in `rust_allowed_features`, the `-Zallow-features` list for code outside `rust/`.
    AllowedOutsideRust,
    /// In both lists.
    Both,
    /// In neither: in the crates that hold bindgen's output, `rust/bindings` and `rust/uapi`.
    Bindings,
}

impl KernelUse {
    /// Whether code outside `rust/` (drivers, samples) may enable the feature.
    pub const fn allowed_outside_rust(self) -> bool {
        matches!(self, Self::AllowedOutsideRust | Self::Both)
    }
}

/// A cfg that the build derives from the compiler's release number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DerivedCfg {
    /// The cfg's name, as passed to `--cfg`.
    pub name: &'static str,
    /// The first release on which the cfg is set.
    pub from: Release,
}

impl DerivedCfg {
    /// Whether a compiler of this release gets the cfg.
    pub fn holds_for(&self, release: Release) -> bool {
        release >= self.from
    }
}

/// One unstable feature that the kernel used, and everything kshim knows about it.
#[derive(Clone, Copy, Debug)]
pub struct Feature {
    /// The name inside `#![feature(...)]`.
    pub name: &'static str,
    /// The release that stabilized it, or `None` while it is still unstable.
    pub stable_since: Option<Release>,
    /// The first release that knows the feature at all, where that is later than
    /// [`MINIMUM_RELEASE`]; before it, `#![feature(name)]` is error E0635.
    pub known_since: Option<Release>,
    /// The number of its tracking issue in `rust-lang/rust`, if it has one.
    pub tracking_issue: Option<u32>,
    /// Which of the kernel's two lists enables it.
    pub kernel_use: KernelUse,
    /// The cfg predicate under which the shim's `lib.rs` enables the feature.
    pub gate: &'static str,
    /// The compiler-derived cfg that selects the stabilized form, or the predecessor
    /// features, if any.
    pub cfg: Option<DerivedCfg>,
    /// What the feature does, in one line.
    pub summary: &'static str,
    /// The stable replacement, in one line.
    pub replacement: &'static str,
    /// The file stem of the example in `examples/` that teaches it.
    pub example: &'static str,
    /// The path, from the shim's root, of the abstraction that shows it, for documentation
    /// links (`jump_label::static_branch_unlikely`).
    pub shim_item: &'static str,
}

impl Feature {
    /// Whether this feature is stable on a compiler of this release.
    pub fn is_stable_on(&self, release: Release) -> bool {
        self.stable_since.is_some_and(|since| release >= since)
    }

    /// Whether its form is available to the shim built in this mode by a compiler of this
    /// release: it is stable there, or kernel mode enables it and the compiler knows it.
    pub fn is_available(&self, release: Release, kernel_mode: bool) -> bool {
        self.is_stable_on(release) || (kernel_mode && self.is_known_on(release))
    }

    /// Whether a compiler of this release knows this feature name at all.
    pub fn is_known_on(&self, release: Release) -> bool {
        // `Option::is_none_or` is too new for the shim's 1.78.0 minimum.
        match self.known_since {
            Some(since) => release >= since,
            None => true,
        }
    }
}

const fn stable_cfg(name: &'static str, from: Release) -> Option<DerivedCfg> {
    Some(DerivedCfg { name, from })
}

const RUST_1_64: Release = Release::new(1, 64, 0);
const RUST_1_79: Release = Release::new(1, 79, 0);
const RUST_1_81: Release = Release::new(1, 81, 0);
const RUST_1_82: Release = Release::new(1, 82, 0);
const RUST_1_83: Release = Release::new(1, 83, 0);
const RUST_1_84: Release = Release::new(1, 84, 0);
const RUST_1_87: Release = Release::new(1, 87, 0);
const RUST_1_89: Release = Release::new(1, 89, 0);
const RUST_1_91: Release = Release::new(1, 91, 0);
const RUST_1_92: Release = Release::new(1, 92, 0);

/// The kernel's `CONFIG_RUSTC_HAS_COERCE_POINTEE`: set from 1.84.0, the first release with
/// `derive(CoercePointee)`.
pub const HAS_COERCE_POINTEE: DerivedCfg = DerivedCfg {
    name: "CONFIG_RUSTC_HAS_COERCE_POINTEE",
    from: RUST_1_84,
};

/// The kernel's `CONFIG_RUSTC_HAS_FILE_WITH_NUL`: set from 1.89.0, the first release with
/// `Location::file_with_nul`.
pub const HAS_FILE_WITH_NUL: DerivedCfg = DerivedCfg {
    name: "CONFIG_RUSTC_HAS_FILE_WITH_NUL",
    from: RUST_1_89,
};

/// The kernel's `CONFIG_RUSTC_HAS_FILE_AS_C_STR`: set from 1.91.0, where the method is named
/// `Location::file_as_c_str`.
pub const HAS_FILE_AS_C_STR: DerivedCfg = DerivedCfg {
    name: "CONFIG_RUSTC_HAS_FILE_AS_C_STR",
    from: RUST_1_91,
};

/// The kernel's own compiler cfgs (`init/Kconfig`'s `RUSTC_HAS_*`) that the shim derives too,
/// whether or not a feature's [`Feature::cfg`] is one of them.
pub const KCONFIG_CFGS: &[DerivedCfg] = &[HAS_COERCE_POINTEE, HAS_FILE_WITH_NUL, HAS_FILE_AS_C_STR];

/// The cfgs that say a feature's form is available to the shim, so that each block written in
/// it reads `#[cfg(kshim_has_<feature>)]`: set in kernel mode where the compiler knows the
/// feature, and in either mode where it is stable ([`Feature::is_available`]). A driver may use
/// them for the features Kbuild allows it ([`RUST_ALLOWED_FEATURES`]); for the others it has
/// only the stabilized form, under the feature's own [`Feature::cfg`]. The predecessors of
/// `derive_coerce_pointee` have none: the kernel selects them where
/// `CONFIG_RUSTC_HAS_COERCE_POINTEE` is not set, not where they exist. Nor has `core_ffi_c`,
/// which no block selects.
pub const HAS_CFGS: &[&str] = &[
    "kshim_has_inline_const",
    "kshim_has_lint_reasons",
    "kshim_has_raw_ref_op",
    "kshim_has_const_maybe_uninit_as_mut_ptr",
    "kshim_has_const_mut_refs",
    "kshim_has_const_ptr_write",
    "kshim_has_const_refs_to_cell",
    "kshim_has_arbitrary_self_types",
    "kshim_has_derive_coerce_pointee",
    "kshim_has_asm_const",
    "kshim_has_asm_goto",
    "kshim_has_used_with_arg",
    "kshim_has_file_with_nul",
    "kshim_has_cfi_encoding",
    "kshim_has_generic_arg_infer",
    "kshim_has_unsigned_is_multiple_of",
];

/// The feature that a name of [`HAS_CFGS`] is about.
pub fn has_cfg_feature(name: &str) -> Option<&'static Feature> {
    feature(name.strip_prefix("kshim_has_")?)
}

const KERNEL_MODE_WITH_COERCE_POINTEE: &str =
    "all(kshim_kernel_mode, CONFIG_RUSTC_HAS_COERCE_POINTEE)";
const KERNEL_MODE_WITHOUT_COERCE_POINTEE: &str =
    "all(kshim_kernel_mode, not(CONFIG_RUSTC_HAS_COERCE_POINTEE))";

/// Every feature, in the order of the shim's `lib.rs` feature block.
///
/// The first twelve follow `rust/kernel/lib.rs` as the seed commit leaves it; the next two are
/// the `rust_allowed_features` entries that the kernel crate's own list does not have; the rest
/// are what the pinned trees enable that the seed does not.
pub const FEATURES: &[Feature] = &[
    Feature {
        name: "inline_const",
        stable_since: Some(RUST_1_79),
        known_since: None,
        tracking_issue: Some(76001),
        kernel_use: KernelUse::KernelCrate,
        gate: KERNEL_MODE_CFG,
        cfg: stable_cfg("kshim_stable_inline_const", RUST_1_79),
        summary: "`const { ... }` blocks: a constant evaluated at compile time, inline in an expression",
        replacement: "a named associated `const` on a helper type, evaluated where it is used",
        example: "rust_inline_const",
        shim_item: "const_init::crc::Crc32",
    },
    Feature {
        name: "lint_reasons",
        stable_since: Some(RUST_1_81),
        known_since: None,
        tracking_issue: Some(54503),
        kernel_use: KernelUse::Both,
        gate: KERNEL_MODE_CFG,
        cfg: stable_cfg("kshim_stable_lint_reasons", RUST_1_81),
        summary: "`#[expect(lint, reason = \"...\")]`: an allow that warns once the lint stops firing",
        replacement: "`#[allow(lint)]` with a comment, which silently outlives its reason",
        example: "rust_lint_reasons",
        shim_item: "jump_label::StaticKey",
    },
    Feature {
        name: "raw_ref_op",
        stable_since: Some(RUST_1_82),
        known_since: None,
        tracking_issue: Some(64490),
        kernel_use: KernelUse::Both,
        gate: KERNEL_MODE_CFG,
        cfg: stable_cfg("kshim_stable_raw_ref_op", RUST_1_82),
        summary: "`&raw const place` / `&raw mut place`: a raw pointer to a place without an intermediate reference",
        replacement: "`core::ptr::addr_of!` / `addr_of_mut!`, the same operation spelled as a macro",
        example: "rust_raw_ref_op",
        shim_item: "container_of!",
    },
    Feature {
        name: "const_maybe_uninit_as_mut_ptr",
        stable_since: Some(RUST_1_83),
        known_since: None,
        tracking_issue: Some(75251),
        kernel_use: KernelUse::KernelCrate,
        gate: KERNEL_MODE_CFG,
        cfg: stable_cfg("kshim_stable_const_maybe_uninit_as_mut_ptr", RUST_1_83),
        summary: "`MaybeUninit::as_mut_ptr` in `const fn`: initialize memory in place at compile time",
        replacement: "fill an array of `MaybeUninit` by value, then convert it through a `union`",
        example: "rust_const_maybe_uninit_as_mut_ptr",
        shim_item: "const_init::device_id::IdArray",
    },
    Feature {
        name: "const_mut_refs",
        stable_since: Some(RUST_1_83),
        known_since: None,
        tracking_issue: Some(57349),
        kernel_use: KernelUse::KernelCrate,
        gate: KERNEL_MODE_CFG,
        cfg: stable_cfg("kshim_stable_const_mut_refs", RUST_1_83),
        summary: "`&mut` references in `const fn`: mutate through a helper while evaluating a constant",
        replacement: "pass the table in and return it by value: a copy per call while the constant is evaluated",
        example: "rust_const_mut_refs",
        shim_item: "const_init::crc::crc32_le_table",
    },
    Feature {
        name: "const_ptr_write",
        stable_since: Some(RUST_1_83),
        known_since: None,
        tracking_issue: Some(86302),
        kernel_use: KernelUse::KernelCrate,
        gate: KERNEL_MODE_CFG,
        cfg: stable_cfg("kshim_stable_const_ptr_write", RUST_1_83),
        summary: "`ptr::write` in `const fn`: write through a raw pointer at compile time",
        replacement: "overlay the entry with a byte array in a `union` and write it byte by byte",
        example: "rust_const_ptr_write",
        shim_item: "const_init::device_id::IdArray",
    },
    Feature {
        name: "const_refs_to_cell",
        stable_since: Some(RUST_1_83),
        known_since: None,
        tracking_issue: Some(80384),
        kernel_use: KernelUse::KernelCrate,
        gate: KERNEL_MODE_CFG,
        cfg: stable_cfg("kshim_stable_const_refs_to_cell", RUST_1_83),
        summary: "borrowing a value that may hold interior mutability (a generic `T`, an `UnsafeCell`) during const evaluation, as `transmute_copy(&id)` in a const ID-table builder does",
        replacement: "copy the value through a `union` instead of borrowing it",
        example: "rust_const_refs_to_cell",
        shim_item: "const_init::device_id::IdArray",
    },
    Feature {
        name: "arbitrary_self_types",
        stable_since: None,
        known_since: None,
        tracking_issue: Some(44874),
        kernel_use: KernelUse::Both,
        gate: KERNEL_MODE_CFG,
        cfg: None,
        summary: "methods whose receiver is a custom smart pointer: `fn f(self: ArcBorrow<'_, Self>)`",
        replacement: "an associated function taking the pointer, as the kernel's workqueue does; an extension trait on the pointer keeps `ptr.f()`",
        example: "rust_arbitrary_self_types",
        shim_item: "sync::ArcBorrow",
    },
    Feature {
        name: "derive_coerce_pointee",
        stable_since: None,
        known_since: Some(RUST_1_84),
        tracking_issue: Some(123430),
        kernel_use: KernelUse::KernelCrate,
        gate: KERNEL_MODE_WITH_COERCE_POINTEE,
        cfg: Some(HAS_COERCE_POINTEE),
        summary: "`#[derive(CoercePointee)]`: let a custom smart pointer coerce `Arc<T>` to `Arc<dyn Trait>` and dispatch on it",
        replacement: "an explicit conversion macro that unsizes the inner raw pointer, where the language can check it",
        example: "rust_coerce_pointee",
        shim_item: "sync::Arc",
    },
    Feature {
        name: "coerce_unsized",
        stable_since: None,
        known_since: None,
        tracking_issue: Some(18598),
        kernel_use: KernelUse::KernelCrate,
        gate: KERNEL_MODE_WITHOUT_COERCE_POINTEE,
        cfg: Some(HAS_COERCE_POINTEE),
        summary: "`impl CoerceUnsized`: the pre-1.84 way to make a custom pointer coerce to `dyn Trait`",
        replacement: "the same explicit conversion macro as for `derive_coerce_pointee`",
        example: "rust_coerce_pointee",
        shim_item: "sync::Arc",
    },
    Feature {
        name: "dispatch_from_dyn",
        stable_since: None,
        known_since: None,
        tracking_issue: None,
        kernel_use: KernelUse::KernelCrate,
        gate: KERNEL_MODE_WITHOUT_COERCE_POINTEE,
        cfg: Some(HAS_COERCE_POINTEE),
        summary: "`impl DispatchFromDyn`: the pre-1.84 way to make `self: Arc<Self>` methods object-safe",
        replacement: "dispatch through `&dyn Trait` borrowed from the pointer instead of through the pointer",
        example: "rust_coerce_pointee",
        shim_item: "sync::Arc",
    },
    Feature {
        name: "unsize",
        stable_since: None,
        known_since: None,
        tracking_issue: Some(18598),
        kernel_use: KernelUse::KernelCrate,
        gate: KERNEL_MODE_WITHOUT_COERCE_POINTEE,
        cfg: Some(HAS_COERCE_POINTEE),
        summary: "the `Unsize` marker trait, the bound that the pre-1.84 `CoerceUnsized` impls need",
        replacement: "let the built-in raw-pointer unsizing coercion check `T: Unsize<U>` for you",
        example: "rust_coerce_pointee",
        shim_item: "sync::Arc",
    },
    Feature {
        name: "asm_const",
        stable_since: Some(RUST_1_82),
        known_since: None,
        tracking_issue: Some(93332),
        kernel_use: KernelUse::AllowedOutsideRust,
        gate: KERNEL_MODE_CFG,
        cfg: stable_cfg("kshim_stable_asm_const", RUST_1_82),
        summary: "`const` operands in `asm!`: a compile-time integer pasted into the assembly text",
        replacement: "pass the value in a register operand (`in(reg)`), at the cost of a register and a move",
        example: "rust_asm_const",
        shim_item: "asm::read_once_u32_at",
    },
    Feature {
        name: "asm_goto",
        stable_since: Some(RUST_1_87),
        known_since: None,
        tracking_issue: Some(119364),
        kernel_use: KernelUse::AllowedOutsideRust,
        gate: KERNEL_MODE_CFG,
        cfg: stable_cfg("kshim_stable_asm_goto", RUST_1_87),
        summary: "`label { ... }` operands in `asm!`: assembly that jumps into Rust code, as static keys do",
        replacement: "an ordinary load-and-branch on an atomic flag, paid on every call",
        example: "rust_asm_goto",
        shim_item: "jump_label::static_branch_unlikely",
    },
    Feature {
        name: "core_ffi_c",
        stable_since: Some(RUST_1_64),
        known_since: None,
        tracking_issue: Some(94501),
        kernel_use: KernelUse::Both,
        gate: KERNEL_MODE_CFG,
        // Stable before the minimum: every supported compiler has `core::ffi`.
        cfg: None,
        summary: "`core::ffi::c_int` and the other C types in `core`, right for every target",
        replacement: "a table of aliases per C type and architecture, kept right by hand (the kernel's old `c_types`)",
        example: "rust_core_ffi_c",
        shim_item: "ffi",
    },
    Feature {
        name: "used_with_arg",
        stable_since: None,
        known_since: None,
        tracking_issue: Some(93798),
        kernel_use: KernelUse::Both,
        gate: KERNEL_MODE_CFG,
        cfg: None,
        summary: "`#[used(compiler)]`: keep a static nothing refers to in the object, and say nothing to the linker, as `module!`'s `.modinfo` entries need",
        replacement: "a plain `#[used]`, which from Rust 1.89.0 on ELF also flags the entry's section `SHF_GNU_RETAIN`, unlike C's `.modinfo`",
        example: "rust_used_with_arg",
        shim_item: "module!",
    },
    Feature {
        name: "file_with_nul",
        stable_since: Some(RUST_1_92),
        known_since: Some(RUST_1_89),
        tracking_issue: Some(141727),
        kernel_use: KernelUse::KernelCrate,
        gate: "all(kshim_kernel_mode, CONFIG_RUSTC_HAS_FILE_WITH_NUL)",
        cfg: stable_cfg("kshim_stable_file_with_nul", RUST_1_92),
        summary: "`Location::file_with_nul` (now `file_as_c_str`): the caller's file name as a `&CStr`, for C's `__might_sleep(file, line)`",
        replacement: "copy `Location::file()` into a buffer and append the NUL: a copy per call, stack space, and a cut name past the buffer",
        example: "rust_file_with_nul",
        shim_item: "task::file_from_location",
    },
    Feature {
        name: "cfi_encoding",
        stable_since: None,
        known_since: None,
        tracking_issue: Some(89653),
        kernel_use: KernelUse::Bindings,
        gate: KERNEL_MODE_CFG,
        cfg: None,
        summary: "`#[cfi_encoding = \"10lru_status\"]`: hash a bindgen newtype for kCFI as the C type it stands for, so C's indirect calls into Rust callbacks pass",
        replacement: "a `#[repr(C)]` struct named as C's enum, hashed by that name, but returned as a struct, in memory on some ABIs",
        example: "rust_cfi_encoding",
        shim_item: "bindings::lru_status",
    },
    // 7.2 and 7.3 enable it in `rust/kernel/lib.rs` and `rust_allowed_features` (6.12 in
    // neither): `Bounded::<u32, _>` in `rust/kernel/bitfield.rs`, `.shr::<SHIFT, _>()` in
    // nova-core. 1.63.0 already knows the name; E0658 ("using `_` for array lengths is
    // unstable") names #85077 on 1.63.0 to 1.85.1.
    Feature {
        name: "generic_arg_infer",
        stable_since: Some(RUST_1_89),
        known_since: None,
        tracking_issue: Some(85077),
        kernel_use: KernelUse::Both,
        gate: KERNEL_MODE_CFG,
        cfg: stable_cfg("kshim_stable_generic_arg_infer", RUST_1_89),
        summary: "`_` for a const generic argument, inferred like a type: `addr.shr::<32, _>()` takes its width from the destination",
        replacement: "write the constant out, `shr::<32, 20>()`: the same code, the width written twice",
        example: "rust_generic_arg_infer",
        shim_item: "num::Bounded",
    },
    // 7.3 enables it in `rust/kernel/lib.rs` (7.2 does not) for one call, `io::Region`'s
    // `!size.is_multiple_of(4)`. 1.78.0 says E0635, 1.85.0 knows it; it first exists in 1.82.0
    // (rust-lang/rust #128103, approved 2024-07-28, after 1.81's branch). E0658 names #128101
    // on 1.85.0 and 1.85.1.
    Feature {
        name: "unsigned_is_multiple_of",
        stable_since: Some(RUST_1_87),
        known_since: Some(RUST_1_82),
        tracking_issue: Some(128101),
        kernel_use: KernelUse::KernelCrate,
        gate: "all(kshim_kernel_mode, kshim_has_unsigned_is_multiple_of)",
        cfg: stable_cfg("kshim_stable_unsigned_is_multiple_of", RUST_1_87),
        summary: "`n.is_multiple_of(m)` on unsigned integers: `n % m == 0`, said as meant, and `n == 0` for `m == 0` where `%` panics",
        replacement: "`n % m == 0`: the same code for a constant non-zero `m`; a zero `m` panics",
        example: "rust_unsigned_is_multiple_of",
        shim_item: "io::Region",
    },
];

/// Looks a feature up by its `#![feature(...)]` name.
pub fn feature(name: &str) -> Option<&'static Feature> {
    FEATURES.iter().find(|feature| feature.name == name)
}

/// Every cfg name that a build of the shim may set, each once, for `--check-cfg`.
pub fn all_cfg_names() -> impl Iterator<Item = &'static str> {
    core::iter::once(KERNEL_MODE_CFG)
        .chain(release_cfgs().map(|cfg| cfg.name))
        .chain(HAS_CFGS.iter().copied())
        .chain(core::iter::once(ARCH_CFG))
}

/// The cfgs set from a release on, whatever the mode, each once: the features' own, then the
/// kernel's that are none of them.
fn release_cfgs() -> impl Iterator<Item = DerivedCfg> {
    let own = FEATURES.iter().enumerate().filter_map(|(index, feature)| {
        let cfg = feature.cfg?;
        let first = FEATURES[..index]
            .iter()
            .all(|earlier| earlier.cfg.map(|other| other.name) != Some(cfg.name));
        first.then_some(cfg)
    });
    let kconfig = KCONFIG_CFGS.iter().copied().filter(|cfg| {
        !FEATURES
            .iter()
            .any(|feature| feature.cfg.map(|own| own.name) == Some(cfg.name))
    });
    own.chain(kconfig)
}

/// The cfgs that a compiler of this release gets in this mode, each once, in the order of
/// [`all_cfg_names`] but for [`ARCH_CFG`].
pub fn derived_cfgs(release: Release, kernel_mode: bool) -> impl Iterator<Item = &'static str> {
    let mode = kernel_mode.then_some(KERNEL_MODE_CFG);
    let by_release = release_cfgs()
        .filter(move |cfg| cfg.holds_for(release))
        .map(|cfg| cfg.name);
    let available = HAS_CFGS.iter().copied().filter(move |name| {
        has_cfg_feature(name).is_some_and(|feature| feature.is_available(release, kernel_mode))
    });
    mode.into_iter().chain(by_release).chain(available)
}

/// The features that code outside the shim may enable in kernel mode: the kernel's
/// `rust_allowed_features`, joined with commas for `-Zallow-features`.
pub fn allowed_features() -> impl Iterator<Item = &'static str> {
    FEATURES
        .iter()
        .filter(|feature| feature.kernel_use.allowed_outside_rust())
        .map(|feature| feature.name)
}

/// `rust_allowed_features` as the seed's `scripts/Makefile.build` writes it, then what the
/// pinned trees' lists add (6.1's `core_ffi_c`, 6.12's `used_with_arg`, 7.2's
/// `generic_arg_infer`): the list Kbuild passes to every driver as `-Zallow-features` and
/// `-Zcrate-attr='feature(...)'`; the same features as [`allowed_features`], in the kernel's
/// order.
pub const RUST_ALLOWED_FEATURES: &str =
    "asm_const,asm_goto,arbitrary_self_types,lint_reasons,raw_ref_op,core_ffi_c,used_with_arg,generic_arg_infer";

/// The lints Kbuild's `rust_common_flags` (the top-level `Makefile`, 6.12 and 7.3) allow for
/// every crate, since Kbuild turns the allowed features on for each driver whether it uses them
/// or not, and keeps those already stable until its minimum Rust passes them.
pub const KBUILD_ALLOWED_LINTS: [&str; 2] = ["stable_features", "unused_features"];

/// Calls `flag` with each flag Kbuild gives a driver for the comma-separated allowed features
/// `list` (normally [`RUST_ALLOWED_FEATURES`]): the driver-facing part of `rust_common_cmd`
/// (`scripts/Makefile.build`), so only they may be enabled and they are already on, and
/// [`KBUILD_ALLOWED_LINTS`]. Kbuild's `-Zcrate-attr=no_std` is left out: the examples are host
/// programs. The xtask's compiles and `.cargo/kbuild-rustc` (through the shim's build script)
/// both take their flags from here.
pub fn kbuild_driver_flags(list: &str, mut flag: impl FnMut(core::fmt::Arguments<'_>)) {
    flag(format_args!("-Zallow-features={list}"));
    flag(format_args!("-Zcrate-attr=feature({list})"));
    for lint in KBUILD_ALLOWED_LINTS {
        flag(format_args!("-A{lint}"));
    }
}

/// The first release on which a crate that enables a feature Kbuild has already turned on gets
/// the deny-by-default `duplicate_features` lint instead of error E0636; both say "the feature
/// `...` has already been enabled" (1.78.0: "declared"). Measured with Kbuild's flags on
/// `xtask/programs/kbuild/inside_allow_list.rs`: rustup's 1.95.0 says E0636, Debian's 1.96.0 and a
/// 1.97.0 nightly the lint.
pub const DUPLICATE_FEATURES_LINT_SINCE: Release = Release::new(1, 96, 0);

// Its own file, beside this one, for every reader of this file.
#[path = "catalog/excluded.rs"]
pub mod excluded;
pub use excluded::{check_lists, EXCLUDED};

// Unit tests, not doctests: this file is also compiled into the xtask, where doctests naming
// the `kernel` crate could not run. Their own file, named from here for every reader.
#[cfg(test)]
#[path = "catalog/tests.rs"]
mod tests;
