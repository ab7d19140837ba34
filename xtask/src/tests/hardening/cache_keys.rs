// SPDX-License-Identifier: GPL-2.0
//! Cache keys: never reused when anything they depend on changed.

use super::*;

/// A compiler that is too old for builds, so that its matrix is one probe: cheap to rerun.
fn old_compiler(path: &Path, commit: char, comment: char) -> PathBuf {
    let verbose_version = verbose_version_as("1.70.0", &format!(" ({commit}bcdef012 2023-06-01)"));
    wrapper(path, &verbose_version, &format!("# {comment}"))
}

#[test]
fn a_changed_compiler_or_environment_is_never_answered_from_the_cache() {
    let root = tiny_tree("cache-identity");
    let compiler = root.join("fake/rustc");
    old_compiler(&compiler, 'a', 'x');
    let root_arg = root.display().to_string();
    let compiler_arg = compiler.display().to_string();
    let run = |env: &[(&str, &str)]| {
        let output = Command::new(xtask_binary())
            // The wrapper answers `--print target-list` as the real compiler behind it, which
            // knows targets 1.70.0 did not: the target axis is left out.
            .args(["matrix", "--root", &root_arg, "--toolchain", &compiler_arg])
            .args(["--target", "none"])
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        reused(&stderr)
    };
    assert_eq!(run(&[]), 0);
    assert_eq!(run(&[]), 1, "nothing changed");

    // Another compiler at the same path, with the same size and modification time.
    let stamp = std::fs::metadata(&compiler).unwrap().modified().unwrap();
    let size = std::fs::metadata(&compiler).unwrap().len();
    let replace = |commit: char, comment: char| {
        old_compiler(&compiler, commit, comment);
        let file = std::fs::File::options()
            .write(true)
            .open(&compiler)
            .unwrap();
        file.set_modified(stamp).unwrap();
        assert_eq!(std::fs::metadata(&compiler).unwrap().len(), size);
    };
    replace('b', 'x'); // its `-vV` (and so its contents) differ
    assert_eq!(
        run(&[]),
        0,
        "a compiler with another -vV was answered from the cache"
    );
    replace('b', 'y'); // the same `-vV`, other contents
    assert_eq!(
        run(&[]),
        0,
        "a compiler with other contents was answered from the cache"
    );
    assert_eq!(run(&[]), 1);

    // The environment the processes get is part of the key; what they never get is not.
    let tmp = root.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let tmp = tmp.display().to_string();
    assert_eq!(
        run(&[("TMPDIR", &tmp)]),
        0,
        "a changed TMPDIR was not noticed"
    );
    let ignored = [
        ("TMPDIR", tmp.as_str()),
        ("RUSTFLAGS", "--cfg bogus"),
        ("RUSTC_BOOTSTRAP", "1"),
    ];
    assert_eq!(run(&ignored), 1, "a variable no process gets changed a key");
}

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
