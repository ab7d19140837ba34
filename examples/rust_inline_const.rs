// SPDX-License-Identifier: GPL-2.0
//! A compile-time check on a generic parameter, written as a `const { }` block.
//!
//! `inline_const` (tracking issue #76001, stable since Rust 1.79.0) lets an expression contain
//! `const { ... }`, a constant evaluated by the compiler. Inside a generic function the block
//! may name the function's generic parameters, so `const { assert!(N.is_power_of_two()) }`
//! checks every instantiation and fails the build for a bad one: exactly what a kfifo needs,
//! whose size must be a power of two so that an index wraps with a mask. The kernel enabled
//! the feature for such checks and for array initializers like `[const { MaybeUninit::uninit()
//! }; N]`.
//!
//! The stable replacement, before 1.79.0, is a named associated `const` that the function
//! mentions (`let () = Self::SIZE_IS_POWER_OF_TWO;`), which forces its evaluation per
//! instantiation. It works, but every check needs a name and a home far from where it
//! matters.
//!
//! The lesson of this file is where the gated form may live. `inline_const` is in the
//! `kernel` crate's feature list, not in the list for code outside `rust/` (Kbuild's
//! `-Zallow-features`, the catalog's `RUST_ALLOWED_FEATURES`), so this module must not
//! enable it: it writes `const { }` only under `kshim_stable_inline_const`, where the syntax is
//! stable and needs no feature, and the replacement otherwise. And since a pre-1.79 parser rejects `const { }` even under a false
//! `#[cfg]`, the block sits in the body of a `macro_rules!` that is itself cfg'd out there: a
//! macro body is only tokens until it is expanded. (The shim does the same with an
//! out-of-line module: `kernel::const_init::crc::Crc32`, used below, checks its polynomial in
//! a `const` block the same way.)

use kernel::const_init::crc::{Crc32, CRC32_IEEE};
use kernel::prelude::*;

module! {
    type: RustInlineConst,
    name: "rust_inline_const",
    authors: ["Rust for Linux Contributors"],
    description: "Rust compile-time checks in const blocks",
    license: "GPL",
}

/// Expands to `const { $body }`; only defined where the compiler parses that syntax.
#[cfg(kshim_stable_inline_const)]
macro_rules! in_const_block {
    ($($body:tt)*) => {
        const { $($body)* }
    };
}

/// A byte FIFO of `N` slots, indexed with a mask like the kernel's kfifo.
///
/// # Invariants
///
/// `N` is a power of two, and `head - tail <= N` (in wrapping arithmetic).
struct Fifo<const N: usize> {
    slots: [u8; N],
    head: usize,
    tail: usize,
}

impl<const N: usize> Fifo<N> {
    /// The pre-1.79 form of the check: a named constant, evaluated once per `N` that uses it.
    #[cfg(not(kshim_stable_inline_const))]
    const SIZE_IS_POWER_OF_TWO: () = assert!(N.is_power_of_two(), "kfifo size must be 2^n");

    fn new() -> Self {
        #[cfg(kshim_stable_inline_const)]
        in_const_block!(assert!(N.is_power_of_two(), "kfifo size must be 2^n"));
        #[cfg(not(kshim_stable_inline_const))]
        let () = Self::SIZE_IS_POWER_OF_TWO;
        // INVARIANT: `N` is a power of two, checked at compile time above; the FIFO is empty.
        Fifo {
            slots: [0; N],
            head: 0,
            tail: 0,
        }
    }

    fn push(&mut self, byte: u8) -> Result {
        if self.head.wrapping_sub(self.tail) == N {
            return Err(ENOSPC);
        }
        // The mask is the whole point of the compile-time check: `% N` without division.
        self.slots[self.head & (N - 1)] = byte;
        // INVARIANT: the FIFO was not full, so it now holds at most `N` bytes.
        self.head = self.head.wrapping_add(1);
        Ok(())
    }

    fn pop(&mut self) -> Option<u8> {
        if self.head == self.tail {
            return None;
        }
        let byte = self.slots[self.tail & (N - 1)];
        // INVARIANT: the FIFO was not empty, so `head - tail` stays in range.
        self.tail = self.tail.wrapping_add(1);
        Some(byte)
    }
}

struct RustInlineConst {
    fifo: Fifo<8>,
}

impl kernel::Module for RustInlineConst {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust inline const sample (init)\n");
        let mut fifo = Fifo::<8>::new();
        let mut pushed = 0;
        for &byte in b"123456789" {
            match fifo.push(byte) {
                Ok(()) => pushed += 1,
                Err(error) => {
                    pr_info!("push after {} bytes: {:?}\n", pushed, error);
                    break;
                }
            }
        }
        Ok(RustInlineConst { fifo })
    }
}

impl Drop for RustInlineConst {
    fn drop(&mut self) {
        let mut drained = [0; 8];
        let mut count = 0;
        while let Some(byte) = self.fifo.pop() {
            drained[count] = byte;
            count += 1;
        }
        let drained = &drained[..count];
        pr_info!(
            "drained {:?}, crc32 {:#010x}\n",
            core::str::from_utf8(drained).unwrap_or("?"),
            Crc32::<CRC32_IEEE>::checksum(drained)
        );
        pr_info!("Rust inline const sample (exit)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_to_capacity_and_drains_in_order() {
        let log = kernel::host::load_unload::<RustInlineConst>(&THIS_MODULE).unwrap();
        assert_eq!(
            log.as_str(),
            "[info] rust_inline_const: Rust inline const sample (init)\n\
             [info] rust_inline_const: push after 8 bytes: ENOSPC\n\
             [info] rust_inline_const: drained \"12345678\", crc32 0x9ae0daaf\n\
             [info] rust_inline_const: Rust inline const sample (exit)\n"
        );
    }
}
