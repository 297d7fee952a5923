//! Undo gives ownership back with the bytes (SPEC §5.5, issue 25 item 1), through the real binary
//! and the script model: after `rewind --on-conflict overwrite` (or `revert --overwrite`) over a hand
//! edit — or over another session's write on the same workspace — and `undo`, the edit is back and
//! is not Retrace's: the dry run shows the conflict, a plain rewind and a revert refuse (exit 3), a
//! `--on-conflict skip` rewind leaves it and lists it, also after one more turn.

use serde_json::{json, Value};

use crate::support::world::{turn_of, write, World as Env};

/// Every later way of restoring `path` reports it and leaves `keep`: the dry run, a plain
/// rewind (exit 3), a `skip` rewind (listed, left; undone again), a plain revert (exit 3).
fn assert_protected(env: &Env, id: &str, turn: &str, path: &str, keep: &[u8]) {
    let rewind = ["rewind", "--session", id, "--turn", turn, "--scope", "code"];
    let mut dry = rewind.to_vec();
    dry.push("--dry-run");
    let plan = env.json(&dry);
    assert!(
        conflicted(&plan).contains(&path.to_string()),
        "the dry run of a rewind to before turn {turn} shows no conflict for {path}: {plan}"
    );
    let plan = env.json_code(&rewind, 3);
    assert!(conflicted(&plan).contains(&path.to_string()), "{plan}");
    assert_eq!(env.bytes(path).as_deref(), Some(keep), "a plain rewind");
    let mut skip = rewind.to_vec();
    skip.extend(["--on-conflict", "skip"]);
    let r = env.json(&skip);
    assert!(conflicted(&r).contains(&path.to_string()), "{r}");
    assert_eq!(env.bytes(path).as_deref(), Some(keep), "a skip rewind");
    if r["transaction_id"].is_string() {
        env.json(&["undo", "--session", id]);
    }
    let plan = env.json_code(&["revert", "--session", id, path], 3);
    assert!(conflicted(&plan).contains(&path.to_string()), "{plan}");
    assert_eq!(env.bytes(path).as_deref(), Some(keep), "a revert");
}

fn conflicted(v: &Value) -> Vec<String> {
    v["conflicts"]
        .as_array()
        .unwrap_or_else(|| panic!("no conflicts in {v}"))
        .iter()
        .map(|c| c["path"].as_str().unwrap().to_string())
        .collect()
}

/// Turn 0 writes `a.txt` and `c.txt`, turn 1 rewrites `a.txt` and writes `b.txt`.
fn two_turns(env: &Env) -> String {
    let id = env.exec(
        None,
        "zero",
        turn_of(vec![write("a.txt", "a0\n"), write("c.txt", "c0\n")]),
    );
    env.exec(
        Some(&id),
        "one",
        turn_of(vec![write("a.txt", "a1\n"), write("b.txt", "b1\n")]),
    );
    id
}

#[test]
fn undoing_a_forced_rewind_leaves_the_hand_edit_the_users() {
    let env = Env::new();
    let id = two_turns(&env);
    env.put("a.txt", b"my own edit\n");
    let r = env.json(&[
        "rewind",
        "--session",
        &id,
        "--turn",
        "1",
        "--scope",
        "code",
        "--on-conflict",
        "overwrite",
    ]);
    assert_eq!(conflicted(&r), ["a.txt"]);
    assert_eq!(env.bytes("a.txt").as_deref(), Some(&b"a0\n"[..]));
    env.json(&["undo", "--session", &id]);
    assert_eq!(env.bytes("a.txt").as_deref(), Some(&b"my own edit\n"[..]));
    assert_eq!(env.bytes("b.txt").as_deref(), Some(&b"b1\n"[..]));

    assert_protected(&env, &id, "1", "a.txt", b"my own edit\n");
    assert_protected(&env, &id, "0", "a.txt", b"my own edit\n");
    // One more turn (which once made the loss final): still the user's.
    env.exec(Some(&id), "two", turn_of(vec![write("d.txt", "d2\n")]));
    assert_protected(&env, &id, "1", "a.txt", b"my own edit\n");
    assert_protected(&env, &id, "0", "a.txt", b"my own edit\n");
}

#[test]
fn undoing_a_forced_revert_leaves_the_hand_edit_the_users() {
    let env = Env::new();
    let id = two_turns(&env);
    env.put("a.txt", b"my own edit\n");
    env.json_code(&["revert", "--session", &id, "a.txt"], 3);
    let r = env.json(&["revert", "--session", &id, "a.txt", "--overwrite"]);
    assert_eq!(conflicted(&r), ["a.txt"]);
    assert!(
        env.bytes("a.txt").is_none(),
        "turn 0 created it: the revert deletes it"
    );
    env.json(&["undo", "--session", &id]);
    assert_eq!(env.bytes("a.txt").as_deref(), Some(&b"my own edit\n"[..]));

    assert_protected(&env, &id, "1", "a.txt", b"my own edit\n");
    assert_protected(&env, &id, "0", "a.txt", b"my own edit\n");
    env.exec(Some(&id), "two", turn_of(vec![write("d.txt", "d2\n")]));
    assert_protected(&env, &id, "0", "a.txt", b"my own edit\n");
}

#[test]
fn undoing_a_forced_rewind_over_another_sessions_write_leaves_it_theirs() {
    let env = Env::new();
    let id = two_turns(&env);
    // A second session on the same workspace writes the file.
    let other = env.exec(None, "theirs", turn_of(vec![write("a.txt", "theirs\n")]));
    assert_ne!(other, id);
    let r = env.json(&[
        "rewind",
        "--session",
        &id,
        "--turn",
        "1",
        "--scope",
        "code",
        "--on-conflict",
        "overwrite",
    ]);
    assert_eq!(conflicted(&r), ["a.txt"]);
    env.json(&["undo", "--session", &id]);
    assert_eq!(env.bytes("a.txt").as_deref(), Some(&b"theirs\n"[..]));

    assert_protected(&env, &id, "1", "a.txt", b"theirs\n");
    assert_protected(&env, &id, "0", "a.txt", b"theirs\n");
    env.exec(Some(&id), "two", turn_of(vec![write("d.txt", "d2\n")]));
    assert_protected(&env, &id, "1", "a.txt", b"theirs\n");
    // The other session's own rewind still owns its write: it restores it without a conflict.
    let r = env.json(&["rewind", "--session", &other, "--turn", "0", "--scope", "code"]);
    assert_eq!(conflicted(&r), Vec::<String>::new());
    assert_eq!(env.bytes("a.txt").as_deref(), Some(&b"a1\n"[..]));
}

/// Issue 25 item 6: a rewind that finds a file already in its target state makes it Retrace's, so
/// a later rewind does not refuse it as an `external_change`.
#[test]
fn a_file_already_in_its_target_state_is_retraces_for_the_next_rewind() {
    let env = Env::new();
    let id = two_turns(&env);
    std::fs::remove_file(env.ws.join("a.txt")).unwrap();
    std::fs::remove_file(env.ws.join("c.txt")).unwrap();
    // Turn 0 created them: a rewind to it finds them as they were (absent), deletes b.txt only.
    let r = env.json(&["rewind", "--session", &id, "--turn", "0", "--scope", "code"]);
    assert_eq!(r["files_deleted"], json!(["b.txt"]));
    assert_eq!(conflicted(&r), Vec::<String>::new());
    // A rewind to before turn 1 writes a.txt back (its state then) without a conflict.
    let r = env.json(&["rewind", "--session", &id, "--turn", "1", "--scope", "code"]);
    assert_eq!(conflicted(&r), Vec::<String>::new());
    assert_eq!(r["files_written"], json!(["a.txt"]));
    assert_eq!(env.bytes("a.txt").as_deref(), Some(&b"a0\n"[..]));
}
