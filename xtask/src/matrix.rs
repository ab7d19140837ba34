//! `cargo xtask matrix`: not written yet; its owner replaces this file.

use crate::{flags, Verdict};
use xshell::Shell;

impl flags::Matrix {
    /// Runs `cargo xtask matrix`.
    pub fn run(&self, _sh: &Shell) -> anyhow::Result<Verdict> {
        anyhow::bail!("`cargo xtask matrix` is not written yet")
    }
}
