// SPDX-License-Identifier: GPL-2.0
//! SIGINT and SIGTERM as a request to stop: running processes are killed, no new work starts,
//! and the command ends by the same signal once it has said what completed.

use std::io::Write;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

/// How often a waiting loop looks at [`interrupted`].
pub(crate) const TICK: Duration = Duration::from_millis(50);

/// The signal that interrupted the run, or 0.
static INTERRUPT: AtomicI32 = AtomicI32::new(0);

/// The signal that asked the run to stop, if one did since the [`InterruptGuard`] was installed.
pub(crate) fn interrupted() -> Option<i32> {
    let signal = INTERRUPT.load(Ordering::SeqCst);
    (signal != 0).then_some(signal)
}

extern "C" fn record_interrupt(signal: libc::c_int) {
    // Only an atomic store: the one thing a signal handler may safely do here.
    INTERRUPT.store(signal, Ordering::SeqCst);
}

/// While it lives, SIGINT and SIGTERM set [`interrupted`] instead of killing the xtask; a second
/// Ctrl-C kills it at once (`SA_RESETHAND`), its children with it (`PR_SET_PDEATHSIG`).
pub(crate) struct InterruptGuard {
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

impl InterruptGuard {
    /// Installs the handler for SIGINT and SIGTERM and clears any earlier interrupt.
    pub(crate) fn install() -> std::io::Result<Self> {
        INTERRUPT.store(0, Ordering::SeqCst);
        let mut guard = InterruptGuard {
            previous: Vec::new(),
        };
        for signal in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: `sigaction` is plain old data, for which all-zero is a valid value
            // (empty mask, no flags), and every field that matters is set below.
            let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
            action.sa_sigaction = record_interrupt as extern "C" fn(libc::c_int) as usize;
            action.sa_flags = libc::SA_RESTART | libc::SA_RESETHAND;
            let mut previous = action;
            // SAFETY: both pointers are to live, initialised `sigaction` values; the handler
            // only stores to an atomic, which is async-signal-safe.
            if unsafe { libc::sigaction(signal, &action, &mut previous) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            guard.previous.push((signal, previous));
        }
        Ok(guard)
    }
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        for (signal, previous) in &self.previous {
            // SAFETY: `previous` is what `sigaction` returned for this signal, so restoring it
            // is always valid.
            unsafe { libc::sigaction(*signal, previous, std::ptr::null_mut()) };
        }
    }
}

/// The error of a run stopped by SIGINT or SIGTERM, after it printed what had completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Interrupted {
    pub signal: i32,
}

impl std::fmt::Display for Interrupted {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Only SIGINT and SIGTERM are caught, and both have names.
        let name = signal_name(self.signal).unwrap_or("a signal");
        write!(formatter, "interrupted by {name}")
    }
}

impl std::error::Error for Interrupted {}

/// A signal's name (`SIGSEGV`), for the signals a process is commonly ended by.
pub(crate) fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTERM => "SIGTERM",
        _ => return None,
    })
}

/// Runs a command's `work` with the [`InterruptGuard`] installed; if it failed with
/// [`Interrupted`], ends the process by that same signal, so that a shell loop running it stops.
pub(crate) fn run_interruptible<T>(work: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    use anyhow::Context as _;
    let guard = InterruptGuard::install().context("installing the SIGINT handler")?;
    let result = work();
    drop(guard);
    if let Err(error) = &result {
        if let Some(&Interrupted { signal }) = error.downcast_ref::<Interrupted>() {
            let _ = std::io::stdout().flush();
            // SAFETY: restoring the default action and raising a signal have no memory effects;
            // the default action of SIGINT and SIGTERM ends the process.
            unsafe {
                libc::signal(signal, libc::SIG_DFL);
                libc::raise(signal);
            }
            // Unreachable unless the signal is blocked; then exit as a shell would report it.
            std::process::exit(128 + signal)
        }
    }
    result
}
