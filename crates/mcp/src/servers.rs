//! The servers of one session: each started when the session first needs it, its tools offered
//! as `mcp__SERVER__TOOL`; a server that stopped is started again at its next call, one that did
//! not start is reported once and left out.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use retrace_protocol::{
    McpPermission, McpPromptInfo, McpServerConfig, DEFAULT_MCP_STARTUP_TIMEOUT_MS,
    DEFAULT_MCP_TOOL_TIMEOUT_MS,
};
use rmcp::model::Tool;
use tokio::sync::Mutex;

use crate::catalog::{Catalog, LeftOut, Listing, McpTool};
use crate::conn::{Called, Conn, GaveUp, Launch};
use crate::error::{CallEnd, McpError, Result};
use crate::listing::Skipped;
use crate::result::{output_of, McpOutput};
use crate::EnvLookup;

/// Where one server stands.
pub(crate) enum State {
    /// Not started yet.
    Idle,
    /// Running.
    Ready(Box<Conn>),
    /// It stopped; started again at the next call. Its tools are still offered.
    Stopped,
    /// It did not start; why.
    Failed(String),
}

/// What a server offered when it last started.
#[derive(Default)]
pub(crate) struct Offered {
    pub(crate) tools: Vec<Tool>,
    pub(crate) skipped: Vec<Skipped>,
    pub(crate) prompts: Vec<McpPromptInfo>,
    /// It declared resources.
    pub(crate) resources: bool,
}

/// One configured server.
pub(crate) struct Slot {
    pub(crate) name: String,
    pub(crate) config: McpServerConfig,
    pub(crate) state: Mutex<State>,
    /// What it offered when it last started (kept while it is stopped).
    pub(crate) offered: std::sync::Mutex<Offered>,
}

/// The MCP servers of a session. Dropping it stops every server it started (their process groups
/// are killed).
pub struct McpServers {
    pub(crate) slots: Vec<Slot>,
    root: PathBuf,
    hidden_env: Vec<String>,
    env: EnvLookup,
    /// `[permissions] mcp`.
    permission: McpPermission,
    /// What is offered, made when first needed after a server started.
    catalog: std::sync::Mutex<Option<Arc<Catalog>>>,
}

impl std::fmt::Debug for McpServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.slots.iter().map(|s| s.name.as_str()).collect();
        f.debug_struct("McpServers").field("servers", &names).finish()
    }
}

impl McpServers {
    /// The servers of `configs` (by name), for a session on the workspace `root`; none is started
    /// yet. `hidden_env` names variables no server process sees; `env` is where
    /// `bearer_token_env` is looked up; `permission` is `[permissions] mcp`.
    pub fn new(
        configs: BTreeMap<String, McpServerConfig>,
        root: PathBuf,
        hidden_env: Vec<String>,
        env: EnvLookup,
        permission: McpPermission,
    ) -> McpServers {
        let slots = configs
            .into_iter()
            .map(|(name, config)| Slot {
                name,
                config,
                state: Mutex::new(State::Idle),
                offered: std::sync::Mutex::new(Offered::default()),
            })
            .collect();
        McpServers {
            slots,
            root,
            hidden_env,
            env,
            permission,
            catalog: std::sync::Mutex::new(None),
        }
    }

    /// Whether no server is configured.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    pub(crate) fn slot(&self, server: &str) -> Result<&Slot> {
        self.slots
            .iter()
            .find(|s| s.name == server)
            .ok_or_else(|| McpError::NoServer(server.to_string()))
    }

    fn launch<'a>(&'a self, slot: &'a Slot) -> Launch<'a> {
        Launch {
            name: &slot.name,
            config: &slot.config,
            root: &self.root,
            hidden_env: &self.hidden_env,
            env: &self.env,
        }
    }

    /// Starts `slot` now; its state says how it went.
    async fn start(&self, slot: &Slot, state: &mut State) -> Result<()> {
        let timeout = Duration::from_millis(
            slot.config
                .startup_timeout_ms
                .unwrap_or(DEFAULT_MCP_STARTUP_TIMEOUT_MS),
        );
        match Conn::start(&self.launch(slot), timeout).await {
            Ok(conn) => {
                if let Ok(mut o) = slot.offered.lock() {
                    *o = Offered {
                        tools: conn.tools.clone(),
                        skipped: conn.skipped.clone(),
                        prompts: conn
                            .prompts
                            .iter()
                            .map(|p| McpPromptInfo {
                                name: p.name.clone(),
                                description: p.description.clone().unwrap_or_default(),
                            })
                            .collect(),
                        resources: conn.resources,
                    };
                }
                if let Ok(mut c) = self.catalog.lock() {
                    *c = None;
                }
                *state = State::Ready(Box::new(conn));
                Ok(())
            }
            Err(e) => {
                *state = State::Failed(e.to_string());
                Err(e)
            }
        }
    }

    /// Starts every enabled server that was never started (all at once). Returns the errors of
    /// those that did not start now: each is reported once, and its tools are left out.
    pub async fn start_all(&self) -> Vec<McpError> {
        let starts = self
            .slots
            .iter()
            .filter(|s| s.config.is_enabled())
            .map(|slot| async move {
                let mut state = slot.state.lock().await;
                match *state {
                    State::Idle => self.start(slot, &mut state).await.err(),
                    _ => None,
                }
            });
        futures_util::future::join_all(starts)
            .await
            .into_iter()
            .flatten()
            .collect()
    }

    /// The catalog of what the servers that started offer (made again after a server started).
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        let Ok(mut cached) = self.catalog.lock() else {
            return Arc::default();
        };
        if let Some(c) = cached.as_ref() {
            return c.clone();
        }
        let offered: Vec<_> = self.slots.iter().map(|s| s.offered.lock()).collect();
        let listings: Vec<Listing<'_>> = self
            .slots
            .iter()
            .zip(&offered)
            .filter_map(|(slot, o)| {
                let o = o.as_ref().ok()?;
                Some(Listing {
                    server: &slot.name,
                    config: &slot.config,
                    tools: &o.tools,
                    skipped: &o.skipped,
                })
            })
            .collect();
        let catalog = Arc::new(Catalog::of(&listings));
        *cached = Some(catalog.clone());
        catalog
    }

    /// The tools of the servers that started, as offered to the model (those left out are not:
    /// [`McpServers::left_out`]).
    pub fn tools(&self) -> Vec<McpTool> {
        self.catalog().offered.clone()
    }

    /// The tool offered as `qualified` (never one left out).
    pub fn tool(&self, qualified: &str) -> Option<McpTool> {
        self.catalog()
            .offered
            .iter()
            .find(|t| t.qualified == qualified)
            .cloned()
    }

    /// The tools the servers listed that are not offered, with why.
    pub fn left_out(&self) -> Vec<LeftOut> {
        self.catalog().left_out.clone()
    }

    /// What is left out, in words: one line per server that has tools left out.
    pub fn left_out_notices(&self) -> Vec<String> {
        self.catalog().notices()
    }

    /// The names in a server's `tool_permissions` or `read_only_tools` that match no tool it
    /// lists, in words (a line per server): what `retrace mcp list` adds to its listing.
    pub fn config_notices(&self) -> Vec<String> {
        self.catalog().unmatched.clone()
    }

    /// The config of `server`, if it is configured.
    pub(crate) fn config_of(&self, server: &str) -> Option<&McpServerConfig> {
        self.slot(server).ok().map(|s| &s.config)
    }

    /// `[permissions] mcp`.
    pub(crate) fn default_permission(&self) -> McpPermission {
        self.permission
    }

    /// Whether the config vouches for the resources of `server` as read-only
    /// (`trust_read_only_hints = true`): reading them is then no gap, and plan mode offers them.
    pub fn vouches_for_resources(&self, server: &str) -> bool {
        self.slot(server)
            .is_ok_and(|s| s.config.trust_read_only_hints == Some(true))
    }

    /// Whether `server` offers resources: it started (when it last did) declaring them. A
    /// resource request goes to no other server (it would ask nothing, and be no gap).
    pub fn offers_resources(&self, server: &str) -> bool {
        self.slot(server)
            .is_ok_and(|s| s.offered.lock().is_ok_and(|o| o.resources))
    }

    /// Whether `server` is configured.
    pub fn has_server(&self, server: &str) -> bool {
        self.slot(server).is_ok()
    }

    /// The enabled servers, by name: those whose resources may be listed.
    pub fn enabled(&self) -> Vec<String> {
        self.slots
            .iter()
            .filter(|s| s.config.is_enabled())
            .map(|s| s.name.clone())
            .collect()
    }

    /// Whether the server of `slot` is denied as a whole (its `permission`, else `[permissions]
    /// mcp`): its resources are then neither listed nor read.
    pub(crate) fn denied(&self, slot: &Slot) -> bool {
        self.decide_server(&slot.name).permission == McpPermission::Deny
    }

    /// A running connection to `slot`: started again when it stopped.
    pub(crate) async fn ready<'s>(&self, slot: &'s Slot, state: &'s mut State) -> Result<&'s mut Conn> {
        if !slot.config.is_enabled() {
            return Err(McpError::Disabled(slot.name.clone()));
        }
        if let State::Ready(conn) = state {
            if conn.gone().is_some() {
                *state = State::Stopped;
            }
        }
        match state {
            // Reported when it failed; not tried again in this session.
            State::Failed(why) => {
                return Err(McpError::Unavailable {
                    server: slot.name.clone(),
                    why: why.clone(),
                })
            }
            State::Idle | State::Stopped => self.start(slot, state).await?,
            State::Ready(_) => {}
        }
        match state {
            State::Ready(conn) => Ok(conn),
            _ => Err(McpError::Start {
                server: slot.name.clone(),
                why: "it is not running".into(),
            }),
        }
    }

    /// Calls `tool` of `server` with `args` (a JSON object), starting the server first if it
    /// stopped; the result is capped at `cap` bytes. A server that stops during the call is
    /// marked stopped (started again at the next call).
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        args: serde_json::Map<String, serde_json::Value>,
        cap: usize,
    ) -> Result<McpOutput> {
        self.call_until(server, tool, args, cap, std::future::pending())
            .await
    }

    /// [`McpServers::call`], given up when `cancelled` completes as when it runs past
    /// `tool_timeout_ms`: the server is told to cancel the call, and one that does not answer it
    /// within a second is stopped (a stdio server's processes killed and waited for; it is
    /// started again at its next call), so that nothing of the call runs once this returns,
    /// except on a server over HTTP, which cannot be stopped ([`McpError::left_running`]).
    pub async fn call_until(
        &self,
        server: &str,
        tool: &str,
        args: serde_json::Map<String, serde_json::Value>,
        cap: usize,
        cancelled: impl std::future::Future<Output = ()>,
    ) -> Result<McpOutput> {
        crate::watchdog::ensure();
        let slot = self.slot(server)?;
        let mut state = slot.state.lock().await;
        let conn = self.ready(slot, &mut state).await?;
        if !conn.tools.iter().any(|t| t.name == tool) {
            return Err(McpError::NoTool {
                server: server.to_string(),
                tool: tool.to_string(),
            });
        }
        // A tool left out is not offered, and cannot be called either.
        let catalog = self.catalog();
        if !catalog
            .offered
            .iter()
            .any(|t| t.server == server && t.tool == tool)
        {
            let why = catalog
                .left_out
                .iter()
                .find(|l| l.server == server && l.tool == tool)
                .map(|l| l.why.clone())
                .unwrap_or_else(|| "it is not offered".to_string());
            return Err(McpError::LeftOut {
                server: server.to_string(),
                tool: tool.to_string(),
                why,
            });
        }
        let ms = slot.config.tool_timeout_ms.unwrap_or(DEFAULT_MCP_TOOL_TIMEOUT_MS);
        match conn
            .call(server, tool, args, Duration::from_millis(ms), cancelled)
            .await
        {
            Called::Answered(Ok(r)) => Ok(output_of(&r, cap)),
            Called::Answered(Err(e @ (McpError::Died { .. } | McpError::TooLarge { .. }))) => {
                *state = State::Stopped;
                Err(e)
            }
            Called::Answered(Err(e)) => Err(e),
            Called::GaveUp { why, settled } => {
                // An answer to the cancel is the server's word, not proof that nothing of the
                // call still runs: a stdio server is stopped either way (started again at its
                // next call). A server over HTTP cannot be stopped: it is believed when it
                // answered, and its session closed when it did not.
                let end = match std::mem::replace(&mut *state, State::Stopped) {
                    State::Ready(conn) if conn.pid().is_some() => {
                        let stopped = conn.stop().await;
                        if settled {
                            CallEnd::AnsweredStopped
                        } else {
                            stopped
                        }
                    }
                    State::Ready(conn) if settled => {
                        *state = State::Ready(conn);
                        CallEnd::Settled
                    }
                    State::Ready(conn) => conn.stop().await,
                    other => {
                        *state = other;
                        CallEnd::Stopped
                    }
                };
                let (server, tool) = (server.to_string(), tool.to_string());
                Err(match why {
                    GaveUp::Timeout => McpError::CallTimeout {
                        server,
                        tool,
                        ms,
                        end,
                    },
                    GaveUp::Cancelled => McpError::Cancelled { server, tool, end },
                })
            }
        }
    }

    /// The process id of `server`'s process while it runs (a stdio server), for tests and
    /// diagnostics.
    pub async fn pid(&self, server: &str) -> Option<u32> {
        let slot = self.slot(server).ok()?;
        let state = slot.state.lock().await;
        match &*state {
            State::Ready(c) => c.pid(),
            _ => None,
        }
    }
}
