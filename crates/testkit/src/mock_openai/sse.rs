//! Builders for chat-completions stream payloads: the chunk objects an OpenAI-compatible server sends,
//! their `data:` framing, and ways to cut a body into [`Chunk`]s at chosen byte offsets.

use serde_json::{json, Value};

use super::Chunk;

/// The end-of-stream marker event.
pub const DONE: &str = "data: [DONE]\n\n";

/// A keep-alive comment, as DeepSeek sends while a request waits.
pub const KEEP_ALIVE: &str = ": keep-alive\n\n";

/// `data: <json>` followed by the blank line that ends the event.
pub fn event(chunk: &Value) -> String {
    format!("data: {chunk}\n\n")
}

/// A chunk object whose first choice carries `delta` (and no finish reason).
pub fn delta(delta: Value) -> Value {
    json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "model": "mock",
        "choices": [{"index": 0, "delta": delta, "finish_reason": null}]
    })
}

/// A chunk with answer text.
pub fn content(text: &str) -> Value {
    delta(json!({"content": text}))
}

/// A chunk with DeepSeek's `reasoning_content`.
pub fn reasoning(text: &str) -> Value {
    delta(json!({"content": null, "reasoning_content": text}))
}

/// The first piece of tool call `index`: its id and name, with empty arguments.
pub fn tool_call_start(index: u64, id: &str, name: &str) -> Value {
    delta(
        json!({"tool_calls": [{"index": index, "id": id, "type": "function",
        "function": {"name": name, "arguments": ""}}]}),
    )
}

/// A later piece of tool call `index`: a fragment of its JSON arguments.
pub fn tool_call_args(index: u64, fragment: &str) -> Value {
    delta(json!({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}))
}

/// The chunk that ends the choice with `reason` (`stop`, `tool_calls`, …).
pub fn finish(reason: &str) -> Value {
    json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "model": "mock",
        "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]
    })
}

/// The chunk that ends the choice with `reason` and carries the usage too, as DeepSeek sends it.
pub fn finish_with_usage(reason: &str, prompt_tokens: u64, completion_tokens: u64) -> Value {
    let mut chunk = finish(reason);
    chunk["usage"] = usage(prompt_tokens, completion_tokens)["usage"].clone();
    chunk
}

/// An error chunk, as DeepSeek and OpenRouter send one inside a `200` stream when the model fails:
/// `{"error": {"message": …, "code": …}}` (no `code` when `None`).
pub fn error(message: &str, code: Option<u64>) -> Value {
    let mut err = json!({"message": message, "type": "server_error"});
    if let Some(code) = code {
        err["code"] = json!(code);
    }
    json!({"error": err})
}

/// The usage chunk OpenAI sends last when asked (`choices` empty).
pub fn usage(prompt_tokens: u64, completion_tokens: u64) -> Value {
    json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "choices": [],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens}
    })
}

/// The events of `chunks`, followed by `[DONE]` when `done`.
pub fn body(chunks: &[Value], done: bool) -> Vec<u8> {
    let mut out: String = chunks.iter().map(event).collect();
    if done {
        out.push_str(DONE);
    }
    out.into_bytes()
}

/// `bytes` cut at the given offsets (ascending; out-of-range ones are ignored), as chunks.
pub fn split_at(bytes: &[u8], offsets: &[usize]) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut start = 0;
    for &cut in offsets {
        if cut > start && cut < bytes.len() {
            out.push(Chunk::new(&bytes[start..cut]));
            start = cut;
        }
    }
    out.push(Chunk::new(&bytes[start..]));
    out
}

/// `bytes` cut into pieces of `size` bytes (the last may be shorter).
pub fn split_every(bytes: &[u8], size: usize) -> Vec<Chunk> {
    bytes.chunks(size.max(1)).map(Chunk::new).collect()
}
