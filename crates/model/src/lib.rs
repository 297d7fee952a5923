//! Model clients for Retrace: what the agent talks to when it needs the next step of a turn.
//!
//! One trait, [`ChatModel`], and three kinds of model behind it:
//! - [`OpenAiClient`]: any OpenAI-compatible chat-completions endpoint, streaming, with tool calls
//!   (DeepSeek by default, OpenAI, or any server given with `--base-url`);
//! - [`ScriptModel`]: replays a JSON file of responses (`--model script:FILE`), for tests;
//! - [`DemoModel`]: deterministic, offline, answers any prompt with a few file edits (`--model demo`).
//!
//! [`open_model`] opens what a [`ModelSpec`] (from `retrace-protocol`) names.
//!
//! The streaming path is built in layers, each testable alone: [`sse::SseDecoder`] turns bytes into
//! server-sent events (pure and incremental, so chunk boundaries can fall anywhere — it has a cargo-fuzz
//! target in `fuzz/` and a corpus test that runs on stable); [`StreamAssembler`] turns event data into
//! [`Delta`]s and one [`ChatResponse`]; [`OpenAiClient`] adds HTTP, retries with backoff and
//! cancellation. Deltas are for display as the answer streams (a retry is announced as one too,
//! [`Delta::Retry`], so the caller can say why it waits); the response is the record, token usage
//! included.
//!
//! Trade-offs: the trait returns a boxed future instead of using `async fn` in traits, so it stays
//! object-safe (the CLI picks the model at run time) without a macro crate. Only the first choice of a
//! response is read. A stream that fails after text reached the caller is not retried, so nothing is
//! ever shown twice; the turn fails instead and says why. TLS is rustls with the `ring` provider and
//! the webpki root certificates compiled in: no OpenSSL, and no dependence on the system's store.

#![warn(missing_docs)]

pub mod assemble;
mod context;
mod demo;
mod error;
mod openai;
pub mod request;
mod retry;
mod script;
mod spec;
pub mod sse;
mod summary;
mod types;

use std::future::Future;
use std::pin::Pin;

pub use assemble::StreamAssembler;
pub use context::{default_context_window, estimate_tokens, DEFAULT_COMPACT_AT, FALLBACK_CONTEXT_WINDOW};
pub use demo::DemoModel;
pub use error::ModelError;
pub use openai::{OpenAiClient, OpenAiOptions, MAX_EVENT_BYTES, MAX_RESPONSE_BYTES, USAGE_GRACE};
pub use retry::RetryPolicy;
pub use script::ScriptModel;
pub use spec::{open_model, ModelOptions, ModelSpec, Provider};
pub use summary::{is_summary_request, SUMMARY_PROMPT};
pub use tokio_util::sync::CancellationToken;
pub use types::{
    ChatMessage, ChatRequest, ChatResponse, Delta, RetryNotice, Role, ToolCall, ToolSpec, Usage,
};

/// A boxed, sendable future: what [`ChatModel::complete`] returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A chat model: given the conversation and the tools, produce the next response.
pub trait ChatModel: Send + Sync {
    /// A short description for logs and the UI, e.g. `deepseek:deepseek-chat` or `demo`.
    fn describe(&self) -> String;

    /// Runs one request. `on_delta` is called with each piece as it streams (for display); the
    /// returned response is the whole of it. When `cancel` fires, the request is abandoned promptly
    /// and [`ModelError::Cancelled`] returned.
    fn complete<'a>(
        &'a mut self,
        req: &'a ChatRequest,
        on_delta: &'a mut (dyn FnMut(Delta) + Send),
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>>;
}
