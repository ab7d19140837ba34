// SPDX-License-Identifier: GPL-2.0
//! Tests of the generated files: the status region, refused reports, `--check`.

use super::features::{shim_location, shim_sources};
use super::*;
use crate::catalog::Release;
use crate::features::expect::{expected_status, ToolchainVerdict};
use crate::features::status::Status;
use crate::project_root;
use crate::report::{ToolchainEntry, SCHEMA_VERSION};
use std::fs;

mod not_recorded;

/// A toolchain that runs `release`, or a missing pin without one.
fn toolchain(id: &str, release: Option<Release>) -> ToolchainEntry {
    ToolchainEntry {
        id: id.into(),
        spec: format!("pin:{id}"),
        source: release.map(|_| crate::toolchains::discovery::SourceKind::Rustup),
        pin: Some(id.into()),
        rustc: None,
        release_text: release.map(|release| release.to_string()),
        release,
        channel: None,
        commit_date: None,
        host: None,
        verdict: match release {
            Some(release) => ToolchainVerdict::for_release(release),
            None => ToolchainVerdict::Missing(format!("rustup toolchain install {id}")),
        },
    }
}

/// A whole run's report in which every compiler says what the catalog predicts (a compiler
/// below the minimum says `gated`).
fn report(toolchains: Vec<ToolchainEntry>) -> Report {
    let features = FEATURES
        .iter()
        .map(|feature| {
            toolchains
                .iter()
                .map(|toolchain| match (&toolchain.verdict, toolchain.release) {
                    (ToolchainVerdict::Ok, Some(release)) => {
                        let status = expected_status(feature, release);
                        FeatureCell {
                            observed: Observed::Status(status),
                            expected: Some(status),
                        }
                    }
                    (ToolchainVerdict::TooOld, Some(_)) => FeatureCell {
                        observed: Observed::Status(Status::Gated),
                        expected: None,
                    },
                    _ => FeatureCell {
                        observed: Observed::NotProbed,
                        expected: None,
                    },
                })
                .collect()
        })
        .collect();
    let builds = crate::report::planned_builds(&toolchains);
    Report {
        toolchains,
        features,
        builds,
        strict: false,
        kbuild: Vec::new(),
        shard: None,
        targets: crate::report::targets::TargetAxis::default(),
        date: None,
    }
}

const STABLE: Option<Release> = Some(Release::new(1, 95, 0));

fn feature_index(name: &str) -> usize {
    FEATURES
        .iter()
        .position(|feature| feature.name == name)
        .unwrap()
}

#[test]
fn the_region_shows_what_each_compiler_said_and_what_was_predicted() {
    let mut report = report(vec![
        toolchain("1.95.0", STABLE),
        toolchain("debian-1.63.0", Some(Release::new(1, 63, 0))),
        toolchain("1.78.0", None),
    ]);
    report.features[feature_index("asm_goto")][0].observed = Observed::Status(Status::Gated);
    let region = status_region(&report).unwrap();
    assert!(
        region.starts_with('\n') && region.ends_with(".\n"),
        "{region}"
    );
    assert!(
        region.contains(&format!(
            "run on 2 toolchains: they agree with the catalog on {} of the {} statuses it predicts. Not probed in that run: 1.78.0 (missing).\n",
            FEATURES.len() - 1,
            FEATURES.len()
        )),
        "{region}"
    );
    // Columns in release order, whatever the report's order.
    assert!(region.contains("\n| Feature | debian-1.63.0 | 1.95.0 |\n|---|---|---|\n"));
    assert!(region.contains("\n| `inline_const` | *gated* | stable 1.79 |\n"));
    assert!(region.contains("\n| `unsize` | *gated* | gated |\n"));
    assert!(region.contains("\n| `asm_goto` | *gated* | **gated**, predicted stable 1.87 |\n"));
}

#[test]
fn text_from_the_report_is_escaped_or_refused() {
    let escaped = status_region(&report(vec![toolchain("a|b*", STABLE)])).unwrap();
    assert!(
        escaped.contains("| Feature | a\\|b\\* (1.95.0) |"),
        "{escaped}"
    );

    let refused = |report: Report| format!("{:#}", status_region(&report).unwrap_err());
    assert_eq!(
        refused(report(vec![toolchain("stable\u{1b}[2J", STABLE)])),
        "the toolchain id \"stable\\u{1b}[2J\" holds the control character '\\u{1b}': refusing the report"
    );
    let mut newline = toolchain("1.95.0", STABLE);
    newline.release_text = Some("1.95.0\n# Injected".into());
    assert!(refused(report(vec![newline])).starts_with(
        "toolchain 1.95.0's release \"1.95.0\\n# Injected\" holds the control character '\\n'"
    ));
    let mut shard = report(vec![toolchain("1.95.0", STABLE)]);
    shard.shard = Some("1/2".into());
    assert!(refused(shard).starts_with("the report is shard 1/2's"));
    assert_eq!(
        refused(report(vec![toolchain("1.78.0", None)])),
        "the report probed no toolchain, so it has no statuses to show"
    );
}

const GENERATED: [&str; 8] = [
    "README.md",
    super::audit_sample::AUDIT_PAGE,
    "docs/features.md",
    MATRIX_PAGE,
    "kernel-shim/src/features.md",
    super::kernels::KERNELS_PAGE,
    super::catalog_lists::FIXTURE,
    super::catalog_lists::MODES_PAGE,
];

/// A copy of the generated files, and of the shim's sources they link to, under `target/`, for
/// a test to change.
fn scratch_root(name: &str) -> PathBuf {
    let root = project_root()
        .join("target/kshim/unit-tests/docs")
        .join(name);
    let _ = fs::remove_dir_all(&root);
    let sources = project_root().join("kernel-shim/src");
    let mut files: Vec<PathBuf> = shim_sources(&project_root(), &sources).unwrap();
    files.extend(GENERATED.iter().map(|file| project_root().join(file)));
    for file in files {
        let copy = root.join(file.strip_prefix(project_root()).unwrap());
        fs::create_dir_all(copy.parent().unwrap()).unwrap();
        fs::copy(&file, copy).unwrap();
    }
    // The kernels page is made from the committed kernel report, when there is one.
    let report = project_root().join(super::kernels::KERNEL_REPORT);
    if report.is_file() {
        fs::copy(report, root.join(super::kernels::KERNEL_REPORT)).unwrap();
    }
    // The audit's page from the recorded audit.
    let audit = super::audit_sample::AUDIT_REPORT;
    fs::copy(project_root().join(audit), root.join(audit)).unwrap();
    root
}

fn contents(root: &Path) -> Vec<Vec<u8>> {
    GENERATED
        .iter()
        .map(|file| fs::read(root.join(file)).unwrap())
        .collect()
}

fn write_report(root: &Path, name: &str, report: &Report) -> PathBuf {
    let path = root.join(name);
    fs::write(&path, crate::util::json::to_pretty(&report.to_json())).unwrap();
    path
}

#[test]
fn a_refused_report_changes_nothing() {
    let root = scratch_root("refused");
    let before = contents(&root);
    let garbage = root.join("garbage.json");
    fs::write(&garbage, "matrix: 3 of 4 builds pass\n").unwrap();
    let not_a_report = root.join("not-a-report.json");
    let current = format!("{{\"schema\": {SCHEMA_VERSION}, \"include\": []}}");
    fs::write(&not_a_report, current).unwrap();
    let escape = write_report(
        &root,
        "escape.json",
        &report(vec![toolchain("nightly\u{1b}]0;x\u{7}", STABLE)]),
    );
    let nul = write_report(
        &root,
        "nul.json",
        &report(vec![toolchain("1.95.0\0", STABLE)]),
    );
    let mut incomplete_report = report(vec![toolchain("1.95.0", STABLE)]);
    incomplete_report.builds.clear();
    let incomplete = write_report(&root, "incomplete.json", &incomplete_report);
    for (path, message) in [
        (&garbage, "is not a matrix report"),
        (
            &incomplete,
            "incomplete.json is not a whole report: toolchain 1.95.0 lacks",
        ),
        (
            &not_a_report,
            "is not a matrix report: missing field `minimum_release` at line 1",
        ),
        (&escape, "not usable for the statuses: the toolchain id"),
        (
            &nul,
            "not usable for the statuses: the toolchain id \"1.95.0\\0\"",
        ),
    ] {
        for check in [false, true] {
            let error = format!(
                "{:#}",
                regenerate(&root, Some(path), None, check).unwrap_err()
            );
            assert!(error.contains(message), "{error}");
            assert!(
                contents(&root) == before,
                "{} changed a file",
                path.display()
            );
        }
    }
}

#[test]
fn check_honours_the_report_and_keeps_the_statuses_without_one() {
    let root = scratch_root("check");
    let page_path = root.join("docs/features.md");
    let page = || fs::read_to_string(&page_path).unwrap();
    let statuses = |page: &str| {
        MATRIX_STATUS
            .contents(page, &page_path)
            .unwrap()
            .to_string()
    };
    assert_eq!(
        regenerate(&root, None, None, true).unwrap(),
        Verdict::Success
    );

    let two = write_report(
        &root,
        "two.json",
        &report(vec![toolchain("1.95.0", STABLE), toolchain("1.78.0", None)]),
    );
    let one = write_report(
        &root,
        "one.json",
        &report(vec![toolchain("1.95.0", STABLE)]),
    );
    let before = page();
    assert_eq!(
        regenerate(&root, Some(&two), None, true).unwrap(),
        Verdict::Failure
    );
    assert_eq!(page(), before, "--check wrote the page");

    assert_eq!(
        regenerate(&root, Some(&two), None, false).unwrap(),
        Verdict::Success
    );
    assert!(page().contains("\n| Feature | 1.95.0 |\n"));
    assert_eq!(
        regenerate(&root, Some(&two), None, true).unwrap(),
        Verdict::Success
    );
    assert_eq!(
        regenerate(&root, Some(&one), None, true).unwrap(),
        Verdict::Failure
    );
    assert_eq!(
        regenerate(&root, None, None, true).unwrap(),
        Verdict::Success
    );

    // A stale catalog section is found with a report and without one, and regenerating
    // without a report keeps the statuses byte for byte, even edited ones.
    let edited = page()
        .replace("## `unsize`", "## `unsized`")
        .replace(MATRIX_STATUS.end, &format!("kept\n{}", MATRIX_STATUS.end));
    fs::write(&page_path, &edited).unwrap();
    assert_eq!(
        regenerate(&root, Some(&two), None, true).unwrap(),
        Verdict::Failure
    );
    assert_eq!(
        regenerate(&root, None, None, true).unwrap(),
        Verdict::Failure
    );
    assert_eq!(
        regenerate(&root, None, None, false).unwrap(),
        Verdict::Success
    );
    assert!(page().contains("## `unsize`\n") && !page().contains("## `unsized`"));
    assert_eq!(statuses(&page()), statuses(&edited));
    assert!(statuses(&page()).ends_with(".\nkept\n"));
}

#[test]
fn a_page_without_the_status_region_is_not_silently_emptied() {
    let root = scratch_root("no-region");
    let page_path = root.join("docs/features.md");
    fs::write(&page_path, "# The features\n").unwrap();
    let error = format!("{:#}", regenerate(&root, None, None, false).unwrap_err());
    assert!(
        error.starts_with("cannot keep the page's statuses"),
        "{error}"
    );
    assert_eq!(fs::read_to_string(&page_path).unwrap(), "# The features\n");

    fs::remove_file(&page_path).unwrap();
    assert_eq!(
        regenerate(&root, None, None, false).unwrap(),
        Verdict::Success
    );
    assert!(fs::read_to_string(&page_path)
        .unwrap()
        .contains(NO_MATRIX_RUN));
}

#[test]
fn every_shim_item_links_to_its_definition_with_the_replacement_beside_it() {
    let root = project_root();
    for feature in FEATURES {
        let (file, line) = shim_location(&root, feature.shim_item).unwrap();
        let text = fs::read_to_string(root.join(&file)).unwrap();
        assert!(
            line <= text.lines().count(),
            "{}: {file}:{line}",
            feature.name
        );
    }
    // The gated `Arc` (its derive and the pre-1.84 impls) and its stable replacement, the
    // `unsize_arc!` macro, are on one screen from the line the link lands on.
    let (file, line) = shim_location(&root, "sync::Arc").unwrap();
    assert_eq!(file, "kernel-shim/src/sync/arc.rs");
    let text = fs::read_to_string(root.join(&file)).unwrap();
    let screen: Vec<&str> = text.lines().skip(line - 1).take(60).collect();
    assert!(screen[0].starts_with("#["), "{}", screen[0]);
    for needle in [
        "derive(core::marker::CoercePointee)",
        "core::ops::CoerceUnsized<Arc<U>>",
        "`unsize_arc!(arc => dyn Trait)`",
    ] {
        assert!(
            screen.iter().any(|l| l.contains(needle)),
            "{needle} not within 60 lines of {file}:{line}"
        );
    }
    let error = shim_location(&root, "sync::NoSuchThing").unwrap_err();
    assert!(error.to_string().contains("sync::NoSuchThing"), "{error}");
}

#[test]
fn the_page_orders_columns_by_release_and_frames_only_what_differs() {
    let mut report = report(vec![
        toolchain("nightly", Some(Release::new(1, 97, 0))),
        toolchain("1.79.0", None),
        toolchain("debian-1.48.0", Some(Release::new(1, 48, 0))),
        toolchain("1.95.0", STABLE),
    ]);
    let inline_const = feature_index("inline_const");
    report.features[inline_const][3].observed = Observed::Status(Status::Gated);
    report.toolchains[3].rustc = Some("/home/x/.rustup/toolchains/1.95.0/bin/rustc".into());
    let page = page::compat_page(&report, None, &[], "2026-12-04 02:40 UTC<script>");

    let header = |id: &str| page.find(&format!(">{id}<")).unwrap();
    assert!(header("debian-1.48.0") < header("1.95.0") && header("1.95.0") < header("nightly"));
    assert!(
        !page.contains(">1.79.0</th>"),
        "a missing compiler got a column"
    );
    assert!(
        page.contains("<code>1.79.0</code>"),
        "a missing compiler is not listed"
    );
    assert_eq!(
        page.matches(" differs\" data-cell").count()
            + page.matches(" differs below\" data-cell").count(),
        report.failures().len()
    );
    assert!(page.contains("data-cell=\"feature/inline_const/1.95.0\""));
    assert!(
        page.contains("class=\"cell st-gated differs\" data-cell=\"feature/inline_const/1.95.0\"")
    );
    assert!(page.contains(
        "class=\"cell st-gated below\" data-cell=\"feature/inline_const/debian-1.48.0\""
    ));
    assert!(
        page.contains("~/.rustup/toolchains/1.95.0/bin/rustc"),
        "the home directory leaked"
    );
    assert!(!page.contains("<script>") && page.contains("02:40 UTC&lt;script&gt;"));
    // Links out are the tracking issues, nothing the page loads.
    assert!(!page.contains("http://"));
    for (at, _) in page.match_indices("https://") {
        assert!(
            page[..at].ends_with("href=\"")
                && page[at..].starts_with("https://github.com/rust-lang/rust/issues/"),
            "{}",
            &page[at..at + 60]
        );
    }
}

/// Each committed report reads back into its typed form and writes out byte for byte: no member
/// of the file is lost or taken for a default on the way. The audit, matrix and usage reports
/// go through the reports themselves; the kernel report through its file's members, since nothing
/// reads a kernel run back further than that. A matrix report of an older schema writes out as
/// its upgrade, summaries aside: they are recomputed, in the words of the current xtask.
#[test]
fn the_recorded_reports_read_back_and_write_out_byte_for_byte() {
    type Rewrite = fn(&Path, &str) -> (String, String);
    let reports: [(&str, Rewrite); 4] = [
        (super::audit_sample::AUDIT_REPORT, |_, text| {
            let report = crate::report::audit::AuditReport::from_json(text).unwrap();
            (
                text.to_string(),
                crate::util::json::to_pretty(&report.to_json()),
            )
        }),
        (MATRIX_REPORT, |path, text| {
            let written = Report::read(path).unwrap().to_json();
            let recorded = crate::util::json::parse(text).unwrap();
            if crate::report::upgrade::schema_of(&recorded) == Some(SCHEMA_VERSION.into()) {
                return (text.to_string(), crate::util::json::to_pretty(&written));
            }
            let without_summaries = |mut report: crate::util::json::Value| {
                for toolchain in report["toolchains"].as_array_mut().unwrap() {
                    toolchain["summary"] = "".into();
                }
                crate::util::json::to_pretty(&report)
            };
            let upgraded = crate::report::upgrade::upgrade(recorded).unwrap();
            (without_summaries(upgraded), without_summaries(written))
        }),
        (USAGE_REPORT, |path, text| {
            let report = UsageReport::read(path).unwrap();
            (
                text.to_string(),
                crate::util::json::to_pretty(&report.to_json()),
            )
        }),
        (super::kernels::KERNEL_REPORT, |path, text| {
            let report = KernelJson::read(text, path).unwrap();
            let written = crate::util::json::to_pretty(&crate::util::json::to_value(&report));
            (text.to_string(), written)
        }),
    ];
    for (name, rewrite) in reports {
        let path = project_root().join(name);
        let text = fs::read_to_string(&path).unwrap();
        let (recorded, written) = rewrite(&path, &text);
        assert!(written == recorded, "{name} does not read back as written");
    }
}

/// A screenshot says which page it shows: stamped with another page's digest it is stale; the
/// committed one shows the committed page.
#[test]
fn a_screenshot_of_another_page_is_stale() {
    let root = crate::tests::support::scratch_dir("screenshot-stamp");
    std::fs::create_dir_all(root.join("docs")).unwrap();
    let committed = crate::project_root();
    let png = std::fs::read(committed.join(page::SCREENSHOT)).unwrap();
    let stamped =
        crate::util::png::with_text(&png, page::SCREENSHOT_STAMP, &page::digest("a")).unwrap();
    std::fs::write(root.join(page::SCREENSHOT), &stamped).unwrap();
    assert_eq!(page::stale_screenshot(&root, "a").unwrap(), None);
    let stale = page::stale_screenshot(&root, "b").unwrap().unwrap();
    assert_eq!(
        stale,
        "docs/compat.png was taken from another page than docs/compat.html"
    );
    let html = std::fs::read_to_string(committed.join(page::PAGE)).unwrap();
    assert_eq!(
        page::stale_screenshot(&committed, &html).unwrap(),
        None,
        "the committed screenshot is not of the committed page: `cargo xtask docs --screenshot`"
    );
}

/// The page's kernel grid shows each built cell's boot in a few words, frames a failed one as a
/// finding that the headline counts and explains in its popup, and says what a boot not run or
/// not recorded is.
#[test]
fn the_page_shows_each_built_cells_boot_and_frames_a_failed_one() {
    let trees = kernels::read_trees(&kernels::tests::booted_report());
    let report = report(vec![toolchain("1.78.0", Some(Release::new(1, 78, 0)))]);
    let page = page::compat_page(&report, None, &trees, "a date");
    let cell = |id: &str| {
        let start = page
            .find(&format!("data-cell=\"kernel/6.12/{id}\""))
            .unwrap_or_else(|| panic!("no kernel cell for {id}"));
        let open = page[..start].rfind("<td").unwrap();
        page[open..open + page[open..].find("</td>").unwrap()].to_owned()
    };
    for (id, class, shown) in [
        (
            "1.78.0",
            "kt-pass boot-pass\"",
            "boot pass (KUnit 390/1 skipped)",
        ),
        (
            "1.85.0",
            "kt-pass boot-fail finding\"",
            "boot fail (KUnit 389/1 failed/1 skipped)",
        ),
        ("1.96.0", "kt-pass boot-not-run\"", "boot not run"),
        ("1.98.1", "kt-pass boot-not-recorded\"", "boot not recorded"),
    ] {
        let cell = cell(id);
        assert!(cell.contains(class), "{cell}");
        assert!(
            cell.contains(&format!(
                ">pass<small class=\"boot\"> \u{b7} {shown}</small>"
            )),
            "{cell}"
        );
    }
    assert!(cell("1.78.0")
        .contains("samples: 2 of 2 lines seen, not checked (nothing printed at init): rust_soc"));
    assert!(cell("1.96.0").contains("boot not run: qemu-system-x86_64 is not installed"));
    assert!(
        page.contains(
            "One boot under QEMU went against the prediction</b> from the tree's own rules (a \
             build that passes is predicted to boot and pass)"
        ),
        "the headline does not count the failed boot"
    );
    assert!(page.contains(
        "Linux 6.12.118 with <code>1.85.0</code>: built, so predicted to boot and pass, but boot \
         fail (KUnit 389/1 failed/1 skipped)."
    ));
    assert!(page.contains(
        "<p><code>rust_kvec.test_0</code> failed:</p><pre># test_0: ASSERTION FAILED at \
         rust/kernel/alloc/kvec.rs:0</pre>"
    ));
    assert_eq!(page.matches(" finding\" data-cell").count(), 1);
}
