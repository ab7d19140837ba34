// SPDX-License-Identifier: GPL-2.0
//! Hostile text: what a tree says of itself (its Makefile's EXTRAVERSION) reaches a terminal
//! escaped and Markdown inert, in `kernel`'s every format and in docs/kernels.md.

use super::*;
use crate::tests::support::scratch_dir;

/// An EXTRAVERSION that would set the terminal's title, clear its screen, and run a script in a
/// page that showed it raw.
const EXTRAVERSION: &str = "-<script>alert(1)</script>\x1b]0;owned\x07\x1b[2J";

/// A Linux 5.10 tree (no `rust/`): `kernel` reads its version and says it has no Rust.
fn hostile_tree() -> PathBuf {
    let root = scratch_dir("hostile-text").join("linux");
    for (relative, text) in [
        (
            "Makefile",
            format!(
                "VERSION = 5\nPATCHLEVEL = 10\nSUBLEVEL = 246\nEXTRAVERSION = {EXTRAVERSION}\n"
            ),
        ),
        ("scripts/config", "#!/bin/sh\n".into()),
        ("scripts/Makefile.build", "# no Rust here\n".into()),
        ("init/Kconfig", "config CC_VERSION_TEXT\n\tstring\n".into()),
    ] {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    root
}

/// Before: the human output and the progress lines carried ESC and BEL raw (with `NO_COLOR`),
/// and `--format markdown` wrote `<script>` as it was.
#[test]
fn a_trees_own_text_reaches_no_output_raw() {
    let tree = hostile_tree();
    let rustc = current_rustc();
    for format in ["human", "markdown", "json"] {
        let finished = xtask(&[
            "kernel",
            "--tree",
            path_str(&tree),
            "--toolchain",
            path_str(&rustc),
            "--format",
            format,
        ]);
        assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
        for (stream, text) in [("stdout", &finished.stdout), ("stderr", &finished.stderr)] {
            assert!(
                !text.contains(['\x1b', '\x07']),
                "--format {format}: a control character on {stream}: {text:?}"
            );
        }
        let said = match format {
            "human" => "5.10.246-<script>alert(1)</script>\\e]0;owned\\u{7}\\e[2J",
            "markdown" => {
                "5.10.246-\\<script\\>alert(1)\\</script\\>\\\\e\\]0;owned\\\\u{7}\\\\e\\[2J"
            }
            // JSON escapes control characters itself.
            _ => "5.10.246-<script>alert(1)</script>\\u001b]0;owned\\u0007\\u001b[2J",
        };
        assert!(
            finished.stdout.contains(said),
            "--format {format}: {said} not in:\n{}",
            finished.stdout
        );
        if format == "markdown" {
            let unescaped = finished.stdout.replace("\\<", "");
            assert!(!unescaped.contains('<'), "{}", finished.stdout);
        }
    }
}

/// Before: docs/kernels.md had the heading `## Linux 6.12.118-<img src=x onerror=alert(1)>`.
#[test]
fn a_trees_version_is_an_inert_heading_in_the_kernels_page() {
    let file = crate::project_root().join(crate::docs::kernels::KERNEL_REPORT);
    let mut report = json::parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let trees = report["trees"].as_array_mut().unwrap();
    let tree = trees.iter_mut().find(|tree| tree["id"] == "6.12").unwrap();
    tree["version"] = "6.12.118-<img src=x onerror=alert(1)>".into();
    tree["package"] = "linux-source-6.12=6.12.118-1`<b>|".into();
    let page = crate::docs::kernels::kernels_page(Some(&json::to_pretty(&report)), &file).unwrap();
    assert!(
        page.contains("## Linux 6.12.118-\\<img src=x onerror=alert(1)\\> (`6.12`)"),
        "{page}"
    );
    assert!(page.contains("- Debian package: `` linux-source-6.12=6.12.118-1`<b>\\| ``."));
}
