// SPDX-License-Identifier: GPL-2.0
//! The pin file's TOML: what it reads, what it refuses, and where it says the error is.

use super::*;

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
