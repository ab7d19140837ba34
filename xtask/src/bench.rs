//! `cargo xtask bench`: not written yet; its owner replaces this file.

use crate::{flags, Verdict};
use xshell::Shell;

impl flags::Bench {
    /// Runs `cargo xtask bench`.
    pub fn run(&self, _sh: &Shell) -> anyhow::Result<Verdict> {
        anyhow::bail!("`cargo xtask bench` is not written yet")
    }
}
