//! The JSON body of a chat-completions request, in the shape OpenAI defined and DeepSeek and other
//! compatible servers accept.
//!
//! An assistant message that only calls tools sends `content: null` (some servers refuse an empty
//! string next to `tool_calls`); reasoning text is never sent back (DeepSeek rejects it in input).

use serde_json::{json, Map, Value};

use crate::types::{ChatMessage, ChatRequest, Role};

/// Builds the streaming request body for `model`. `include_usage` asks for a final usage chunk
/// (`stream_options`), which OpenAI and DeepSeek support.
pub fn request_body(model: &str, req: &ChatRequest, include_usage: bool) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("messages".into(), req.messages.iter().map(message).collect());
    body.insert("stream".into(), json!(true));
    if include_usage {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    Value::Object(body)
}

fn message(m: &ChatMessage) -> Value {
    let role = match m.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let mut out = Map::new();
    out.insert("role".into(), json!(role));
    if m.role == Role::Assistant && m.content.is_empty() && !m.tool_calls.is_empty() {
        out.insert("content".into(), Value::Null);
    } else {
        out.insert("content".into(), json!(m.content));
    }
    if !m.tool_calls.is_empty() {
        let calls: Vec<Value> = m
            .tool_calls
            .iter()
            .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
            .collect();
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    if let Some(id) = &m.tool_call_id {
        out.insert("tool_call_id".into(), json!(id));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ToolCall, ToolSpec};

    #[test]
    fn messages_tools_and_options_have_the_openai_shape() {
        let req = ChatRequest {
            messages: vec![
                ChatMessage::system("be brief"),
                ChatMessage::user("hi"),
                ChatMessage::assistant(
                    "",
                    vec![ToolCall {
                        id: "c1".into(),
                        name: "list_dir".into(),
                        arguments: "{\"path\":\".\"}".into(),
                    }],
                ),
                ChatMessage::tool("c1", "a.txt"),
            ],
            tools: vec![ToolSpec {
                name: "list_dir".into(),
                description: "lists".into(),
                parameters: json!({"type": "object"}),
            }],
        };
        let body = request_body("deepseek-chat", &req, true);
        assert_eq!(
            body,
            json!({
                "model": "deepseek-chat",
                "stream": true,
                "stream_options": {"include_usage": true},
                "messages": [
                    {"role": "system", "content": "be brief"},
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "list_dir", "arguments": "{\"path\":\".\"}"}}]},
                    {"role": "tool", "content": "a.txt", "tool_call_id": "c1"}
                ],
                "tools": [{"type": "function", "function": {"name": "list_dir", "description": "lists", "parameters": {"type": "object"}}}]
            })
        );
    }

    #[test]
    fn no_tools_and_no_usage_leave_the_keys_out() {
        let body = request_body("m", &ChatRequest::default(), false);
        assert_eq!(body, json!({"model": "m", "messages": [], "stream": true}));
    }
}
