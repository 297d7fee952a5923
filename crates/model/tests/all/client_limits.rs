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

/// Found by attack: a failure after only a tool call had begun was not retried ("after part of
/// the answer was shown", though nothing is shown of a tool call in the making).
#[tokio::test]
async fn a_failure_while_only_a_tool_call_was_streaming_is_retried() {
    use retrace_testkit::mock_openai::sse::{event, tool_call_start};
    let broken = Reply::disconnect(vec![Chunk::new(event(&tool_call_start(0, "c0", "list_dir")))]);
    let ok = Reply::body(body(&[content("fine"), finish("stop")], true));
    let server = MockServer::start(vec![broken, ok]).await.unwrap();
    let (result, _) = run(&mut impatient(&server, 2), &ask("hi")).await;
    assert_eq!(result.unwrap().content, "fine");
    assert_eq!(server.request_count(), 2);
}

/// Found by attack: an HTML page answered with 200 (a wrong base URL, a captive portal) was
/// retried as a broken stream and never shown. It fails at once, quoting the page.
#[tokio::test]
async fn an_html_page_is_said_at_once() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let serve = tokio::spawn(async move {
        let mut served = 0;
        while let Ok((mut s, _)) = listener.accept().await {
            let mut buf = vec![0u8; 65536];
            let _ = s.read(&mut buf).await;
            let page = "<html><body>Welcome to the hotel wifi</body></html>";
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                page.len()
            );
            let _ = s.write_all(format!("{head}{page}").as_bytes()).await;
            served += 1;
            if served > 3 {
                break;
            }
        }
        served
    });
    let mut opts = OpenAiOptions::new(url, "m");
    opts.retry.base_delay = Duration::from_millis(10);
    let (result, _) = run(&mut OpenAiClient::new(opts).unwrap(), &ask("hi")).await;
    match result {
        Err(ModelError::Protocol { detail }) => {
            assert!(
                detail.contains("HTML") && detail.contains("hotel wifi"),
                "{detail}"
            )
        }
        other => panic!("{other:?}"),
    }
    serve.abort();
}
