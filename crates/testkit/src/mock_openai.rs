//! A mock OpenAI-compatible server for model-client tests: real HTTP/1.1 on `127.0.0.1:0`, answering
//! each request with the next scripted [`Reply`] and recording what it received.
//!
//! The HTTP is hand-written and minimal on purpose — request line, headers, a `Content-Length` body; one
//! request per connection (`Connection: close`) — so a test controls the bytes on the wire exactly.
//! Streams are sent with chunked transfer encoding, one HTTP chunk per scripted [`Chunk`], which keeps
//! the test's chunk boundaries visible to the client and lets a mid-stream disconnect (no terminating
//! chunk) be told apart from a clean end. Builders for the usual stream payloads are in [`sse`].
//!
//! Needs a tokio runtime (`#[tokio::test]`). Dropping the server stops it and closes its connections.

pub mod sse;

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// Requests larger than this (head plus body) are cut off.
const REQUEST_LIMIT: usize = 8 * 1024 * 1024;

/// Some bytes of a streamed response, written after an optional pause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Waited before writing (lets a test force separate reads on the client side).
    pub delay: Duration,
    /// The bytes (an empty chunk is skipped: it would end the chunked body).
    pub bytes: Vec<u8>,
}

impl Chunk {
    /// Bytes written at once.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Chunk {
        Chunk {
            delay: Duration::ZERO,
            bytes: bytes.into(),
        }
    }

    /// Bytes written after `delay`.
    pub fn after(delay: Duration, bytes: impl Into<Vec<u8>>) -> Chunk {
        Chunk {
            delay,
            bytes: bytes.into(),
        }
    }
}

/// How a streamed response ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The terminating chunk, then close: a clean end of the HTTP body.
    Finish,
    /// Close without the terminating chunk: the client sees the body break.
    Disconnect,
    /// Keep the connection open until the client closes it (counted by [`MockServer::hung_up`]).
    Hang,
}

/// One scripted answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// A non-streamed answer with this status and a JSON body.
    Status {
        /// The status code.
        status: u16,
        /// A `Retry-After` header value, if any.
        retry_after: Option<String>,
        /// The body (sent as `application/json`).
        body: String,
    },
    /// `200 text/event-stream`, the chunks, then the end.
    Stream {
        /// What to write, in order.
        chunks: Vec<Chunk>,
        /// How to end.
        end: End,
    },
}

impl Reply {
    /// An error status with an OpenAI-style body `{"error": {"message": …}}`.
    pub fn error(status: u16, message: &str) -> Reply {
        Reply::Status {
            status,
            retry_after: None,
            body: serde_json::json!({"error": {"message": message, "type": "mock_error"}}).to_string(),
        }
    }

    /// HTTP 429, optionally with `Retry-After`.
    pub fn rate_limited(retry_after: Option<&str>) -> Reply {
        Reply::Status {
            status: 429,
            retry_after: retry_after.map(str::to_string),
            body: serde_json::json!({"error": {"message": "rate limit reached", "type": "rate_limit"}})
                .to_string(),
        }
    }

    /// A stream that ends cleanly.
    pub fn stream(chunks: Vec<Chunk>) -> Reply {
        Reply::Stream {
            chunks,
            end: End::Finish,
        }
    }

    /// A stream of `body` in one chunk that ends cleanly.
    pub fn body(body: impl Into<Vec<u8>>) -> Reply {
        Reply::stream(vec![Chunk::new(body)])
    }

    /// A stream that breaks after the chunks.
    pub fn disconnect(chunks: Vec<Chunk>) -> Reply {
        Reply::Stream {
            chunks,
            end: End::Disconnect,
        }
    }

    /// A stream that stalls after the chunks until the client goes away.
    pub fn hang(chunks: Vec<Chunk>) -> Reply {
        Reply::Stream {
            chunks,
            end: End::Hang,
        }
    }
}

/// A request the server received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    /// `POST`, `GET`, …
    pub method: String,
    /// The request target, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Headers in order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body bytes.
    pub body: Vec<u8>,
    /// When the whole request had been read (lets a test check the client's waits between
    /// requests from the server's side).
    pub received_at: Instant,
}

impl RecordedRequest {
    /// The first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

#[derive(Debug, Default)]
struct Shared {
    replies: VecDeque<Reply>,
    requests: Vec<RecordedRequest>,
    hung_up: usize,
    strict: bool,
    /// The only bearer key a strict server accepts, when one is required.
    key: Option<String>,
    rejected: usize,
}

/// The `tool_call_id`s of `body`'s `tool` messages that answer no call of the assistant message
/// before their block (what a strict OpenAI-compatible server also rejects with HTTP 400).
pub fn orphan_tool_results(body: &serde_json::Value) -> Vec<String> {
    let Some(messages) = body["messages"].as_array() else {
        return Vec::new();
    };
    let mut open: Vec<&str> = Vec::new();
    let mut orphans = Vec::new();
    for m in messages {
        match m["role"].as_str() {
            Some("tool") => {
                let id = m["tool_call_id"].as_str().unwrap_or("");
                match open.iter().position(|c| *c == id) {
                    Some(i) => {
                        open.swap_remove(i);
                    }
                    None => orphans.push(id.to_string()),
                }
            }
            Some("assistant") => {
                open = m["tool_calls"]
                    .as_array()
                    .map(|cs| cs.iter().filter_map(|c| c["id"].as_str()).collect())
                    .unwrap_or_default();
            }
            _ => open.clear(),
        }
    }
    orphans
}

/// The tool call ids of `body`'s messages that no `tool` message answers before the next
/// non-tool message (what a strict OpenAI-compatible server rejects with HTTP 400).
pub fn unanswered_tool_calls(body: &serde_json::Value) -> Vec<String> {
    let Some(messages) = body["messages"].as_array() else {
        return Vec::new();
    };
    let mut missing = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let Some(calls) = m["tool_calls"].as_array() else {
            continue;
        };
        let answered: Vec<&str> = messages[i + 1..]
            .iter()
            .take_while(|n| n["role"] == "tool")
            .filter_map(|n| n["tool_call_id"].as_str())
            .collect();
        for c in calls {
            let id = c["id"].as_str().unwrap_or("");
            if !answered.contains(&id) {
                missing.push(id.to_string());
            }
        }
    }
    missing
}

/// The running server.
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Mutex<Shared>>,
    accept: JoinHandle<()>,
}

impl MockServer {
    /// Binds `127.0.0.1:0` and serves `replies`, one per request, in order. A request beyond them gets
    /// HTTP 400 saying no reply was scripted (not retryable, so a test fails at once).
    pub async fn start(replies: Vec<Reply>) -> io::Result<MockServer> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Mutex::new(Shared {
            replies: replies.into(),
            ..Shared::default()
        }));
        let state = Arc::clone(&shared);
        let accept = tokio::spawn(async move {
            let mut connections = JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                connections.spawn(serve(stream, Arc::clone(&state)));
                while connections.try_join_next().is_some() {}
            }
        });
        Ok(MockServer { addr, shared, accept })
    }

    /// Like [`MockServer::start`], but strict as real servers are: a request whose history has a
    /// tool call with no tool result after it gets HTTP 400 (and uses up no reply).
    pub async fn start_strict(replies: Vec<Reply>) -> io::Result<MockServer> {
        let server = MockServer::start(replies).await?;
        lock(&server.shared).strict = true;
        Ok(server)
    }

    /// Like [`MockServer::start_strict`], and it also accepts only `Authorization: Bearer KEY`: any
    /// other key, or none, gets HTTP 401 (and uses up no reply), as a real provider answers a key
    /// that is not its own.
    pub async fn start_strict_with_key(key: &str, replies: Vec<Reply>) -> io::Result<MockServer> {
        let server = MockServer::start_strict(replies).await?;
        lock(&server.shared).key = Some(key.to_string());
        Ok(server)
    }

    /// How many requests a strict server rejected (unanswered tool calls, a wrong or missing key).
    pub fn rejected(&self) -> usize {
        lock(&self.shared).rejected
    }

    /// `http://127.0.0.1:PORT` — give it as the base URL; requests then go to `/chat/completions`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Adds a reply at the end of the script.
    pub fn push(&self, reply: Reply) {
        lock(&self.shared).replies.push_back(reply);
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared).requests.clone()
    }

    /// How many requests were received.
    pub fn request_count(&self) -> usize {
        lock(&self.shared).requests.len()
    }

    /// How many [`End::Hang`] streams the client closed.
    pub fn hung_up(&self) -> usize {
        lock(&self.shared).hung_up
    }

    /// How many scripted replies are still unused.
    pub fn replies_left(&self) -> usize {
        lock(&self.shared).replies.len()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

async fn serve(mut stream: TcpStream, shared: Arc<Mutex<Shared>>) {
    let Ok(Some(request)) = read_request(&mut stream).await else {
        return;
    };
    let reply = {
        let mut s = lock(&shared);
        let (unanswered, orphans) = if s.strict {
            let body = request.json();
            (unanswered_tool_calls(&body), orphan_tool_results(&body))
        } else {
            (Vec::new(), Vec::new())
        };
        let wrong_key = match &s.key {
            Some(key) => request.header("authorization") != Some(format!("Bearer {key}").as_str()),
            None => false,
        };
        s.requests.push(request);
        let n = s.requests.len();
        if wrong_key {
            s.rejected += 1;
            Reply::error(
                401,
                "Incorrect API key provided (mock server: not the key of this base URL)",
            )
        } else if !orphans.is_empty() {
            s.rejected += 1;
            Reply::error(
                400,
                &format!(
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls' (tool_call_ids: {})",
                    orphans.join(", ")
                ),
            )
        } else if unanswered.is_empty() {
            s.replies.pop_front().unwrap_or_else(|| {
                Reply::error(400, &format!("mock server: no reply scripted for request {n}"))
            })
        } else {
            s.rejected += 1;
            Reply::error(
                400,
                &format!(
                    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
                    unanswered.join(", ")
                ),
            )
        }
    };
    let hung_up = match reply {
        Reply::Status {
            status,
            retry_after,
            body,
        } => write_status(&mut stream, status, retry_after.as_deref(), &body)
            .await
            .map(|()| false),
        Reply::Stream { chunks, end } => write_stream(&mut stream, &chunks, end).await,
    };
    if let Ok(true) = hung_up {
        lock(&shared).hung_up += 1;
    }
}

/// Reads one request; `None` when the client closed before sending a whole one.
async fn read_request(stream: &mut TcpStream) -> io::Result<Option<RecordedRequest>> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i;
        }
        let n = stream.read(&mut tmp).await?;
        if n == 0 || buf.len() > REQUEST_LIMIT {
            return Ok(None);
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let method = first.next().unwrap_or("").to_string();
    let path = first.next().unwrap_or("").to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0)
        .min(REQUEST_LIMIT);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut tmp).await?;
        if n == 0 {
            return Ok(None);
        }
        body.extend_from_slice(&tmp[..n]);
    }
    body.truncate(length);
    Ok(Some(RecordedRequest {
        method,
        path,
        headers,
        body,
        received_at: Instant::now(),
    }))
}

async fn write_status(
    stream: &mut TcpStream,
    status: u16,
    retry_after: Option<&str>,
    body: &str,
) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        reason(status),
        body.len()
    );
    if let Some(v) = retry_after {
        head.push_str(&format!("Retry-After: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

/// Writes a chunked event stream; `Ok(true)` when it hung until the client closed.
async fn write_stream(stream: &mut TcpStream, chunks: &[Chunk], end: End) -> io::Result<bool> {
    stream
        .write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
              Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        )
        .await?;
    stream.flush().await?;
    for chunk in chunks {
        if !chunk.delay.is_zero() {
            tokio::time::sleep(chunk.delay).await;
        }
        if chunk.bytes.is_empty() {
            continue;
        }
        let mut frame = format!("{:x}\r\n", chunk.bytes.len()).into_bytes();
        frame.extend_from_slice(&chunk.bytes);
        frame.extend_from_slice(b"\r\n");
        stream.write_all(&frame).await?;
        stream.flush().await?;
    }
    match end {
        End::Finish => {
            stream.write_all(b"0\r\n\r\n").await?;
            stream.shutdown().await?;
            Ok(false)
        }
        End::Disconnect => Ok(false),
        End::Hang => {
            let mut tmp = [0u8; 1024];
            loop {
                match stream.read(&mut tmp).await {
                    Ok(0) | Err(_) => return Ok(true),
                    Ok(_) => {}
                }
            }
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unanswered_calls_are_found() {
        let body = serde_json::json!({"messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "a"}, {"id": "b"}]},
            {"role": "tool", "tool_call_id": "a", "content": "ok"},
            {"role": "user", "content": "again"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c"}]},
            {"role": "tool", "tool_call_id": "c", "content": "ok"}
        ]});
        assert_eq!(unanswered_tool_calls(&body), ["b"]);
    }
}
