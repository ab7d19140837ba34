// SPDX-License-Identifier: GPL-2.0
//! Hostile text: what a tree says of itself reaches docs/kernels.md as inert Markdown. (In
//! `kernel`'s every format, through the binary: `tests/tests/hostile.rs`.)

use super::*;

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
