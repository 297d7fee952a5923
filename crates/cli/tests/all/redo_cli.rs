//! `retrace redo` through the real binary and the script model (SPEC §5.5, §11.1): every command a
//! process of its own, so each step of the walk survives a restart. Undo, redo, undo ends where it
//! began, files and heads; `--json` prints the result as `undo` does; a redo with nothing to redo,
//! or over a file changed since the undo, exits 3 and writes nothing.

use serde_json::Value;

use crate::support::world::{turn_of, write, World as Env};

/// Turn 0 writes `a.txt`, turn 1 rewrites it and writes `b.txt`.
fn two_turns(env: &Env) -> String {
    let id = env.exec(None, "zero", turn_of(vec![write("a.txt", "a0\n")]));
    env.exec(
        Some(&id),
        "one",
        turn_of(vec![write("a.txt", "a1\n"), write("b.txt", "b1\n")]),
    );
    id
}

fn selected(env: &Env, id: &str) -> String {
    let heads = env.json(&["heads", "--session", id]);
    let h = heads
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["selected"] == true)
        .unwrap();
    h["id"].as_str().unwrap().to_string()
}

#[test]
fn undo_redo_undo_walks_files_and_heads_and_prints_like_undo() {
    let env = Env::new();
    let id = two_turns(&env);
    let r = env.json(&["rewind", "--session", &id, "--turn", "1", "--scope", "both"]);
    let head = r["head_id"].as_str().unwrap().to_string();
    assert_eq!(env.read("a.txt").as_deref(), Some("a0\n"));
    assert_eq!(r["redo_available"], false, "{r}");

    let u = env.json(&["undo", "--session", &id]);
    assert_eq!(u["redo_available"], true, "{u}");
    assert_eq!(env.read("a.txt").as_deref(), Some("a1\n"));
    assert_eq!(selected(&env, &id), "main");

    let d = env.json(&["redo", "--session", &id]);
    for key in [
        "ok",
        "partial",
        "conversation_forked",
        "head_id",
        "session_id",
        "files_written",
        "files_deleted",
        "transaction_id",
        "undo_available",
        "redo_available",
        "conflicts",
        "prompt",
    ] {
        assert!(d.get(key).is_some(), "`{key}` missing: {d}");
        assert!(u.get(key).is_some(), "`{key}` missing from undo's: {u}");
    }
    assert_eq!(d["ok"], true);
    assert_eq!(d["undo_available"], true, "{d}");
    assert_eq!(d["redo_available"], false, "{d}");
    assert_eq!(d["prompt"], "one");
    assert_eq!(env.read("a.txt").as_deref(), Some("a0\n"));
    assert_eq!(env.read("b.txt"), None);
    let again = d["head_id"].as_str().unwrap().to_string();
    assert_ne!(again, head, "the retired head is made again");
    assert_eq!(selected(&env, &id), again);
    let t: Value = env.json(&["transcript", "--session", &id]);
    let users: Vec<&str> = t
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        users,
        ["zero"],
        "the head ends just before turn 1, as the rewind's did: {t}"
    );

    env.json(&["undo", "--session", &id]);
    assert_eq!(env.read("a.txt").as_deref(), Some("a1\n"));
    assert_eq!(env.read("b.txt").as_deref(), Some("b1\n"));
    assert_eq!(selected(&env, &id), "main", "undo after redo ends where it began");

    // The human form says what undo's says, and what comes next.
    let (out, _) = env.code(&["redo", "--session", &id], 0);
    assert!(out.contains("`retrace undo` takes it back"), "{out}");
    let (out, _) = env.code(&["undo", "--session", &id], 0);
    assert!(
        out.contains("`retrace redo` applies the undone rewind again"),
        "{out}"
    );
}

#[test]
fn nothing_to_redo_and_a_conflict_exit_3_and_write_nothing() {
    let env = Env::new();
    let id = two_turns(&env);
    let e = env.json_code(&["redo", "--session", &id], 3);
    assert_eq!(e["ok"], false);
    assert_eq!(e["error"]["code"], "refused", "{e}");

    env.json(&["rewind", "--session", &id, "--turn", "1", "--scope", "code"]);
    env.json(&["undo", "--session", &id]);
    env.put("a.txt", b"by hand\n");
    let e = env.json_code(&["redo", "--session", &id], 3);
    assert_eq!(e["error"]["code"], "conflict", "{e}");
    let files = &e["error"]["details"]["conflicts"];
    assert_eq!(files[0]["path"], "a.txt", "{e}");
    assert_eq!(files[0]["reason"], "manual_edit", "{e}");
    assert_eq!(env.read("a.txt").as_deref(), Some("by hand\n"), "nothing written");
    assert_eq!(env.read("b.txt").as_deref(), Some("b1\n"));
    let (_, err) = env.code(&["redo", "--session", &id], 3);
    assert!(err.contains("a.txt"), "{err}");

    // A later turn that touched other files does not stop it.
    env.put("a.txt", b"a1\n");
    env.exec(Some(&id), "two", turn_of(vec![write("c.txt", "c2\n")]));
    let d = env.json(&["redo", "--session", &id]);
    assert_eq!(d["ok"], true);
    assert_eq!(env.read("a.txt").as_deref(), Some("a0\n"));
    assert_eq!(env.read("c.txt").as_deref(), Some("c2\n"));
    // Once redone, there is nothing more to redo.
    let e = env.json_code(&["redo", "--session", &id], 3);
    assert_eq!(e["error"]["code"], "refused", "{e}");
}
