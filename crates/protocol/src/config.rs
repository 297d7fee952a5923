//! What a frontend chooses when it opens sessions: the model, the shell policy, the retention
//! limits. Plain data; the controller turns a [`ModelSpec`] into a client, so no frontend needs the
//! model crate.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Who serves a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provider {
    /// DeepSeek (the default), or any OpenAI-compatible server given a base URL.
    DeepSeek,
    /// OpenAI, or any OpenAI-compatible server given a base URL.
    OpenAi,
    /// A script file replayed response by response (SPEC §11.2); `name` is the file.
    Script,
    /// The built-in deterministic demo model.
    Demo,
}

impl Provider {
    /// The prefix in `PREFIX:NAME`.
    pub fn prefix(self) -> &'static str {
        match self {
            Provider::DeepSeek => "deepseek",
            Provider::OpenAi => "openai",
            Provider::Script => "script",
            Provider::Demo => "demo",
        }
    }

    /// The API root used when no base URL is given (hosted providers only).
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            Provider::DeepSeek => Some("https://api.deepseek.com"),
            Provider::OpenAi => Some("https://api.openai.com/v1"),
            Provider::Script | Provider::Demo => None,
        }
    }

    /// The environment variable holding the key (hosted providers only).
    pub fn api_key_env(self) -> Option<&'static str> {
        match self {
            Provider::DeepSeek => Some("DEEPSEEK_API_KEY"),
            Provider::OpenAi => Some("OPENAI_API_KEY"),
            Provider::Script | Provider::Demo => None,
        }
    }
}

/// A model choice: provider, name, and for hosted providers an optional base URL and key variable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelSpec {
    /// Who serves it.
    pub provider: Provider,
    /// The model name sent to the server; for `script`, the script file; empty for `demo`.
    pub name: String,
    /// Another API root; requests go to `<base_url>/chat/completions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Another environment variable to read the key from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
}

/// A model value that could not be understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSpecError {
    /// The value given.
    pub spec: String,
    /// What is wrong with it, and what to write instead.
    pub detail: String,
}

impl fmt::Display for ModelSpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad model `{}`: {}", self.spec, self.detail)
    }
}

impl std::error::Error for ModelSpecError {}

impl ModelSpec {
    /// A model of `provider` called `name`, with the provider's own endpoint and key variable.
    pub fn new(provider: Provider, name: impl Into<String>) -> ModelSpec {
        ModelSpec {
            provider,
            name: name.into(),
            base_url: None,
            api_key_env: None,
        }
    }

    /// The model used when nothing is configured: `deepseek:deepseek-chat`.
    pub fn default_remote() -> ModelSpec {
        ModelSpec::new(Provider::DeepSeek, "deepseek-chat")
    }

    /// The built-in demo model.
    pub fn demo() -> ModelSpec {
        ModelSpec::new(Provider::Demo, "")
    }

    /// The script model replaying `file`.
    pub fn script(file: impl Into<String>) -> ModelSpec {
        ModelSpec::new(Provider::Script, file)
    }

    /// Parses `deepseek:NAME`, `openai:NAME`, `script:FILE`, `demo`, or a bare `NAME` (DeepSeek).
    pub fn parse(text: &str) -> Result<ModelSpec, ModelSpecError> {
        let text = text.trim();
        let bad = |detail: &str| ModelSpecError {
            spec: text.to_string(),
            detail: detail.to_string(),
        };
        if text.is_empty() {
            return Err(bad(
                "empty; try deepseek:deepseek-chat, openai:NAME, script:FILE or demo",
            ));
        }
        if text == "demo" {
            return Ok(ModelSpec::demo());
        }
        let Some((prefix, rest)) = text.split_once(':') else {
            if looks_like_openai(text) {
                // Read as DeepSeek's, it would fail later with a DeepSeek key error, or worse
                // reach DeepSeek's endpoint: say what was probably meant instead.
                return Err(bad(&format!(
                    "a name without a provider is a DeepSeek model; did you mean openai:{text}? \
                     (write deepseek:{text} if a DeepSeek endpoint serves a model of that name)"
                )));
            }
            return Ok(ModelSpec::new(Provider::DeepSeek, text));
        };
        let provider = match prefix {
            "script" if rest.is_empty() => return Err(bad("script: needs a file, as in script:FILE")),
            "script" => return Ok(ModelSpec::script(rest)),
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
        Ok(ModelSpec::new(provider, rest))
    }
}

/// Whether a model name without a provider is one of OpenAI's (`gpt-4o`, `o3-mini`,
/// `chatgpt-4o-latest`), which `parse` would otherwise take for a DeepSeek model.
fn looks_like_openai(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    let reasoning = ["o1", "o3", "o4"].iter().any(|o| {
        name.strip_prefix(o)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
    });
    reasoning || name.starts_with("gpt-") || name.starts_with("chatgpt-")
}

impl fmt::Display for ModelSpec {
    /// `provider:name` (`demo` alone), without the base URL.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.provider {
            Provider::Demo => f.write_str("demo"),
            p => write!(f, "{}:{}", p.prefix(), self.name),
        }
    }
}

/// Whether the agent may run shell commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BashPolicy {
    /// Every command runs.
    Allow,
    /// No command runs (the headless default without `--allow-bash`).
    Deny,
    /// Each command waits for an answer to its `approval_requested` event.
    Ask,
}

/// Where a session keeps what its turns change (`[checkpoints] backend`, `--backend`). A session
/// keeps the backend it was created with (its log's header records it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointBackend {
    /// Before-images of what the edit tools write; a shell command is a coverage gap.
    #[default]
    Snapshot,
    /// The snapshot store, plus a private git object store holding the whole workspace around
    /// every shell command, so what the command changed is captured and restorable too.
    Git,
}

impl CheckpointBackend {
    /// Its name in the config, the flag and the JSON: `snapshot` or `git`.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckpointBackend::Snapshot => "snapshot",
            CheckpointBackend::Git => "git",
        }
    }

    /// The backend named `name`, if any.
    pub fn parse(name: &str) -> Option<CheckpointBackend> {
        match name {
            "snapshot" => Some(CheckpointBackend::Snapshot),
            "git" => Some(CheckpointBackend::Git),
            _ => None,
        }
    }

    /// Whether it is the default (`snapshot`), which a log's header leaves out.
    pub fn is_default(&self) -> bool {
        *self == CheckpointBackend::Snapshot
    }
}

impl std::fmt::Display for CheckpointBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Retention limits of the checkpoint store (SPEC §3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetentionLimits {
    /// Keep at most this many turns with payloads.
    pub max_turns: usize,
    /// Keep at most this many bytes of before-image payload (a soft limit: protected turns stay).
    pub max_bytes: u64,
    /// Files larger than this are hashed but their bytes are not kept (gap `oversized`).
    pub max_file_bytes: u64,
}

impl Default for RetentionLimits {
    fn default() -> Self {
        RetentionLimits {
            max_turns: 100,
            max_bytes: 1 << 30,
            max_file_bytes: 32 << 20,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_values_parse() {
        let p = |t: &str| ModelSpec::parse(t).unwrap();
        assert_eq!(
            p("deepseek:deepseek-chat"),
            ModelSpec::new(Provider::DeepSeek, "deepseek-chat")
        );
        assert_eq!(p("openai:gpt-4o"), ModelSpec::new(Provider::OpenAi, "gpt-4o"));
        assert_eq!(
            p("deepseek-reasoner"),
            ModelSpec::new(Provider::DeepSeek, "deepseek-reasoner")
        );
        assert_eq!(
            p("openai:llama3:8b"),
            ModelSpec::new(Provider::OpenAi, "llama3:8b")
        );
        assert_eq!(p("demo"), ModelSpec::demo());
        assert_eq!(p("script:/tmp/s.json"), ModelSpec::script("/tmp/s.json"));
        assert_eq!(p("openai:gpt-4o").to_string(), "openai:gpt-4o");
        assert_eq!(p("demo").to_string(), "demo");
    }

    #[test]
    fn bad_model_values_say_what_to_write() {
        for (text, needle) in [
            ("", "empty"),
            ("script:", "needs a file"),
            ("openai:", "model name is missing"),
            ("llama3:8b", "unknown provider `llama3`"),
            ("gpt-4o", "did you mean openai:gpt-4o?"),
            ("o3-mini", "did you mean openai:o3-mini?"),
            ("o1", "did you mean openai:o1?"),
            ("chatgpt-4o-latest", "did you mean openai:chatgpt-4o-latest?"),
        ] {
            let msg = ModelSpec::parse(text).unwrap_err().to_string();
            assert!(msg.contains(needle), "{text}: {msg}");
        }
        // Only names that are OpenAI's are taken for a slip; with a provider anything goes.
        for ok in [
            "deepseek-chat",
            "o1x",
            "ollama",
            "deepseek:gpt-4o",
            "openai:gpt-4o",
        ] {
            assert!(ModelSpec::parse(ok).is_ok(), "{ok}");
        }
    }
}
