//! `cargo xtask toolchains`: not written yet; its owner replaces this file.

use crate::{flags, Verdict};
use xshell::Shell;

impl flags::Toolchains {
    /// Runs `cargo xtask toolchains`.
    pub fn run(&self, _sh: &Shell) -> anyhow::Result<Verdict> {
        anyhow::bail!("`cargo xtask toolchains` is not written yet")
    }
}
