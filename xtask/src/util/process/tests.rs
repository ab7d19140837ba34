// SPDX-License-Identifier: GPL-2.0
//! Tests of [`crate::util::process`]: quoting, `PATH` lookup, the pipe, error gists, and the rule
//! that processes start only in process.rs or through xshell.

use super::*;
use xshell::cmd;

#[test]
fn quotes_only_what_needs_it() {
    assert_eq!(shell_quote("--edition"), "--edition");
    assert_eq!(
        shell_quote("cfg(kshim_kernel_mode)"),
        "'cfg(kshim_kernel_mode)'"
    );
    assert_eq!(shell_quote("it's"), r"'it'\''s'");
    assert_eq!(shell_quote(""), "''");
}

#[test]
fn which_finds_executable_files_only() {
    let sh = which("sh").expect("no sh on PATH");
    assert!(sh.is_absolute() && sh.ends_with("sh"), "{}", sh.display());
    assert_eq!(which("kshim-no-such-program"), None);
    // In the first directory: a directory and a file that is not executable, both called
    // `sh`; the real `sh` comes after them.
    let dir = crate::project_root().join("target/kshim/test-scratch/which");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("first/sh")).unwrap();
    std::fs::create_dir_all(dir.join("second")).unwrap();
    std::fs::write(dir.join("second/sh"), "").unwrap();
    let mut directories = vec![dir.join("first"), dir.join("second")];
    directories.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap()));
    let path = std::env::join_paths(directories).unwrap();
    assert_eq!(which_in(&path, Path::new("sh")), Some(sh));
    let only_ours = std::env::join_paths([dir.join("first"), dir.join("second")]).unwrap();
    assert_eq!(which_in(&only_ours, Path::new("sh")), None);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_pipe_passes_the_first_output_to_the_second_and_ends_when_it_stops() {
    let sh = xshell::Shell::new().unwrap();
    let [first, second] = pipe(cmd!(sh, "printf 'a\nb\n'"), cmd!(sh, "wc -l")).unwrap();
    assert!(first.status.success() && first.stdout.is_empty());
    assert_eq!(String::from_utf8_lossy(&second.stdout).trim(), "2");
    // `yes` writes forever: it ends of the broken pipe once `head` has its line.
    let [first, second] = pipe(cmd!(sh, "yes"), cmd!(sh, "head -n 1")).unwrap();
    assert_eq!(first.status.signal(), Some(libc::SIGPIPE));
    assert_eq!(String::from_utf8_lossy(&second.stdout), "y\n");
    let [first, second] = pipe(cmd!(sh, "sh -c 'echo no >&2; exit 3'"), cmd!(sh, "cat")).unwrap();
    assert!(second.status.success());
    assert_eq!(first.status.code(), Some(3));
    assert_eq!(String::from_utf8_lossy(&first.stderr), "no\n");
    for (first, second) in [
        ("kshim-no-such-program", "cat"),
        ("yes", "kshim-no-such-program"),
    ] {
        let error = pipe(cmd!(sh, "{first}"), cmd!(sh, "{second}")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "cannot run kshim-no-such-program: it does not exist (or its `#!` interpreter \
             does not)"
        );
    }
}

/// Processes start here (monitored by [`run`], or [`pipe`]) or through `xshell::cmd!`:
/// `Command::new` appears in no other source file of the xtask, tests aside.
#[test]
fn processes_are_started_only_here_or_by_xshell() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (mut scanned, mut found) = (0, Vec::new());
    let mut pending = vec![src.clone()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if name != "tests" {
                    pending.push(path);
                }
                continue;
            }
            if !name.ends_with(".rs") || name == "tests.rs" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            if outside_test_modules(&text).contains("Command::new") {
                found.push(path.strip_prefix(&src).unwrap().display().to_string());
            }
            scanned += 1;
        }
    }
    assert!(scanned > 50, "only {scanned} files under {}", src.display());
    found.sort();
    assert_eq!(
        found,
        ["util/process.rs"],
        "start processes with process::run or xshell::cmd!"
    );
}

/// `text` without its inline `#[cfg(test)] mod NAME { ... }` blocks (braces counted).
fn outside_test_modules(text: &str) -> String {
    let (mut kept, mut rest) = (String::new(), text);
    while let Some(start) = rest.find("#[cfg(test)]\nmod ") {
        kept.push_str(&rest[..start]);
        let body = &rest[start..];
        let Some(open) = body.find('{') else {
            return kept;
        };
        let mut depth = 0;
        let end = body[open..].find(|c| {
            depth += match c {
                '{' => 1,
                '}' => -1,
                _ => 0,
            };
            depth == 0
        });
        let Some(end) = end else {
            return kept;
        };
        rest = &body[open + end + 1..];
    }
    kept + rest
}

#[test]
fn test_modules_are_told_apart() {
    let text = "a\n#[cfg(test)]\nmod tests {\n    fn f() { g() }\n}\nb\n";
    assert_eq!(outside_test_modules(text), "a\n\nb\n");
    assert_eq!(outside_test_modules("c"), "c");
}

#[test]
fn rustup_error_gist() {
    // What `rustup toolchain install 1.78.0` prints when it cannot reach its server.
    let stderr = "info: syncing channel updates for 1.78.0-x86_64-unknown-linux-gnu
error: could not download file from 'http://127.0.0.1:9/dist/channel-rust-1.78.0.toml.sha256' to '/root/.rustup/tmp/x_file'

Caused by:
0: error downloading file
1: error sending request for url (http://127.0.0.1:9/dist/channel-rust-1.78.0.toml.sha256)
2: client error (Connect)
3: tcp connect error
4: Connection refused (os error 111)

Stack backtrace:
   0: <E as anyhow::context::ext::StdError>::ext_context
  22: <unknown>
";
    assert_eq!(
        error_and_cause(stderr),
        "error: could not download file from 'http://127.0.0.1:9/dist/channel-rust-1.78.0.toml.sha256' \
         to '/root/.rustup/tmp/x_file' / 4: Connection refused (os error 111)"
    );
    assert_eq!(error_and_cause(""), "(no message)");
    assert_eq!(error_and_cause("error: one line\n"), "error: one line");
}

/// A process that has exited and that its parent has not waited for yet (a zombie, as a run killed
/// with SIGKILL is until then) is not running, though its id is still taken.
#[test]
fn a_zombie_is_not_running() {
    assert!(is_running(std::process::id()));
    let mut child = Command::new("true").spawn().unwrap();
    while !has_exited(&child) {
        thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: signal 0 only checks that the process exists; it sends nothing.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, 0) }, 0);
    assert!(!is_running(child.id()));
    child.wait().unwrap();
}
