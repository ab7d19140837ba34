//! Where the shim uses a feature, as the compiler running these tests says it: the kernel-mode
//! compile without that feature in `-Zallow-features` points at the catalog's shim item.

use kshim_tests::{current_rustc, project_root, scratch_dir};
use xtask::audit::decide::Decider;
use xtask::audit::input::read_crate_root;
use xtask::audit::kconfig;
use xtask::catalog::{derived_cfgs, feature};
use xtask::plan::Rustc;
use xtask::process;
use xtask::usage::{read_places, shim_without};

#[test]
fn arbitrary_self_types_is_needed_by_the_workqueue() {
    let root = project_root();
    let output = std::process::Command::new(current_rustc())
        .arg("-vV")
        .output()
        .unwrap();
    let version =
        xtask::version::parse_verbose_version(&String::from_utf8_lossy(&output.stdout)).unwrap();
    let rustc = Rustc {
        path: current_rustc(),
        env: Vec::new(),
        loader: None,
        release: version.release,
    };
    let input = read_crate_root(&root.join("kernel-shim/src/lib.rs")).unwrap();
    let decider = Decider::new(&input, Vec::new(), kconfig::built_in());
    let enabled: Vec<&str> = input
        .entries
        .iter()
        .filter(|entry| decider.active_on(entry.condition.as_ref(), rustc.release) == Some(true))
        .map(|entry| entry.name.as_str())
        .collect();
    assert!(enabled.contains(&"arbitrary_self_types"), "{enabled:?}");
    let cfgs: Vec<&str> = derived_cfgs(rustc.release, true).collect();
    let out_dir = scratch_dir("usage-arbitrary-self-types");
    let invocation = shim_without(
        &rustc,
        &root,
        &cfgs,
        &enabled,
        "arbitrary_self_types",
        &out_dir,
    );
    let result = process::run(&invocation, process::DEFAULT_TIMEOUT).unwrap();
    assert!(
        !result.success(),
        "without the feature the shim must not build"
    );
    assert!(result.stderr.contains("E0725"), "{}", result.stderr);
    let places = read_places(&result.stderr);
    // The catalog's shim item for the feature is `sync::workqueue`.
    assert_eq!(
        feature("arbitrary_self_types").unwrap().shim_item,
        "sync::workqueue"
    );
    assert!(
        places
            .iter()
            .any(|place| place.file.ends_with("kernel-shim/src/sync/workqueue.rs")),
        "{places:?}"
    );
}
