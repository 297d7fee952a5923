//! MCP servers (SPEC §8.1): how one is configured (`[mcp_servers.NAME]` in `config.toml`), and
//! what `retrace mcp list` and the frontends show of each.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The startup timeout of a server whose config gives none, in milliseconds.
pub const DEFAULT_MCP_STARTUP_TIMEOUT_MS: u64 = 10_000;
/// The timeout of one tool call when the server's config gives none, in milliseconds.
pub const DEFAULT_MCP_TOOL_TIMEOUT_MS: u64 = 60_000;

/// One `[mcp_servers.NAME]` table: a stdio server (`command`, `args`, `env`, `cwd`) or a
/// streamable HTTP one (`url`, `bearer_token_env`), and how its calls are allowed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// The program of a stdio server (found on `PATH` when it has no slash).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Variables set for it, besides Retrace's own environment (less the API keys).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Where it runs (default: the workspace root; a relative path is under it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// The endpoint of a streamable HTTP server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The variable holding the bearer token sent to `url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token_env: Option<String>,
    /// `false`: the server is never started and its tools are not offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// How long it may take to start and list its tools (default 10 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_timeout_ms: Option<u64>,
    /// How long one tool call may take (default 60 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_timeout_ms: Option<u64>,
    /// Overrides `[permissions] mcp` for this server's tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission: Option<McpPermission>,
    /// Overrides the server's permission for single tools, by the server's name of the tool.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tool_permissions: BTreeMap<String, McpPermission>,
    /// Tools the user vouches change nothing (the server's name of each, or its full name
    /// `mcp__SERVER__TOOL`): offered in plan mode, and their calls are no gap in the snapshot
    /// backend. A server's own `readOnlyHint` is never enough (SPEC §8.1).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_only_tools: Vec<String>,
    /// `true`: the user trusts this server's `readOnlyHint` marks, as if each tool it marks
    /// read-only were in `read_only_tools`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust_read_only_hints: Option<bool>,
}

impl McpServerConfig {
    /// Whether it is started at all.
    pub fn is_enabled(&self) -> bool {
        self.enabled.unwrap_or(true)
    }

    /// What is wrong with it: neither or both of `command` and `url`, an empty `command`, a
    /// timeout of 0, or keys of the other kind.
    pub fn problem(&self) -> Option<String> {
        if self.command.as_deref().is_some_and(|c| c.trim().is_empty()) {
            return Some("`command` is empty: give the server's program".into());
        }
        if self.startup_timeout_ms == Some(0) {
            return Some("`startup_timeout_ms` is 0: no server starts in no time (default 10000)".into());
        }
        if self.tool_timeout_ms == Some(0) {
            return Some("`tool_timeout_ms` is 0: no call ends in no time (default 60000)".into());
        }
        match (&self.command, &self.url) {
            (None, None) => {
                Some("give `command` (a stdio server) or `url` (a streamable HTTP server)".into())
            }
            (Some(_), Some(_)) => Some("give `command` or `url`, not both".into()),
            (Some(_), None) if self.bearer_token_env.is_some() => {
                Some("`bearer_token_env` is for a `url` server".into())
            }
            (None, Some(_)) if !self.args.is_empty() || !self.env.is_empty() || self.cwd.is_some() => {
                Some("`args`, `env` and `cwd` are for a `command` server".into())
            }
            (None, Some(u)) if !is_http_url(u) => Some(format!(
                "`url` must start with http:// or https:// (it is `{}`)",
                shown_url(u)
            )),
            _ => None,
        }
    }

    /// Whether the user vouches that `tool` (the server's name of it) of the server `server`
    /// changes nothing: it is in `read_only_tools` (by either name), or the server marks it
    /// read-only (`hinted`) and `trust_read_only_hints` is on.
    pub fn vouches_read_only(&self, server: &str, tool: &str, hinted: bool) -> bool {
        let full = format!("mcp__{server}__{tool}");
        self.read_only_tools.iter().any(|t| t == tool || *t == full)
            || (hinted && self.trust_read_only_hints == Some(true))
    }

    /// The permission of a call of `tool` (the server's name of it) under the default `all`.
    pub fn permission_of(&self, tool: &str, all: McpPermission) -> McpPermission {
        self.tool_permissions
            .get(tool)
            .copied()
            .or(self.permission)
            .unwrap_or(all)
    }
}

/// Whether an MCP tool call runs: `[permissions] mcp`, a server's `permission`, a tool's entry in
/// `tool_permissions`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpPermission {
    /// Each call waits for an answer to its `approval_requested` event (the default).
    #[default]
    Ask,
    /// Every call runs.
    Allow,
    /// No call runs.
    Deny,
}

/// A server as `retrace mcp list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServerStatus {
    /// Its name in the config (`[mcp_servers.NAME]`).
    pub server: String,
    /// `ready`, `failed`, `disabled` or `not_started`.
    pub status: McpStatus,
    /// Why it failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Its tools, as the server names them (offered to the model as `mcp__SERVER__TOOL`).
    pub tools: Vec<McpToolInfo>,
    /// Its prompts, as the server names them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<McpPromptInfo>,
}

/// A server's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpStatus {
    /// Started; its tools are offered.
    Ready,
    /// It did not start (or stopped and could not be started again).
    Failed,
    /// `enabled = false`.
    Disabled,
    /// Not started yet (servers start when a session first needs them).
    NotStarted,
}

impl McpStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            McpStatus::Ready => "ready",
            McpStatus::Failed => "failed",
            McpStatus::Disabled => "disabled",
            McpStatus::NotStarted => "not_started",
        }
    }
}

/// One tool of a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpToolInfo {
    /// The server's name of it.
    pub name: String,
    /// What it does, as the server says.
    #[serde(default)]
    pub description: String,
    /// The server marks it read-only (`readOnlyHint`): its own claim, unchecked.
    pub read_only: bool,
    /// The config vouches that it changes nothing (`read_only_tools`, or
    /// `trust_read_only_hints` and the server's mark): offered in plan mode, its calls no gap.
    #[serde(default)]
    pub vouched_read_only: bool,
    /// Why it is not offered to the model, when it is not (its name, its schema, a name another
    /// tool has, the server's limit on tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out: Option<String>,
}

impl McpToolInfo {
    /// What every frontend says after the tool's name: whether it is left out and why, or
    /// read-only and on whose word (empty for a tool that is neither).
    pub fn mark(&self) -> String {
        match (&self.left_out, self.vouched_read_only, self.read_only) {
            (Some(why), _, _) => format!(" (left out: {why})"),
            (None, true, _) => " (read-only)".to_string(),
            (None, false, true) => " (read-only by the server's word, not vouched for)".to_string(),
            (None, false, false) => String::new(),
        }
    }
}

/// One prompt of a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpPromptInfo {
    /// The server's name of it (`/SERVER:PROMPT` in the terminal UI).
    pub name: String,
    /// What it is for.
    #[serde(default)]
    pub description: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permissions_override_from_tool_to_server_to_all() {
        let mut c = McpServerConfig {
            command: Some("x".into()),
            ..Default::default()
        };
        assert_eq!(c.permission_of("t", McpPermission::Ask), McpPermission::Ask);
        c.permission = Some(McpPermission::Allow);
        assert_eq!(c.permission_of("t", McpPermission::Deny), McpPermission::Allow);
        c.tool_permissions.insert("t".into(), McpPermission::Deny);
        assert_eq!(c.permission_of("t", McpPermission::Allow), McpPermission::Deny);
        assert_eq!(c.permission_of("u", McpPermission::Ask), McpPermission::Allow);
    }

    #[test]
    fn a_tool_is_read_only_when_the_user_vouches_for_it() {
        let mut c = McpServerConfig {
            command: Some("x".into()),
            read_only_tools: vec!["search".into(), "mcp__s__fetch".into()],
            ..Default::default()
        };
        assert!(c.vouches_read_only("s", "search", false));
        assert!(c.vouches_read_only("s", "fetch", false));
        assert!(
            !c.vouches_read_only("s", "list", true),
            "the server's claim alone"
        );
        c.trust_read_only_hints = Some(true);
        assert!(c.vouches_read_only("s", "list", true));
        assert!(!c.vouches_read_only("s", "write", false));
    }

    #[test]
    fn problems() {
        assert!(McpServerConfig::default().problem().is_some());
        let http = McpServerConfig {
            url: Some("ftp://x".into()),
            ..Default::default()
        };
        assert!(http.problem().is_some_and(|p| p.contains("http")));
        let both = McpServerConfig {
            url: Some("http://x".into()),
            command: Some("x".into()),
            ..Default::default()
        };
        assert!(both.problem().is_some());
        let empty = McpServerConfig {
            command: Some(" ".into()),
            ..Default::default()
        };
        assert!(empty.problem().is_some_and(|p| p.contains("`command` is empty")));
        let zero = McpServerConfig {
            command: Some("x".into()),
            startup_timeout_ms: Some(0),
            ..Default::default()
        };
        assert!(zero
            .problem()
            .is_some_and(|p| p.contains("`startup_timeout_ms` is 0")));
    }

    /// Found by a third attack: a refused URL was quoted whole, its password with it; an
    /// upper-case scheme, which is valid, was refused.
    #[test]
    fn a_refused_url_is_quoted_without_its_secrets_and_the_schemes_case_does_not_matter() {
        let with = |url: &str| McpServerConfig {
            url: Some(url.into()),
            ..McpServerConfig::default()
        };
        for bad in [" http://me:hunter2@host/x", "ftp://me:hunter2@host/x?key=hunter2"] {
            let p = with(bad).problem().unwrap();
            assert!(
                p.contains("must start with http://") && !p.contains("hunter2"),
                "{p}"
            );
        }
        assert_eq!(with("HTTP://host/mcp").problem(), None);
        assert_eq!(with("Https://host/mcp").problem(), None);
    }
}

/// Whether `url` names an HTTP server: it starts with `http://` or `https://`, in any case.
fn is_http_url(url: &str) -> bool {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// A server's URL as `config` shows it: a password or token in it (`user:secret@`, a query)
/// left out.
pub fn shown_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let (host_path, query) = match rest.split_once(['?', '#']) {
        Some((h, _)) => (h, "?…"),
        None => (rest, ""),
    };
    let (authority, path) = host_path.split_once('/').map_or((host_path, ""), |(a, p)| (a, p));
    let authority = match authority.rsplit_once('@') {
        Some((_, host)) => format!("…@{host}"),
        None => authority.to_string(),
    };
    let path = if path.is_empty() && !host_path.contains('/') {
        String::new()
    } else {
        format!("/{path}")
    };
    let scheme = if scheme.is_empty() {
        String::new()
    } else {
        format!("{scheme}://")
    };
    format!("{scheme}{authority}{path}{query}")
}

/// `text` (an error's words) with every `http://` or `https://` URL in it shown as
/// [`shown_url`] shows it: a password or token in a server's URL never reaches a message.
pub fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = ["http://", "https://"].iter().filter_map(|s| rest.find(s)).min() {
        out.push_str(&rest[..at]);
        let url = &rest[at..];
        let end = url
            .find(|c: char| c.is_whitespace() || matches!(c, ')' | ']' | '"' | '\'' | '>' | '`' | ','))
            .unwrap_or(url.len());
        out.push_str(&shown_url(&url[..end]));
        rest = &url[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod url_tests {
    use super::*;

    #[test]
    fn urls_in_an_error_lose_their_secrets() {
        assert_eq!(
            redact_urls(
                "error sending request for url (http://127.0.0.1:9/mcp?token=QUERYSECRET#frag): refused"
            ),
            "error sending request for url (http://127.0.0.1:9/mcp?…): refused"
        );
        assert_eq!(
            redact_urls("to https://me:pw@host/x and http://plain/y"),
            "to https://…@host/x and http://plain/y"
        );
        assert_eq!(redact_urls("no url here"), "no url here");
    }
}
