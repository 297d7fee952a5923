//! How a [`Service`](crate::Service) opens sessions: where the data is, which model, the shell
//! policy, retention. Everything a frontend sets is a `retrace-protocol` type or std.

use std::path::PathBuf;
use std::sync::Arc;

use std::collections::BTreeMap;

use retrace_protocol::{
    BashPolicy, CheckpointBackend, McpPermission, McpServerConfig, ModelSpec, Prices, RetentionLimits,
};

use crate::bus::EVENT_BUFFER;

/// Looks up an environment variable (API keys). Tests pass their own.
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// How to open sessions.
#[derive(Clone)]
pub struct ServiceOptions {
    /// The data root (`$RETRACE_HOME`, …; see [`DataRoot::from_env`](crate::DataRoot::from_env)).
    pub data_root: PathBuf,
    /// The model every session opened by this service uses; `None`: no model (turns and summaries
    /// fail with `model` until one is set with `SessionHandle::set_model`).
    pub model: Option<ModelSpec>,
    /// Whether the agent may run shell commands. `Ask` publishes `approval_requested` and waits for
    /// an answer from any frontend.
    pub bash: BashPolicy,
    /// Model requests per turn (SPEC §8: 50).
    pub max_steps: usize,
    /// Retention of the checkpoint store.
    pub retention: RetentionLimits,
    /// The backend of every session this service creates (an opened session keeps its own).
    pub backend: CheckpointBackend,
    /// Events kept per session for replay, and how far a subscriber may fall behind before it gets
    /// `lagged` (default [`EVENT_BUFFER`]).
    pub event_buffer: usize,
    /// Where API keys are read from (default: the process environment).
    pub env: EnvLookup,
    /// Files and directories no tool may read or write besides the data root, which never is
    /// (the config file and its directory), each with what it is, for the tool error.
    pub off_limits: Vec<(PathBuf, String)>,
    /// Whether the tools may read and write inside `.git/` (default: no).
    pub allow_git: bool,
    /// Variables holding API keys that shell commands must not see, besides the providers' own
    /// (`DEEPSEEK_API_KEY`, `OPENAI_API_KEY`) and the model's `api_key_env`, which never are.
    pub hidden_env: Vec<String>,
    /// The model's context window in tokens (`[model] context_window`); `None`: the known
    /// window of the model in use ([`retrace_model::default_context_window`]).
    pub context_window: Option<u64>,
    /// What models cost (`[prices."NAME"]`, then the prices Retrace knows): the sessions'
    /// tallies say what their requests cost with it.
    pub prices: Prices,
    /// The share of the window a request may reach before the conversation is compacted first
    /// (`[model] compact_at`, default 0.8).
    pub compact_at: f64,
    /// The MCP servers of every session (`[mcp_servers.NAME]`, SPEC §8.1), by name.
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// `[permissions] mcp`: whether an MCP tool call runs, is asked about or is refused, unless its
    /// server's config says otherwise.
    pub mcp: McpPermission,
    /// Whether anyone can answer an approval (a frontend that asks). `false` (a headless run):
    /// an MCP call that would be asked about is refused, saying why.
    pub can_ask: bool,
}

impl ServiceOptions {
    /// Defaults for a data root: no model, shell denied, 50 steps, default retention and buffer.
    pub fn new(data_root: impl Into<PathBuf>) -> ServiceOptions {
        ServiceOptions {
            data_root: data_root.into(),
            model: None,
            bash: BashPolicy::Deny,
            max_steps: 50,
            retention: RetentionLimits::default(),
            backend: CheckpointBackend::Snapshot,
            event_buffer: EVENT_BUFFER,
            env: Arc::new(|k| std::env::var(k).ok()),
            off_limits: Vec::new(),
            allow_git: false,
            hidden_env: Vec::new(),
            context_window: None,
            prices: Prices::default(),
            compact_at: retrace_model::DEFAULT_COMPACT_AT,
            mcp_servers: BTreeMap::new(),
            mcp: McpPermission::Ask,
            can_ask: true,
        }
    }
}

impl std::fmt::Debug for ServiceOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceOptions")
            .field("data_root", &self.data_root)
            .field("model", &self.model)
            .field("bash", &self.bash)
            .field("max_steps", &self.max_steps)
            .field("retention", &self.retention)
            .field("backend", &self.backend)
            .field("event_buffer", &self.event_buffer)
            .finish_non_exhaustive()
    }
}
