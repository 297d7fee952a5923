//! Every endpoint's answer, through the router.

use axum::http::StatusCode;
use retrace_protocol::{BashPolicy, Delivery, Event};
use serde_json::{json, Value};

use crate::support::{assert_error, shell, writes, Env};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_endpoint_answers_with_its_protocol_type() {
    let mut script = writes("a.txt", "one\n");
    script.push(json!({"content": "second turn"}));
    script.push(json!({"content": "the summary"}));
    let env = Env::new(script);

    let (s, v) = env.get("/api/sessions").await;
    assert_eq!((s, v), (StatusCode::OK, json!([])));
    let id = env.create().await;
    let (s, v) = env.get("/api/sessions").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v[0]["id"], id.as_str(), "{v}");
    let other = env.tmp.path().join("elsewhere");
    std::fs::create_dir_all(&other).unwrap();
    let (_, v) = env
        .get(&format!("/api/sessions?workspace={}", other.display()))
        .await;
    assert_eq!(v, json!([]));

    let (s, status) = env.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(status["session_id"], id.as_str());
    assert_eq!(status["head_id"], "main");
    assert!(
        status["model"].as_str().unwrap().starts_with("script:"),
        "{status}"
    );

    assert_eq!(env.turn(&id, "write a").await, 0);
    assert_eq!(std::fs::read(env.ws.join("a.txt")).unwrap(), b"one\n");
    assert_eq!(env.turn(&id, "again").await, 1);

    let (s, t) = env.get(&format!("/api/sessions/{id}/transcript")).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(t[0]["role"], "user");
    assert_eq!(t[0]["content"], "write a");
    let (_, t2) = env.get(&format!("/api/sessions/{id}/transcript?head=main")).await;
    assert_eq!(t, t2);
    let (s, c) = env.get(&format!("/api/sessions/{id}/checkpoints")).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(c["entries"][0]["paths"], json!(["a.txt"]), "{c}");
    let (s, h) = env.get(&format!("/api/sessions/{id}/heads")).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(h[0]["id"], "main", "{h}");
    let (s, m) = env.get(&format!("/api/sessions/{id}/mcp")).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(m, json!([]), "no MCP server is configured");
    let (s, r) = env.get(&format!("/api/sessions/{id}/turns/0/results")).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(r["files"][0]["path"], "a.txt", "{r}");
    assert_eq!(r["files"][0]["action"], "create", "{r}");
    let (s, r) = env.get(&format!("/api/sessions/{id}/turns/9/results")).await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{r}");
    assert_eq!(r["error"]["code"], "not_found", "{r}");
    let (s, r) = env.get(&format!("/api/sessions/{id}/turns/x/results")).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{r}");
    let (s, h) = env.get(&format!("/api/sessions/{id}/history?path=a.txt")).await;
    assert_eq!(s, StatusCode::OK, "{h}");
    assert_eq!(h["path"], "a.txt");
    assert_eq!(h["versions"][0]["origin"], "turn_start", "{h}");
    assert_eq!(h["versions"][0]["existed"], false, "{h}");
    let (s, _) = env.get(&format!("/api/sessions/{id}/history")).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let (s, _) = env
        .get(&format!("/api/sessions/{id}/history?path=never.txt"))
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);

    // Code rewind to before turn 0 (a.txt did not exist), then its undo.
    let (s, plan) = env
        .post(
            &format!("/api/sessions/{id}/rewind/prepare"),
            json!({"turn": 0, "scope": "code"}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{plan}");
    assert_eq!(plan["files"][0]["action"], "delete", "{plan}");
    assert_eq!(plan["files"][0]["diff"], "@@ -1 +0,0 @@\n-one\n", "{plan}");
    assert_eq!(plan["files"][0]["removed"], 1, "{plan}");
    // The whole diff of one file of the plan; the plan stays pending.
    let pid = plan["plan_id"].as_str().unwrap();
    let (s, d) = env
        .get(&format!("/api/sessions/{id}/plans/{pid}/diff?path=a.txt"))
        .await;
    assert_eq!(s, StatusCode::OK, "{d}");
    assert_eq!(
        d,
        json!({"path": "a.txt", "diff": "@@ -1 +0,0 @@\n-one\n", "added": 0, "removed": 1, "binary": false})
    );
    let missing = env.get(&format!("/api/sessions/{id}/plans/{pid}/diff")).await;
    crate::support::assert_error(&missing, 400, "usage");
    let odd = env
        .get(&format!("/api/sessions/{id}/plans/{pid}/diff?path=a.txt&full=1"))
        .await;
    crate::support::assert_error(&odd, 400, "usage");
    let other = env
        .get(&format!("/api/sessions/{id}/plans/{pid}/diff?path=b.txt"))
        .await;
    crate::support::assert_error(&other, 404, "not_found");
    let gone = env
        .get(&format!("/api/sessions/{id}/plans/plan-nope/diff?path=a.txt"))
        .await;
    crate::support::assert_error(&gone, 409, "stale_plan");
    let (s, r) = env
        .post(
            &format!("/api/sessions/{id}/rewind/commit"),
            json!({"plan_id": plan["plan_id"], "confirm": false, "on_conflict": "refuse"}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["ok"], true);
    assert!(!env.ws.join("a.txt").exists());
    let (s, u) = env.post(&format!("/api/sessions/{id}/undo"), json!({})).await;
    assert_eq!(s, StatusCode::OK, "{u}");
    assert_eq!(std::fs::read(env.ws.join("a.txt")).unwrap(), b"one\n");
    assert_eq!(u["redo_available"], true, "{u}");

    // Redo, and its undo: the walk both ways.
    let (s, d) = env.post(&format!("/api/sessions/{id}/redo"), json!({})).await;
    assert_eq!(s, StatusCode::OK, "{d}");
    assert_eq!(
        (&d["undo_available"], &d["redo_available"]),
        (&json!(true), &json!(false)),
        "{d}"
    );
    assert!(!env.ws.join("a.txt").exists());
    let (s, u) = env.post(&format!("/api/sessions/{id}/undo"), json!({})).await;
    assert_eq!(s, StatusCode::OK, "{u}");
    assert_eq!(std::fs::read(env.ws.join("a.txt")).unwrap(), b"one\n");
    // A file changed since the undo: a conflict naming it, and nothing written.
    std::fs::write(env.ws.join("a.txt"), b"by hand\n").unwrap();
    let got = env.post(&format!("/api/sessions/{id}/redo"), json!({})).await;
    assert_error(&got, 409, "conflict");
    assert_eq!(
        got.1["error"]["details"]["conflicts"][0]["path"], "a.txt",
        "{}",
        got.1
    );
    assert_eq!(std::fs::read(env.ws.join("a.txt")).unwrap(), b"by hand\n");
    std::fs::write(env.ws.join("a.txt"), b"one\n").unwrap();

    // Heads: fork, switch back, retire the fork.
    let (s, f) = env
        .post(
            &format!("/api/sessions/{id}/fork"),
            json!({"turn": 1, "name": "alt"}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{f}");
    let alt = f["head_id"].as_str().unwrap().to_string();
    assert_ne!(alt, "main");
    let (s, sw) = env
        .post(&format!("/api/sessions/{id}/switch"), json!({"head": "main"}))
        .await;
    assert_eq!((s, &sw["head_id"]), (StatusCode::OK, &json!("main")), "{sw}");
    let (s, v) = env
        .post(&format!("/api/sessions/{id}/retire"), json!({"head": "alt"}))
        .await;
    assert_eq!((s, v), (StatusCode::NO_CONTENT, Value::Null));
    let (_, h) = env.get(&format!("/api/sessions/{id}/heads")).await;
    let retired: Vec<_> = h
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["retired"] == true)
        .collect();
    assert_eq!(retired.len(), 1, "{h}");

    // Summarize everything before turn 1: a new selected head.
    let (s, sum) = env
        .post(
            &format!("/api/sessions/{id}/summarize"),
            json!({"turn": 1, "direction": "up_to"}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{sum}");
    let (_, status) = env.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(status["head_id"], sum["head_id"]);

    // Plan mode on and off; the status says so.
    let (s, st) = env
        .post(&format!("/api/sessions/{id}/plan"), json!({"on": true}))
        .await;
    assert_eq!((s, &st["plan_mode"]), (StatusCode::OK, &json!(true)), "{st}");
    let (_, st) = env.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(st["plan_mode"], true);
    let (s, st) = env
        .post(&format!("/api/sessions/{id}/plan"), json!({"on": false}))
        .await;
    assert_eq!((s, &st["plan_mode"]), (StatusCode::OK, &json!(false)), "{st}");
    let bad = env
        .post(&format!("/api/sessions/{id}/plan"), json!({"on": "yes"}))
        .await;
    crate::support::assert_error(&bad, 400, "usage");

    // Compact: the summary head holds one turn after its summary, so nothing is left to fold.
    let refused = env.post(&format!("/api/sessions/{id}/compact"), json!({})).await;
    crate::support::assert_error(&refused, 409, "refused");
    let with_model = env
        .post(&format!("/api/sessions/{id}/compact"), json!({"model": "demo"}))
        .await;
    crate::support::assert_error(&with_model, 400, "usage");

    // Revert one file to before the session touched it.
    let (s, plan) = env
        .post(
            &format!("/api/sessions/{id}/revert/prepare"),
            json!({"path": "a.txt"}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{plan}");
    let (s, r) = env
        .post(
            &format!("/api/sessions/{id}/revert/commit"),
            json!({"plan_id": plan["plan_id"], "overwrite": false}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert!(!env.ws.join("a.txt").exists());

    let (s, c) = env.post(&format!("/api/sessions/{id}/cancel"), json!({})).await;
    assert_eq!((s, c), (StatusCode::OK, json!({"cancelled": false})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_command_waits_for_an_approval_from_the_api() {
    let env = Env::with(shell("echo hi > shell.txt"), BashPolicy::Ask);
    let id = env.create().await;
    let mut sub = env.registry.get(&id).await.unwrap().subscribe(None);
    let (s, _) = env
        .post(&format!("/api/sessions/{id}/messages"), json!({"prompt": "run"}))
        .await;
    assert_eq!(s, StatusCode::ACCEPTED);
    let call_id = loop {
        match sub.recv().await.unwrap() {
            Delivery::Event(n) => {
                if let Event::ApprovalRequested { call_id, .. } = n.event {
                    break call_id;
                }
            }
            Delivery::Lagged { .. } => panic!("lagged"),
        }
    };
    let (s, v) = env
        .post(
            &format!("/api/sessions/{id}/approvals/{call_id}"),
            json!({"decision": "maybe"}),
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    let (s, v) = env
        .post(
            &format!("/api/sessions/{id}/approvals/{call_id}"),
            json!({"decision": "once"}),
        )
        .await;
    assert_eq!((s, v), (StatusCode::NO_CONTENT, Value::Null));
    env.idle(&id).await;
    assert_eq!(std::fs::read(env.ws.join("shell.txt")).unwrap(), b"hi\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_is_opened_on_demand_by_id_and_gets_a_model_asked_for() {
    let env = Env::new(writes("b.txt", "b\n"));
    // Made by another service (another process, say), then closed: the server opens it by id.
    let id = {
        let svc = retrace_control::Service::new(retrace_control::ServiceOptions::new(&env.home));
        let h = svc.create(&env.ws).await.unwrap();
        let id = h.session_id().to_string();
        drop(h);
        svc.shutdown().await;
        id
    };
    assert_eq!(env.turn(&id, "write b").await, 0);
    assert!(env.ws.join("b.txt").exists());

    let (s, v) = env
        .post("/api/sessions", json!({"model": "demo", "workspace": env.ws}))
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    let (_, status) = env
        .get(&format!("/api/sessions/{}", v["session_id"].as_str().unwrap()))
        .await;
    assert_eq!(status["model"], "demo", "{status}");
}
