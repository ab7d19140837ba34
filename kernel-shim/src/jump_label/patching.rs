// SPDX-License-Identifier: GPL-2.0
//! What patches static keys' sites: the shim's `kernel/jump_label.c` and `text_poke()`'s caller.
//!
//! Enabling a [`StaticKey`] finds every `__jump_table` entry of that key and rewrites its NOP
//! into a jump to the block (`arch_jump_label_transform()`, through `text_poke()`); disabling it
//! writes the NOP back. The shim is `core`-only, so what depends on the running program comes
//! from whoever loads it, as the kernel's `text_poke()` comes from the architecture: [`init`]
//! receives the program's `__jump_table` and a text-poke hook, which [`module!`](crate::module!)
//! provides on x86-64 Linux hosts (see [`crate::host`]).

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// A static key: a count of enablers, tested by
/// [`static_branch_unlikely!`](crate::static_branch_unlikely!).
///
/// Like C's `struct static_key`, the key is enabled while its count is positive, so that
/// independent users can each enable it and disable it again. Its address, four-byte aligned,
/// is what the `__jump_table` entries point at, with the branch polarity in bit 0.
///
/// # Invariants
///
/// `count` is never negative, and changes only with the jump label lock held; while it is
/// positive, every site of the key that [`init`] knows jumps to its label, and while it is
/// zero, every such site is a NOP.
#[repr(C)]
#[derive(Debug)]
pub struct StaticKey {
    count: AtomicI32,
}

impl StaticKey {
    /// A disabled key, for initializing `static`s, like C's `STATIC_KEY_INIT_FALSE`.
    ///
    /// A key must live in a `static`, because the jump entries point at it. On Rust 1.78.0,
    /// without `const { }` blocks, a `const` is also the only way to fill an array of keys:
    /// `[StaticKey::INIT; N]`.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::jump_label::StaticKey;
    ///
    /// static PER_CPU_TRACING: [StaticKey; 4] = [StaticKey::INIT; 4];
    ///
    /// // Each use of the `const` is a fresh key, at its own address.
    /// assert!(!PER_CPU_TRACING[2].is_enabled());
    /// assert!(!core::ptr::eq(&PER_CPU_TRACING[1], &PER_CPU_TRACING[2]));
    /// ```
    // The lint warns that every use of an interior-mutable `const` is a new copy, which is
    // exactly what an initializer is for. `#[expect]` (stable since 1.81.0) would warn if the
    // lint stopped firing, say once `INIT` became a `const fn`; on older compilers in stable
    // mode, a plain `#[allow]` stays silent forever.
    #[cfg_attr(
        kshim_has_lint_reasons,
        expect(
            clippy::declare_interior_mutable_const,
            reason = "an initializer: each use is meant to be a new, disabled key"
        )
    )]
    #[cfg_attr(
        not(kshim_has_lint_reasons),
        allow(clippy::declare_interior_mutable_const)
    )]
    // INVARIANT: the count starts at zero, and the sites at their NOPs.
    pub const INIT: StaticKey = StaticKey {
        count: AtomicI32::new(0),
    };

    /// Adds one enabler, like `static_key_slow_inc()`; the first one patches every site.
    ///
    /// As in the kernel, the sites jump before the count says so, so that a reader of
    /// [`StaticKey::is_enabled`] never sees an enabled key whose sites still fall through.
    ///
    /// # Panics
    ///
    /// Where the `asm goto` form is compiled, if [`init`] has not run: the sites could not be
    /// patched (the kernel WARNs "static key used before call to jump_label_init()").
    pub fn enable(&self) {
        let state = STATE.lock();
        let count = self.count.load(Ordering::Relaxed);
        if count == 0 {
            state.update(self, true);
        }
        // INVARIANT: a non-negative count plus one stays non-negative (the count of enablers
        // cannot reach `i32::MAX` in any real use, as in C); the sites jump from now on.
        self.count.store(count + 1, Ordering::Release);
    }

    /// Removes one enabler, like `static_key_slow_dec()`; returns `false`, and changes nothing,
    /// if the key had none. The last one writes the NOPs back.
    pub fn disable(&self) -> bool {
        let state = STATE.lock();
        let count = self.count.load(Ordering::Relaxed);
        if count == 0 {
            return false;
        }
        // INVARIANT: only a positive count is decremented; at zero the sites fall through
        // again once `update` returns, before the lock is released.
        self.count.store(count - 1, Ordering::Release);
        if count == 1 {
            state.update(self, false);
        }
        true
    }

    /// Whether the key is enabled now, like `static_key_enabled()`.
    #[inline]
    pub fn is_enabled(&self) -> bool {
        self.count.load(Ordering::Relaxed) > 0
    }
}

/// One `__jump_table` entry, as `arch_static_branch` emits it: three relative offsets.
///
/// The layout of the kernel's `struct jump_entry` with `CONFIG_HAVE_ARCH_JUMP_LABEL_RELATIVE`:
/// each field holds the distance from the field itself to what it names, so the table needs
/// no relocation when the program is loaded at another address.
///
/// # Invariants
///
/// An entry exists only inside the `__jump_table` that the linker built from
/// `arch_static_branch`'s assembly: `code` leads to a site in the program's text, readable
/// for the architecture's `JUMP_LABEL_NOP_SIZE` bytes, `target` to its label, and `key` to a
/// `static` [`StaticKey`] plus the branch polarity.
#[repr(C)]
#[derive(Debug)]
pub struct JumpEntry {
    code: i32,
    target: i32,
    key: isize,
}

impl JumpEntry {
    /// The address of the site, the NOP that enabling rewrites (`jump_entry_code()`).
    pub fn code(&self) -> usize {
        (&self.code as *const i32 as usize).wrapping_add(self.code as isize as usize)
    }

    /// The address of the label, where the patched jump goes (`jump_entry_target()`).
    pub fn target(&self) -> usize {
        (&self.target as *const i32 as usize).wrapping_add(self.target as isize as usize)
    }

    /// The key this site belongs to (`jump_entry_key()`), without the polarity bits.
    pub fn key(&self) -> *const StaticKey {
        let tagged = (&self.key as *const isize as usize).wrapping_add(self.key as usize);
        (tagged & !3) as *const StaticKey
    }

    /// Whether the site jumps when the key is disabled (`jump_entry_is_branch()`).
    ///
    /// `false` for [`static_branch_unlikely!`](crate::static_branch_unlikely!): a NOP while the
    /// key is disabled.
    pub fn is_branch(&self) -> bool {
        (&self.key as *const isize as usize).wrapping_add(self.key as usize) & 1 != 0
    }

    /// The instruction now at the site: the NOP, or the jump that enabling wrote.
    #[cfg(kshim_have_arch)]
    pub fn instruction(&self) -> [u8; crate::arch::current::JUMP_LABEL_NOP_SIZE] {
        let site = self.code() as *const [u8; crate::arch::current::JUMP_LABEL_NOP_SIZE];
        // SAFETY: by the type invariant, `code` leads to that many readable bytes of text; the
        // read is volatile because the text-poke hook changes them behind the compiler's back.
        unsafe { core::ptr::read_volatile(site) }
    }
}

/// Writes `instruction` over the site at `site` in the running program's text, like `text_poke()`.
///
/// # Safety
///
/// `site` must be the address of a static-branch site of the running program, and
/// `instruction` a whole instruction of the same size for the current architecture.
pub type TextPoke = unsafe fn(site: *mut u8, instruction: &[u8]);

/// What the loader of a program gives the jump label code: where the entries are, how to patch.
#[derive(Clone, Copy, Debug)]
pub struct TextPatching {
    /// Returns the program's `__jump_table`, as the linker laid it out.
    pub jump_table: fn() -> &'static [JumpEntry],
    /// Writes an instruction over a site, as the kernel's `text_poke()` does.
    pub text_poke: TextPoke,
}

/// Records the program's jump table and text-poke hook, like `jump_label_init()` at boot.
///
/// The first call checks that every site still holds the architecture's NOP, as the table
/// promises; later calls with the same table change nothing. Only then can keys be enabled.
///
/// # Safety
///
/// `patching.jump_table` must return the running program's `__jump_table` (the entries between
/// the linker's `__start___jump_table` and `__stop___jump_table`), and `patching.text_poke`
/// must write exactly the given bytes over the given site and nothing else, in a way that no
/// thread can observe half done, or while no other thread runs that site.
///
/// # Panics
///
/// If called again with a different table, or if a site does not hold a NOP.
pub unsafe fn init(patching: TextPatching) {
    let mut state = STATE.lock();
    let table = (patching.jump_table)();
    if let Some(known) = state.patching() {
        let known_table = (known.jump_table)();
        assert!(
            core::ptr::eq(known_table, table),
            "jump_label::init: the program's jump table cannot change"
        );
        return;
    }
    #[cfg(all(kshim_have_arch, kshim_has_asm_goto))]
    for entry in table {
        let found = entry.instruction();
        assert!(
            found == crate::arch::current::NOP,
            "jump_label::init: the site at {:#x} holds {found:02x?}, not a NOP",
            entry.code()
        );
    }
    state.set_patching(patching);
}

/// The entries of `key` in the table that [`init`] recorded: its sites, in table order.
///
/// Empty before [`init`], and for a key no
/// [`static_branch_unlikely!`](crate::static_branch_unlikely!) tests.
pub fn sites(key: &StaticKey) -> impl Iterator<Item = &'static JumpEntry> + '_ {
    let table = match STATE.lock().patching() {
        Some(patching) => (patching.jump_table)(),
        None => &[],
    };
    table
        .iter()
        .filter(move |entry| core::ptr::eq(entry.key(), key))
}

/// The jump label lock (`jump_label_mutex`) and what [`init`] recorded.
///
/// # Invariants
///
/// `patching` is only accessed while `locked` is held.
struct JumpLabelState {
    locked: AtomicBool,
    patching: UnsafeCell<Option<TextPatching>>,
}

// SAFETY: `patching` is only touched with `locked` held (see `JumpLabelState::lock`), so the
// state may be shared between threads.
unsafe impl Sync for JumpLabelState {}

static STATE: JumpLabelState = JumpLabelState {
    locked: AtomicBool::new(false),
    patching: UnsafeCell::new(None),
};

impl JumpLabelState {
    /// Takes the lock, spinning until it is free.
    fn lock(&'static self) -> StateGuard {
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            core::hint::spin_loop();
        }
        StateGuard { state: self }
    }
}

/// The jump label lock, held; released when dropped, a panic's unwinding included.
///
/// # Invariants
///
/// `state.locked` is held by this guard.
struct StateGuard {
    state: &'static JumpLabelState,
}

impl StateGuard {
    /// What [`init`] recorded, if it ran.
    fn patching(&self) -> Option<TextPatching> {
        // SAFETY: the lock is held (type invariant), so nothing else accesses `patching`.
        unsafe { *self.state.patching.get() }
    }

    /// Records what [`init`] was given.
    fn set_patching(&mut self, patching: TextPatching) {
        // SAFETY: the lock is held (type invariant), so nothing else accesses `patching`.
        unsafe { *self.state.patching.get() = Some(patching) }
    }

    /// Makes every site of `key` jump (`enabled`) or fall through, like `jump_label_update()`.
    #[cfg(all(kshim_have_arch, kshim_has_asm_goto))]
    fn update(&self, key: &StaticKey, enabled: bool) {
        let patching = self.patching().expect(
            "static key used before jump_label::init(): nothing can patch its sites \
             (on the host, load the code as a module with `module!`)",
        );
        for entry in (patching.jump_table)() {
            if core::ptr::eq(entry.key(), key) {
                // `jump_label_type()`: a site jumps when the key's state differs from its
                // polarity.
                arch_jump_label_transform(&patching, entry, enabled != entry.is_branch());
            }
        }
    }

    /// Without the `asm goto` form there are no sites, and only the count changes.
    #[cfg(not(all(kshim_have_arch, kshim_has_asm_goto)))]
    fn update(&self, _key: &StaticKey, _enabled: bool) {}
}

impl Drop for StateGuard {
    fn drop(&mut self) {
        self.state.locked.store(false, Ordering::Release);
    }
}

/// Writes the jump or the NOP over one site, like the kernel's `arch_jump_label_transform()`.
///
/// As x86's `__jump_label_patch()`, it first checks that the site holds what the other state
/// wrote, so that a wrong table stops here rather than corrupting code.
#[cfg(all(kshim_have_arch, kshim_has_asm_goto))]
fn arch_jump_label_transform(patching: &TextPatching, entry: &JumpEntry, jump: bool) {
    use crate::arch::current;

    let (code, target) = (entry.code(), entry.target());
    let branch = current::jump(code, target).unwrap_or_else(|| {
        panic!("jump label: the site at {code:#x} cannot reach its label at {target:#x}")
    });
    let (expected, new) = if jump {
        (current::NOP, branch)
    } else {
        (branch, current::NOP)
    };
    let found = entry.instruction();
    assert!(
        found == expected,
        "jump label: unexpected instruction {found:02x?} at {code:#x}, expected {expected:02x?}"
    );
    // SAFETY: `code` is a site of the running program (`JumpEntry`'s invariant) and `new` a
    // whole instruction of the architecture's site size; `init`'s caller promised that the
    // hook writes just that, safely for other threads; the jump label lock, held by our
    // caller, keeps two writes from overlapping, as `text_mutex` does.
    unsafe { (patching.text_poke)(code as *mut u8, &new) };
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    crate::__host_text_patching!();

    /// Gives the test binary's jump table and text poke to the jump label code, as a loader would.
    pub(crate) fn init_for_tests() {
        if let Some(patching) = __KSHIM_TEXT_PATCHING {
            // SAFETY: the hook is the host's, for this very program: its table is this
            // binary's `__jump_table`, and its poke writes one site; each test patches only its
            // own keys' sites, which no other test's thread runs.
            unsafe { init(patching) };
        }
    }

    #[test]
    fn enable_counts_and_disable_never_goes_negative() {
        init_for_tests();
        static KEY: StaticKey = StaticKey::INIT;
        assert!(!KEY.is_enabled());
        assert!(!KEY.disable(), "disabling a disabled key changes nothing");
        KEY.enable();
        KEY.enable();
        assert!(KEY.disable());
        assert!(KEY.is_enabled(), "one enabler is left");
        assert!(KEY.disable());
        assert!(!KEY.is_enabled());
        assert!(!KEY.disable());
        assert_eq!(KEY.count.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn entries_decode_their_relative_offsets() {
        #[repr(C)]
        struct Image {
            entry: JumpEntry,
            key: StaticKey,
        }
        static IMAGE: Image = Image {
            // 8 bytes before the entry, 16 after its `target` field, and the key just after
            // the entry, with the polarity bit set.
            entry: JumpEntry {
                code: -8,
                target: 16,
                key: 8 + 1,
            },
            key: StaticKey::INIT,
        };
        let entry = &IMAGE.entry;
        let base = entry as *const JumpEntry as usize;
        assert_eq!(entry.code(), base - 8);
        assert_eq!(entry.target(), base + 4 + 16);
        assert_eq!(entry.key(), &IMAGE.key as *const StaticKey);
        assert!(entry.is_branch());
    }

    #[cfg(kshim_has_lint_reasons)]
    #[test]
    fn gated_matches_replacement_lint_reasons() {
        use crate::jump_label::load_and_branch;

        // `StaticKey::INIT`'s declaration under each of the two attributes: a lint level
        // changes what the compiler says, never what the code does, and this checks it for
        // the property the lint is about: every use of the `const` is a new key.
        //
        // The `cfg_attr` repeats the test's own cfg on purpose: compilers without
        // `lint_reasons` reject `reason =` in a lint attribute even inside code that `#[cfg]`
        // removes (their pre-expansion lint pass reads it; Rust 1.63.0 does), but they never
        // read what an unexpanded `cfg_attr` carries.
        #[cfg_attr(
            kshim_has_lint_reasons,
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

        init_for_tests();
        for keys in [&EXPECT_KEYS, &ALLOW_KEYS, &SHIM_KEYS] {
            keys[1].enable();
        }
        let states = |keys: &[StaticKey; 3]| {
            let mut states = [false; 4];
            for (state, key) in states.iter_mut().zip(keys) {
                *state = load_and_branch::static_branch_unlikely(key);
            }
            let fresh = [UNDER_EXPECT, UNDER_ALLOW, StaticKey::INIT];
            states[3] = fresh.iter().any(load_and_branch::static_branch_unlikely);
            states
        };
        let expected = [false, true, false, false];
        assert_eq!(states(&EXPECT_KEYS), expected);
        assert_eq!(states(&ALLOW_KEYS), expected);
        assert_eq!(states(&SHIM_KEYS), expected);
    }
}
