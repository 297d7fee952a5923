//! A server over a temp data root and workspace, driven through its router.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use retrace_control::{Service, ServiceOptions};
use retrace_protocol::{BashPolicy, Error, ErrorCode, ModelSpec};
use retrace_server::{Guard, Registry};
use serde_json::{json, Value};
use tower::ServiceExt;

pub const TOKEN: &str = "0123456789abcdef0123456789abcdef";
pub const PORT: u16 = 4000;
pub const HOST: &str = "127.0.0.1:4000";

/// A script model answer that writes `path` with `content`, then one that ends the turn.
pub fn writes(path: &str, content: &str) -> Vec<Value> {
    vec![
        json!({"content": "writing", "tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}),
        json!({"content": "done"}),
    ]
}

/// A script model answer that runs a shell command, then one that ends the turn.
pub fn shell(command: &str) -> Vec<Value> {
    vec![
        json!({"content": "running", "tool_calls": [{"name": "bash", "arguments": {"command": command}}]}),
        json!({"content": "ran it"}),
    ]
}

pub struct Env {
    pub tmp: tempfile::TempDir,
    pub ws: PathBuf,
    pub home: PathBuf,
    pub registry: Arc<Registry>,
    pub app: Router,
}

/// Turns a request's `model` into a model the way the binary does for `script:` and `demo`.
pub fn resolver() -> retrace_server::ModelResolver {
    Arc::new(|m: &str| ModelSpec::parse(m).map_err(|e| Error::new(ErrorCode::Usage, e.to_string())))
}

impl Env {
    /// A server whose sessions replay `responses` (one script per opening of a session).
    pub fn new(responses: Vec<Value>) -> Env {
        Env::with(responses, BashPolicy::Deny)
    }

    pub fn with(responses: Vec<Value>, bash: BashPolicy) -> Env {
        Env::build(responses, bash, None)
    }

    /// A server whose sessions use `model`.
    pub fn with_model(model: ModelSpec) -> Env {
        Env::build(vec![], BashPolicy::Deny, Some(model))
    }

    fn build(responses: Vec<Value>, bash: BashPolicy, model: Option<ModelSpec>) -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&ws).unwrap();
        let script = tmp.path().join("script.json");
        std::fs::write(&script, json!({ "responses": responses }).to_string()).unwrap();
        let mut opts = ServiceOptions::new(&home);
        opts.bash = bash;
        let service = Service::new(opts);
        let registry = Arc::new(Registry::new(
            service,
            ws.clone(),
            Some(model.unwrap_or_else(|| ModelSpec::script(script.to_string_lossy()))),
            resolver(),
        ));
        let guard = Arc::new(Guard::new(TOKEN, "127.0.0.1", PORT).unwrap());
        let app = retrace_server::router(registry.clone(), guard);
        Env {
            tmp,
            ws,
            home,
            registry,
            app,
        }
    }

    /// A request with this server's Host and token.
    pub fn request(method: Method, path: &str, body: Option<&Value>) -> Request<Body> {
        let b = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, HOST)
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"));
        match body {
            Some(v) => b
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(v.to_string()))
                .unwrap(),
            None => b.body(Body::empty()).unwrap(),
        }
    }

    /// Sends `req` and reads the whole answer.
    pub async fn send(&self, req: Request<Body>) -> (StatusCode, axum::http::HeaderMap, Vec<u8>) {
        let res = self.app.clone().oneshot(req).await.unwrap();
        let (parts, body) = res.into_parts();
        let bytes = body.collect().await.unwrap().to_bytes().to_vec();
        (parts.status, parts.headers, bytes)
    }

    /// A JSON call: the status and the answer (null for an empty one).
    pub async fn call(&self, method: Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let (status, _, bytes) = self.send(Env::request(method, path, body.as_ref())).await;
        let v = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&bytes)))
        };
        (status, v)
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.call(Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.call(Method::POST, path, Some(body)).await
    }

    /// A new session; its id.
    pub async fn create(&self) -> String {
        let (status, v) = self.post("/api/sessions", json!({})).await;
        assert_eq!(status, StatusCode::CREATED, "{v}");
        v["session_id"].as_str().unwrap().to_string()
    }

    /// Sends a prompt and waits for its turn to end.
    pub async fn turn(&self, id: &str, prompt: &str) -> u64 {
        let (status, v) = self
            .post(&format!("/api/sessions/{id}/messages"), json!({"prompt": prompt}))
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{v}");
        self.idle(id).await;
        v["turn"].as_u64().unwrap()
    }

    /// Waits until nothing runs in session `id`.
    pub async fn idle(&self, id: &str) {
        for _ in 0..500 {
            let (status, v) = self.get(&format!("/api/sessions/{id}")).await;
            assert_eq!(status, StatusCode::OK, "{v}");
            if v["running"].is_null() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("session {id} did not become idle");
    }

    /// Waits until session `id` runs something.
    pub async fn running(&self, id: &str) {
        for _ in 0..500 {
            let (_, v) = self.get(&format!("/api/sessions/{id}")).await;
            if !v["running"].is_null() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("session {id} runs nothing");
    }
}

/// Asserts an error answer: the status, the code, and the `{"error": {code, message}}` shape.
pub fn assert_error(got: &(StatusCode, Value), status: u16, code: &str) {
    let (s, v) = got;
    assert_eq!(s.as_u16(), status, "{v}");
    assert_eq!(v["error"]["code"], code, "{v}");
    assert!(
        v["error"]["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{v}"
    );
}
