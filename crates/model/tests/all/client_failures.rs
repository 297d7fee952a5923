//! The streaming client when things go wrong: rate limits, server errors, broken streams, refused
//! connections, bad data, and cancellation.

use std::time::Duration;

use retrace_model::{CancellationToken, Delta, ModelError, OpenAiClient, OpenAiOptions, RetryPolicy};
use retrace_testkit::mock_openai::sse::{self, body, content, finish};
use retrace_testkit::mock_openai::{Chunk, MockServer, Reply};
use serde_json::json;

use crate::{ask, client, content_of, run, run_with};

fn ok_stream() -> Reply {
    Reply::body(body(&[content("fine"), finish("stop")], true))
}

/// A stream that breaks before anything is shown: a role-only delta and a keep-alive, then nothing.
fn early_break() -> Reply {
    let start = sse::event(&sse::delta(json!({"role": "assistant", "content": ""})));
    Reply::disconnect(vec![Chunk::new(start), Chunk::new(sse::KEEP_ALIVE)])
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried_until_success() {
    let server = MockServer::start(vec![
        Reply::rate_limited(Some("0")),
        Reply::rate_limited(None),
        Reply::error(503, "overloaded"),
        ok_stream(),
    ])
    .await
    .unwrap();
    let (result, deltas) = run(&mut client(&server), &ask("hi")).await;
    assert_eq!(result.unwrap().content, "fine");
    assert_eq!(content_of(&deltas), "fine", "shown once");
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert!(
        requests.iter().all(|r| r.body == requests[0].body),
        "the same request each time"
    );
}

#[tokio::test]
async fn a_disconnect_mid_stream_fails_after_the_retries() {
    let server = MockServer::start(vec![
        early_break(),
        early_break(),
        early_break(),
        early_break(),
        ok_stream(),
    ])
    .await
    .unwrap();
    let (result, deltas) = run(&mut client(&server), &ask("hi")).await;
    let err = result.unwrap_err();
    match &err {
        ModelError::GaveUp { attempts, last } => {
            assert_eq!(*attempts, 4);
            assert!(
                matches!(**last, ModelError::StreamBroken { partial: false, .. }),
                "{last:?}"
            );
        }
        other => panic!("expected GaveUp, got {other:?}"),
    }
    assert!(
        err.to_string()
            .starts_with("gave up after 4 attempts: the response stream broke"),
        "{err}"
    );
    assert!(
        deltas.iter().all(|d| matches!(d, Delta::Retry { .. })),
        "nothing of an answer was shown: {deltas:?}"
    );
    assert_eq!(deltas.len(), 3, "three retries announced");
    assert_eq!(server.request_count(), 4);
    assert_eq!(server.replies_left(), 1);
}

#[tokio::test]
async fn a_disconnect_before_anything_was_shown_is_retried() {
    let server = MockServer::start(vec![early_break(), ok_stream()]).await.unwrap();
    let (result, _) = run(&mut client(&server), &ask("hi")).await;
    assert_eq!(result.unwrap().content, "fine");
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn a_disconnect_after_text_was_shown_fails_without_a_retry() {
    let partial = body(&[content("half an ans")], false);
    let server = MockServer::start(vec![Reply::disconnect(vec![Chunk::new(partial)]), ok_stream()])
        .await
        .unwrap();
    let (result, deltas) = run(&mut client(&server), &ask("hi")).await;
    let err = result.unwrap_err();
    assert!(
        matches!(err, ModelError::StreamBroken { partial: true, .. }),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("not retried, so nothing is shown twice"),
        "{err}"
    );
    assert_eq!(content_of(&deltas), "half an ans");
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn a_clean_end_before_any_finish_reason_is_a_broken_stream() {
    let cut = || Reply::body(body(&[sse::delta(json!({"role": "assistant"}))], false));
    let server = MockServer::start(vec![cut(), cut(), cut(), cut()]).await.unwrap();
    let (result, _) = run(&mut client(&server), &ask("hi")).await;
    let err = result.unwrap_err();
    assert!(err.to_string().contains("ended before a finish_reason"), "{err}");
    assert_eq!(server.request_count(), 4);
}

#[tokio::test]
async fn client_errors_are_not_retried_and_keep_the_servers_message() {
    let server = MockServer::start(vec![Reply::error(400, "tools[0] is invalid"), ok_stream()])
        .await
        .unwrap();
    let (result, _) = run(&mut client(&server), &ask("hi")).await;
    let err = result.unwrap_err();
    assert!(matches!(err, ModelError::Http { status: 400, .. }), "{err:?}");
    assert!(
        err.to_string()
            .ends_with("answered HTTP 400: tools[0] is invalid"),
        "{err}"
    );
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn unauthorized_says_which_variable_holds_the_key() {
    let server = MockServer::start(vec![Reply::error(401, "invalid api key")])
        .await
        .unwrap();
    let (result, _) = run(&mut client(&server), &ask("hi")).await;
    let msg = result.unwrap_err().to_string();
    assert!(
        msg.ends_with("HTTP 401: invalid api key (check the key in DEEPSEEK_API_KEY)"),
        "{msg}"
    );
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_reported() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut opts = OpenAiOptions::new(format!("http://127.0.0.1:{port}"), "m");
    opts.retry = RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
    };
    let mut model = OpenAiClient::new(opts).unwrap();
    let (result, _) = run(&mut model, &ask("hi")).await;
    match result.unwrap_err() {
        ModelError::GaveUp { attempts: 3, last } => {
            assert!(matches!(*last, ModelError::Connect { .. }), "{last:?}");
            assert!(last.to_string().contains(&format!("127.0.0.1:{port}")), "{last}");
        }
        other => panic!("expected GaveUp after 3 attempts, got {other:?}"),
    }
}

#[tokio::test]
async fn malformed_json_in_a_data_line_names_the_problem() {
    let stream = format!(
        "{}data: {{\"choices\": [{{\"delta\": \n\n",
        sse::event(&content("a"))
    );
    let server = MockServer::start(vec![Reply::body(stream), ok_stream()])
        .await
        .unwrap();
    let (result, _) = run(&mut client(&server), &ask("hi")).await;
    let err = result.unwrap_err();
    assert!(matches!(err, ModelError::Protocol { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("malformed JSON in a stream chunk"), "{msg}");
    assert!(msg.contains(r#"{"choices": [{"delta":"#), "{msg}");
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn an_error_object_in_the_stream_is_reported() {
    let stream = format!(
        "{}data: {}\n\n",
        sse::event(&content("a")),
        json!({"error": {"message": "quota"}})
    );
    let server = MockServer::start(vec![Reply::body(stream)]).await.unwrap();
    let (result, _) = run(&mut client(&server), &ask("hi")).await;
    assert_eq!(
        result.unwrap_err().to_string(),
        "the model server reported an error: quota"
    );
}

#[tokio::test]
async fn a_json_answer_instead_of_a_stream_is_explained() {
    let server = MockServer::start(vec![Reply::Status {
        status: 200,
        retry_after: None,
        body: json!({"choices": [{"message": {"content": "hi"}}]}).to_string(),
    }])
    .await
    .unwrap();
    let (result, _) = run(&mut client(&server), &ask("hi")).await;
    let msg = result.unwrap_err().to_string();
    assert!(msg.contains("not an event stream"), "{msg}");
}

#[tokio::test]
async fn cancelling_mid_stream_stops_promptly_and_closes_the_connection() {
    let first = body(&[content("first")], false);
    let server = MockServer::start(vec![Reply::hang(vec![Chunk::new(first)]), ok_stream()])
        .await
        .unwrap();
    let cancel = CancellationToken::new();
    let (result, deltas) = run_with(&mut client(&server), &ask("hi"), &cancel, |d, token| {
        if matches!(d, Delta::Content(_)) {
            token.cancel();
        }
    })
    .await;
    assert!(matches!(result, Err(ModelError::Cancelled)), "{result:?}");
    assert_eq!(content_of(&deltas), "first");
    assert_eq!(server.request_count(), 1, "not retried");
    // The client dropped the connection: the hanging server sees it close.
    for _ in 0..500 {
        if server.hung_up() == 1 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the server never saw the connection close");
}

#[tokio::test]
async fn cancelling_during_a_backoff_wait_stops_it() {
    let server = MockServer::start(vec![Reply::rate_limited(Some("30")), ok_stream()])
        .await
        .unwrap();
    let mut opts = OpenAiOptions::new(server.base_url(), "m");
    opts.retry = RetryPolicy::default();
    let mut model = OpenAiClient::new(opts).unwrap();
    let cancel = CancellationToken::new();
    let canceller = async {
        while server.request_count() < 1 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
    };
    let req = ask("hi");
    let ((result, _), ()) = tokio::join!(run_with(&mut model, &req, &cancel, |_, _| {}), canceller);
    assert!(matches!(result, Err(ModelError::Cancelled)), "{result:?}");
    assert_eq!(
        server.request_count(),
        1,
        "the 30 s wait was cut short, with no second request"
    );
}

#[tokio::test]
async fn a_cancelled_token_makes_no_request() {
    let server = MockServer::start(vec![ok_stream()]).await.unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let (result, _) = run_with(&mut client(&server), &ask("hi"), &cancel, |_, _| {}).await;
    assert!(matches!(result, Err(ModelError::Cancelled)));
    assert_eq!(server.request_count(), 0);
}
