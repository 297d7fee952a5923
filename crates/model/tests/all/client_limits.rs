//! A server that never finishes cannot hold a turn for ever or exhaust memory (found by attack): a
//! stream of keep-alives only and a silent stream end at the read timeout, retried like a broken
//! stream; an event or an answer beyond its size limit fails the request.

use std::time::Duration;

use retrace_model::{ModelError, OpenAiClient, OpenAiOptions, MAX_EVENT_BYTES};
use retrace_testkit::mock_openai::sse::{body, content, finish, KEEP_ALIVE};
use retrace_testkit::mock_openai::{Chunk, MockServer, Reply};

use crate::{ask, run};

fn impatient(server: &MockServer, attempts: u32) -> OpenAiClient {
    let mut opts = OpenAiOptions::new(server.base_url(), "m");
    opts.retry.max_attempts = attempts;
    opts.retry.base_delay = Duration::from_millis(10);
    opts.read_timeout = Duration::from_millis(600);
    OpenAiClient::new(opts).unwrap()
}

#[tokio::test]
async fn keep_alives_alone_do_not_keep_a_stream_open_for_ever() {
    let pings: Vec<Chunk> = (0..100)
        .map(|_| Chunk::after(Duration::from_millis(100), KEEP_ALIVE))
        .collect();
    let ok = Reply::body(body(&[content("fine"), finish("stop")], true));
    let server = MockServer::start(vec![Reply::hang(pings), ok]).await.unwrap();
    let (result, _) = run(&mut impatient(&server, 2), &ask("hi")).await;
    // The first attempt is given up as broken, the retry answers.
    assert_eq!(result.unwrap().content, "fine");
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn a_silent_stream_is_broken_at_the_read_timeout() {
    let server = MockServer::start(vec![Reply::hang(vec![])]).await.unwrap();
    let (result, _) = run(&mut impatient(&server, 1), &ask("hi")).await;
    match result {
        Err(ModelError::StreamBroken { detail, .. }) => assert!(detail.contains("no event"), "{detail}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_endless_line_fails_the_request() {
    let mut line = b"data: {\"choices\":[{\"delta\":{\"content\":\"".to_vec();
    line.extend(std::iter::repeat_n(b'a', MAX_EVENT_BYTES + 1024));
    let server = MockServer::start(vec![Reply::hang(vec![Chunk::new(line)])])
        .await
        .unwrap();
    let (result, _) = run(&mut impatient(&server, 1), &ask("hi")).await;
    match result {
        Err(ModelError::Protocol { detail }) => assert!(detail.contains("too large"), "{detail}"),
        other => panic!("{other:?}"),
    }
}
