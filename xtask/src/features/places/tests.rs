// SPDX-License-Identifier: GPL-2.0
//! The tests of reading gate errors, finding enclosing items and matching shim items, and the
//! matching itself, which only tests use: where the catalog says a shim item is against where the
//! compilers say it is needed.

use super::*;

/// The module path of a shim source file relative to `kernel-shim/src/`
/// (`sync/workqueue.rs` is `["sync", "workqueue"]`, `sync/mod.rs` is `["sync"]`, `lib.rs` the
/// root).
pub fn module_path(relative: &str) -> Vec<String> {
    let without_extension = relative.strip_suffix(".rs").unwrap_or(relative);
    let mut segments: Vec<String> = without_extension.split('/').map(String::from).collect();
    if matches!(segments.last().map(String::as_str), Some("mod" | "lib")) {
        segments.pop();
    }
    segments
}

/// Whether a place in the shim file `relative` (to `kernel-shim/src/`) is in the catalog's shim
/// item `a::b::N` (`sync::workqueue`, `sync::Arc`, `container_of!`); `names` are those of the
/// items that enclose it and of the macros it was expanded through, `is_module` says whether
/// `a::b::N` is a module of the shim.
///
/// A module's places are those of its file and its submodules' files. Any other item's are those
/// of its module `a::b` (and below) unless that is the crate root, and those that an item or a
/// module named `N` encloses, or a macro named `N` expanded: the architecture half of `asm::read_once_u32_at` is
/// `arch::x86_64::read_once_u32_at`, and `container_of!`'s `&raw` form is `container_of::raw_ref`.
pub fn in_shim_item(shim_item: &str, is_module: bool, relative: &str, names: &[&str]) -> bool {
    let segments: Vec<&str> = shim_item.split("::").collect();
    let module = module_path(relative);
    let starts_with = |prefix: &[&str]| {
        module.len() >= prefix.len() && module.iter().zip(prefix).all(|(a, b)| a == b)
    };
    if is_module {
        return starts_with(&segments);
    }
    let Some((name, parent)) = segments.split_last() else {
        return false;
    };
    let bare = name.trim_end_matches('!');
    (!parent.is_empty() && starts_with(parent))
        || module.iter().any(|segment| segment == bare)
        || names.iter().any(|item| {
            // A macro as invoked may carry its path: `kernel::static_branch_unlikely!`.
            item.rsplit("::")
                .next()
                .unwrap_or(item)
                .trim_end_matches('!')
                == bare
        })
}

fn error(code: Option<&str>, message: &str, file: &str, line: u64, help: &str) -> String {
    let code = code.map(|code| json::json!({ "code": code }));
    json::json!({
        "level": "error",
        "message": message,
        "code": code,
        "children": [{ "message": help }],
        "spans": [{
            "file_name": file,
            "line_start": line,
            "column_start": 5,
            "is_primary": true,
            "expansion": null,
        }],
    })
    .to_string()
}

#[test]
fn reads_gate_errors_attributes_and_other_errors() {
    let stderr = [
        error(Some("E0725"), "not allowed", "lib.rs", 3, ""),
        error(Some("E0658"), "x is experimental", "a.rs", 3, ""),
        error(Some("E0658"), "x is experimental", "a.rs", 3, ""),
        error(
            None,
            "`write` is not yet stable as a const fn",
            "b.rs",
            9,
            "add `#![feature(const_ptr_write)]` to the crate attributes to enable",
        ),
        error(None, "aborting due to 3 previous errors", "", 0, ""),
    ]
    .join("\n");
    let read = read_gate_errors(&stderr);
    let at = |file: &str, line: u64| Location {
        file: file.into(),
        line,
        column: 5,
    };
    assert_eq!(read.attributes, [at("lib.rs", 3)]);
    let places: Vec<&Location> = read.places.iter().map(|place| &place.location).collect();
    assert_eq!(places, [&at("a.rs", 3), &at("b.rs", 9)]);
    assert_eq!(read.other_error, None);
    let other = read_gate_errors(&error(Some("E0308"), "mismatched types", "c.rs", 1, ""));
    assert_eq!(
        other.other_error.as_deref(),
        Some("error[E0308]: mismatched types (at c.rs:1:5)")
    );
}

#[test]
fn finds_the_enclosing_items_from_the_layout() {
    let source = "\
pub mod gated {
    use crate::sync::ArcBorrow;

    pub trait WorkItem: Send + Sync {
        fn run(self: ArcBorrow<'_, Self>);
    }
}

unsafe impl<T: ?Sized + Unsize<U>, U: ?Sized> CoerceUnsized<Arc<U>> for crate::sync::Arc<T> {}

impl<T: ?Sized + Unsize<U>, U: ?Sized> core::ops::DispatchFromDyn<ArcBorrow<'_, U>>
    for ArcBorrow<'_, T>
{
    fn f() {}
}

impl StaticKey {
    #[cfg_attr(
        kshim_kernel_mode,
        expect(lint)
    )]
    pub const INIT: Self = Self::new();
}
";
    let names = |line: u64| -> Vec<String> {
        enclosing_items(source, line)
            .into_iter()
            .map(|item| item.name)
            .collect()
    };
    assert_eq!(names(5), ["gated", "WorkItem", "run"]);
    assert_eq!(
        enclosing_items(source, 5)[2].header,
        "fn run(self: ArcBorrow<'_, Self>)"
    );
    assert_eq!(names(9), ["Arc"]);
    assert_eq!(names(22), ["StaticKey", "INIT"]);
    assert_eq!(names(20), ["StaticKey", "INIT"]);
    assert_eq!(names(18), ["StaticKey", "INIT"]);
    assert_eq!(names(14), ["ArcBorrow", "f"]);
    assert_eq!(names(11), ["ArcBorrow"]);
    assert_eq!(names(2), ["gated"]);
    assert!(names(99).is_empty());
}

#[test]
fn shim_items_are_matched_by_module_or_enclosing_name() {
    assert!(in_shim_item(
        "sync::workqueue",
        true,
        "sync/workqueue.rs",
        &[]
    ));
    assert!(!in_shim_item(
        "sync::workqueue",
        true,
        "sync/arc.rs",
        &["Arc"]
    ));
    assert!(in_shim_item("sync::Arc", false, "sync/arc.rs", &["Arc"]));
    assert!(in_shim_item(
        "container_of!",
        false,
        "container_of/raw_ref.rs",
        &[]
    ));
    let arch = "arch/x86_64.rs";
    assert!(in_shim_item(
        "asm::read_once_u32_at",
        false,
        arch,
        &["read_once_u32_at"]
    ));
    assert!(!in_shim_item(
        "asm::read_once_u32_at",
        false,
        arch,
        &["load"]
    ));
    let through = [
        "kernel::static_branch_unlikely!",
        "$crate::__arch_static_branch!",
    ];
    assert!(in_shim_item(
        "jump_label::static_branch_unlikely",
        false,
        arch,
        &through
    ));
    assert!(!in_shim_item(
        "container_of!",
        false,
        "sync/arc.rs",
        &["Arc"]
    ));
    assert_eq!(module_path("sync/mod.rs"), ["sync"]);
    assert!(module_path("lib.rs").is_empty());
}
