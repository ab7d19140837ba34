// SPDX-License-Identifier: GPL-2.0
//! Every value of a pin, and of a kernel tree's pin, checked against what it names.

use super::*;

#[test]
fn unknown_and_duplicate_keys() {
    assert_eq!(
        error_of(&with_line("channel = \"stable\"")),
        "pins.toml:5: unknown key `channel`; a pin has id, release, commit-date, role, \
         rustup, debian, note"
    );
    assert_eq!(
        error_of(&with_line("role = \"debian\"")),
        "pins.toml:5: duplicate key `role` (first set on line 4)"
    );
    assert_eq!(
        error_of("[[pin]]\nid = \"a\"\nrole = \"feature\"\n"),
        "pins.toml:1: this pin has no `release`"
    );
}

#[test]
fn values_that_are_not_what_they_claim() {
    let bad_release = "[[pin]]\nid = \"a\"\nrelease = \"1.85\"\nrole = \"feature\"\n";
    assert!(error_of(bad_release)
        .starts_with("pins.toml:3: the release `1.85` is not MAJOR.MINOR.PATCH"));
    let bad_release = bad_release.replace("1.85", "one.eighty-five");
    assert!(error_of(&bad_release).starts_with("pins.toml:3: the release `one.eighty-five`"));
    assert_eq!(
        error_of(&with_line("commit-date = \"May 19\"")),
        "pins.toml:5: the commit date `May 19` is not YYYY-MM-DD"
    );
    assert!(error_of(&with_line("debian = \"sid:Rustc Web\""))
        .starts_with("pins.toml:5: `Rustc Web` is not a Debian package name"));
    assert!(error_of(&with_line("rustup = \"1.85 .0\""))
        .starts_with("pins.toml:5: the rustup name `1.85 .0` is not a toolchain name"));
    let bad_role = "[[pin]]\nid = \"a\"\nrelease = \"1.85.0\"\nrole = \"oldest\"\n";
    assert_eq!(
        error_of(bad_role),
        "pins.toml:4: unknown role `oldest`; the roles are minimum, feature, debian, \
         rust-toolchain, nightly"
    );
    let nightly = "[[pin]]\nid = \"n\"\nrelease = \"1.97.0-nightly\"\nrole = \"nightly\"\n";
    assert!(error_of(nightly)
        .starts_with("pins.toml:3: the nightly `1.97.0-nightly` needs a `commit-date`"));
    let bad_id = "[[pin]]\nid = \"a b\"\nrelease = \"1.85.0\"\nrole = \"feature\"\n";
    assert!(error_of(bad_id).starts_with("pins.toml:2: the id `a b` is not a short name"));
}

/// The pin of `id` in a one-pin file, or the error.
fn with_id(id: &str) -> String {
    // TOML's escapes, so that any character reaches the reader.
    let escaped: String = id
        .chars()
        .map(|c| match c {
            '"' | '\\' => format!("\\{c}"),
            c if c.is_control() => format!("\\u{:04x}", u32::from(c)),
            c => c.to_string(),
        })
        .collect();
    let text = format!("[[pin]]\nid = \"{escaped}\"\nrelease = \"1.85.0\"\nrole = \"feature\"\n");
    match parse(&text) {
        Ok(pins) => pins.pins[0].id.clone(),
        Err(error) => format!("{error:#}"),
    }
}

#[test]
fn ids_are_short_names_never_paths_or_options() {
    for good in [
        "1.85.0",
        "nightly",
        "debian-1.98.1",
        "a_b",
        &"x".repeat(MAX_ID_LENGTH),
    ] {
        assert_eq!(with_id(good), good);
    }
    let long = "x".repeat(MAX_ID_LENGTH + 1);
    for bad in [
        ".",
        "..",
        ".hidden",
        "-o",
        "--help",
        "a/b",
        "../x",
        "a\\b",
        "a\u{1b}[31m",
        "a\nb",
        "a\u{0}",
        "",
        "a b",
        "é",
        &long,
    ] {
        let error = with_id(bad);
        assert!(
            error.starts_with("pins.toml:2: the id `") && error.contains("is not a short name"),
            "{bad:?}: {error}"
        );
        assert!(
            !error.contains('\u{1b}') && !error.contains('\u{0}'),
            "{error:?}"
        );
    }
}

#[test]
fn releases_are_written_as_rustc_writes_them() {
    let release =
        |text: &str| format!("[[pin]]\nid = \"a\"\nrelease = \"{text}\"\nrole = \"feature\"\n");
    for bad in ["01.95.0", "1.095.0", "1.95.00", "+1.95.0"] {
        let error = error_of(&release(bad));
        assert!(
            error.starts_with("pins.toml:3: the release `"),
            "{bad}: {error}"
        );
    }
    assert_eq!(
        error_of(&release("01.95.0")),
        "pins.toml:3: the release `01.95.0` is not one rustc prints: it writes `1.95.0`"
    );
    assert_eq!(parse(&release("1.95.0")).unwrap().pins[0].release, "1.95.0");
    assert_eq!(parse(&release("1.86.0-beta.3")).unwrap().pins.len(), 1);
}

#[test]
fn install_sources_are_checked_against_what_they_name() {
    // Every one of these would be an option to apt or rustup, or shell code in a command line.
    for (line, said) in [
        (
            "rustup = \"x;touch${IFS}pwned;#\"",
            "the rustup name `x;touch${IFS}pwned;#` is not",
        ),
        ("rustup = \"--help\"", "the rustup name `--help` is not"),
        ("rustup = \"$(id)\"", "the rustup name `$(id)` is not"),
        ("rustup = \"1.85.0`id`\"", "is not a toolchain name"),
        (
            "rustup = \"stable\\n-y\"",
            "the rustup name `stable\\n-y` is not",
        ),
        ("debian = \"--help\"", "`--help` names no suite"),
        ("debian = \"rustc-web\"", "`rustc-web` names no suite"),
        (
            "debian = \"sid:--help\"",
            "`--help` is not a Debian package name",
        ),
        ("debian = \"-o:rustc\"", "`-o` is not a Debian suite"),
        (
            "debian = \"sid:rustc=1.85.0;id\"",
            "`1.85.0;id` is not a Debian version",
        ),
        (
            "debian = \"sid:rustc=$(id)\"",
            "`$(id)` is not a Debian version",
        ),
    ] {
        let error = error_of(&with_line(line));
        assert!(error.starts_with("pins.toml:5: "), "{line}: {error}");
        assert!(error.contains(said), "{line}: {error}");
    }
    for good in [
        "rustup = \"1.85.0\"",
        "rustup = \"stable\"",
        "rustup = \"nightly-2026-05-20\"",
        "rustup = \"1.85.0-x86_64-unknown-linux-gnu\"",
        "debian = \"trixie:rustc-web\"",
        "debian = \"bookworm-security:rustc-web=1.85.0+dfsg3-1~deb12u3\"",
    ] {
        assert!(parse(&with_line(good)).is_ok(), "{good}");
    }
    // A Debian version of another release cannot satisfy the pin.
    assert_eq!(
        error_of(&with_line("debian = \"sid:rustc=1.97.1+dfsg1-1\"")),
        "pins.toml:1: the Debian package `sid:rustc=1.97.1+dfsg1-1` is of release 1.97.1, not 1.85.0"
    );
}

#[test]
fn only_regular_files_of_sensible_size_are_read() {
    let dir = crate::project_root().join("target/kshim/test-scratch/pins-load");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo.toml");
    let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: `path` is a NUL-terminated string that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    // Opened for reading, a FIFO with no writer would block for ever; it is never opened.
    for (file, said) in [
        (fifo.as_path(), "is a FIFO, not a regular file"),
        (Path::new("/dev/zero"), "not a regular file"),
        (dir.as_path(), "not a regular file"),
    ] {
        let error = format!("{:#}", Pins::load(file).unwrap_err());
        assert!(error.contains(said), "{}: {error}", file.display());
    }
    let huge = dir.join("huge.toml");
    let file = std::fs::File::create(&huge).unwrap();
    file.set_len(MAX_PIN_FILE_BYTES + 1).unwrap();
    let error = format!("{:#}", Pins::load(&huge).unwrap_err());
    assert!(error.contains("it is larger than"), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn duplicate_pins() {
    let two = |second_id: &str, second_release: &str| {
        format!(
            "[[pin]]\nid = \"a\"\nrelease = \"1.85.0\"\nrole = \"feature\"\n\n\
             [[pin]]\nid = \"{second_id}\"\nrelease = \"{second_release}\"\nrole = \"feature\"\n"
        )
    };
    assert_eq!(
        error_of(&two("a", "1.86.0")),
        "pins.toml:7: duplicate pin id `a` (also on line 1)"
    );
    assert_eq!(
        error_of(&two("b", "1.85.0")),
        "pins.toml:8: duplicate pin: `a` (line 1) already pins 1.85.0"
    );
    // The same release at two commit dates is two different nightlies.
    let nightlies = "[[pin]]\nid = \"a\"\nrelease = \"1.97.0-nightly\"\ncommit-date = \"2026-05-19\"\nrole = \"nightly\"\n\
                     [[pin]]\nid = \"b\"\nrelease = \"1.97.0-nightly\"\ncommit-date = \"2026-05-20\"\nrole = \"nightly\"\n";
    assert_eq!(parse(nightlies).unwrap().pins.len(), 2);
}

#[test]
fn load_names_a_missing_file() {
    let error = Pins::load(Path::new("/nonexistent/pins.toml")).unwrap_err();
    assert!(format!("{error:#}").starts_with("reading the pin file /nonexistent/pins.toml: "));
}

#[test]
fn satisfaction_needs_release_and_commit_date() {
    let pins = parse(GOOD).unwrap();
    let version = |release: &str, date: &str| {
        parse_verbose_version(&format!(
            "rustc {release} (0 {date})\ncommit-date: {date}\nhost: x86_64-unknown-linux-gnu\nrelease: {release}\n"
        ))
        .unwrap()
    };
    assert!(pins.pins[0].is_satisfied_by(&version("1.85.0", "2025-02-17")));
    assert!(!pins.pins[0].is_satisfied_by(&version("1.85.1", "2025-02-17")));
    assert!(pins.pins[1].is_satisfied_by(&version("1.97.0-nightly", "2026-05-19")));
    assert!(!pins.pins[1].is_satisfied_by(&version("1.97.0-nightly", "2026-05-18")));
    assert!(!pins.pins[1].is_satisfied_by(&version("1.97.0", "2026-05-19")));
}

#[test]
fn kernel_trees_are_pinned_beside_the_compilers() {
    let text = format!(
        "{GOOD}\n[[tree]]\nid = \"6.12\"\ndebian = \"trixie-security:linux-source-6.12=6.12.118-1\"\n\
         note = \"n\"\n\n[[tree]]\nid = \"mine\"\npath = \"../linux\"\n"
    );
    let pins = parse(&text).unwrap();
    assert_eq!(pins.pins.len(), 2);
    assert_eq!(pins.trees.len(), 2);
    assert_eq!(pins.trees[0].id, "6.12");
    let TreeSource::Debian(source) = &pins.trees[0].source else {
        panic!("{:?}", pins.trees[0]);
    };
    assert_eq!(
        source.to_string(),
        "trixie-security:linux-source-6.12=6.12.118-1"
    );
    assert_eq!(pins.trees[0].note.as_deref(), Some("n"));
    assert_eq!(
        pins.trees[1].source,
        TreeSource::Path(PathBuf::from("../linux"))
    );
    let lines = GOOD.lines().count();
    for (tree, said) in [
        ("id = \"t\"\n", "a tree has exactly one of `debian`"),
        (
            "id = \"t\"\npath = \"/a\"\ndebian = \"sid:linux-source-7.2\"\n",
            "a tree has exactly one of",
        ),
        (
            "debian = \"sid:linux-source-7.2\"\n",
            "this tree has no `id`",
        ),
        (
            "id = \"t\"\ndebian = \"sid:rustc\"\n",
            "is not a kernel source package",
        ),
        ("id = \"../t\"\npath = \"/a\"\n", "is not a short name"),
        (
            "id = \"t\"\nrelease = \"1.85.0\"\n",
            "unknown key `release`; a tree has id, debian, path, note",
        ),
    ] {
        let error = error_of(&format!("{GOOD}\n[[tree]]\n{tree}"));
        assert!(error.contains(said), "{tree:?}: {error}");
        let line: usize = error
            .strip_prefix("pins.toml:")
            .and_then(|rest| rest.split(':').next())
            .and_then(|line| line.parse().ok())
            .unwrap_or_else(|| panic!("{error}"));
        assert!((lines + 2..=lines + 5).contains(&line), "{error}");
    }
    let twice = format!(
        "{GOOD}\n[[tree]]\nid = \"t\"\npath = \"/a\"\n[[tree]]\nid = \"t\"\npath = \"/b\"\n"
    );
    assert!(
        error_of(&twice).contains("duplicate tree id `t`"),
        "{}",
        error_of(&twice)
    );
}
