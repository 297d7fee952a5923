//! Integration tests of `retrace-model`: the HTTP client against the mock server in `retrace-testkit`
//! (real HTTP on 127.0.0.1:0), the SSE corpus (the stable stand-in for fuzzing), the script model and
//! the demo model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod client;
mod client_failures;
mod client_finish;
mod client_limits;
mod client_retries;
mod demo;
mod script;
mod sse_corpus;

use std::time::Duration;

use retrace_model::{
    CancellationToken, ChatMessage, ChatModel, ChatRequest, ChatResponse, Delta, ModelError, OpenAiClient,
    OpenAiOptions, RetryPolicy,
};
use retrace_testkit::mock_openai::MockServer;

/// A client of `server` with a test key and fast retries (4 attempts, 10 ms base delay).
pub fn client(server: &MockServer) -> OpenAiClient {
    let mut opts = OpenAiOptions::new(server.base_url(), "mock-model");
    opts.api_key = Some("sk-test".into());
    opts.api_key_env = Some("DEEPSEEK_API_KEY".into());
    opts.label = "deepseek:mock-model".into();
    opts.retry = RetryPolicy {
        max_attempts: 4,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(50),
    };
    OpenAiClient::new(opts).unwrap()
}

/// A one-message request.
pub fn ask(prompt: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![ChatMessage::user(prompt)],
        tools: Vec::new(),
    }
}

/// Runs one request with a fresh token; returns the result and the deltas seen. Fails the test
/// (instead of hanging it) after 30 s.
pub async fn run(
    model: &mut dyn ChatModel,
    req: &ChatRequest,
) -> (Result<ChatResponse, ModelError>, Vec<Delta>) {
    run_with(model, req, &CancellationToken::new(), |_, _| {}).await
}

/// As [`run`], with a token and a hook called with each delta and the token.
pub async fn run_with(
    model: &mut dyn ChatModel,
    req: &ChatRequest,
    cancel: &CancellationToken,
    hook: impl Fn(&Delta, &CancellationToken) + Send + Sync,
) -> (Result<ChatResponse, ModelError>, Vec<Delta>) {
    let mut deltas = Vec::new();
    let token = cancel.clone();
    let mut on_delta = |d: Delta| {
        hook(&d, &token);
        deltas.push(d);
    };
    let result = tokio::time::timeout(
        Duration::from_secs(30),
        model.complete(req, &mut on_delta, cancel),
    )
    .await
    .expect("the model call hung");
    (result, deltas)
}

/// The text of the content deltas, joined.
pub fn content_of(deltas: &[Delta]) -> String {
    deltas
        .iter()
        .filter_map(|d| match d {
            Delta::Content(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}
