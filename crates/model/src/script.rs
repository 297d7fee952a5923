//! The script model (`--model script:FILE`, SPEC §11.2): replays a JSON file of responses, one per
//! request, so tests and demos run the real agent loop with no network.
//!
//! ```json
//! {"responses": [
//!   {"content": "text", "tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "hi\n"}}]},
//!   {"content": "done"}
//! ]}
//! ```
//!
//! Each response may have `content`, `reasoning`, `tool_calls` and `usage` (the tokens a server
//! would report: `{prompt_tokens, completion_tokens, total_tokens?, cached_tokens?}`); a call has `name`, `arguments` (an
//! object, serialised to JSON text, or a string passed through as is) and optionally `id` (otherwise
//! `call_<n>`, numbered from 1 across the whole script). Unknown keys are an error, so a typo such as
//! `tool_call` is caught rather than silently ending the turn. The position is kept for the life of
//! the model, so one process replays one script across turns; running out is
//! [`ModelError::ScriptExhausted`]. What the request contains is not looked at.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::ModelError;
use crate::types::{ChatRequest, ChatResponse, Delta, ToolCall};
use crate::{BoxFuture, ChatModel};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptFile {
    responses: Vec<ScriptResponse>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptResponse {
    #[serde(default)]
    content: String,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ScriptCall>,
    /// The tokens the "server" reports for the request (`prompt_tokens`, `completion_tokens`,
    /// `cached_tokens`;
    /// `total_tokens` is their sum when left out).
    #[serde(default)]
    usage: Option<ScriptUsage>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    total_tokens: Option<u64>,
    /// Of the prompt tokens, those read from the server's cache.
    #[serde(default)]
    cached_tokens: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptCall {
    name: String,
    #[serde(default)]
    arguments: Value,
    #[serde(default)]
    id: Option<String>,
}

/// A model that replays a script file.
#[derive(Debug)]
pub struct ScriptModel {
    path: PathBuf,
    responses: Vec<ChatResponse>,
    next: usize,
}

impl ScriptModel {
    /// Reads and checks the script at `path`.
    pub fn load(path: &Path) -> Result<ScriptModel, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|source| ModelError::ScriptIo {
            path: path.to_path_buf(),
            source,
        })?;
        ScriptModel::parse(path, &text)
    }

    /// Checks the script `text`; `path` names it in errors.
    pub fn parse(path: impl Into<PathBuf>, text: &str) -> Result<ScriptModel, ModelError> {
        let path = path.into();
        let bad = |detail: String| ModelError::BadScript {
            path: path.clone(),
            detail,
        };
        let file: ScriptFile = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        let mut counter = 0usize;
        let mut responses = Vec::with_capacity(file.responses.len());
        for (r, response) in file.responses.into_iter().enumerate() {
            let mut tool_calls = Vec::with_capacity(response.tool_calls.len());
            for (c, call) in response.tool_calls.into_iter().enumerate() {
                counter += 1;
                if call.name.trim().is_empty() {
                    return Err(bad(format!("responses[{r}].tool_calls[{c}].name is empty")));
                }
                let arguments = match call.arguments {
                    Value::Null => "{}".to_string(),
                    Value::String(s) => s,
                    v @ Value::Object(_) => v.to_string(),
                    _ => {
                        return Err(bad(format!(
                            "responses[{r}].tool_calls[{c}].arguments must be an object or a string"
                        )))
                    }
                };
                tool_calls.push(ToolCall {
                    id: call.id.unwrap_or_else(|| format!("call_{counter}")),
                    name: call.name,
                    arguments,
                });
            }
            let finish = if tool_calls.is_empty() {
                "stop"
            } else {
                "tool_calls"
            };
            responses.push(ChatResponse {
                content: response.content,
                reasoning: response.reasoning,
                tool_calls,
                finish_reason: Some(finish.to_string()),
                usage: response.usage.map(|u| crate::types::Usage {
                    prompt_tokens: u.prompt_tokens,
                    completion_tokens: u.completion_tokens,
                    total_tokens: u
                        .total_tokens
                        .unwrap_or(u.prompt_tokens.saturating_add(u.completion_tokens)),
                    cached_tokens: u.cached_tokens.min(u.prompt_tokens),
                }),
            });
        }
        Ok(ScriptModel {
            path,
            responses,
            next: 0,
        })
    }

    /// How many responses are left.
    pub fn remaining(&self) -> usize {
        self.responses.len() - self.next
    }

    fn next_response(
        &mut self,
        on_delta: &mut (dyn FnMut(Delta) + Send),
        cancel: &CancellationToken,
    ) -> Result<ChatResponse, ModelError> {
        if cancel.is_cancelled() {
            return Err(ModelError::Cancelled);
        }
        let Some(response) = self.responses.get(self.next).cloned() else {
            return Err(ModelError::ScriptExhausted {
                path: self.path.clone(),
                used: self.responses.len(),
            });
        };
        self.next += 1;
        replay(&response, on_delta);
        Ok(response)
    }
}

/// Reports a whole response as the deltas a stream of it would have carried.
pub(crate) fn replay(response: &ChatResponse, on_delta: &mut (dyn FnMut(Delta) + Send)) {
    if let Some(reasoning) = response.reasoning.as_ref().filter(|r| !r.is_empty()) {
        on_delta(Delta::Reasoning(reasoning.clone()));
    }
    if !response.content.is_empty() {
        on_delta(Delta::Content(response.content.clone()));
    }
    for (index, call) in response.tool_calls.iter().enumerate() {
        on_delta(Delta::ToolCallStart {
            index,
            id: call.id.clone(),
            name: call.name.clone(),
        });
        on_delta(Delta::ToolCallArgs {
            index,
            fragment: call.arguments.clone(),
        });
    }
}

impl ChatModel for ScriptModel {
    fn describe(&self) -> String {
        format!("script:{}", self.path.display())
    }

    fn complete<'a>(
        &'a mut self,
        _req: &'a ChatRequest,
        on_delta: &'a mut (dyn FnMut(Delta) + Send),
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move { self.next_response(on_delta, cancel) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_may_be_objects_strings_or_absent() {
        let m = ScriptModel::parse(
            "s.json",
            r#"{"responses": [{"tool_calls": [
                {"name": "a", "arguments": {"path": "x"}},
                {"name": "b", "arguments": "{\"raw\": 1}"},
                {"name": "c", "id": "mine"}]}]}"#,
        )
        .unwrap();
        let calls = &m.responses[0].tool_calls;
        assert_eq!(calls[0].arguments, r#"{"path":"x"}"#);
        assert_eq!(calls[1].arguments, r#"{"raw": 1}"#);
        assert_eq!(calls[2].arguments, "{}");
        let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["call_1", "call_2", "mine"]);
        assert_eq!(m.responses[0].finish_reason.as_deref(), Some("tool_calls"));
    }

    #[test]
    fn bad_scripts_name_the_file_and_the_problem() {
        let err = |text: &str| ScriptModel::parse("dir/s.json", text).unwrap_err().to_string();
        let e = err(r#"{"responses": [{"tool_call": []}]}"#);
        assert!(
            e.starts_with("bad script `dir/s.json`: unknown field `tool_call`"),
            "{e}"
        );
        let e = err(r#"{"responses": [{}, {"tool_calls": [{"name": "x", "arguments": [1]}]}]}"#);
        assert!(
            e.contains("responses[1].tool_calls[0].arguments must be an object or a string"),
            "{e}"
        );
        let e = err("{");
        assert!(e.starts_with("bad script `dir/s.json`: EOF"), "{e}");
        let e = err(r#"{"steps": []}"#);
        assert!(e.contains("unknown field `steps`"), "{e}");
    }
}
