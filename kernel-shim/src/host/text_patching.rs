// SPDX-License-Identifier: GPL-2.0
//! The host's `text_poke()`: how [`module!`](crate::module!) lets a program patch its own text.

/// The host.s text patching, expanded by [`module!`](crate::module!) into the program.
///
/// It defines `__KSHIM_TEXT_PATCHING`: the program's `__jump_table`, between the bounds GNU ld
/// and LLD define for a section named like a C identifier, and a `text_poke` that makes the
/// site's pages writable with `mprotect`, writes the instruction and makes them read-only
/// again. The shim stays `core`-only; the program that expands this links the C library
/// anyway. The bounds are declared weak, so that a program without any static branch still
/// links and sees an empty table.
///
/// The write is plain stores, not the kernel's `text_poke_bp()` protocol (an `int3` first, so
/// that another CPU never runs a half-written jump): a key must change state only while no
/// other thread runs its sites, which holds for the examples and the tests.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __host_text_patching {
    () => {
        /// How the host patches this program's text: its `__jump_table` and its `text_poke`.
        const __KSHIM_TEXT_PATCHING: ::core::option::Option<$crate::jump_label::TextPatching> =
            ::core::option::Option::Some($crate::jump_label::TextPatching {
                jump_table: __kshim_jump_table,
                text_poke: __kshim_text_poke,
            });

        /// This program's `__jump_table`, empty if it has no static branch.
        fn __kshim_jump_table() -> &'static [$crate::jump_label::JumpEntry] {
            let (start, stop): (usize, usize);
            // SAFETY: the assembly loads two addresses from the global offset table and
            // touches nothing else; a weak symbol that the linker did not define is zero.
            unsafe {
                ::core::arch::asm!(
                    ".weak __start___jump_table",
                    ".weak __stop___jump_table",
                    "mov {start}, qword ptr [rip + __start___jump_table@GOTPCREL]",
                    "mov {stop}, qword ptr [rip + __stop___jump_table@GOTPCREL]",
                    start = out(reg) start,
                    stop = out(reg) stop,
                    options(nostack, pure, nomem, preserves_flags),
                );
            }
            if start == 0 {
                return &[];
            }
            let length = (stop - start) / ::core::mem::size_of::<$crate::jump_label::JumpEntry>();
            // SAFETY: the linker placed the entries that `arch_static_branch` emitted, aligned,
            // back to back between the two bounds, in memory that lives as long as the program
            // and that nothing writes.
            unsafe {
                ::core::slice::from_raw_parts(
                    start as *const $crate::jump_label::JumpEntry,
                    length,
                )
            }
        }

        /// Writes `instruction` over the site at `site`, as the kernel's `text_poke()` does.
        ///
        /// # Safety
        ///
        /// As for [`$crate::jump_label::TextPoke`]; no other thread may run the site meanwhile.
        unsafe fn __kshim_text_poke(site: *mut u8, instruction: &[u8]) {
            use ::core::ffi::{c_int, c_long, c_void};
            extern "C" {
                fn mprotect(address: *mut c_void, length: usize, protection: c_int) -> c_int;
                fn sysconf(name: c_int) -> c_long;
            }
            const PROT_READ: c_int = 1;
            const PROT_WRITE: c_int = 2;
            const PROT_EXEC: c_int = 4;
            const _SC_PAGESIZE: c_int = 30;

            // SAFETY: `sysconf` only reads its argument.
            let page = unsafe { sysconf(_SC_PAGESIZE) } as usize;
            let first = site as usize & !(page - 1);
            let end = (site as usize + instruction.len() + page - 1) & !(page - 1);
            let pages = first as *mut c_void;
            // Executable all along: other threads may be running other code on these pages.
            let writable_text = PROT_READ | PROT_WRITE | PROT_EXEC;
            // SAFETY: the pages hold the program's text, mapped for its whole life; adding
            // write permission changes no byte.
            let writable = unsafe { mprotect(pages, end - first, writable_text) };
            assert_eq!(writable, 0, "text_poke: mprotect({first:#x}, {}) failed", end - first);
            // SAFETY: the caller guarantees that `site` is a site of this program's text, now
            // writable, of `instruction.len()` bytes that no thread runs meanwhile.
            unsafe {
                ::core::ptr::copy_nonoverlapping(instruction.as_ptr(), site, instruction.len())
            };
            // SAFETY: as above; the text goes back to read and execute, as it was mapped.
            let restored = unsafe { mprotect(pages, end - first, PROT_READ | PROT_EXEC) };
            assert_eq!(restored, 0, "text_poke: mprotect({first:#x}, {}) failed", end - first);
        }
    };
}

/// Elsewhere the host cannot patch text: no `__jump_table`, no `text_poke`.
#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
#[doc(hidden)]
#[macro_export]
macro_rules! __host_text_patching {
    () => {
        /// This host cannot patch a program's text.
        const __KSHIM_TEXT_PATCHING: ::core::option::Option<$crate::jump_label::TextPatching> =
            ::core::option::Option::None;
    };
}
