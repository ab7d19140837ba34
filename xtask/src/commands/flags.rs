// SPDX-License-Identifier: GPL-2.0
//! Every command and flag of `cargo xtask`, declared once; `--help` is generated from the docs.

use std::path::PathBuf;

xflags::xflags! {
    /// kshim's automation: check which real compilers can build the kernel-style shim.
    ///
    /// Exit status: 0 success; 1 the matrix (or audit, merge) found a mismatch or a failure;
    /// 2 bad input (flags, pin file, catalog) or an environment problem that stopped the work.
    cmd xtask {
        /// Build and test the shim and every example on every pinned toolchain, and compare
        /// what each compiler says with what the catalog predicts.
        cmd matrix {
            /// Select or add a compiler: a pin's id (`debian-1.85.0`, `1.78.0`: the compiler that
            /// satisfies it), a rustup toolchain name (`nightly`, `1.85.0`), a path to a rustc
            /// executable (a wrapper script counts) or a Debian package,
            /// `debian:SUITE:PACKAGE[=VERSION]` (`debian:trixie:rustc`), provisioned under
            /// `target/` on the spot. Repeatable; with it, only these run.
            repeated --toolchain spec: String
            /// Add the pins whose release lies in this range, as cargo-hack's: `1.78..`,
            /// `1.78..1.85` (end excluded), `1.78..=1.85`, `..=1.85`.
            optional --version-range range: String
            /// Output: `human` (default; tables and a summary line per toolchain), `json` or `markdown`.
            optional --format format: String
            /// Run at most N rustc processes at once (default: the number of cores; at most
            /// four per core, and a larger N is lowered to that).
            optional -j, --jobs n: usize
            /// Ignore cached results and run everything again (the cache is still refreshed).
            optional --no-cache
            /// Print every rustc command it would run, one per line, runnable in a POSIX shell; run nothing.
            optional --dry-run
            /// Fail (exit 1) when a pinned toolchain is missing, not only on mismatches.
            optional --strict
            /// Kill any single rustc or test process that runs longer than this many seconds
            /// (default 300, at most 86400).
            optional --timeout seconds: u64
            /// Run only shard K of N of the toolchains (`--shard 1/3`), for spreading the matrix over CI machines.
            optional --shard k_of_n: String
            /// The pin file to read (default: `toolchains.toml` at the repository root).
            optional --pins path: PathBuf
            /// Check the kshim sources in this directory (its `kernel-shim/`, `examples/`, and by
            /// default its `toolchains.toml`) instead of this checkout's; the cache, lock and
            /// report go to its `target/kshim/`.
            optional --root path: PathBuf
            /// Cross-build for only this kernel target (repeatable): x86_64-unknown-none,
            /// aarch64-unknown-none, riscv64imac-unknown-none-elf or loongarch64-unknown-none;
            /// `none` for the host alone. Default: all four.
            repeated --target triple: String
        }

        /// Build real kernel trees' Rust with real compilers: for every pinned tree (`[[tree]]`
        /// in the pin file) and compiler, predict from the tree's own rules and probes, then run
        /// the tree's `make rustavailable` and build its Rust (prepare, rust/, samples/rust/, the
        /// Rust drivers) for real; a prediction the build contradicts is a finding (exit 1).
        cmd kernel {
            /// A tree: a pin's id (`6.12`) or the path of a kernel checkout. Repeatable; default:
            /// every pinned tree.
            repeated --tree tree: String
            /// Select or add a compiler, as for `matrix`. Repeatable; default: every pin.
            repeated --toolchain spec: String
            /// Output: `human` (default), `json` or `markdown`.
            optional --format format: String
            /// The pin file to read (default: `toolchains.toml` at the repository root).
            optional --pins path: PathBuf
            /// Build again even where a cached result exists (the cache is still refreshed).
            optional --no-cache
            /// Kill any single `make` that runs longer than this many seconds (default 1800, at
            /// most 86400).
            optional --timeout seconds: u64
            /// `make -jN` (default: the number of cores; at most four per core, and a larger N
            /// is lowered to that).
            optional -j, --jobs n: usize
            /// Also fail (exit 1) when a cell could not be built (a missing tool or compiler).
            optional --strict
            /// Print the plan (trees to fetch and unpack, pairs to build, cached cells) with its
            /// time and disk estimates; fetch, unpack, build and write nothing.
            optional --dry-run
            /// Also boot each cell that builds: a small kernel with the tree's Rust samples and
            /// Rust KUnit suites, built with that compiler and booted under
            /// qemu-system-x86_64; a boot that does not pass is a finding (exit 1).
            optional --boot
        }

        /// List every pinned toolchain: where it was found, with its `rustc -vV` summary, or
        /// the exact command that would install it.
        cmd toolchains {
            /// Select or add a compiler, as for `matrix`. Repeatable.
            repeated --toolchain spec: String
            /// The pin file to read (default: `toolchains.toml` at the repository root).
            optional --pins path: PathBuf

            /// List the pins (the default).
            default cmd list {}
            /// Install what can be installed: rustup for official releases (fails offline, and
            /// says so), Debian's packages, unpacked under `target/toolchains/`, for the releases
            /// Debian's registry serves.
            cmd install {
                /// Install from Debian's registry only and never run rustup (for machines, such
                /// as CI, that may reach only the package registries).
                optional --no-rustup
                /// Install only the pin with this id, and its Debian compiler's library
                /// sources: no other compiler's, no emulator. Repeatable.
                repeated --only id: String
                /// Install only shard K of N of the pins (`--shard 1/3`), as `matrix --shard`,
                /// with their compilers' library sources and the emulators.
                optional --shard k_of_n: String
            }
            /// Check every provisioned file under `target/toolchains/` against the SHA-256
            /// recorded when it was unpacked; exit 1, naming each damaged file and the
            /// command that repairs it, when one differs or is missing.
            cmd verify {}
        }

        /// Report which of a crate's `#![feature(...)]` lines each toolchain still needs.
        cmd audit {
            /// The crate root to read (`src/lib.rs` of any crate).
            optional path: PathBuf
            /// Audit this comma-separated feature list instead of a file, as in the kernel's
            /// `rust_allowed_features`.
            optional --features list: String
            /// Lint mode: report features stable at or before this release as removable,
            /// `cfg_attr` branches that can no longer be taken as dead, and features a compiler
            /// from this release on rejects (unknown or removed) as build errors.
            optional --min-rust release: String
            /// Select or add a compiler, as for `matrix`. Repeatable.
            repeated --toolchain spec: String
            /// Add the pins whose release lies in this range, as for `matrix`.
            optional --version-range range: String
            /// Output: `human` (default), `json` or `markdown`.
            optional --format format: String
            /// The pin file to read (default: `toolchains.toml` at the repository root).
            optional --pins path: PathBuf
            /// A Kconfig file (the kernel's `init/Kconfig`) whose `def_bool RUSTC_VERSION >= N`
            /// entries decide `CONFIG_*` cfgs, next to the built-in table.
            optional --kconfig path: PathBuf
            /// Show where the crate needs each gated feature it enables, as each compiler says:
            /// one compile per toolchain and feature without it in `-Zallow-features`, through
            /// the toolchain's Cargo for a Cargo package, else on the crate root alone.
            optional --usage
            /// With `--usage`: compile with these rustc arguments (one a line, as rustc's
            /// `@FILE` reads them), the way Kbuild compiles a crate. Only flags known to write
            /// nothing are passed on, every other is named as left out: `--cfg`, `--check-cfg`,
            /// `--edition`, `--crate-type`, `--crate-name`, `--cap-lints`, lints (`-A`, `-W`,
            /// `-D`, `-F` and their long forms), `--target`, `--extern`, `-L`, `--sysroot`, `-O`,
            /// `-g`, `--test`, `-C` code generation (`target-feature`, `target-cpu`,
            /// `opt-level`, `panic`, `relocation-model` and the like), the `-Z` options the
            /// kernel's Makefiles pass that name no path (`crate-attr`, `function-sections`,
            /// `sanitizer` and the like), and one crate root.
            optional --rustc-args path: PathBuf
            /// With `--usage`: run at most N compiles at once (default: the number of cores;
            /// at most four per core, and a larger N is lowered to that).
            optional -j, --jobs n: usize
            /// With `--usage`: ignore cached results and compile everything again (the cache
            /// is still refreshed).
            optional --no-cache
            /// With `--usage`: kill any single compile that runs longer than this many seconds
            /// (default 300, at most 86400).
            optional --timeout seconds: u64
        }

        /// Show where each feature is used, as each compiler says: the shim and every example
        /// compiled in kernel mode once per enabled feature, with that feature left out of
        /// `-Zallow-features`, and the places its E0658 errors point at.
        cmd usage {
            /// Select or add a compiler, as for `matrix`. Repeatable; with it, only these run.
            repeated --toolchain spec: String
            /// Add the pins whose release lies in this range, as for `matrix`.
            optional --version-range range: String
            /// Output: `human` (default; each feature's places per toolchain), `json` or `markdown`.
            optional --format format: String
            /// Run at most N rustc processes at once (default: the number of cores; at most
            /// four per core, and a larger N is lowered to that).
            optional -j, --jobs n: usize
            /// Ignore cached results and compile everything again (the cache is still refreshed).
            optional --no-cache
            /// The pin file to read (default: `toolchains.toml` at the repository root).
            optional --pins path: PathBuf
            /// Kill any single rustc process that runs longer than this many seconds
            /// (default 300, at most 86400).
            optional --timeout seconds: u64
        }

        /// Join matrix reports written by `matrix --shard` into one, with the same tables and
        /// exit status as one whole run.
        cmd merge {
            /// The JSON reports to join.
            repeated reports: PathBuf
            /// Output: `human` (default), `json` or `markdown`.
            optional --format format: String
            /// Fail when a pinned toolchain is missing, as `matrix --strict`.
            optional --strict
            /// The pin file the shards were run from (default: `toolchains.toml` at the
            /// repository root); the shards must cover its pins exactly.
            optional --pins path: PathBuf
        }

        /// Say which compilers build the shim, a crate root or a kernel tree, in which mode.
        /// The oldest and the newest provisioned compiler that builds it in stable mode (no
        /// `#![feature]`, no `RUSTC_BOOTSTRAP`) and in kernel mode (as Kbuild builds it, with
        /// `RUSTC_BOOTSTRAP=1` where the compiler gates a feature it enables), and the
        /// compilers between them that fail or are not available (missing pins, broken ones),
        /// in release order; from the cache where it can.
        ///
        /// Exit status: 0 an answer was found; 1 no compiler here builds it; 2 bad input.
        cmd msrv {
            /// Answer for this crate root (`src/lib.rs` of any crate) instead of the shim: the
            /// audit's probe of the features it enables, then the root compiled alone, in its
            /// package's edition, by every compiler (a crate with dependencies cannot be).
            optional --root path: PathBuf
            /// Answer for this kernel tree instead of the shim: a tree pin's id (`6.12`) or the
            /// path of a kernel checkout, from `cargo xtask kernel`'s cached results; a compiler
            /// that tree was not built with is shown with the tree's prediction and what a
            /// build costs.
            optional --tree tree: String
            /// Select or add a compiler, as for `matrix`. Repeatable; with it, only these.
            repeated --toolchain spec: String
            /// Add the pins whose release lies in this range, as for `matrix`.
            optional --version-range range: String
            /// Output: `human` (default), `json` or `markdown`.
            optional --format format: String
            /// The pin file to read (default: `toolchains.toml` at the repository root).
            optional --pins path: PathBuf
            /// For the shim: run at most N rustc processes at once (default: the number of
            /// cores).
            optional -j, --jobs n: usize
            /// For the shim: ignore cached results and build again (the cache is still
            /// refreshed). A crate root is always compiled afresh; a tree is only read.
            optional --no-cache
            /// For the shim: kill any single rustc process that runs longer than this many
            /// seconds (default 300, at most 86400).
            optional --timeout seconds: u64
        }

        /// Print a saved report again as the command that wrote it printed it: a matrix (or
        /// `merge`) report or a `kernel` report, as written by `--format json`, recognised by
        /// its members and read with the same checks as `merge` and `docs` read them.
        cmd show {
            /// The JSON report.
            required report: PathBuf
            /// Output: `human` (default), `json` or `markdown`.
            optional --format format: String
        }

        /// Print the CI job matrix (JSON) from the pin file, for the GitHub Actions workflow.
        cmd ci-matrix {
            /// How many shards to spread the toolchains over (default: one per toolchain).
            optional --shards n: usize
            /// Print the kernel trees' job matrix instead: one job per pinned tree, which builds
            /// that tree with every compiler (`cargo xtask kernel --tree ID`).
            optional --kernel
            /// The pin file to read (default: `toolchains.toml` at the repository root).
            optional --pins path: PathBuf
        }

        /// Regenerate the README's feature table, `docs/features.md` and the compatibility
        /// page `docs/compat.html` from the catalog and the reports recorded under `docs/`.
        cmd docs {
            /// A matrix JSON report whose statuses replace those in `docs/features.md`, recorded
            /// as `docs/matrix-report.json` for the page; without one they are kept as they are.
            optional --report path: PathBuf
            /// A usage JSON report (`cargo xtask usage --format json`) whose places replace those
            /// in `docs/features.md`, recorded as `docs/usage-report.json` for the page; without
            /// one they are kept as they are.
            optional --usage path: PathBuf
            /// Only check that the generated files are up to date (with `--report`, the
            /// statuses too); change nothing.
            optional --check
            /// Also take `docs/compat.png`, the screenshot of the compatibility page, with
            /// headless chromium (`apt-get install chromium`).
            optional --screenshot
            /// Record both reports anew: run the matrix and the usage run (every pin; a pin
            /// that cannot be had is recorded as missing), then regenerate from them.
            optional --record
            /// With `--record`, only this compiler, as for `matrix`. Repeatable.
            repeated --toolchain spec: String
        }

        /// Time a cold matrix, a warm matrix and the same rustc commands run by
        /// `make -j <cores>`, and print the figures for BENCHMARKS.md.
        cmd bench {
            /// Select or add a compiler, as for `matrix`. Repeatable.
            repeated --toolchain spec: String
            /// How many times to run each measurement (default 3).
            optional --runs n: usize
            /// Cross-build for only this kernel target, as for `matrix`. Repeatable.
            repeated --target triple: String
            /// Time the usage run (`cargo xtask usage`'s compiles) instead of the matrix.
            optional --usage
        }
    }
}
