//! The OpenAI-compatible client: one streaming `POST <base-url>/chat/completions` per request, read
//! through the SSE decoder and the stream assembler, with retries and cancellation.
//!
//! Retries cover what a second try can fix: connection failures, HTTP 429 / 408 / 5xx (honouring
//! `Retry-After`, or OpenAI's `retry-after-ms`, up to [`RetryPolicy::max_delay`]), and streams that
//! break or carry an error chunk before anything was shown. Each retry is announced to the caller
//! ([`Delta::Retry`]: the reason, the wait, the attempt) before its wait. A stream that fails after
//! deltas reached the caller is not retried — the text is already on screen, and a second answer
//! would duplicate or contradict it — and fails saying so. Cancellation is checked while connecting,
//! while reading every chunk and while waiting between attempts; dropping the response closes the
//! connection.
//!
//! A response is complete at its `finish_reason`: the client does not wait for `[DONE]` or for the
//! server to close (some keep the connection open). When it asked for usage and none came with the
//! finish, it waits at most [`OpenAiOptions::usage_grace`] ([`USAGE_GRACE`], 2 s) for the usage
//! chunk, then goes on without it.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, CONTENT_TYPE, RETRY_AFTER};
use reqwest::Url;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::assemble::{error_message, excerpt, StreamAssembler};
use crate::error::{chain, ModelError};
use crate::request::request_body;
use crate::retry::{parse_retry_after, parse_retry_after_ms, wait, RetryPolicy, RETRY_AFTER_MS};
use crate::sse::SseDecoder;
use crate::types::{ChatRequest, ChatResponse, Delta, RetryNotice};
use crate::{BoxFuture, ChatModel};

/// How much of an error response body is read for its message.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// How long a stream that gave its `finish_reason` without a usage is still read for the usage
/// chunk (OpenAI sends it after the finish when `stream_options.include_usage` is set). Short: the
/// answer is whole, only the token count is missing.
pub const USAGE_GRACE: Duration = Duration::from_secs(2);

/// The longest event a stream may send (one `data:` line or several): beyond it the response
/// fails, as no chunk of a chat completion comes near it.
pub const MAX_EVENT_BYTES: usize = 8 << 20;

/// The most text, reasoning and tool-call arguments one response may carry in all.
pub const MAX_RESPONSE_BYTES: usize = 32 << 20;

/// Settings of an [`OpenAiClient`].
#[derive(Debug, Clone)]
pub struct OpenAiOptions {
    /// The API root; requests go to `<base_url>/chat/completions`.
    pub base_url: String,
    /// The model name sent in each request.
    pub model: String,
    /// The bearer token; `None` sends no `Authorization` header (local servers need none).
    pub api_key: Option<String>,
    /// The variable the key comes from, named in the hint of a 401 / 403.
    pub api_key_env: Option<String>,
    /// What [`ChatModel::describe`] says, e.g. `deepseek:deepseek-chat`.
    pub label: String,
    /// Attempts and backoff.
    pub retry: RetryPolicy,
    /// Ask for a final usage chunk (`stream_options.include_usage`).
    pub include_usage: bool,
    /// Limit on connecting (TCP and TLS).
    pub connect_timeout: Duration,
    /// Limit on silence: no response headers, no byte, or no event other than keep-alive comments
    /// (a server can send those for ever) for this long counts as a broken stream, retried like
    /// one.
    pub read_timeout: Duration,
    /// After the `finish_reason`, how long to wait for the usage chunk when none came yet (only
    /// when `include_usage`); default [`USAGE_GRACE`].
    pub usage_grace: Duration,
}

impl OpenAiOptions {
    /// Options for `model` at `base_url`, with no key and the default retry policy and timeouts.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> OpenAiOptions {
        let model = model.into();
        OpenAiOptions {
            base_url: base_url.into(),
            label: model.clone(),
            model,
            api_key: None,
            api_key_env: None,
            retry: RetryPolicy::default(),
            include_usage: true,
            connect_timeout: Duration::from_secs(30),
            read_timeout: Duration::from_secs(300),
            usage_grace: USAGE_GRACE,
        }
    }
}

/// A chat model behind an OpenAI-compatible HTTP endpoint.
#[derive(Debug)]
pub struct OpenAiClient {
    http: reqwest::Client,
    endpoint: Url,
    opts: OpenAiOptions,
}

impl OpenAiClient {
    /// Checks the base URL and builds the HTTP client (no request is made).
    pub fn new(opts: OpenAiOptions) -> Result<OpenAiClient, ModelError> {
        let endpoint = endpoint_url(&opts.base_url)?;
        let http = reqwest::Client::builder()
            .connect_timeout(opts.connect_timeout)
            .read_timeout(opts.read_timeout)
            .user_agent(concat!("retrace/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ModelError::Client { detail: chain(&e) })?;
        Ok(OpenAiClient { http, endpoint, opts })
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        self.endpoint.as_str()
    }

    async fn run(
        &self,
        req: &ChatRequest,
        on_delta: &mut (dyn FnMut(Delta) + Send),
        cancel: &CancellationToken,
    ) -> Result<ChatResponse, ModelError> {
        let body = request_body(&self.opts.model, req, self.opts.include_usage).to_string();
        let max = self.opts.retry.max_attempts.max(1);
        let mut attempt = 0;
        loop {
            attempt += 1;
            if cancel.is_cancelled() {
                return Err(ModelError::Cancelled);
            }
            let mut retry_after = None;
            let err = match self.attempt(&body, on_delta, cancel, &mut retry_after).await {
                Ok(response) => return Ok(response),
                Err(err) => err.redacted(self.opts.api_key.as_deref()),
            };
            if !err.is_retryable() {
                return Err(err);
            }
            if attempt >= max {
                return Err(if attempt == 1 {
                    err
                } else {
                    ModelError::GaveUp {
                        attempts: attempt,
                        last: Box::new(err),
                    }
                });
            }
            let delay = self.opts.retry.delay(attempt, retry_after);
            on_delta(retry_delta(&err, attempt + 1, max, delay));
            wait(delay, cancel).await?;
        }
    }

    /// One request. Sets `retry_after` from the response when the server sent one.
    async fn attempt(
        &self,
        body: &str,
        on_delta: &mut (dyn FnMut(Delta) + Send),
        cancel: &CancellationToken,
        retry_after: &mut Option<Duration>,
    ) -> Result<ChatResponse, ModelError> {
        let mut request = self
            .http
            .post(self.endpoint.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .body(body.to_string());
        if let Some(key) = &self.opts.api_key {
            request = request.bearer_auth(key);
        }
        let mut response = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ModelError::Cancelled),
            () = tokio::time::sleep(self.opts.read_timeout) => {
                return Err(ModelError::StreamBroken {
                    detail: format!(
                        "sent no response for {} s",
                        self.opts.read_timeout.as_secs()
                    ),
                    partial: false,
                })
            }
            sent = request.send() => sent.map_err(|e| ModelError::Connect {
                url: self.endpoint.to_string(),
                detail: chain(&e),
            })?,
        };
        let status = response.status();
        if !status.is_success() {
            *retry_after = retry_after_of(response.headers());
            let text = read_limited(&mut response, cancel).await?;
            return Err(ModelError::Http {
                url: self.endpoint.to_string(),
                status: status.as_u16(),
                message: http_message(&text, status.canonical_reason()),
                hint: self.hint(status.as_u16()),
            });
        }
        if is_html(response.headers().get(CONTENT_TYPE)) {
            let text = read_limited(&mut response, cancel).await?;
            return Err(ModelError::Protocol {
                detail: format!(
                    "the server answered with an HTML page, not an event stream (is the base URL the API's?): {}",
                    excerpt(text.trim())
                ),
            });
        }
        if is_json(response.headers().get(CONTENT_TYPE)) {
            let text = read_limited(&mut response, cancel).await?;
            return Err(ModelError::Protocol {
                detail: format!(
                    "the server answered with JSON, not an event stream (does it support `stream: true`?): {}",
                    excerpt(text.trim())
                ),
            });
        }
        self.read_stream(&mut response, on_delta, cancel).await
    }

    async fn read_stream(
        &self,
        response: &mut reqwest::Response,
        on_delta: &mut (dyn FnMut(Delta) + Send),
        cancel: &CancellationToken,
    ) -> Result<ChatResponse, ModelError> {
        let mut decoder = SseDecoder::new();
        let mut assembler = StreamAssembler::new();
        let mut emitted = false;
        // Set at the finish_reason when the usage is still to come: reading stops then.
        let mut grace: Option<Instant> = None;
        // Keep-alive comments do not count: only an event moves this on.
        let mut last_event = Instant::now();
        loop {
            let silent_until = last_event + self.opts.read_timeout;
            let chunk = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(ModelError::Cancelled),
                () = until(grace) => break,
                () = tokio::time::sleep_until(silent_until) => {
                    return Err(ModelError::StreamBroken {
                        detail: format!(
                            "sent no event for {} s (keep-alives only)",
                            self.opts.read_timeout.as_secs()
                        ),
                        partial: emitted,
                    })
                }
                chunk = response.chunk() => chunk,
            };
            let (events, ended) = match chunk {
                Ok(Some(bytes)) => (decoder.push(&bytes), false),
                Ok(None) => (decoder.finish(), true),
                // Closed uncleanly after the answer was whole: nothing is missing.
                Err(_) if assembler.is_complete() => break,
                Err(e) => {
                    return Err(ModelError::StreamBroken {
                        detail: format!("broke ({})", chain(&e)),
                        partial: emitted,
                    })
                }
            };
            if !events.is_empty() {
                last_event = Instant::now();
            }
            if decoder.pending_bytes() > MAX_EVENT_BYTES || assembler.size() > MAX_RESPONSE_BYTES {
                return Err(ModelError::Protocol {
                    detail: format!(
                        "the response is too large (an event over {} MiB, or an answer over {} MiB)",
                        MAX_EVENT_BYTES >> 20,
                        MAX_RESPONSE_BYTES >> 20
                    ),
                });
            }
            for event in events {
                if event.data.len() > MAX_EVENT_BYTES {
                    return Err(ModelError::Protocol {
                        detail: format!("an event of the stream is over {} MiB", MAX_EVENT_BYTES >> 20),
                    });
                }
                let complete = assembler.is_complete();
                let deltas = match assembler.push_data(&event.data) {
                    Ok(deltas) => deltas,
                    // Whatever trails a whole answer (a bad chunk, an error) takes nothing from it.
                    Err(_) if complete => break,
                    Err(ModelError::Api { message, code, .. }) => {
                        return Err(ModelError::Api {
                            message,
                            code,
                            partial: emitted,
                        })
                    }
                    Err(e) => return Err(e),
                };
                for delta in deltas {
                    // Only text and reasoning are shown as they come; a tool call in the making
                    // is not, so a failure then can still be retried.
                    emitted |= matches!(delta, Delta::Content(_) | Delta::Reasoning(_));
                    on_delta(delta);
                }
                if assembler.saw_done() {
                    break;
                }
            }
            if ended || assembler.saw_done() {
                break;
            }
            if assembler.saw_finish() {
                if !self.opts.include_usage || assembler.saw_final_usage() {
                    break;
                }
                grace.get_or_insert_with(|| Instant::now() + self.opts.usage_grace);
            }
        }
        if assembler.is_complete() {
            Ok(assembler.into_response())
        } else {
            Err(ModelError::StreamBroken {
                detail: "ended before a finish_reason".to_string(),
                partial: emitted,
            })
        }
    }

    /// Advice for an HTTP error status, appended to its message.
    fn hint(&self, status: u16) -> String {
        let var = self.opts.api_key_env.as_deref();
        match (status, &self.opts.api_key, var) {
            (401 | 403, None, Some(var)) => format!(" (no API key was sent: set {var})"),
            (401 | 403, None, None) => " (no API key was sent)".to_string(),
            (401 | 403, Some(_), Some(var)) => format!(" (check the key in {var})"),
            (404, _, _) => format!(
                " (requests go to {}; check the base URL and the model name `{}`)",
                self.endpoint, self.opts.model
            ),
            _ => String::new(),
        }
    }
}

impl ChatModel for OpenAiClient {
    fn describe(&self) -> String {
        self.opts.label.clone()
    }

    fn complete<'a>(
        &'a mut self,
        req: &'a ChatRequest,
        on_delta: &'a mut (dyn FnMut(Delta) + Send),
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(self.run(req, on_delta, cancel))
    }
}

/// `<base>/chat/completions`, after checking `base` is an http(s) URL.
pub(crate) fn endpoint_url(base: &str) -> Result<Url, ModelError> {
    let bad = |detail: String| ModelError::BadBaseUrl {
        url: base.to_string(),
        detail,
    };
    let joined = format!("{}/chat/completions", base.trim_end_matches('/'));
    let url = Url::parse(&joined).map_err(|e| bad(e.to_string()))?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(bad("only http and https are supported".to_string()));
    }
    Ok(url)
}

/// The announcement of a retry: attempt `next` of `max` after `delay`, because of `err`.
fn retry_delta(err: &ModelError, next: u32, max: u32, delay: Duration) -> Delta {
    let reason = err.retry_reason();
    Delta::Retry {
        message: format!(
            "model: {reason}, retrying in {:.1} s (attempt {next} of {max})",
            delay.as_secs_f64()
        ),
        notice: RetryNotice {
            attempt: next,
            max_attempts: max,
            wait_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
            reason,
        },
    }
}

/// Sleeps until `deadline`; never ends without one.
async fn until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// The wait a server asked for: OpenAI's `retry-after-ms` first, else `Retry-After` in seconds.
fn retry_after_of(headers: &HeaderMap) -> Option<Duration> {
    let text = |name| headers.get(name).and_then(|v: &HeaderValue| v.to_str().ok());
    text(RETRY_AFTER_MS)
        .and_then(parse_retry_after_ms)
        .or_else(|| text(RETRY_AFTER.as_str()).and_then(parse_retry_after))
}

fn is_html(content_type: Option<&HeaderValue>) -> bool {
    content_type
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("text/html"))
}

fn is_json(content_type: Option<&HeaderValue>) -> bool {
    content_type
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("application/json"))
}

/// Reads at most [`ERROR_BODY_LIMIT`] bytes of a body; a read error ends it early.
async fn read_limited(
    response: &mut reqwest::Response,
    cancel: &CancellationToken,
) -> Result<String, ModelError> {
    let mut bytes = Vec::new();
    while bytes.len() < ERROR_BODY_LIMIT {
        let chunk = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ModelError::Cancelled),
            chunk = response.chunk() => chunk,
        };
        match chunk {
            Ok(Some(b)) => bytes.extend_from_slice(&b),
            Ok(None) | Err(_) => break,
        }
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The message of an error body: `error.message` of a JSON body, else an excerpt of the text.
fn http_message(body: &str, reason: Option<&str>) -> String {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(body) {
        if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
            return error_message(err);
        }
        if let Some(m) = v.get("message").and_then(serde_json::Value::as_str) {
            return m.to_string();
        }
    }
    let text = body.trim();
    if text.is_empty() {
        reason.unwrap_or("no message").to_string()
    } else {
        excerpt(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_appends_chat_completions() {
        let url = |b| endpoint_url(b).unwrap().to_string();
        assert_eq!(
            url("https://api.deepseek.com"),
            "https://api.deepseek.com/chat/completions"
        );
        assert_eq!(
            url("https://api.openai.com/v1/"),
            "https://api.openai.com/v1/chat/completions"
        );
        assert!(matches!(
            endpoint_url("ftp://x"),
            Err(ModelError::BadBaseUrl { .. })
        ));
        assert!(matches!(
            endpoint_url("not a url"),
            Err(ModelError::BadBaseUrl { .. })
        ));
    }

    #[test]
    fn error_bodies_give_their_message() {
        assert_eq!(
            http_message(r#"{"error":{"message":"slow down"}}"#, None),
            "slow down"
        );
        assert_eq!(http_message("  plain text ", None), "plain text");
        assert_eq!(http_message("", Some("Too Many Requests")), "Too Many Requests");
    }
}
