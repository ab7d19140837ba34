// SPDX-License-Identifier: GPL-2.0
//! What `cargo xtask kernel` would do, without doing it (`--dry-run`): the trees to fetch and
//! unpack, the pairs to build and the cells already cached (found by the run's own keys), with
//! time and disk estimates from the step times kept under `target/kernel/results/`, else the
//! defaults below; with `--boot`, the boots too ([`boot`]). Everything here only reads.

mod boot;

use crate::catalog::Release;
use crate::kernel::boot::result_entry as boot_result_entry;
use crate::kernel::build::{BuildDir, Built, Real};
use crate::kernel::results::{library, read_result, result_entry, Library};
use crate::kernel::run::Found;
use crate::kernel::stamps::{self, Facts, TreeKey};
use crate::kernel::tools::Toolbox;
use crate::kernel::{rules, trees};
use crate::run::cache::compiler_identity;
use crate::toolchains::extracted::Marker;
use crate::toolchains::pins::{TreePin, TreeSource};
use std::fmt::Write;
use std::path::Path;

/// What a tree costs when nothing measured says otherwise (BENCHMARKS.md, "Real kernel trees",
/// a 2-core machine): a `linux-source` `.deb` of 139-166 MB fetched in 2-6 s and unpacked to
/// 1.5-1.8 GB in 17-62 s.
const TREE_DEB_MB: u64 = 150;
const TREE_UNPACKED_MB: u64 = 1700;
const TREE_SECONDS: (f64, f64) = (20.0, 65.0);
/// A build directory holds 104-223 MB (defconfig and the Rust objects).
const BUILD_DIR_MB: u64 = 220;
/// A Debian compiler's whole `library/`, extracted once for `RUST_LIB_SRC`: 44-81 MB.
const LIBRARY_MB: u64 = 80;
/// A tree's first pair (defconfig, olddefconfig, prepare, rust/ and samples) and a compiler
/// switch in a prepared tree, in seconds.
const FIRST_PAIR_SECONDS: (f64, f64) = (90.0, 120.0);
const SWITCH_SECONDS: (f64, f64) = (30.0, 80.0);

/// The plan of a kernel run, as text: what it would fetch, build and read from the cache, and
/// what that would cost.
pub(crate) fn plan(
    dir: &Path,
    pins: &[TreePin],
    compilers: &[Found],
    use_cache: bool,
    with_boot: bool,
) -> String {
    let mut booting = with_boot.then(boot::BootPlan::find);
    let mut toolbox = Toolbox::find(dir);
    let (mut tree_lines, mut pair_lines) = (String::new(), String::new());
    let (mut to_provide, mut to_extract, mut first_pairs, mut switches, mut cached) =
        (0, Vec::new(), 0, 0, 0);
    let mut missing_tools = Vec::new();
    let results = dir.join("results");
    for pin in pins {
        let step = tree_step(dir, pin);
        let (there, tree_line) = match &step {
            TreeStep::There(there) => (Some(&**there), format!("there ({})", there.0.identity)),
            TreeStep::Provide(package) => {
                to_provide += 1;
                (None, format!("fetch and unpack {package}"))
            }
            TreeStep::Unusable(why) => (None, format!("cannot be used: {why}")),
        };
        let _ = writeln!(tree_lines, "  {}: {tree_line}", pin.id);
        let tools = match there {
            Some((_, facts, _)) => toolbox.for_tree(facts),
            None => toolbox.today.as_ref(),
        };
        // Only the run's first pair of a tree can be its first build, and only where its build
        // directory is not there for this tree and these tools.
        let mut first = true;
        let mut boot_first = match (there, tools) {
            (Some((tree, ..)), Ok(tools)) => {
                let tools = crate::kernel::boot::marker_tools(&tools.identity);
                !BuildDir::is_ready(&dir.join("boot").join(&pin.id), &tree.identity, &tools)
            }
            _ => true,
        };
        for found in compilers {
            let mut boot_entry = None;
            // What happens to the pair, and whether it boots ("if it passes, " for a build).
            let (mut what, boots) = match (&step, &found.compiler, tools) {
                (TreeStep::Unusable(why), _, _) => (format!("not run: the tree: {why}"), None),
                (_, Err(why), _) => (format!("not run: {why}"), None),
                (_, _, Err(missing)) => {
                    crate::push_once(&mut missing_tools, format!("{missing:#}"));
                    let what = "not run: the build tools are missing (below)";
                    (what.to_owned(), None)
                }
                (_, Ok((toolchain, version)), Ok(tools)) => {
                    let library = library(dir, toolchain, version);
                    let built = match (&library, there) {
                        (Library::There(library), Some((_, _, tree_key))) if use_cache => {
                            let compiler = compiler_identity(&toolchain.launch, version);
                            boot_entry = booting.as_ref().map(|booting| {
                                let (keys, qemu) = ((tree_key.0, compiler.0), &booting.qemu);
                                let ids = (library.as_str(), tools.identity.as_str());
                                boot_result_entry(&results, keys, ids, qemu, booting.accel)
                            });
                            let tools = &tools.identity;
                            read_result(&result_entry(
                                &results, *tree_key, compiler, library, tools,
                            ))
                        }
                        _ => None,
                    };
                    // The run extracts a Debian compiler's library before it asks the cache.
                    if let Library::ToExtract(library) = &library {
                        crate::push_once(&mut to_extract, library.clone());
                    }
                    let minimum =
                        there.and_then(|(_, facts, _)| Release::parse(&facts.minimum_rustc));
                    match (library, built, minimum) {
                        (Library::Unavailable(why), _, _) => {
                            (format!("not run: RUST_LIB_SRC: {why}"), None)
                        }
                        (_, Some(built), _) => {
                            cached += 1;
                            let boots = (built.real == Real::Pass).then_some("");
                            (format!("cached: {}", built.real.word()), boots)
                        }
                        (_, None, Some(minimum)) if version.release < minimum => (
                            format!(
                                "refused by `make rustavailable` (the tree's minimum is \
                                 {minimum})"
                            ),
                            None,
                        ),
                        _ => {
                            let (count, what) = if std::mem::take(&mut first)
                                && !there.is_some_and(|(tree, ..)| {
                                    let build = dir.join("build").join(&pin.id);
                                    BuildDir::is_ready(&build, &tree.identity, &tools.identity)
                                }) {
                                (
                                    &mut first_pairs,
                                    "the tree's first pair: defconfig and prepare",
                                )
                            } else {
                                (&mut switches, "a compiler switch in the prepared tree")
                            };
                            *count += 1;
                            (format!("build ({what})"), Some("if it passes, "))
                        }
                    }
                }
            };
            if let (Some(booting), Some(passes)) = (&mut booting, boots) {
                let boot = booting.pair(boot_entry, &mut boot_first);
                what = format!("{what}; {passes}{boot}");
            }
            let _ = writeln!(pair_lines, "  {} with {}: {what}", pin.id, found.id);
        }
    }
    let mut out = format!(
        "kernel --dry-run: nothing is fetched, unpacked, built, booted or written.\n\ntrees:\n\
         {tree_lines}\npairs:\n{pair_lines}"
    );
    for missing in &missing_tools {
        let _ = writeln!(out, "\nthe build tools are missing: {missing}");
    }
    if let Some(booting) = &booting {
        let _ = writeln!(out, "\n{}", booting.header());
    }
    let mut estimate = Estimate {
        lines: Vec::new(),
        seconds: times(TREE_SECONDS, to_provide),
    };
    if to_provide > 0 {
        estimate.lines.push(format!(
            "{to_provide} tree(s) to fetch and unpack: {} (default: a .deb of ~{TREE_DEB_MB} MB, \
             ~{:.1} GB unpacked, {}-{} s each)",
            seconds(estimate.seconds),
            TREE_UNPACKED_MB as f64 / 1000.0,
            TREE_SECONDS.0,
            TREE_SECONDS.1
        ));
    }
    let [first, switch] = kept_times(dir);
    estimate.row(first_pairs, "first pair(s)", first, f64::round);
    estimate.row(switches, "compiler switch(es)", switch, f64::round);
    if cached > 0 {
        estimate.lines.push(format!(
            "{cached} cell(s) cached: read back, only their predictions run"
        ));
    }
    let boot_disk = booting
        .as_ref()
        .map_or(0, |booting| booting.estimate(dir, &mut estimate));
    let disk = to_provide as u64 * (TREE_DEB_MB + TREE_UNPACKED_MB)
        + first_pairs as u64 * BUILD_DIR_MB
        + to_extract.len() as u64 * LIBRARY_MB
        + boot_disk;
    let _ = writeln!(
        out,
        "\nestimate (-j 2 on 2 cores; a busier machine takes longer):"
    );
    for line in &estimate.lines {
        let _ = writeln!(out, "  {line}");
    }
    let boot_dirs = match booting {
        Some(_) => format!(", boot directories {:.1} GB", boot_disk as f64 / 1000.0),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "  in all: {}; disk: about {:.1} GB more ({to_provide} tree(s), {first_pairs} new build \
         director(ies) of ~{BUILD_DIR_MB} MB, {} compiler library/ of ~{LIBRARY_MB} MB{boot_dirs})",
        seconds(estimate.seconds),
        disk as f64 / 1000.0,
        to_extract.len()
    );
    out
}

/// The estimate's lines, and the (low, high) seconds they add up to.
struct Estimate {
    lines: Vec<String>,
    seconds: (f64, f64),
}

impl Estimate {
    /// Adds the line for `count` steps of `each` (low, high) seconds, said to come `from`
    /// somewhere and rounded by `round`, and their time; nothing when `count` is 0.
    fn row(&mut self, count: usize, what: &str, (each, from): Kept, round: fn(f64) -> f64) {
        if count == 0 {
            return;
        }
        let range = times(each, count);
        self.seconds = (self.seconds.0 + range.0, self.seconds.1 + range.1);
        self.lines.push(format!(
            "{count} {what}: {} ({}-{} s each, {from})",
            seconds(range),
            round(each.0),
            round(each.1)
        ));
    }
}

/// `count` times a (low, high) range.
fn times((low, high): (f64, f64), count: usize) -> (f64, f64) {
    (low * count as f64, high * count as f64)
}

/// "2-4 min", or seconds under two minutes.
fn seconds((low, high): (f64, f64)) -> String {
    if high < 120.0 {
        format!("{:.0}-{:.0} s", low, high)
    } else {
        format!("{:.0}-{:.0} min", low / 60.0, (high / 60.0).ceil())
    }
}

/// What happens to one tree: there (unpacked, or a local checkout), with its facts and key as
/// the run reads them (nothing kept); to fetch and unpack; or it cannot be used.
enum TreeStep {
    There(Box<(trees::Tree, Facts, TreeKey)>),
    Provide(String),
    Unusable(String),
}

fn tree_step(dir: &Path, pin: &TreePin) -> TreeStep {
    let there = |tree: trees::Tree| match stamps::facts(&dir.join("results"), &tree, true, false) {
        Ok((facts, key, _)) => TreeStep::There(Box::new((tree, facts, key))),
        Err(error) => TreeStep::Unusable(format!("{error:#}")),
    };
    match &pin.source {
        TreeSource::Path(path) => match std::fs::canonicalize(path) {
            Ok(root) => match trees::check_kernel_tree(&root) {
                Ok(()) => there(trees::Tree::local(root)),
                Err(error) => TreeStep::Unusable(format!("{error:#}")),
            },
            Err(error) => TreeStep::Unusable(format!("{}: {error}", path.display())),
        },
        TreeSource::Debian(source) => {
            let prefix = rules::pinned::debian_prefix(dir, source);
            let marker = Marker::read(&prefix);
            let tree =
                marker.and_then(|marker| trees::Tree::unpacked(&prefix, &marker, (0.0, 0.0, 0)));
            match tree.filter(|tree| trees::check_kernel_tree(&tree.root).is_ok()) {
                Some(tree) => there(tree),
                None => TreeStep::Provide(source.to_string()),
            }
        }
    }
}

/// The range of `times`, said to come `from` somewhere, else `default`.
fn kept_range(times: &[f64], from: &'static str, default: (f64, f64)) -> Kept {
    let Some(low) = times.iter().copied().reduce(f64::min) else {
        return (default, "default");
    };
    let high = times.iter().copied().fold(0.0, f64::max);
    ((low, high), from)
}

/// (low, high) seconds, and where they come from.
type Kept = ((f64, f64), &'static str);

/// The seconds of a first pair and of a switch, from the step times kept with earlier
/// results, else the defaults.
fn kept_times(dir: &Path) -> [Kept; 2] {
    let entries = std::fs::read_dir(dir.join("results")).into_iter().flatten();
    // A refused cell ran only `make rustavailable`: it says nothing of a build's cost.
    let built = (entries
        .flatten()
        .filter_map(|entry| read_result(&entry.path())))
    .filter(|built| built.steps.len() >= 2);
    let (first, switch): (Vec<Built>, Vec<Built>) =
        built.partition(|built| built.steps.iter().any(|(step, _)| step == "defconfig"));
    let range = |built: Vec<Built>, default| {
        let totals = built
            .iter()
            .map(|built| built.steps.iter().map(|(_, s)| s).sum());
        let from = "from the step times kept in target/kernel/results/";
        kept_range(&totals.collect::<Vec<f64>>(), from, default)
    };
    [
        range(first, FIRST_PAIR_SECONDS),
        range(switch, SWITCH_SECONDS),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::support::scratch_dir;
    use crate::util::json;

    fn result(real: Real, steps: &[(&str, f64)]) -> String {
        let mut built = Built::not_run(String::new());
        built.real = real;
        built.steps = steps
            .iter()
            .map(|(step, seconds)| (step.to_string(), *seconds))
            .collect();
        json::to_value(&built).to_string()
    }

    /// The estimate says where its figures come from: the kept step times of first pairs and
    /// of switches apart, a refusal's lone `rustavailable` left out, else the defaults.
    #[test]
    fn estimates_come_from_kept_step_times_else_the_defaults() {
        let dir = scratch_dir("kernel-plan");
        let missing = TreePin {
            id: "gone".into(),
            source: TreeSource::Path(dir.join("no-such-tree")),
            note: None,
            line: 0,
        };
        let compilers = [Found {
            id: "1.85.0".into(),
            compiler: Err("not installed: here is how".into()),
        }];
        let text = plan(
            &dir,
            std::slice::from_ref(&missing),
            &compilers,
            true,
            false,
        );
        assert!(text.contains("\n  gone: cannot be used: "), "{text}");
        assert!(
            text.contains("\n  gone with 1.85.0: not run: the tree: "),
            "{text}"
        );
        assert!(
            text.contains("in all: 0-0 s; disk: about 0.0 GB more"),
            "{text}"
        );
        assert_eq!(kept_times(&dir)[0], (FIRST_PAIR_SECONDS, "default"));

        let results = dir.join("results");
        std::fs::create_dir_all(&results).unwrap();
        let first = [
            ("rustavailable", 0.5),
            ("defconfig", 10.0),
            ("prepare", 89.5),
        ];
        std::fs::write(results.join("a.json"), result(Real::Pass, &first)).unwrap();
        let switch = [("rustavailable", 0.5), ("prepare", 40.0)];
        std::fs::write(results.join("b.json"), result(Real::Fail, &switch)).unwrap();
        let switch = [("rustavailable", 0.5), ("prepare", 60.0)];
        std::fs::write(results.join("c.json"), result(Real::Pass, &switch)).unwrap();
        let refused = [("rustavailable", 0.3)];
        std::fs::write(results.join("d.json"), result(Real::Refused, &refused)).unwrap();
        let never = result(Real::NotRun, &[("rustavailable", 0.5), ("prepare", 999.0)]);
        std::fs::write(results.join("e.json"), never).unwrap();
        let [first, switch] = kept_times(&dir);
        assert_eq!(first.0, (100.0, 100.0));
        assert_eq!(switch.0, (40.5, 60.5));

        // A pair's times are rounded half away from zero, a boot's half to even (as `{:.0}`).
        let mut estimate = Estimate {
            lines: Vec::new(),
            seconds: (0.0, 0.0),
        };
        estimate.row(1, "pair(s)", ((0.5, 2.5), "kept"), f64::round);
        estimate.row(2, "boot(s)", ((0.5, 2.5), "kept"), f64::round_ties_even);
        assert_eq!(
            estimate.lines,
            [
                "1 pair(s): 0-2 s (1-3 s each, kept)",
                "2 boot(s): 1-5 s (0-2 s each, kept)"
            ]
        );
        assert_eq!(estimate.seconds, (1.5, 7.5));
    }
}
