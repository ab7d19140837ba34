// SPDX-License-Identifier: GPL-2.0
//! `#[expect(lint, reason = "...")]`: silence a lint now, and hear about it once it is moot.
//!
//! `#[expect]` (`lint_reasons`, stable since Rust 1.81.0, tracking issue #54503) works like
//! `#[allow]` while the lint fires, and warns with `unfulfilled_lint_expectations` as soon as
//! it stops firing, quoting the reason:
//!
//! ```text
//! warning: this lint expectation is unfulfilled
//!   = note: suspend support is the next patch; this expectation goes with it
//! ```
//!
//! The kernel moved from `#[allow]` to `#[expect]` so that silenced lints cannot outlive their
//! reason; it allows the feature outside `rust/` so that drivers can do the same. The stable
//! replacement is `#[allow(lint)]` with the reason in a comment: the code is the same, but
//! nothing tells anyone when the comment has become false. Here `Suspended` is never
//! constructed yet, so `dead_code` fires; the patch that adds suspend support will make the
//! `#[expect]` warn, and that warning is the reminder to delete it. (With `cfg`-dependent
//! lints, the condition of the `cfg_attr` has to follow the lint, or `#[expect]` warns in the
//! configurations where the lint is quiet; the kernel uses `#[allow]` for those.)

// No `#![feature]`: in kernel mode Kbuild's `-Zcrate-attr='feature(...)'` already turns
// `lint_reasons` on, which makes `#[expect]` and `reason =` available before 1.81.0.

use kernel::prelude::*;

module! {
    type: RustLintReasons,
    name: "rust_lint_reasons",
    authors: ["Rust for Linux Contributors"],
    description: "Rust lint_reasons sample",
    license: "GPL",
}

/// The power states of the sample's device.
#[derive(Clone, Copy)]
enum PowerState {
    /// Running and taking requests.
    Active,
    /// Powered, but with nothing to do.
    Idle,
    /// Powered down until resumed; nothing enters this state yet.
    #[cfg_attr(
        kshim_has_lint_reasons,
        expect(
            dead_code,
            reason = "suspend support is the next patch; this expectation goes with it"
        )
    )]
    // Stable mode before Rust 1.81.0: suspend support is the next patch. (This `allow` will
    // keep silencing `dead_code` after it lands, unless someone remembers to remove it.)
    #[cfg_attr(not(kshim_has_lint_reasons), allow(dead_code))]
    Suspended,
}

impl PowerState {
    fn name(self) -> &'static str {
        match self {
            PowerState::Active => "active",
            PowerState::Idle => "idle",
            PowerState::Suspended => "suspended",
        }
    }
}

struct RustLintReasons {
    state: PowerState,
}

impl RustLintReasons {
    fn enter(&mut self, next: PowerState) {
        pr_info!("power: {} -> {}\n", self.state.name(), next.name());
        self.state = next;
    }
}

impl kernel::Module for RustLintReasons {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust lint_reasons sample (init)\n");
        let mut device = RustLintReasons {
            state: PowerState::Active,
        };
        device.enter(PowerState::Idle);
        device.enter(PowerState::Active);
        Ok(device)
    }
}

impl Drop for RustLintReasons {
    fn drop(&mut self) {
        pr_info!("power state at exit: {}\n", self.state.name());
        pr_info!("Rust lint_reasons sample (exit)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_power_transitions() {
        let log = kernel::host::load_unload::<RustLintReasons>(&THIS_MODULE).unwrap();
        assert_eq!(
            log.as_str(),
            "[info] rust_lint_reasons: Rust lint_reasons sample (init)\n\
             [info] rust_lint_reasons: power: active -> idle\n\
             [info] rust_lint_reasons: power: idle -> active\n\
             [info] rust_lint_reasons: power state at exit: active\n\
             [info] rust_lint_reasons: Rust lint_reasons sample (exit)\n"
        );
    }
}
