// SPDX-License-Identifier: GPL-2.0
//! The committed compatibility page (`docs/compat.html`) as a real browser builds it: Debian's
//! chromium, headless, loads it from a `file:` URL and hands back its document, in which every
//! cell of the committed report (`docs/matrix-report.json`) must carry the class of its status,
//! and exactly the report's failures must be framed.
//!
//! Without a browser the test says so and passes, except under `CI=true`, where `.ci/run`
//! installs one and its absence is a failure.

use crate::project_root;
use crate::tests::support::scratch_dir;
use crate::util::browser;
use crate::util::json::{self, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Every element of `dom` that stands for a report cell: its `data-cell` key and its classes.
fn page_cells(dom: &str) -> BTreeMap<String, BTreeSet<String>> {
    let attribute = |tag: &str, name: &str| -> Option<String> {
        let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        let end = start + tag[start..].find('"')?;
        Some(tag[start..end].replace("&amp;", "&"))
    };
    let mut cells = BTreeMap::new();
    let mut rest = dom;
    while let Some(at) = rest.find(" data-cell=\"") {
        let open = rest[..at].rfind('<').expect("an attribute outside a tag");
        let close = at + rest[at..].find('>').expect("an unclosed tag");
        let tag = &rest[open..close];
        let key = attribute(tag, "data-cell").expect("data-cell without a value");
        let classes = attribute(tag, "class")
            .unwrap_or_default()
            .split_whitespace()
            .map(String::from)
            .collect();
        assert!(
            cells.insert(key.clone(), classes).is_none(),
            "the page has the cell {key} twice"
        );
        rest = &rest[close..];
    }
    cells
}

fn text<'a>(value: &'a Value, name: &str) -> &'a str {
    value[name]
        .as_str()
        .unwrap_or_else(|| panic!("the report's `{name}` is not a string in {value}"))
}

fn ok(value: &Value) -> bool {
    value["ok"]
        .as_bool()
        .unwrap_or_else(|| panic!("no `ok` in {value}"))
}

/// The cells the page must show for the report, read from its JSON as docs/matrix.md documents it:
/// key, the class its status gives, and whether it differs from the catalog.
fn report_cells(report: &Value) -> BTreeMap<String, (String, bool)> {
    let mut cells = BTreeMap::new();
    let toolchains = report["toolchains"].as_array().expect("toolchains");
    let strict = report["strict"].as_bool() == Some(true);
    let shown: BTreeSet<&str> = toolchains
        .iter()
        // The compilers that ran get columns; missing and broken ones only their verdict.
        .filter(|toolchain| matches!(text(toolchain, "verdict"), "ok" | "too-old"))
        .map(|toolchain| text(toolchain, "id"))
        .collect();
    for toolchain in toolchains {
        let verdict = text(toolchain, "verdict");
        let failed = verdict == "broken" || (strict && verdict == "missing");
        cells.insert(
            format!("toolchain/{}", text(toolchain, "id")),
            (format!("v-{verdict}"), failed),
        );
    }
    for feature in report["features"].as_array().expect("features") {
        let name = text(feature, "name");
        for (id, cell) in feature["toolchains"]
            .as_object()
            .expect("feature toolchains")
        {
            if shown.contains(id.as_str()) {
                cells.insert(
                    format!("feature/{name}/{id}"),
                    (format!("st-{}", text(cell, "observed")), !ok(cell)),
                );
            }
        }
    }
    // A catalog feature the report was recorded without shows "not recorded" on every column.
    let recorded: BTreeSet<&str> = report["features"]
        .as_array()
        .expect("features")
        .iter()
        .map(|feature| text(feature, "name"))
        .collect();
    for feature in crate::catalog::FEATURES {
        if !recorded.contains(feature.name) {
            for id in &shown {
                cells.insert(
                    format!("feature/{}/{id}", feature.name),
                    ("st-not-recorded".to_string(), false),
                );
            }
        }
    }
    for build in report["builds"].as_array().expect("builds") {
        cells.insert(
            format!(
                "build/{}/{}/{}/{}",
                text(build, "target"),
                text(build, "kind"),
                text(build, "mode"),
                text(build, "toolchain")
            ),
            (format!("out-{}", text(build, "outcome")), !ok(build)),
        );
    }
    for cell in report["kbuild"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        if shown.contains(text(cell, "toolchain")) {
            let class = if ok(cell) {
                "kb-expected"
            } else {
                "kb-unexpected"
            };
            cells.insert(
                format!(
                    "kbuild/{}/{}",
                    text(cell, "fixture"),
                    text(cell, "toolchain")
                ),
                (class.to_string(), !ok(cell)),
            );
        }
    }
    let targets = &report["targets"];
    for known in targets["known"].as_array().expect("known") {
        let class = match (known["observed"].as_bool(), known["error"].is_null()) {
            (_, false) => "kn-failed",
            (Some(true), true) => "kn-known",
            (Some(false), true) => "kn-unknown",
            (None, true) => "kn-none",
        };
        cells.insert(
            format!(
                "known/{}/{}",
                text(known, "target"),
                text(known, "toolchain")
            ),
            (class.to_string(), !ok(known)),
        );
    }
    for cell in targets["cells"].as_array().expect("cells") {
        cells.insert(
            format!(
                "target/{}/{}/{}/{}",
                text(cell, "target"),
                text(cell, "stage"),
                cell["mode"].as_str().unwrap_or("-"),
                text(cell, "toolchain")
            ),
            (format!("out-{}", text(cell, "outcome")), !ok(cell)),
        );
    }
    cells
}

/// The compilers of the recorded `cargo xtask kernel` report that no tree was built with, which
/// the page shows in one column.
fn idle_kernel_compilers(report: &Value) -> BTreeSet<String> {
    let cells = report["cells"]
        .as_array()
        .expect("the kernel report's cells");
    let ran: BTreeSet<&str> = cells
        .iter()
        .filter(|cell| text(cell, "real") != "not run")
        .map(|cell| text(cell, "toolchain"))
        .collect();
    cells
        .iter()
        .map(|cell| text(cell, "toolchain"))
        .filter(|toolchain| !ran.contains(toolchain))
        .map(String::from)
        .collect()
}

/// The kernel grid's cells for the recorded `cargo xtask kernel` report, keyed by tree and
/// toolchain id as every grid is: the class of the real result, with that of the boot where the
/// build passed (`boot-not-recorded` where the report has none), and whether the prediction said
/// otherwise or a built cell's boot failed (framed as a `finding`); the compilers nothing ran on
/// are left to their column.
fn kernel_cells(report: &Value) -> BTreeMap<String, (Vec<String>, bool)> {
    let idle = idle_kernel_compilers(report);
    let mut cells = BTreeMap::new();
    for cell in report["cells"]
        .as_array()
        .expect("the kernel report's cells")
    {
        let compiler = text(cell, "toolchain");
        if idle.contains(compiler) {
            continue;
        }
        let real = text(cell, "real");
        let mut classes = vec![format!("kt-{}", real.replace(' ', "-"))];
        let boot = cell["boot"]["result"].as_str();
        if real == "pass" || boot.is_some() {
            let word = boot.unwrap_or("not recorded");
            classes.push(format!("boot-{}", word.replace(' ', "-")));
        }
        let boot_failed = real == "pass" && boot == Some("fail");
        cells.insert(
            format!("kernel/{}/{compiler}", text(cell, "tree")),
            (
                classes,
                cell["finding"].as_bool() == Some(true) || boot_failed,
            ),
        );
    }
    cells
}

#[test]
fn the_committed_page_shows_every_cell_of_the_committed_report() {
    let root = project_root();
    let page = root.join("docs/compat.html");
    let report_text = std::fs::read_to_string(root.join("docs/matrix-report.json"))
        .expect("reading docs/matrix-report.json");
    let report = json::parse(&report_text).expect("docs/matrix-report.json is JSON");
    let report = crate::report::upgrade::upgrade(report).expect("a schema this xtask reads");
    let failures = report["failures"].as_array().expect("failures").len();

    if browser::find().is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "no chromium under CI=true: .ci/run installs it (apt-get install chromium)"
        );
        eprintln!("no chromium here (apt-get install chromium): the page was not loaded");
        return;
    }
    let dom = dump_dom(&page, &scratch_dir("page")).expect("loading the page in chromium");
    assert!(
        dom.contains("<h1>Which compiler takes which kernel feature</h1>"),
        "the browser did not render the page: {}",
        &dom[..dom.len().min(400)]
    );
    for external in ["<script", "<link", " src=", "url(", "@import"] {
        assert!(
            !dom.contains(external),
            "the page refers to something outside itself ({external})"
        );
    }

    let shown = page_cells(&dom);
    let mut expected = report_cells(&report);
    let kernel_report = std::fs::read_to_string(root.join("docs/kernel-report.json"))
        .ok()
        .map(|text| json::parse(&text).expect("docs/kernel-report.json is JSON"));
    let kernel = kernel_report.as_ref().map(kernel_cells).unwrap_or_default();
    if let Some(kernel_report) = &kernel_report {
        let idle = idle_kernel_compilers(kernel_report);
        for part in dom.split(" data-compilers=\"").skip(1) {
            let shown: BTreeSet<String> = part[..part.find('"').unwrap()]
                .split(' ')
                .map(String::from)
                .collect();
            assert_eq!(
                shown, idle,
                "the kernel grid's column of compilers nothing ran on"
            );
        }
    }
    let findings = kernel.values().filter(|(_, finding)| *finding).count();
    for (key, (wanted, finding)) in &kernel {
        let classes = shown
            .get(key)
            .unwrap_or_else(|| panic!("the page has no kernel cell {key}"));
        for class in wanted {
            assert!(
                classes.contains(class),
                "{key}: {class}, not in {classes:?}"
            );
        }
        assert_eq!(
            classes.contains("finding"),
            *finding,
            "{key}: framed as a finding"
        );
    }
    let framed_findings = shown
        .values()
        .filter(|classes| classes.contains("finding"))
        .count();
    assert_eq!(
        framed_findings, findings,
        "kernel findings framed on the page"
    );
    expected.extend(
        kernel
            .into_iter()
            .map(|(key, (classes, _))| (key, (classes[0].clone(), false))),
    );
    let missing: Vec<&String> = expected
        .keys()
        .filter(|key| !shown.contains_key(*key))
        .collect();
    let extra: Vec<&String> = shown
        .keys()
        .filter(|key| !expected.contains_key(*key))
        .collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "the page's cells are not the report's: missing {missing:?}, not in the report {extra:?}"
    );
    for (key, (class, differs)) in &expected {
        let classes = &shown[key];
        assert!(
            classes.contains(class),
            "{key}: the report says {class}, the page's classes are {classes:?}"
        );
        assert_eq!(
            classes.contains("differs"),
            *differs,
            "{key}: framed on the page must mean differing in the report"
        );
    }
    let framed = shown
        .values()
        .filter(|classes| classes.contains("differs"))
        .count();
    assert_eq!(
        framed, failures,
        "the page frames {framed} cells, the report has {failures} failures"
    );
    assert!(
        expected.len() > 100,
        "only {} cells: is the committed report a whole run?",
        expected.len()
    );
}

/// The document of the page at `page` as the browser has it once loaded, serialized.
fn dump_dom(page: &std::path::Path, scratch: &std::path::Path) -> anyhow::Result<String> {
    browser::headless(&browser::file_url(page), &["--dump-dom".into()], scratch)
}

/// What the page shows once loaded in a frame of `size` (chromium's headless window is at
/// least 500 px wide, a frame is as wide as it is told), measured by a script in the page around
/// it: the document's width, and how far the feature grid's first column and header row moved
/// when its box was scrolled right and down.
fn measured_at(size: (u32, u32)) -> Option<Value> {
    browser::find()?;
    let root = project_root();
    let scratch = scratch_dir(&format!("page-{}x{}", size.0, size.1));
    std::fs::copy(root.join("docs/compat.html"), scratch.join("compat.html")).unwrap();
    let harness = format!(
        r#"<!DOCTYPE html><html><body style="margin:0">
<iframe id="page" src="compat.html" style="border:0;width:{}px;height:{}px"></iframe>
<script>
document.getElementById('page').addEventListener('load', (event) => {{
  const frame = event.target.contentWindow, document_ = frame.document;
  const box = document_.getElementById('features').parentElement.querySelector('.scroll');
  const first = box.querySelector('tbody th.row'), head = box.querySelector('thead th.col');
  const at = () => [first.getBoundingClientRect().left - box.getBoundingClientRect().left,
                    head.getBoundingClientRect().top - box.getBoundingClientRect().top];
  const before = at();
  box.scrollLeft = 300; box.scrollTop = 150;
  const after = at();
  const out = document.createElement('pre');
  out.id = 'measured';
  out.textContent = JSON.stringify({{
    documentWidth: document_.documentElement.scrollWidth, viewport: frame.innerWidth,
    scrolled: [box.scrollLeft, box.scrollTop],
    firstColumnMoved: after[0] - before[0], headerMoved: after[1] - before[1],
  }});
  document.body.appendChild(out);
}});
</script></body></html>"#,
        size.0, size.1
    );
    let page = scratch.join("harness.html");
    std::fs::write(&page, harness).unwrap();
    // Its scripts may read a frame loaded from another `file:` URL.
    let switches = ["--dump-dom", "--allow-file-access-from-files"].map(String::from);
    let dom = browser::headless(&browser::file_url(&page), &switches, &scratch)
        .expect("loading the page in chromium");
    let start =
        dom.find("<pre id=\"measured\">").expect("the script ran") + "<pre id=\"measured\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let text = dom[start..end].replace("&quot;", "\"");
    Some(json::parse(&text).unwrap_or_else(|error| panic!("{error}: {text}")))
}

/// At 390 x 844, a phone's window, the document is no wider than the window, and the feature
/// grid scrolls in its box under a first column and a header row that stay where they are.
#[test]
fn on_a_phone_the_page_fits_and_the_grid_keeps_its_first_column_and_header() {
    let Some(measured) = measured_at((390, 844)) else {
        eprintln!("no chromium here (apt-get install chromium): the page was not loaded");
        return;
    };
    let number = |name: &str| {
        measured[name]
            .as_f64()
            .unwrap_or_else(|| panic!("{name}: {measured}"))
    };
    assert!(
        number("documentWidth") <= number("viewport"),
        "the document is wider than the window: {measured}"
    );
    let scrolled = measured["scrolled"].as_array().unwrap();
    assert!(
        scrolled.iter().all(|offset| offset.as_f64().unwrap() > 0.0),
        "the feature grid's box did not scroll both ways: {measured}"
    );
    // They stick to the box's edge, past its 2 px of border spacing; scrolled away, they
    // would have moved 300 and 150 px.
    for moved in ["firstColumnMoved", "headerMoved"] {
        assert!(
            number(moved).abs() <= 4.0,
            "the first column or the header row scrolled away: {measured}"
        );
    }
    assert_eq!(number("viewport"), 390.0, "the frame's width: {measured}");
}

/// At 1400 x 900 the document is no wider than the window either.
#[test]
fn on_a_laptop_the_page_fits() {
    let Some(measured) = measured_at((1400, 900)) else {
        eprintln!("no chromium here (apt-get install chromium): the page was not loaded");
        return;
    };
    let width = measured["documentWidth"].as_f64().unwrap();
    assert!(
        width <= 1400.0,
        "the document is {width} px wide: {measured}"
    );
}

/// The features `kernel-shim/src/lib.rs`'s block enables in kernel mode on a compiler of
/// `release`, read from the file itself under the cfgs the shim's build script gives that
/// release.
fn block_enables(release: crate::catalog::Release) -> Vec<String> {
    let lib = std::fs::read_to_string(project_root().join("kernel-shim/src/lib.rs")).unwrap();
    let cfgs: Vec<&str> = crate::catalog::derived_cfgs(release, true).collect();
    crate::features::attributes::read_features(&lib)
        .expect("lib.rs's feature block reads")
        .into_iter()
        .filter(|feature| {
            feature
                .condition()
                .is_none_or(|condition| condition.holds_with(&cfgs) == Some(true))
        })
        .map(|feature| feature.name)
        .collect()
}

/// The verdict row of every compiler that builds names, for `RUSTC_BOOTSTRAP`, exactly the
/// features lib.rs's block enables on it that its cells do not call stable; a gated cell the
/// block leaves out is drawn `off`, and no other.
#[test]
fn the_verdicts_name_what_the_kernels_block_really_enables() {
    let root = project_root();
    let page = std::fs::read_to_string(root.join("docs/compat.html")).unwrap();
    let report =
        json::parse(&std::fs::read_to_string(root.join("docs/matrix-report.json")).unwrap())
            .unwrap();
    let cells = page_cells(&page);
    let mut checked = 0;
    for toolchain in report["toolchains"].as_array().unwrap() {
        if text(toolchain, "verdict") != "ok" {
            continue;
        }
        let id = text(toolchain, "id");
        let release = crate::toolchains::version::parse_release(text(toolchain, "release"))
            .unwrap()
            .0;
        let enabled = block_enables(release);
        let mut expected = Vec::new();
        for feature in report["features"].as_array().unwrap() {
            let name = text(feature, "name");
            let observed = text(&feature["toolchains"][id], "observed");
            let gated = !matches!(observed, "stable" | "not-recorded");
            if gated && enabled.iter().any(|enabled| enabled == name) {
                expected.push(name.to_string());
            }
            let classes = &cells[&format!("feature/{name}/{id}")];
            assert_eq!(
                classes.contains("off"),
                gated && !enabled.iter().any(|enabled| enabled == name),
                "feature/{name}/{id}: drawn as left out by the block: {classes:?}"
            );
        }
        let row_at = page
            .find(&format!("data-verdict=\"{id}\""))
            .unwrap_or_else(|| panic!("no verdict row for {id}"));
        let row = &page[row_at..row_at + page[row_at..].find("</tr>").unwrap()];
        let needs = &row[row.find("class=\"needs\"").expect("a needs cell")..];
        let shown: Vec<String> = needs
            .split("<code>")
            .skip(1)
            .map(|part| part[..part.find("</code>").unwrap()].replace("<wbr>", ""))
            .collect();
        assert_eq!(
            shown, expected,
            "{id}: what kernel mode needs RUSTC_BOOTSTRAP for"
        );
        checked += 1;
    }
    assert!(checked >= 2, "only {checked} compilers checked");
}

/// Every absolute path under which the reports were recorded: what precedes `/target/` or
/// `/.rustup/` in a path they hold (`/home/me/kshim`, `/root`).
fn recording_roots(text: &str) -> BTreeSet<String> {
    let mut roots = BTreeSet::new();
    for anchor in ["/target/", "/.rustup/", "/.cargo/"] {
        for (at, _) in text.match_indices(anchor) {
            let start = text[..at]
                .rfind(|character: char| {
                    !(character.is_alphanumeric() || "/._-+~".contains(character))
                })
                .map_or(0, |index| index + 1);
            if text[start..].starts_with('/') && at > start {
                roots.insert(text[start..at].to_string() + "/");
            }
        }
    }
    roots
}

/// No generated file shows a path of the machine the reports were recorded on: the page as
/// the browser has it, and the Markdown made from the same reports.
#[test]
fn no_generated_file_shows_a_path_of_the_recording_machine() {
    let root = project_root();
    let mut roots = BTreeSet::new();
    for report in [
        "docs/matrix-report.json",
        "docs/usage-report.json",
        "docs/kernel-report.json",
    ] {
        if let Ok(text) = std::fs::read_to_string(root.join(report)) {
            roots.extend(recording_roots(&text));
        }
    }
    assert!(
        !roots.is_empty(),
        "the committed reports hold no path: is this test still needed?"
    );
    let mut files: Vec<(String, String)> = [
        "docs/kernels.md",
        "docs/matrix.md",
        "docs/features.md",
        "README.md",
    ]
    .iter()
    .map(|file| {
        (
            file.to_string(),
            std::fs::read_to_string(root.join(file)).unwrap(),
        )
    })
    .collect();
    let page = root.join("docs/compat.html");
    files.push((
        "docs/compat.html".into(),
        std::fs::read_to_string(&page).unwrap(),
    ));
    if browser::find().is_some() {
        let dom =
            dump_dom(&page, &scratch_dir("page-paths")).expect("loading the page in chromium");
        files.push(("the page in chromium".into(), dom));
    }
    for (file, text) in &files {
        for recorded in &roots {
            assert!(
                !text.contains(recorded.as_str()) && !text.contains(&recorded.replace('_', "\\_")),
                "{file} shows {recorded}, a path of the machine the reports were recorded on"
            );
        }
    }
}
