// SPDX-License-Identifier: GPL-2.0
//! Cache keys: never reused when anything they depend on changed.

use super::*;

#[test]
fn cache_keys_change_with_sources_flags_and_environment() {
    let root = tiny_tree("cache-keys");
    let layout = Layout::new(&root);
    let real = real_compiler();
    let version = crate::toolchains::version::parse_verbose_version(&real.verbose_version).unwrap();
    let rustc = crate::run::plan::Rustc {
        launch: crate::toolchains::loader::Launch {
            rustc: real.path.clone(),
            env: Vec::new(),
            loader: None,
        },
        release: version.release,
    };
    let planned = [crate::run::plan::PlannedToolchain {
        index: 0,
        directory_name: "t".into(),
        rustc,
        builds: true,
    }];
    let examples = crate::run::plan::examples(&root).unwrap();
    let steps = crate::run::plan::plan(&layout, &planned, &examples).unwrap();
    let probe = layout.probe_source();
    std::fs::create_dir_all(probe.parent().unwrap()).unwrap();
    std::fs::write(&probe, crate::features::probe::probe_source()).unwrap();
    let keys = |steps: &[crate::run::plan::Step], inherited: &[(String, String)]| {
        let checker = crate::run::cache::Key(8);
        crate::run::cache::cache_keys(
            steps,
            inherited,
            checker,
            &|_| crate::run::cache::Key(7),
            &mut |path| crate::run::cache::hash_file(path),
        )
        .unwrap()
    };
    let inherited = inherited_environment();
    let before = keys(&steps, &inherited);
    assert_eq!(before, keys(&steps, &inherited), "keys are not stable");

    // One example's source: its own three steps per mode change, nothing else.
    let source = root.join("examples/rust_asm_goto.rs");
    std::fs::write(
        &source,
        std::fs::read_to_string(&source).unwrap() + "// changed\n",
    )
    .unwrap();
    let after = keys(&steps, &inherited);
    let changed: BTreeSet<String> = steps
        .iter()
        .zip(before.iter().zip(&after))
        .filter(|(_, (old, new))| old != new)
        .map(|(step, _)| step.label())
        .collect();
    let expected: BTreeSet<String> = ["build", "run", "test"]
        .iter()
        .flat_map(|kind| ["kernel", "stable"].map(|mode| format!("{kind} rust_asm_goto ({mode})")))
        .collect();
    assert_eq!(changed, expected);

    // The shim's source: everything but the probe and the Kbuild fixtures, which do not use it.
    let shim = root.join("kernel-shim/src/lib.rs");
    std::fs::write(
        &shim,
        std::fs::read_to_string(&shim).unwrap() + "// changed\n",
    )
    .unwrap();
    let shim_changed = keys(&steps, &inherited);
    for ((step, old), new) in steps.iter().zip(&after).zip(&shim_changed) {
        let without_shim = step.target == "features" || step.kind == crate::run::plan::Kind::Kbuild;
        assert_eq!(old == new, without_shim, "{}", step.label());
    }

    // A flag on one command line, and one environment variable of one process.
    let mut flagged = steps.clone();
    flagged[1].processes[0].args.push("-Copt-level=1".into());
    let flagged_keys = keys(&flagged, &inherited);
    assert_ne!(flagged_keys[1], shim_changed[1]);
    assert_eq!(flagged_keys[0], shim_changed[0]);
    let mut with_env = steps.clone();
    with_env[1].processes[0]
        .env
        .push(("RUST_MIN_STACK".into(), "1000000".into()));
    assert_ne!(keys(&with_env, &inherited)[1], shim_changed[1]);

    // What every process inherits: every key changes.
    let mut other_inherited = inherited.clone();
    other_inherited.push(("TMPDIR".into(), "/elsewhere".into()));
    let other = keys(&steps, &other_inherited);
    assert!(other.iter().zip(&shim_changed).all(|(a, b)| a != b));
    // RUSTFLAGS is never inherited, so it cannot be part of any key.
    assert!(!crate::util::process::INHERITED_VARIABLES.contains(&"RUSTFLAGS"));
}
