// SPDX-License-Identifier: GPL-2.0
//! Tests of the pin file: its TOML, every value checked against what it names, the
//! repository's own pins, and the shards.

use super::*;
use crate::catalog::{self, Release};
use crate::version::parse_verbose_version;

/// A pin file with two pins, one of them a nightly.
pub(crate) const GOOD: &str = r#"# A comment line.
[[pin]]
id = "1.85.0"   # a trailing comment
release = "1.85.0"
role = "debian"
debian = "bookworm:rustc-web"
rustup = "1.85.0"
note = "a \"quoted\" word and a # that is not a comment"

[[pin]]  # comment after a header
id = "nightly"
release = "1.97.0-nightly"
commit-date = "2026-05-19"
role = "nightly"
debian = "sid:rustc"
"#;

fn parse(text: &str) -> anyhow::Result<Pins> {
    Pins::parse(text, Path::new("pins.toml"))
}

fn error_of(text: &str) -> String {
    match parse(text) {
        Ok(pins) => panic!("parsed {pins:?}"),
        Err(error) => format!("{error:#}"),
    }
}

/// A one-pin file with `line` added to the pin (which starts on line 1).
fn with_line(line: &str) -> String {
    format!("[[pin]]\nid = \"a\"\nrelease = \"1.85.0\"\nrole = \"feature\"\n{line}\n")
}

#[test]
fn good_file() {
    let pins = parse(GOOD).unwrap();
    assert_eq!(pins.path, Path::new("pins.toml"));
    assert_eq!(
        pins.pins[0],
        Pin {
            id: "1.85.0".into(),
            release: "1.85.0".into(),
            commit_date: None,
            role: PinRole::Debian,
            rustup: Some("1.85.0".into()),
            debian: Some(DebianSource {
                suite: "bookworm".into(),
                package: "rustc-web".into(),
                version: None
            }),
            note: Some("a \"quoted\" word and a # that is not a comment".into()),
            line: 2,
        }
    );
    let nightly = &pins.pins[1];
    assert_eq!(nightly.line, 10);
    assert_eq!(nightly.commit_date.as_deref(), Some("2026-05-19"));
    assert_eq!(
        nightly.debian,
        Some(DebianSource {
            suite: "sid".into(),
            package: "rustc".into(),
            version: None
        })
    );
    assert_eq!(nightly.describe_release(), "1.97.0-nightly (2026-05-19)");
}

#[test]
fn crlf_file() {
    let pins = parse(&GOOD.replace('\n', "\r\n")).unwrap();
    assert_eq!(pins.pins.len(), 2);
    assert_eq!(pins.pins[1].role, PinRole::Nightly);
}

#[test]
fn syntax_errors_name_file_and_line() {
    assert_eq!(
        error_of(&with_line("rustup 1.85.0")),
        "pins.toml:5: expected `key = \"value\"`, found `rustup 1.85.0`"
    );
    assert_eq!(
        error_of(&with_line("rustup = 1.85")),
        "pins.toml:5: the value of `rustup` must be a string, found `1.85`"
    );
    assert_eq!(
        error_of(&with_line("rustup = \"1.85.0")),
        "pins.toml:5: the string value of `rustup` is not closed"
    );
    assert_eq!(
        error_of(&with_line("rustup = \"1.85.0\" extra")),
        "pins.toml:5: unexpected text `extra` after the value of `rustup`"
    );
    assert_eq!(
        error_of(&with_line("note = \"tab\\q\"")),
        "pins.toml:5: in the value of `note`: missing escaped value, expected `b` or `e` or \
         `f` or `n` or `r` or `\\` or `\"` or `x` or `u` or `U`, found `q\"`"
    );
    assert_eq!(
        error_of(&with_line("[pin]")),
        "pins.toml:5: unknown table `[pin]`; the tables are `[[pin]]` and `[[tree]]`"
    );
    assert_eq!(
        error_of("id = \"a\"\n"),
        "pins.toml:1: `id` is outside any `[[pin]]` table; start each pin with `[[pin]]`"
    );
    assert_eq!(error_of("# nothing\n"), "pins.toml: no `[[pin]]` tables");
}

/// Parses `text` and expects its one pin's `note`.
fn note_of(text: &str) -> String {
    let pins = parse(&with_line(text)).unwrap_or_else(|error| panic!("{text:?}: {error:#}"));
    pins.pins[0].note.clone().unwrap()
}

#[test]
fn toml_strings_are_decoded() {
    assert_eq!(
        note_of(r#"note = "tab\t, \"quote\", \\, \u00e9\U0001F980""#),
        "tab\t, \"quote\", \\, é🦀"
    );
    assert_eq!(note_of(r"note = 'C:\no\escapes'"), r"C:\no\escapes");
    assert_eq!(note_of("note = \"\"\"\none\ntwo\"\"\""), "one\ntwo");
    assert_eq!(note_of("note = \"\"\"one \\\n    two\"\"\""), "one two");
    assert_eq!(note_of("note = '''\n'quoted' \\n'''"), "'quoted' \\n");
    assert_eq!(note_of("note = \"a\tb\""), "a\tb");
    assert_eq!(note_of("\"note\" = 'quoted key'"), "quoted key");
    assert_eq!(note_of("'note' = \"literal key\""), "literal key");
    assert_eq!(
        note_of("note = \"x\" # comment with \"quotes\" and 'apostrophes'"),
        "x"
    );
    // A multi-line value counts its lines: the next error is on the right one.
    assert_eq!(
        error_of(&with_line("note = \"\"\"\n\n\"\"\"\nchannel = \"x\"")),
        "pins.toml:8: unknown key `channel`; a pin has id, release, commit-date, role, \
         rustup, debian, note"
    );
}

#[test]
fn raw_control_characters_and_bad_toml_are_refused() {
    assert_eq!(
        error_of(&with_line("note = \"a\u{1}b\"")),
        "pins.toml:5: in the value of `note`: invalid basic string, expected \
         non-double-quote visible characters or `\\`, found `\\u{1}b\"`"
    );
    assert!(error_of(&with_line("note = 'a\u{7f}b'"))
        .starts_with("pins.toml:5: in the value of `note`: invalid literal string"));
    assert!(error_of(&with_line("note = \"\"\"a\u{0}b\"\"\""))
        .starts_with("pins.toml:5: in the value of `note`: invalid multi-line basic string"));
    assert!(error_of(&with_line("# a \u{1b} in a comment"))
        .starts_with("pins.toml:5: invalid comment character"));
    assert!(error_of(&with_line("note = \"x\"\rrustup = \"y\""))
        .starts_with("pins.toml:5: carriage return must be followed by newline"));
    assert!(error_of(&with_line("note = \"bad \\q escape\""))
        .starts_with("pins.toml:5: in the value of `note`: missing escaped value"));
    assert!(error_of(&with_line("note = \"\\u00\""))
        .starts_with("pins.toml:5: in the value of `note`: too few unicode value digits"));
    assert!(error_of(&with_line("note = \"\\uD800\""))
        .starts_with("pins.toml:5: in the value of `note`: "));
    assert_eq!(
        error_of(&with_line("note = '''never closed")),
        "pins.toml:5: the string value of `note` is not closed"
    );
    assert_eq!(
        error_of(&with_line("note = [\"a\", \"b\"]")),
        "pins.toml:5: the value of `note` must be a string, found `[\"a\", \"b\"]`"
    );
    assert_eq!(
        error_of(&with_line("note = { text = \"a\" }")),
        "pins.toml:5: the value of `note` must be a string, found `{ text = \"a\" }`"
    );
    assert_eq!(
        error_of(&with_line("note = true")),
        "pins.toml:5: the value of `note` must be a string, found `true`"
    );
    assert_eq!(
        error_of(&with_line("[[pin]")),
        "pins.toml:5: unclosed array table, expected `]`"
    );
    assert_eq!(
        error_of(&with_line("[[pins]]")),
        "pins.toml:5: unknown table `[[pins]]`; the tables are `[[pin]]` and `[[tree]]`"
    );
    assert_eq!(
        error_of(&with_line("[[pin.extra]]")),
        "pins.toml:5: unknown table `[[pin.extra]]`; the tables are `[[pin]]` and `[[tree]]`"
    );
    assert_eq!(
        error_of(&with_line("note.text = \"a\"")),
        "pins.toml:5: unknown key `note.text`; a pin has id, release, commit-date, role, \
         rustup, debian, note"
    );
    // The same key, quoted or not, is one key.
    assert_eq!(
        error_of(&with_line("\"role\" = \"debian\"")),
        "pins.toml:5: duplicate key `role` (first set on line 4)"
    );
    // The first error of the file wins, whatever its kind.
    assert_eq!(
        error_of(&with_line("channel = \"x\"\nnote = \"a\u{1}b\"\nrustup 1")),
        "pins.toml:5: unknown key `channel`; a pin has id, release, commit-date, role, \
         rustup, debian, note"
    );
    assert_eq!(
        error_of(&with_line("rustup 1\nchannel = \"x\"")),
        "pins.toml:5: expected `key = \"value\"`, found `rustup 1`"
    );
}

#[test]
fn commit_dates_must_be_days_of_the_calendar() {
    for bad in [
        "2026-13-45",
        "2026-02-30",
        "2025-02-29",
        "2026-04-31",
        "2026-00-10",
    ] {
        assert_eq!(
            error_of(&with_line(&format!("commit-date = \"{bad}\""))),
            format!("pins.toml:5: the commit date `{bad}` is not YYYY-MM-DD")
        );
    }
    let leap_day = parse(&with_line("commit-date = \"2024-02-29\"")).unwrap();
    assert_eq!(leap_day.pins[0].commit_date.as_deref(), Some("2024-02-29"));
}

#[test]
fn unusual_but_legal_toml_reads_as_the_plain_file() {
    // GOOD, line for line, with a byte order mark, CRLF line ends, quoted keys, literal
    // and multi-line strings, escapes, tabs, and comments in odd places.
    let unusual = "\u{feff}# A comment line.\r\n\
                   [[ \"pin\" ]]\r\n\
                   \"id\" = '1.85.0'#\r\n\
                   'release'=\"1.85\\u002E0\"\r\n\
                   \trole\t=\t\"debian\"   \r\n\
                   debian = \"\"\"bookworm:rustc-web\"\"\"\r\n\
                   rustup = '''1.85.0'''\r\n\
                   note = 'a \"quoted\" word and a # that is not a comment'\r\n\
                   \t\r\n\
                   [[pin]]#[[pin]]\r\n\
                   id = \"\\u006Eightly\"\r\n\
                   release = \"1.97.0-nightly\"\r\n\
                   \"commit-date\" = \"2026-05-19\"\r\n\
                   role = \"\\U0000006Eightly\"\r\n\
                   debian = \"\"\"\\\r\n      sid:rustc\"\"\"\r\n";
    let plain = parse(GOOD).unwrap();
    let unusual = parse(unusual).unwrap_or_else(|error| panic!("{error:#}"));
    assert_eq!(unusual.pins, plain.pins);
}

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
fn repository_pins() -> Pins {
    Pins::load(&Pins::default_path()).unwrap_or_else(|error| panic!("{error:#}"))
}

fn pinned(pins: &Pins, release: Release, role: PinRole) -> bool {
    pins.pins
        .iter()
        .any(|pin| pin.release == release.to_string() && pin.role == role)
}

#[test]
fn every_release_the_catalog_names_is_pinned() {
    let pins = repository_pins();
    assert!(
        pinned(&pins, catalog::MINIMUM_RELEASE, PinRole::Minimum),
        "toolchains.toml has no `minimum` pin for {}",
        catalog::MINIMUM_RELEASE
    );
    let mut releases: Vec<Release> = catalog::FEATURES
        .iter()
        .flat_map(|feature| [feature.stable_since, feature.known_since])
        .flatten()
        .chain([catalog::HAS_COERCE_POINTEE.from])
        .collect();
    releases.sort();
    releases.dedup();
    for release in releases {
        assert!(
            pinned(&pins, release, PinRole::Feature),
            "the catalog names {release} but toolchains.toml has no `feature` pin for it"
        );
    }
    for pin in pins.pins.iter().filter(|pin| pin.role == PinRole::Feature) {
        let (release, _) = parse_release(&pin.release).unwrap();
        assert!(
            !crate::expect::catalog_facts(release).is_empty(),
            "toolchains.toml:{}: pin `{}` has role `feature` but the catalog names no \
             feature at {release}",
            pin.line,
            pin.id
        );
    }
}

#[test]
fn the_rust_toolchain_pin_is_rust_toolchain_toml_channel() {
    let pins = repository_pins();
    let file = crate::project_root().join("rust-toolchain.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    let channel = text
        .lines()
        .find_map(|line| line.trim().strip_prefix("channel = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap_or_else(|| panic!("no channel in {}", file.display()));
    let pin = pins
        .pins
        .iter()
        .find(|pin| pin.role == PinRole::RustToolchain)
        .expect("toolchains.toml has no `rust-toolchain` pin");
    assert_eq!(pin.release, channel, "toolchains.toml:{}", pin.line);
    assert_eq!(
        pin.rustup.as_deref(),
        Some(channel),
        "toolchains.toml:{}",
        pin.line
    );
}

#[test]
fn the_repository_pins_what_the_project_needs() {
    let pins = repository_pins();
    let releases: Vec<(&str, &str)> = pins
        .pins
        .iter()
        .map(|pin| (pin.release.as_str(), pin.role.word()))
        .collect();
    for wanted in [
        ("1.63.0", "debian"),
        ("1.85.0", "debian"),
        ("1.96.0", "debian"),
        ("1.97.0-nightly", "nightly"),
    ] {
        assert!(releases.contains(&wanted), "{wanted:?} is not pinned");
    }
    let nightly = pins
        .pins
        .iter()
        .find(|pin| pin.role == PinRole::Nightly)
        .unwrap();
    assert_eq!(nightly.commit_date.as_deref(), Some("2026-05-19"));
}

/// The pins of a file of `count` pins, `1.0.0` to `1.{count - 1}.0`, each with its rustup
/// name.
pub(crate) fn numbered_pins(count: usize) -> Pins {
    Pins::parse(&numbered_pins_text(count), Path::new("test.toml")).unwrap()
}

fn numbered_pins_text(count: usize) -> String {
    (0..count)
        .map(|n| format!("[[pin]]\nid = \"1.{n}.0\"\nrelease = \"1.{n}.0\"\nrole = \"feature\"\nrustup = \"1.{n}.0\"\n\n"))
        .collect()
}

#[test]
fn shards_are_balanced_disjoint_and_complete() {
    let pins = numbered_pins(11);
    for count in 1..=11 {
        let mut seen = Vec::new();
        let mut sizes = Vec::new();
        for index in 1..=count {
            let members = Shard { index, count }.pins(&pins.pins);
            sizes.push(members.len());
            seen.extend(members.iter().map(|pin| pin.id.clone()));
        }
        seen.sort();
        let mut all: Vec<String> = pins.pins.iter().map(|pin| pin.id.clone()).collect();
        all.sort();
        assert_eq!(
            seen, all,
            "{count} shards must cover every pin exactly once"
        );
        let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
        assert!(max - min <= 1, "{count} shards are unbalanced: {sizes:?}");
    }
}

#[test]
fn shard_syntax() {
    let shard = Shard::parse("13/13").unwrap();
    assert_eq!(
        shard.check(12).unwrap_err().to_string(),
        "--shard 13/13 splits 12 toolchains into 13 shards; at most 12 can each have one"
    );
    assert!(Shard::parse("12/12").unwrap().check(12).is_ok());
    assert_eq!(Shard::parse("2/5").unwrap(), Shard { index: 2, count: 5 });
    for bad in ["0/3", "4/3", "3", "a/b", "1/0", ""] {
        let error = Shard::parse(bad).unwrap_err().to_string();
        assert!(error.contains("K/N"), "{bad:?}: {error}");
    }
}

#[test]
fn release_ranges_read_as_cargo_hack_writes_them() {
    use crate::catalog::Release;
    use crate::pins::ReleaseRange;
    let release = |minor, patch| Release::new(1, minor, patch);
    let inside =
        |text: &str, candidate: Release| ReleaseRange::parse(text).unwrap().contains(candidate);
    assert!(inside("1.78..", release(78, 0)) && inside("1.78..", release(98, 1)));
    assert!(!inside("1.78..", release(63, 0)));
    assert!(inside("1.78..1.85", release(84, 1)) && !inside("1.78..1.85", release(85, 0)));
    assert!(inside("1.78..=1.85", release(85, 1)) && !inside("1.78..=1.85", release(86, 0)));
    assert!(inside("..=1.85.0", release(85, 0)) && !inside("..=1.85.0", release(85, 1)));
    assert!(inside("..", release(48, 0)));
    for bad in ["1.78", "1.x..", "..=", "1.78...1.80"] {
        assert!(ReleaseRange::parse(bad).is_err(), "{bad}");
    }
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

#[test]
fn the_repository_pins_the_four_debian_trees() {
    let ids: Vec<String> = repository_pins()
        .trees
        .iter()
        .map(|tree| tree.id.clone())
        .collect();
    assert_eq!(ids, ["6.1", "6.12", "7.2", "7.3"]);
}
