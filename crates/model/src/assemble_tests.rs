use serde_json::json;

use super::*;

fn push(a: &mut StreamAssembler, v: serde_json::Value) -> Vec<Delta> {
    a.push_data(&v.to_string()).unwrap()
}

fn delta(d: serde_json::Value) -> serde_json::Value {
    json!({"choices": [{"index": 0, "delta": d, "finish_reason": null}]})
}

fn call(index: u64, id: Option<&str>, name: Option<&str>, args: &str) -> serde_json::Value {
    let mut function = json!({"arguments": args});
    if let Some(n) = name {
        function["name"] = json!(n);
    }
    let mut c = json!({"index": index, "type": "function", "function": function});
    if let Some(id) = id {
        c["id"] = json!(id);
    }
    delta(json!({"tool_calls": [c]}))
}

#[test]
fn content_and_reasoning_are_kept_apart() {
    let mut a = StreamAssembler::new();
    assert_eq!(
        push(
            &mut a,
            delta(json!({"role": "assistant", "content": null, "reasoning_content": "think"}))
        ),
        [Delta::Reasoning("think".into())]
    );
    assert_eq!(
        push(&mut a, delta(json!({"content": "Hi"}))),
        [Delta::Content("Hi".into())]
    );
    push(
        &mut a,
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    );
    assert!(a.is_complete());
    assert!(!a.saw_done());
    let r = a.into_response();
    assert_eq!(r.content, "Hi");
    assert_eq!(r.reasoning.as_deref(), Some("think"));
    assert_eq!(r.finish_reason.as_deref(), Some("stop"));
}

#[test]
fn interleaved_tool_calls_are_assembled_by_index() {
    let mut a = StreamAssembler::new();
    let mut deltas = Vec::new();
    deltas.extend(push(&mut a, call(0, Some("c0"), Some("write_file"), "")));
    deltas.extend(push(&mut a, call(1, Some("c1"), Some("delete_file"), "{\"pa")));
    deltas.extend(push(&mut a, call(0, None, None, "{\"path\":")));
    deltas.extend(push(&mut a, call(1, None, None, "th\":\"b\"}")));
    deltas.extend(push(&mut a, call(0, None, None, "\"a\"}")));
    assert_eq!(deltas.len(), 6, "{deltas:?}");
    // A call is announced when its arguments begin: call 1's come first.
    assert_eq!(
        deltas[0],
        Delta::ToolCallStart {
            index: 1,
            id: "c1".into(),
            name: "delete_file".into()
        }
    );
    let r = a.into_response();
    assert_eq!(r.tool_calls.len(), 2);
    assert_eq!(r.tool_calls[0].arguments, "{\"path\":\"a\"}");
    assert_eq!(r.tool_calls[1].arguments, "{\"path\":\"b\"}");
    assert_eq!(r.tool_calls[1].name, "delete_file");
}

#[test]
fn a_call_is_announced_once_its_name_arrives() {
    let mut a = StreamAssembler::new();
    assert!(push(&mut a, call(0, Some("x"), None, "{\"a\"")).is_empty());
    let d = push(&mut a, call(0, None, Some("grep"), ":1}"));
    assert_eq!(
        d,
        [
            Delta::ToolCallStart {
                index: 0,
                id: "x".into(),
                name: "grep".into()
            },
            Delta::ToolCallArgs {
                index: 0,
                fragment: "{\"a\":1}".into()
            }
        ]
    );
}

#[test]
fn a_missing_index_is_inferred_from_the_id() {
    let mut a = StreamAssembler::new();
    let c = |id: &str, args: &str| {
        delta(json!({"tool_calls": [{"id": id, "function": {"name": "t", "arguments": args}}]}))
    };
    push(&mut a, c("a", "{}"));
    push(&mut a, c("b", "{\"x\":1}"));
    let r = a.into_response();
    assert_eq!(r.tool_calls.len(), 2);
    assert_eq!(r.tool_calls[1].id, "b");
}

#[test]
fn empty_arguments_become_an_empty_object_and_missing_ids_are_made_up() {
    let mut a = StreamAssembler::new();
    push(&mut a, call(3, None, Some("list_dir"), ""));
    let r = a.into_response();
    assert_eq!(r.tool_calls[0].arguments, "{}");
    assert_eq!(r.tool_calls[0].id, "call_3");
}

#[test]
fn usage_is_read_from_a_chunk_without_choices() {
    let mut a = StreamAssembler::new();
    push(
        &mut a,
        json!({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}),
    );
    assert_eq!(
        a.into_response().usage,
        Some(Usage {
            prompt_tokens: 5,
            completion_tokens: 2,
            total_tokens: 7,
            cached_tokens: 0
        })
    );
}

#[test]
fn cached_prompt_tokens_are_read_as_deepseek_and_openai_report_them() {
    for usage in [
        json!({"prompt_tokens": 50, "completion_tokens": 2, "prompt_cache_hit_tokens": 40, "prompt_cache_miss_tokens": 10}),
        json!({"prompt_tokens": 50, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 40}}),
    ] {
        let mut a = StreamAssembler::new();
        push(&mut a, json!({"choices": [], "usage": usage}));
        let got = a.into_response().usage.unwrap();
        assert_eq!(
            (got.prompt_tokens, got.cached_tokens, got.total_tokens),
            (50, 40, 52)
        );
    }
}

#[test]
fn done_ends_the_stream_and_later_data_is_ignored() {
    let mut a = StreamAssembler::new();
    a.push_data("[DONE]").unwrap();
    assert!(a.is_complete());
    assert!(a.push_data("not json").unwrap().is_empty());
}

#[test]
fn malformed_json_is_a_protocol_error_quoting_the_data() {
    let mut a = StreamAssembler::new();
    let err = a.push_data("{\"choices\": [").unwrap_err();
    assert!(matches!(err, ModelError::Protocol { .. }));
    let msg = err.to_string();
    assert!(msg.contains("malformed JSON"), "{msg}");
    assert!(msg.contains("{\"choices\": ["), "{msg}");
    assert!(matches!(a.push_data("[1, 2]"), Err(ModelError::Protocol { .. })));
}

#[test]
fn an_error_object_is_the_servers_message() {
    let mut a = StreamAssembler::new();
    let err = a
        .push_data(r#"{"error": {"message": "overloaded", "type": "server_error"}}"#)
        .unwrap_err();
    assert_eq!(err.to_string(), "the model server reported an error: overloaded");
}

#[test]
fn other_choices_are_ignored() {
    let mut a = StreamAssembler::new();
    let d = push(
        &mut a,
        json!({"choices": [{"index": 1, "delta": {"content": "no"}}]}),
    );
    assert!(d.is_empty());
    assert!(!a.is_complete());
}

#[test]
fn excerpts_are_cut_on_a_character_boundary() {
    let long = "\u{4e16}".repeat(300);
    let e = excerpt(&long);
    assert_eq!(e.chars().count(), 201);
    assert!(e.ends_with('…'));
}

/// Found by attack: a name sent in two pieces was cut to its first.
#[test]
fn a_name_in_pieces_is_joined_and_a_repeated_name_is_not() {
    let mut a = StreamAssembler::new();
    assert!(push(&mut a, call(0, Some("c0"), Some("list_"), "")).is_empty());
    let d = push(&mut a, call(0, None, Some("dir"), "{}"));
    assert!(
        matches!(&d[0], Delta::ToolCallStart { name, .. } if name == "list_dir"),
        "{d:?}"
    );
    push(&mut a, call(1, Some("c1"), Some("grep"), ""));
    push(&mut a, call(1, None, Some("grep"), "{\"pattern\":\"x\"}"));
    let r = a.into_response();
    assert_eq!(r.tool_calls[0].name, "list_dir");
    assert_eq!(r.tool_calls[1].name, "grep");
}

/// Found by attack: text and tool calls that came after the finish_reason were used (a whole
/// `delete_file` the answer never had ran). After it, only the usage counts.
#[test]
fn nothing_after_the_finish_reason_is_part_of_the_answer() {
    let mut a = StreamAssembler::new();
    push(&mut a, call(0, Some("c0"), Some("write_file"), "{\"path\":"));
    push(
        &mut a,
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    );
    assert!(push(&mut a, call(0, None, None, "\"a\"}")).is_empty());
    assert!(push(&mut a, call(1, Some("c1"), Some("delete_file"), "{}")).is_empty());
    assert!(push(&mut a, delta(json!({"content": "EXTRA"}))).is_empty());
    push(
        &mut a,
        json!({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}),
    );
    assert!(a.saw_final_usage());
    let r = a.into_response();
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].arguments, "{\"path\":");
    assert_eq!(r.content, "");
    assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
}
