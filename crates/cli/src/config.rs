//! `config.toml` (SPEC §10): `[model]`, `[checkpoints]`, `[permissions]`, `[prices."NAME"]`,
//! `[mcp_servers.NAME]` (SPEC §8.1). Unknown keys are an error
//! naming the key; environment variables override the file.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use serde::Deserialize;

/// The whole file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub model: ModelSection,
    #[serde(default)]
    pub checkpoints: CheckpointsSection,
    #[serde(default)]
    pub permissions: PermissionsSection,
    /// `[prices."NAME"]`: what a model's tokens cost, by the model's name.
    #[serde(default)]
    pub prices: std::collections::BTreeMap<String, retrace_protocol::Price>,
    /// `[mcp_servers.NAME]`: the MCP servers of every session, by name.
    #[serde(default)]
    pub mcp_servers: std::collections::BTreeMap<String, retrace_protocol::McpServerConfig>,
    /// Where the config file is (or would be): off limits to the tools, with its directory.
    #[serde(skip)]
    pub path: Option<PathBuf>,
    /// Why an `[mcp_servers.NAME]` table is not valid, naming the file, if one is not: an error
    /// for the commands that start servers (`common::load_config`), a warning for the others.
    #[serde(skip)]
    pub mcp_problem: Option<String>,
    /// `RETRACE_MODEL`: the model when `--model` is not given (before `[model] name`).
    #[serde(skip)]
    pub env_model: Option<String>,
    /// `RETRACE_BASE_URL`: the endpoint of `RETRACE_MODEL`'s provider (or, without it, of
    /// `[model] name`'s), with that provider's own key variable.
    #[serde(skip)]
    pub env_base_url: Option<String>,
}

/// `[model]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSection {
    /// `deepseek-chat`, `openai:gpt-4o`, `demo`, `script:FILE`.
    pub name: Option<String>,
    /// An OpenAI-compatible endpoint.
    pub base_url: Option<String>,
    /// The variable holding the API key.
    pub api_key_env: Option<String>,
    /// The model's context window in tokens (default: the known window of the model in use).
    pub context_window: Option<u64>,
    /// The share of the window at which the conversation is compacted first (default 0.8).
    pub compact_at: Option<f64>,
    /// `[model.deepseek]`: where DeepSeek models go, whichever model is chosen.
    #[serde(default)]
    pub deepseek: ProviderSection,
    /// `[model.openai]`: where OpenAI models go, whichever model is chosen.
    #[serde(default)]
    pub openai: ProviderSection,
}

/// `[model.deepseek]`, `[model.openai]`: one provider's endpoint and key variable. A key is sent
/// only to the base URL configured beside it (or to the provider's own endpoint).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSection {
    /// An OpenAI-compatible endpoint for this provider's models.
    pub base_url: Option<String>,
    /// The variable holding this provider's key.
    pub api_key_env: Option<String>,
}

/// `[checkpoints]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointsSection {
    pub max_turns: Option<usize>,
    pub max_bytes: Option<ByteSize>,
    pub max_file_bytes: Option<ByteSize>,
    /// `snapshot` or `git`: the backend of new sessions.
    pub backend: Option<BackendSetting>,
}

/// The checkpoint backend as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendSetting {
    Snapshot,
    Git,
}

impl From<BackendSetting> for retrace_protocol::CheckpointBackend {
    fn from(b: BackendSetting) -> Self {
        match b {
            BackendSetting::Snapshot => retrace_protocol::CheckpointBackend::Snapshot,
            BackendSetting::Git => retrace_protocol::CheckpointBackend::Git,
        }
    }
}

/// `[permissions]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionsSection {
    /// `ask`, `allow` or `deny`.
    pub bash: Option<BashSetting>,
    /// `allow` lets the tools read and write inside `.git/`; `deny` (the default) refuses it.
    pub git: Option<GitSetting>,
    /// `ask` (the default), `allow` or `deny`: MCP tool calls, unless a server's config says
    /// otherwise.
    pub mcp: Option<retrace_protocol::McpPermission>,
}

/// Whether the tools may touch `.git/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GitSetting {
    Allow,
    Deny,
}

/// The shell policy as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BashSetting {
    Ask,
    Allow,
    Deny,
}

/// A size written as a number of bytes or as text (`"1GiB"`, `"32MiB"`, `"500KB"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteSize(pub u64);

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(u64),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(n) => Ok(ByteSize(n)),
            Raw::S(s) => parse_size(&s).map(ByteSize).map_err(serde::de::Error::custom),
        }
    }
}

/// Parses `"1GiB"`, `"32 MiB"`, `"500KB"`, `"1024"`.
pub fn parse_size(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a size (like 1GiB, 32MiB or 4096)"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1000,
        "kib" => 1 << 10,
        "m" | "mb" => 1_000_000,
        "mib" => 1 << 20,
        "g" | "gb" => 1_000_000_000,
        "gib" => 1 << 30,
        other => {
            return Err(format!(
                "unknown size unit `{other}` in `{s}` (use B, KiB, MiB or GiB)"
            ))
        }
    };
    n.checked_mul(mult).ok_or_else(|| format!("`{s}` is too large"))
}

/// Where the config file is: `$RETRACE_CONFIG`, else `$XDG_CONFIG_HOME/retrace/config.toml`, else
/// `~/.config/retrace/config.toml`. The flag says whether the user named it explicitly.
fn config_path(env: &dyn Fn(&str) -> Option<String>) -> Option<(PathBuf, bool)> {
    let var = |k: &str| env(k).filter(|v| !v.is_empty());
    if let Some(p) = var("RETRACE_CONFIG") {
        return Some((PathBuf::from(p), true));
    }
    if let Some(x) = var("XDG_CONFIG_HOME") {
        return Some((Path::new(&x).join("retrace/config.toml"), false));
    }
    var("HOME").map(|h| (Path::new(&h).join(".config/retrace/config.toml"), false))
}

/// The config file's text. Only a regular file is read: a FIFO or a device at the path is an error,
/// never a wait.
fn read_config(path: &std::path::Path) -> std::io::Result<String> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    std::fs::read_to_string(path)
}

/// A TOML error on one line: where (`line L, column C`) and what, as errors are printed on one
/// line (`retrace config --example` shows a valid file).
fn toml_problem(text: &str, e: &toml::de::Error) -> String {
    let what = e.message().trim().replace('\n', " ");
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("line {line}, column {column}: {what}")
        }
        None => what,
    }
}

/// The smallest `[model] context_window` accepted, in tokens.
pub const MIN_CONTEXT_WINDOW: u64 = 4096;

/// Loads the config (a missing default file is an empty config) and applies environment overrides:
/// `RETRACE_MODEL`, `RETRACE_BASE_URL`, `RETRACE_BASH`.
pub fn load(env: &dyn Fn(&str) -> Option<String>) -> Result<Config> {
    let found = config_path(env);
    let mut cfg = match &found {
        Some((path, explicit)) => match read_config(path) {
            Ok(text) => toml::from_str::<Config>(&text).map_err(|e| {
                anyhow::anyhow!(
                    "the config file `{}` is not valid: {}",
                    path.display(),
                    toml_problem(&text, &e)
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => Config::default(),
            Err(e) => bail!(
                "cannot read the config file `{}` (RETRACE_CONFIG): {e}",
                path.display()
            ),
        },
        None => Config::default(),
    };
    if let Some(w) = cfg.model.context_window {
        if w < MIN_CONTEXT_WINDOW {
            bail!(
                "the config's `[model] context_window` is {w}; a window smaller than {MIN_CONTEXT_WINDOW} tokens cannot hold the instructions, the tools and a turn: remove the key (the model's own window is used) or raise it"
            );
        }
    }
    for (name, p) in &cfg.prices {
        let prices = [
            Some(p.input_per_mtok),
            Some(p.output_per_mtok),
            p.cached_input_per_mtok,
        ];
        if prices.into_iter().flatten().any(|v| !v.is_finite() || v < 0.0) {
            bail!(
                "the config's `[prices.\"{name}\"]` has a price that is not a number of dollars per million tokens: use numbers of 0 or more"
            );
        }
    }
    if let Some(c) = cfg.model.compact_at {
        if !(0.1..=1.0).contains(&c) {
            bail!(
                "the config's `[model] compact_at` is {c:?}; it is the share of the context window at which the conversation is compacted: use a number from 0.1 to 1 (default 0.8)"
            );
        }
    }
    // Named with the file they are in, as a parse error is.
    let file = found
        .as_ref()
        .map(|(p, _)| format!("the config file `{}`", p.display()))
        .unwrap_or_else(|| "the config".to_string());
    for (name, server) in &cfg.mcp_servers {
        if cfg.mcp_problem.is_some() {
            break;
        }
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            || name.contains("__")
        {
            cfg.mcp_problem = Some(format!(
                "{file}: `[mcp_servers.{name}]`: a server's name is made of letters, digits, `-` and `_` (no `__`), as its tools are offered as `mcp__NAME__TOOL`"
            ));
        } else if let Some(why) = server.problem() {
            cfg.mcp_problem = Some(format!("{file}: `[mcp_servers.{name}]` is not valid: {why}"));
        }
    }
    cfg.path = found.map(|(p, _)| p);
    // Kept apart from the file's `[model]`: an endpoint and a key variable are used together only
    // when they come from the same place (`crate::model::model_spec`).
    cfg.env_model = env("RETRACE_MODEL").filter(|v| !v.trim().is_empty());
    cfg.env_base_url = env("RETRACE_BASE_URL").filter(|v| !v.trim().is_empty());
    if let Some(b) = env("RETRACE_BASH").filter(|v| !v.is_empty()) {
        cfg.permissions.bash = Some(match b.as_str() {
            "ask" => BashSetting::Ask,
            "allow" => BashSetting::Allow,
            "deny" => BashSetting::Deny,
            other => bail!("RETRACE_BASH is `{other}`; use ask, allow or deny"),
        });
    }
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("32 MiB"), Ok(32 << 20));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("3 parsecs").is_err());
    }

    #[test]
    fn unknown_keys_are_named() {
        let err = toml::from_str::<Config>("[model]\nnmae = \"x\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("nmae"), "{err}");
        let err = toml::from_str::<Config>("[colour]\n").unwrap_err().to_string();
        assert!(err.contains("colour"), "{err}");
        let text = "[model]\nname = \"demo\"\nnmae = \"x\"\n";
        let e = toml::from_str::<Config>(text).unwrap_err();
        let one = toml_problem(text, &e);
        assert!(one.starts_with("line 3, column 1: unknown field `nmae`"), "{one}");
        assert!(!one.contains('\n'), "{one}");
        let cfg: Config = toml::from_str(
            "[model]\nname = \"demo\"\n[checkpoints]\nmax_turns = 5\nmax_bytes = \"1GiB\"\nmax_file_bytes = 1024\n[permissions]\nbash = \"allow\"\n",
        )
        .unwrap();
        assert_eq!(cfg.checkpoints.max_bytes, Some(ByteSize(1 << 30)));
        assert_eq!(cfg.permissions.bash, Some(BashSetting::Allow));
    }

    #[test]
    fn mcp_servers_in_the_shape_codex_users_know() {
        let cfg: Config = toml::from_str(
            "[permissions]\nmcp = \"allow\"\n[mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"x\"]\nenv = { A = \"1\" }\ncwd = \"sub\"\nstartup_timeout_ms = 500\npermission = \"ask\"\ntool_permissions = { write_file = \"deny\" }\n[mcp_servers.web]\nurl = \"http://localhost:1/mcp\"\nbearer_token_env = \"T\"\nenabled = false\ntool_timeout_ms = 9\n",
        )
        .unwrap();
        assert_eq!(cfg.permissions.mcp, Some(retrace_protocol::McpPermission::Allow));
        let fs = &cfg.mcp_servers["fs"];
        assert_eq!(fs.args, ["-y", "x"]);
        assert_eq!(
            fs.permission_of("write_file", retrace_protocol::McpPermission::Allow),
            retrace_protocol::McpPermission::Deny
        );
        assert!(!cfg.mcp_servers["web"].is_enabled());
        let err = toml::from_str::<Config>(
            "[mcp_servers.x]
comand = \"y\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("comand"), "{err}");
    }

    #[test]
    fn prices_by_model_name() {
        let cfg: Config = toml::from_str(
            "[prices.\"gpt-4o\"]\ninput_per_mtok = 2.5\noutput_per_mtok = 10\n[prices.local]\ninput_per_mtok = 0\noutput_per_mtok = 0\ncached_input_per_mtok = 0\n",
        )
        .unwrap();
        assert_eq!(cfg.prices["gpt-4o"].output_per_mtok, 10.0);
        assert_eq!(cfg.prices["gpt-4o"].cached_input_per_mtok, None);
        assert_eq!(cfg.prices["local"].cached_input_per_mtok, Some(0.0));
        let err = toml::from_str::<Config>("[prices.x]\ninput_per_mtok = 1\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("output_per_mtok"), "{err}");
    }
}
