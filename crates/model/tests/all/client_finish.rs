//! A response is complete at its `finish_reason`: the client neither waits for `[DONE]` nor for the
//! server to close the connection, only — briefly — for a usage chunk still to come.
//!
//! Each server here keeps the connection open after its last chunk ([`Reply::hang`]) and the client's
//! read timeout is an hour, so a client that waited for more would hang until the harness's 30 s
//! limit fails the test: no timing is asserted.

use std::time::Duration;

use retrace_model::{OpenAiClient, OpenAiOptions, Usage};
use retrace_testkit::mock_openai::sse::{self, body, content, finish, finish_with_usage};
use retrace_testkit::mock_openai::{Chunk, MockServer, Reply};

use crate::{ask, run};

const AN_HOUR: Duration = Duration::from_secs(3600);

fn patient_client(server: &MockServer, include_usage: bool, usage_grace: Duration) -> OpenAiClient {
    let mut opts = OpenAiOptions::new(server.base_url(), "m");
    opts.retry.max_attempts = 1;
    opts.read_timeout = AN_HOUR;
    opts.include_usage = include_usage;
    opts.usage_grace = usage_grace;
    OpenAiClient::new(opts).unwrap()
}

fn usage(prompt_tokens: u64, completion_tokens: u64) -> Option<Usage> {
    Some(Usage {
        prompt_tokens,
        completion_tokens,
        total_tokens: prompt_tokens + completion_tokens,
        cached_tokens: 0,
    })
}

/// Waits (up to 5 s) for the server to see the client close the held connection.
async fn assert_hung_up(server: &MockServer) {
    for _ in 0..500 {
        if server.hung_up() == 1 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the client never closed the connection");
}

#[tokio::test]
async fn a_finish_with_its_usage_ends_the_response_on_an_open_connection() {
    let chunks = body(&[content("hi"), finish_with_usage("stop", 12, 3)], false);
    let server = MockServer::start(vec![Reply::hang(vec![Chunk::new(chunks)])])
        .await
        .unwrap();
    let (result, _) = run(&mut patient_client(&server, true, AN_HOUR), &ask("hi")).await;
    let response = result.unwrap();
    assert_eq!(response.content, "hi");
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    assert_eq!(response.usage, usage(12, 3));
    assert_hung_up(&server).await;
}

#[tokio::test]
async fn the_usage_chunk_after_the_finish_is_waited_for() {
    // A running count before the finish (as some servers send) is not the final one.
    let mut early = content("hi");
    early["usage"] = sse::usage(1, 1)["usage"].clone();
    let head = body(&[early, finish("stop")], false);
    let tail = body(&[sse::usage(12, 3)], false);
    let server = MockServer::start(vec![Reply::hang(vec![
        Chunk::new(head),
        Chunk::after(Duration::from_millis(100), tail),
    ])])
    .await
    .unwrap();
    let (result, _) = run(&mut patient_client(&server, true, AN_HOUR), &ask("hi")).await;
    assert_eq!(result.unwrap().usage, usage(12, 3));
}

#[tokio::test]
async fn without_a_usage_chunk_the_grace_ends_the_response() {
    let chunks = body(&[content("hi"), finish("stop")], false);
    let server = MockServer::start(vec![Reply::hang(vec![Chunk::new(chunks)])])
        .await
        .unwrap();
    let grace = Duration::from_millis(100);
    let (result, _) = run(&mut patient_client(&server, true, grace), &ask("hi")).await;
    let response = result.unwrap();
    assert_eq!(response.content, "hi");
    assert_eq!(response.usage, None);
    assert_hung_up(&server).await;
}

#[tokio::test]
async fn without_include_usage_the_finish_ends_the_response_at_once() {
    let chunks = body(&[content("hi"), finish("stop")], false);
    let server = MockServer::start(vec![Reply::hang(vec![Chunk::new(chunks)])])
        .await
        .unwrap();
    let (result, _) = run(&mut patient_client(&server, false, AN_HOUR), &ask("hi")).await;
    assert_eq!(result.unwrap().content, "hi");
}

#[tokio::test]
async fn a_bad_chunk_after_the_finish_takes_nothing_from_the_answer() {
    let chunks = format!(
        "{}data: {{not json\n\n",
        String::from_utf8(body(&[content("hi"), finish("stop")], false)).unwrap()
    );
    let server = MockServer::start(vec![Reply::body(chunks)]).await.unwrap();
    let grace = Duration::from_millis(100);
    let (result, _) = run(&mut patient_client(&server, true, grace), &ask("hi")).await;
    assert_eq!(result.unwrap().content, "hi");
}
