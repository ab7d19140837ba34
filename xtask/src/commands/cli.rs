// SPDX-License-Identifier: GPL-2.0
//! The command line's manners around the flags that `flags.rs` declares: each command's help
//! for that command, `help` and a bare `cargo xtask` listing the commands, "did you mean"
//! for a mistyped flag or command, and rustup's `+TOOLCHAIN` as `--toolchain TOOLCHAIN`; and
//! [`main`], which parses them and runs the command.

use crate::commands::flags::{self, XtaskCmd};
use crate::util::output::{self, Colour, Output, Verbosity, Width};
use crate::Verdict;
use std::ffi::OsString;
use std::process::ExitCode;

/// The xtask's entry point, its binary's whole `main`.
///
/// Exit status: 0 success, 1 a mismatch or failure that the command reports, 2 bad input or an
/// error that stopped the work (the message says which).
pub fn main() -> ExitCode {
    // Rust ignores SIGPIPE, which turns a write to a closed pipe (`cargo xtask matrix | head -1`)
    // into a panic; with the default action the xtask ends quietly there, as Unix tools do.
    // SAFETY: setting a signal's disposition to its default has no memory effects, and no
    // other thread exists yet.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let (args, output) = match prepare(std::env::args_os().skip(1).collect()) {
        Prepared::Parse(args, output) => (args, output),
        Prepared::Print(text) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Prepared::Refuse(message) => return refuse(&message),
    };
    let flags = match flags::Xtask::from_vec(args.clone()) {
        Ok(flags) => flags,
        Err(error) if error.is_help() => {
            println!("{error}");
            return ExitCode::SUCCESS;
        }
        Err(error) => return refuse(&explain_error(&error.to_string(), &args)),
    };
    let outcome = xshell::Shell::new()
        .map_err(anyhow::Error::from)
        .and_then(|sh| {
            sh.change_dir(crate::project_root());
            match &flags.subcommand {
                XtaskCmd::Matrix(cmd) => cmd.run(&sh, output),
                XtaskCmd::Msrv(cmd) => cmd.run(&sh, output),
                XtaskCmd::Toolchains(cmd) => cmd.run(&sh, output),
                XtaskCmd::Audit(cmd) => cmd.run(&sh, output),
                XtaskCmd::Merge(cmd) => cmd.run(&sh, output),
                XtaskCmd::CiMatrix(cmd) => cmd.run(&sh),
                XtaskCmd::Docs(cmd) => cmd.run(&sh, output.verbosity),
                XtaskCmd::Bench(cmd) => cmd.run(&sh),
                XtaskCmd::Usage(cmd) => cmd.run(&sh, output),
                XtaskCmd::Kernel(cmd) => cmd.run(&sh, output),
                XtaskCmd::Show(cmd) => cmd.run(&sh, output),
            }
        });
    match outcome {
        Ok(Verdict::Success) => ExitCode::SUCCESS,
        Ok(Verdict::Failure) => ExitCode::from(1),
        Err(error) => refuse(&format!("{error:#}")),
    }
}

/// Says `message` as an error and gives exit status 2; input echoed in it (an id, a path) must
/// not drive the terminal.
fn refuse(message: &str) -> ExitCode {
    eprintln!("error: {}", output::escape_lines(message));
    ExitCode::from(2)
}

/// The help xflags generates from `flags.rs`, split into the top section and one section per
/// command, keyed by the command's words (`matrix`, `toolchains install`).
fn sections() -> (String, Vec<(String, String)>) {
    let help = flags::Xtask::from_vec(vec!["--help".into()]).err();
    let help = help.map(|help| help.to_string()).unwrap_or_default();
    let mut top = String::new();
    let mut commands: Vec<(String, String)> = Vec::new();
    for line in help.lines() {
        if let Some(words) = line.strip_prefix("xtask ") {
            commands.push((words.trim().to_string(), String::new()));
        }
        let section = match commands.last_mut() {
            Some((_, text)) => text,
            None => &mut top,
        };
        section.push_str(line);
        section.push('\n');
    }
    (top, commands)
}

/// The top-level help with the list of commands, each with the first line of its description.
pub(crate) fn command_list() -> String {
    let (top, commands) = sections();
    let intro: String = top
        .lines()
        .take_while(|line| !line.starts_with("OPTIONS") && !line.starts_with("SUBCOMMANDS"))
        .map(|line| format!("{line}\n"))
        .collect();
    let mut text = format!(
        "{}\n\nUsage: cargo xtask COMMAND [FLAGS]\n\nCommands:\n",
        intro.trim_end()
    );
    let names = commands.iter().map(|(name, _)| name.len());
    let width = names.max().unwrap_or(0);
    for (name, section) in &commands {
        text.push_str(&format!("    {name:width$}  {}\n", summary(section)));
    }
    text.push_str(
        "\nEvery command also takes `--color auto|always|never` (default: `CARGO_TERM_COLOR`, else \
         auto), `-q`/`--quiet` (no progress on stderr), `-v`/`--verbose` (a progress line for \
         cached steps too) and `--wide` (tables in their full layout, however wide; without it \
         no line is wider than the terminal: `COLUMNS`, else its size, else 100).\n`cargo xtask help COMMAND` or `cargo xtask COMMAND --help` shows one \
         command's flags; `+TOOLCHAIN` is short for `--toolchain TOOLCHAIN`, before or after the \
         command; `--version` prints the xtask's version.\n",
    );
    text
}

/// The first sentence of a command's description, from its help section.
fn summary(section: &str) -> String {
    let paragraph: Vec<&str> = section
        .lines()
        .skip(1)
        .map(str::trim)
        .take_while(|line| !line.is_empty())
        .collect();
    let paragraph = paragraph.join(" ");
    match paragraph.find(". ").or_else(|| paragraph.find(": ")) {
        Some(end) => paragraph[..end].to_string(),
        None => paragraph.trim_end_matches('.').to_string(),
    }
}

/// The help of the command named by `words` (`["toolchains", "install"]`) and of the commands
/// under it; `None` for no such command.
pub(crate) fn command_help(words: &[String]) -> Option<String> {
    let wanted = words.join(" ");
    let (_, commands) = sections();
    let text: String = commands
        .iter()
        .filter(|(name, _)| *name == wanted || name.starts_with(&format!("{wanted} ")))
        .map(|(_, section)| section.as_str())
        .collect();
    (!text.is_empty()).then(|| {
        format!(
            "Usage: cargo xtask {wanted} [FLAGS]\n\n{text}\
             Every command also takes --color auto|always|never, -q/--quiet, -v/--verbose and \
             --wide (`cargo xtask help`).\n"
        )
    })
}

/// The flags the help lists under the command named by `words` (not its subcommands').
fn flags_of(words: &[String]) -> Vec<String> {
    let wanted = words.join(" ");
    let (top, commands) = sections();
    let section = commands
        .iter()
        .find(|(name, _)| *name == wanted)
        .map_or(top, |(_, text)| text.clone());
    let listed = section
        .lines()
        .map(str::trim_start)
        .filter(|line| line.starts_with('-'));
    let words = listed.flat_map(|line| line.split([',', ' ']));
    ["--help", "--quiet", "--verbose", "--color", "--wide"]
        .into_iter()
        .chain(words.filter(|word| word.starts_with("--")))
        .map(String::from)
        .collect()
}

/// The words of the command that `args` (without the program) name, as far as they name one.
fn command_words(args: &[OsString]) -> Vec<String> {
    let (_, known) = sections();
    let mut words: Vec<String> = Vec::new();
    let texts = args.iter().map_while(|arg| arg.to_str());
    for arg in texts.filter(|arg| !arg.starts_with(['-', '+'])) {
        words.push(arg.to_string());
        if !known.iter().any(|(name, _)| *name == words.join(" ")) {
            words.pop();
            break;
        }
    }
    words
}

/// What to do with the arguments before xflags parses them.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Prepared {
    /// Parse these (with `+TOOLCHAIN` rewritten); the flags every command takes said this.
    Parse(Vec<OsString>, Output),
    /// Print this on stdout and exit 0 (help, the list of commands).
    Print(String),
    /// Bad input: print this error and exit 2.
    Refuse(String),
}

/// Reads the arguments (without the program name) the way cargo's users expect: `help
/// [COMMAND]`, no command at all, `COMMAND --help`, and `+TOOLCHAIN`.
pub(crate) fn prepare(args: Vec<OsString>) -> Prepared {
    let text = |arg: &OsString| arg.to_str().map(String::from);
    if let Some(word) = args.first().filter(|arg| arg.to_str().is_none()) {
        return Prepared::Refuse(format!(
            "no command `{}`: a command is a word of UTF-8 text",
            word.to_string_lossy()
        ));
    }
    match args.first().and_then(text).as_deref() {
        None | Some("-h" | "--help") => return Prepared::Print(command_list()),
        Some("-V" | "--version") => {
            return Prepared::Print(format!("xtask {} (kshim)\n", env!("CARGO_PKG_VERSION")))
        }
        Some("help") => {
            let words: Vec<String> = args[1..].iter().filter_map(text).collect();
            return match command_help(&words) {
                _ if words.is_empty() => Prepared::Print(command_list()),
                Some(help) => Prepared::Print(help),
                None => Prepared::Refuse(unknown_command(&words.join(" "))),
            };
        }
        _ => {}
    }
    let words = command_words(&args);
    let first = args.first().and_then(text);
    if let Some(first) = first.filter(|arg| words.is_empty() && !arg.starts_with('-')) {
        return Prepared::Refuse(unknown_command(&first));
    }
    if args.iter().any(|arg| arg == "-h" || arg == "--help") {
        return Prepared::Print(command_help(&words).unwrap_or_else(command_list));
    }
    // A run that waits for a lock this one holds names it by these words.
    crate::util::run_lock::set_command(&words.join(" "));
    let mut parsed = Vec::with_capacity(args.len() + 1);
    // `+TOOLCHAIN` may come before the command (`cargo xtask +nightly matrix`), as cargo's own
    // does; xflags takes `--toolchain` only after the command's words.
    let mut toolchains: Vec<OsString> = Vec::new();
    let mut output = Output::of_stdout();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        // The flags every command takes, as cargo's: read here, so that no command declares
        // them again.
        match arg.to_str() {
            Some("-q" | "--quiet") => output.verbosity = Verbosity::Quiet,
            Some("-v" | "--verbose") => output.verbosity = Verbosity::Verbose,
            Some("--wide") => output.width = Width::Wide,
            Some(text) if text == "--color" || text.starts_with("--color=") => {
                let value = text
                    .strip_prefix("--color=")
                    .map(str::to_owned)
                    .or_else(|| args.next()?.into_string().ok());
                let Some(value) = value else {
                    return Prepared::Refuse("--color needs a value: auto, always or never".into());
                };
                match Colour::parse(&value) {
                    Ok(choice) => output.colour = choice,
                    Err(error) => return Prepared::Refuse(error.to_string()),
                }
            }
            Some(text) if text.len() > 1 && text.starts_with('+') => {
                let flag = ["--toolchain".into(), text[1..].into()];
                if parsed.len() < words.len() {
                    toolchains.extend(flag);
                } else {
                    parsed.extend(flag);
                }
            }
            _ => parsed.push(arg),
        }
        if parsed.len() == words.len() {
            parsed.append(&mut toolchains);
        }
    }
    if let Some(refused) = toolchain_paths_that_name_nothing(&parsed) {
        return Prepared::Refuse(refused);
    }
    Prepared::Parse(parsed, output)
}

/// The first `--toolchain` path (a spec with a `/`, taken from the repository root as every
/// command takes it) that names no executable file: bad input, said before anything runs. A
/// file that runs and misbehaves is a compiler's answer, which the commands report.
fn toolchain_paths_that_name_nothing(args: &[OsString]) -> Option<String> {
    use std::os::unix::fs::PermissionsExt as _;
    let mut values = args
        .windows(2)
        .filter(|pair| pair[0] == "--toolchain")
        .map(|pair| pair[1].as_os_str())
        .chain(
            args.iter()
                .filter_map(|arg| arg.to_str()?.strip_prefix("--toolchain="))
                .map(std::ffi::OsStr::new),
        );
    values.find_map(|value| {
        let text = value.to_string_lossy();
        if !text.contains('/') || text.starts_with("debian:") {
            return None;
        }
        let why = match std::fs::metadata(crate::project_root().join(value)) {
            Err(_) => "no such file",
            Ok(file) if !file.is_file() => "not a file",
            Ok(file) if file.permissions().mode() & 0o111 == 0 => "not executable",
            Ok(_) => return None,
        };
        Some(format!(
            "--toolchain {}: {why} (a path names a rustc executable or a wrapper script)",
            output::escape(&text)
        ))
    })
}

fn unknown_command(typed: &str) -> String {
    let (_, commands) = sections();
    let mut top: Vec<String> = commands.into_iter().map(|(name, _)| name).collect();
    top.retain(|name| !name.contains(' '));
    match crate::closest(typed, &top) {
        Some(meant) => format!("no command `{typed}`: did you mean `{meant}`?"),
        None => format!("no command `{typed}`; the commands are {}", top.join(", ")),
    }
}

/// xflags's error `message` for `args`, with a suggestion where a flag or command was
/// mistyped, and where to find the help.
pub(crate) fn explain_error(message: &str, args: &[OsString]) -> String {
    let words = command_words(args);
    let mut text = message.to_string();
    if let Some(typed) = message
        .strip_prefix("unexpected flag: `")
        .and_then(|rest| rest.strip_suffix('`'))
    {
        let name = typed.split('=').next().unwrap_or(typed);
        if let Some(meant) = crate::closest(name, &flags_of(&words)) {
            text.push_str(&format!("\n  did you mean `{meant}`?"));
        }
    }
    let help = if words.is_empty() {
        "help".to_string()
    } else {
        format!("{} --help", words.join(" "))
    };
    text + &format!("\n(run `cargo xtask {help}` for the flags)")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn each_command_gets_its_own_help() {
        let Prepared::Print(help) = prepare(args(&["matrix", "--help"])) else {
            panic!("matrix --help is not printed");
        };
        assert!(
            help.starts_with("Usage: cargo xtask matrix [FLAGS]\n"),
            "{help}"
        );
        assert!(
            help.contains("--dry-run") && !help.contains("xtask audit"),
            "{help}"
        );
        let Prepared::Print(help) = prepare(args(&["help", "toolchains"])) else {
            panic!("help toolchains is not printed");
        };
        assert!(help.contains("xtask toolchains install"), "{help}");
        assert!(!help.contains("xtask matrix"), "{help}");
    }

    #[test]
    fn help_and_no_command_list_the_commands() {
        for words in [&[][..], &["help"][..], &["--help"][..]] {
            let Prepared::Print(list) = prepare(args(words)) else {
                panic!("{words:?} prints no list");
            };
            for command in ["matrix", "toolchains", "audit", "usage", "merge", "docs"] {
                assert!(
                    list.lines()
                        .any(|line| line.trim_start().starts_with(command)),
                    "{words:?}: {command} is not listed:\n{list}"
                );
            }
        }
    }

    #[test]
    fn mistakes_get_suggestions() {
        let message = explain_error(
            "unexpected flag: `--toolchians`",
            &args(&["matrix", "--toolchians", "x"]),
        );
        assert!(message.contains("did you mean `--toolchain`?"), "{message}");
        assert!(message.contains("cargo xtask matrix --help"), "{message}");
        assert_eq!(
            prepare(args(&["matrx"])),
            Prepared::Refuse("no command `matrx`: did you mean `matrix`?".into())
        );
        let far = explain_error("unexpected flag: `--zzzzzzz`", &args(&["matrix"]));
        assert!(!far.contains("did you mean"), "{far}");
    }

    #[test]
    fn a_toolchain_path_that_names_no_executable_is_refused_at_once() {
        let plain = std::env::temp_dir().join(format!("kshim-plain-{}", std::process::id()));
        std::fs::write(&plain, "not a compiler\n").unwrap();
        let plain_path = plain.to_string_lossy().into_owned();
        for (path, why) in [
            ("/nonexistent/rustc", "no such file"),
            (plain_path.as_str(), "not executable"),
            ("/usr/bin/", "not a file"),
        ] {
            assert_eq!(
                prepare(args(&["matrix", "--toolchain", path])),
                Prepared::Refuse(format!(
                    "--toolchain {path}: {why} (a path names a rustc executable or a wrapper \
                     script)"
                ))
            );
        }
        std::fs::remove_file(&plain).unwrap();
        assert_eq!(
            prepare(args(&["matrix", "--toolchain", "/bin/false"])),
            Prepared::Parse(
                args(&["matrix", "--toolchain", "/bin/false"]),
                Output::of_stdout()
            )
        );
        assert!(matches!(
            prepare(args(&["matrix", "+/nonexistent/rustc"])),
            Prepared::Refuse(_)
        ));
    }

    #[test]
    fn a_command_word_that_is_not_text_is_refused_and_version_is_printed() {
        use std::os::unix::ffi::OsStringExt;
        let word = OsString::from_vec(vec![b'm', 0xff]);
        let Prepared::Refuse(message) = prepare(vec![word]) else {
            panic!("a command word that is not UTF-8 is not refused");
        };
        assert!(message.starts_with("no command `m\u{fffd}`"), "{message}");
        for flag in ["--version", "-V"] {
            let Prepared::Print(text) = prepare(args(&[flag])) else {
                panic!("{flag} prints nothing");
            };
            assert!(text.starts_with("xtask 0."), "{text}");
        }
    }

    #[test]
    fn the_flags_of_every_command_are_read_here() {
        assert_eq!(
            prepare(args(&["docs", "--color=never", "-q", "--wide", "--check"])),
            Prepared::Parse(
                args(&["docs", "--check"]),
                Output {
                    colour: Colour::Never,
                    verbosity: Verbosity::Quiet,
                    width: Width::Wide
                }
            )
        );
        assert_eq!(
            prepare(args(&["docs", "--color", "sometimes"])),
            Prepared::Refuse("--color must be `auto`, `always` or `never`, not `sometimes`".into())
        );
        assert_eq!(
            prepare(args(&["docs", "--color"])),
            Prepared::Refuse("--color needs a value: auto, always or never".into())
        );
    }

    #[test]
    fn plus_toolchain_is_short_for_the_flag_before_or_after_the_command() {
        assert_eq!(
            prepare(args(&["+debian-1.85.0", "matrix", "--format", "json"])),
            Prepared::Parse(
                args(&["matrix", "--toolchain", "debian-1.85.0", "--format", "json"]),
                Output::of_stdout()
            )
        );
        assert_eq!(
            prepare(args(&[
                "+a",
                "toolchains",
                "install",
                "--toolchain",
                "b",
                "+c"
            ])),
            Prepared::Parse(
                args(&[
                    "toolchains",
                    "install",
                    "--toolchain",
                    "a",
                    "--toolchain",
                    "b",
                    "--toolchain",
                    "c"
                ]),
                Output::of_stdout()
            )
        );
        assert_eq!(
            prepare(args(&["matrix", "+nightly", "--format", "json"])),
            Prepared::Parse(
                args(&["matrix", "--toolchain", "nightly", "--format", "json"]),
                Output::of_stdout()
            )
        );
    }
}
