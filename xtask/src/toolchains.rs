// SPDX-License-Identifier: GPL-2.0
//! The compilers and the tools provisioned beside them: the pin file, Debian's packages through
//! a private apt, which installed compiler satisfies which pin, each compiler's own `library/`,
//! qemu's user-mode emulators, and installing them all (`cargo xtask toolchains install`).

pub(crate) mod apt;
pub(crate) mod debian;
pub(crate) mod digests;
pub(crate) mod discovery;
pub(crate) mod emulators;
pub(crate) mod extracted;
pub(crate) mod library_sources;
pub(crate) mod loader;
pub(crate) mod pins;
pub(crate) mod provision;
pub(crate) mod version;
