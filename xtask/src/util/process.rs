// SPDX-License-Identifier: GPL-2.0
//! Running one process: a clean environment, its own process group killed whole on timeout or
//! interrupt, death with the xtask, and bounded capture of both output streams; the one `PATH`
//! lookup and the one pipe. Other short commands are `xshell::cmd!`s; no other file calls
//! `Command::new` (a test checks).

use crate::util::interrupt::{interrupted, signal_name, TICK};
use anyhow::{anyhow, Context};
use std::fmt;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// The variables a process inherits from the xtask's environment; every other one is removed.
pub const INHERITED_VARIABLES: [&str; 2] = ["PATH", "TMPDIR"];

/// The values of [`INHERITED_VARIABLES`] that are set: part of every cache key.
pub fn inherited_environment() -> Vec<(String, String)> {
    INHERITED_VARIABLES
        .iter()
        .filter_map(|name| {
            let value = std::env::var_os(name)?;
            Some((name.to_string(), value.to_string_lossy().into_owned()))
        })
        .collect()
}

/// The first executable file called `name` in a directory of `PATH`.
pub fn which(name: impl AsRef<Path>) -> Option<PathBuf> {
    which_in(&std::env::var_os("PATH")?, name.as_ref())
}

fn which_in(path: &std::ffi::OsStr, name: &Path) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|directory| directory.join(name))
        .find(|file| {
            std::fs::metadata(file)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}

pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

pub const CAPTURE_LIMIT: usize = 16 << 20;

/// How long a process's output may stay open after it exited before its group is killed.
const STRAGGLER_GRACE: Duration = Duration::from_millis(500);

/// How long the output of a killed process group may still be read (a process outside the
/// group may keep writing into its pipe).
const DRAIN_LIMIT: Duration = Duration::from_secs(10);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invocation {
    /// By absolute path.
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Removed from the inherited environment (`RUSTC_BOOTSTRAP` in stable mode).
    pub env_remove: Vec<String>,
}

impl Invocation {
    pub fn new(program: impl Into<PathBuf>, args: Vec<String>) -> Self {
        Invocation {
            program: program.into(),
            args,
            env: Vec::new(),
            env_remove: Vec::new(),
        }
    }

    pub fn with_env(self, env: Vec<(String, String)>) -> Self {
        Invocation { env, ..self }
    }

    /// A command ready to spawn: [`inherited_environment`] less `env_remove`, plus `env`, and
    /// nothing else the caller has set, so that the cache key covers the whole environment.
    pub fn command(&self) -> Command {
        let inherited = inherited_environment().into_iter();
        let kept = inherited.filter(|(name, _)| !self.env_remove.contains(name));
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .env_clear()
            .envs(kept)
            .envs(self.env.clone());
        command
    }
}

/// The invocation as one quoted POSIX shell line, `NAME=value ... /abs/program args`.
impl fmt::Display for Invocation {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut words: Vec<String> = self
            .env
            .iter()
            .map(|(name, value)| format!("{name}={}", shell_quote(value)))
            .collect();
        words.push(shell_quote(&self.program.to_string_lossy()));
        words.extend(self.args.iter().map(|arg| shell_quote(arg)));
        formatter.write_str(&words.join(" "))
    }
}

/// Quotes a word for a POSIX shell.
pub fn shell_quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-./=:,+@%".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Killed {
    Timeout,
    /// By SIGINT or SIGTERM.
    Interrupted,
}

#[derive(Clone, Debug)]
pub struct ProcessOutput {
    /// How it ended: its exit status, or why the runner killed it.
    pub status: Result<ExitStatus, Killed>,
    /// Up to [`CAPTURE_LIMIT`], as `stderr`.
    pub stdout: String,
    pub stderr: String,
    /// Whether both streams were read to their end (not when something it started left its
    /// process group and kept a pipe open).
    pub complete: bool,
    pub seconds: f64,
}

impl ProcessOutput {
    pub fn success(&self) -> bool {
        self.status.is_ok_and(|status| status.success())
    }

    /// Its exit code, if it exited rather than being killed by a signal or the runner.
    pub fn code(&self) -> Option<i32> {
        self.status.ok().and_then(|status| status.code())
    }

    /// How it ended, in words, with the dynamic loader's complaint when it could not start.
    pub fn describe_ending(&self, timeout: Duration) -> String {
        let ending = match self.status {
            Err(Killed::Timeout) => format!("killed after {} s (--timeout)", timeout.as_secs()),
            Err(Killed::Interrupted) => "killed: the run was interrupted".to_string(),
            Ok(status) => describe_status(status),
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
    let name = signal_name(signal).map_or(String::new(), |name| format!(" ({name})"));
    let core = if status.core_dumped() {
        ", core dumped"
    } else {
        ""
    };
    format!("killed by signal {signal}{name}{core}")
}

/// The library the dynamic loader could not find, from its message on stderr.
pub fn missing_library(stderr: &str) -> Option<&str> {
    let (_, rest) = stderr.split_once("error while loading shared libraries: ")?;
    rest.split(':').next().map(str::trim)
}

/// Why a program could not be started at all, from the spawn error.
pub fn describe_spawn_error(program: &Path, error: &std::io::Error) -> String {
    let why = match error.raw_os_error() {
        Some(libc::ENOENT) => "it does not exist (or its `#!` interpreter does not)".into(),
        Some(libc::EACCES) => "permission denied (is it executable?)".into(),
        Some(libc::ENOEXEC) => "it is not an executable this system can run".into(),
        _ => error.to_string(),
    };
    format!("cannot run {}: {why}", program.display())
}

/// Both output streams of a child, read with `poll` in the runner's own thread, so that what
/// the process wrote has been read before the runner decides that it has ended: no reader
/// thread that an overloaded machine could leave unscheduled past a grace period.
struct Streams {
    /// The read ends still open: stdout, then stderr.
    pipes: [Option<File>; 2],
    /// What each has delivered, up to [`CAPTURE_LIMIT`].
    bytes: [Vec<u8>; 2],
}

impl Streams {
    fn open(&self) -> usize {
        self.pipes.iter().filter(|pipe| pipe.is_some()).count()
    }

    /// Waits up to `wait` for output and reads what is there; whether anything arrived.
    fn read_for(&mut self, wait: Duration) -> bool {
        // `poll` skips a negative descriptor, an ended stream's, and with none left only waits.
        let mut fds = self.pipes.each_ref().map(|pipe| libc::pollfd {
            fd: pipe.as_ref().map_or(-1, |pipe| pipe.as_raw_fd()),
            events: libc::POLLIN,
            revents: 0,
        });
        let milliseconds = wait.as_millis().min(i32::MAX as u128) as libc::c_int;
        // SAFETY: `fds` is a live array of `fds.len()` pollfd records, which `poll` only
        // writes `revents` into.
        let ready =
            unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, milliseconds) };
        if ready <= 0 {
            // Nothing within `wait`, or a signal (EINTR): the caller looks at the clock.
            return false;
        }
        let mut chunk = [0u8; 65536];
        let mut arrived = false;
        for (index, fd) in fds.iter().enumerate() {
            let Some(pipe) = self.pipes[index].as_mut().filter(|_| fd.revents != 0) else {
                continue;
            };
            arrived = true;
            match pipe.read(&mut chunk) {
                Ok(0) => self.pipes[index] = None,
                Ok(count) => {
                    // Read past the limit too, so that the writer is never blocked on a full pipe.
                    let bytes = &mut self.bytes[index];
                    let room = CAPTURE_LIMIT.saturating_sub(bytes.len());
                    bytes.extend_from_slice(&chunk[..count.min(room)]);
                }
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => self.pipes[index] = None,
            }
        }
        arrived
    }

    fn take(&self, index: usize) -> String {
        String::from_utf8_lossy(&self.bytes[index]).into_owned()
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

/// Whether the process `pid` is running: it exists and is no zombie (a run killed with SIGKILL
/// stays one, its id taken, until its parent reads its exit status).
pub fn is_running(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists; it sends nothing.
    let answer = unsafe { libc::kill(pid as libc::pid_t, 0) };
    let exists = answer == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    // `/proc/PID/stat`: `PID (NAME) STATE ...`, NAME may hold spaces and parentheses.
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rsplit_once(") ")?.1.chars().next());
    exists && !matches!(state, Some('Z' | 'X'))
}

/// Runs one process, its whole process group killed after `timeout` or on an interrupt.
pub fn run(invocation: &Invocation, timeout: Duration) -> std::io::Result<ProcessOutput> {
    run_holding(invocation, timeout, None)
}

/// [`run`], the process inheriting `lock` (the run lock's descriptor), so that the lock stays
/// held until everything it starts has exited, even if the xtask itself is killed.
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
    let pipes = [
        child.stdout.take().map(OwnedFd::from),
        child.stderr.take().map(OwnedFd::from),
    ];
    let mut streams = Streams {
        pipes: pipes.map(|pipe| pipe.map(File::from)),
        bytes: [Vec::new(), Vec::new()],
    };
    // A timeout too large to add to the clock is no timeout at all.
    let deadline = start.checked_add(timeout);
    let mut exited_at: Option<Instant> = None;
    let mut pause = Duration::from_millis(1);
    // Wake when output arrives or a stream ends, on every tick otherwise.
    let killed = loop {
        if streams.open() > 0 {
            let left = deadline.map_or(TICK, |deadline| {
                deadline.saturating_duration_since(Instant::now())
            });
            streams.read_for(TICK.min(left));
        } else {
            // Both streams have ended; the exit follows within moments.
            thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(20));
        }
        let now = Instant::now();
        exited_at = exited_at.or_else(|| has_exited(&child).then_some(now));
        let ended = |exited| streams.open() == 0 || now.duration_since(exited) >= STRAGGLER_GRACE;
        if exited_at.is_some_and(ended) {
            break None;
        }
        if interrupted().is_some() {
            break Some(Killed::Interrupted);
        }
        if deadline.is_some_and(|deadline| now >= deadline) {
            break Some(Killed::Timeout);
        }
    };
    // SAFETY: `kill` has no memory effects. The child leads its group and is exited but
    // unreaped or still running: its pid, the group's id, cannot have been reused.
    unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
    let status = child.wait()?;
    // With the group dead, what is left in the pipes is read and then they end, unless a
    // process that left the group holds one: give up after a grace period of silence.
    let drain_end = Instant::now() + DRAIN_LIMIT;
    while streams.open() > 0 && Instant::now() < drain_end && interrupted().is_none() {
        if !streams.read_for(STRAGGLER_GRACE) {
            break;
        }
    }
    Ok(ProcessOutput {
        status: killed.map_or(Ok(status), Err),
        stdout: streams.take(0),
        stderr: streams.take(1),
        complete: streams.open() == 0,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The outputs of `first | second` (the first's stdout empty), unmonitored: xshell has no pipes,
/// and a file between the two would hold a `.deb`'s whole data archive (370 MB for qemu-user).
/// The first's stderr is read once the second has ended, so it must say less than 64 KiB.
pub fn pipe(first: xshell::Cmd<'_>, second: xshell::Cmd<'_>) -> anyhow::Result<[Output; 2]> {
    let (mut first, mut second) = (Command::from(first), Command::from(second));
    let cannot_run = |program: &std::ffi::OsStr, error| {
        anyhow!(describe_spawn_error(Path::new(program), &error))
    };
    let mut head = first
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| cannot_run(first.get_program(), error))?;
    let between = head.stdout.take().context("the pipe's read end")?;
    let tail = second
        .stdin(between)
        .output()
        .map_err(|error| cannot_run(second.get_program(), error));
    // `second` holds the pipe's read end: closed, it ends the first, if only of a broken pipe.
    drop(second);
    let head = head
        .wait_with_output()
        .context("waiting for the pipe's first process")?;
    Ok([head, tail?])
}

/// The gist of an error report such as rustup's: its `error:` line and its innermost cause
/// (the last line before any backtrace).
pub fn error_and_cause(text: &str) -> String {
    let report = text.split("Stack backtrace:").next().unwrap_or(text);
    let error = report
        .lines()
        .map(str::trim)
        .find(|line| line.starts_with("error"));
    let cause = last_line(report);
    match error {
        Some(error) if error != cause => format!("{error} / {cause}"),
        Some(error) => error.to_owned(),
        None => cause,
    }
}

/// The last non-empty line of `text`, trimmed.
pub fn last_nonempty_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).rfind(|line| !line.is_empty())
}

/// [`last_nonempty_line`], or `(no message)`.
pub fn last_line(text: &str) -> String {
    last_nonempty_line(text).unwrap_or("(no message)").into()
}

#[cfg(test)]
mod tests;
