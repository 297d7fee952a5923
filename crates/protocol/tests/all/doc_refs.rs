//! The design record stays true to what cites it. Code comments and documents cite the project's
//! own documents: `SPEC §5.2` (a section of docs/SPEC.md), `FORMATS §13.2` (of docs/FORMATS.md),
//! `TESTING.md layer 3`, `API.md "Security"` (a heading by name), or a document alone. This test
//! reads every source and document file of the repository and fails, naming the file and line,
//! when a cited section, heading or document does not exist.
//!
//! A `§` with no document named before it in the same sentence is a SPEC section, except inside
//! docs/FORMATS.md and docs/SPEC.md, where it is the document's own.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The section sign, spelled out so that this file cites nothing itself.
const SIGN: char = '\u{a7}';

/// The project's documents by stem, and the directory each lives in (relative to the root).
const DOCS: [(&str, &str); 9] = [
    ("SPEC", "docs"),
    ("ARCHITECTURE", "docs"),
    ("TESTING", "docs"),
    ("STYLE", "docs"),
    ("FORMATS", "docs"),
    ("API", "docs"),
    ("BENCHMARKS", ""),
    ("README", ""),
    ("CONTRIBUTING", ""),
];

/// Extensions of the files whose text is checked.
const TEXT: [&str; 10] = ["rs", "md", "toml", "js", "mjs", "html", "css", "py", "sh", "txt"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn doc_path(stem: &str) -> Option<PathBuf> {
    let (_, dir) = DOCS.iter().find(|(s, _)| *s == stem)?;
    Some(root().join(dir).join(format!("{stem}.md")))
}

/// Every file to check: the documents at the root and in docs/, `.ci/run`, and the text files
/// under crates/ (build output and installed packages left out).
fn files() -> Vec<PathBuf> {
    let r = root();
    let mut out = vec![r.join(".ci/run")];
    for dir in [r.clone(), r.join("docs")] {
        for e in fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    let mut stack = vec![r.join("crates")];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let name = e.file_name();
            if e.file_type().unwrap().is_dir() {
                if !matches!(name.to_str(), Some("target" | "node_modules" | ".git")) {
                    stack.push(p);
                }
            } else if p
                .extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| TEXT.contains(&x))
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A markdown document's headings outside code fences: their numbers (`5.2`, `4b`) and their
/// texts, lower-cased.
struct Headings {
    numbers: BTreeSet<String>,
    texts: Vec<String>,
}

fn headings(doc: &Path) -> Headings {
    let text = fs::read_to_string(doc).unwrap();
    let mut h = Headings {
        numbers: BTreeSet::new(),
        texts: Vec::new(),
    };
    let mut fenced = false;
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim();
        if let Some(first) = title.split_whitespace().next() {
            let number = first.trim_end_matches('.');
            if number.starts_with(|c: char| c.is_ascii_digit()) {
                h.numbers.insert(number.to_string());
            }
        }
        h.texts.push(title.to_lowercase());
    }
    h
}

/// The section number right after a `§` (`5.2` of `§5.2.`), if one is there.
fn section_at(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_ascii_digit() {
            out.push(c);
            chars.next();
        } else if c == '.' && out.ends_with(|d: char| d.is_ascii_digit()) {
            let mut ahead = chars.clone();
            ahead.next();
            if ahead.peek().is_some_and(|d| d.is_ascii_digit()) {
                out.push(c);
                chars.next();
            } else {
                break;
            }
        } else {
            break;
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Which numbered document a section sign at byte `at` of `text` belongs to: the nearest `SPEC` or
/// `FORMATS` before it in the same sentence (a table cell, a paragraph, at most 200 bytes), unless
/// that name sits in parentheses that close before the sign; else `default`.
fn owner<'a>(text: &str, at: usize, default: &'a str) -> &'a str {
    let mut start = at.saturating_sub(200);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let before = &text[start..at];
    let cut = [". ", ".\n", "|", "\n\n"]
        .iter()
        .filter_map(|s| before.rfind(s).map(|i| i + s.len()))
        .max()
        .unwrap_or(0);
    let sentence = without_link_targets(&before[cut..]);
    let named = |doc: &'static str| {
        let i = sentence.rfind(doc)?;
        let between = &sentence[i..];
        let closed = between.matches(')').count() > between.matches('(').count();
        (!closed).then_some((i, doc))
    };
    match named("SPEC").max(named("FORMATS")) {
        Some((_, doc)) => doc,
        None => default,
    }
}

/// `text` without the targets of its markdown links: `[FORMATS.md](FORMATS.md) x` is `[FORMATS.md] x`,
/// so a link's parentheses hide no document name.
fn without_link_targets(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        out.push_str(&rest[..=i]);
        rest = &rest[i + 2..];
        match rest.find(')') {
            Some(j) => rest = &rest[j + 1..],
            None => rest = "",
        }
    }
    out.push_str(rest);
    out
}

/// A quoted title as the reader sees it: a title that wraps onto the next comment line is one line.
fn unwrapped(title: &str) -> String {
    let lines = title
        .lines()
        .map(|l| l.trim().trim_start_matches(['/', '!', '#', '*']).trim());
    lines.collect::<Vec<_>>().join(" ").to_lowercase()
}

/// What one file cites that does not exist, as `file:line: what`.
fn broken_in(file: &Path, text: &str, docs: &[(String, Headings)]) -> Vec<String> {
    let r = root();
    let rel = file.strip_prefix(&r).unwrap_or(file).display().to_string();
    let line_of = |at: usize| text[..at].matches('\n').count() + 1;
    let heads = |stem: &str| docs.iter().find(|(s, _)| s == stem).map(|(_, h)| h);
    let default = match rel.as_str() {
        "docs/FORMATS.md" => "FORMATS",
        _ => "SPEC",
    };
    let mut out = Vec::new();

    // Sections: `§N`.
    for (at, _) in text.match_indices(SIGN) {
        let Some(number) = section_at(&text[at + SIGN.len_utf8()..]) else {
            continue;
        };
        let doc = owner(text, at, default);
        if !heads(doc).is_some_and(|h| h.numbers.contains(&number)) {
            out.push(format!(
                "{rel}:{}: {doc} {SIGN}{number}: no such section in {doc}.md",
                line_of(at)
            ));
        }
    }

    // Documents by name, with a quoted heading or TESTING's layers after them.
    for (stem, _) in DOCS {
        let name = format!("{stem}.md");
        for (at, _) in text.match_indices(&name) {
            let prev = text[..at].chars().next_back();
            if prev.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                continue;
            }
            // A path: `docs/X.md`, or relative to the citing document (`../X.md`).
            let path_start = text[..at]
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || "_./-".contains(c)))
                .map_or(0, |i| i + 1);
            let written = &text[path_start..at + name.len()];
            let target = if written == name {
                doc_path(stem).unwrap()
            } else if written.starts_with("docs/") || written.starts_with("crates/") {
                r.join(written)
            } else if rel.ends_with(".md") {
                file.parent().unwrap().join(written)
            } else {
                r.join(written)
            };
            if !target.is_file() {
                out.push(format!("{rel}:{}: `{written}` does not exist", line_of(at)));
                continue;
            }
            let after = &text[at + name.len()..];
            let after = after.strip_prefix('`').unwrap_or(after);
            let spaced = after.trim_start_matches(' ');
            if spaced.len() == after.len() {
                continue;
            }
            let quoted = spaced
                .strip_prefix("\\\"")
                .map(|s| (s, "\\\""))
                .or_else(|| spaced.strip_prefix('"').map(|s| (s, "\"")));
            if let Some((rest, close)) = quoted {
                let Some(end) = rest.find(close) else { continue };
                let title = unwrapped(&rest[..end]);
                let h = headings(&target);
                if !h.texts.iter().any(|t| t.contains(&title)) {
                    out.push(format!(
                        "{rel}:{}: {written} has no heading \"{title}\"",
                        line_of(at)
                    ));
                }
            } else if stem == "TESTING" {
                let Some(rest) = spaced
                    .strip_prefix("layers ")
                    .or_else(|| spaced.strip_prefix("layer "))
                else {
                    continue;
                };
                let h = headings(&target);
                let mut rest = rest;
                loop {
                    let n: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
                    if !n.starts_with(|c: char| c.is_ascii_digit()) {
                        break;
                    }
                    if !h.numbers.contains(&n) {
                        out.push(format!("{rel}:{}: TESTING.md has no layer {n}", line_of(at)));
                    }
                    rest = &rest[n.len()..];
                    let Some(next) = [" and ", ", ", "–"].iter().find_map(|s| rest.strip_prefix(s)) else {
                        break;
                    };
                    rest = next;
                }
            }
        }
    }
    out
}

#[test]
fn every_cited_section_and_document_exists() {
    let docs: Vec<(String, Headings)> = DOCS
        .iter()
        .filter_map(|(stem, _)| {
            let p = doc_path(stem)?;
            p.is_file().then(|| (stem.to_string(), headings(&p)))
        })
        .collect();
    for needed in ["SPEC", "ARCHITECTURE", "TESTING", "FORMATS", "API"] {
        assert!(
            docs.iter().any(|(s, _)| s == needed),
            "docs/{needed}.md is missing"
        );
    }
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in files() {
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        checked += 1;
        broken.extend(broken_in(&file, &text, &docs));
    }
    assert!(checked > 100, "only {checked} files found: is the root right?");
    assert!(
        broken.is_empty(),
        "citations of the design record that do not resolve:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_checker_catches_what_is_missing() {
    let docs = vec![
        (
            "SPEC".to_string(),
            Headings {
                numbers: ["5", "5.2"].iter().map(|s| s.to_string()).collect(),
                texts: vec!["5. rewind".into(), "5.2 code restore".into()],
            },
        ),
        (
            "FORMATS".to_string(),
            Headings {
                numbers: ["13.2"].iter().map(|s| s.to_string()).collect(),
                texts: vec!["13.2 gap reasons".into()],
            },
        ),
    ];
    let file = root().join("crates/x.rs");
    let check = |text: &str| broken_in(&file, text, &docs);
    let s = SIGN;
    assert!(check(&format!("// SPEC {s}5.2 rule 2b, {s}5.")).is_empty());
    assert!(check(&format!("// (FORMATS {s}13.2), then SPEC {s}5")).is_empty());
    assert!(check(&format!("// (SPEC {s}5), as FORMATS says; and {s}13.2")).is_empty());
    assert_eq!(
        check(&format!("// SPEC {s}5.2 (but see FORMATS {s}5.2)")).len(),
        1
    );
    assert!(check(&format!("/// as TESTING.md layer 2 and SPEC {s}5.2 say")).is_empty());
    assert!(check(&format!("see [FORMATS.md](FORMATS.md) {s}13.2")).is_empty());
    assert_eq!(check(&format!("// SPEC {s}5.3")).len(), 1);
    assert_eq!(check(&format!("// the spec {s}9")).len(), 1);
    assert_eq!(check(&format!("// FORMATS {s}5.2")).len(), 1);
    let missing = ["NOPE", ".md"].concat();
    assert!(
        check(&missing).is_empty(),
        "only the project's documents are checked"
    );
    let stale = ["docs/", "TESTING", ".md"].concat();
    assert!(check(&stale).is_empty());
    let other = ["../elsewhere/", "SPEC", ".md"].concat();
    assert_eq!(check(&other).len(), 1, "a path outside the record");
}
