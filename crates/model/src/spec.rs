//! Opening a model: a [`ModelSpec`] (`retrace-protocol`'s: provider, name, base URL, key variable)
//! becomes a client.
//!
//! The API key is read through a caller-given lookup (the controller passes the process
//! environment), so tests never touch the real environment. A key is required for the provider's
//! own endpoint; with a base URL of the user's choosing it is optional, since local servers
//! (llama.cpp, vLLM, Ollama) need none — a 401 from such a server then says which variable to set.

pub use retrace_protocol::{ModelSpec, Provider};

use crate::demo::DemoModel;
use crate::error::ModelError;
use crate::openai::{endpoint_url, OpenAiClient, OpenAiOptions};
use crate::retry::RetryPolicy;
use crate::script::ScriptModel;
use crate::ChatModel;

/// How clients behave, beyond what the spec chooses.
#[derive(Debug, Clone, Default)]
pub struct ModelOptions {
    /// Attempts and backoff of the HTTP client.
    pub retry: RetryPolicy,
}

/// The other model choices to suggest when `provider` cannot be used.
fn alternatives(provider: Provider) -> &'static str {
    match provider {
        Provider::OpenAi => "deepseek:NAME, demo or script:FILE",
        _ => "openai:NAME, demo or script:FILE",
    }
}

/// Opens the model `spec` names. `env` looks up environment variables (an empty value counts as
/// unset). Remote models make no request here; script files are read and checked here.
pub fn open_model(
    spec: &ModelSpec,
    opts: &ModelOptions,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Box<dyn ChatModel>, ModelError> {
    let (default_url, default_var) = match (spec.provider.default_base_url(), spec.provider.api_key_env()) {
        (Some(url), Some(var)) => (url, var),
        _ => {
            return match spec.provider {
                Provider::Script => Ok(Box::new(ScriptModel::load(std::path::Path::new(&spec.name))?)),
                _ => Ok(Box::new(DemoModel::new())),
            }
        }
    };
    let var = spec
        .api_key_env
        .clone()
        .unwrap_or_else(|| default_var.to_string());
    // An empty variable name means "no key" (a local server), never the provider's own key.
    let key = Some(&var)
        .filter(|v| !v.trim().is_empty())
        .and_then(|v| env(v))
        .filter(|k| !k.trim().is_empty());
    let custom = spec.base_url.as_deref().filter(|u| !u.trim().is_empty());
    let base_url = custom.unwrap_or(default_url);
    // Checked before the key, so a typo in the URL is reported first.
    endpoint_url(base_url)?;
    if key.is_none() && custom.is_none() {
        return Err(ModelError::MissingApiKey {
            var,
            alternatives: alternatives(spec.provider).to_string(),
        });
    }
    let mut client_opts = OpenAiOptions::new(base_url, spec.name.clone());
    client_opts.label = match custom {
        Some(url) => format!("{spec} at {url}"),
        None => spec.to_string(),
    };
    client_opts.api_key = key;
    client_opts.api_key_env = Some(var);
    client_opts.retry = opts.retry;
    Ok(Box::new(OpenAiClient::new(client_opts)?))
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;
