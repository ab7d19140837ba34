// SPDX-License-Identifier: GPL-2.0
//! `msrv` through the binary on real compilers: the shim and a real crate from the registry
//! (itoa, which the xtask itself depends on, so its sources are on every machine that built
//! it), each on Debian's 1.63.0, 1.78.0 and 1.85.0 with a pin between them that nothing
//! satisfies; and the input it refuses.

use crate::support::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const PROVISION: &str = "run `cargo xtask toolchains install --no-rustup` first";

/// A pin file of bare releases, which the provisioned Debian compilers satisfy, and 1.80.0,
/// which none does; with `RUSTUP_HOME` empty, no rustup toolchain satisfies any of them.
fn pins(dir: &Path) -> PathBuf {
    let mut text = String::new();
    for (id, role) in [
        ("1.63.0", "feature"),
        ("1.78.0", "minimum"),
        ("1.80.0", "feature"),
        ("1.85.0", "feature"),
    ] {
        text.push_str(&format!(
            "[[pin]]\nid = \"{id}\"\nrelease = \"{id}\"\nrole = \"{role}\"\n\n"
        ));
    }
    let path = dir.join("pins.toml");
    std::fs::write(&path, text).unwrap();
    std::fs::create_dir_all(dir.join("rustup")).unwrap();
    path
}

fn msrv(dir: &Path, args: &[&str]) -> Run {
    let pins = pins(dir);
    xtask(&["msrv", "--pins", path_str(&pins), "-j", "2"])
        .args(args)
        .env("RUSTUP_HOME", dir.join("rustup"))
        .run_within(Duration::from_secs(600))
}

/// The row of `id` in the answer's JSON; the Debian compilers must be there.
fn toolchain<'a>(run: &Run, answer: &'a Value, id: &str) -> &'a Value {
    let rows = answer["toolchains"].as_array().unwrap();
    let row = rows
        .iter()
        .find(|row| row["id"] == id)
        .unwrap_or_else(|| run.fail(&format!("no row {id}")));
    if id != "1.80.0" && row["available"] != "yes" {
        run.fail(&format!(
            "Debian's {id} is not provisioned here: {PROVISION}"
        ));
    }
    row
}

/// Both modes answer 1.78.0 to 1.85.0, with 1.80.0 missing between them and 1.63.0 failing.
#[track_caller]
fn answers_1_78_to_1_85(run: &Run, answer: &Value) {
    for (index, mode) in ["stable", "kernel"].iter().enumerate() {
        let said = &answer["modes"][index];
        run.check(said["mode"] == *mode, "stable mode first, then kernel mode");
        run.check(
            said["oldest"] == "1.78.0" && said["newest"] == "1.85.0",
            &format!("{mode}: oldest 1.78.0, newest 1.85.0"),
        );
        run.check(
            said["unavailable_between"] == serde_json::json!(["1.80.0"]),
            &format!("{mode}: 1.80.0 is not available, between the two"),
        );
        run.check(
            toolchain(run, answer, "1.63.0")[mode]["outcome"] == "fails",
            &format!("{mode}: 1.63.0 fails"),
        );
    }
    let ids: Vec<&str> = answer["toolchains"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|row| row["id"].as_str())
        .collect();
    run.check(
        ids == ["1.63.0", "1.78.0", "1.80.0", "1.85.0"],
        "the rows in release order",
    );
    run.check(
        toolchain(run, answer, "1.80.0")["available"] == "missing",
        "1.80.0 is missing",
    );
}

#[test]
fn the_shim_answer_comes_from_the_matrix_steps_and_then_from_their_cache() {
    let _turn = checkouts_lock();
    let dir = scratch_dir("msrv-shim");
    let run = msrv(&dir, &["--format", "json"]);
    run.success();
    let answer = run.json();
    answers_1_78_to_1_85(&run, &answer);
    // 1.78.0 gates more of what the shim enables in kernel mode than 1.85.0 does.
    let gated = |id: &str| {
        toolchain(&run, &answer, id)["bootstrap_for"]
            .as_array()
            .unwrap()
            .len()
    };
    run.check(
        gated("1.78.0") > gated("1.85.0") && gated("1.85.0") > 0,
        "1.78.0 needs RUSTC_BOOTSTRAP for more features than 1.85.0, which needs it for some",
    );
    // Asked again, every step is the cache's and the answer the same, in words now.
    let again = msrv(&dir, &[]);
    again
        .success()
        .stdout_has("  stable mode: oldest 1.78.0, newest 1.85.0")
        .stdout_has("    not available between them: 1.80.0")
        .stderr_has("9 steps on 3 toolchain(s)")
        .stderr_has("(9 from the cache");
    let markdown = msrv(&dir, &["--format", "markdown"]);
    markdown
        .success()
        .stdout_has("## Which compiler builds the shim")
        .stdout_has("- **kernel mode**: oldest 1.78.0");
}

/// The sources of itoa, as the registry gave them to this checkout's Cargo.
fn itoa_root() -> PathBuf {
    let output = Command::new(cargo())
        .args(["metadata", "--format-version", "1", "--offline"])
        .current_dir(root())
        .run_within(Duration::from_secs(120));
    output.success();
    let metadata: Value = output.json();
    let package = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|package| package["name"] == "itoa")
        .unwrap_or_else(|| output.fail("the xtask no longer depends on itoa"));
    let manifest = Path::new(package["manifest_path"].as_str().unwrap());
    manifest.parent().unwrap().join("src/lib.rs")
}

#[test]
fn a_crate_root_from_the_registry_is_probed_and_compiled_by_each_compiler() {
    let dir = scratch_dir("msrv-root");
    let root = itoa_root();
    let run = msrv(&dir, &["--root", path_str(&root), "--format", "json"]);
    run.success();
    let answer = run.json();
    run.check(answer["kind"] == "crate-root", "a crate root");
    answers_1_78_to_1_85(&run, &answer);
    // itoa 1.0.19 says `rust-version = "1.68"`, and calls `ilog10` (stable from 1.67).
    let failed = &toolchain(&run, &answer, "1.63.0")["stable"]["detail"];
    run.check(
        failed
            .as_str()
            .is_some_and(|error| error.contains("ilog10")),
        "1.63.0 fails on ilog10",
    );
}

#[test]
fn what_msrv_refuses() {
    let dir = scratch_dir("msrv-refused");
    let missing = dir.join("nothing-here");
    msrv(&dir, &["--root", path_str(&missing)]).refused("no such file or directory");
    msrv(&dir, &["--tree", path_str(&missing)]).refused("no such tree pin");
    msrv(&dir, &["--tree", "nosuch"]).refused("no such tree pin");
    msrv(&dir, &["--root", "x", "--tree", "y"]).refused("not both");
    // A pinned tree that `kernel` never unpacked: nothing to read, and nothing is fetched.
    let pins = pins(&dir);
    let mut text = std::fs::read_to_string(&pins).unwrap();
    text.push_str("[[tree]]\nid = \"9.9\"\ndebian = \"sid:linux-source-9.9=9.9.1-1\"\n");
    std::fs::write(&pins, text).unwrap();
    let never = xtask(&["msrv", "--pins", path_str(&pins), "--tree", "9.9"]).run();
    never.refused("--tree 9.9: not unpacked yet, so never built here");
    msrv(&dir, &["--format", "yaml"]).refused("--format must be");
    let help = xtask(&["msrv", "--help"]).run();
    help.success()
        .stdout_has("Usage: cargo xtask msrv [FLAGS]")
        .stdout_has("Exit status: 0 an answer was found; 1 no compiler here builds it");
}

/// A relative `--toolchain` path is from the project root for `msrv --root` and `audit` too, as
/// for `matrix`, wherever the command starts: both took it from the working directory, and
/// called the compiler broken ("does not exist") where `matrix` found it.
#[test]
fn a_relative_toolchain_path_is_from_the_project_root_for_msrv_root_and_audit() {
    let dir = scratch_dir("msrv-relative-toolchain");
    let rustc = wrapper(&dir.join("rustc"), verbose_version(), "");
    let relative = path_str(rustc.strip_prefix(root()).unwrap());
    let lib = dir.join("lib.rs");
    std::fs::write(&lib, "pub fn answer() -> u32 {\n    42\n}\n").unwrap();
    let run = |args: &[&str]| {
        xtask(args)
            .args(["--toolchain", relative, "--format", "json"])
            .current_dir(&dir)
            .run_within(Duration::from_secs(300))
    };
    let msrv = run(&["msrv", "--root", path_str(&lib)]);
    let answer = msrv.success().json();
    let available = &answer["toolchains"][0]["available"];
    msrv.check(available == "yes", "msrv --root found the compiler");
    let audit = run(&["audit", path_str(&lib)]);
    let report = audit.json();
    let verdict = &report["toolchains"][0]["verdict"];
    audit.check(verdict != "broken", "audit found the compiler");
}
