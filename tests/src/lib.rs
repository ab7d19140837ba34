// SPDX-License-Identifier: GPL-2.0
//! kshim's black-box tests, in `tests/`: they build the `xtask` binary and run it, build and
//! run the shim and the examples through Cargo in both modes, and check the repository's rules
//! that need no internals, as a user or CI would. This library is empty; the tests and their
//! helpers (`tests/support.rs`) are in the one test binary, `tests/main.rs`.
//!
//! The tests that need the xtask's internals stay beside its modules and in
//! `xtask/src/tests/`.
