// SPDX-License-Identifier: GPL-2.0
//! The console reader on real and cut-short consoles.

use super::*;

/// A console in the shape of a real one (its lines as 6.12's boot printed them, with two of
/// its 114 doctests): the samples' init lines, the KTAP, the reboot.
pub(super) fn console_of_a_boot() -> String {
    [
        "[    0.000000] Linux version 6.12.118 (Debian clang version 19.1.7 (3~deb12u1)) #1",
        "[    0.408392] rust_minimal: Rust minimal sample (init)",
        "[    0.408392] rust_minimal: Am I built-in? true",
        "[    0.418450] KTAP version 1",
        "[    0.418530] 1..1",
        "[    0.418735]     KTAP version 1",
        "[    0.418796]     # Subtest: rust_doctests_kernel",
        "[    0.419132]     1..2",
        "[    0.419200]     # rust_doctest_kernel_alloc_kbox_rs_0.location: rust/kernel/alloc/kbox.rs:147",
        "[    0.419300]     ok 1 rust_doctest_kernel_alloc_kbox_rs_0",
        "[    0.477555]     ok 2 rust_doctest_kernel_workqueue_rs_3",
        "[    0.477823] # Totals: pass:2 fail:0 skip:0 total:2",
        "[    0.477943] ok 1 rust_doctests_kernel",
        "[    0.826635] reboot: Restarting system",
        "[    0.826742] reboot: machine restart",
        "",
    ]
    .join("\r\n")
}

#[test]
fn a_line_stamp_is_removed_and_nothing_else() {
    assert_eq!(
        console::lines("[    0.418530] 1..1\r\n[x] y\nplain"),
        ["1..1", "[x] y", "plain"]
    );
}

#[test]
fn ktap_lines_that_do_not_parse_are_named() {
    let console = "KTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: s\n    1..2\n\
                   \x20   ok 1 a\n    ok two b\n    not ok\n    ok 2 c\n# Totals: pass:2\nok 1 s\n\
                   reboot: Restarting system\n";
    let ktap = console::ktap(&console::lines(console));
    assert_eq!(ktap.unparsed, ["    ok two b", "    not ok"]);
    assert_eq!(ktap.suites[0].cases.len(), 2);
    assert!(ktap.incomplete().is_empty(), "{:?}", ktap.incomplete());
}

#[test]
fn a_failed_case_is_named_with_what_it_printed() {
    let console = "[    0.1] KTAP version 1\n[    0.1] 1..1\n[    0.1]     KTAP version 1\n\
                   [    0.1]     # Subtest: rust_kvec\n[    0.1]     1..2\n\
                   [    0.1]     ok 1 rust_kvec_push\n\
                   [    0.1]     # rust_kvec_pop: ASSERTION FAILED at rust/kernel/alloc/kvec.rs:12\n\
                   [    0.1]     Expected v.pop() == Some(1)\n\
                   [    0.1]     not ok 2 rust_kvec_pop\n\
                   [    0.1] # rust_kvec: pass:1 fail:1 skip:0 total:2\n\
                   [    0.1] not ok 1 rust_kvec\n[    0.2] reboot: Restarting system\n";
    let ktap = console::ktap(&console::lines(console));
    let (suite, case) = ktap.cases().nth(1).unwrap();
    assert_eq!(
        (suite, case.name.as_str(), case.outcome),
        ("rust_kvec", "rust_kvec_pop", Outcome::Fail)
    );
    assert_eq!(
        case.output,
        [
            "    # rust_kvec_pop: ASSERTION FAILED at rust/kernel/alloc/kvec.rs:12",
            "    Expected v.pop() == Some(1)"
        ]
    );
    let booted = super::super::judge(
        Path::new("/src"),
        &BootConfig::default(),
        console,
        Accel::Tcg,
    );
    assert_eq!(booted.json.result, "fail");
    assert!(booted.cacheable, "a test's failure is the kernel's verdict");
    let kunit = booted.json.kunit.unwrap();
    assert_eq!((kunit.passed, kunit.failed, kunit.skipped), (1, 1, 0));
    assert_eq!(kunit.failures[0].test, "rust_kvec_pop");
    assert!(kunit.failures[0]
        .output
        .contains("Expected v.pop() == Some(1)"));
}

#[test]
fn a_console_cut_short_is_no_pass() {
    let whole = console_of_a_boot();
    let booted = super::super::judge(
        Path::new("/src"),
        &BootConfig::default(),
        &whole,
        Accel::Tcg,
    );
    assert_eq!(booted.json.result, "pass", "{}", booted.json.reason);
    // Cut anywhere before the reboot: in the middle of a suite, or after the last suite.
    let reboot = whole.find(console::REBOOT_LINE).unwrap();
    for cut in [whole.len() / 2, reboot - 1] {
        let cut = whole[..cut].rfind('\n').unwrap();
        let booted = super::super::judge(
            Path::new("/src"),
            &BootConfig::default(),
            &whole[..cut],
            Accel::Tcg,
        );
        assert_eq!(booted.json.result, "fail");
        assert!(
            booted.json.reason.contains("the console was cut short"),
            "{}",
            booted.json.reason
        );
    }
}

#[test]
fn a_panic_after_the_tests_is_a_failure() {
    let whole = console_of_a_boot();
    let reboot = whole.find(console::REBOOT_LINE).unwrap();
    let at = whole[..reboot].rfind('\n').unwrap() + 1;
    let crashed = format!(
        "{}[    1.0] BUG: kernel NULL pointer dereference, address: 0000000000000000\n\
         [    1.0] Kernel panic - not syncing: Fatal exception\n{}",
        &whole[..at],
        &whole[at..]
    );
    let booted = super::super::judge(
        Path::new("/src"),
        &BootConfig::default(),
        &crashed,
        Accel::Tcg,
    );
    assert_eq!(booted.json.result, "fail");
    assert!(
        booted
            .json
            .reason
            .contains("the kernel crashed: BUG: kernel NULL pointer"),
        "{}",
        booted.json.reason
    );
}
