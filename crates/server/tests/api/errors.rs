//! Every error code with its status, from the controller through the router; and the server's
//! own refusals of bad bodies and routes.

use axum::http::{Method, StatusCode};
use axum::response::IntoResponse;
use http_body_util::BodyExt;
use retrace_protocol::{BashPolicy, Error, ErrorCode, ModelSpec, Provider};
use retrace_server::ApiError;
use retrace_testkit::mock_openai::{sse, MockServer, Reply};
use serde_json::{json, Value};

use crate::support::{assert_error, shell, writes, Env, TOKEN};

const UNKNOWN: &str = "01900000-0000-7000-8000-000000000000";

#[tokio::test]
async fn every_code_is_answered_with_its_status_and_the_error_object() {
    for code in ErrorCode::ALL {
        let res = ApiError::from(Error::new(code, "what happened")).into_response();
        let status = res.status().as_u16();
        let body: Value =
            serde_json::from_slice(&res.into_body().collect().await.unwrap().to_bytes()).unwrap();
        assert_eq!(
            body,
            json!({"error": {"code": code.as_str(), "message": "what happened"}})
        );
        let want = match code {
            ErrorCode::Usage => 400,
            ErrorCode::NotFound => 404,
            ErrorCode::ConfirmationRequired => 428,
            ErrorCode::Model => 502,
            ErrorCode::Io | ErrorCode::Corrupt | ErrorCode::Internal => 500,
            ErrorCode::Busy
            | ErrorCode::TurnRunning
            | ErrorCode::Refused
            | ErrorCode::Conflict
            | ErrorCode::StalePlan
            | ErrorCode::Cancelled => 409,
        };
        assert_eq!(status, want, "{code}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_bodies_are_usage_errors_naming_the_field() {
    let env = Env::new(writes("a.txt", "a\n"));
    let id = env.create().await;
    let url = format!("/api/sessions/{id}/messages");
    let got = env.post(&url, json!({"prompt": 5})).await;
    assert_error(&got, 400, "usage");
    assert!(
        got.1["error"]["message"].as_str().unwrap().contains("`prompt`"),
        "{}",
        got.1
    );
    let got = env.post(&url, json!({"prompt": "x", "extra": true})).await;
    assert_error(&got, 400, "usage");
    assert!(
        got.1["error"]["message"].as_str().unwrap().contains("`extra`"),
        "{}",
        got.1
    );
    let got = env.post(&url, json!({})).await;
    assert_error(&got, 400, "usage");
    assert!(
        got.1["error"]["message"].as_str().unwrap().contains("`prompt`"),
        "{}",
        got.1
    );
    let (s, _, b) = env
        .send(
            axum::http::Request::builder()
                .method(Method::POST)
                .uri(&url)
                .header("host", crate::support::HOST)
                .header("authorization", format!("Bearer {TOKEN}"))
                .header("content-type", "application/json")
                .body(axum::body::Body::from("{\"prompt\": "))
                .unwrap(),
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{}", String::from_utf8_lossy(&b));
    // The controller's own usage errors: an empty prompt.
    assert_error(&env.post(&url, json!({"prompt": ""})).await, 400, "usage");
    let got = env
        .post(
            &format!("/api/sessions/{id}/rewind/prepare"),
            json!({"turn": "0", "scope": "code"}),
        )
        .await;
    assert!(
        got.1["error"]["message"].as_str().unwrap().contains("`turn`"),
        "{}",
        got.1
    );
    // A query that is not a number.
    assert_error(
        &env.get(&format!("/api/sessions/{id}/events?after=x")).await,
        400,
        "usage",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_over_the_cap_are_refused_with_413() {
    let env = Env::new(vec![]);
    let id = env.create().await;
    let big = "x".repeat(retrace_server::MAX_BODY + 1);
    let got = env
        .post(&format!("/api/sessions/{id}/messages"), json!({"prompt": big}))
        .await;
    assert_eq!(got.0, StatusCode::PAYLOAD_TOO_LARGE, "{}", got.1);
    assert_eq!(got.1["error"]["code"], "usage");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_routes_and_methods_answer_json() {
    let env = Env::new(vec![]);
    assert_error(&env.get("/api/nothing").await, 404, "not_found");
    // Found by attack: an id too long for a file name was an `io` error (500) naming the data root.
    let long = "a".repeat(5000);
    assert_error(&env.get(&format!("/api/sessions/{long}")).await, 400, "usage");
    assert_error(&env.get("/api").await, 404, "not_found");
    assert_error(&env.get("/api/sessions/x/y/z").await, 404, "not_found");
    // Found by attack: a query parameter no route takes was ignored; it is refused like an
    // unknown field of a body.
    assert_error(&env.get("/api/sessions?bogus=1").await, 400, "usage");
    assert_error(
        &env.get("/api/sessions/x/transcript?hed=main").await,
        400,
        "usage",
    );
    // Found by attack: bytes that are no UTF-8 in a path parameter were a plain-text 400.
    assert_error(&env.get("/api/sessions/%ff").await, 400, "usage");
    assert_error(&env.get("/api/sessions/%ff/events").await, 400, "usage");
    assert_error(
        &env.post(
            "/api/sessions/x/approvals/%ff",
            serde_json::json!({"decision": "deny"}),
        )
        .await,
        400,
        "usage",
    );
    assert_error(
        &env.call(Method::DELETE, "/api/sessions", None).await,
        405,
        "usage",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn not_found_refused_stale_plan_and_model() {
    let env = Env::new(writes("a.txt", "a\n"));
    assert_error(
        &env.get(&format!("/api/sessions/{UNKNOWN}")).await,
        404,
        "not_found",
    );
    assert_error(&env.get("/api/sessions/not-an-id/heads").await, 404, "not_found");
    let id = env.create().await;
    let got = env.get(&format!("/api/sessions/{id}/transcript?head=nope")).await;
    assert_error(&got, 404, "not_found");
    // The selected head cannot be retired; there is nothing to undo.
    assert_error(
        &env.post(&format!("/api/sessions/{id}/retire"), json!({"head": "main"}))
            .await,
        409,
        "refused",
    );
    assert_error(
        &env.post(&format!("/api/sessions/{id}/undo"), json!({})).await,
        409,
        "refused",
    );
    assert_error(
        &env.post(&format!("/api/sessions/{id}/redo"), json!({})).await,
        409,
        "refused",
    );
    // A redo's body is checked like every other.
    assert_error(
        &env.post(&format!("/api/sessions/{id}/redo"), json!({"transaction": "x"}))
            .await,
        400,
        "usage",
    );
    let got = env
        .post(
            &format!("/api/sessions/{id}/rewind/commit"),
            json!({"plan_id": "nope"}),
        )
        .await;
    assert_error(&got, 409, "stale_plan");
    let got = env
        .post(
            "/api/sessions",
            json!({"model": format!("script:{}", env.tmp.path().join("none.json").display())}),
        )
        .await;
    assert_error(&got, 502, "model");
    let got = env
        .post("/api/sessions", json!({"workspace": env.tmp.path().join("none")}))
        .await;
    assert_error(&got, 400, "usage");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_another_writer_holds_is_read_but_not_changed() {
    let env = Env::new(vec![]);
    let other = retrace_control::Service::new(retrace_control::ServiceOptions::new(&env.home));
    let held = other.create(&env.ws).await.unwrap();
    let id = held.session_id();
    // Read from its log, saying it is held (here by this very process, whose pid is not named).
    let (s, st) = env.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(s, StatusCode::OK, "{st}");
    assert_eq!(
        st["held_by"]["says"],
        "This session is open in another Retrace. Close it there, or start a new session here.",
        "{st}"
    );
    let (s, snap) = env.get(&format!("/api/sessions/{id}?include=items")).await;
    assert_eq!(s, StatusCode::OK, "{snap}");
    assert!(snap["status"]["held_by"].is_object(), "{snap}");
    for path in ["checkpoints", "heads", "transcript"] {
        let (s, v) = env.get(&format!("/api/sessions/{id}/{path}")).await;
        assert_eq!(s, StatusCode::OK, "{path}: {v}");
    }
    // Changed or followed: busy.
    assert_error(
        &env.post(&format!("/api/sessions/{id}/messages"), json!({"prompt": "mine"}))
            .await,
        409,
        "busy",
    );
    assert_error(&env.get(&format!("/api/sessions/{id}/events")).await, 409, "busy");
    drop(held);
    other.shutdown().await;
    // Let go: opened here.
    let (s, st) = env.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(s, StatusCode::OK, "{st}");
    assert!(st.get("held_by").is_none(), "{st}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_turn_refuses_writes_and_can_be_cancelled() {
    let env = Env::with(shell("echo hi"), BashPolicy::Ask);
    let id = env.create().await;
    let (s, _) = env
        .post(&format!("/api/sessions/{id}/messages"), json!({"prompt": "run"}))
        .await;
    assert_eq!(s, StatusCode::ACCEPTED);
    env.running(&id).await;
    let got = env
        .post(
            &format!("/api/sessions/{id}/rewind/prepare"),
            json!({"turn": 0, "scope": "code"}),
        )
        .await;
    assert_error(&got, 409, "turn_running");
    assert_error(
        &env.post(&format!("/api/sessions/{id}/messages"), json!({"prompt": "more"}))
            .await,
        409,
        "turn_running",
    );
    let got = env
        .post(
            &format!("/api/sessions/{id}/approvals/no-such-call"),
            json!({"decision": "deny"}),
        )
        .await;
    assert_error(&got, 404, "not_found");
    let (s, c) = env.post(&format!("/api/sessions/{id}/cancel"), json!({})).await;
    assert_eq!((s, c), (StatusCode::OK, json!({"cancelled": true})));
    env.idle(&id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn untracked_changes_need_confirmation_and_manual_edits_conflict() {
    let mut script = shell("echo hi > s.txt");
    script.extend(writes("a.txt", "mine\n"));
    let env = Env::with(script, BashPolicy::Allow);
    let id = env.create().await;
    env.turn(&id, "shell").await;
    env.turn(&id, "write").await;
    // Turn 0 ran a shell command: restoring code to it spans an untracked change.
    let (s, plan) = env
        .post(
            &format!("/api/sessions/{id}/rewind/prepare"),
            json!({"turn": 0, "scope": "code"}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{plan}");
    assert_eq!(plan["requires_confirmation"], true, "{plan}");
    // the untracked change comes with its words, as every frontend shows it
    assert_eq!(
        plan["gaps"][0]["says"], "echo hi > s.txt — a shell command: what it did to files is not tracked",
        "{plan}"
    );
    let commit = format!("/api/sessions/{id}/rewind/commit");
    let got = env.post(&commit, json!({"plan_id": plan["plan_id"]})).await;
    assert_error(&got, 428, "confirmation_required");
    // The user edits a file Retrace wrote: a code restore of turn 1 conflicts.
    std::fs::write(env.ws.join("a.txt"), "edited by hand\n").unwrap();
    let (_, plan) = env
        .post(
            &format!("/api/sessions/{id}/rewind/prepare"),
            json!({"turn": 1, "scope": "code"}),
        )
        .await;
    let conflict = &plan["conflicts"][0];
    assert_eq!(conflict["reason"], "manual_edit", "{plan}");
    assert_eq!(conflict["says"], "edited outside Retrace", "{plan}");
    assert_eq!(
        plan["files"][0]["conflict"]["says"], "edited outside Retrace",
        "{plan}"
    );
    let got = env
        .post(
            &commit,
            json!({"plan_id": plan["plan_id"], "on_conflict": "refuse"}),
        )
        .await;
    assert_error(&got, 409, "conflict");
    assert_eq!(
        got.1["error"]["details"]["conflicts"][0]["says"], "edited outside Retrace",
        "{}",
        got.1
    );
    assert_eq!(std::fs::read(env.ws.join("a.txt")).unwrap(), b"edited by hand\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_summary_is_cancelled() {
    let text = |t: &str| Reply::body(sse::body(&[sse::content(t), sse::finish("stop")], true));
    let mock = MockServer::start(vec![text("one"), text("two"), Reply::hang(vec![])])
        .await
        .unwrap();
    let mut spec = ModelSpec::new(Provider::OpenAi, "mock");
    spec.base_url = Some(mock.base_url());
    spec.api_key_env = Some(String::new());
    let env = Env::with_model(spec);
    let id = env.create().await;
    env.turn(&id, "first").await;
    env.turn(&id, "second").await;
    let app = env.app.clone();
    let url = format!("/api/sessions/{id}/summarize");
    let summary = tokio::spawn(async move {
        use tower::ServiceExt;
        let req = Env::request(
            Method::POST,
            &url,
            Some(&json!({"turn": 1, "direction": "up_to"})),
        );
        let res = app.oneshot(req).await.unwrap();
        let status = res.status();
        let body: Value =
            serde_json::from_slice(&res.into_body().collect().await.unwrap().to_bytes()).unwrap();
        (status, body)
    });
    env.running(&id).await;
    let (s, c) = env.post(&format!("/api/sessions/{id}/cancel"), json!({})).await;
    assert_eq!((s, c), (StatusCode::OK, json!({"cancelled": true})));
    assert_error(&summary.await.unwrap(), 409, "cancelled");
    // A summary model over HTTP is refused: it would name an endpoint and a key variable. Found
    // by review: any `model` that was not a whole model spec got a confusing type error.
    for model in [
        json!({"provider": "demo", "name": ""}),
        json!("demo"),
        json!(3),
        json!(null),
    ] {
        let got = env
            .post(
                &format!("/api/sessions/{id}/summarize"),
                json!({"turn": 1, "direction": "up_to", "model": model}),
            )
            .await;
        assert_error(&got, 400, "usage");
        assert_eq!(
            got.1["error"]["message"], "unknown field `model`",
            "{model}: {}",
            got.1
        );
    }
}

/// Every file under `dir`, recursively.
fn files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Found by review: the session was created before its model was given, so a 502 left an empty
/// session behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_cannot_be_used_creates_no_session() {
    let env = Env::new(vec![]);
    let id = env.create().await;
    let (_, before) = env.get("/api/sessions").await;
    let stored = files(&env.home);
    let missing = format!("script:{}", env.tmp.path().join("none.json").display());
    let got = env.post("/api/sessions", json!({"model": missing})).await;
    assert_error(&got, 502, "model");
    let got = env.post("/api/sessions", json!({"model": "nonsense:x"})).await;
    assert_error(&got, 400, "usage");
    let (_, after) = env.get("/api/sessions").await;
    assert_eq!(after, before);
    assert_eq!(after.as_array().unwrap().len(), 1, "{after}");
    assert_eq!(after[0]["id"], id.as_str(), "{after}");
    assert_eq!(files(&env.home), stored, "a file was left in the data root");
    // A usable model still creates its session, with that model.
    let demo = env.post("/api/sessions", json!({"model": "demo"})).await;
    assert_eq!(demo.0, StatusCode::CREATED, "{}", demo.1);
    let sid = demo.1["session_id"].as_str().unwrap();
    let (_, st) = env.get(&format!("/api/sessions/{sid}")).await;
    assert!(st["model"].as_str().is_some_and(|m| !m.is_empty()), "{st}");
}

/// Found by review: a body sent as another type (a form, plain text) was read as JSON.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_must_be_sent_as_json() {
    let env = Env::new(vec![]);
    let id = env.create().await;
    let post = |path: String, ct: Option<&str>, body: &'static str| {
        let mut b = axum::http::Request::builder()
            .method(Method::POST)
            .uri(path)
            .header("host", crate::support::HOST)
            .header("authorization", format!("Bearer {TOKEN}"));
        if let Some(ct) = ct {
            b = b.header("content-type", ct);
        }
        if !body.is_empty() {
            b = b.header("content-length", body.len());
        }
        b.body(axum::body::Body::from(body)).unwrap()
    };
    let switch = format!("/api/sessions/{id}/switch");
    for ct in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        Some("application/jsonp"),
    ] {
        let (s, _, b) = env.send(post(switch.clone(), ct, r#"{"head": "main"}"#)).await;
        let v: Value = serde_json::from_slice(&b).unwrap();
        assert_error(&(s, v.clone()), 415, "usage");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("Content-Type: application/json"),
            "{v}"
        );
    }
    for ct in [
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON;charset=UTF-8",
    ] {
        let (s, _, b) = env
            .send(post(switch.clone(), Some(ct), r#"{"head": "main"}"#))
            .await;
        assert_eq!(s, StatusCode::OK, "{ct}: {}", String::from_utf8_lossy(&b));
    }
    // No body, no type needed (cancel).
    let (s, _, b) = env
        .send(post(format!("/api/sessions/{id}/cancel"), None, ""))
        .await;
    assert_eq!(s, StatusCode::OK, "{}", String::from_utf8_lossy(&b));
    // A body without a Content-Length (chunked) is checked too.
    let req = axum::http::Request::builder()
        .method(Method::POST)
        .uri(&switch)
        .header("host", crate::support::HOST)
        .header("authorization", format!("Bearer {TOKEN}"))
        .body(axum::body::Body::from(r#"{"head": "main"}"#))
        .unwrap();
    let (s, _, _) = env.send(req).await;
    assert_eq!(s, StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_and_corrupt_logs_are_io_and_corrupt() {
    let env = Env::new(vec![]);
    let dir = env.home.join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let corrupt = "01900000-0000-7000-8000-000000000001";
    std::fs::write(
        dir.join(format!("{corrupt}.jsonl")),
        b"{\"not\": \"a header\"}\n\xff\xfe garbage\n",
    )
    .unwrap();
    let got = env.get(&format!("/api/sessions/{corrupt}")).await;
    assert_error(&got, 500, "corrupt");
    let io = "01900000-0000-7000-8000-000000000002";
    std::fs::create_dir_all(dir.join(format!("{io}.jsonl"))).unwrap();
    let got = env.get(&format!("/api/sessions/{io}")).await;
    assert_error(&got, 500, "io");
}
