//! Running the step graph: at most N processes at once, each step after the steps it needs,
//! results from the cache where nothing changed.
//!
//! Processes are spawned with `std::process` rather than xshell: the worker threads each need
//! their own environment per process, a kill after `--timeout`, and both output streams
//! captured, which xshell's single-threaded `Shell` does not offer.
//!
//! # What every process gets, and what is left of it afterwards
//!
//! - **A clean environment.** Each process starts from an empty environment plus
//!   [`INHERITED_VARIABLES`] (`PATH` to find the linker, `TMPDIR`) and the variables its
//!   [`Invocation`] sets (`RUSTC_BOOTSTRAP` in kernel mode, `LD_LIBRARY_PATH` for a Debian
//!   compiler). Nothing else of the caller's leaks in: not `LD_LIBRARY_PATH` (`cargo run`
//!   puts its own toolchain's libraries there, which are no business of other compilers), not
//!   `RUSTC_BOOTSTRAP` (which would turn a stable-mode build into a kernel-mode one), not
//!   `RUSTFLAGS` (Cargo's, which rustc never reads; the matrix drives rustc directly, so
//!   its command lines are the whole story), not `RUST_TEST_THREADS` or `RUSTC_LOG`, which
//!   change what a test binary or rustc prints. So the cache key can hash exactly the
//!   environment a command gets ([`inherited_environment`] and the invocation's own).
//! - **Its own process group**, killed as a whole: on `--timeout`, on an interrupt (SIGINT,
//!   SIGTERM, see [`InterruptGuard`]), and also after the process exits, before it is reaped,
//!   so that a wrapper script's background children cannot outlive their step or keep its
//!   pipes open. (A process that leaves the group with `setsid` escapes this; its output is
//!   then abandoned after a short grace period rather than waited for.)
//! - **Death with the xtask** (Linux): `PR_SET_PDEATHSIG` kills a direct child when the xtask
//!   is killed, even by SIGKILL. Its own children (a wrapper's rustc, rustc's linker) may
//!   finish what they were doing; they hold an inherited descriptor of the matrix's lock
//!   ([`run_holding`]), so the next matrix waits for them instead of racing them for the same
//!   output files.
//! - **Bounded output capture**: at most [`CAPTURE_LIMIT`] bytes per stream are kept; the
//!   rest is read and dropped, so a process that floods its output cannot exhaust memory.

use crate::cache::{file_stamp, Cache, Key, StableHasher};
use crate::expect::Outcome;
use crate::plan::{Invocation, Kind, Step};
use crate::probe::{self, Status};
use crate::report::json::Value;
use std::io::Read;
use std::os::fd::RawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// The variables a process inherits from the xtask's environment; every other one is removed.
pub const INHERITED_VARIABLES: [&str; 2] = ["PATH", "TMPDIR"];

/// The values of [`INHERITED_VARIABLES`] that are set, in that order: what every process
/// inherits, and so part of every cache key.
pub fn inherited_environment() -> Vec<(String, String)> {
    INHERITED_VARIABLES
        .iter()
        .filter_map(|name| {
            let value = std::env::var_os(name)?;
            Some((name.to_string(), value.to_string_lossy().into_owned()))
        })
        .collect()
}

/// How much of each output stream is kept.
pub const CAPTURE_LIMIT: usize = 16 << 20;

/// How often a waiting runner looks at the clock and at [`interrupted`].
const TICK: Duration = Duration::from_millis(50);

/// How long a process's output may stay open after the process itself has exited (held by
/// something it left behind) before its group is killed.
const STRAGGLER_GRACE: Duration = Duration::from_millis(500);

/// The signal that interrupted the run, or 0.
static INTERRUPT: AtomicI32 = AtomicI32::new(0);

/// The signal (SIGINT or SIGTERM) that asked the run to stop, if one did since the current
/// [`InterruptGuard`] was installed.
pub fn interrupted() -> Option<i32> {
    match INTERRUPT.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

extern "C" fn record_interrupt(signal: libc::c_int) {
    // Only an atomic store: the one thing a signal handler may safely do here.
    INTERRUPT.store(signal, Ordering::SeqCst);
}

/// While it lives, SIGINT and SIGTERM stop the run instead of killing the xtask: running
/// processes are killed, no new step starts, and [`interrupted`] says which signal came.
///
/// std has no signal handling, hence `libc`. The handler is installed with `SA_RESETHAND`, so a
/// second Ctrl-C kills the xtask at once (its direct children die with it, by
/// `PR_SET_PDEATHSIG`). Dropping the guard restores the previous handlers.
pub struct InterruptGuard {
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

impl InterruptGuard {
    /// Installs the handler for SIGINT and SIGTERM and clears any earlier interrupt.
    pub fn install() -> std::io::Result<Self> {
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
            // SAFETY: as above.
            let mut previous: libc::sigaction = unsafe { std::mem::zeroed() };
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

/// Why the runner killed a process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Killed {
    /// It ran longer than `--timeout`.
    Timeout,
    /// The run was interrupted (SIGINT or SIGTERM).
    Interrupted,
}

/// What a finished process left behind.
#[derive(Clone, Debug)]
pub struct ProcessOutput {
    /// Its exit status; `None` if the runner killed it (then `killed` says why).
    pub status: Option<ExitStatus>,
    /// Why the runner killed it, if it did.
    pub killed: Option<Killed>,
    /// Everything it wrote to stdout (up to [`CAPTURE_LIMIT`]).
    pub stdout: String,
    /// Everything it wrote to stderr (up to [`CAPTURE_LIMIT`]).
    pub stderr: String,
    /// How long it ran.
    pub seconds: f64,
}

impl ProcessOutput {
    /// Whether it exited with status 0.
    pub fn success(&self) -> bool {
        self.status.is_some_and(|status| status.success())
    }

    /// How it ended, in words: "exit status 3", "killed by signal 11 (SIGSEGV)", "killed after
    /// 5 s (--timeout)", with the dynamic loader's complaint when it could not start at all.
    pub fn describe_ending(&self, timeout: Duration) -> String {
        let ending = match (self.killed, self.status) {
            (Some(Killed::Timeout), _) => {
                format!("killed after {} s (--timeout)", timeout.as_secs())
            }
            (Some(Killed::Interrupted), _) => "killed: the run was interrupted".to_string(),
            (None, Some(status)) => describe_status(status),
            (None, None) => "no exit status".to_string(),
        };
        match missing_library(&self.stderr) {
            Some(library) => format!(
                "{ending}: it cannot start, the dynamic loader cannot find the shared library \
                 {library} (is LD_LIBRARY_PATH set for it?)"
            ),
            None => ending,
        }
    }
}

/// An exit status in words: "exit status 3", "killed by signal 11 (SIGSEGV), core dumped".
pub fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit status {code}");
    }
    let Some(signal) = status.signal() else {
        return status.to_string();
    };
    let name = match signal {
        libc::SIGHUP => " (SIGHUP)",
        libc::SIGINT => " (SIGINT)",
        libc::SIGQUIT => " (SIGQUIT)",
        libc::SIGILL => " (SIGILL)",
        libc::SIGTRAP => " (SIGTRAP)",
        libc::SIGABRT => " (SIGABRT)",
        libc::SIGBUS => " (SIGBUS)",
        libc::SIGFPE => " (SIGFPE)",
        libc::SIGKILL => " (SIGKILL)",
        libc::SIGSEGV => " (SIGSEGV)",
        libc::SIGPIPE => " (SIGPIPE)",
        libc::SIGTERM => " (SIGTERM)",
        _ => "",
    };
    let core = if status.core_dumped() {
        ", core dumped"
    } else {
        ""
    };
    format!("killed by signal {signal}{name}{core}")
}

/// The library the dynamic loader could not find, from its message on stderr
/// ("error while loading shared libraries: librustc_driver-....so: cannot open shared object
/// file").
pub fn missing_library(stderr: &str) -> Option<&str> {
    let (_, rest) = stderr.split_once("error while loading shared libraries: ")?;
    rest.split(':').next().map(str::trim)
}

/// Why a program could not be started at all, from the spawn error.
pub fn describe_spawn_error(program: &Path, error: &std::io::Error) -> String {
    let program = program.display();
    match error.raw_os_error() {
        Some(libc::ENOENT) => {
            format!("cannot run {program}: it does not exist (or its `#!` interpreter does not)")
        }
        Some(libc::EACCES) => {
            format!("cannot run {program}: permission denied (is it executable?)")
        }
        Some(libc::ENOEXEC) => {
            format!("cannot run {program}: it is not an executable this system can run")
        }
        _ => format!("cannot run {program}: {error}"),
    }
}

/// One output stream, read on its own thread into a shared buffer, so that the runner can
/// take what has arrived even if something keeps the pipe open forever.
struct Capture {
    bytes: Arc<Mutex<Vec<u8>>>,
}

impl Capture {
    fn start(stream: Option<impl Read + Send + 'static>, closed: mpsc::Sender<()>) -> Self {
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let shared = Arc::clone(&bytes);
        thread::spawn(move || {
            if let Some(mut stream) = stream {
                let mut chunk = [0u8; 8192];
                loop {
                    match stream.read(&mut chunk) {
                        Ok(0) => break,
                        Ok(count) => {
                            let mut bytes =
                                shared.lock().unwrap_or_else(|poison| poison.into_inner());
                            let room = CAPTURE_LIMIT.saturating_sub(bytes.len());
                            bytes.extend_from_slice(&chunk[..count.min(room)]);
                        }
                        Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
            }
            let _ = closed.send(());
        });
        Capture { bytes }
    }

    fn take(&self) -> String {
        let bytes = self
            .bytes
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// Whether the child has exited, without reaping it: while it is an unreaped zombie its
/// process id, and so its process group's id, cannot be reused, so killing the group is safe.
fn has_exited(child: &Child) -> bool {
    // SAFETY: `siginfo_t` is plain old data; all-zero is valid and is what `waitid` leaves
    // in `si_pid` when nothing has exited (with WNOHANG).
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is a live `siginfo_t`; WNOWAIT leaves the child reapable by std's
    // `Child::wait`, so std's bookkeeping stays right.
    let result = unsafe {
        libc::waitid(
            libc::P_PID,
            child.id() as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // SAFETY: `waitid` filled `info` (or left it zeroed); reading `si_pid` is valid for a
    // SIGCHLD-style record, which is what `waitid` produces.
    result == 0 && unsafe { info.si_pid() } != 0
}

/// Kills every process in the child's process group (the child leads it).
fn kill_group(child: &Child) {
    // SAFETY: `kill` has no memory effects. The group id is the child's pid, which cannot have
    // been reused: the caller has not reaped the child yet.
    unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
}

/// Runs one process to its end, or kills it (with its whole process group) after `timeout`
/// or when the run is interrupted.
pub fn run(invocation: &Invocation, timeout: Duration) -> std::io::Result<ProcessOutput> {
    run_holding(invocation, timeout, None)
}

/// [`run`], with `lock` (an open descriptor holding the matrix's lock) inherited by the
/// process, so that the lock stays held until it and everything it starts have exited, even
/// if the xtask itself is killed.
pub fn run_holding(
    invocation: &Invocation,
    timeout: Duration,
    lock: Option<RawFd>,
) -> std::io::Result<ProcessOutput> {
    let start = Instant::now();
    let mut command = invocation.command();
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs between fork and exec, and only makes async-signal-safe system
    // calls (`prctl`, `getppid`, `fcntl`) on values copied in before the fork; it allocates
    // nothing and takes no locks.
    unsafe {
        command.pre_exec(move || {
            #[cfg(target_os = "linux")]
            {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The xtask may have died between the fork and the prctl.
                if libc::getppid() != parent {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
            }
            #[cfg(not(target_os = "linux"))]
            let _ = parent;
            if let Some(fd) = lock {
                // Clear close-on-exec in the child only: it keeps the lock's descriptor.
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        })
    };
    let mut child = command.spawn()?;
    let (closed, pipe_closed) = mpsc::channel::<()>();
    let stdout = Capture::start(child.stdout.take(), closed.clone());
    let stderr = Capture::start(child.stderr.take(), closed);
    let deadline = start + timeout;
    let mut open_pipes = 2;
    let mut exited_at: Option<Instant> = None;
    let mut pause = Duration::from_millis(1);
    // Wake when a pipe closes (the usual sign of the end), on every tick otherwise.
    let killed = loop {
        if open_pipes > 0 {
            let wait = TICK.min(deadline.saturating_duration_since(Instant::now()));
            match pipe_closed.recv_timeout(wait) {
                Ok(()) => open_pipes -= 1,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => open_pipes = 0,
            }
        } else {
            // Both pipes are closed; the exit follows within moments.
            thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(20));
        }
        let now = Instant::now();
        if exited_at.is_none() && has_exited(&child) {
            exited_at = Some(now);
        }
        if let Some(exited) = exited_at {
            if open_pipes == 0 || now.duration_since(exited) >= STRAGGLER_GRACE {
                break None;
            }
        }
        if interrupted().is_some() {
            break Some(Killed::Interrupted);
        }
        if now >= deadline {
            break Some(Killed::Timeout);
        }
    };
    // The child is exited-but-unreaped or still running: either way its group is still ours.
    kill_group(&child);
    let status = child.wait()?;
    // Killing the group closes the pipes, unless a process escaped the group.
    let grace = Instant::now() + Duration::from_secs(1);
    while open_pipes > 0 {
        match pipe_closed.recv_timeout(grace.saturating_duration_since(Instant::now())) {
            Ok(()) => open_pipes -= 1,
            Err(_) => break,
        }
    }
    Ok(ProcessOutput {
        status: if killed.is_some() { None } else { Some(status) },
        killed,
        stdout: stdout.take(),
        stderr: stderr.take(),
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The first error a failed rustc printed, with its location: `error[E0658]: ... (at
/// examples/x.rs:3:5)`.
pub fn first_rustc_error(stderr: &str) -> Option<String> {
    let mut lines = stderr.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("error") && !line.starts_with("error: aborting due to") {
            let location = lines
                .clone()
                .take(3)
                .find_map(|next| next.trim_start().strip_prefix("--> "));
            return Some(match location {
                Some(location) => format!("{line} (at {location})"),
                None => line.to_string(),
            });
        }
    }
    stderr
        .lines()
        .find(|line| !line.trim().is_empty())
        .map(str::to_string)
}

/// The counts libtest prints in its `test result:` line, and each test's own line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TestSummary {
    /// Tests that passed.
    pub passed: u64,
    /// Tests that failed.
    pub failed: u64,
    /// Tests marked `#[ignore]`.
    pub ignored: u64,
    /// Each test's full path and its result word (`ok`, `FAILED`, `ignored`), in output order.
    pub tests: Vec<(String, String)>,
}

impl TestSummary {
    /// Reads libtest's standard output; `None` if it has no `test result:` line (the binary
    /// crashed before the end).
    pub fn parse(stdout: &str) -> Option<TestSummary> {
        let mut summary = TestSummary::default();
        let mut saw_result = false;
        for line in stdout.lines() {
            if let Some(rest) = line.strip_prefix("test ") {
                if let Some((name, result)) = rest.rsplit_once(" ... ") {
                    summary
                        .tests
                        .push((name.to_string(), result.trim().to_string()));
                    continue;
                }
            }
            let Some(counts) = line.strip_prefix("test result: ") else {
                continue;
            };
            saw_result = true;
            for part in counts.split(';') {
                let mut words = part.split_whitespace().rev();
                let (Some(label), Some(number)) = (words.next(), words.next()) else {
                    continue;
                };
                let number: u64 = number.parse().unwrap_or(0);
                match label {
                    "passed" => summary.passed += number,
                    "failed" => summary.failed += number,
                    "ignored" => summary.ignored += number,
                    _ => {}
                }
            }
        }
        saw_result.then_some(summary)
    }

    /// Whether a test whose path ends in `name` ran and printed `ok`.
    pub fn passed_test(&self, name: &str) -> bool {
        self.tests.iter().any(|(path, result)| {
            (path == name || path.ends_with(&format!("::{name}"))) && result == "ok"
        })
    }
}

/// How a step came out.
#[derive(Clone, Debug)]
pub struct StepResult {
    /// Passed, failed, or did not run.
    pub outcome: Outcome,
    /// The first error, for failures and skips.
    pub first_error: Option<String>,
    /// Wall-clock seconds of the run that produced this result (a cached result keeps the
    /// original's).
    pub seconds: f64,
    /// Whether it came from the cache.
    pub cached: bool,
    /// For tests that ran: libtest's counts (names are not kept).
    pub tests: Option<(u64, u64, u64)>,
    /// For the probe: one status per catalog feature, or why the probe failed.
    pub probe: Option<Result<Vec<Status>, String>>,
    /// For an example's run: the module log it printed.
    pub log: Option<String>,
    /// Whether the run was interrupted before this step could finish; such a result is
    /// never cached and never reported as the step's outcome.
    pub interrupted: bool,
}

impl StepResult {
    fn skipped(reason: String) -> Self {
        StepResult {
            outcome: Outcome::Skipped,
            first_error: Some(reason),
            seconds: 0.0,
            cached: false,
            tests: None,
            probe: None,
            log: None,
            interrupted: false,
        }
    }

    fn to_cache_entry(&self, artifact: Option<(u64, u128)>) -> Value {
        let probe = match &self.probe {
            None => Value::Null,
            Some(Ok(statuses)) => Value::Array(
                statuses
                    .iter()
                    .map(|status| {
                        Value::String(match status.stable_since() {
                            Some(since) => format!("stable {since}"),
                            None => status.word().to_string(),
                        })
                    })
                    .collect(),
            ),
            Some(Err(error)) => Value::Object(vec![("error".into(), Value::String(error.clone()))]),
        };
        Value::Object(vec![
            ("outcome".into(), Value::String(self.outcome.word().into())),
            (
                "first_error".into(),
                Value::opt_string(self.first_error.clone()),
            ),
            ("seconds".into(), Value::Number(self.seconds)),
            (
                "tests".into(),
                self.tests.map_or(Value::Null, |(passed, failed, ignored)| {
                    Value::Array(vec![
                        Value::Number(passed as f64),
                        Value::Number(failed as f64),
                        Value::Number(ignored as f64),
                    ])
                }),
            ),
            ("probe".into(), probe),
            ("log".into(), Value::opt_string(self.log.clone())),
            (
                "artifact".into(),
                artifact.map_or(Value::Null, |(size, modified)| {
                    Value::String(format!("{size} {modified}"))
                }),
            ),
        ])
    }

    fn from_cache_entry(entry: &Value, artifact: Option<&Path>) -> Option<Self> {
        if let Some(path) = artifact {
            let (size, modified) = file_stamp(path)?;
            if entry.get("artifact")?.as_str()? != format!("{size} {modified}") {
                return None;
            }
        }
        let probe = match entry.get("probe")? {
            Value::Null => None,
            Value::Array(words) => Some(Ok(words
                .iter()
                .map(|word| {
                    let word = word.as_str()?;
                    Some(match word.strip_prefix("stable ") {
                        Some(since) => Status::Stable(crate::catalog::Release::parse(since)?),
                        None => [Status::Gated, Status::Unknown, Status::Removed]
                            .into_iter()
                            .find(|status| status.word() == word)?,
                    })
                })
                .collect::<Option<Vec<_>>>()?)),
            error => Some(Err(error.get("error")?.as_str()?.to_string())),
        };
        let tests = match entry.get("tests")? {
            Value::Null => None,
            counts => {
                let counts = counts.as_array()?;
                Some((
                    counts.first()?.as_u64()?,
                    counts.get(1)?.as_u64()?,
                    counts.get(2)?.as_u64()?,
                ))
            }
        };
        Some(StepResult {
            outcome: Outcome::from_word(entry.get("outcome")?.as_str()?)?,
            first_error: entry.get("first_error")?.as_str().map(String::from),
            seconds: entry.get("seconds")?.as_f64()?,
            cached: true,
            tests,
            probe,
            log: entry.get("log")?.as_str().map(String::from),
            interrupted: false,
        })
    }
}

/// Computes every step's cache key: the compiler's identity, the command lines, the
/// environment every process gets (`inherited`, from [`inherited_environment`], and the
/// invocation's own variables), the inputs' contents and the keys of the steps it needs (so a
/// changed shim reruns everything built on it).
pub fn cache_keys(
    steps: &[Step],
    inherited: &[(String, String)],
    compiler_identity: &dyn Fn(usize) -> Key,
    file_hash: &mut dyn FnMut(&Path) -> anyhow::Result<Key>,
) -> anyhow::Result<Vec<Key>> {
    let mut keys: Vec<Key> = Vec::with_capacity(steps.len());
    for step in steps {
        let mut hasher = StableHasher::new();
        hasher
            .field("kshim matrix step v3")
            .field(step.kind.word())
            .number(compiler_identity(step.toolchain).0);
        for (name, value) in inherited {
            hasher.field("inherit").field(name).field(value);
        }
        for invocation in std::iter::once(&step.compile).chain(&step.run) {
            hasher.field(invocation.program.to_string_lossy().as_bytes());
            hasher.number(invocation.args.len() as u128);
            for arg in &invocation.args {
                hasher.field(arg);
            }
            for (name, value) in &invocation.env {
                hasher.field("set").field(name).field(value);
            }
            for name in &invocation.env_remove {
                hasher.field("remove").field(name);
            }
        }
        for input in &step.inputs {
            hasher
                .field(input.to_string_lossy().as_bytes())
                .number(file_hash(input)?.0);
        }
        for &dep in &step.deps {
            hasher.number(keys[dep].0);
        }
        keys.push(hasher.finish());
    }
    Ok(keys)
}

/// What the runner reports while it works.
pub trait Progress: Sync {
    /// A step is about to run (not called for cache hits).
    fn started(&self, index: usize, step: &Step);
    /// A step finished; `done` steps of the total are finished now.
    fn finished(&self, index: usize, step: &Step, result: &StepResult, done: usize);
}

/// How the runner treats every process: the per-process timeout, and the descriptor of the
/// matrix's lock that processes inherit (see [`run_holding`]).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Any one process is killed (with its process group) after this long.
    pub timeout: Duration,
    /// The lock's descriptor, if the run holds one.
    pub lock: Option<RawFd>,
}

impl Limits {
    /// A timeout and no lock.
    pub fn new(timeout: Duration) -> Self {
        Self {
            timeout,
            lock: None,
        }
    }
}

/// Whether a process's result says something about the inputs, so that it may be cached: it
/// ran to an exit code of its own. Not when it was killed (timeout, interrupt), died of a
/// signal (a crash may be the machine's, such as the OOM killer), or could not start (a
/// missing shared library is the environment's fault).
fn is_repeatable(output: &ProcessOutput) -> bool {
    output.killed.is_none()
        && output.status.is_some_and(|status| status.code().is_some())
        && missing_library(&output.stderr).is_none()
}

/// Whether rustc's JSON diagnostics on `stderr` include an error.
fn has_error_diagnostic(stderr: &str) -> bool {
    stderr.lines().any(|line| {
        line.starts_with('{')
            && crate::report::json::parse(line).is_ok_and(|diagnostic| {
                diagnostic.get("level").and_then(Value::as_str) == Some("error")
            })
    })
}

/// Runs a step's processes (or reads its cached result).
fn run_step(step: &Step, key: Key, cache: &Cache, limits: Limits) -> StepResult {
    if let Some(result) = cache
        .load(key)
        .and_then(|entry| StepResult::from_cache_entry(&entry, step.artifact.as_deref()))
    {
        return result;
    }
    let mut result = StepResult::skipped(String::new());
    result.first_error = None;
    for directory in &step.directories {
        if let Err(error) = std::fs::create_dir_all(directory) {
            result.outcome = Outcome::Fail;
            result.first_error = Some(format!("creating {}: {error}", directory.display()));
            return result;
        }
    }
    let mut cacheable = true;
    let outcome = run_step_processes(step, limits, &mut result, &mut cacheable);
    if result.interrupted {
        result.outcome = Outcome::Skipped;
        result.first_error = Some("not run to its end: the run was interrupted".into());
        return result;
    }
    match outcome {
        Ok(()) => {
            result.outcome = Outcome::Pass;
            result.first_error = None;
        }
        Err(message) => {
            result.outcome = Outcome::Fail;
            result.first_error = Some(message);
        }
    }
    if cacheable {
        let artifact = step.artifact.as_deref().and_then(file_stamp);
        // A cache that cannot be written costs a rerun next time, nothing more.
        let _ = cache.store(key, &result.to_cache_entry(artifact));
    }
    result
}

/// Runs one process of a step; `Err` is the failure message for a process that could not run
/// or was killed, and clears `cacheable` for anything not [`is_repeatable`].
fn run_process(
    invocation: &Invocation,
    limits: Limits,
    result: &mut StepResult,
    cacheable: &mut bool,
) -> Result<ProcessOutput, String> {
    let output = match run_holding(invocation, limits.timeout, limits.lock) {
        Ok(output) => output,
        Err(error) => {
            *cacheable = false;
            return Err(describe_spawn_error(&invocation.program, &error));
        }
    };
    result.seconds += output.seconds;
    if !is_repeatable(&output) {
        *cacheable = false;
    }
    match output.killed {
        Some(Killed::Interrupted) => {
            result.interrupted = true;
            Err("interrupted".into())
        }
        Some(Killed::Timeout) => Err(format!(
            "{} {}",
            invocation.program.display(),
            output.describe_ending(limits.timeout)
        )),
        None => Ok(output),
    }
}

/// The processes of one step and how they came out.
fn run_step_processes(
    step: &Step,
    limits: Limits,
    result: &mut StepResult,
    cacheable: &mut bool,
) -> Result<(), String> {
    let compile = run_process(&step.compile, limits, result, cacheable)?;
    let ending = |output: &ProcessOutput| output.describe_ending(limits.timeout);
    match step.kind {
        Kind::Probe => {
            // Unknown names (E0635) make the probe fail; anything else that fails without an
            // error diagnostic (a crash, a wrapper's own failure) says nothing about features.
            if !compile.success() && !has_error_diagnostic(&compile.stderr) {
                return Err(format!(
                    "rustc {} without a diagnostic: {}",
                    ending(&compile),
                    first_line_or(&compile.stderr, "no output on stderr")
                ));
            }
            let classified = probe::classify(&compile.stderr);
            result.probe = Some(classified.clone());
            classified.map(|_| ())
        }
        Kind::Run => {
            if !compile.success() {
                Err(format!(
                    "the module {}: {}",
                    ending(&compile),
                    first_line_or(&compile.stderr, "no output on stderr")
                ))
            } else if compile.stdout.trim().is_empty() {
                Err("the module logged nothing".into())
            } else {
                result.log = Some(compile.stdout);
                Ok(())
            }
        }
        Kind::Build | Kind::Test if !compile.success() => {
            // rustc's own error when it printed one; otherwise how it ended (a crash, a
            // wrapper's failure, a missing library) and the first thing it said.
            let said_error = compile.stderr.lines().any(|line| line.starts_with("error"))
                && missing_library(&compile.stderr).is_none();
            let error = first_rustc_error(&compile.stderr).filter(|_| said_error);
            Err(
                match (compile.status.and_then(|status| status.code()), error) {
                    (Some(_), Some(error)) => error,
                    _ => format!(
                        "rustc {}: {}",
                        ending(&compile),
                        first_line_or(&compile.stderr, "it printed nothing")
                    ),
                },
            )
        }
        Kind::Build => Ok(()),
        Kind::Test => {
            let Some(run_invocation) = &step.run else {
                return Ok(());
            };
            let tested = run_process(run_invocation, limits, result, cacheable)?;
            let summary = TestSummary::parse(&tested.stdout);
            result.tests = summary
                .as_ref()
                .map(|summary| (summary.passed, summary.failed, summary.ignored));
            match (tested.status, summary) {
                (Some(status), Some(summary)) if status.success() && summary.failed == 0 => Ok(()),
                (Some(status), summary) => Err(test_failure(&status, summary, &tested)),
                (None, _) => Err(format!("the test binary {}", ending(&tested))),
            }
        }
    }
}

/// The first non-empty line of `text`, or `otherwise`.
fn first_line_or<'a>(text: &'a str, otherwise: &'a str) -> &'a str {
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or(otherwise)
}

/// The first line that explains a failed test run: the failing tests' names, or the panic.
fn test_failure(
    status: &ExitStatus,
    summary: Option<TestSummary>,
    output: &ProcessOutput,
) -> String {
    if let Some(summary) = summary {
        let failing: Vec<&str> = summary
            .tests
            .iter()
            .filter(|(_, result)| result == "FAILED")
            .map(|(name, _)| name.as_str())
            .collect();
        if !failing.is_empty() {
            // Since Rust 1.73 the panic message is on the line after `panicked at FILE:LINE:COL:`.
            let lines: Vec<&str> = output.stdout.lines().chain(output.stderr.lines()).collect();
            let panic = lines
                .iter()
                .position(|line| line.contains("panicked at"))
                .map(|index| {
                    let mut text = lines[index].trim().to_string();
                    if text.ends_with(':') {
                        if let Some(message) = lines.get(index + 1) {
                            text.push(' ');
                            text.push_str(message.trim());
                        }
                    }
                    format!(": {text}")
                })
                .unwrap_or_default();
            return format!(
                "{} of {} tests failed ({}){panic}",
                summary.failed,
                summary.passed + summary.failed,
                failing.join(", ")
            );
        }
    }
    let last = output
        .stderr
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("no output");
    format!(
        "the test binary ended with {}: {last}",
        describe_status(*status)
    )
}

/// Runs every step with at most `jobs` at once, each after the steps it depends on; a step
/// whose dependency did not pass is skipped with the reason.
///
/// When the run is [`interrupted`], running processes are killed, no further step starts, and
/// every step that did not finish comes back with `interrupted` set.
pub fn execute(
    steps: &[Step],
    keys: &[Key],
    cache: &Cache,
    jobs: usize,
    limits: Limits,
    progress: &dyn Progress,
) -> Vec<StepResult> {
    struct State {
        started: Vec<bool>,
        results: Vec<Option<StepResult>>,
        done: usize,
    }
    let state = Mutex::new(State {
        started: vec![false; steps.len()],
        results: vec![None; steps.len()],
        done: 0,
    });
    let wake = Condvar::new();
    let worker = || loop {
        let mut guard = state.lock().unwrap_or_else(|poison| poison.into_inner());
        // The lowest-numbered step whose dependencies are finished: the plan puts the steps
        // that others wait for first.
        let next = loop {
            if guard.done == steps.len() || interrupted().is_some() {
                return;
            }
            let ready = (0..steps.len()).find(|&index| {
                !guard.started[index]
                    && steps[index]
                        .deps
                        .iter()
                        .all(|&dep| guard.results[dep].is_some())
            });
            match ready {
                Some(index) => break index,
                // With a timeout, so that an interrupt is noticed by idle workers too.
                None => {
                    guard = wake
                        .wait_timeout(guard, TICK)
                        .unwrap_or_else(|poison| poison.into_inner())
                        .0
                }
            }
        };
        guard.started[next] = true;
        let step = &steps[next];
        let blocked = step.deps.iter().find_map(|&dep| {
            let result = guard.results[dep].as_ref()?;
            (result.outcome != Outcome::Pass).then(|| {
                format!(
                    "not run: {} {}",
                    steps[dep].label(),
                    if result.outcome == Outcome::Fail {
                        "failed"
                    } else {
                        "did not run"
                    }
                )
            })
        });
        drop(guard);
        let result = match blocked {
            Some(reason) => StepResult::skipped(reason),
            None => {
                progress.started(next, step);
                run_step(step, keys[next], cache, limits)
            }
        };
        let mut guard = state.lock().unwrap_or_else(|poison| poison.into_inner());
        if result.interrupted {
            // Left as not finished: it is reported with the steps that never started.
            drop(guard);
            wake.notify_all();
            return;
        }
        guard.done += 1;
        progress.finished(next, step, &result, guard.done);
        guard.results[next] = Some(result);
        drop(guard);
        wake.notify_all();
    };
    thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(worker);
        }
    });
    state
        .into_inner()
        .unwrap_or_else(|poison| poison.into_inner())
        .results
        .into_iter()
        .map(|result| {
            result.unwrap_or_else(|| {
                let mut result = StepResult::skipped("not run: the run was interrupted".into());
                result.interrupted = true;
                result
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_libtest_output() {
        let stdout = "\nrunning 3 tests\n\
            test sync::tests::gated_matches_replacement_unsize ... ok\n\
            test tests::slow ... ignored\n\
            test tests::broken ... FAILED\n\n\
            test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
        let summary = TestSummary::parse(stdout).unwrap();
        assert_eq!((summary.passed, summary.failed, summary.ignored), (1, 1, 1));
        assert!(summary.passed_test("gated_matches_replacement_unsize"));
        assert!(!summary.passed_test("broken"));
        assert!(!summary.passed_test("replacement_unsize"));
        assert_eq!(TestSummary::parse("running 1 test\n"), None);
    }

    #[test]
    fn finds_the_first_rustc_error_and_its_place() {
        let stderr = "warning: unused\n --> a.rs:1:1\n\
            error[E0658]: use of unstable library feature\n  --> examples/x.rs:3:5\n   |\n\
            error: aborting due to 1 previous error\n";
        assert_eq!(
            first_rustc_error(stderr).unwrap(),
            "error[E0658]: use of unstable library feature (at examples/x.rs:3:5)"
        );
    }

    #[test]
    fn cache_entries_round_trip() {
        let result = StepResult {
            outcome: Outcome::Pass,
            first_error: None,
            seconds: 1.5,
            cached: false,
            log: Some("[info] m: init\n".into()),
            tests: Some((12, 0, 1)),
            probe: Some(Ok(vec![
                Status::Stable(crate::catalog::Release::new(1, 79, 0)),
                Status::Gated,
                Status::Unknown,
            ])),
            interrupted: false,
        };
        let entry = result.to_cache_entry(None);
        let back = StepResult::from_cache_entry(&entry, None).unwrap();
        assert!(back.cached);
        assert_eq!(back.tests, result.tests);
        assert_eq!(back.probe, result.probe);
        assert_eq!(back.log, result.log);
        assert_eq!(back.outcome, Outcome::Pass);
        // An artifact that is gone makes the entry stale.
        assert!(StepResult::from_cache_entry(
            &result.to_cache_entry(Some((1, 2))),
            Some(Path::new("/nonexistent/libkernel.rlib"))
        )
        .is_none());
    }
}
