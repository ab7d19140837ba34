// SPDX-License-Identifier: GPL-2.0
//! Bad input: one message naming the file (and line), exit status 2.

use super::*;

fn assert_bad_input(output: &Output, expected: &str) {
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(expected),
        "expected {expected:?} in:\n{stderr}"
    );
    assert!(output.stdout.is_empty(), "{}", text(&output.stdout));
}

#[test]
fn bad_input_exits_with_status_2_naming_file_and_line() {
    assert_bad_input(&xtask(&["frobnicate"]), "error: ");
    assert_bad_input(&xtask(&["matrix", "--frobnicate"]), "--frobnicate");
    assert_bad_input(
        &xtask(&["matrix", "--timeout", "soon"]),
        "can't parse `--timeout`",
    );

    let root = tiny_tree("bad-input");
    let pins = root.join("pins.toml");
    let pin_cases = [
        (
            "[[pin]]\nid = \"a\"\nrelease 1.85.0\n",
            ":3: expected `key = \"value\"`",
        ),
        (
            "[[pin]]\nid = \"a\"\nrelease = \"1.85.0\"\nrole = \"feature\"\nchannel = \"stable\"\n",
            ":5: unknown key `channel`",
        ),
        (
            "[[pin]]\nid = \"a\"\nrelease = \"1.85.0\"\nrole = \"feature\"\n\
             [[pin]]\nid = \"b\"\nrelease = \"1.85.0\"\nrole = \"feature\"\n",
            ":7: duplicate pin: `a` (line 1) already pins 1.85.0",
        ),
        (
            "[[pin]]\nid = \"a\"\nrelease = \"one.eighty-five\"\nrole = \"feature\"\n",
            ":3: the release `one.eighty-five` is not MAJOR.MINOR.PATCH",
        ),
    ];
    let root_arg = root.display().to_string();
    let pins_arg = pins.display().to_string();
    for (contents, expected) in pin_cases {
        std::fs::write(&pins, contents).unwrap();
        let output = xtask(&["matrix", "--root", &root_arg, "--pins", &pins_arg]);
        assert_bad_input(&output, &format!("{}{expected}", pins.display()));
    }

    // The catalog names an example the manifest does not declare, or whose file is missing.
    let manifest = root.join("examples/Cargo.toml");
    let original = std::fs::read_to_string(&manifest).unwrap();
    let undeclared = original.replace(
        "[[example]]\nname = \"rust_asm_goto\"\npath = \"rust_asm_goto.rs\"\n",
        "",
    );
    assert_ne!(undeclared, original);
    std::fs::write(&manifest, undeclared).unwrap();
    let output = xtask(&["matrix", "--root", &root_arg]);
    let catalog = project_root().join("kernel-shim/src/catalog.rs");
    let catalog_line = std::fs::read_to_string(&catalog)
        .unwrap()
        .lines()
        .position(|line| line.contains("example: \"rust_asm_goto\""))
        .unwrap()
        + 1;
    assert_bad_input(
        &output,
        &format!(
            "{}:{catalog_line}: the feature `asm_goto` names the example `rust_asm_goto`, but {} \
             declares no [[example]] named `rust_asm_goto`",
            catalog.display(),
            manifest.display()
        ),
    );
    std::fs::write(&manifest, &original).unwrap();
    let example = root.join("examples/rust_asm_goto.rs");
    std::fs::remove_file(&example).unwrap();
    let manifest_line = original
        .lines()
        .position(|line| line == "name = \"rust_asm_goto\"")
        .unwrap()
        + 1;
    assert_bad_input(
        &xtask(&["matrix", "--root", &root_arg]),
        &format!(
            "{}:{manifest_line}: the [[example]] `rust_asm_goto` (which the catalog names for \
             the feature `asm_goto`) has no source file: {} does not exist",
            manifest.display(),
            example.display()
        ),
    );

    // An unwritable target/kshim: here a file stands where the directory must be (the tests
    // may run as root, whom permissions do not stop).
    let other = tiny_tree("unwritable");
    std::fs::create_dir_all(other.join("target")).unwrap();
    std::fs::write(other.join("target/kshim"), "not a directory").unwrap();
    let real = real_compiler().path.display().to_string();
    assert_bad_input(
        &xtask(&[
            "matrix",
            "--root",
            &other.display().to_string(),
            "--toolchain",
            &real,
        ]),
        &format!(
            "cannot create {}, where the matrix keeps its lock, cache and report",
            other.join("target/kshim").display()
        ),
    );
}
