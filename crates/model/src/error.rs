//! The crate's error type. Variants carry what a user needs to act: the variable to set, the URL and
//! status a server answered, the script file and what is wrong with it.

use std::path::PathBuf;

/// Errors of the model clients.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The base URL is not a usable http(s) URL.
    #[error("bad base URL `{url}`: {detail}")]
    BadBaseUrl {
        /// The URL given.
        url: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The API key's environment variable is not set (or empty).
    #[error("{var} is not set: export it, or pick another model: {alternatives}")]
    MissingApiKey {
        /// The variable to set, e.g. `DEEPSEEK_API_KEY`.
        var: String,
        /// The other model choices, for the message.
        alternatives: String,
    },
    /// The HTTP client could not be built.
    #[error("cannot set up the HTTP client: {detail}")]
    Client {
        /// The cause.
        detail: String,
    },
    /// The request could not be sent or the connection failed before a response (retryable).
    #[error("cannot reach {url}: {detail}")]
    Connect {
        /// The endpoint.
        url: String,
        /// The cause, with its chain.
        detail: String,
    },
    /// The server answered with an error status.
    #[error("{url} answered HTTP {status}: {message}{hint}")]
    Http {
        /// The endpoint.
        url: String,
        /// The status code.
        status: u16,
        /// The server's error message (or an excerpt of its body).
        message: String,
        /// Advice appended to the message (e.g. which key variable to check); may be empty.
        hint: String,
    },
    /// The server reported an error inside the stream (`{"error": …}` in a data line), as DeepSeek
    /// and OpenRouter do when the model fails after the HTTP status went out. Retried like an HTTP
    /// error with the same status when nothing was shown yet (a code such as 400 is not retried;
    /// no code counts as a server error).
    #[error("the model server reported an error: {message}")]
    Api {
        /// The server's message.
        message: String,
        /// The error's numeric `code` (an HTTP status), when it gave one.
        code: Option<u16>,
        /// Whether deltas had already been given to the caller (such a failure is not retried).
        partial: bool,
    },
    /// The stream broke or ended before the response was complete.
    #[error("the response stream {detail}{}", if *.partial { " after part of the answer was shown; not retried, so nothing is shown twice" } else { "" })]
    StreamBroken {
        /// What happened (`ended before a finish_reason`, `broke: …`).
        detail: String,
        /// Whether deltas had already been given to the caller (such a failure is not retried).
        partial: bool,
    },
    /// The stream carried something that is not a chat-completion chunk.
    #[error("unexpected data from the model server: {detail}")]
    Protocol {
        /// What is wrong, with an excerpt of the data.
        detail: String,
    },
    /// The request was cancelled through its token.
    #[error("cancelled")]
    Cancelled,
    /// Retryable failures went on until the attempts ran out.
    #[error("gave up after {attempts} attempts: {last}")]
    GaveUp {
        /// How many requests were made.
        attempts: u32,
        /// The last failure.
        last: Box<ModelError>,
    },
    /// A script file could not be read.
    #[error("cannot read script `{path}`: {source}")]
    ScriptIo {
        /// The script file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A script file is not a valid script.
    #[error("bad script `{path}`: {detail}")]
    BadScript {
        /// The script file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// The script has no response left for this request.
    #[error("script `{path}` has no response left: all {used} were used; add more to its `responses`")]
    ScriptExhausted {
        /// The script file.
        path: PathBuf,
        /// How many responses it had (all used).
        used: usize,
    },
}

impl ModelError {
    /// Whether trying the same request again may succeed: connection failures, HTTP 408, 429 and
    /// 5xx, and streams that broke or reported an error before anything was shown.
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::Connect { .. } => true,
            ModelError::Http { status, .. } => retryable_status(*status),
            ModelError::StreamBroken { partial, .. } => !partial,
            ModelError::Api { partial, code, .. } => !partial && code.is_none_or(retryable_status),
            ModelError::BadBaseUrl { .. }
            | ModelError::MissingApiKey { .. }
            | ModelError::Client { .. }
            | ModelError::Protocol { .. }
            | ModelError::Cancelled
            | ModelError::GaveUp { .. }
            | ModelError::ScriptIo { .. }
            | ModelError::BadScript { .. }
            | ModelError::ScriptExhausted { .. } => false,
        }
    }
}

impl ModelError {
    /// Why a retryable failure happened, in a few words, for the notice announcing the retry
    /// (`HTTP 429 (rate limit reached)`, `cannot connect`, …).
    pub fn retry_reason(&self) -> String {
        match self {
            ModelError::Connect { .. } => "cannot connect".to_string(),
            ModelError::Http { status, message, .. } => {
                format!("HTTP {status} ({})", short(message))
            }
            ModelError::StreamBroken { detail, .. } => format!("the response stream {}", short(detail)),
            ModelError::Api { message, .. } => format!("error in the stream ({})", short(message)),
            other => short(&other.to_string()),
        }
    }
}

/// HTTP statuses worth a second try: 408, 429 and every 5xx.
fn retryable_status(status: u16) -> bool {
    status == 429 || status == 408 || status >= 500
}

/// At most 80 characters of `text`, on one line.
fn short(text: &str) -> String {
    const MAX: usize = 80;
    let line = text.lines().next().unwrap_or("").trim();
    match line.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

/// Renders an error with its chain of sources (`a: b: c`), since `reqwest`'s own message alone
/// ("error sending request") hides the cause.
pub(crate) fn chain(err: &dyn std::error::Error) -> String {
    let mut out = err.to_string();
    let mut next = err.source();
    while let Some(e) = next {
        let s = e.to_string();
        if !out.contains(&s) {
            out.push_str(": ");
            out.push_str(&s);
        }
        next = e.source();
    }
    out
}

impl ModelError {
    /// This error with every occurrence of `secret` (the API key sent) in text that came from the
    /// server masked, as some gateways echo the `Authorization` header in their error bodies.
    pub fn redacted(self, secret: Option<&str>) -> ModelError {
        let Some(secret) = secret.filter(|s| s.len() >= 4) else {
            return self;
        };
        let mask = |s: String| {
            if s.contains(secret) {
                s.replace(secret, &masked_key(secret))
            } else {
                s
            }
        };
        match self {
            ModelError::Http {
                url,
                status,
                message,
                hint,
            } => ModelError::Http {
                url,
                status,
                message: mask(message),
                hint,
            },
            ModelError::Api {
                message,
                code,
                partial,
            } => ModelError::Api {
                message: mask(message),
                code,
                partial,
            },
            ModelError::StreamBroken { detail, partial } => ModelError::StreamBroken {
                detail: mask(detail),
                partial,
            },
            ModelError::Protocol { detail } => ModelError::Protocol { detail: mask(detail) },
            ModelError::Connect { url, detail } => ModelError::Connect {
                url,
                detail: mask(detail),
            },
            ModelError::GaveUp { attempts, last } => ModelError::GaveUp {
                attempts,
                last: Box::new(last.redacted(Some(secret))),
            },
            other => other,
        }
    }
}

/// A key as it may be shown: its first three and last two characters (`sk-…23`).
pub fn masked_key(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() < 8 {
        return "…".to_string();
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 2..].iter().collect();
    format!("{head}…{tail}")
}
