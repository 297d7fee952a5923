use super::*;

fn change(action: ChangeAction, old: Side<'_>, new: Side<'_>) -> FileChange {
    file_change("f.txt".into(), action, old, new)
}

#[test]
fn counts_and_hunks() {
    let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
    let new = "a\nb\nC\nd\ne\nf\ng\nh\ni\nj\nk\n";
    let d = unified(old, new);
    assert_eq!((d.added, d.removed, d.truncated), (2, 1, false));
    assert_eq!(
        d.text,
        "@@ -1,6 +1,6 @@\n a\n b\n-c\n+C\n d\n e\n f\n@@ -8,3 +8,4 @@\n h\n i\n j\n+k\n"
    );
}

#[test]
fn equal_texts_have_no_hunks() {
    assert_eq!(unified("same\n", "same\n"), UnifiedDiff::default());
    assert_eq!(unified("", ""), UnifiedDiff::default());
}

#[test]
fn creation_and_deletion() {
    let c = change(ChangeAction::Create, Side::Absent, Side::Bytes(b"x\ny\n"));
    assert_eq!(c.diff, "@@ -0,0 +1,2 @@\n+x\n+y\n");
    assert_eq!((c.added, c.removed, c.binary), (2, 0, false));
    let d = change(ChangeAction::Delete, Side::Bytes(b"x\ny\nz"), Side::Absent);
    assert_eq!(
        d.diff,
        "@@ -1,3 +0,0 @@\n-x\n-y\n-z\n\\ No newline at end of file\n"
    );
    assert_eq!((d.added, d.removed), (0, 3));
    let one = change(ChangeAction::Create, Side::Absent, Side::Bytes(b"x\n"));
    assert_eq!(one.diff, "@@ -0,0 +1 @@\n+x\n");
}

#[test]
fn a_missing_final_newline_shows() {
    let d = unified("a\nb", "a\nb\n");
    assert_eq!(
        d.text,
        "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
    );
    assert_eq!((d.added, d.removed), (1, 1));
    let d = unified("a\n", "a\nb");
    assert_eq!(d.text, "@@ -1 +1,2 @@\n a\n+b\n\\ No newline at end of file\n");
}

#[test]
fn crlf_line_endings_are_kept() {
    let d = unified("one\r\ntwo\r\nthree\r\n", "one\r\n2\r\nthree\r\n");
    assert_eq!(d.text, "@@ -1,3 +1,3 @@\n one\r\n-two\r\n+2\r\n three\r\n");
    assert_eq!((d.added, d.removed), (1, 1));
    // Only the line endings change: every line differs.
    let d = unified("a\nb\n", "a\r\nb\r\n");
    assert_eq!((d.added, d.removed), (2, 2));
}

#[test]
fn binary_sides_have_no_diff() {
    for (old, new) in [
        (Side::Bytes(b"a\0b\n"), Side::Bytes(b"a\n")),
        (Side::Bytes(b"caf\xe9\n"), Side::Bytes(b"cafe\n")),
        (Side::Bytes(b"text\n"), Side::Bytes(b"\xff")),
        (Side::TooLarge, Side::Bytes(b"small\n")),
    ] {
        let c = change(ChangeAction::Modify, old, new);
        assert!(c.binary, "{old:?} {new:?}");
        assert_eq!((c.diff.as_str(), c.added, c.removed), ("", 0, 0));
        assert!(!c.diff_truncated);
    }
    let big = vec![b'x'; MAX_DIFF_INPUT + 1];
    let c = change(ChangeAction::Delete, Side::Bytes(&big), Side::Absent);
    assert!(c.binary);
}

#[test]
fn a_long_diff_is_cut_on_a_line_boundary_with_whole_counts() {
    let new: String = (0..100).map(|i| format!("line {i}\n")).collect();
    let d = retrace_diff::unified("", &new, 100);
    assert!(d.truncated);
    assert!(d.text.len() <= 100, "{}", d.text.len());
    assert!(d.text.ends_with('\n'));
    assert!(d.text.starts_with("@@ -0,0 +1,100 @@\n+line 0\n"), "{}", d.text);
    assert_eq!((d.added, d.removed), (100, 0));
    let whole = unified("", &new);
    assert!(!whole.truncated);
    assert!(whole.text.starts_with(&d.text));

    let huge: String = (0..20_000)
        .map(|i| format!("a longer line number {i}\n"))
        .collect();
    let c = change(ChangeAction::Create, Side::Absent, Side::Bytes(huge.as_bytes()));
    assert!(c.diff_truncated);
    assert!(c.diff.len() <= ITEM_DIFF_CAP);
    assert_eq!(c.added, 20_000);
}

#[test]
fn a_move_has_no_diff() {
    let m = moved("a.txt".into(), "b/a.txt".into());
    assert_eq!(m.action, ChangeAction::Move);
    assert_eq!((m.path.as_str(), m.from.as_deref()), ("b/a.txt", Some("a.txt")));
    assert_eq!((m.diff.as_str(), m.added, m.removed, m.binary), ("", 0, 0, false));
}

/// How long the diff of a 1,000-line file with 10 changed lines takes (prints; never asserts).
/// `cargo test -p retrace-tools --lib diff::tests::timing -- --ignored --nocapture`
#[test]
#[ignore]
fn timing() {
    let old: String = (0..1000)
        .map(|i| format!("    let value_{i} = compute({i}, \"some text\");\n"))
        .collect();
    let new: String = old
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i % 100 == 50 {
                format!("{l} // changed\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let runs = 200;
    let start = std::time::Instant::now();
    let mut d = UnifiedDiff::default();
    for _ in 0..runs {
        d = unified(&old, &new);
    }
    let each = start.elapsed() / runs;
    assert_eq!((d.added, d.removed), (10, 10));
    println!(
        "1,000 lines, 10 changed: {each:?} per diff ({} bytes of diff)",
        d.text.len()
    );
}

/// What the benchmark's whole turn diffs: a ~10 KB text file rewritten whole (every line
/// differs). Prints the time; asserts nothing about it.
/// `cargo test --release -p retrace-tools --lib diff::tests::timing_rewrite -- --ignored --nocapture`
#[test]
#[ignore]
fn timing_rewrite() {
    let text = |seed: u64| -> String {
        (0..200)
            .map(|i| format!("line {i} of {seed}: {}\n", "lorem ipsum dolor ".repeat(2)))
            .collect()
    };
    let (old, new) = (text(1), text(2));
    let runs = 200;
    let start = std::time::Instant::now();
    let mut d = UnifiedDiff::default();
    for _ in 0..runs {
        d = unified(&old, &new);
    }
    let each = start.elapsed() / runs;
    println!(
        "{} bytes rewritten whole: {each:?} per diff ({} bytes of diff, +{} −{})",
        old.len(),
        d.text.len(),
        d.added,
        d.removed
    );
}
