// SPDX-License-Identifier: GPL-2.0
//! Text from a tree's build reaches no output raw.

use super::*;

/// A build that prints escape sequences (a terminal title, a clear screen) in its error: the
/// run's progress line, the table and the finding show them escaped, the Markdown too, with a
/// tree version whose EXTRAVERSION is HTML. Before, `kernel` printed them raw (with
/// `NO_COLOR` too) and `--format markdown` wrote the `<img>` tag as it was.
#[test]
fn a_builds_escape_sequences_and_a_trees_html_reach_no_output_raw() {
    let (built, _, _) = play("escape", 60);
    assert_eq!(built.real, Real::Fail, "{built:?}");
    let error = built.first_error.clone().unwrap();
    assert!(error.contains("\x1b]0;owned\x07\x1b[2J"), "{error:?}");
    let mut report = report();
    report.cells[1].first_error = Some(error.clone());
    report.trees[0].version = Some("6.12.0-<img src=x onerror=alert(1)>\x1b[2J".into());
    let human = human(&report);
    assert!(!human.contains(['\x1b', '\x07']), "{human:?}");
    assert!(human.contains(
        "finding: 6.12 with debian-1.98.1: predicted pass, really fail: error[E0635]: unknown \
         feature \\e]0;owned\\u{7}\\e[2J`x`"
    ));
    assert!(human.contains("6.12: Linux 6.12.0-<img src=x onerror=alert(1)>\\e[2J, "));
    let markdown = report.markdown();
    assert!(!markdown.contains(['\x1b', '\x07']), "{markdown}");
    assert!(!markdown.replace("\\<", "").contains('<'), "{markdown}");
    assert!(markdown.contains("6.12.0-\\<img src=x onerror=alert(1)\\>\\\\e\\[2J"));
    let line = crate::kernel::run::progress_line(&format!(
        "6.12 with debian-1.98.1: fail in 1 s: {error}"
    ));
    assert_eq!(
        line,
        "kernel: 6.12 with debian-1.98.1: fail in 1 s: error[E0635]: unknown feature \
         \\e]0;owned\\u{7}\\e[2J`x`"
    );
}
