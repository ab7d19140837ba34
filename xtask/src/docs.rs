//! `cargo xtask docs`: not written yet; its owner replaces this file.

use crate::{flags, Verdict};
use xshell::Shell;

impl flags::Docs {
    /// Runs `cargo xtask docs`.
    pub fn run(&self, _sh: &Shell) -> anyhow::Result<Verdict> {
        anyhow::bail!("`cargo xtask docs` is not written yet")
    }
}
