//! `cargo xtask audit`: not written yet; its owner replaces this file.

pub mod attributes;

use crate::{flags, Verdict};
use xshell::Shell;

impl flags::Audit {
    /// Runs `cargo xtask audit`.
    pub fn run(&self, _sh: &Shell) -> anyhow::Result<Verdict> {
        anyhow::bail!("`cargo xtask audit` is not written yet")
    }
}
