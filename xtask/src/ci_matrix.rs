//! `cargo xtask ci-matrix`: not written yet; its owner replaces this file.

use crate::{flags, Verdict};
use xshell::Shell;

impl flags::CiMatrix {
    /// Runs `cargo xtask ci-matrix`.
    pub fn run(&self, _sh: &Shell) -> anyhow::Result<Verdict> {
        anyhow::bail!("`cargo xtask ci-matrix` is not written yet")
    }
}
