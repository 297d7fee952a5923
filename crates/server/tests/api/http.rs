//! The server on a real socket (127.0.0.1:0), through reqwest.

use std::net::SocketAddr;
use std::time::Duration;

use futures_util::StreamExt;
use retrace_control::{Service, ServiceOptions};
use retrace_protocol::ModelSpec;
use retrace_server::{ConnectionLimits, ServeOptions, Server};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::{resolver, writes, TOKEN};

/// A served server; stops (closing its sessions) when `stop` is called.
pub struct Live {
    pub addr: SocketAddr,
    pub base: String,
    pub url: String,
    pub tmp: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
    pub client: reqwest::Client,
}

impl Live {
    pub async fn start(responses: Vec<Value>) -> Live {
        Live::start_with(responses, ConnectionLimits::default()).await
    }

    /// A server with connection limits of its own.
    pub async fn start_with(responses: Vec<Value>, limits: ConnectionLimits) -> Live {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let script = tmp.path().join("script.json");
        std::fs::write(&script, json!({ "responses": responses }).to_string()).unwrap();
        let service = Service::new(ServiceOptions::new(tmp.path().join("home")));
        let server = Server::bind(
            service,
            ServeOptions {
                host: "127.0.0.1".into(),
                port: 0,
                allow_remote: false,
                token: Some(TOKEN.into()),
                workspace: ws,
                model: Some(ModelSpec::script(script.to_string_lossy())),
                model_wins: false,
                resolve: resolver(),
                limits,
            },
        )
        .await
        .unwrap();
        let addr = server.addr();
        let base = format!("http://{addr}");
        let url = server.url();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            server
                .run(async move {
                    let _ = rx.await;
                })
                .await;
        });
        Live {
            addr,
            base,
            url,
            tmp,
            stop: Some(tx),
            task,
            client: reqwest::Client::new(),
        }
    }

    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.client.get(format!("{}{path}", self.base)).bearer_auth(TOKEN)
    }

    pub fn post(&self, path: &str, body: Value) -> reqwest::RequestBuilder {
        self.client
            .post(format!("{}{path}", self.base))
            .bearer_auth(TOKEN)
            .header("content-type", "application/json")
            .body(body.to_string())
    }

    /// Status and JSON answer of a request.
    pub async fn json(req: reqwest::RequestBuilder) -> (u16, Value) {
        let res = req.send().await.unwrap();
        let status = res.status().as_u16();
        let bytes = res.bytes().await.unwrap();
        let v = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap()
        };
        (status, v)
    }

    pub async fn create(&self) -> String {
        let (s, v) = Live::json(self.post("/api/sessions", json!({}))).await;
        assert_eq!(s, 201, "{v}");
        v["session_id"].as_str().unwrap().to_string()
    }

    /// Stops the server and waits for it to return.
    pub async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        tokio::time::timeout(Duration::from_secs(30), &mut self.task)
            .await
            .expect("the server did not stop")
            .unwrap();
    }
}

/// Writes `request` as is on a new connection and reads until the server closes it (at most
/// 10 s): the raw answer.
pub async fn raw(addr: SocketAddr, request: &str) -> String {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut out))
        .await
        .expect("the server did not close the connection")
        .unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

/// The status of a raw answer.
pub fn raw_status(answer: &str) -> u16 {
    answer
        .strip_prefix("HTTP/1.1 ")
        .and_then(|r| r.get(..3))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {answer:?}"))
}

/// One SSE frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub id: Option<String>,
    pub event: Option<String>,
    pub data: String,
}

/// Reads frames off an SSE response; comments (keep-alives) are skipped.
pub struct SseReader {
    stream: futures_util::stream::BoxStream<'static, reqwest::Result<axum::body::Bytes>>,
    buf: Vec<u8>,
}

impl SseReader {
    pub fn new(res: reqwest::Response) -> SseReader {
        SseReader {
            stream: res.bytes_stream().boxed(),
            buf: Vec::new(),
        }
    }

    /// The next frame (None at the end of the stream); panics after 20 s without one.
    pub async fn next(&mut self) -> Option<Frame> {
        loop {
            if let Some(end) = self.buf.windows(2).position(|w| w == b"\n\n") {
                let raw: Vec<u8> = self.buf.drain(..end + 2).collect();
                let raw = String::from_utf8(raw).unwrap();
                let mut f = Frame {
                    id: None,
                    event: None,
                    data: String::new(),
                };
                let mut any = false;
                for line in raw.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        f.id = Some(v.trim().to_string());
                        any = true;
                    } else if let Some(v) = line.strip_prefix("event:") {
                        f.event = Some(v.trim().to_string());
                        any = true;
                    } else if let Some(v) = line.strip_prefix("data:") {
                        f.data.push_str(v.strip_prefix(' ').unwrap_or(v));
                        any = true;
                    }
                }
                if any {
                    return Some(f);
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(20), self.stream.next())
                .await
                .expect("no event for 20 s")?;
            self.buf.extend_from_slice(&chunk.unwrap());
        }
    }

    /// Frames up to and including the first `turn_finished`.
    pub async fn until_turn_finished(&mut self) -> Vec<Frame> {
        let mut out = Vec::new();
        loop {
            let f = self.next().await.expect("the stream ended");
            let done = f.event.as_deref() == Some("turn_finished");
            out.push(f);
            if done {
                return out;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_over_real_http() {
    let live = Live::start(writes("a.txt", "hi\n")).await;
    assert!(live.url.starts_with("http://127.0.0.1:") && live.url.ends_with(&format!("/?token={TOKEN}")));
    let id = live.create().await;
    let (s, v) =
        Live::json(live.post(&format!("/api/sessions/{id}/messages"), json!({"prompt": "go"}))).await;
    assert_eq!(s, 202, "{v}");
    assert_eq!(v["turn"], 0);
    for _ in 0..500 {
        let (_, st) = Live::json(live.get(&format!("/api/sessions/{id}"))).await;
        if st["running"].is_null() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(std::fs::read(live.tmp.path().join("ws/a.txt")).unwrap(), b"hi\n");
    let (s, c) = Live::json(live.get(&format!("/api/sessions/{id}/checkpoints"))).await;
    assert_eq!((s, &c["entries"][0]["turn"]), (200, &json!(0)), "{c}");
    let (s, plan) = Live::json(live.post(
        &format!("/api/sessions/{id}/rewind/prepare"),
        json!({"turn": 0, "scope": "both"}),
    ))
    .await;
    assert_eq!(s, 200, "{plan}");
    let (s, r) = Live::json(live.post(
        &format!("/api/sessions/{id}/rewind/commit"),
        json!({"plan_id": plan["plan_id"], "confirm": false, "on_conflict": "refuse"}),
    ))
    .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["prompt"], "go", "{r}");
    assert!(!live.tmp.path().join("ws/a.txt").exists());
    let (_, st) = Live::json(live.get(&format!("/api/sessions/{id}"))).await;
    assert_eq!(st["head_id"], r["head_id"], "the rewind is in place");

    // Refusals on the wire: no token, a foreign Host, a foreign Origin, a body over the cap.
    let res = live
        .client
        .get(format!("{}/api/sessions", live.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 401);
    let res = live
        .get("/api/sessions")
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 403);
    let res = live
        .get("/api/sessions")
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 403);
    let big = json!({"prompt": "x".repeat(retrace_server::MAX_BODY)});
    let (s, v) = Live::json(live.post(&format!("/api/sessions/{id}/messages"), big)).await;
    assert_eq!((s, &v["error"]["code"]), (413, &json!("usage")), "{v}");
    let (s, v) = Live::json(live.get("/api/nothing")).await;
    assert_eq!((s, &v["error"]["code"]), (404, &json!("not_found")));
    live.stop().await;
}
