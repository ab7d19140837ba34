//! Static keys: branches that are almost free while disabled, like `<linux/jump_label.h>`.
//!
//! In the kernel, `static_branch_unlikely(&key)` compiles to a NOP (two or five bytes on
//! x86-64) and an entry in the `__jump_table` section; enabling the key rewrites that NOP into
//! a `jmp` to the unlikely block. The Rust side (`rust/kernel/jump_label.rs`) needs `asm goto` for that: an `asm!` with
//! a `label { ... }` operand, so that the assembly can transfer control into a Rust block
//! (`asm_goto`, stable since Rust 1.87.0, tracking issue #119364). Without it, Rust code can
//! only call `static_key_count()` and branch on the result, a load and a compare on every pass.
//!
//! A process on the host cannot patch its own text, so the `asm_goto` form here keeps the
//! language feature and changes only what decides the jump: the assembly reads the key's
//! count itself and jumps to the label when the key is enabled. The control flow out of the
//! assembly into a Rust block is the kernel's; the patching is not. The stable replacement,
//! [`load_and_branch`], is the kernel's `CONFIG_JUMP_LABEL=n` path: an atomic load and an
//! ordinary branch. [`static_branch_unlikely`] picks the `asm goto` form on x86-64 in kernel
//! mode or from Rust 1.87.0 on, and the replacement everywhere else.

use core::sync::atomic::{AtomicI32, Ordering};

/// A static key: a count of enablers, read by [`static_branch_unlikely`].
///
/// Like C's `struct static_key`, the key is enabled while its count is positive, so that
/// independent users can each enable it and disable it again.
///
/// # Invariants
///
/// `count` is never negative.
#[repr(C)]
#[derive(Debug)]
pub struct StaticKey {
    count: AtomicI32,
}

impl StaticKey {
    /// A disabled key, for initializing `static`s, like C's `STATIC_KEY_INIT_FALSE`.
    ///
    /// A key must live in a `static`, because in the kernel the jump entries point at it. On
    /// Rust 1.78.0, without `const { }` blocks, a `const` is also the only way to fill an array
    /// of keys: `[StaticKey::INIT; N]`.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::jump_label::{static_branch_unlikely, StaticKey};
    ///
    /// static TRACING: StaticKey = StaticKey::INIT;
    /// static PER_CPU_TRACING: [StaticKey; 4] = [StaticKey::INIT; 4];
    ///
    /// assert!(!static_branch_unlikely(&TRACING));
    /// PER_CPU_TRACING[2].enable();
    /// // Each use of the `const` was a fresh key: only the one enabled changed.
    /// assert!(static_branch_unlikely(&PER_CPU_TRACING[2]));
    /// assert!(!static_branch_unlikely(&PER_CPU_TRACING[1]));
    /// ```
    // The lint warns that every use of an interior-mutable `const` is a new copy, which is
    // exactly what an initializer is for. `#[expect]` (stable since 1.81.0) would warn if the
    // lint stopped firing, say once `INIT` became a `const fn`; on older compilers in stable
    // mode, a plain `#[allow]` stays silent forever.
    #[cfg_attr(
        any(kshim_kernel_mode, kshim_stable_lint_reasons),
        expect(
            clippy::declare_interior_mutable_const,
            reason = "an initializer: each use is meant to be a new, disabled key"
        )
    )]
    #[cfg_attr(
        not(any(kshim_kernel_mode, kshim_stable_lint_reasons)),
        allow(clippy::declare_interior_mutable_const)
    )]
    // INVARIANT: the count starts at zero.
    pub const INIT: StaticKey = StaticKey {
        count: AtomicI32::new(0),
    };

    /// Adds one enabler, like `static_key_slow_inc()`; the key is enabled from now on.
    pub fn enable(&self) {
        // INVARIANT: adding one to a non-negative count keeps it non-negative (the count of
        // enablers cannot reach `i32::MAX` in any real use, as in C).
        self.count.fetch_add(1, Ordering::SeqCst);
    }

    /// Removes one enabler, like `static_key_slow_dec()`; returns `false`, and changes nothing,
    /// if the key had none.
    pub fn disable(&self) -> bool {
        self.count
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |count| {
                // INVARIANT: only a positive count is decremented.
                (count > 0).then(|| count - 1)
            })
            .is_ok()
    }

    /// Whether the key is enabled now, like `static_key_enabled()`.
    pub fn is_enabled(&self) -> bool {
        self.count.load(Ordering::Relaxed) > 0
    }
}

/// Whether the unlikely branch guarded by `key` should run, like `static_branch_unlikely()`.
///
/// # Examples
///
/// ```
/// use kernel::jump_label::{static_branch_unlikely, StaticKey};
///
/// static DEBUG_CHECKS: StaticKey = StaticKey::INIT;
///
/// fn checked_len(data: &[u8]) -> usize {
///     if static_branch_unlikely(&DEBUG_CHECKS) {
///         assert!(data.len() < 4096, "oversized buffer");
///     }
///     data.len()
/// }
///
/// assert_eq!(checked_len(&[1, 2, 3]), 3);
/// DEBUG_CHECKS.enable();
/// assert_eq!(checked_len(&[1, 2, 3]), 3);
/// assert!(DEBUG_CHECKS.disable());
/// ```
#[inline(always)]
pub fn static_branch_unlikely(key: &StaticKey) -> bool {
    #[cfg(all(target_arch = "x86_64", any(kshim_kernel_mode, kshim_stable_asm_goto)))]
    {
        asm_goto::static_branch_unlikely(key)
    }
    #[cfg(not(all(target_arch = "x86_64", any(kshim_kernel_mode, kshim_stable_asm_goto))))]
    {
        load_and_branch::static_branch_unlikely(key)
    }
}

/// The `asm goto` form: the assembly decides, and jumps into a Rust block.
///
/// Only x86-64 has it here. The `label { }` operand is input to the `asm!` macro, which a
/// compiler without `asm_goto` never expands while the module is configured out, so the
/// module may stay in this file: Rust 1.63.0 and later parse it without complaint.
#[cfg(all(target_arch = "x86_64", any(kshim_kernel_mode, kshim_stable_asm_goto)))]
pub mod asm_goto {
    use super::StaticKey;

    /// Whether the unlikely branch should run, decided by assembly that jumps to a label.
    ///
    /// The kernel's `arch_static_branch!` emits a NOP that is patched into `jmp {l_yes}`; here
    /// the jump is conditional on the count the assembly loads, and the label block is where
    /// control arrives when the key is enabled.
    #[inline(always)]
    pub fn static_branch_unlikely(key: &StaticKey) -> bool {
        'enabled: {
            // SAFETY: the assembly reads the four aligned bytes of `key.count`, which `key`
            // keeps alive, and writes no memory and no stack. The load is a single aligned
            // `mov`, atomic on x86-64, so it reads the count as a relaxed atomic load would, as
            // the kernel's `READ_ONCE()` does. It leaves only through the fall-through or the
            // label, both of which Rust sees.
            unsafe {
                core::arch::asm!(
                    "cmp dword ptr [{count}], 0",
                    "jg {enabled}",
                    count = in(reg) key.count.as_ptr(),
                    enabled = label {
                        break 'enabled true;
                    },
                    options(nostack, readonly),
                );
            }
            false
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enable_counts_and_disable_never_goes_negative() {
        let key = StaticKey::INIT;
        assert!(!key.is_enabled());
        assert!(!key.disable(), "disabling a disabled key changes nothing");
        key.enable();
        key.enable();
        assert!(key.disable());
        assert!(key.is_enabled(), "one enabler is left");
        assert!(key.disable());
        assert!(!key.is_enabled());
        assert!(!key.disable());
        assert_eq!(key.count.load(Ordering::Relaxed), 0);
    }

    #[cfg(all(target_arch = "x86_64", any(kshim_kernel_mode, kshim_stable_asm_goto)))]
    #[test]
    fn gated_matches_replacement_asm_goto() {
        /// What a caller does on each side of the branch, so that both sides leave a trace.
        fn trace_path(enabled: bool, slow_path_runs: &mut u32) -> &'static str {
            if enabled {
                *slow_path_runs += 1;
                "slow path"
            } else {
                "fast path"
            }
        }

        static KEY: StaticKey = StaticKey::INIT;
        // Counts chosen to reach both outcomes and the compare's edges: zero, one, several.
        type Step = fn(&StaticKey);
        let steps: [(Step, bool); 6] = [
            (|_| {}, false),
            (StaticKey::enable, true),
            (StaticKey::enable, true),
            (|key| assert!(key.disable()), true),
            (|key| assert!(key.disable()), false),
            (|key| assert!(!key.disable()), false),
        ];
        let (mut gated_slow_runs, mut replacement_slow_runs) = (0, 0);
        for (step, expected) in steps {
            step(&KEY);
            let gated = asm_goto::static_branch_unlikely(&KEY);
            let replacement = load_and_branch::static_branch_unlikely(&KEY);
            assert_eq!(gated, expected, "asm goto, count {:?}", KEY.count);
            assert_eq!(
                replacement, expected,
                "load and branch, count {:?}",
                KEY.count
            );
            assert_eq!(
                trace_path(gated, &mut gated_slow_runs),
                trace_path(replacement, &mut replacement_slow_runs)
            );
        }
        assert_eq!((gated_slow_runs, replacement_slow_runs), (3, 3));

        // A count the assembly's signed compare must not mistake for enabled.
        KEY.count.store(i32::MIN, Ordering::Relaxed);
        assert!(!asm_goto::static_branch_unlikely(&KEY));
        assert!(!load_and_branch::static_branch_unlikely(&KEY));
        KEY.count.store(0, Ordering::Relaxed);
    }

    #[cfg(any(kshim_kernel_mode, kshim_stable_lint_reasons))]
    #[test]
    fn gated_matches_replacement_lint_reasons() {
        // `StaticKey::INIT`'s declaration under each of the two attributes: a lint level
        // changes what the compiler says, never what the code does, and this checks it for
        // the property the lint is about: every use of the `const` is a new key.
        //
        // The `cfg_attr` repeats the test's own cfg on purpose: compilers without
        // `lint_reasons` reject `reason =` in a lint attribute even inside code that `#[cfg]`
        // removes (their pre-expansion lint pass reads it; Rust 1.63.0 does), but they never
        // read what an unexpanded `cfg_attr` carries.
        #[cfg_attr(
            any(kshim_kernel_mode, kshim_stable_lint_reasons),
            expect(
                clippy::declare_interior_mutable_const,
                reason = "an initializer: each use is meant to be a new, disabled key"
            )
        )]
        const UNDER_EXPECT: StaticKey = StaticKey {
            count: AtomicI32::new(0),
        };
        #[allow(clippy::declare_interior_mutable_const)]
        const UNDER_ALLOW: StaticKey = StaticKey {
            count: AtomicI32::new(0),
        };
        static EXPECT_KEYS: [StaticKey; 3] = [UNDER_EXPECT; 3];
        static ALLOW_KEYS: [StaticKey; 3] = [UNDER_ALLOW; 3];
        static SHIM_KEYS: [StaticKey; 3] = [StaticKey::INIT; 3];

        for keys in [&EXPECT_KEYS, &ALLOW_KEYS, &SHIM_KEYS] {
            keys[1].enable();
        }
        let states = |keys: &[StaticKey; 3]| {
            let mut states = [false; 4];
            for (state, key) in states.iter_mut().zip(keys) {
                *state = static_branch_unlikely(key);
            }
            let fresh = [UNDER_EXPECT, UNDER_ALLOW, StaticKey::INIT];
            states[3] = fresh.iter().any(static_branch_unlikely);
            states
        };
        let expected = [false, true, false, false];
        assert_eq!(states(&EXPECT_KEYS), expected);
        assert_eq!(states(&ALLOW_KEYS), expected);
        assert_eq!(states(&SHIM_KEYS), expected);
    }
}
