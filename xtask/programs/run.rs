// SPDX-License-Identifier: GPL-2.0
//! A freestanding Linux program that runs the shim's static keys and `asm_const` loads for real.
//!
//! It is built for a kernel target (`x86_64-unknown-none`, `aarch64-unknown-none`,
//! `riscv64imac-unknown-none-elf`, `loongarch64-unknown-none`) against the shim's rlib alone,
//! linked static and non-PIE, and run as a Linux user process: natively on an x86-64 host, under
//! QEMU's user-mode emulator elsewhere. There is no C library: [`linux`] has `_start`, the
//! system calls as `asm!` and the memory functions; the text-poke hook that
//! [`kernel::jump_label::init`] needs is built here on `mprotect`, as a kernel's `text_poke()`
//! is the architecture's.
//!
//! For each static key it checks the bytes at the key's site (the architecture's NOP, the jump
//! that enabling writes, the NOP again after disabling) and which way the branch goes; for the
//! `asm_const` load it checks that the `const`-operand form and the register-operand form read
//! the same values as Rust does. Where the shim compiles the load-and-branch replacement
//! instead of `asm goto` (stable mode before Rust 1.87.0), there are no sites: it checks that
//! the table is empty and that the branches still follow the keys. It prints every check, then
//! `ok: N checks` and exits 0, or exits 1 if a check failed, or 101 on a panic.

#![no_std]
#![no_main]
// The shim's `static_branch_unlikely!` expands its `asm goto` here, in the user's crate, as a
// kernel driver's does; in kernel mode the xtask gives it Kbuild's flags for a driver, which
// turn the allowed features on, so it writes no `#![feature]`.
// The program brings its own `memcpy` family (the sysroot's `compiler_builtins` is empty), so
// the compiler must not turn their loops back into calls to themselves.
#![no_builtins]
#![deny(unsafe_op_in_unsafe_fn)]

#[macro_use]
mod linux;

use core::fmt;
use core::mem::offset_of;
use kernel::arch::current;
use kernel::jump_label::{self, JumpEntry, StaticKey, TextPatching};

/// The architecture this program was built for, as its output names it.
const ARCH: &str = if cfg!(target_arch = "x86_64") {
    "x86_64"
} else if cfg!(target_arch = "aarch64") {
    "aarch64"
} else if cfg!(target_arch = "riscv64") {
    "riscv64"
} else {
    "loongarch64"
};

/// The tally of checks, each printed as it is made.
struct Checks {
    passed: usize,
    failed: usize,
}

impl Checks {
    fn check(&mut self, what: fmt::Arguments<'_>, holds: bool) {
        if holds {
            self.passed += 1;
            say!("  pass: {}", what);
        } else {
            self.failed += 1;
            say!("  FAIL: {}", what);
        }
    }
}

/// Writes `instruction` over `site`: the text-poke hook handed to [`jump_label::init`].
///
/// The text is mapped read and execute, as the linker laid it out; only the pages of the site
/// become writable, for the write, and then go back. Executable all along, since the code
/// doing the write may share the page.
///
/// # Safety
///
/// As [`jump_label::TextPoke`] requires: `site` is a static-branch site of this program and
/// `instruction` a whole instruction of the site's size; the program has one thread.
unsafe fn text_poke(site: *mut u8, instruction: &[u8]) {
    let page = linux::page_size();
    let first = site as usize & !(page - 1);
    let end = (site as usize + instruction.len() + page - 1) & !(page - 1);
    let rwx = linux::PROT_READ | linux::PROT_WRITE | linux::PROT_EXEC;
    // SAFETY: adding write permission to the program's own text takes nothing away.
    let made_writable = unsafe { linux::mprotect(first, end - first, rwx) };
    assert!(
        made_writable == 0,
        "mprotect({first:#x}, {:#x}, RWX) failed: {made_writable}",
        end - first
    );
    for (index, byte) in instruction.iter().enumerate() {
        // SAFETY: the caller guarantees that the site has `instruction.len()` bytes of this
        // program's text, writable now, which no other thread runs.
        unsafe { core::ptr::write_volatile(site.add(index), *byte) };
    }
    // SAFETY: the new instruction is complete; only synchronizes the instruction stream.
    unsafe { sync_instruction_cache(site as usize) };
    // SAFETY: the text goes back to read and execute, as mapped; nothing writes it meanwhile.
    let restored =
        unsafe { linux::mprotect(first, end - first, linux::PROT_READ | linux::PROT_EXEC) };
    assert!(
        restored == 0,
        "mprotect({first:#x}, R-X) failed: {restored}"
    );
}

/// Makes the instruction just written at `address` the one this thread runs next.
///
/// QEMU's user-mode emulator notices writes to translated code by itself, so this matters on
/// real hardware only. x86-64 keeps its instruction fetch coherent with stores (the kernel's
/// `text_poke()` then serializes other CPUs, which a single thread need not). arm64 must clean
/// the data cache line to the point of unification and invalidate the instruction cache line,
/// as the kernel's `aarch64_insn_patch_text_nosync()` does through `caches_clean_inval_pou()`;
/// RISC-V needs `fence.i` on this hart (and the `riscv_flush_icache` system call once threads
/// can migrate); LoongArch needs `ibar 0`.
///
/// # Safety
///
/// `address` must be mapped.
unsafe fn sync_instruction_cache(address: usize) {
    #[cfg(target_arch = "aarch64")]
    // SAFETY: cache maintenance and barriers change no data; `address` is mapped.
    unsafe {
        core::arch::asm!(
            "dc cvau, {address}",
            "dsb ish",
            "ic ivau, {address}",
            "dsb ish",
            "isb",
            address = in(reg) address,
            options(nostack, preserves_flags),
        )
    };
    // `fence.i` by its encoding: the assembler wants the Zifencei extension, which not every
    // compiler's riscv64imac target feature list names.
    #[cfg(target_arch = "riscv64")]
    // SAFETY: a barrier changes no data.
    unsafe {
        core::arch::asm!(".word 0x0000100f", options(nostack, preserves_flags))
    };
    #[cfg(target_arch = "loongarch64")]
    // SAFETY: a barrier changes no data.
    unsafe {
        core::arch::asm!("ibar 0", options(nostack, preserves_flags))
    };
    let _ = address;
}

/// This program's `__jump_table`, between the bounds the linker defines for the section.
///
/// Without sites (the load-and-branch form) there is no section, and the linker defines no
/// bounds; they are declared weak, so that they are then zero and the table is empty. Rust has
/// no stable weak `extern` static, so the addresses come from the assembly that declares them,
/// which keeps the declaration in the same object file as the references.
fn jump_table() -> &'static [JumpEntry] {
    let (start, stop): (usize, usize);
    // SAFETY: the assembly computes two addresses, touching no memory, stack or flag.
    unsafe {
        #[cfg(target_arch = "x86_64")]
        core::arch::asm!(
            ".weak __start___jump_table",
            ".weak __stop___jump_table",
            "lea {start}, [rip + __start___jump_table]",
            "lea {stop}, [rip + __stop___jump_table]",
            start = out(reg) start,
            stop = out(reg) stop,
            options(nostack, pure, nomem, preserves_flags),
        );
        #[cfg(target_arch = "aarch64")]
        core::arch::asm!(
            ".weak __start___jump_table",
            ".weak __stop___jump_table",
            "adrp {start}, __start___jump_table",
            "add {start}, {start}, :lo12:__start___jump_table",
            "adrp {stop}, __stop___jump_table",
            "add {stop}, {stop}, :lo12:__stop___jump_table",
            start = out(reg) start,
            stop = out(reg) stop,
            options(nostack, pure, nomem, preserves_flags),
        );
        #[cfg(target_arch = "riscv64")]
        core::arch::asm!(
            ".weak __start___jump_table",
            ".weak __stop___jump_table",
            "lla {start}, __start___jump_table",
            "lla {stop}, __stop___jump_table",
            start = out(reg) start,
            stop = out(reg) stop,
            options(nostack, pure, nomem, preserves_flags),
        );
        #[cfg(target_arch = "loongarch64")]
        core::arch::asm!(
            ".weak __start___jump_table",
            ".weak __stop___jump_table",
            "la.pcrel {start}, __start___jump_table",
            "la.pcrel {stop}, __stop___jump_table",
            start = out(reg) start,
            stop = out(reg) stop,
            options(nostack, pure, nomem, preserves_flags),
        );
    }
    if start == 0 {
        return &[];
    }
    let length = (stop - start) / core::mem::size_of::<JumpEntry>();
    // SAFETY: the linker placed the entries that `arch_static_branch` emitted back to back
    // between the bounds; the table lives as long as the program and nothing writes it.
    unsafe { core::slice::from_raw_parts(start as *const JumpEntry, length) }
}

/// Whether the shim compiled `asm goto` sites for static keys, from the cfgs it was built with.
const HAS_SITES: bool = cfg!(kshim_has_asm_goto);

static KEY: StaticKey = StaticKey::INIT;

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

// Out of line, so that each key has exactly one site.
#[inline(never)]
fn key_on() -> bool {
    kernel::static_branch_unlikely!(KEY)
}

#[inline(never)]
fn tracepoint_on() -> bool {
    kernel::static_branch_unlikely!(TRACEPOINT, Tracepoint, key)
}

/// The bytes of an instruction, in address order.
struct Bytes<'a>(&'a [u8]);

impl fmt::Display for Bytes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, byte) in self.0.iter().enumerate() {
            let separator = if index == 0 { "" } else { " " };
            write!(f, "{separator}{byte:02x}")?;
        }
        Ok(())
    }
}

/// Runs every check and prints the verdict; returns the exit status.
pub(crate) fn run_checks() -> i32 {
    let mut checks = Checks {
        passed: 0,
        failed: 0,
    };
    say!(
        "kshim static keys and asm_const on {ARCH}, page size {}",
        linux::page_size()
    );
    let table = jump_table();
    // SAFETY: the table is this program's `__jump_table` and `text_poke` writes one site's
    // instruction; the program has one thread.
    unsafe {
        jump_label::init(TextPatching {
            jump_table,
            text_poke,
        })
    };
    if HAS_SITES {
        say!(
            "asm goto: {} jump table entries, NOP {}",
            table.len(),
            Bytes(&current::NOP)
        );
    } else {
        say!(
            "load and branch: no asm goto in this build, so no sites to patch; checking behaviour only"
        );
        checks.check(
            format_args!("the jump table is empty ({} entries)", table.len()),
            table.is_empty(),
        );
    }
    static_key(&mut checks, "KEY", &KEY, key_on);
    static_key(
        &mut checks,
        "TRACEPOINT.key (by field offset)",
        &TRACEPOINT.key,
        tracepoint_on,
    );
    checks.check(
        format_args!(
            "the tracepoint's other field is intact: {}",
            TRACEPOINT.name
        ),
        TRACEPOINT.name == "sched_switch",
    );
    asm_const(&mut checks);
    if checks.failed == 0 {
        say!("ok: {} checks", checks.passed);
        return 0;
    }
    say!(
        "FAILED: {} of {} checks",
        checks.failed,
        checks.passed + checks.failed
    );
    1
}

/// A step of a key's life: its name, what it does to the key, whether the branch is then taken.
type Step = (&'static str, fn(&StaticKey), bool);

/// Enables and disables `key`, checking its site's bytes and its branch at each step.
fn static_key(checks: &mut Checks, name: &str, key: &'static StaticKey, branch: fn() -> bool) {
    say!("static key {name}:");
    let mut sites = jump_label::sites(key);
    let site = sites.next();
    let more = sites.count();
    if !HAS_SITES {
        checks.check(format_args!("{name} has no site"), site.is_none());
        let steps: [Step; 4] = [
            ("initially", |_| {}, false),
            ("enabled", StaticKey::enable, true),
            ("disabled", |key| assert!(key.disable()), false),
            ("disabled again", |key| assert!(!key.disable()), false),
        ];
        for (step, change, expected) in steps {
            change(key);
            let taken = branch();
            checks.check(
                format_args!("{step}: branch {}", taken_word(taken)),
                taken == expected,
            );
        }
        return;
    }
    let Some(site) = site else {
        checks.check(format_args!("{name} has a site"), false);
        // What the table says instead, so that a miscompiled entry shows which field is off.
        say!(
            "  the key is at {:#x}; the table's entries decode as:",
            key as *const _ as usize
        );
        for entry in jump_table() {
            say!(
                "    code {:#x}, target {:#x}, key {:#x}",
                entry.code(),
                entry.target(),
                entry.key() as usize
            );
        }
        return;
    };
    checks.check(
        format_args!("{name} has exactly one site ({} more)", more),
        more == 0,
    );
    let jump = current::jump(site.code(), site.target());
    checks.check(
        format_args!(
            "the site at {:#x} can reach its label at {:#x}",
            site.code(),
            site.target()
        ),
        jump.is_some(),
    );
    let Some(jump) = jump else { return };
    checks.check(
        format_args!("the jump differs from the NOP: {}", Bytes(&jump)),
        jump != current::NOP,
    );
    // Counts chosen to reach both states and the patching's edges: zero, one, two enablers.
    let steps: [Step; 6] = [
        ("before enable", |_| {}, false),
        ("enabled", StaticKey::enable, true),
        ("enabled twice", StaticKey::enable, true),
        ("disabled once", |key| assert!(key.disable()), true),
        ("disabled", |key| assert!(key.disable()), false),
        ("disabled again", |key| assert!(!key.disable()), false),
    ];
    for (step, change, expected) in steps {
        change(key);
        let bytes = site.instruction();
        let (want, word) = if expected {
            (jump, "the jump")
        } else {
            (current::NOP, "the NOP")
        };
        checks.check(
            format_args!("{step}: site holds {} ({word})", Bytes(&bytes)),
            bytes == want,
        );
        let taken = branch();
        checks.check(
            format_args!("{step}: branch {}", taken_word(taken)),
            taken == expected,
        );
    }
}

fn taken_word(taken: bool) -> &'static str {
    if taken {
        "taken"
    } else {
        "not taken"
    }
}

/// A C-layout block whose fields sit at offsets that every architecture's load encodes.
#[repr(C)]
struct Device {
    status: u32,
    control: u32,
    irq: u32,
    padding: [u32; 500],
    doorbell: u32,
}

/// One field read through each form of `read_once_u32_at`, and what Rust reads there.
struct Read {
    name: &'static str,
    offset: usize,
    expected: u32,
    chosen: u32,
    register: u32,
    /// `None` where the shim has no `const`-operand form (stable mode before Rust 1.82.0).
    constant: Option<u32>,
}

/// Reads fields of a `Device` through every form of `read_once_u32_at` the shim compiled.
fn asm_const(checks: &mut Checks) {
    let mut padding = [0; 500];
    for (index, word) in padding.iter_mut().enumerate() {
        *word = 0x5a5a_0000 | index as u32;
    }
    let device = Device {
        status: 0xdead_beef,
        control: 1 << 31,
        irq: 17,
        padding,
        doorbell: u32::MAX,
    };
    let base = (&device as *const Device).cast::<u8>();
    let gated = cfg!(kshim_has_asm_const);
    say!(
        "asm_const: read_once_u32_at uses the {} form",
        if gated {
            "const-operand"
        } else {
            "register-operand"
        }
    );
    // Each offset as a `const` generic, read through every form the shim has for this build.
    macro_rules! read {
        ($name:literal, $offset:expr, $expected:expr) => {
            // SAFETY: `$offset` is that of a `u32` in the live, aligned `device`.
            unsafe {
                Read {
                    name: $name,
                    offset: $offset,
                    expected: $expected,
                    chosen: kernel::asm::read_once_u32_at::<{ $offset }>(base),
                    register: kernel::asm::register_operand::read_once_u32_at::<{ $offset }>(base),
                    constant: const_form!($offset),
                }
            }
        };
    }
    #[cfg(kshim_has_asm_const)]
    macro_rules! const_form {
        ($offset:expr) => {
            Some(kernel::asm::const_operand::read_once_u32_at::<{ $offset }>(
                base,
            ))
        };
    }
    #[cfg(not(kshim_has_asm_const))]
    macro_rules! const_form {
        ($offset:expr) => {
            None
        };
    }
    let reads = [
        read!("status", offset_of!(Device, status), device.status),
        read!("control", offset_of!(Device, control), device.control),
        read!("irq", offset_of!(Device, irq), device.irq),
        read!("padding[0]", offset_of!(Device, padding), device.padding[0]),
        read!(
            "padding[413]",
            offset_of!(Device, padding) + 4 * 413,
            device.padding[413]
        ),
        read!("doorbell", offset_of!(Device, doorbell), device.doorbell),
    ];
    for Read {
        name,
        offset,
        expected,
        chosen,
        register,
        constant,
    } in reads
    {
        checks.check(
            format_args!("{name} at {offset}: register operand {register:#x}, Rust {expected:#x}"),
            register == expected,
        );
        match constant {
            Some(constant) => checks.check(
                format_args!("{name} at {offset}: const operand {constant:#x}"),
                constant == expected,
            ),
            None => say!("  (no const-operand form in this build)"),
        }
        checks.check(
            format_args!("{name} at {offset}: read_once_u32_at {chosen:#x}"),
            chosen == expected,
        );
    }
}
