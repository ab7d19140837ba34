// SPDX-License-Identifier: GPL-2.0
//! Where code needs a feature, as rustc's JSON diagnostics say it (E0658, or an error whose help
//! says to add `#![feature(...)]`), where the feature is enabled (E0725), which items of the
//! source enclose such a place, and the place as every report records it ([`UsedPlace`]).

use crate::util::diagnostics::json_errors;
use crate::util::json::{self, Deserialize, Serialize, Value};
use std::collections::HashMap;
use std::path::Path;

/// A point in a source file, as rustc names it (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "LocationJson", from = "LocationJson")]
pub struct Location {
    /// The file, as rustc names it (absolute when it was given so).
    pub file: String,
    pub line: u64,
    pub column: u64,
}

/// One place the compiler says needs a feature.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Place {
    /// The primary span of the error: inside a macro's definition when a macro expanded there.
    #[serde(rename = "at")]
    pub location: Location,
    /// For a place inside a macro's expansion: the outermost call site, the line that made it.
    #[serde(deserialize_with = "json::nullable")]
    pub call_site: Option<Location>,
    /// The macros it was expanded through, outermost first (`static_branch_unlikely!`).
    pub macros: Vec<String>,
}

/// What the compile without one feature in `-Zallow-features` said (in the cache, as its entry's
/// `usage` member).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateErrors {
    /// Every place that needs the feature, in order, each once.
    pub places: Vec<Place>,
    /// Where the crate enables it: the attributes E0725 points at.
    pub attributes: Vec<Location>,
    /// The first error that is neither of those, which makes the places incomplete.
    #[serde(deserialize_with = "json::nullable")]
    pub other_error: Option<String>,
}

/// A location in the cache's entries: `[file, line, column]`.
type LocationJson = (String, u64, u64);

impl From<Location> for LocationJson {
    fn from(at: Location) -> Self {
        (at.file, at.line, at.column)
    }
}

impl From<LocationJson> for Location {
    fn from((file, line, column): LocationJson) -> Self {
        Location { file, line, column }
    }
}

fn location(span: &Value) -> Location {
    Location {
        file: span["file_name"].as_str().unwrap_or_default().to_string(),
        line: span["line_start"].as_u64().unwrap_or(0),
        column: span["column_start"].as_u64().unwrap_or(0),
    }
}

/// The outermost call site of a span inside a macro expansion, if it is one, and the macros
/// expanded on the way, outermost first.
fn expansion(span: &Value) -> (Option<Location>, Vec<String>) {
    let spans = std::iter::successors(Some(span), |span| {
        Some(&span["expansion"]["span"]).filter(|next| next.is_object())
    });
    // Expansions nest a few levels at most; the bound guards against a malformed report.
    let spans: Vec<&Value> = spans.take(65).collect();
    let names = spans.iter().take(64).rev();
    let names = names.filter_map(|span| span["expansion"]["macro_decl_name"].as_str());
    let outermost = spans.get(1..).and_then(<[_]>::last);
    (
        outermost.map(|span| location(span)),
        names.map(String::from).collect(),
    )
}

/// Whether a diagnostic or one of its children tells to add `#![feature(...)]`.
fn asks_for_a_feature(diagnostic: &Value) -> bool {
    let says = |value: &Value| {
        value["message"]
            .as_str()
            .is_some_and(|message| message.contains("#![feature("))
    };
    says(diagnostic)
        || diagnostic["children"]
            .as_array()
            .is_some_and(|children| children.iter().any(says))
}

/// Reads rustc's JSON diagnostics (`--error-format=json`) on `stderr`.
pub fn read_gate_errors(stderr: &str) -> GateErrors {
    let mut read = GateErrors::default();
    for diagnostic in json_errors(stderr) {
        let message = diagnostic["message"].as_str().unwrap_or_default();
        let code = diagnostic["code"]["code"].as_str();
        let primary = diagnostic["spans"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|span| span["is_primary"] == true);
        if code == Some("E0725") {
            for span in primary {
                crate::push_once(&mut read.attributes, location(span));
            }
        } else if code == Some("E0658") || asks_for_a_feature(&diagnostic) {
            for span in primary {
                let (call_site, macros) = expansion(span);
                let place = Place {
                    location: location(span),
                    call_site,
                    macros,
                };
                crate::push_once(&mut read.places, place);
            }
        } else if !message.starts_with("aborting due to") && read.other_error.is_none() {
            let at = primary
                .map(location)
                .next()
                .map(|at| format!(" (at {}:{}:{})", at.file, at.line, at.column))
                .unwrap_or_default();
            let code = code.map(|code| format!("[{code}]")).unwrap_or_default();
            read.other_error = Some(format!("error{code}: {message}{at}"));
        }
    }
    read
}

/// The keywords that begin an item, after its visibility and qualifiers.
const ITEM_KEYWORDS: [&str; 11] = [
    "fn",
    "impl",
    "struct",
    "enum",
    "union",
    "trait",
    "mod",
    "const",
    "static",
    "type",
    "macro_rules!",
];

/// The item a line begins, as `(keyword, rest of the line)`, if it begins one.
pub(crate) fn item_header(line: &str) -> Option<(&'static str, &str)> {
    let mut rest = line.trim_start();
    loop {
        let before = rest;
        for qualifier in [
            "pub(crate)",
            "pub(super)",
            "pub(self)",
            "pub",
            "unsafe",
            "async",
        ] {
            let after = rest.strip_prefix(qualifier);
            if let Some(after) = after.filter(|after| after.starts_with(char::is_whitespace)) {
                rest = after.trim_start();
            }
        }
        // `pub(in path)` and `extern "C"` up to their closing character.
        for (open, close) in [("pub(in ", ')'), ("extern \"", '"')] {
            if let Some(after) = rest.strip_prefix(open) {
                rest = after.split_once(close).map_or(after, |(_, after)| after);
                rest = rest.trim_start();
            }
        }
        // `const fn` is a function; a lone `const` an item of its own.
        if let Some(after) = rest.strip_prefix("const fn ") {
            return Some(("fn", after.trim_start()));
        }
        if rest == before {
            break;
        }
    }
    ITEM_KEYWORDS.iter().find_map(|&keyword| {
        let after = rest.strip_prefix(keyword)?;
        let boundary = keyword.ends_with('!')
            || after.starts_with(|c: char| c.is_whitespace() || c == '<' || c == '{');
        boundary.then(|| (keyword, after.trim_start()))
    })
}

pub(crate) fn identifier(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The text after a balanced `<...>` at the start of `text`, or `text` itself.
fn skip_generics(text: &str) -> &str {
    let text = text.trim_start();
    if !text.starts_with('<') {
        return text;
    }
    let mut depth = 0usize;
    for (index, character) in text.char_indices() {
        match character {
            '<' => depth += 1,
            '>' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    return text[index + 1..].trim_start();
                }
            }
            _ => {}
        }
    }
    ""
}

/// One item that encloses a place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnclosingItem {
    /// Its header line as the source has it, trimmed and cut before its body (`fn run(self:
    /// ArcBorrow<'_, Self>)`).
    pub header: String,
    /// The name it is known by: a function's, type's, module's or constant's name, an `impl`'s
    /// self type, a macro's name with `!`.
    pub name: String,
}

fn enclosing_item(keyword: &str, rest: &str, line: &str) -> EnclosingItem {
    let name = match keyword {
        "impl" => {
            let after_generics = skip_generics(rest);
            let self_type = after_generics
                .split_once(" for ")
                .map_or(after_generics, |(_, self_type)| self_type);
            let self_type = self_type.trim_start_matches(['&', '*', '(']).trim_start();
            // A path (`crate::sync::Arc<T>`) is known by its last segment.
            let last = self_type
                .split(['<', ' ', '{'])
                .next()
                .unwrap_or_default()
                .rsplit("::")
                .next()
                .unwrap_or_default();
            identifier(last).to_string()
        }
        "macro_rules!" => format!("{}!", identifier(rest)),
        _ => identifier(rest).to_string(),
    };
    let header = line.trim();
    let header = header
        .find(" {")
        .map_or(header, |end| &header[..end])
        .trim_end_matches([';', '{', ' ']);
    EnclosingItem {
        header: header.to_string(),
        name,
    }
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The items that enclose line `line` (1-based) of `source`, outermost first.
///
/// Read from the layout alone, as rustfmt leaves it: the innermost item is the nearest line at
/// or above the place that begins an item ([`item_header`]) and, unless it is the place's own
/// line, is indented less than it; each enclosing item after it is the nearest such line above
/// indented less than the one before. A place in an outer attribute is the place of the item
/// it is attached to ([`attributed_item`]).
pub fn enclosing_items(source: &str, line: u64) -> Vec<EnclosingItem> {
    let lines: Vec<&str> = source.lines().collect();
    let Some(index) = usize::try_from(line)
        .ok()
        .and_then(|line| line.checked_sub(1))
        .filter(|&index| index < lines.len())
    else {
        return Vec::new();
    };
    let index = attributed_item(&lines, index).unwrap_or(index);
    // An `impl` header may name its self type on a later line, before its `{`.
    let item_at = |at: usize| {
        let mut header = lines[at].to_string();
        for next in lines.iter().skip(at + 1).take(4) {
            if header.contains('{') || header.trim_end().ends_with(';') {
                break;
            }
            header.push(' ');
            header.push_str(next.trim());
        }
        item_header(&header).map(|(keyword, rest)| enclosing_item(keyword, rest, lines[at]))
    };
    let mut items: Vec<EnclosingItem> = item_at(index).into_iter().collect();
    let mut limit = indentation(lines[index]);
    for (position, candidate) in lines[..index].iter().enumerate().rev() {
        if limit == 0 {
            break;
        }
        let outer = !candidate.trim().is_empty() && indentation(candidate) < limit;
        if outer && item_header(candidate).is_some() {
            items.extend(item_at(position));
            limit = indentation(candidate);
        }
    }
    items.reverse();
    items
}

/// The line of the item that an outer attribute around line `index` is attached to (an attribute
/// starts with `#[`, or is opened by such a line at a lower indentation): the first line after
/// it, at its indentation, that is neither an attribute, its closing `)]`, nor a comment.
fn attributed_item(lines: &[&str], index: usize) -> Option<usize> {
    let is_attribute = |line: &str| line.trim_start().starts_with("#[");
    let start = if is_attribute(lines[index]) {
        index
    } else {
        let indent = indentation(lines[index]);
        let opener = lines[..index]
            .iter()
            .rposition(|line| !line.trim().is_empty() && indentation(line) < indent)?;
        if !is_attribute(lines[opener]) {
            return None;
        }
        opener
    };
    let indent = indentation(lines[start]);
    lines[start + 1..]
        .iter()
        .position(|line| {
            let trimmed = line.trim_start();
            indentation(line) == indent
                && !trimmed.is_empty()
                && !["#[", ")", "]", "//"]
                    .iter()
                    .any(|prefix| trimmed.starts_with(prefix))
        })
        .map(|offset| start + 1 + offset)
        .filter(|&item| item_header(lines[item]).is_some())
}

/// A point in the repository: a path relative to its root (or as rustc named it, outside it),
/// 1-based line and column.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SourcePoint {
    pub file: String,
    pub line: u64,
    pub column: u64,
}

/// One place that needs a feature (in the JSON, `at`'s members are the place's own).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsedPlace {
    /// The compile that reported it: `kernel` for the shim, or an example's name.
    pub target: String,
    #[serde(flatten)]
    pub at: SourcePoint,
    /// The header of the innermost enclosing item (`fn run(self: ArcBorrow<'_, Self>)`), if any.
    #[serde(deserialize_with = "json::nullable")]
    pub item: Option<String>,
    /// The names of the enclosing items, outermost first (`gated`, `WorkItem`, `run`).
    pub items: Vec<String>,
    /// For a place inside a macro's expansion: the line that invoked the macro.
    #[serde(deserialize_with = "json::nullable")]
    pub call_site: Option<SourcePoint>,
    /// The macros it was expanded through, outermost first.
    pub macros: Vec<String>,
}

impl SourcePoint {
    /// A location, its file relative to `root` where it lies inside it.
    pub fn of(location: &Location, root: &Path) -> SourcePoint {
        let file = Path::new(&location.file);
        SourcePoint {
            file: file
                .strip_prefix(root)
                .unwrap_or(file)
                .to_string_lossy()
                .into_owned(),
            line: location.line,
            column: location.column,
        }
    }

    /// For a file of the compiler's own library sources, its path from their `library/` on:
    /// the machine's path to them means nothing to a reader.
    pub fn library_path(&self) -> Option<&str> {
        let start = self
            .file
            .find("/library/")
            .filter(|_| self.file.starts_with('/'))?;
        Some(&self.file[start + 1..])
    }
}

/// Makes the compiler's places into [`UsedPlace`]s: files relative to a root, each place with
/// the items around it, read from the sources (each file once).
pub struct PlaceReader<'a> {
    root: &'a Path,
    sources: HashMap<String, Option<String>>,
}

impl<'a> PlaceReader<'a> {
    pub fn new(root: &'a Path) -> Self {
        PlaceReader {
            root,
            sources: HashMap::new(),
        }
    }

    /// `place` as the compile `target` reported it.
    pub fn place(&mut self, target: &str, place: &Place) -> UsedPlace {
        let at = SourcePoint::of(&place.location, self.root);
        let call_site = place
            .call_site
            .as_ref()
            .map(|site| SourcePoint::of(site, self.root));
        // A place inside a macro of another crate (`core::ptr::addr_of_mut!`) is given the
        // items around the call site that expanded it.
        let mut items = Vec::new();
        for candidate in [Some(&at), call_site.as_ref()].into_iter().flatten() {
            let root = self.root;
            let source = self
                .sources
                .entry(candidate.file.clone())
                .or_insert_with(|| std::fs::read_to_string(root.join(&candidate.file)).ok());
            if let Some(source) = source {
                items = enclosing_items(source, candidate.line);
                break;
            }
        }
        UsedPlace {
            target: target.to_string(),
            item: items.last().map(|item| item.header.clone()),
            items: items.into_iter().map(|item| item.name).collect(),
            call_site,
            macros: place.macros.clone(),
            at,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
