// SPDX-License-Identifier: GPL-2.0
//! The recording machine's absolute paths, taken out of a generated file: the reports keep
//! `/home/me/kshim/target/...` and `/root/.rustup/...`, the pages show `target/...` and
//! `~/.rustup/...`.

/// Where a path leaves the recording machine's own part: the checkout's `target/` (kept from
/// `target/` on) and rustup's and cargo's homes (kept from `~/`).
const ANCHORS: [(&str, &str); 3] = [
    ("/target/", "target/"),
    ("/.rustup/", "~/.rustup/"),
    ("/.cargo/", "~/.cargo/"),
];

/// Whether `byte` can be part of a path as a generated file writes it (Markdown escapes `_` as
/// `\_`).
fn in_path(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"/._-+~=\\".contains(&byte)
}

/// `text` with every absolute path that runs through an anchor rewritten from the anchor on;
/// a URL (`https://host/target/...`) is left as it is.
pub fn without_machine_paths(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut at = 0;
    while at < bytes.len() {
        let Some((anchor, shown)) = ANCHORS
            .iter()
            .find(|(anchor, _)| bytes[at..].starts_with(anchor.as_bytes()))
        else {
            at += 1;
            continue;
        };
        let mut start = at;
        while start > copied && in_path(bytes[start - 1]) {
            start -= 1;
        }
        let absolute = bytes[start] == b'/' && (start == 0 || bytes[start - 1] != b':');
        if absolute && !bytes[start..at].starts_with(b"//") {
            out.push_str(&text[copied..start]);
            out.push_str(shown);
            copied = at + anchor.len();
        }
        at += anchor.len();
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::without_machine_paths;

    #[test]
    fn absolute_paths_are_shown_from_the_checkout_or_the_home_directory() {
        for (text, shown) in [
            (
                "Rust compiler '/work/wt/kgrid/target/kernel/wrappers/1.78.0/rustc' is too new",
                "Rust compiler 'target/kernel/wrappers/1.78.0/rustc' is too new",
            ),
            (
                "(/home/a\\_b/kshim/target/kernel/trees/x/rust/alloc/lib.rs:170:12)",
                "(target/kernel/trees/x/rust/alloc/lib.rs:170:12)",
            ),
            (
                "<code>/root/.rustup/toolchains/nightly/bin/rustc</code>",
                "<code>~/.rustup/toolchains/nightly/bin/rustc</code>",
            ),
            ("a/target/b and /x/target/y", "a/target/b and target/y"),
            (
                "https://example.org/target/x and target/kshim",
                "https://example.org/target/x and target/kshim",
            ),
            ("nothing to change", "nothing to change"),
        ] {
            assert_eq!(without_machine_paths(text), shown, "{text}");
        }
    }
}
