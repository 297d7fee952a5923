//! How much a model can read at once: the context window of known models, a token estimate for
//! text no server has counted yet, and whether a failure says the request was too long.

use crate::error::ModelError;
use crate::{ModelSpec, Provider};

/// The window assumed for a model this crate does not know (a local server, a script): the
/// smallest of the known ones, so compaction comes early rather than a request failing.
pub const FALLBACK_CONTEXT_WINDOW: u64 = 65_536;

/// The share of the window a request may reach before the conversation is compacted (SPEC §10
/// `compact_at`).
pub const DEFAULT_COMPACT_AT: f64 = 0.8;

/// The context window, in tokens, of the model `spec` names, as its provider documents it;
/// [`FALLBACK_CONTEXT_WINDOW`] when unknown. `[model] context_window` overrides it.
pub fn default_context_window(spec: &ModelSpec) -> u64 {
    let name = spec.name.to_ascii_lowercase();
    match spec.provider {
        Provider::DeepSeek => 65_536,
        Provider::OpenAi => {
            let known: &[(&str, u64)] = &[
                ("gpt-5", 400_000),
                ("gpt-4.1", 1_047_576),
                ("gpt-4o", 128_000),
                ("gpt-4-turbo", 128_000),
                ("o1-mini", 128_000),
                ("o1", 200_000),
                ("o3", 200_000),
                ("o4-mini", 200_000),
                ("gpt-4", 8_192),
                ("gpt-3.5-turbo", 16_385),
            ];
            known
                .iter()
                .find(|(prefix, _)| name.starts_with(prefix))
                .map_or(FALLBACK_CONTEXT_WINDOW, |(_, w)| *w)
        }
        _ => FALLBACK_CONTEXT_WINDOW,
    }
}

/// A cautious token count of `text` that no server has counted: four ASCII bytes per token, and
/// one token for every other character (CJK text runs about one character per token).
pub fn estimate_tokens(text: &str) -> u64 {
    let (mut ascii, mut other) = (0u64, 0u64);
    for c in text.chars() {
        if c.is_ascii() {
            ascii += 1;
        } else {
            other += 1;
        }
    }
    ascii.div_ceil(4) + other
}

impl ModelError {
    /// Whether the server refused the request because it is longer than the model's context
    /// window (OpenAI's `context_length_exceeded`, DeepSeek's "maximum context length", and the
    /// wordings of common compatible servers). Such a request fails the same way every time
    /// until the conversation is shorter.
    pub fn is_context_too_long(&self) -> bool {
        let says = |text: &str| {
            let t = text.to_ascii_lowercase();
            [
                "context_length_exceeded",
                "maximum context length",
                "context length",
                "context window",
                "prompt is too long",
                "too many tokens",
                "reduce the length",
            ]
            .iter()
            .any(|s| t.contains(s))
        };
        match self {
            ModelError::Http { status, message, .. } => matches!(status, 400 | 413 | 422) && says(message),
            ModelError::Api { message, partial, .. } => !partial && says(message),
            ModelError::GaveUp { last, .. } => last.is_context_too_long(),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_models_have_their_windows() {
        let w = |p, n: &str| default_context_window(&ModelSpec::new(p, n));
        assert_eq!(w(Provider::DeepSeek, "deepseek-chat"), 65_536);
        assert_eq!(w(Provider::OpenAi, "gpt-4o-mini"), 128_000);
        assert_eq!(w(Provider::OpenAi, "gpt-4.1-nano"), 1_047_576);
        assert_eq!(w(Provider::OpenAi, "o1-mini"), 128_000);
        assert_eq!(w(Provider::OpenAi, "something-new"), FALLBACK_CONTEXT_WINDOW);
        assert_eq!(w(Provider::Demo, ""), FALLBACK_CONTEXT_WINDOW);
    }

    #[test]
    fn estimates_count_ascii_by_four_and_other_characters_by_one() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        assert_eq!(estimate_tokens("试一试"), 3);
    }

    #[test]
    fn context_errors_are_recognised_and_others_are_not() {
        let http = |status, message: &str| ModelError::Http {
            url: "u".into(),
            status,
            message: message.into(),
            hint: String::new(),
        };
        assert!(http(
            400,
            "This model's maximum context length is 65536 tokens. However, you requested 70000 tokens"
        )
        .is_context_too_long());
        assert!(http(400, "code: context_length_exceeded").is_context_too_long());
        assert!(!http(400, "invalid tool schema").is_context_too_long());
        assert!(!http(500, "maximum context length").is_context_too_long());
        let api = ModelError::Api {
            message: "prompt is too long".into(),
            code: Some(400),
            partial: false,
        };
        assert!(api.is_context_too_long());
        assert!(!ModelError::Cancelled.is_context_too_long());
    }
}
