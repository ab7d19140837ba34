// SPDX-License-Identifier: GPL-2.0
//! Tests of the boot stage: its configuration and the samples' expected lines read from the
//! real trees under `target/kernel/trees/` (skipped, saying so, where a tree is not unpacked),
//! the console's KTAP and ending in the kernel's own format, and the faults: QEMU missing,
//! `/dev/kvm` unusable, a kernel that hangs, a console cut short, a KTAP line that does not
//! parse.

use super::config::{self, BootConfig};
use super::console::{self, Outcome};
use super::qemu::{self, Accel, Host};
use super::samples;
use crate::kernel::report::json::{BootJson, FailureJson, KunitJson, SampleJson};
use std::path::{Path, PathBuf};

/// The unpacked tree `linux-source-VERSION`, if `cargo xtask kernel` has unpacked it.
fn real_tree(version: &str) -> Option<PathBuf> {
    let trees = crate::project_root().join("target/kernel/trees");
    let found = std::fs::read_dir(&trees).ok().and_then(|entries| {
        entries
            .filter_map(Result::ok)
            .map(|entry| entry.path().join(format!("linux-source-{version}")))
            .find(|root| root.join("Makefile").is_file())
    });
    if found.is_none() {
        eprintln!("note: no {version} tree under {}; skipped", trees.display());
    }
    found
}

/// The Rust samples the tree's Kconfig has and `config` leaves out.
fn left_out(tree: &Path, config: &BootConfig) -> Vec<String> {
    let kconfig = std::fs::read_to_string(tree.join("samples/rust/Kconfig")).unwrap();
    let entries = crate::kernel::symbols::kconfig_entries(&kconfig).into_iter();
    let samples = entries.filter(|entry| entry.name.starts_with("SAMPLE_RUST_"));
    let left_out = samples.filter(|entry| !config.on.contains(&entry.name));
    left_out.map(|entry| entry.name).collect()
}

#[test]
fn the_boot_config_of_6_12_has_its_two_samples_and_the_doctests() {
    let Some(tree) = real_tree("6.12") else {
        return;
    };
    let config = config::boot_config(&tree);
    assert_eq!(
        config.samples,
        [
            "SAMPLE_RUST_MINIMAL",
            "SAMPLE_RUST_PRINT",
            "SAMPLE_RUST_HOSTPROGS"
        ]
    );
    assert!(left_out(&tree, &config).is_empty());
    let fragment = config.fragment();
    for line in [
        "CONFIG_64BIT=y\n",
        "CONFIG_RUST=y\n",
        "CONFIG_KUNIT=y\n",
        "CONFIG_PVH=y\n",
        "CONFIG_RUST_KERNEL_DOCTESTS=y\n",
        "# CONFIG_MODVERSIONS is not set\n",
    ] {
        assert!(fragment.contains(line), "{line}: {fragment}");
    }
    // No configfs or debugfs sample here: nothing needs them.
    assert!(!fragment.contains("CONFIGFS_FS"), "{fragment}");
}

#[test]
fn the_boot_config_of_7_3_leaves_out_exactly_the_samples_that_need_a_bus() {
    let Some(tree) = real_tree("7.3") else {
        return;
    };
    let config = config::boot_config(&tree);
    assert_eq!(
        left_out(&tree, &config),
        [
            "SAMPLE_RUST_DMA",
            "SAMPLE_RUST_DRIVER_I2C",
            "SAMPLE_RUST_I2C_CLIENT",
            "SAMPLE_RUST_DRIVER_PCI",
            "SAMPLE_RUST_DRIVER_USB",
            "SAMPLE_RUST_DRIVER_AUXILIARY",
        ]
    );
    assert_eq!(config.samples.len(), 11, "{:?}", config.samples);
    for suite in [
        "RUST_KUNIT_TESTS",
        "RUST_ALLOCATOR_KUNIT_TEST",
        "RUST_KVEC_KUNIT_TEST",
        "RUST_BITMAP_KUNIT_TEST",
        "RUST_KUNIT_SELFTEST",
        "RUST_STR_KUNIT_TEST",
        "RUST_ATOMICS_KUNIT_TEST",
        "RUST_BITFIELD_KUNIT_TEST",
        "RUST_KERNEL_DOCTESTS",
    ] {
        assert!(
            config.on.contains(&suite.to_owned()),
            "{suite}: {:?}",
            config.on
        );
    }
    // The configfs and debugfs samples bring their filesystems, before them.
    let on = &config.on;
    let at = |symbol: &str| on.iter().position(|s| s == symbol).unwrap();
    assert!(at("CONFIGFS_FS") < at("SAMPLE_RUST_CONFIGFS"));
    assert!(at("DEBUG_FS") < at("SAMPLE_RUST_DEBUGFS"));
}

#[test]
fn a_config_step_that_loses_a_symbol_names_it() {
    let config = BootConfig {
        on: vec!["RUST".into(), "KUNIT".into(), "SAMPLE_RUST_MINIMAL".into()],
        ..BootConfig::default()
    };
    let after = "CONFIG_KUNIT=y\n# CONFIG_RUST is not set\nCONFIG_SAMPLE_RUST_MINIMAL=m\n";
    assert_eq!(
        config.lost(after),
        ["CONFIG_RUST", "CONFIG_SAMPLE_RUST_MINIMAL"]
    );
    assert!(config
        .lost("CONFIG_RUST=y\nCONFIG_KUNIT=y\nCONFIG_SAMPLE_RUST_MINIMAL=y\n")
        .is_empty());
}

fn texts(sample: &samples::Sample) -> Vec<&str> {
    sample.expected.iter().map(|e| e.text.as_str()).collect()
}

#[test]
fn the_samples_lines_come_from_their_init_in_the_tree() {
    let Some(tree) = real_tree("6.12") else {
        return;
    };
    let found = samples::samples(
        &tree,
        &[
            "SAMPLE_RUST_MINIMAL".into(),
            "SAMPLE_RUST_PRINT".into(),
            "SAMPLE_RUST_HOSTPROGS".into(),
        ],
    );
    assert_eq!(found[0].name, "rust_minimal");
    // Drop's lines (`My numbers are`, `(exit)`) are not init's.
    assert_eq!(
        texts(&found[0]),
        [
            "rust_minimal: Rust minimal sample (init)",
            "rust_minimal: Am I built-in? {}"
        ]
    );
    assert_eq!(found[1].name, "rust_print");
    let print = texts(&found[1]);
    // pr_info! only: not pr_emerg! and the other levels, not pr_cont!.
    assert_eq!(
        print,
        [
            "rust_print: Rust printing macros sample (init)",
            "rust_print: Info message (level 6) without args",
            "rust_print: A line that",
            "rust_print: {} message (level {}) with args",
            "rust_print: A {} that",
        ]
    );
    assert_eq!(found[2].name, "SAMPLE_RUST_HOSTPROGS");
    assert!(found[2].expected.is_empty());
}

#[test]
fn a_sample_line_matches_with_holes_as_wildcards_and_continued_lines() {
    let Some(tree) = real_tree("6.12") else {
        return;
    };
    let found = samples::samples(&tree, &["SAMPLE_RUST_PRINT".into()]);
    let expected = |text: &str| {
        found[0]
            .expected
            .iter()
            .find(|e| e.text == text)
            .unwrap()
            .clone()
    };
    let with_args = expected("rust_print: {} message (level {}) with args");
    assert!(with_args.matches("rust_print: Info message (level 6) with args"));
    assert!(!with_args.matches("rust_print: Info message (level 6) with args!"));
    assert!(!with_args.matches("rust_minimal: Info message (level 6) with args"));
    // A line continued by pr_cont! ends anywhere.
    let continued = expected("rust_print: A line that");
    assert!(continued.matches("rust_print: A line that is continued without args"));
    let exact = expected("rust_print: Rust printing macros sample (init)");
    assert!(exact.matches("rust_print: Rust printing macros sample (init)"));
    assert!(!exact.matches("rust_print: Rust printing macros sample (init) and more"));
}

#[test]
fn the_7_3_samples_that_print_nothing_at_init_are_listed_unchecked() {
    let Some(tree) = real_tree("7.3") else {
        return;
    };
    let config = config::boot_config(&tree);
    let found = samples::samples(&tree, &config.samples);
    let unchecked: Vec<&str> = found
        .iter()
        .filter(|sample| sample.expected.is_empty())
        .map(|sample| sample.name.as_str())
        .collect();
    let checked: Vec<&str> = found
        .iter()
        .filter(|sample| !sample.expected.is_empty())
        .map(|sample| sample.name.as_str())
        .collect();
    assert_eq!(
        checked,
        [
            "rust_configfs",
            "rust_minimal",
            "rust_misc_device",
            "rust_print",
            "rust_faux_driver"
        ],
        "unchecked: {unchecked:?}"
    );
    let minimal = found.iter().find(|s| s.name == "rust_minimal").unwrap();
    assert!(
        texts(minimal).contains(&"rust_minimal: test_parameter: {}"),
        "{minimal:?}"
    );
}

#[test]
fn strings_comments_and_lifetimes_do_not_confuse_the_init_reader() {
    let text = r#"
// fn init( in a comment { is not code
module! { type: X, name: "rust_x", license: "GPL" }
impl kernel::Module for X {
    fn init(_m: &'static ThisModule) -> Result<Self> {
        let brace = '{';
        /* pr_info!("commented out\n"); */
        pr_info!("braces {{}} and a hole {:?}\n", brace);
        pr_info!(
            "on its own line {name}\n"
        );
        Ok(X)
    }
}
fn later() { pr_info!("not init\n"); }
"#;
    let tokens = samples::tokens(text).unwrap();
    assert_eq!(samples::module_name(&tokens).as_deref(), Some("rust_x"));
    let body = samples::init_body(&tokens).unwrap();
    assert_eq!(
        samples::pr_info_formats(body),
        ["braces {{}} and a hole {:?}\n", "on its own line {name}\n"]
    );
}

#[test]
fn kvm_is_used_only_where_it_really_works() {
    let host = |virtualisation, kvm_pvm, dev_kvm: Result<(), &str>| Host {
        virtualisation,
        kvm_pvm,
        dev_kvm: dev_kvm.map_err(str::to_owned),
    };
    assert_eq!(host(true, false, Ok(())).accel().0, Accel::Kvm);
    let (accel, why) = host(false, true, Ok(())).accel();
    assert_eq!(accel, Accel::Tcg);
    assert!(why.contains("kvm-pvm"), "{why}");
    let (accel, why) = host(true, false, Err("/dev/kvm: Permission denied")).accel();
    assert_eq!(accel, Accel::Tcg);
    assert!(why.contains("Permission denied"), "{why}");
    assert_eq!(host(false, false, Ok(())).accel().0, Accel::Tcg);
}

#[test]
fn the_host_is_read_from_its_files() {
    let dir = std::env::temp_dir().join(format!("kshim-boot-host-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("kvm_pvm")).unwrap();
    std::fs::write(
        dir.join("cpuinfo"),
        "processor\t: 0\nflags\t\t: fpu vme svm sse\n",
    )
    .unwrap();
    // A KVM device that exists and cannot be opened for writing (a directory).
    let host = Host::read(&dir.join("cpuinfo"), &dir.join("kvm_pvm"), &dir);
    assert!(host.virtualisation && host.kvm_pvm);
    assert!(host.dev_kvm.is_err());
    assert_eq!(host.accel().0, Accel::Tcg);
    let host = Host::read(&dir.join("cpuinfo"), &dir.join("no_kvm_pvm"), &dir);
    let (accel, why) = host.accel();
    assert_eq!(accel, Accel::Tcg);
    assert!(why.starts_with("/dev/kvm cannot be used"), "{why}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn qemu_gets_the_serial_console_in_a_file_and_no_reboot() {
    let args = qemu::arguments(Accel::Tcg, Path::new("/o/vmlinux"), Path::new("/o/c.log"));
    let line = args.join(" ");
    assert!(line.contains("-accel tcg -cpu max"), "{line}");
    assert!(line.contains("-no-reboot"), "{line}");
    assert!(
        line.contains("-serial file:/o/c.log -kernel /o/vmlinux"),
        "{line}"
    );
    assert!(line.ends_with("kunit_shutdown=reboot panic=-1"), "{line}");
}

/// A stand-in for QEMU: a script that writes `console` to the file after `-serial file:`, then
/// sleeps `sleep` seconds and exits with `status`.
fn fake_qemu(name: &str, console: &str, sleep: u32, status: i32) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("kshim-boot-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("console.in"), console).unwrap();
    let script = dir.join("qemu-system-x86_64");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nwhile [ $# -gt 0 ]; do\n  case $1 in\n    -serial) out=${{2#file:}}; shift ;;\n\
             \x20 esac\n  shift\ndone\ncat {} > \"$out\"\necho 'qemu: said something' >&2\n\
             sleep {sleep}\nexit {status}\n",
            dir.join("console.in").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, dir)
}

fn run_fake(name: &str, console: &str, sleep: u32, status: i32, timeout: u64) -> super::Booted {
    let (script, dir) = fake_qemu(name, console, sleep, status);
    let booted = super::run_qemu(
        &script,
        (
            Accel::Tcg,
            Path::new("/nonexistent/vmlinux"),
            &dir.join("console.log"),
            std::time::Duration::from_secs(timeout),
        ),
        Path::new("/src"),
        &BootConfig::default(),
    );
    std::fs::remove_dir_all(&dir).unwrap();
    booted
}

#[test]
fn a_whole_console_passes_and_is_cached_whatever_qemu_exits_with_if_it_exits() {
    let booted = run_fake("whole", &console_of_a_boot(), 0, 0, 60);
    assert_eq!(booted.json.result, "pass", "{}", booted.json.reason);
    assert!(booted.cacheable);
    assert_eq!(booted.json.accel.as_deref(), Some("tcg"));
    assert!(booted.json.seconds.is_some());
}

#[test]
fn a_kernel_that_hangs_is_killed_at_the_timeout_and_not_cached() {
    let whole = console_of_a_boot();
    let half = &whole[..whole.len() / 2];
    let started = std::time::Instant::now();
    let booted = run_fake("hang", half, 600, 0, 2);
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert_eq!(booted.json.result, "fail");
    assert!(!booted.cacheable);
    assert!(
        booted.json.reason.starts_with("no end within 2 s"),
        "{}",
        booted.json.reason
    );
    assert!(booted.json.console_tail.is_some());
}

#[test]
fn qemu_that_fails_to_start_is_not_run_and_not_cached() {
    let booted = run_fake("nostart", "", 0, 1, 60);
    assert_eq!(booted.json.result, "not run");
    assert!(!booted.cacheable);
    assert!(
        booted.json.reason.contains("qemu: said something"),
        "{}",
        booted.json.reason
    );
    // And a program that is not there at all.
    let booted = super::run_qemu(
        Path::new("/nonexistent/qemu-system-x86_64"),
        (
            Accel::Tcg,
            Path::new("/v"),
            Path::new("/nonexistent/c.log"),
            std::time::Duration::from_secs(5),
        ),
        Path::new("/src"),
        &BootConfig::default(),
    );
    assert_eq!(booted.json.result, "not run");
    assert!(
        booted.json.reason.starts_with("QEMU could not start"),
        "{}",
        booted.json.reason
    );
}

#[test]
fn qemu_missing_is_a_cell_not_run_that_names_the_package() {
    let missing = qemu::found(None).unwrap_err();
    assert!(
        missing.contains("apt-get install qemu-system-x86"),
        "{missing}"
    );
    // The real one, where it is installed, says its version.
    if let Some(program) = crate::util::process::which("qemu-system-x86_64") {
        let qemu = qemu::found(Some(program)).unwrap();
        assert!(
            qemu.version.starts_with("QEMU emulator version"),
            "{}",
            qemu.version
        );
    }
}

#[test]
fn without_qemu_the_stage_builds_nothing_and_says_which_package() {
    let dir = std::env::temp_dir().join(format!("kshim-boot-noqemu-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = super::BuildDir::open(&dir.join("out"), "tree", "tools").unwrap();
    let tools = super::Tools {
        bindgen: dir.join("bindgen"),
        libclang: dir.join("libclang"),
        llvm_suffix: "-19".into(),
        identity: "tools".into(),
    };
    let pair = super::Pair {
        tree: &dir,
        out: &out,
        wrapper: &dir.join("rustc"),
        library: &dir.join("library"),
        rustdoc: Some(&dir.join("rustdoc")),
        tools: &tools,
        jobs: 1,
        lock: None,
        timeout: std::time::Duration::from_secs(5),
        progress: &|_| {},
    };
    let console = dir.join("console.log");
    let booted = super::boot(&pair, "1.98.1", &qemu::found(None), Accel::Tcg, &console);
    assert_eq!(booted.json.result, "not run");
    assert!(!booted.cacheable);
    assert!(
        booted.json.reason.contains("qemu-system-x86"),
        "{}",
        booted.json.reason
    );
    assert!(
        booted.steps.is_empty(),
        "nothing was built: {:?}",
        booted.steps
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A boot of a cell that built, with one sample line seen, one not checked, and a KUnit case
/// that failed.
pub(crate) fn failed_boot() -> BootJson {
    BootJson {
        result: "fail".into(),
        reason: "KUnit failed: rust_kvec.rust_kvec_pop".into(),
        accel: Some("tcg".into()),
        samples: vec![
            SampleJson {
                name: "rust_minimal".into(),
                expected: Some("rust_minimal: Am I built-in? {}".into()),
                seen: true,
            },
            SampleJson {
                name: "rust_soc".into(),
                expected: None,
                seen: false,
            },
        ],
        kunit: Some(KunitJson {
            passed: 4,
            failed: 1,
            skipped: 1,
            failures: vec![FailureJson {
                suite: "rust_kvec".into(),
                test: "rust_kvec_pop".into(),
                output: "    # rust_kvec_pop: ASSERTION FAILED at rust/kernel/alloc/kvec.rs:12"
                    .into(),
            }],
        }),
        console_tail: Some("reboot: Restarting system".into()),
        seconds: Some(1.0),
        cached: false,
    }
}
/// A console captured from a real boot (see fixtures/README.md).
fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/kernel/boot/fixtures")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

#[test]
fn real_consoles_count_as_the_manual_boots_did() {
    // 6.12: one suite, the doctests, 114 cases; 7.3: ten suites, 390 pass and one skip.
    for (name, suites, counts) in [
        ("6.12-debian-1.85.0.log", 1, (114, 0, 0)),
        ("7.3-debian-1.98.1.log", 10, (390, 0, 1)),
    ] {
        let text = fixture(name);
        let lines = console::lines(&text);
        let ktap = console::ktap(&lines);
        assert!(ktap.unparsed.is_empty(), "{name}: {:?}", ktap.unparsed);
        assert!(
            ktap.incomplete().is_empty(),
            "{name}: {:?}",
            ktap.incomplete()
        );
        assert_eq!(ktap.suites.len(), suites, "{name}");
        let count = |outcome| {
            ktap.cases()
                .filter(|(_, case)| case.outcome == outcome)
                .count()
        };
        assert_eq!(
            (
                count(Outcome::Pass),
                count(Outcome::Fail),
                count(Outcome::Skip)
            ),
            counts,
            "{name}"
        );
        let ending = console::ending(&lines);
        assert_eq!(ending.crash, None);
        assert!(ending.rebooted, "{name}");
    }
}

#[test]
fn the_real_console_shows_every_sample_line_of_the_tree() {
    let Some(tree) = real_tree("7.3") else {
        return;
    };
    let config = config::boot_config(&tree);
    // The console was recorded with the tree at another path: paths are relative in 7.3 with
    // 1.98.1 anyway (--remap-path-prefix).
    let booted = super::judge(
        &tree,
        &config,
        &fixture("7.3-debian-1.98.1.log"),
        Accel::Tcg,
    );
    assert_eq!(booted.json.result, "pass", "{}", booted.json.reason);
    let seen = booted.json.samples.iter().filter(|s| s.seen).count();
    assert!(seen >= 10, "{:?}", booted.json.samples);
    assert!(booted
        .json
        .samples
        .iter()
        .any(|s| s.name == "rust_soc" && s.expected.is_none()));
}

mod console_cases;
use console_cases::console_of_a_boot;

#[test]
fn an_images_rustc_versions_are_read_from_its_comment_each_once() {
    let dir = std::env::temp_dir().join(format!("kshim-boot-comment-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let image = dir.join("vmlinux");
    let bytes = b"\x7fELF\0rustc version 1.98.1 (a 2026)\0x\nrustc version 1.98.1 (a 2026)\0\
                  GCC: 14\nrustc version 1.85.0";
    std::fs::write(&image, bytes).unwrap();
    assert_eq!(
        super::rustc_versions(&image),
        ["rustc version 1.98.1 (a 2026)", "rustc version 1.85.0"]
    );
    assert!(super::rustc_versions(&dir.join("none")).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}
