// SPDX-License-Identifier: GPL-2.0
//! kshim's automation, one binary whose first argument is the command.
//!
//! Exit status: 0 success, 1 a mismatch or failure that the command reports, 2 bad input or an
//! error that stopped the work (the message says which).

use std::process::ExitCode;
use xtask::cli;
use xtask::flags::{self, XtaskCmd};
use xtask::output;
use xtask::Verdict;

fn main() -> ExitCode {
    // Rust ignores SIGPIPE, which turns a write to a closed pipe (`cargo xtask matrix | head -1`)
    // into a panic; with the default action the xtask ends quietly there, as Unix tools do.
    // SAFETY: setting a signal's disposition to its default has no memory effects, and no
    // other thread exists yet.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let args = match cli::prepare(args.clone()) {
        cli::Prepared::Parse(args) => args,
        cli::Prepared::Print(text) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        cli::Prepared::Refuse(message) => {
            eprintln!("error: {}", output::escape_lines(&message));
            return ExitCode::from(2);
        }
    };
    let flags = match flags::Xtask::from_vec(args.clone()) {
        Ok(flags) => flags,
        Err(error) if error.is_help() => {
            println!("{error}");
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            let message = cli::explain_error(&error.to_string(), &args);
            eprintln!("error: {}", output::escape_lines(&message));
            return ExitCode::from(2);
        }
    };
    let outcome = xshell::Shell::new()
        .map_err(anyhow::Error::from)
        .and_then(|sh| {
            sh.change_dir(xtask::project_root());
            match &flags.subcommand {
                XtaskCmd::Matrix(cmd) => cmd.run(&sh),
                XtaskCmd::Toolchains(cmd) => cmd.run(&sh),
                XtaskCmd::Audit(cmd) => cmd.run(&sh),
                XtaskCmd::Merge(cmd) => cmd.run(&sh),
                XtaskCmd::CiMatrix(cmd) => cmd.run(&sh),
                XtaskCmd::Docs(cmd) => cmd.run(&sh),
                XtaskCmd::Bench(cmd) => cmd.run(&sh),
                XtaskCmd::Usage(cmd) => cmd.run(&sh),
                XtaskCmd::Kernel(cmd) => cmd.run(&sh),
            }
        });
    match outcome {
        Ok(Verdict::Success) => ExitCode::SUCCESS,
        Ok(Verdict::Failure) => ExitCode::from(1),
        Err(error) => {
            // Input echoed in a message (an id, a path) must not drive the terminal.
            eprintln!("error: {}", output::escape_lines(&format!("{error:#}")));
            ExitCode::from(2)
        }
    }
}
