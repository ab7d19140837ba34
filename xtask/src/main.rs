// SPDX-License-Identifier: GPL-2.0
//! kshim's automation, one binary whose first argument is the command:
//! [`xtask::commands::cli::main`].

fn main() -> std::process::ExitCode {
    xtask::commands::cli::main()
}
