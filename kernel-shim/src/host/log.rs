// SPDX-License-Identifier: GPL-2.0
//! The host's kernel log: a fixed-size buffer in a `static`, which the host reads back.
//!
//! It stands in for printk's ring buffer, so that a module that runs on the host can be checked
//! by what it logged. A message that does not end its line is ended by the next one, as
//! `printk` ends a record that the next message does not continue (the shim has no `pr_cont!`).

use core::cell::UnsafeCell;
use core::fmt::{self, Write};
use core::sync::atomic::{AtomicBool, Ordering};

/// A message's importance, as printk's `KERN_*` levels (C's `kern_levels.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// `KERN_EMERG`: the system is unusable.
    Emerg,
    /// `KERN_ALERT`: action must be taken at once.
    Alert,
    /// `KERN_CRIT`: a critical condition.
    Crit,
    /// `KERN_ERR`: an error condition.
    Err,
    /// `KERN_WARNING`: a warning.
    Warning,
    /// `KERN_NOTICE`: normal but significant.
    Notice,
    /// `KERN_INFO`: informational.
    Info,
    /// `KERN_DEBUG`: debug-level messages.
    Debug,
}

impl Level {
    /// The level's name as it appears in the log.
    pub const fn name(self) -> &'static str {
        match self {
            Level::Emerg => "emerg",
            Level::Alert => "alert",
            Level::Crit => "crit",
            Level::Err => "err",
            Level::Warning => "warn",
            Level::Notice => "notice",
            Level::Info => "info",
            Level::Debug => "debug",
        }
    }
}

/// How many bytes the log keeps; later lines are dropped and [`Log::truncated`] says so.
pub const LOG_CAPACITY: usize = 16 * 1024;

/// A copy of the log's text, taken by [`snapshot`].
#[derive(Clone)]
pub struct Log {
    bytes: [u8; LOG_CAPACITY],
    len: usize,
    truncated: bool,
}

impl Log {
    /// The logged text, as the messages wrote it.
    pub fn as_str(&self) -> &str {
        // The buffer only ever receives whole `&str` fragments that fit (see `Buffer::append`),
        // so it is valid UTF-8 up to `len`; fall back to nothing rather than panic.
        core::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }

    /// The logged lines, without their line endings.
    pub fn lines(&self) -> core::str::Lines<'_> {
        self.as_str().lines()
    }

    /// Whether messages were dropped because the buffer was full.
    pub fn truncated(&self) -> bool {
        self.truncated
    }
}

impl fmt::Debug for Log {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// The buffer behind the log, with its spin lock.
///
/// # Invariants
///
/// `contents` is only accessed while `locked` is held, and `contents.len <= LOG_CAPACITY`.
struct Buffer {
    locked: AtomicBool,
    contents: UnsafeCell<Log>,
}

// SAFETY: `contents` is only touched with `locked` held (see `Buffer::with`), so the buffer
// may be shared between threads.
unsafe impl Sync for Buffer {}

static BUFFER: Buffer = Buffer {
    locked: AtomicBool::new(false),
    contents: UnsafeCell::new(Log {
        bytes: [0; LOG_CAPACITY],
        len: 0,
        truncated: false,
    }),
};

impl Buffer {
    /// Runs `f` on the log with the lock held.
    ///
    /// `f` formats the caller's arguments, which runs their `Display` impls: one that logs
    /// deadlocks (it spins on the lock held here), and one that panics releases the lock on the
    /// way out, so that the next caller is not stuck behind it.
    fn with<R>(&self, f: impl FnOnce(&mut Log) -> R) -> R {
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            core::hint::spin_loop();
        }
        let _unlock = Unlock(&self.locked);
        // SAFETY: the lock is held from the exchange above until `_unlock` is dropped, after
        // `f` has returned or unwound, so this is the only reference to `contents`.
        f(unsafe { &mut *self.contents.get() })
    }
}

/// Releases the log's lock when dropped, also while unwinding.
struct Unlock<'a>(&'a AtomicBool);

impl Drop for Unlock<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl Write for Log {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        let end = self.len + text.len();
        if self.truncated || end > LOG_CAPACITY {
            self.truncated = true;
            return Ok(());
        }
        self.bytes[self.len..end].copy_from_slice(text.as_bytes());
        // INVARIANT: `end <= LOG_CAPACITY`, checked above.
        self.len = end;
        Ok(())
    }
}

/// Appends one message to the log as `[level] prefix: message`, as C's `_printk` adds a record;
/// [`call_printk`](crate::print::call_printk) calls this.
pub fn printk(level: Level, prefix: &str, args: fmt::Arguments<'_>) {
    BUFFER.with(|log| {
        let unfinished = log.len > 0 && log.bytes[log.len - 1] != b'\n';
        let mut line = Line {
            start: log.len,
            already_truncated: log.truncated,
            log,
            complete: false,
        };
        // Writing to `Log` never fails; a full buffer only sets `truncated`.
        if unfinished {
            let _ = line.log.write_str("\n");
        }
        let _ = write!(line.log, "[{}] {prefix}: {args}", level.name());
        line.complete = true;
    });
}

/// One line being appended to the log; dropping it takes the line back unless it is whole.
struct Line<'a> {
    log: &'a mut Log,
    start: usize,
    already_truncated: bool,
    complete: bool,
}

impl Drop for Line<'_> {
    fn drop(&mut self) {
        // A line cut short by the full buffer, or by an argument whose formatting panicked
        // (this runs while unwinding), must not stay half-written.
        if !self.complete || (self.log.truncated && !self.already_truncated) {
            // INVARIANT: shrinking keeps `len <= LOG_CAPACITY`; only whole lines stay.
            self.log.len = self.start;
        }
    }
}

/// Empties the log.
pub fn clear() {
    BUFFER.with(|log| {
        log.len = 0;
        log.truncated = false;
    });
}

/// Copies the log as it is now.
pub fn snapshot() -> Log {
    BUFFER.with(|log| log.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    // The crate's own tests log with this prefix, as a module would.
    const PREFIX: &str = "print_test";

    #[test]
    fn lines_carry_level_and_prefix_and_overflow_is_reported() {
        let _guard = crate::host::tests::serialize();
        clear();
        // The message carries its line end; one without is ended by the next message.
        printk(Level::Info, PREFIX, format_args!("hello {}", 42));
        printk(Level::Err, PREFIX, format_args!("bad\n"));
        let log = snapshot();
        assert_eq!(
            log.as_str(),
            "[info] print_test: hello 42\n[err] print_test: bad\n"
        );
        assert!(!log.truncated());

        let long = [b'x'; 1000];
        let long = core::str::from_utf8(&long).unwrap();
        for _ in 0..LOG_CAPACITY / 1000 + 1 {
            printk(Level::Debug, PREFIX, format_args!("{long}\n"));
        }
        let log = snapshot();
        assert!(log.truncated());
        assert!(log.as_str().len() <= LOG_CAPACITY);
        assert!(log.as_str().ends_with('\n'), "only whole lines are kept");
        clear();
    }

    #[test]
    fn a_panicking_argument_does_not_leave_the_log_locked() {
        extern crate std;

        /// An argument whose formatting panics, with the log's lock held.
        struct Panics;

        impl fmt::Display for Panics {
            fn fmt(&self, _formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                panic!("formatting failed");
            }
        }

        let _guard = crate::host::tests::serialize();
        clear();
        let unwound = std::panic::catch_unwind(|| {
            printk(Level::Info, PREFIX, format_args!("{}", Panics));
        });
        assert!(unwound.is_err());
        // Would spin forever if the unwinding had kept the lock; the abandoned line is gone.
        printk(Level::Info, PREFIX, format_args!("after\n"));
        assert_eq!(snapshot().as_str(), "[info] print_test: after\n");
        clear();
    }
}
