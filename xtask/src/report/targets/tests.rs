// SPDX-License-Identifier: GPL-2.0
//! Tests of the target axis: what each cell is predicted to do, its JSON, and the checks of a
//! report read back.

use super::*;
use crate::catalog::Release;
use crate::report::Report;
use crate::targets::kernel_target;
use crate::toolchains::discovery::SourceKind;
use crate::toolchains::library_sources::LibrarySources;
use crate::util::json;
use std::path::PathBuf;

fn column(id: &str, release: &str, verdict: ToolchainVerdict) -> ToolchainEntry {
    ToolchainEntry {
        id: id.into(),
        spec: format!("debian:{id}"),
        source: Some(SourceKind::Debian),
        pin: Some(id.into()),
        rustc: Some(format!("/toolchains/{id}/usr/bin/rustc")),
        release_text: Some(release.into()),
        release: Release::parse(release),
        channel: Some("stable".into()),
        commit_date: None,
        host: Some("x86_64-unknown-linux-gnu".into()),
        verdict,
    }
}

fn sources() -> Result<LibrarySources, String> {
    Ok(LibrarySources {
        library: PathBuf::from("/sources/library"),
        identity: "rust-web-src=1.78.0+dfsg1-2~deb11u3 (bullseye)".into(),
        core_edition: "2021".into(),
        compiler_builtins: None,
    })
}

/// The target axis of one toolchain on `triples` where nothing ran but the target list, which
/// listed every kernel target.
fn predicted(
    column: ToolchainEntry,
    sources: Result<LibrarySources, String>,
    triples: &[&str],
    not_run: Option<&str>,
    llvm: Option<u32>,
) -> TargetAxis {
    let targets: Vec<&'static KernelTarget> = triples
        .iter()
        .map(|triple| kernel_target(triple).unwrap())
        .collect();
    let listed = Step::new(0, Kind::Targets, "targets", None, Vec::new());
    let result = StepResult {
        outcome: Outcome::Pass,
        targets: Some(
            crate::targets::KERNEL_TARGETS
                .iter()
                .map(|target| target.triple.to_string())
                .collect(),
        ),
        ..StepResult::skipped(String::new())
    };
    let not_run = vec![not_run.map(String::from); targets.len()];
    assemble_target_axis(
        &[column],
        &[listed],
        &[result],
        &PlannedTargetAxis {
            targets: &targets,
            library_sources: &[Some(sources)],
            not_run: &not_run,
            llvm: &[llvm],
        },
    )
}

fn expected(targets: &TargetAxis, target: &str, mode: Option<Mode>) -> Outcome {
    targets
        .cells
        .iter()
        .find(|cell| cell.stage == target && cell.mode == mode)
        .unwrap()
        .expected
}

#[test]
fn llvm_16_on_loongarch64_is_predicted_to_fail_where_there_are_sites() {
    let targets = predicted(
        column("1.78.0", "1.78.0", ToolchainVerdict::Ok),
        sources(),
        &["loongarch64-unknown-none"],
        None,
        Some(16),
    );
    assert_eq!(targets.known.len(), 1);
    assert!(targets.known[0].ok());
    assert_eq!(targets.cells.len(), 8);
    assert_eq!(expected(&targets, "core", None), Outcome::Pass);
    assert_eq!(
        expected(&targets, "kernel", Some(Mode::Kernel)),
        Outcome::Pass
    );
    assert_eq!(
        expected(&targets, "sites", Some(Mode::Kernel)),
        Outcome::Fail
    );
    assert_eq!(
        expected(&targets, "program", Some(Mode::Kernel)),
        Outcome::Fail
    );
    // 1.78.0 has no `asm goto` in stable mode, so no sites to write wrongly.
    assert_eq!(
        expected(&targets, "sites", Some(Mode::Stable)),
        Outcome::Pass
    );

    let fixed = predicted(
        column("1.85.0", "1.85.0", ToolchainVerdict::Ok),
        sources(),
        &["loongarch64-unknown-none"],
        None,
        Some(19),
    );
    assert!(fixed
        .cells
        .iter()
        .all(|cell| cell.expected == Outcome::Pass));
    let other = predicted(
        column("1.78.0", "1.78.0", ToolchainVerdict::Ok),
        sources(),
        &["aarch64-unknown-none"],
        None,
        Some(16),
    );
    assert!(other
        .cells
        .iter()
        .all(|cell| cell.expected == Outcome::Pass));
}

#[test]
fn missing_sources_an_old_compiler_and_no_emulator_skip_with_reasons() {
    let missing = Err("no library sources: run `rustup component add rust-src`".into());
    let targets = predicted(
        column("1.95.0", "1.95.0", ToolchainVerdict::Ok),
        missing,
        &["aarch64-unknown-none"],
        None,
        Some(20),
    );
    assert!(targets.cells.iter().all(|cell| {
        cell.expected == Outcome::Skipped
            && cell.ok()
            && cell.first_error.as_deref()
                == Some("no library sources: run `rustup component add rust-src`")
    }));
    assert_eq!(
        targets.sources,
        [Some(Sources::Missing(
            "no library sources: run `rustup component add rust-src`".to_string()
        ))]
    );

    let old = predicted(
        column("debian-1.48.0", "1.48.0", ToolchainVerdict::TooOld),
        sources(),
        &["loongarch64-unknown-none"],
        None,
        Some(11),
    );
    assert_eq!(
        old.known[0].expected,
        Some(false),
        "loongarch64 came in 1.72.0"
    );
    assert_eq!(
        old.known[0].observed,
        Some(true),
        "this target list says otherwise"
    );
    assert!(!old.known[0].ok());
    assert!(old
        .cells
        .iter()
        .all(|cell| cell.expected == Outcome::Skipped && cell.ok()));

    let no_qemu = predicted(
        column("1.85.0", "1.85.0", ToolchainVerdict::Ok),
        sources(),
        &["riscv64imac-unknown-none-elf"],
        Some("no qemu-riscv64 here"),
        Some(19),
    );
    for cell in &no_qemu.cells {
        let wanted = if cell.kind == Kind::Emulate {
            Outcome::Skipped
        } else {
            Outcome::Pass
        };
        assert_eq!(cell.expected, wanted, "{}", cell.label());
    }
    let toolchains = [column("1.85.0", "1.85.0", ToolchainVerdict::Ok)];
    assert!(no_qemu
        .notes(&toolchains)
        .contains(&"riscv64imac-unknown-none-elf: no qemu-riscv64 here".to_string()));
}

#[test]
fn the_target_axis_reads_back_from_json_and_is_checked() {
    let columns = vec![column("1.78.0", "1.78.0", ToolchainVerdict::Ok)];
    let mut targets = predicted(
        columns[0].clone(),
        sources(),
        &["x86_64-unknown-none", "loongarch64-unknown-none"],
        None,
        Some(16),
    );
    targets.cells[0].outcome = Outcome::Pass;
    targets.cells[0].detail = Some("4 static-branch sites".into());
    let report = Report {
        toolchains: columns,
        features: crate::catalog::FEATURES
            .iter()
            .map(|_| {
                vec![crate::report::FeatureCell {
                    observed: crate::report::Observed::NotProbed,
                    expected: None,
                }]
            })
            .collect(),
        builds: Vec::new(),
        strict: false,
        kbuild: Vec::new(),
        shard: None,
        targets,
        date: None,
    };
    let text = json::to_pretty(&report.to_json());
    let back = Report::from_json(&text).unwrap();
    assert_eq!(back.targets, report.targets);
    // As schema 2 wrote it, it reads the same; a member's error then names its new place.
    let mut old = report.to_json();
    let members = old.as_object_mut().unwrap();
    let mut axis = members.remove("targets").unwrap();
    let axis_members = axis.as_object_mut().unwrap();
    for (new, old) in [("triples", "targets"), ("cells", "cross")] {
        let value = axis_members.remove(new).unwrap();
        axis_members.insert(old.into(), value);
    }
    members.insert("platforms".into(), axis);
    members.insert("schema".into(), 2.into());
    let old_text = json::to_pretty(&old);
    assert!(!old_text.contains("triples"), "{old_text}");
    assert_eq!(
        Report::from_json(&old_text).unwrap().targets,
        report.targets
    );
    old["platforms"]["cross"][0]["seconds"] = "0".into();
    let error = Report::from_json(&json::to_pretty(&old)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "targets.cells[0].seconds: invalid type: string \"0\", expected f64, in the report \
         upgraded from schema 2 to 3"
    );
    assert!(report
        .failures()
        .iter()
        .any(|failure| failure.cell == "objects sites (kernel) for loongarch64-unknown-none"));

    let mut twice = report.targets.clone();
    twice.cells.push(twice.cells[0].clone());
    let error = twice.check().unwrap_err().to_string();
    assert!(error.contains("there twice"), "{error}");
    let mut foreign = report.targets.clone();
    foreign.triples.push("sparc64-unknown-none".into());
    assert!(foreign
        .check()
        .unwrap_err()
        .to_string()
        .contains("not a kernel target"));
    let mut stage = report.targets.clone();
    stage.cells[0].stage = "linker".into();
    assert!(stage
        .check()
        .unwrap_err()
        .to_string()
        .contains("no such cell"));
}

#[test]
fn cells_without_library_sources_are_said_as_skipped_with_the_command_that_adds_them() {
    let missing =
        Err("no library sources: run `rustup component add rust-src --toolchain 1.95.0`".into());
    let targets = predicted(
        column("1.95.0", "1.95.0", ToolchainVerdict::Ok),
        missing,
        &["x86_64-unknown-none", "aarch64-unknown-none"],
        None,
        Some(20),
    );
    let skipped = targets
        .cells
        .iter()
        .filter(|cell| cell.outcome == Outcome::Skipped)
        .count();
    assert!(skipped > 0 && skipped == targets.cells.len());
    let summary = targets.summary(0).unwrap();
    assert!(
        summary.ends_with(&format!(
            "0 of {skipped} target cells pass, {skipped} skipped: no library sources \
             (`rustup component add rust-src --toolchain 1.95.0`)"
        )),
        "{summary}"
    );
}
