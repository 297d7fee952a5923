//! What a model's tokens cost: a price per million tokens for the prompt, the part of the prompt
//! the server read from its cache, and the answer; the prices Retrace knows without being told
//! (DeepSeek's published ones); and the cost of a request's [`TokenUsage`] at a price.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::usage::TokenUsage;

/// US dollars per million tokens (`[prices."NAME"]` in the config).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Prompt tokens the server did not read from its cache.
    pub input_per_mtok: f64,
    /// Answer tokens (reasoning included).
    pub output_per_mtok: f64,
    /// Prompt tokens read from the server's cache (default: the input price).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_per_mtok: Option<f64>,
}

impl Price {
    /// What `usage` cost at this price, in US dollars.
    pub fn cost(&self, usage: &TokenUsage) -> f64 {
        let cached = usage.cached_tokens.min(usage.prompt_tokens);
        let fresh = usage.prompt_tokens - cached;
        let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        per(fresh, self.input_per_mtok)
            + per(cached, self.cached_input_per_mtok.unwrap_or(self.input_per_mtok))
            + per(usage.completion_tokens, self.output_per_mtok)
    }
}

/// When the default prices were DeepSeek's published ones (its "Models & Pricing" page).
pub const DEFAULT_PRICES_AS_OF: &str = "2026-07-04";

/// DeepSeek's published prices as of [`DEFAULT_PRICES_AS_OF`]: `deepseek-chat` and
/// `deepseek-reasoner` are served by DeepSeek-V4-Flash (without and with thinking) and cost what
/// it costs: $0.14 a million prompt tokens, $0.0028 from the cache, $0.28 a million answer tokens.
const DEEPSEEK_V4_FLASH: Price = Price {
    input_per_mtok: 0.14,
    output_per_mtok: 0.28,
    cached_input_per_mtok: Some(0.0028),
};

/// What a model that answers without a network costs: nothing.
pub const FREE: Price = Price {
    input_per_mtok: 0.0,
    output_per_mtok: 0.0,
    cached_input_per_mtok: None,
};

/// Whether the model named `name` answers here, without a network: the demo, a script.
pub fn offline(name: &str) -> bool {
    name == "demo" || name.starts_with("script:")
}

/// The price Retrace knows for a model named `name` (`deepseek-chat`, not `deepseek:deepseek-chat`)
/// when the config gives none: DeepSeek's published ones, and nothing for the demo and a script.
pub fn default_price(name: &str) -> Option<Price> {
    match name {
        "deepseek-chat" | "deepseek-reasoner" | "deepseek-v4-flash" => Some(DEEPSEEK_V4_FLASH),
        n if offline(n) => Some(FREE),
        _ => None,
    }
}

/// Prices by model name: the configured ones, then the defaults.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prices {
    /// `[prices."NAME"]` of the config, by name.
    pub configured: BTreeMap<String, Price>,
}

impl Prices {
    /// The price of the model `model` names: its name is what follows the provider's prefix
    /// (`deepseek:deepseek-chat` → `deepseek-chat`), without an endpoint (` at URL`) after it.
    pub fn of(&self, model: &str) -> Option<Price> {
        let name = model_name(model);
        self.configured
            .get(name)
            .or_else(|| self.configured.get(model))
            .copied()
            .or_else(|| default_price(name))
    }
}

/// A model's name in a label such as `deepseek:deepseek-chat at http://127.0.0.1:8080`:
/// `deepseek-chat`.
pub fn model_name(label: &str) -> &str {
    let spec = label.split(" at ").next().unwrap_or(label);
    match spec.split_once(':') {
        Some(("deepseek" | "openai", name)) => name,
        _ => spec,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_count_cached_prompt_tokens_at_their_price() {
        let usage = TokenUsage {
            prompt_tokens: 1_000_000,
            completion_tokens: 1_000_000,
            total_tokens: 2_000_000,
            cached_tokens: 500_000,
        };
        let cost = DEEPSEEK_V4_FLASH.cost(&usage);
        assert!((cost - (0.07 + 0.0014 + 0.28)).abs() < 1e-9, "{cost}");
        let no_cache_price = Price {
            cached_input_per_mtok: None,
            ..DEEPSEEK_V4_FLASH
        };
        assert!((no_cache_price.cost(&usage) - 0.42).abs() < 1e-9);
    }

    #[test]
    fn prices_by_name_configured_first() {
        let mut p = Prices::default();
        assert_eq!(
            p.of("deepseek:deepseek-chat at http://x"),
            Some(DEEPSEEK_V4_FLASH)
        );
        assert_eq!(p.of("openai:gpt-4o"), None);
        // what answers without a network costs nothing, unless the config says otherwise
        assert_eq!(p.of("demo"), Some(FREE));
        assert_eq!(p.of("script:/tmp/s.json"), Some(FREE));
        let mine = Price {
            input_per_mtok: 2.5,
            output_per_mtok: 10.0,
            cached_input_per_mtok: None,
        };
        p.configured.insert("gpt-4o".into(), mine);
        p.configured.insert("deepseek-chat".into(), mine);
        assert_eq!(p.of("openai:gpt-4o"), Some(mine));
        assert_eq!(p.of("deepseek:deepseek-chat"), Some(mine));
        p.configured.insert("script:/tmp/s.json".into(), mine);
        assert_eq!(p.of("script:/tmp/s.json"), Some(mine));
        assert_eq!(model_name("script:/tmp/a:b.json"), "script:/tmp/a:b.json");
    }
}
