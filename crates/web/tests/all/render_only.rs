//! The web page renders what the server sends and decides nothing of its own: no module diffs
//! text (a tool call's diff comes in its item's `changes`), none reads a tool call's arguments
//! (its title, target and changes come in its item), and none works out or names what a turn
//! offers or what a rewind's choices do (a checkpoint entry's `actions`, a plan's `blockers` and
//! `choices` say so, with their labels), nor words why a file conflicts or what was not tracked
//! (each conflict and gap comes with its `says`). Read from the files under
//! `assets/`, so a module not yet listed in `FILES` is checked too.

use std::path::Path;

/// Words a module that computes a diff itself would contain (lower case).
const DIFFING: &[&str] = &[
    "lcs",
    "longest common",
    "linediff",
    "line_diff",
    "myers",
    "levenshtein",
    "edit distance",
    "editdistance",
];

/// Names only a module that reads a tool call's arguments would use (lower case): the arguments
/// themselves, and the edit tools' fields.
const ARGUMENTS: &[&str] = &["arguments", "old_string", "new_string"];

/// Fields a module would read to decide for itself what a turn offers or what a commit does (a
/// checkpoint entry's and a plan's availability, a conflicted file's `on_overwrite`).
const DECIDING: &[&str] = &[
    "can_restore_code",
    "can_restore_conversation",
    "disabled_reason",
    "can_files",
    "can_conversation",
    "requires_confirmation",
    "on_overwrite",
];

/// The names of the actions and conflict choices (lower case): they come in the answers.
const LABELS: &[&str] = &[
    "restore code and conversation",
    "restore conversation",
    "restore code",
    "restore both",
    "fork from here",
    "summarize from here",
    "summarize up to here",
    "restore nothing",
    "skip them",
    "overwrite them",
];

/// The wire names of why a file conflicts and why part of a turn is not restorable, and the
/// digests a conflict's wording is worked out from (lower case): each conflict and gap comes
/// with its words (`says`).
const REASONS: &[&str] = &[
    "manual_edit",
    "external_change",
    "deleted_and_recreated",
    "mode_change",
    "type_change",
    "unreadable",
    "path_unsafe",
    "missing_payload",
    "unverified",
    "legacy_unverified",
    "bash_side_effect",
    "symlink",
    "hardlink",
    "oversized",
    "outside_workspace",
    "external_writer",
    "expired_payload",
    "current_sha256",
    "checkpoint_sha256",
];

/// The page's modules: `(name, text)`.
fn modules() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let mut out: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "js"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    out.sort();
    assert!(
        out.iter().any(|(n, _)| n == "app.js"),
        "no modules under {}",
        dir.display()
    );
    out
}

/// Whether `word` occurs in `line` as a whole word (not inside a longer name).
fn has_word(line: &str, word: &str) -> bool {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    line.match_indices(word).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + word.len()..].chars().next();
        !before.is_some_and(is_name) && !after.is_some_and(is_name)
    })
}

/// The lines of `text` that are code (a line that is only a comment is skipped), numbered from 1,
/// in lower case.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, String)> + '_ {
    text.lines().enumerate().filter_map(|(i, l)| {
        let t = l.trim_start();
        let comment = t.starts_with("//") || t.starts_with("/*") || t.starts_with('*');
        (!comment).then(|| (i + 1, l.to_lowercase()))
    })
}

/// Every place in the page's modules where one of `words` is used as a whole word.
fn uses(words: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for (name, text) in modules() {
        for (n, line) in code_lines(&text) {
            for w in words.iter().filter(|w| has_word(&line, w)) {
                found.push(format!("{name}:{n}: `{w}` in {:?}", line.trim()));
            }
        }
    }
    found
}

#[test]
fn no_module_diffs_text() {
    let found = uses(DIFFING);
    assert!(
        found.is_empty(),
        "the page shows the diffs its items carry (`changes[].diff`) and never makes one:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_module_reads_tool_arguments() {
    let found = uses(ARGUMENTS);
    assert!(
        found.is_empty(),
        "the page shows a tool call's `title`, `target` and `changes` and never reads its arguments:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_module_decides_what_a_turn_offers_or_a_choice_does() {
    let found = uses(DECIDING);
    assert!(
        found.is_empty(),
        "the page offers a checkpoint entry's `actions` and a plan's `blockers` and `choices`, and \
         works out nothing from the fields they are made of:\n{}",
        found.join("\n")
    );
    let found = uses(LABELS);
    assert!(
        found.is_empty(),
        "the page shows the labels of the entry's `actions` and of the plan's `choices`, never its own:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_module_words_a_conflict_or_a_gap() {
    let found = uses(REASONS);
    assert!(
        found.is_empty(),
        "the page shows each conflict's and gap's `says`, the controller's words, never its own:\n{}",
        found.join("\n")
    );
}

#[test]
fn json_is_parsed_only_from_answers_and_events() {
    // `JSON.parse` reads an HTTP answer or an event's data, never a string inside one.
    let mut found = Vec::new();
    for (name, text) in modules() {
        for (n, line) in code_lines(&text) {
            for (i, _) in line.match_indices("json.parse(") {
                let inner = &line[i + "json.parse(".len()..];
                let arg = inner.split(')').next().unwrap_or("").trim();
                if !matches!(arg, "text" | "m.data") {
                    found.push(format!("{name}:{n}: JSON.parse({arg})"));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "JSON parsed from elsewhere:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checks_see_what_they_look_for() {
    let diffing = "const lcs = Array.from({ length: n + 1 });\nexport function lineDiff(a, b) {}";
    let lines: Vec<_> = code_lines(diffing).map(|(_, l)| l).collect();
    assert!(has_word(&lines[0], "lcs") && has_word(&lines[1], "linediff"));
    let args = "const a = JSON.parse(call.arguments);";
    let line = code_lines(args).next().unwrap().1;
    assert!(has_word(&line, "arguments"));
    // a comment, and a longer name, are not uses
    assert_eq!(code_lines("// the arguments").count(), 0);
    assert!(!has_word("const arguments2 = 1;", "arguments"));
    assert!(!has_word("const tlcs = 1;", "lcs"));
    let label = code_lines(r#"["Restore code", (t, b) => rewind(t, "code", b)],"#)
        .next()
        .unwrap()
        .1;
    assert!(has_word(&label, "restore code") && !has_word(&label, "restore code and conversation"));
}
