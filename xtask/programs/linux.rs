// SPDX-License-Identifier: GPL-2.0
//! The process around the checks: Linux's entry point, system calls and the C memory functions.
//!
//! The program links no C library, so what one would give it is here: `_start`, which the
//! kernel jumps to with `argc`, `argv`, `envp` and the auxiliary vector on the stack; `write`,
//! `mprotect` and `exit_group` as `asm!` system calls; standard output for `core::fmt`; the
//! panic handler; and `memcpy` and its kin, which the compiler calls and the sysroot's empty
//! `compiler_builtins` does not provide.

use core::fmt;
use core::sync::atomic::{AtomicUsize, Ordering};

/// Standard output, through one `write` per piece of formatted text.
pub(crate) struct Stdout;

impl fmt::Write for Stdout {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        write_stdout(text.as_bytes());
        Ok(())
    }
}

/// Prints one line to standard output.
macro_rules! say {
    ($($arg:tt)*) => {{
        let _ = core::fmt::Write::write_fmt(
            &mut $crate::linux::Stdout,
            format_args!("{}\n", format_args!($($arg)*)),
        );
    }};
}

#[cfg(target_arch = "x86_64")]
mod numbers {
    pub(super) const WRITE: usize = 1;
    pub(super) const MPROTECT: usize = 10;
    pub(super) const EXIT_GROUP: usize = 231;
}

/// The generic numbers (`include/uapi/asm-generic/unistd.h`) that arm64, RISC-V and
/// LoongArch share.
#[cfg(not(target_arch = "x86_64"))]
mod numbers {
    pub(super) const WRITE: usize = 64;
    pub(super) const EXIT_GROUP: usize = 94;
    pub(super) const MPROTECT: usize = 226;
}

/// A system call with three arguments; returns the kernel's result (negative errno).
///
/// # Safety
///
/// The call must be one whose effects the caller has made sound, as the C library's
/// callers must.
unsafe fn syscall3(number: usize, a0: usize, a1: usize, a2: usize) -> isize {
    let result: isize;
    // SAFETY: the caller vouches for the call; the assembly is the architecture's system
    // call sequence, with the registers the kernel clobbers declared so.
    unsafe {
        #[cfg(target_arch = "x86_64")]
        core::arch::asm!(
            "syscall",
            inlateout("rax") number as isize => result,
            in("rdi") a0,
            in("rsi") a1,
            in("rdx") a2,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
        #[cfg(target_arch = "aarch64")]
        core::arch::asm!(
            "svc 0",
            in("x8") number,
            inlateout("x0") a0 => result,
            in("x1") a1,
            in("x2") a2,
            options(nostack),
        );
        #[cfg(target_arch = "riscv64")]
        core::arch::asm!(
            "ecall",
            in("a7") number,
            inlateout("a0") a0 => result,
            in("a1") a1,
            in("a2") a2,
            options(nostack),
        );
        // The kernel may clobber the temporaries `$t0` to `$t8`, as glibc declares.
        #[cfg(target_arch = "loongarch64")]
        core::arch::asm!(
            "syscall 0",
            in("$a7") number,
            inlateout("$a0") a0 => result,
            in("$a1") a1,
            in("$a2") a2,
            lateout("$t0") _,
            lateout("$t1") _,
            lateout("$t2") _,
            lateout("$t3") _,
            lateout("$t4") _,
            lateout("$t5") _,
            lateout("$t6") _,
            lateout("$t7") _,
            lateout("$t8") _,
            options(nostack),
        );
    }
    result
}

/// Writes all of `bytes` to standard output, giving up on an error.
pub(crate) fn write_stdout(mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: `write` only reads the buffer, which is valid for its length.
        let written = unsafe { syscall3(numbers::WRITE, 1, bytes.as_ptr() as usize, bytes.len()) };
        if written <= 0 {
            return;
        }
        bytes = &bytes[written as usize..];
    }
}

/// Ends the process with `code`.
pub(crate) fn exit(code: i32) -> ! {
    // SAFETY: ending the process is sound at any point.
    unsafe { syscall3(numbers::EXIT_GROUP, code as usize, 0, 0) };
    unreachable!("exit_group returned")
}

/// `mprotect(start, length, protection)`: 0 or a negative errno.
///
/// # Safety
///
/// Taking a permission away must not break code that relies on it.
pub(crate) unsafe fn mprotect(start: usize, length: usize, protection: usize) -> isize {
    // SAFETY: the caller vouches for the change of permissions.
    unsafe { syscall3(numbers::MPROTECT, start, length, protection) }
}

pub(crate) const PROT_READ: usize = 1;
pub(crate) const PROT_WRITE: usize = 2;
pub(crate) const PROT_EXEC: usize = 4;

// The process entry: the kernel starts it with `argc`, `argv`, `envp` and the auxiliary vector
// on the stack, 16-byte aligned; nothing is set up but a zero frame pointer and the argument.
#[cfg(target_arch = "x86_64")]
core::arch::global_asm!(
    ".globl _start",
    "_start:",
    "xor ebp, ebp",
    "mov rdi, rsp",
    "and rsp, -16",
    "call {start}",
    "ud2",
    start = sym start,
);
#[cfg(target_arch = "aarch64")]
core::arch::global_asm!(
    ".globl _start",
    "_start:",
    "mov x29, xzr",
    "mov x30, xzr",
    "mov x0, sp",
    "bl {start}",
    "brk #1",
    start = sym start,
);
#[cfg(target_arch = "riscv64")]
core::arch::global_asm!(
    ".globl _start",
    "_start:",
    "mv fp, zero",
    "mv ra, zero",
    "mv a0, sp",
    "call {start}",
    "unimp",
    start = sym start,
);
#[cfg(target_arch = "loongarch64")]
core::arch::global_asm!(
    ".globl _start",
    "_start:",
    "move $fp, $zero",
    "move $ra, $zero",
    "move $a0, $sp",
    "bl {start}",
    "break 0",
    start = sym start,
);

/// The page size the kernel reports in the auxiliary vector (`AT_PAGESZ`), for `mprotect`.
static PAGE_SIZE: AtomicUsize = AtomicUsize::new(4096);

/// Reads `AT_PAGESZ` from the initial stack, runs the checks and exits with their verdict.
///
/// # Safety
///
/// `stack` must be the stack pointer the kernel started the process with.
unsafe extern "C" fn start(stack: *const usize) -> ! {
    const AT_NULL: usize = 0;
    const AT_PAGESZ: usize = 6;
    // SAFETY: the kernel lays out `argc`, the `argv` pointers and a null, the `envp` pointers
    // and a null, then the auxiliary vector's pairs up to `AT_NULL`, all readable.
    unsafe {
        let argc = *stack;
        let mut word = stack.add(1 + argc + 1);
        while *word != 0 {
            word = word.add(1);
        }
        word = word.add(1);
        while *word != AT_NULL {
            if *word == AT_PAGESZ {
                PAGE_SIZE.store(*word.add(1), Ordering::Relaxed);
            }
            word = word.add(2);
        }
    }
    exit(crate::run_checks())
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    say!("panic: {}", info);
    exit(101)
}

/// The page size, a power of two, as the kernel reported it.
pub(crate) fn page_size() -> usize {
    PAGE_SIZE.load(Ordering::Relaxed)
}

// The memory functions the compiler calls; the crate is `no_builtins`, so these loops stay
// loops. An empty `compiler_builtins` stands in for the real one in the sysroots this program
// is built against, which is why they are here.

/// `memcpy`: copies `n` bytes between non-overlapping buffers.
///
/// # Safety
///
/// As C's `memcpy`.
#[no_mangle]
unsafe extern "C" fn memcpy(dest: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    // SAFETY: the caller guarantees that both buffers hold `n` bytes and do not overlap.
    unsafe { memmove(dest, src, n) }
}

/// `memmove`: copies `n` bytes between possibly overlapping buffers.
///
/// # Safety
///
/// As C's `memmove`.
#[no_mangle]
unsafe extern "C" fn memmove(dest: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    // SAFETY: the caller guarantees that both buffers hold `n` bytes; copying forwards when
    // the destination is below the source, and backwards otherwise, never reads a byte
    // already overwritten.
    unsafe {
        if (dest as usize) < (src as usize) {
            for index in 0..n {
                *dest.add(index) = *src.add(index);
            }
        } else {
            for index in (0..n).rev() {
                *dest.add(index) = *src.add(index);
            }
        }
    }
    dest
}

/// `memset`: fills `n` bytes with the low byte of `value`.
///
/// # Safety
///
/// As C's `memset`.
#[no_mangle]
unsafe extern "C" fn memset(dest: *mut u8, value: i32, n: usize) -> *mut u8 {
    for index in 0..n {
        // SAFETY: the caller guarantees that `dest` holds `n` bytes.
        unsafe { *dest.add(index) = value as u8 };
    }
    dest
}

/// `memcmp`: compares `n` bytes, as unsigned bytes.
///
/// # Safety
///
/// As C's `memcmp`.
#[no_mangle]
unsafe extern "C" fn memcmp(left: *const u8, right: *const u8, n: usize) -> i32 {
    for index in 0..n {
        // SAFETY: the caller guarantees that both buffers hold `n` bytes.
        let (a, b) = unsafe { (*left.add(index), *right.add(index)) };
        if a != b {
            return i32::from(a) - i32::from(b);
        }
    }
    0
}

/// `bcmp`: whether `n` bytes differ, which LLVM calls for equality tests.
///
/// # Safety
///
/// As C's `bcmp`.
#[no_mangle]
unsafe extern "C" fn bcmp(left: *const u8, right: *const u8, n: usize) -> i32 {
    // SAFETY: as for `memcmp`.
    unsafe { memcmp(left, right, n) }
}
