//! Turns the `data:` payloads of a chat-completions stream into [`Delta`]s and, at the end, one
//! [`ChatResponse`]. Pure and synchronous, like the SSE decoder below it.
//!
//! What a stream may carry, and what is done with it:
//! - `choices[0].delta.content` → [`Delta::Content`]; `reasoning_content` (DeepSeek) or `reasoning`
//!   (some proxies) → [`Delta::Reasoning`], kept apart and never sent back to the model.
//! - `choices[0].delta.tool_calls[]` → assembled by `index`: the first piece for an index carries the id
//!   and name, later ones fragments of the JSON arguments, and pieces of several calls may interleave. A
//!   call whose name has not arrived yet is announced ([`Delta::ToolCallStart`]) as soon as it does,
//!   with the argument text received so far. Servers that omit `index` get one inferred from the id.
//! - `choices[0].finish_reason` is recorded; `usage` is taken whenever present (OpenAI sends it in a
//!   last chunk with no choices, DeepSeek with the finish reason; a usage from that chunk on is the
//!   final one, [`StreamAssembler::saw_final_usage`]).
//! - `[DONE]` ends the stream; a stream that ends after a `finish_reason` without it is complete too
//!   ([`StreamAssembler::is_complete`]).
//! - `{"error": …}` in a data line is the server's error (with its numeric `code`, if any); anything that is not a JSON object is a
//!   protocol error naming the problem and quoting the data.
//!
//! Choices other than index 0 are ignored: Retrace never asks for more than one.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::ModelError;
use crate::types::{ChatResponse, Delta, ToolCall, Usage};

/// A tool call being assembled.
#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
    /// Whether [`Delta::ToolCallStart`] went out.
    announced: bool,
}

/// The state of one response stream.
#[derive(Debug, Default)]
pub struct StreamAssembler {
    content: String,
    reasoning: Option<String>,
    calls: BTreeMap<usize, PartialCall>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    /// A `usage` came in the chunk that set the finish reason or in a later one: the final count
    /// (some servers send running counts in earlier chunks).
    final_usage: bool,
    done: bool,
}

impl StreamAssembler {
    /// An assembler at the start of a stream.
    pub fn new() -> StreamAssembler {
        StreamAssembler::default()
    }

    /// Takes one event's data; returns the deltas it carries. Data after `[DONE]` is ignored.
    pub fn push_data(&mut self, data: &str) -> Result<Vec<Delta>, ModelError> {
        let mut out = Vec::new();
        if self.done {
            return Ok(out);
        }
        let trimmed = data.trim();
        if trimmed == "[DONE]" {
            self.done = true;
            return Ok(out);
        }
        if trimmed.is_empty() {
            return Ok(out);
        }
        let chunk: Value = serde_json::from_str(trimmed).map_err(|e| ModelError::Protocol {
            detail: format!("malformed JSON in a stream chunk ({e}): {}", excerpt(trimmed)),
        })?;
        let Some(obj) = chunk.as_object() else {
            return Err(ModelError::Protocol {
                detail: format!("a stream chunk is not a JSON object: {}", excerpt(trimmed)),
            });
        };
        if let Some(err) = obj.get("error").filter(|e| !e.is_null()) {
            return Err(ModelError::Api {
                message: error_message(err),
                code: error_code(err),
                partial: false,
            });
        }
        let usage = obj.get("usage").filter(|u| !u.is_null());
        if let Some(usage) = usage {
            self.usage = Some(parse_usage(usage)?);
        }
        let choice = obj.get("choices").and_then(Value::as_array).and_then(|cs| {
            cs.iter()
                .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
        });
        // After the finish_reason the answer is whole: a later chunk may bring the usage, and
        // nothing else of it counts (text or a tool call arriving then is never used).
        let finished = self.finish_reason.is_some();
        if let Some(choice) = choice.filter(|_| !finished) {
            if let Some(delta) = choice.get("delta").filter(|d| d.is_object()) {
                self.take_delta(delta, &mut out)?;
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason = Some(reason.to_string());
            }
        }
        if usage.is_some() && self.finish_reason.is_some() {
            self.final_usage = true;
        }
        Ok(out)
    }

    /// Whether the stream said it was done: `[DONE]` or a `finish_reason`.
    pub fn is_complete(&self) -> bool {
        self.done || self.finish_reason.is_some()
    }

    /// The bytes of text, reasoning and tool-call arguments gathered so far.
    pub fn size(&self) -> usize {
        self.content.len()
            + self.reasoning.as_ref().map_or(0, String::len)
            + self
                .calls
                .values()
                .map(|c| c.name.len() + c.arguments.len())
                .sum::<usize>()
    }

    /// Whether `[DONE]` arrived.
    pub fn saw_done(&self) -> bool {
        self.done
    }

    /// Whether a `finish_reason` arrived.
    pub fn saw_finish(&self) -> bool {
        self.finish_reason.is_some()
    }

    /// Whether the final `usage` arrived: in the chunk with the `finish_reason` or after it.
    pub fn saw_final_usage(&self) -> bool {
        self.final_usage
    }

    /// The response assembled so far (complete once [`StreamAssembler::is_complete`]).
    pub fn into_response(self) -> ChatResponse {
        let tool_calls = self
            .calls
            .into_iter()
            .map(|(index, c)| ToolCall {
                id: if c.id.is_empty() {
                    format!("call_{index}")
                } else {
                    c.id
                },
                name: c.name,
                arguments: if c.arguments.trim().is_empty() {
                    "{}".to_string()
                } else {
                    c.arguments
                },
            })
            .collect();
        ChatResponse {
            content: self.content,
            reasoning: self.reasoning,
            tool_calls,
            finish_reason: self.finish_reason,
            usage: self.usage,
        }
    }

    fn take_delta(&mut self, delta: &Value, out: &mut Vec<Delta>) -> Result<(), ModelError> {
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            if !text.is_empty() {
                self.content.push_str(text);
                out.push(Delta::Content(text.to_string()));
            }
        }
        let reasoning = delta
            .get("reasoning_content")
            .and_then(Value::as_str)
            .or_else(|| delta.get("reasoning").and_then(Value::as_str));
        if let Some(text) = reasoning {
            if !text.is_empty() {
                self.reasoning.get_or_insert_with(String::new).push_str(text);
                out.push(Delta::Reasoning(text.to_string()));
            }
        }
        match delta.get("tool_calls") {
            None | Some(Value::Null) => {}
            Some(Value::Array(calls)) => {
                for call in calls {
                    self.take_tool_call(call, out)?;
                }
            }
            Some(other) => {
                return Err(ModelError::Protocol {
                    detail: format!("`tool_calls` is not an array: {}", excerpt(&other.to_string())),
                })
            }
        }
        Ok(())
    }

    fn take_tool_call(&mut self, call: &Value, out: &mut Vec<Delta>) -> Result<(), ModelError> {
        let id = call.get("id").and_then(Value::as_str).filter(|s| !s.is_empty());
        let function = call.get("function");
        let name = function.and_then(|f| f.get("name")).and_then(Value::as_str);
        let args = function.and_then(|f| f.get("arguments")).and_then(Value::as_str);
        let index = match call.get("index").and_then(Value::as_u64) {
            Some(i) => usize::try_from(i).map_err(|_| ModelError::Protocol {
                detail: format!("tool call index {i} is out of range"),
            })?,
            None => self.infer_index(id),
        };
        let entry = self.calls.entry(index).or_default();
        if let Some(id) = id {
            if entry.id.is_empty() {
                entry.id = id.to_string();
            }
        }
        if let Some(name) = name {
            // Most servers send the name whole in one piece, and some repeat it in later pieces;
            // a few split it ("list_", "dir"). Pieces are joined until the arguments begin.
            if entry.name.is_empty() {
                entry.name = name.to_string();
            } else if !entry.announced && name != entry.name {
                entry.name.push_str(name);
            }
        }
        let fragment = args.unwrap_or("");
        entry.arguments.push_str(fragment);
        if !entry.announced {
            // Announced once its arguments begin: the name is whole by then.
            if entry.name.is_empty() || entry.arguments.is_empty() {
                return Ok(());
            }
            entry.announced = true;
            if entry.id.is_empty() {
                entry.id = format!("call_{index}");
            }
            out.push(Delta::ToolCallStart {
                index,
                id: entry.id.clone(),
                name: entry.name.clone(),
            });
            if !entry.arguments.is_empty() {
                out.push(Delta::ToolCallArgs {
                    index,
                    fragment: entry.arguments.clone(),
                });
            }
        } else if !fragment.is_empty() {
            out.push(Delta::ToolCallArgs {
                index,
                fragment: fragment.to_string(),
            });
        }
        Ok(())
    }

    /// For servers that omit `index`: the call with this id, else a new call when an id is given,
    /// else the last call.
    fn infer_index(&self, id: Option<&str>) -> usize {
        if let Some(id) = id {
            if let Some((i, _)) = self.calls.iter().find(|(_, c)| c.id == id) {
                return *i;
            }
            return self.calls.keys().next_back().map_or(0, |i| i + 1);
        }
        self.calls.keys().next_back().copied().unwrap_or(0)
    }
}

fn parse_usage(usage: &Value) -> Result<Usage, ModelError> {
    let field = |name: &str| usage.get(name).and_then(Value::as_u64).unwrap_or(0);
    if !usage.is_object() {
        return Err(ModelError::Protocol {
            detail: format!("`usage` is not an object: {}", excerpt(&usage.to_string())),
        });
    }
    let prompt_tokens = field("prompt_tokens");
    let completion_tokens = field("completion_tokens");
    let total = field("total_tokens");
    // DeepSeek says how much of the prompt came from its cache in `prompt_cache_hit_tokens`,
    // OpenAI in `prompt_tokens_details.cached_tokens`.
    let cached = usage
        .get("prompt_cache_hit_tokens")
        .or_else(|| {
            usage
                .get("prompt_tokens_details")
                .and_then(|d| d.get("cached_tokens"))
        })
        .and_then(Value::as_u64)
        .unwrap_or(0);
    Ok(Usage {
        prompt_tokens,
        completion_tokens,
        total_tokens: if total == 0 {
            prompt_tokens + completion_tokens
        } else {
            total
        },
        cached_tokens: cached.min(prompt_tokens),
    })
}

/// The message of an OpenAI-style error object (`{"message": …}`), or the value itself.
pub(crate) fn error_message(err: &Value) -> String {
    match err {
        Value::String(s) => s.clone(),
        _ => match err.get("message").and_then(Value::as_str) {
            Some(m) => m.to_string(),
            None => excerpt(&err.to_string()),
        },
    }
}

/// The numeric `code` of an error object (a number, or a string of digits), as an HTTP status.
fn error_code(err: &Value) -> Option<u16> {
    let code = err.get("code")?;
    let n = code
        .as_u64()
        .or_else(|| code.as_str().and_then(|s| s.trim().parse::<u64>().ok()))?;
    u16::try_from(n).ok().filter(|n| (100..600).contains(n))
}

/// At most 200 characters of `text`, for error messages.
pub(crate) fn excerpt(text: &str) -> String {
    const MAX: usize = 200;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
#[path = "assemble_tests.rs"]
mod tests;
