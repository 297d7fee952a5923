//! What a rewind's or revert's dry run shows of each file (SPEC §11.1, FORMATS §15.3): `--json`
//! carries every file's diff from disk to what the commit writes, with its counts; the human form
//! prints `+A −R` beside each file it writes or deletes. Nothing is written.

use crate::support::world::{turn_of, write, World};
use serde_json::Value;

/// Turn 0 writes a.txt and bin.dat; turn 1 rewrites a.txt, writes bin.dat anew and creates b.txt.
fn two_turns(w: &World) -> String {
    let id = w.exec(
        None,
        "zero",
        turn_of(vec![
            write("a.txt", "one\ntwo\nthree\n"),
            write("bin.dat", "x\u{0}y"),
        ]),
    );
    w.exec(
        Some(&id),
        "one",
        turn_of(vec![
            write("a.txt", "one\n2\nthree\nfour\n"),
            write("bin.dat", "\u{0}z"),
            write("b.txt", "new\n"),
        ]),
    );
    id
}

fn file<'a>(plan: &'a Value, path: &str) -> &'a Value {
    plan["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("no {path} in {plan}"))
}

#[test]
fn a_rewinds_dry_run_carries_each_files_diff_and_counts() {
    let w = World::new();
    let id = two_turns(&w);
    let args = [
        "rewind",
        "--session",
        &id,
        "--turn",
        "1",
        "--scope",
        "code",
        "--dry-run",
    ];
    let plan = w.json(&args);
    let a = file(&plan, "a.txt");
    assert_eq!(a["action"], "write");
    assert_eq!(a["diff"], "@@ -1,4 +1,3 @@\n one\n-2\n+two\n three\n-four\n");
    assert_eq!(
        (&a["added"], &a["removed"], &a["binary"]),
        (&1.into(), &2.into(), &false.into())
    );
    assert!(a.get("diff_truncated").is_none(), "{a}");
    let b = file(&plan, "b.txt");
    assert_eq!(b["action"], "delete");
    assert_eq!(b["diff"], "@@ -1 +0,0 @@\n-new\n");
    assert_eq!((&b["added"], &b["removed"]), (&0.into(), &1.into()));
    let bin = file(&plan, "bin.dat");
    assert_eq!((&bin["binary"], &bin["diff"]), (&true.into(), &"".into()));

    let (text, _) = w.code(&args, 0);
    assert!(text.contains("write     a.txt  +1 −2"), "{text}");
    assert!(text.contains("delete    b.txt  +0 −1"), "{text}");
    assert!(text.contains("write     bin.dat  binary"), "{text}");
    assert!(!text.contains("Nothing would change"), "{text}");
    assert_eq!(w.read("a.txt").unwrap(), "one\n2\nthree\nfour\n");
    assert_eq!(w.read("b.txt").unwrap(), "new\n");

    // Once done, the same rewind would change nothing, and its dry run says so (as the terminal
    // UI and the page do), not only its title.
    let mut commit = args.to_vec();
    commit.pop();
    commit.push("--yes");
    w.code(&commit, 0);
    let (text, _) = w.code(&args, 0);
    assert!(
        text.contains("Nothing would change: every file in the workspace is already as it was."),
        "{text}"
    );
}

#[test]
fn a_reverts_dry_run_prints_its_plan_with_the_diff_and_writes_nothing() {
    let w = World::new();
    let id = two_turns(&w);
    w.put("a.txt", b"by hand\n");
    let args = ["revert", "--session", &id, "a.txt", "--dry-run"];
    let plan = w.json(&args);
    let a = file(&plan, "a.txt");
    // Not Retrace's bytes: a conflict, its diff what --overwrite does (a.txt did not exist).
    assert_eq!(a["conflict"]["reason"], "manual_edit", "{a}");
    assert_eq!(a["on_overwrite"], "delete");
    assert_eq!(a["diff"], "@@ -1 +0,0 @@\n-by hand\n");
    assert_eq!((&a["added"], &a["removed"]), (&0.into(), &1.into()));

    // Refused: no counts beside a file left alone; with --overwrite, what it does.
    let (text, _) = w.code(&args, 0);
    assert!(
        text.contains("keep      a.txt  (edited outside Retrace)"),
        "{text}"
    );
    let (text, _) = w.code(
        &["revert", "--session", &id, "a.txt", "--dry-run", "--overwrite"],
        0,
    );
    assert!(
        text.contains("delete    a.txt  +0 −1  (edited outside Retrace)"),
        "{text}"
    );
    assert_eq!(w.read("a.txt").unwrap(), "by hand\n");
}
