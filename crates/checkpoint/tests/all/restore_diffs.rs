//! What a restore plan shows of each file's text (SPEC §5.2): the diff from the file on disk to
//! what the commit writes, for a modified, created, deleted, binary, CRLF or non-UTF-8 file, cut
//! long diffs and budgets with the whole diff on request, and the diff being exactly what the
//! commit then does.

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use retrace_checkpoint::{
    BeginTurn, Change, CheckpointError, CheckpointStore, CommitOptions, DiffBudget, StoreOptions,
};
use retrace_fsutil::Fs;
use retrace_protocol::{ChangeKind, ConflictReason, FileAction, OnConflict, PlanFile, PLAN_DIFF_CAP};
use retrace_testkit::Scratch;

fn open_with(s: &Scratch, plan_diffs: DiffBudget) -> CheckpointStore {
    let opts = StoreOptions {
        fs: Fs::without_sync(),
        plan_diffs,
        ..StoreOptions::default()
    };
    CheckpointStore::open(&s.sidecar, &s.workspace, opts).unwrap()
}

fn open(s: &Scratch) -> CheckpointStore {
    open_with(s, DiffBudget::default())
}

fn begin(store: &mut CheckpointStore) -> u64 {
    store.begin_turn(BeginTurn::default()).unwrap()
}

/// An agent edit through the seam: `Some(bytes)` writes, `None` deletes.
fn edit(store: &mut CheckpointStore, s: &Scratch, path: &str, bytes: Option<&[u8]>) {
    store
        .capture_before(&[Change::new(path, ChangeKind::Modify)], Some("write_file"))
        .unwrap();
    match bytes {
        Some(b) => s.write(path, b).unwrap(),
        None => fs::remove_file(s.workspace.join(path)).unwrap(),
    }
    store.capture_after(&[PathBuf::from(path)]).unwrap();
}

fn file<'a>(files: &'a [PlanFile], path: &str) -> &'a PlanFile {
    files.iter().find(|f| f.path == path).unwrap()
}

fn text(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap()
}

fn overwrite() -> CommitOptions {
    CommitOptions {
        confirm: true,
        on_conflict: OnConflict::Overwrite,
    }
}

/// `n` numbered lines, `tag` in each.
fn lines(n: usize, tag: &str) -> String {
    (0..n).map(|i| format!("line {i} {tag}\n")).collect()
}

#[test]
fn each_file_carries_the_diff_from_disk_to_what_the_commit_writes() {
    let s = Scratch::new().unwrap();
    s.write("mod.txt", b"one\ntwo\nthree\n").unwrap();
    s.write("gone.txt", b"was here\nand here\n").unwrap();
    s.write("crlf.txt", b"a\r\nb\r\nc\r\n").unwrap();
    s.write("bin.dat", b"\0\x01\x02").unwrap();
    s.write("latin.txt", b"caf\xe9\n").unwrap();
    s.write("same.txt", b"same\n").unwrap();
    let mut store = open(&s);
    let t = begin(&mut store);
    edit(&mut store, &s, "mod.txt", Some(b"one\n2\nthree\nfour\n"));
    edit(&mut store, &s, "new.txt", Some(b"fresh\nfile\n"));
    edit(&mut store, &s, "gone.txt", None);
    edit(&mut store, &s, "crlf.txt", Some(b"a\r\nB\r\nc\r\n"));
    edit(&mut store, &s, "bin.dat", Some(b"\0\x09"));
    edit(&mut store, &s, "latin.txt", Some(b"caf\xe9 au lait\n"));
    edit(&mut store, &s, "same.txt", Some(b"other\n"));
    store.end_turn();
    // Put one back by hand: the restore leaves it unchanged.
    s.write("same.txt", b"same\n").unwrap();

    let plan = store.plan_restore(t).unwrap();
    let f = &plan.plan.files;

    // A modified file: current → before-image.
    let m = file(f, "mod.txt");
    assert_eq!(m.action, FileAction::Write);
    assert_eq!(m.diff.text, "@@ -1,4 +1,3 @@\n one\n-2\n+two\n three\n-four\n");
    assert_eq!((m.diff.added, m.diff.removed), (1, 2));
    assert!(!m.diff.binary && !m.diff.truncated && !m.diff.deferred);

    // A file the turn created: the restore deletes it, the diff goes to nothing.
    let n = file(f, "new.txt");
    assert_eq!(n.action, FileAction::Delete);
    assert_eq!(n.diff.text, "@@ -1,2 +0,0 @@\n-fresh\n-file\n");
    assert_eq!((n.diff.added, n.diff.removed), (0, 2));

    // A file the turn deleted: the restore makes it again, the diff comes from nothing.
    let g = file(f, "gone.txt");
    assert_eq!(g.action, FileAction::Write);
    assert_eq!(g.diff.text, "@@ -0,0 +1,2 @@\n+was here\n+and here\n");
    assert_eq!((g.diff.added, g.diff.removed), (2, 0));

    // CRLF lines keep their line endings.
    let c = file(f, "crlf.txt");
    assert_eq!(c.diff.text, "@@ -1,3 +1,3 @@\n a\r\n-B\r\n+b\r\n c\r\n");

    // Not text: binary, no diff, no counts.
    for p in ["bin.dat", "latin.txt"] {
        let b = file(f, p);
        assert_eq!(b.action, FileAction::Write, "{p}");
        assert!(b.diff.binary, "{p}");
        assert_eq!(
            (b.diff.text.as_str(), b.diff.added, b.diff.removed),
            ("", 0, 0),
            "{p}"
        );
    }

    // Unchanged: nothing to show.
    let u = file(f, "same.txt");
    assert_eq!(u.action, FileAction::Unchanged);
    assert_eq!(u.diff, Default::default());

    // The whole diff on request is the one the plan carries when it was not cut (read again,
    // not from what planning kept).
    for pf in f {
        let whole = store.plan_file_diff(&plan, &pf.path).unwrap();
        assert_eq!(whole.path, pf.path);
        assert_eq!(whole.diff, pf.diff, "{}", pf.path);
    }
}

#[test]
fn the_plans_diff_is_exactly_what_the_commit_writes() {
    let s = Scratch::new().unwrap();
    let mut before = BTreeMap::new();
    for i in 0..12 {
        let p = format!("src/f{i}.rs");
        let body = lines(40 + i, "orig");
        s.write(&p, body.as_bytes()).unwrap();
        before.insert(p, body);
    }
    let mut store = open(&s);
    let t = begin(&mut store);
    for (i, p) in before.keys().enumerate() {
        let mut body = lines(40 + i, "orig");
        body = body.replacen(&format!("line {i} orig"), "changed", 1);
        if i % 3 == 0 {
            body.push_str("appended\n");
        }
        edit(&mut store, &s, p, Some(body.as_bytes()));
    }
    edit(&mut store, &s, "src/new.rs", Some(b"made by the turn\n"));
    edit(&mut store, &s, "src/f5.rs", None);
    store.end_turn();
    // A manual edit on top: a conflict, whose diff is what `overwrite` does.
    s.write("src/f7.rs", b"hand edit\n").unwrap();

    let plan = store.plan_restore(t).unwrap();
    let f7 = file(&plan.plan.files, "src/f7.rs");
    assert_eq!(
        f7.conflict.as_ref().map(|c| c.reason),
        Some(ConflictReason::ManualEdit)
    );
    assert_eq!(f7.on_overwrite, Some(FileAction::Write));
    assert!(f7.diff.added > 0 && f7.diff.removed == 1, "{:?}", f7.diff);

    let current: BTreeMap<String, String> = plan
        .plan
        .files
        .iter()
        .map(|pf| {
            let now = s.read(&pf.path).map(|b| text(&b).to_string()).unwrap_or_default();
            (pf.path.clone(), now)
        })
        .collect();
    store.commit(&plan, overwrite()).unwrap();
    for pf in &plan.plan.files {
        let written = s.read(&pf.path).map(|b| text(&b).to_string()).unwrap_or_default();
        let want = retrace_diff::unified(&current[&pf.path], &written, usize::MAX);
        assert_eq!(pf.diff.text, want.text, "{}", pf.path);
        assert_eq!(
            (pf.diff.added, pf.diff.removed),
            (want.added, want.removed),
            "{}",
            pf.path
        );
        assert!(!pf.diff.text.is_empty(), "{}", pf.path);
    }
    // And the files are what they were when the turn started.
    for (p, body) in &before {
        assert_eq!(text(&s.read(p).unwrap()), body, "{p}");
    }
}

#[test]
fn a_long_diff_is_cut_and_the_whole_one_is_had_on_request() {
    let s = Scratch::new().unwrap();
    let orig = lines(5000, "before");
    s.write("big.txt", orig.as_bytes()).unwrap();
    let mut store = open(&s);
    let t = begin(&mut store);
    let now = lines(5000, "after");
    edit(&mut store, &s, "big.txt", Some(now.as_bytes()));
    store.end_turn();

    let plan = store.plan_restore(t).unwrap();
    let f = file(&plan.plan.files, "big.txt");
    assert!(f.diff.truncated && !f.diff.deferred);
    assert!(f.diff.text.len() <= PLAN_DIFF_CAP && f.diff.text.ends_with('\n'));
    assert_eq!((f.diff.added, f.diff.removed), (5000, 5000));

    let whole = store.plan_file_diff(&plan, "big.txt").unwrap().diff;
    assert!(!whole.truncated && !whole.deferred);
    assert_eq!(whole.text, retrace_diff::unified(&now, &orig, usize::MAX).text);
    assert!(whole.text.len() > PLAN_DIFF_CAP);
    assert!(whole.text.starts_with(&f.diff.text));
    assert_eq!((whole.added, whole.removed), (5000, 5000));

    // A path the plan does not have, and a file that moved since the plan.
    assert!(matches!(
        store.plan_file_diff(&plan, "nope.txt"),
        Err(CheckpointError::UnknownFile { .. })
    ));
    s.write("big.txt", b"someone else\n").unwrap();
    let err = store.plan_file_diff(&plan, "big.txt").unwrap_err();
    assert!(matches!(err, CheckpointError::PlanMoved { .. }), "{err}");
}

#[test]
fn past_the_plans_budget_diffs_are_cut_then_deferred_and_had_on_request() {
    let s = Scratch::new().unwrap();
    for i in 0..6 {
        s.write(&format!("f{i}.txt"), lines(20, "old").as_bytes())
            .unwrap();
    }
    // Text for about two files' diffs; input for about four files.
    let one = retrace_diff::unified(&lines(20, "new"), &lines(20, "old"), usize::MAX);
    let budget = DiffBudget {
        text: one.text.len() * 2 + 10,
        input: (lines(20, "old").len() * 2 * 4) as u64,
        ..DiffBudget::default()
    };
    let mut store = open_with(&s, budget);
    let t = begin(&mut store);
    for i in 0..6 {
        edit(
            &mut store,
            &s,
            &format!("f{i}.txt"),
            Some(lines(20, "new").as_bytes()),
        );
    }
    store.end_turn();

    let plan = store.plan_restore(t).unwrap();
    let shown: Vec<(bool, bool, bool, u64)> = plan
        .plan
        .files
        .iter()
        .map(|f| {
            (
                !f.diff.text.is_empty(),
                f.diff.truncated,
                f.diff.deferred,
                f.diff.added,
            )
        })
        .collect();
    assert_eq!(
        shown,
        vec![
            (true, false, false, 20),
            (true, false, false, 20),
            // The text budget is spent: cut to what is left (nothing here), counts whole.
            (false, true, false, 20),
            (false, true, false, 20),
            // The input budget is spent: not diffed at all.
            (false, false, true, 0),
            (false, false, true, 0),
        ]
    );
    for f in &plan.plan.files {
        let whole = store.plan_file_diff(&plan, &f.path).unwrap().diff;
        assert_eq!(whole.text, one.text, "{}", f.path);
        assert_eq!((whole.added, whole.removed), (20, 20));
    }

    // No time left: nothing is diffed.
    let none = DiffBudget {
        time: Duration::ZERO,
        ..DiffBudget::default()
    };
    let store = open_with(&s, none);
    let plan = store.plan_restore(t).unwrap();
    assert!(plan
        .plan
        .files
        .iter()
        .all(|f| f.diff.deferred && f.diff.text.is_empty()));
}

#[test]
fn a_file_revert_and_a_conflict_that_no_choice_writes() {
    let s = Scratch::new().unwrap();
    s.write("a.txt", b"first\n").unwrap();
    let mut store = open(&s);
    begin(&mut store);
    edit(&mut store, &s, "a.txt", Some(b"second\n"));
    begin(&mut store);
    edit(&mut store, &s, "a.txt", Some(b"third\n"));
    store.end_turn();

    let plan = store.plan_file_revert(&s.workspace.join("a.txt")).unwrap();
    let f = file(&plan.plan.files, "a.txt");
    assert_eq!(f.diff.text, "@@ -1 +1 @@\n-third\n+first\n");
    let whole = store.plan_file_diff(&plan, "a.txt").unwrap();
    assert_eq!(whole.diff, f.diff);

    // A directory where the file was: never written, so nothing to show.
    fs::remove_file(s.workspace.join("a.txt")).unwrap();
    fs::create_dir(s.workspace.join("a.txt")).unwrap();
    let plan = store.plan_file_revert(&s.workspace.join("a.txt")).unwrap();
    let f = file(&plan.plan.files, "a.txt");
    assert_eq!(
        f.conflict.as_ref().map(|c| c.reason),
        Some(ConflictReason::TypeChange)
    );
    assert_eq!(f.diff, Default::default());
    assert_eq!(
        store.plan_file_diff(&plan, "a.txt").unwrap().diff,
        Default::default()
    );
}
