//! Choosing a model: the `--model` value (`deepseek:NAME`, `openai:NAME`, `script:FILE`, `demo`, or a
//! bare name meaning DeepSeek) and opening it with the config's overrides.
//!
//! The API key is read through a caller-given lookup (the CLI passes `std::env::var`), so tests never
//! touch the real environment. A key is required for the provider's own endpoint; with a base URL of
//! the user's choosing it is optional, since local servers (llama.cpp, vLLM, Ollama) need none — a
//! 401 from such a server then says which variable to set.

use std::fmt;
use std::path::PathBuf;

use crate::demo::DemoModel;
use crate::error::ModelError;
use crate::openai::{endpoint_url, OpenAiClient, OpenAiOptions};
use crate::retry::RetryPolicy;
use crate::script::ScriptModel;
use crate::ChatModel;

/// A hosted OpenAI-compatible provider Retrace knows by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// DeepSeek (the default).
    DeepSeek,
    /// OpenAI.
    OpenAi,
}

impl Provider {
    /// The prefix in `--model PREFIX:NAME`.
    pub fn prefix(self) -> &'static str {
        match self {
            Provider::DeepSeek => "deepseek",
            Provider::OpenAi => "openai",
        }
    }

    /// The API root used when no base URL is given.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Provider::DeepSeek => "https://api.deepseek.com",
            Provider::OpenAi => "https://api.openai.com/v1",
        }
    }

    /// The environment variable holding the key.
    pub fn api_key_env(self) -> &'static str {
        match self {
            Provider::DeepSeek => "DEEPSEEK_API_KEY",
            Provider::OpenAi => "OPENAI_API_KEY",
        }
    }

    /// The `--model` choices to suggest instead of this provider.
    fn alternatives(self) -> &'static str {
        match self {
            Provider::DeepSeek => "--model openai:NAME, --model demo or --model script:FILE",
            Provider::OpenAi => "--model deepseek:NAME, --model demo or --model script:FILE",
        }
    }
}

/// A parsed `--model` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSpec {
    /// A hosted model behind an OpenAI-compatible endpoint.
    Remote {
        /// Whose endpoint and key variable.
        provider: Provider,
        /// The model name sent to the server.
        name: String,
    },
    /// A script file replayed response by response (SPEC §11.2).
    Script(PathBuf),
    /// The built-in deterministic demo model.
    Demo,
}

impl ModelSpec {
    /// The model used when nothing is configured: `deepseek:deepseek-chat`.
    pub fn default_remote() -> ModelSpec {
        ModelSpec::Remote {
            provider: Provider::DeepSeek,
            name: "deepseek-chat".to_string(),
        }
    }

    /// Parses `deepseek:NAME`, `openai:NAME`, `script:FILE`, `demo`, or a bare `NAME` (DeepSeek).
    pub fn parse(text: &str) -> Result<ModelSpec, ModelError> {
        let text = text.trim();
        let bad = |detail: &str| ModelError::BadSpec {
            spec: text.to_string(),
            detail: detail.to_string(),
        };
        if text.is_empty() {
            return Err(bad(
                "empty; try deepseek:deepseek-chat, openai:NAME, script:FILE or demo",
            ));
        }
        if text == "demo" {
            return Ok(ModelSpec::Demo);
        }
        let Some((prefix, rest)) = text.split_once(':') else {
            return Ok(ModelSpec::Remote {
                provider: Provider::DeepSeek,
                name: text.to_string(),
            });
        };
        let provider = match prefix {
            "script" if rest.is_empty() => return Err(bad("script: needs a file, as in script:FILE")),
            "script" => return Ok(ModelSpec::Script(PathBuf::from(rest))),
            "deepseek" => Provider::DeepSeek,
            "openai" => Provider::OpenAi,
            _ => {
                return Err(bad(&format!(
                    "unknown provider `{prefix}`; use deepseek:NAME, openai:NAME, script:FILE or demo \
                     (a name containing `:` goes after the provider, as in openai:{text})"
                )))
            }
        };
        if rest.is_empty() {
            return Err(bad("the model name is missing, as in deepseek:deepseek-chat"));
        }
        Ok(ModelSpec::Remote {
            provider,
            name: rest.to_string(),
        })
    }
}

impl fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelSpec::Remote { provider, name } => write!(f, "{}:{name}", provider.prefix()),
            ModelSpec::Script(path) => write!(f, "script:{}", path.display()),
            ModelSpec::Demo => f.write_str("demo"),
        }
    }
}

/// What the config and flags add to a [`ModelSpec`] (`[model] base_url`, `api_key_env`, `--base-url`).
#[derive(Debug, Clone, Default)]
pub struct ModelOptions {
    /// Another API root (`--base-url`); requests go to `<base_url>/chat/completions`.
    pub base_url: Option<String>,
    /// Another variable to read the key from (`[model] api_key_env`).
    pub api_key_env: Option<String>,
    /// Attempts and backoff of the HTTP client.
    pub retry: RetryPolicy,
}

/// Opens the model `spec` names. `env` looks up environment variables (an empty value counts as
/// unset). Remote models make no request here; script files are read and checked here.
pub fn open_model(
    spec: &ModelSpec,
    opts: &ModelOptions,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Box<dyn ChatModel>, ModelError> {
    match spec {
        ModelSpec::Demo => Ok(Box::new(DemoModel::new())),
        ModelSpec::Script(path) => Ok(Box::new(ScriptModel::load(path)?)),
        ModelSpec::Remote { provider, name } => {
            let var = opts
                .api_key_env
                .clone()
                .unwrap_or_else(|| provider.api_key_env().to_string());
            let key = env(&var).filter(|k| !k.trim().is_empty());
            let custom = opts.base_url.as_deref().filter(|u| !u.trim().is_empty());
            let base_url = custom.unwrap_or(provider.default_base_url());
            // Checked before the key, so a typo in the URL is reported first.
            endpoint_url(base_url)?;
            if key.is_none() && custom.is_none() {
                return Err(ModelError::MissingApiKey {
                    var,
                    alternatives: provider.alternatives().to_string(),
                });
            }
            let mut client_opts = OpenAiOptions::new(base_url, name.clone());
            client_opts.label = match custom {
                Some(url) => format!("{spec} at {url}"),
                None => spec.to_string(),
            };
            client_opts.api_key = key;
            client_opts.api_key_env = Some(var);
            client_opts.retry = opts.retry;
            Ok(Box::new(OpenAiClient::new(client_opts)?))
        }
    }
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;
