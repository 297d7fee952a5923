//! What the page shows around a session: the models to choose from, a session's model switched,
//! and the git branch of its workspace on its status and snapshot.

use axum::http::StatusCode;
use serde_json::json;

use crate::support::{assert_error, Env};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_models_are_offered_and_a_session_switches_to_one() {
    let env = Env::new(vec![json!({"content": "hello"})]);
    let (s, m) = env.get("/api/models").await;
    assert_eq!(s, StatusCode::OK, "{m}");
    let server_model = m["default"].as_str().unwrap().to_string();
    assert!(server_model.starts_with("script:"), "{m}");
    assert_eq!(m["models"][0], server_model.as_str(), "{m}");
    assert_eq!(m["models"].as_array().unwrap().last().unwrap(), "demo", "{m}");

    let id = env.create().await;
    let (s, st) = env
        .post(&format!("/api/sessions/{id}/model"), json!({"model": "demo"}))
        .await;
    assert_eq!((s, &st["model"]), (StatusCode::OK, &json!("demo")), "{st}");
    let (_, st) = env.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(st["model"], "demo", "{st}");
    // the demo model answers the next turn
    env.turn(&id, "hi").await;

    // back to the server's own; a bad one is refused and the session keeps its model
    let (s, st) = env
        .post(
            &format!("/api/sessions/{id}/model"),
            json!({"model": server_model}),
        )
        .await;
    assert_eq!((s, &st["model"]), (StatusCode::OK, &json!(server_model)), "{st}");
    let bad = env
        .post(&format!("/api/sessions/{id}/model"), json!({"model": "nope:x"}))
        .await;
    assert_error(&bad, 400, "usage");
    let bad = env
        .post(
            &format!("/api/sessions/{id}/model"),
            json!({"model": "demo", "base_url": "http://x"}),
        )
        .await;
    assert_error(&bad, 400, "usage");
    let (_, st) = env.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(st["model"], server_model.as_str(), "{st}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_and_the_snapshot_say_the_workspaces_branch() {
    let env = Env::new(vec![]);
    let (_, w) = env.get("/api/workspace").await;
    assert_eq!(w, json!({"workspace": env.ws.display().to_string()}), "{w}");
    let id = env.create().await;
    let (_, st) = env.get(&format!("/api/sessions/{id}")).await;
    assert!(st.get("branch").is_none(), "no repository: no branch: {st}");

    std::fs::create_dir(env.ws.join(".git")).unwrap();
    std::fs::write(env.ws.join(".git/HEAD"), "ref: refs/heads/feature\n").unwrap();
    let (_, st) = env.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(st["branch"], "feature", "{st}");
    let (_, w) = env.get("/api/workspace").await;
    assert_eq!(w["branch"], "feature", "{w}");
    let (_, snap) = env.get(&format!("/api/sessions/{id}?include=items")).await;
    assert_eq!(snap["status"]["branch"], "feature", "{snap}");
    let (_, st) = env
        .post(&format!("/api/sessions/{id}/plan"), json!({"on": false}))
        .await;
    assert_eq!(st["branch"], "feature", "{st}");
}

/// A model with an endpoint of its own is labelled with it ("openai:m at URL"); the status names
/// it beside as the offered models list it, so the page matches the two without reading labels.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_names_the_model_as_the_offered_list_does() {
    let mut spec = retrace_protocol::ModelSpec::new(retrace_protocol::Provider::OpenAi, "local-model");
    spec.base_url = Some("http://127.0.0.1:9/v1".into());
    spec.api_key_env = Some(String::new());
    let env = Env::with_model(spec);
    let (_, m) = env.get("/api/models").await;
    assert_eq!(m["default"], "openai:local-model", "{m}");
    let id = env.create().await;
    let (_, st) = env.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(st["model"], "openai:local-model at http://127.0.0.1:9/v1", "{st}");
    assert_eq!(st["model_spec"], "openai:local-model", "{st}");
    assert!(m["models"].as_array().unwrap().contains(&st["model_spec"]), "{m}");
    let (_, snap) = env.get(&format!("/api/sessions/{id}?include=items")).await;
    assert_eq!(snap["status"]["model_spec"], "openai:local-model", "{snap}");
    let (_, st) = env
        .post(&format!("/api/sessions/{id}/model"), json!({"model": "demo"}))
        .await;
    assert_eq!(
        (&st["model"], &st["model_spec"]),
        (&json!("demo"), &json!("demo")),
        "{st}"
    );
}
