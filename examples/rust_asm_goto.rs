//! `asm goto`: assembly that jumps straight into a Rust block, the heart of static keys.
//!
//! A `label { ... }` operand (`asm_goto`, stable since Rust 1.87.0, tracking issue #119364)
//! names a Rust block that the assembly may jump to. The kernel's static keys are built on it:
//! `static_branch_unlikely()` is a NOP (two or five bytes on x86-64) plus a `__jump_table`
//! entry, and enabling the key patches the NOP into a `jmp` to the label, so a disabled
//! tracepoint or debug check costs one NOP and no load at all. The kernel allows the feature
//! outside `rust/` because its `static_branch_unlikely!` macro expands the `asm!` in the
//! driver's crate.
//!
//! The stable replacement, the kernel's `CONFIG_JUMP_LABEL=n` path, loads the key and branches
//! on it: correct, but a load, a compare and a branch on every pass. A host process cannot
//! patch its own text, so the `asm goto` below makes the same jump into Rust code but decides
//! it by reading the key itself; only the patching is missing. The label operand is input to
//! the `asm!` macro, which is not expanded in code that `#[cfg]` removes, so both forms stand
//! side by side below. (`kernel::jump_label` has the shim's version, with a counting key.)
//!
//! This module has a tracepoint in its packet path: quiet until the key is enabled.

// On compilers before 1.87.0 this is what allows `label` operands; on later ones the feature
// is stable and only earns a reminder, kept as the kernel keeps it.
#![cfg_attr(kshim_kernel_mode, feature(asm_goto))]
#![cfg_attr(kshim_kernel_mode, allow(stable_features))]

use core::sync::atomic::{AtomicBool, Ordering};
use kernel::prelude::*;

module! {
    type: RustAsmGoto,
    name: "rust_asm_goto",
    authors: ["Rust for Linux Contributors"],
    description: "Rust asm_goto sample",
    license: "GPL",
}

/// The tracepoint's key, like `DEFINE_STATIC_KEY_FALSE(trace_packets)`.
static TRACE_PACKETS: AtomicBool = AtomicBool::new(false);

/// Whether the tracepoint is on: the assembly tests the key and jumps to `enabled` if it is set.
#[cfg(all(target_arch = "x86_64", any(kshim_kernel_mode, kshim_stable_asm_goto)))]
#[inline(always)]
fn trace_packets_enabled() -> bool {
    'enabled: {
        // SAFETY: the assembly reads the key's one byte, which is a live `static`, with a
        // single load (atomic, as a relaxed load would be), writes no memory and no stack, and
        // leaves only by falling through or by jumping to the label, both visible to Rust.
        unsafe {
            core::arch::asm!(
                "cmp byte ptr [{key}], 0",
                "jne {enabled}",
                key = in(reg) TRACE_PACKETS.as_ptr(),
                enabled = label {
                    break 'enabled true;
                },
                options(nostack, readonly),
            );
        }
        false
    }
}

/// Whether the tracepoint is on: load the key and branch, as C does without jump labels.
#[cfg(not(all(target_arch = "x86_64", any(kshim_kernel_mode, kshim_stable_asm_goto))))]
#[inline(always)]
fn trace_packets_enabled() -> bool {
    TRACE_PACKETS.load(Ordering::Relaxed)
}

/// The packet path, with its tracepoint.
fn receive(length: usize) -> usize {
    if trace_packets_enabled() {
        pr_info!("trace: received {} bytes", length);
    }
    length
}

struct RustAsmGoto {
    bytes: usize,
}

impl kernel::Module for RustAsmGoto {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust asm_goto sample (init)");
        let mut bytes = receive(64) + receive(1500);
        TRACE_PACKETS.store(true, Ordering::Relaxed);
        bytes += receive(576);
        TRACE_PACKETS.store(false, Ordering::Relaxed);
        bytes += receive(9000);
        Ok(RustAsmGoto { bytes })
    }
}

impl Drop for RustAsmGoto {
    fn drop(&mut self) {
        pr_info!("received {} bytes in all", self.bytes);
        pr_info!("Rust asm_goto sample (exit)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traces_only_while_the_key_is_enabled() {
        let log = kernel::module::load_unload::<RustAsmGoto>(&THIS_MODULE).unwrap();
        assert_eq!(
            log.as_str(),
            "[info] rust_asm_goto: Rust asm_goto sample (init)\n\
             [info] rust_asm_goto: trace: received 576 bytes\n\
             [info] rust_asm_goto: received 11140 bytes in all\n\
             [info] rust_asm_goto: Rust asm_goto sample (exit)\n"
        );
    }
}
