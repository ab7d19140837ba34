// SPDX-License-Identifier: GPL-2.0
//! An empty `compiler_builtins`, for a sysroot whose library sources hold none: `core` needs
//! a crate of that name beside it, and nothing the matrix links calls its routines.

#![no_std]
#![feature(compiler_builtins)]
#![compiler_builtins]
