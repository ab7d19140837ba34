// SPDX-License-Identifier: GPL-2.0
//! Gives the examples the same compiler-derived cfgs as the shim, from the same code.

#[path = "../kernel-shim/build.rs"]
mod shim_build;

fn main() {
    shim_build::main();
}
