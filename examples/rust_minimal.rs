// SPDX-License-Identifier: GPL-2.0
//! The smallest module: it logs when it is loaded and when it is unloaded.
//!
//! This is the kernel's `samples/rust/rust_minimal.rs`, line for line where the host allows.
//! It uses no unstable feature; every other example builds on its shape.

use kernel::prelude::*;

module! {
    type: RustMinimal,
    name: "rust_minimal",
    authors: ["Rust for Linux Contributors"],
    description: "Rust minimal sample",
    license: "GPL",
}

struct RustMinimal {
    numbers: [i32; 3],
}

impl kernel::Module for RustMinimal {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust minimal sample (init)\n");
        pr_info!("Am I built-in? {}\n", false);
        Ok(RustMinimal {
            numbers: [72, 108, 200],
        })
    }
}

impl Drop for RustMinimal {
    fn drop(&mut self) {
        pr_info!("My numbers are {:?}\n", self.numbers);
        pr_info!("Rust minimal sample (exit)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_init_and_exit() {
        let log = kernel::host::load_unload::<RustMinimal>(&THIS_MODULE).unwrap();
        assert_eq!(
            log.as_str(),
            "[info] rust_minimal: Rust minimal sample (init)\n\
             [info] rust_minimal: Am I built-in? false\n\
             [info] rust_minimal: My numbers are [72, 108, 200]\n\
             [info] rust_minimal: Rust minimal sample (exit)\n"
        );
    }
}
