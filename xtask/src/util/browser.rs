// SPDX-License-Identifier: GPL-2.0
//! A real browser, headless: Debian's `chromium`, for the compatibility page's screenshot and
//! for the test that reads the page as the browser built it (`--dump-dom`).
//!
//! Every run gets a fresh profile directory and the switches that keep chromium from reaching
//! the network on its own (no component updates, no sync, no background fetches).

use crate::util::process::{self, Invocation};
use anyhow::{ensure, Context};
use std::path::{Path, PathBuf};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(120);

/// The browser's executable: `$CHROMIUM` if set, else `chromium` (Debian's package) or
/// `chromium-browser` on `PATH`; `None` where there is none.
pub fn find() -> Option<PathBuf> {
    let given = std::env::var_os("CHROMIUM").filter(|path| !path.is_empty());
    let given = given.map(PathBuf::from);
    given.or_else(|| process::which("chromium").or_else(|| process::which("chromium-browser")))
}

/// Runs the browser headless on `url` with `switches`, in a fresh profile under `scratch`, and
/// returns what it wrote to stdout (with `--dump-dom`, the document as the browser built it).
pub fn headless(url: &str, switches: &[String], scratch: &Path) -> anyhow::Result<String> {
    let program = find().context(
        "no chromium found (install Debian's with `apt-get install chromium`, or set CHROMIUM \
         to a Chromium executable)",
    )?;
    let profile = scratch.join(format!("chromium-profile-{}", std::process::id()));
    std::fs::create_dir_all(&profile).with_context(|| format!("creating {}", profile.display()))?;
    let mut args: Vec<String> = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
    ]
    .map(String::from)
    .to_vec();
    args.push(format!("--user-data-dir={}", profile.display()));
    args.extend(switches.iter().cloned());
    args.push(url.to_string());
    let invocation = Invocation::new(&program, args);
    let output = process::run(&invocation, TIMEOUT)
        .with_context(|| format!("starting {}", program.display()))?;
    let _ = std::fs::remove_dir_all(&profile);
    ensure!(
        output.success(),
        "{} {}: {}\n{}",
        program.display(),
        url,
        output.describe_ending(TIMEOUT),
        output.stderr.trim_end()
    );
    Ok(output.stdout)
}

/// The `file:` URL of an absolute path (percent-encoding what a URL cannot hold as it is).
pub fn file_url(path: &Path) -> String {
    let mut url = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            url.push(char::from(byte));
        } else {
            url.push_str(&format!("%{byte:02X}"));
        }
    }
    url
}

/// A PNG screenshot of the page at `url`, 1400 x 2200 pixels, written to `png`.
pub fn screenshot(url: &str, png: &Path, scratch: &Path) -> anyhow::Result<()> {
    headless(
        url,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1400,2200".to_string(),
        ],
        scratch,
    )?;
    let shown = png.display();
    ensure!(png.is_file(), "the browser wrote no screenshot at {shown}");
    Ok(())
}
