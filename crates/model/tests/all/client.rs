//! The streaming client on well-formed streams cut in awkward places.

use std::time::Duration;

use retrace_model::{ChatMessage, ChatRequest, Delta, ToolCall, ToolSpec, Usage};
use retrace_testkit::mock_openai::sse::{self, body, content, finish, tool_call_args, tool_call_start};
use retrace_testkit::mock_openai::{Chunk, MockServer, Reply};
use serde_json::json;

use crate::{ask, client, content_of, run};

#[tokio::test]
async fn requests_go_to_chat_completions_in_the_openai_shape() {
    let server = MockServer::start(vec![Reply::body(body(&[content("ok"), finish("stop")], true))])
        .await
        .unwrap();
    let mut model = client(&server);
    let req = ChatRequest {
        messages: vec![
            ChatMessage::system("be brief"),
            ChatMessage::user("list"),
            ChatMessage::assistant(
                "",
                vec![ToolCall {
                    id: "c1".into(),
                    name: "list_dir".into(),
                    arguments: r#"{"path":"."}"#.into(),
                }],
            ),
            ChatMessage::tool("c1", "a.txt"),
        ],
        tools: vec![ToolSpec {
            name: "list_dir".into(),
            description: "List a directory".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
    };
    let (result, _) = run(&mut model, &req).await;
    assert_eq!(result.unwrap().content, "ok");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/chat/completions")
    );
    assert_eq!(r.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("accept"), Some("text/event-stream"));
    let b = r.json();
    assert_eq!(b["model"], "mock-model");
    assert_eq!(b["stream"], true);
    assert_eq!(b["stream_options"]["include_usage"], true);
    assert_eq!(b["messages"][2]["tool_calls"][0]["function"]["name"], "list_dir");
    assert_eq!(
        b["messages"][3],
        json!({"role": "tool", "content": "a.txt", "tool_call_id": "c1"})
    );
    assert_eq!(b["tools"][0]["type"], "function");
    assert_eq!(b["tools"][0]["function"]["name"], "list_dir");
}

#[tokio::test]
async fn a_base_url_with_a_path_keeps_it() {
    let server = MockServer::start(vec![Reply::body(body(&[finish("stop")], true))])
        .await
        .unwrap();
    let mut opts = retrace_model::OpenAiOptions::new(format!("{}/v1/", server.base_url()), "m");
    opts.retry.max_attempts = 1;
    let mut model = retrace_model::OpenAiClient::new(opts).unwrap();
    let (result, _) = run(&mut model, &ask("hi")).await;
    result.unwrap();
    let r = &server.requests()[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.header("authorization"), None, "no key, no Authorization header");
}

const UNICODE: &str = "h\u{e9}llo \u{4e16}\u{754c} \u{1f389} \u{fc}n\u{ef}c\u{f6}d\u{e9}";

#[tokio::test]
async fn utf8_split_inside_characters_arrives_whole() {
    let stream = body(&[content(UNICODE), content(" \u{1f600}"), finish("stop")], true);
    // One HTTP chunk per byte: every boundary, inside every multi-byte character, is exercised.
    let server = MockServer::start(vec![Reply::stream(sse::split_every(&stream, 1))])
        .await
        .unwrap();
    let mut model = client(&server);
    let (result, deltas) = run(&mut model, &ask("hi")).await;
    let response = result.unwrap();
    let expected = format!("{UNICODE} \u{1f600}");
    assert_eq!(response.content, expected);
    assert_eq!(content_of(&deltas), expected);
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn utf8_split_with_pauses_between_the_bytes_of_one_character() {
    let stream = body(&[content("\u{1f389}\u{4e16}"), finish("stop")], false);
    let emoji = stream
        .windows(4)
        .position(|w| w == "\u{1f389}".as_bytes())
        .unwrap();
    let pause = Duration::from_millis(5);
    let chunks = vec![
        Chunk::new(&stream[..emoji + 1]),
        Chunk::after(pause, &stream[emoji + 1..emoji + 3]),
        Chunk::after(pause, &stream[emoji + 3..emoji + 5]),
        Chunk::after(pause, &stream[emoji + 5..]),
    ];
    let server = MockServer::start(vec![Reply::stream(chunks)]).await.unwrap();
    let (result, _) = run(&mut client(&server), &ask("hi")).await;
    assert_eq!(result.unwrap().content, "\u{1f389}\u{4e16}");
}

#[tokio::test]
async fn tool_call_arguments_split_inside_their_json_are_assembled() {
    let stream = body(
        &[
            tool_call_start(0, "call_a", "write_file"),
            tool_call_args(0, r#"{"pa"#),
            tool_call_args(0, r#"th": "dir/a.t"#),
            tool_call_args(0, r#"xt", "content": "h\u00e9"#),
            tool_call_args(0, "\u{4e16}\\n\"}"),
            finish("tool_calls"),
        ],
        true,
    );
    // HTTP chunks of 7 bytes also cut the data lines themselves in the middle of their JSON.
    let server = MockServer::start(vec![Reply::stream(sse::split_every(&stream, 7))])
        .await
        .unwrap();
    let (result, deltas) = run(&mut client(&server), &ask("write")).await;
    let response = result.unwrap();
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(response.tool_calls.len(), 1);
    let call = &response.tool_calls[0];
    assert_eq!((call.id.as_str(), call.name.as_str()), ("call_a", "write_file"));
    let args: serde_json::Value = serde_json::from_str(&call.arguments).unwrap();
    assert_eq!(args, json!({"path": "dir/a.txt", "content": "h\u{e9}\u{4e16}\n"}));
    let fragments: String = deltas
        .iter()
        .filter_map(|d| match d {
            Delta::ToolCallArgs { index: 0, fragment } => Some(fragment.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(fragments, call.arguments);
}

#[tokio::test]
async fn interleaved_deltas_of_two_tool_calls_are_assembled_by_index() {
    let stream = body(
        &[
            content("Two edits."),
            tool_call_start(0, "call_0", "write_file"),
            tool_call_start(1, "call_1", "delete_file"),
            tool_call_args(0, r#"{"path":"#),
            tool_call_args(1, r#"{"path":"#),
            tool_call_args(1, r#""old.txt"}"#),
            tool_call_args(0, r#""new.txt","content":"x"}"#),
            finish("tool_calls"),
        ],
        true,
    );
    let server = MockServer::start(vec![Reply::body(stream)]).await.unwrap();
    let (result, deltas) = run(&mut client(&server), &ask("go")).await;
    let response = result.unwrap();
    assert_eq!(
        response.tool_calls,
        vec![
            ToolCall {
                id: "call_0".into(),
                name: "write_file".into(),
                arguments: r#"{"path":"new.txt","content":"x"}"#.into()
            },
            ToolCall {
                id: "call_1".into(),
                name: "delete_file".into(),
                arguments: r#"{"path":"old.txt"}"#.into()
            },
        ]
    );
    assert_eq!(
        deltas[..4],
        [
            Delta::Content("Two edits.".into()),
            Delta::ToolCallStart {
                index: 0,
                id: "call_0".into(),
                name: "write_file".into()
            },
            Delta::ToolCallArgs {
                index: 0,
                fragment: r#"{"path":"#.into()
            },
            // Announced once its arguments begin (its name is whole then).
            Delta::ToolCallStart {
                index: 1,
                id: "call_1".into(),
                name: "delete_file".into()
            },
        ]
    );
    assert_eq!(deltas.len(), 7);
}

#[tokio::test]
async fn a_stream_ending_after_finish_reason_without_done_is_complete() {
    let clean = body(&[content("all"), content(" here"), finish("stop")], false);
    let server = MockServer::start(vec![
        Reply::body(clean.clone()),
        // The connection even breaks afterwards: the answer was whole, so it still counts.
        Reply::disconnect(vec![Chunk::new(clean)]),
        Reply::error(500, "must not be reached"),
    ])
    .await
    .unwrap();
    let mut model = client(&server);
    for _ in 0..2 {
        let (result, _) = run(&mut model, &ask("hi")).await;
        let response = result.unwrap();
        assert_eq!(response.content, "all here");
        assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    }
    assert_eq!(server.request_count(), 2, "neither stream was retried");
}

#[tokio::test]
async fn keep_alive_comments_and_crlf_line_ends_are_tolerated() {
    let crlf = |v: &serde_json::Value| format!("data: {v}\r\n\r\n").into_bytes();
    let pause = Duration::from_millis(2);
    let chunks = vec![
        Chunk::new(sse::KEEP_ALIVE),
        Chunk::after(pause, ":\r\n: still waiting\r\n\r\n"),
        Chunk::after(pause, crlf(&content("a"))),
        Chunk::new(sse::KEEP_ALIVE),
        Chunk::new(crlf(&content("b"))),
        Chunk::after(pause, ": keep-alive\r\r"),
        Chunk::new(crlf(&finish("stop"))),
        Chunk::new(sse::KEEP_ALIVE),
        Chunk::new("data: [DONE]\r\n\r\n"),
    ];
    let server = MockServer::start(vec![Reply::stream(chunks)]).await.unwrap();
    let (result, deltas) = run(&mut client(&server), &ask("hi")).await;
    assert_eq!(result.unwrap().content, "ab");
    assert_eq!(deltas, [Delta::Content("a".into()), Delta::Content("b".into())]);
}

#[tokio::test]
async fn reasoning_content_is_shown_apart_and_usage_is_read() {
    let stream = body(
        &[
            sse::delta(json!({"role": "assistant", "content": null})),
            sse::reasoning("Let me "),
            sse::reasoning("think."),
            content("Answer."),
            finish("stop"),
            sse::usage(12, 3),
        ],
        true,
    );
    let server = MockServer::start(vec![Reply::body(stream)]).await.unwrap();
    let (result, deltas) = run(&mut client(&server), &ask("why")).await;
    let response = result.unwrap();
    assert_eq!(response.reasoning.as_deref(), Some("Let me think."));
    assert_eq!(response.content, "Answer.");
    assert_eq!(
        response.usage,
        Some(Usage {
            prompt_tokens: 12,
            completion_tokens: 3,
            total_tokens: 15,
            cached_tokens: 0
        })
    );
    assert_eq!(deltas[0], Delta::Reasoning("Let me ".into()));
    assert_eq!(deltas[2], Delta::Content("Answer.".into()));
}

#[tokio::test]
async fn a_response_without_usage_has_none() {
    let server = MockServer::start(vec![Reply::body(body(&[content("x"), finish("length")], true))])
        .await
        .unwrap();
    let (result, _) = run(&mut client(&server), &ask("hi")).await;
    let response = result.unwrap();
    assert_eq!(response.usage, None);
    assert_eq!(response.reasoning, None);
    assert_eq!(response.finish_reason.as_deref(), Some("length"));
}
