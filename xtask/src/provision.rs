//! Installing pinned toolchains: rustup for official releases, Debian's packages unpacked
//! under `target/toolchains/debian/` for the releases Debian's registry serves.
//!
//! Being written: the API below lands first so that other modules can build on it.

use crate::toolchain::{Availability, Pins};
use xshell::Shell;

/// What `install` did for one pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A compiler already satisfied the pin; nothing was done.
    AlreadyThere,
    /// It was installed; the text says how and where.
    Installed(String),
    /// It could not be installed; the text says what was tried and why each failed.
    Failed(String),
}

/// Installs every pin that `availability` reports missing or broken, and says for each what
/// became of it.
pub fn install(
    _sh: &Shell,
    _pins: &Pins,
    _availability: &[Availability],
) -> anyhow::Result<Vec<(String, Outcome)>> {
    anyhow::bail!("`cargo xtask toolchains install` is not written yet")
}
