//! `POST …/fork` with `worktree`: a fork into a new workspace (docs/API.md): 201 with what was
//! made, the new session open on the server in its own workspace, the files as they stood when
//! the turn started; a directory that is not empty, or `select` with it, is 400 `usage`.

use axum::http::StatusCode;
use serde_json::json;

use crate::support::{assert_error, writes, Env};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_into_a_new_workspace_answers_the_new_session_open_in_its_directory() {
    let env = Env::new([writes("a.txt", "one\n"), writes("a.txt", "two\n")].concat());
    let id = env.create().await;
    env.turn(&id, "first").await;
    let second = env.turn(&id, "second").await;
    let (s, made) = env
        .post(
            &format!("/api/sessions/{id}/fork"),
            json!({"turn": second, "worktree": "../forked"}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{made}");
    let dir = std::fs::canonicalize(env.tmp.path().join("forked")).unwrap();
    assert_eq!(made["workspace"], dir.to_str().unwrap());
    assert_eq!(made["source_session_id"], id.as_str());
    assert_eq!(made["git_worktree"], false);
    assert_eq!(made["files_restored"], 1);
    assert_eq!(std::fs::read(dir.join("a.txt")).unwrap(), b"one\n");
    assert_eq!(std::fs::read(env.ws.join("a.txt")).unwrap(), b"two\n");
    let new = made["session_id"].as_str().unwrap();
    let (s, status) = env.get(&format!("/api/sessions/{new}")).await;
    assert_eq!(s, StatusCode::OK, "{status}");
    assert_eq!(status["workspace"], dir.to_str().unwrap());
    let q = format!("/api/sessions?workspace={}", dir.display());
    let (_, listed) = env.get(&q).await;
    assert_eq!(listed[0]["forked_from"]["session_id"], id.as_str(), "{listed}");
    assert_eq!(listed[0]["forked_from"]["turn"], second);

    // The directory is taken now; `select` does not apply.
    let again = env
        .post(
            &format!("/api/sessions/{id}/fork"),
            json!({"turn": second, "worktree": "../forked"}),
        )
        .await;
    assert_error(&again, 400, "usage");
    let selected = env
        .post(
            &format!("/api/sessions/{id}/fork"),
            json!({"turn": second, "worktree": "../other", "select": true}),
        )
        .await;
    assert_error(&selected, 400, "usage");
    assert!(!env.tmp.path().join("other").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worktree_that_names_no_directory_is_a_usage_error_naming_it_and_changes_nothing() {
    let env = Env::new([writes("a.txt", "one\n"), writes("a.txt", "two\n")].concat());
    let id = env.create().await;
    env.turn(&id, "first").await;
    let second = env.turn(&id, "second").await;
    let (_, before) = env.get(&format!("/api/sessions/{id}")).await;
    for (body, says) in [
        (json!({"turn": second, "worktree": null}), "worktree: null"),
        (json!({"turn": second, "worktree": ""}), "is empty"),
        (json!({"turn": second, "worktree": "../h\u{0}nul"}), "NUL"),
        (json!({"turn": second, "worktree": "."}), "own workspace"),
        (
            json!({"turn": second, "worktree": format!("../{}", "z".repeat(300))}),
            "worktree: ",
        ),
    ] {
        let answer = env.post(&format!("/api/sessions/{id}/fork"), body.clone()).await;
        assert_error(&answer, 400, "usage");
        let message = answer.1["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{body}: {message}");
        assert!(message.starts_with("worktree"), "{body}: {message}");
        assert_eq!(
            answer.1["error"]["details"]["kind"], "worktree",
            "{body}: {}",
            answer.1
        );
    }
    // The source's selected head did not change (no conversation fork was made instead).
    let (_, after) = env.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(after["head_id"], before["head_id"], "{after}");
    assert_eq!(before["head_id"], "main");
}
