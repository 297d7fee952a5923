//! Retries as the caller sees them: each one announced before its wait ([`Delta::Retry`]), the
//! server's `Retry-After` honoured, and error chunks inside a stream retried only while nothing was
//! shown.

use std::time::Duration;

use retrace_model::{Delta, ModelError, OpenAiClient, OpenAiOptions, RetryNotice, RetryPolicy};
use retrace_testkit::mock_openai::sse::{self, body, content, finish};
use retrace_testkit::mock_openai::{Chunk, MockServer, Reply};
use serde_json::json;

use crate::{ask, client, run};

fn ok_stream() -> Reply {
    Reply::body(body(&[content("fine"), finish("stop")], true))
}

/// The retry announcements among `deltas`: (message, notice).
fn retries(deltas: &[Delta]) -> Vec<(String, RetryNotice)> {
    deltas
        .iter()
        .filter_map(|d| match d {
            Delta::Retry { message, notice } => Some((message.clone(), notice.clone())),
            _ => None,
        })
        .collect()
}

/// A stream that reports an error before any text: a role-only delta, then the error chunk.
fn error_first(message: &str, code: Option<u64>) -> Reply {
    let role = sse::delta(json!({"role": "assistant", "content": ""}));
    Reply::body(body(&[role, sse::error(message, code)], false))
}

#[tokio::test]
async fn each_retry_is_announced_with_its_reason_wait_and_attempt() {
    let server = MockServer::start(vec![
        Reply::error(503, "overloaded"),
        Reply::rate_limited(None),
        ok_stream(),
    ])
    .await
    .unwrap();
    let (result, deltas) = run(&mut client(&server), &ask("hi")).await;
    assert_eq!(result.unwrap().content, "fine");
    let seen = retries(&deltas);
    assert_eq!(
        seen,
        [
            (
                "model: HTTP 503 (overloaded), retrying in 0.0 s (attempt 2 of 4)".to_string(),
                RetryNotice {
                    attempt: 2,
                    max_attempts: 4,
                    wait_ms: 10,
                    reason: "HTTP 503 (overloaded)".into(),
                },
            ),
            (
                "model: HTTP 429 (rate limit reached), retrying in 0.0 s (attempt 3 of 4)".to_string(),
                RetryNotice {
                    attempt: 3,
                    max_attempts: 4,
                    wait_ms: 20,
                    reason: "HTTP 429 (rate limit reached)".into(),
                },
            ),
        ]
    );
    assert!(
        matches!(deltas.first(), Some(Delta::Retry { .. })),
        "announced before anything else: {deltas:?}"
    );
}

#[tokio::test]
async fn the_last_failure_is_not_announced_as_a_retry() {
    let server = MockServer::start(vec![Reply::error(500, "down"), Reply::error(500, "down")])
        .await
        .unwrap();
    let mut opts = OpenAiOptions::new(server.base_url(), "m");
    opts.retry = RetryPolicy {
        max_attempts: 2,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(5),
    };
    let (result, deltas) = run(&mut OpenAiClient::new(opts).unwrap(), &ask("hi")).await;
    assert!(
        matches!(result, Err(ModelError::GaveUp { attempts: 2, .. })),
        "{result:?}"
    );
    let seen = retries(&deltas);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].1.attempt, 2);
}

/// `Retry-After: 1` makes the client wait a second where its own backoff would wait 10 ms: the
/// second request reaches the server at least a second after the first.
#[tokio::test]
async fn retry_after_is_honoured_and_announced() {
    let server = MockServer::start(vec![Reply::rate_limited(Some("1")), ok_stream()])
        .await
        .unwrap();
    let mut opts = OpenAiOptions::new(server.base_url(), "m");
    opts.retry = RetryPolicy {
        max_attempts: 4,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_secs(60),
    };
    let (result, deltas) = run(&mut OpenAiClient::new(opts).unwrap(), &ask("hi")).await;
    assert_eq!(result.unwrap().content, "fine");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let gap = requests[1].received_at - requests[0].received_at;
    assert!(gap >= Duration::from_millis(950), "waited only {gap:?}");
    let seen = retries(&deltas);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].1.wait_ms, 1000);
    assert_eq!(
        seen[0].0,
        "model: HTTP 429 (rate limit reached), retrying in 1.0 s (attempt 2 of 4)"
    );
}

#[tokio::test]
async fn an_error_chunk_before_any_text_is_retried_like_a_server_error() {
    let server = MockServer::start(vec![
        error_first("upstream overloaded", Some(502)),
        error_first("no code given", None),
        ok_stream(),
    ])
    .await
    .unwrap();
    let (result, deltas) = run(&mut client(&server), &ask("hi")).await;
    assert_eq!(result.unwrap().content, "fine");
    assert_eq!(server.request_count(), 3);
    let reasons: Vec<String> = retries(&deltas).into_iter().map(|(_, n)| n.reason).collect();
    assert_eq!(
        reasons,
        [
            "error in the stream (upstream overloaded)",
            "error in the stream (no code given)"
        ]
    );
}

#[tokio::test]
async fn an_error_chunk_with_a_client_error_code_is_not_retried() {
    let server = MockServer::start(vec![error_first("context too long", Some(400)), ok_stream()])
        .await
        .unwrap();
    let (result, deltas) = run(&mut client(&server), &ask("hi")).await;
    let err = result.unwrap_err();
    assert!(
        matches!(
            err,
            ModelError::Api {
                code: Some(400),
                partial: false,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(server.request_count(), 1);
    assert!(retries(&deltas).is_empty());
}

#[tokio::test]
async fn an_error_chunk_after_text_fails_without_a_retry() {
    let stream = body(&[content("half"), sse::error("upstream died", Some(502))], false);
    let server = MockServer::start(vec![Reply::stream(vec![Chunk::new(stream)]), ok_stream()])
        .await
        .unwrap();
    let (result, deltas) = run(&mut client(&server), &ask("hi")).await;
    let err = result.unwrap_err();
    assert!(matches!(err, ModelError::Api { partial: true, .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "the model server reported an error: upstream died"
    );
    assert_eq!(server.request_count(), 1, "the text was shown: no second answer");
    assert!(retries(&deltas).is_empty());
}
