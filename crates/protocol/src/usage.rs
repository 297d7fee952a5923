//! Token counts: what one model request cost, and what a turn's requests cost together.

use serde::{Deserialize, Serialize};

/// Tokens counted by the model server (`usage` of an OpenAI-compatible response).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Tokens in the request (the prompt: the conversation and the tools sent).
    #[serde(default)]
    pub prompt_tokens: u64,
    /// Tokens generated (the answer, reasoning included where the server counts it there).
    #[serde(default)]
    pub completion_tokens: u64,
    /// Their sum, as the server counted it.
    #[serde(default)]
    pub total_tokens: u64,
    /// Of the prompt tokens, those the server read from its cache (DeepSeek's
    /// `prompt_cache_hit_tokens`, OpenAI's `prompt_tokens_details.cached_tokens`), which cost
    /// less; absent when it said none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl TokenUsage {
    /// The counts of `self` and `other` added (saturating).
    pub fn plus(self, other: TokenUsage) -> TokenUsage {
        TokenUsage {
            prompt_tokens: self.prompt_tokens.saturating_add(other.prompt_tokens),
            completion_tokens: self.completion_tokens.saturating_add(other.completion_tokens),
            total_tokens: self.total_tokens.saturating_add(other.total_tokens),
            cached_tokens: self.cached_tokens.saturating_add(other.cached_tokens),
        }
    }
}

/// A model request failed in a way a second try may fix, and will be tried again after a wait:
/// the details of a `notice` event that announces it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetryNotice {
    /// The attempt about to be made after the wait (2 for the first retry).
    pub attempt: u32,
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// The wait before it, in milliseconds (the server's `Retry-After` when it sent one).
    pub wait_ms: u64,
    /// Why the previous attempt failed, in a few words (`HTTP 429`, `cannot connect`, …).
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_adds_and_missing_counts_read_as_zero() {
        let a = TokenUsage {
            prompt_tokens: 10,
            completion_tokens: 2,
            total_tokens: 12,
            cached_tokens: 0,
        };
        let b: TokenUsage = serde_json::from_str(r#"{"prompt_tokens": 5}"#).unwrap();
        assert_eq!(
            a.plus(b),
            TokenUsage {
                prompt_tokens: 15,
                completion_tokens: 2,
                total_tokens: 12,
                cached_tokens: 0,
            }
        );
    }
}
