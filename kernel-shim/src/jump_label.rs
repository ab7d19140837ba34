// SPDX-License-Identifier: GPL-2.0
//! Static keys: branches that cost one NOP while disabled, like the kernel's `jump_label.rs`.
//!
//! C header: `include/linux/jump_label.h`. In the kernel, `static_branch_unlikely!(KEY)` compiles
//! to a NOP at the branch site and an entry in the `__jump_table` section: where the site is,
//! where the unlikely block is, and which key decides. Enabling the key rewrites the NOP into a
//! jump to the block; disabling it writes the NOP back. The Rust side needs `asm goto` for that:
//! an `asm!` with a `label { ... }` operand, so that the patched jump lands in a Rust block
//! (`asm_goto`, stable since Rust 1.87.0, tracking issue #119364), and `const` operands for
//! the key's field offset and the branch polarity (`asm_const`, stable since Rust 1.82.0).
//!
//! [`static_branch_unlikely!`] expands the architecture's `arch_static_branch` (see
//! [`crate::arch`]: x86-64, arm64, riscv64 and loongarch64). What C does in
//! `kernel/jump_label.c`, the keys' counts and the rewriting of their sites, is in [`patching`].
//!
//! The stable replacement, [`load_and_branch`], is the kernel's `CONFIG_JUMP_LABEL=n` path:
//! `static_key_count()` and an ordinary branch, a load and a compare on every pass. It is
//! chosen before Rust 1.87.0 in stable mode, and on every other architecture.

pub mod patching;

pub use patching::{init, sites, JumpEntry, StaticKey, TextPatching, TextPoke};

/// Whether the unlikely branch guarded by a static key should run, like `static_branch_unlikely()`.
///
/// `static_branch_unlikely!(KEY)` takes a `static` [`StaticKey`];
/// `static_branch_unlikely!(TRACEPOINT, Tracepoint, key)` takes a `static` whose field `key`
/// is the [`StaticKey`], the kernel's form, which passes `offset_of!(Tracepoint, key)` to the
/// assembly as a `const` operand. Where the `asm goto` form is compiled, the crate using the
/// macro needs `asm_goto` (and `asm_const` before Rust 1.82.0), as a kernel driver does.
///
/// # Examples
///
/// The key is patched through the hook that loading a module installs:
///
/// ```
/// # #![cfg_attr(kshim_kernel_mode, feature(used_with_arg))]
/// use core::sync::atomic::{AtomicUsize, Ordering};
/// use kernel::jump_label::StaticKey;
/// use kernel::prelude::*;
///
/// module! {
///     type: Checker,
///     name: "checker",
///     authors: ["Rust for Linux Contributors"],
///     description: "debug checks behind a static key",
///     license: "GPL",
/// }
///
/// static DEBUG_CHECKS: StaticKey = StaticKey::INIT;
/// static CHECKED: AtomicUsize = AtomicUsize::new(0);
///
/// fn checked_len(data: &[u8]) -> usize {
///     if kernel::static_branch_unlikely!(DEBUG_CHECKS) {
///         CHECKED.fetch_add(data.len(), Ordering::Relaxed);
///     }
///     data.len()
/// }
///
/// struct Checker;
///
/// impl kernel::Module for Checker {
///     fn init(_module: &'static ThisModule) -> Result<Self> {
///         checked_len(&[1, 2, 3]);
///         DEBUG_CHECKS.enable();
///         checked_len(&[1, 2]);
///         assert!(DEBUG_CHECKS.disable());
///         checked_len(&[1]);
///         Ok(Checker)
///     }
/// }
///
/// kernel::host::load_unload::<Checker>(&THIS_MODULE).unwrap();
/// assert_eq!(CHECKED.load(Ordering::Relaxed), 2, "only the call while enabled checked");
/// ```
#[macro_export]
macro_rules! static_branch_unlikely {
    ($key:path) => {
        $crate::__static_branch_unlikely!($key, 0, &$key)
    };
    ($key:path, $keytyp:ty, $field:ident) => {{
        let _: &$keytyp = &$key;
        $crate::__static_branch_unlikely!(
            $key,
            ::core::mem::offset_of!($keytyp, $field),
            &$key.$field
        )
    }};
}
pub use static_branch_unlikely;

/// The `asm goto` form of [`static_branch_unlikely!`]: the architecture's NOP and jump entry.
#[cfg(all(kshim_have_arch, kshim_has_asm_goto))]
#[doc(hidden)]
#[macro_export]
macro_rules! __static_branch_unlikely {
    ($key:path, $offset:expr, $key_ref:expr) => {{
        let _: &'static $crate::jump_label::StaticKey = $key_ref;
        $crate::__arch_static_branch!($key, $offset, false)
    }};
}

/// The replacement form of [`static_branch_unlikely!`]: load the count and branch.
#[cfg(not(all(kshim_have_arch, kshim_has_asm_goto)))]
#[doc(hidden)]
#[macro_export]
macro_rules! __static_branch_unlikely {
    ($key:path, $offset:expr, $key_ref:expr) => {
        $crate::jump_label::load_and_branch::static_branch_unlikely($key_ref)
    };
}

/// The stable replacement: load the count and branch on it, as C does without jump labels.
pub mod load_and_branch {
    use super::StaticKey;

    /// Whether the unlikely branch should run, decided by an atomic load and a compare.
    #[inline(always)]
    pub fn static_branch_unlikely(key: &StaticKey) -> bool {
        key.is_enabled()
    }
}

/// Turns a branch polarity into the `const` operand added to the key's address.
///
/// A function rather than a cast, as in `rust/kernel/jump_label.rs`, so that only a `bool` is
/// accepted.
#[doc(hidden)]
pub const fn bool_to_int(branch: bool) -> i32 {
    branch as i32
}

#[cfg(test)]
mod tests {
    use super::*;
    use patching::tests::init_for_tests;

    #[cfg(all(kshim_have_arch, kshim_has_asm_goto))]
    #[test]
    fn gated_matches_replacement_asm_goto() {
        use crate::arch::current;

        /// A key inside a larger `static`, as the kernel's tracepoints hold theirs.
        #[repr(C)]
        struct Tracepoint {
            name: &'static str,
            key: StaticKey,
        }
        static TRACEPOINT: Tracepoint = Tracepoint {
            name: "sched_switch",
            key: StaticKey::INIT,
        };
        static KEY: StaticKey = StaticKey::INIT;

        /// One site per key, out of line so that each has exactly one entry.
        #[inline(never)]
        fn tracepoint_on() -> bool {
            crate::static_branch_unlikely!(TRACEPOINT, Tracepoint, key)
        }
        #[inline(never)]
        fn key_on() -> bool {
            crate::static_branch_unlikely!(KEY)
        }

        init_for_tests();
        assert_eq!(TRACEPOINT.name, "sched_switch");
        let site = sites(&KEY).next().expect("the site of KEY");
        assert_eq!(sites(&KEY).count(), 1);
        let tracepoint_site = sites(&TRACEPOINT.key)
            .next()
            .expect("the site of TRACEPOINT");
        assert!(!site.is_branch());

        // Counts chosen to reach both outcomes and the patching's edges: zero, one, several.
        type Step = fn(&StaticKey);
        let steps: [(Step, bool); 6] = [
            (|_| {}, false),
            (StaticKey::enable, true),
            (StaticKey::enable, true),
            (|key| assert!(key.disable()), true),
            (|key| assert!(key.disable()), false),
            (|key| assert!(!key.disable()), false),
        ];
        for (step, expected) in steps {
            step(&KEY);
            step(&TRACEPOINT.key);
            assert_eq!(key_on(), expected, "asm goto");
            assert_eq!(tracepoint_on(), expected, "asm goto, by field offset");
            assert_eq!(load_and_branch::static_branch_unlikely(&KEY), expected);
            // The real bytes at the site: the NOP, or the jump to the label.
            let jump = current::jump(site.code(), site.target()).unwrap();
            let (now, other) = (site.instruction(), tracepoint_site.instruction());
            if expected {
                assert_eq!(now, jump);
                assert_eq!(
                    other,
                    current::jump(tracepoint_site.code(), tracepoint_site.target()).unwrap()
                );
            } else {
                assert_eq!((now, other), (current::NOP, current::NOP));
            }
        }
    }
}
