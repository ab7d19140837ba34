// SPDX-License-Identifier: GPL-2.0
//! Where the shim and the examples use each feature, as the provisioned compilers say it
//! (`cargo xtask usage`): each catalog feature's shim item is among the places a compiler on
//! which the feature is gated reports, and each example uses the feature it teaches.

use crate::catalog::{feature, FEATURES};
use crate::commands::usage::run_usage;
use crate::features::places::tests::in_shim_item;
use crate::features::places::UsedPlace;
use crate::project_root;
use crate::report::usage::{UsageCell, UsageReport};
use crate::run::plan::{Layout, Selection};

/// The compilers to ask: the pins found here, or the specs (rustup names, paths to a rustc or a
/// wrapper) that `KSHIM_USAGE_TOOLCHAINS` lists, comma-separated, to reach compilers on which
/// more features are still gated (an unpacked 1.78.0 gates all but one).
fn selection() -> Selection {
    let toolchains = std::env::var("KSHIM_USAGE_TOOLCHAINS")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|spec| !spec.is_empty())
        .map(String::from)
        .collect();
    Selection {
        toolchains,
        ..Selection::default()
    }
}

fn usage_report() -> UsageReport {
    let layout = Layout::new(&project_root());
    let settings = crate::run::driver::Settings {
        jobs: std::thread::available_parallelism().map_or(1, usize::from),
        timeout: crate::util::process::DEFAULT_TIMEOUT,
        use_cache: true,
        progress: crate::util::output::Verbosity::Normal,
    };
    run_usage(&layout, &selection(), settings).expect("the usage run")
}

fn place_text(place: &UsedPlace) -> String {
    format!(
        "{}:{}:{} (items {:?}, macros {:?}, compiling {})",
        place.at.file, place.at.line, place.at.column, place.items, place.macros, place.target
    )
}

/// Whether `a::b::N` names a module of the shim (`sync::workqueue`).
fn is_module(shim_item: &str) -> bool {
    let path = shim_item.replace("::", "/");
    let source = project_root().join("kernel-shim/src");
    source.join(format!("{path}.rs")).exists() || source.join(&path).join("mod.rs").exists()
}

#[test]
fn shim_items_and_examples_are_where_the_compilers_say() {
    let _turn = crate::tests::support::the_checkouts_lock();
    let report = usage_report();
    let mut failures = Vec::new();
    let mut checked = Vec::new();
    let mut unchecked = Vec::new();
    for row in &report.features {
        let catalog = feature(&row.name).expect("a catalog feature");
        let module = is_module(catalog.shim_item);
        let mut gated_on = Vec::new();
        for (toolchain, cell) in report.toolchains.iter().zip(&row.cells) {
            let places = match cell {
                UsageCell::Used(places) => places,
                UsageCell::Unused(_) => {
                    failures.push(format!(
                        "{} on {}: enabled and gated, but the compiler reports no place at all \
                         (the shim item is `{}`)",
                        row.name, toolchain.label, catalog.shim_item
                    ));
                    continue;
                }
                UsageCell::Failed(error, _) => {
                    failures.push(format!("{} on {}: {error}", row.name, toolchain.label));
                    continue;
                }
                _ => continue,
            };
            gated_on.push(toolchain.label.clone());
            let in_item = places.iter().any(|place| {
                let Some(relative) = place.at.file.strip_prefix("kernel-shim/src/") else {
                    return false;
                };
                let names: Vec<&str> = place
                    .items
                    .iter()
                    .chain(&place.macros)
                    .map(String::as_str)
                    .collect();
                in_shim_item(catalog.shim_item, module, relative, &names)
            });
            if !in_item {
                let found: Vec<String> = places.iter().map(place_text).collect();
                failures.push(format!(
                    "{} on {}: the shim item `{}` is not among the places the compiler \
                     reports:\n    {}",
                    row.name,
                    toolchain.label,
                    catalog.shim_item,
                    found.join("\n    ")
                ));
            }
            // An example can only use, under the kernel's -Zallow-features, what that list
            // allows; the others it uses through the shim's item (checked below).
            if catalog.kernel_use.allowed_outside_rust()
                && !places.iter().any(|place| place.target == catalog.example)
            {
                let found: Vec<String> = places.iter().map(place_text).collect();
                failures.push(format!(
                    "{} on {}: the example {} that teaches it does not use it; the places \
                     reported:\n    {}",
                    row.name,
                    toolchain.label,
                    catalog.example,
                    found.join("\n    ")
                ));
            }
        }
        if gated_on.is_empty() {
            unchecked.push(row.name.as_str());
        } else {
            checked.push(format!("{} ({})", row.name, gated_on.join(", ")));
        }
    }
    // The kernel's -Zallow-features does not let an example enable a feature of the kernel
    // crate's own list, so such an example teaches it through the shim item that uses it, or
    // in its stabilized form under the catalog's cfg: it must name one or the other in code.
    for catalog in FEATURES
        .iter()
        .filter(|feature| !feature.kernel_use.allowed_outside_rust())
    {
        let path = project_root().join(format!("examples/{}.rs", catalog.example));
        let source = std::fs::read_to_string(&path).unwrap();
        let item = catalog
            .shim_item
            .rsplit("::")
            .next()
            .unwrap()
            .trim_end_matches('!');
        let cfg = catalog.cfg.map(|cfg| cfg.name);
        let uses = source
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .flat_map(|line| line.split(|c: char| !(c.is_alphanumeric() || c == '_')))
            .any(|word| word == item || Some(word) == cfg);
        if !uses {
            failures.push(format!(
                "{}: the example {} names neither `{item}`, the shim item that uses the \
                 feature, nor {}, the cfg of its stabilized form",
                catalog.name,
                path.display(),
                cfg.map_or("(no cfg)".to_string(), |cfg| format!("`{cfg}`"))
            ));
        }
    }
    eprintln!("checked against the compilers: {}", checked.join("; "));
    if !unchecked.is_empty() {
        eprintln!(
            "not gated on any compiler here, so not checked: {} (set KSHIM_USAGE_TOOLCHAINS to \
             add an older compiler)",
            unchecked.join(", ")
        );
    }
    assert!(
        !checked.is_empty(),
        "no feature is gated on any compiler found here, so nothing was checked"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `audit --usage --rustc-args FILE`, the way a Kbuild user would run it: the shim's kernel-mode
/// command line in a rustc argument file, on the compiler running these tests.
#[test]
fn audit_usage_reads_places_from_a_rustc_argument_file() {
    use crate::commands::audit::compile::Compile;
    use crate::commands::audit::rustc_args::read_rustc_args;
    use crate::commands::audit::{input::read_crate_root, run_audit, Options};
    use crate::run::plan::{mode_cfgs, Mode, Output, Rustc};

    let root = project_root();
    let rustc_path = crate::tests::support::current_rustc();
    let output = std::process::Command::new(&rustc_path)
        .arg("-vV")
        .output()
        .unwrap();
    let version =
        crate::toolchains::version::parse_verbose_version(&String::from_utf8_lossy(&output.stdout))
            .unwrap();
    let rustc = Rustc {
        launch: crate::toolchains::loader::Launch {
            rustc: rustc_path.clone(),
            env: Vec::new(),
            loader: None,
        },
        release: version.release,
    };
    let scratch = crate::tests::support::scratch_dir("audit-usage-argfile");
    let cfgs = mode_cfgs(rustc.release, Mode::Kernel, None);
    let shim = rustc.shim(&root, Mode::Kernel, &cfgs, Output::Directory(&scratch));
    let args: Vec<String> = shim
        .args
        .iter()
        .map(|arg| arg.replace("--emit=link", "--emit=metadata"))
        .collect();
    let argfile = scratch.join("kernel.args");
    std::fs::write(&argfile, args.join("\n")).unwrap();

    let mut options = Options::new(read_crate_root(&root.join("kernel-shim/src/lib.rs")).unwrap());
    options.toolchains = vec![rustc_path.to_string_lossy().into_owned()];
    options.scratch = scratch.join("audit");
    let report = run_audit(&options).unwrap();
    let compile = Compile::ArgFile(read_rustc_args(&argfile).unwrap().0);
    let settings = crate::run::driver::Settings {
        jobs: 2,
        timeout: crate::util::process::DEFAULT_TIMEOUT,
        use_cache: true,
        progress: crate::util::output::Verbosity::Quiet,
    };
    let usage = report.usage(&compile, settings).unwrap();
    let row = usage
        .features
        .iter()
        .find(|feature| feature.name == "arbitrary_self_types")
        .unwrap();
    let UsageCell::Used(places) = &row.cells[0] else {
        panic!(
            "arbitrary_self_types on {}: {:?}",
            version.release, row.cells[0]
        );
    };
    // The gated receiver: the line of `fn run(self: ArcBorrow<'_, Self>)` in the shim.
    let workqueue =
        std::fs::read_to_string(root.join("kernel-shim/src/sync/workqueue.rs")).unwrap();
    let receiver: u64 = 1 + workqueue
        .lines()
        .position(|line| line.trim() == "fn run(self: ArcBorrow<'_, Self>);")
        .expect("workqueue.rs declares WorkItem::run with an ArcBorrow receiver")
        as u64;
    assert!(
        places.iter().any(
            |place| place.at.file.ends_with("kernel-shim/src/sync/workqueue.rs")
                && place.at.line == receiver
                && place.items.last().map(String::as_str) == Some("run")
        ),
        "{:?}",
        places.iter().map(place_text).collect::<Vec<_>>()
    );
}
