//! What a session's model requests took and cost, and how full the model's context is: the
//! figures of every frontend's status line (the terminal UI's, the page's), counted once by the
//! controller, with the words they are shown in.

use serde::{Deserialize, Serialize};

use crate::price::Price;
use crate::usage::TokenUsage;

/// The session's tally (`usage` in a snapshot and in the `usage` event).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionUsage {
    /// Prompt tokens of every model request of the session's turns that the server counted (on
    /// every head: a rewind does not take back what was spent).
    pub input_tokens: u64,
    /// Of them, those the server read from its cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_tokens: u64,
    /// Answer tokens of the same requests.
    pub output_tokens: u64,
    /// What they cost in US dollars, each at its model's price (the config's, else the one
    /// Retrace knows: DeepSeek's published ones; the demo and script models cost nothing); absent
    /// when a request's model has no known price (the figure would be too low).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The price of the model in use, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Price>,
    /// How many tokens the selected head's conversation took at its last counted request (its
    /// prompt and answer: what the next request starts from), or as a compaction estimated it;
    /// absent until one is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<u64>,
    /// The context window of the model in use, in tokens (the config's, else the model's known
    /// one); absent without a model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// `context_tokens` as a whole percentage of `context_window` (rounded down, at most 999).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_percent: Option<u64>,
    /// The figures in words, as every status line shows them, in this order and each only when
    /// known: "21% context", "133k in 1.3k out", "$0.0686". A narrow line leaves them out from
    /// the end.
    #[serde(default)]
    pub says: Vec<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl SessionUsage {
    /// The tally of requests that counted `spent` and cost `cost_usd`, with the model in use's
    /// `price` and `context_window`, its conversation taking `context_tokens`: the percentage and
    /// the words filled in.
    pub fn new(
        spent: TokenUsage,
        cost_usd: Option<f64>,
        price: Option<Price>,
        context_tokens: Option<u64>,
        context_window: Option<u64>,
    ) -> SessionUsage {
        let context_percent = match (context_tokens, context_window) {
            (Some(used), Some(window)) => Some((used.saturating_mul(100) / window.max(1)).min(999)),
            _ => None,
        };
        let mut says = Vec::new();
        if let Some(p) = context_percent {
            says.push(format!("{p}% context"));
        }
        if spent.prompt_tokens > 0 || spent.completion_tokens > 0 {
            says.push(format!(
                "{} in {} out",
                tokens(spent.prompt_tokens),
                tokens(spent.completion_tokens)
            ));
            if let Some(d) = cost_usd {
                says.push(dollars(d));
            }
        }
        SessionUsage {
            input_tokens: spent.prompt_tokens,
            cached_tokens: spent.cached_tokens,
            output_tokens: spent.completion_tokens,
            cost_usd,
            price,
            context_tokens,
            context_window,
            context_percent,
            says,
        }
    }
}

/// A count of tokens in a few characters: `950`, `12.3k`, `123k`, `1.2M`.
pub fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..100_000 => format!("{:.1}k", n as f64 / 1e3),
        100_000..1_000_000 => format!("{}k", n / 1_000),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// An amount of US dollars: four decimals below ten cents, two above.
pub fn dollars(d: f64) -> String {
    if d < 0.1 {
        format!("${d:.4}")
    } else {
        format!("${d:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_numbers() {
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(12_345), "12.3k");
        assert_eq!(tokens(123_456), "123k");
        assert_eq!(tokens(1_234_567), "1.2M");
        assert_eq!(dollars(0.00421), "$0.0042");
        assert_eq!(dollars(1.5), "$1.50");
    }

    #[test]
    fn the_words_say_what_is_known_in_the_status_lines_order() {
        let spent = TokenUsage {
            prompt_tokens: 44_000,
            completion_tokens: 2_000,
            total_tokens: 46_000,
            cached_tokens: 20_000,
        };
        let u = SessionUsage::new(spent, Some(0.038), None, Some(23_500), Some(65_536));
        assert_eq!(u.context_percent, Some(35));
        assert_eq!(u.says, ["35% context", "44.0k in 2.0k out", "$0.0380"]);
        // no price known: no cost; nothing counted yet: neither tokens nor cost
        let u = SessionUsage::new(spent, None, None, None, Some(65_536));
        assert_eq!(u.says, ["44.0k in 2.0k out"]);
        let u = SessionUsage::new(TokenUsage::default(), Some(0.0), None, Some(100), Some(1_000));
        assert_eq!(u.says, ["10% context"]);
        // a conversation past its window is said so, within bounds
        let u = SessionUsage::new(TokenUsage::default(), None, None, Some(u64::MAX), Some(1));
        assert_eq!(u.context_percent, Some(999));
        let v = serde_json::to_value(SessionUsage::new(spent, Some(0.038), None, None, None)).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"input_tokens": 44000, "cached_tokens": 20000, "output_tokens": 2000,
                               "cost_usd": 0.038, "says": ["44.0k in 2.0k out", "$0.0380"]})
        );
    }
}
