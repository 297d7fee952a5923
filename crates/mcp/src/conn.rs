//! One connection to one server: started (a stdio server's process, or a streamable HTTP
//! session), initialized, its tools and prompts listed; requests with a timeout; whether it is
//! still alive.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use retrace_protocol::McpServerConfig;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientInfo, ClientNotification, ClientRequest,
    CustomNotification, Implementation, Prompt, ServerResult, Tool,
};
use rmcp::service::{PeerRequestOptions, RequestHandle, RoleClient, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;

use crate::cap::{CappedLines, Tripwire, MAX_MESSAGE_BYTES};
use crate::error::{CallEnd, McpError, Result};
use crate::http::CappedClient;
use crate::listing::{list_tools, Skipped};
use crate::spawn::{command_for, program_problem, ServerProcess};
use crate::EnvLookup;

/// How long a server told to cancel a call has to answer it before it is stopped.
pub(crate) const CANCEL_GRACE: Duration = Duration::from_secs(1);

/// Why a call was given up before its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GaveUp {
    /// Past its `tool_timeout_ms`.
    Timeout,
    /// Cancelled by the user.
    Cancelled,
}

/// How a call ended.
pub(crate) enum Called {
    /// With the server's answer (or an error saying why there is none).
    Answered(Result<CallToolResult>),
    /// Given up: the server was told to cancel it; `settled` when it answered it then.
    GaveUp { why: GaveUp, settled: bool },
}

/// A live connection.
pub(crate) struct Conn {
    service: RunningService<RoleClient, ClientInfo>,
    /// The process of a stdio server (killed, with its group, when the connection is dropped).
    process: Option<ServerProcess>,
    /// Its tools, as listed when it started.
    pub(crate) tools: Vec<Tool>,
    /// The tools it listed that could not be read, with why.
    pub(crate) skipped: Vec<Skipped>,
    /// Its prompts (none when it offers none).
    pub(crate) prompts: Vec<Prompt>,
    /// Whether it offers resources.
    pub(crate) resources: bool,
    /// Tripped once it sent a message past the cap.
    wire: Arc<Tripwire>,
}

/// Where and how a server is started.
pub(crate) struct Launch<'a> {
    pub(crate) name: &'a str,
    pub(crate) config: &'a McpServerConfig,
    /// The workspace root (a stdio server's default directory).
    pub(crate) root: &'a Path,
    /// Variables the server's process must not see (API keys).
    pub(crate) hidden_env: &'a [String],
    pub(crate) env: &'a EnvLookup,
}

/// The longest a start waits for a server's prompts (a server that never lists them still
/// offers its tools).
const PROMPTS_WAIT: Duration = Duration::from_secs(5);

/// Who Retrace says it is.
fn client_info() -> ClientInfo {
    ClientInfo {
        client_info: Implementation {
            name: "retrace".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            ..Implementation::default()
        },
        ..ClientInfo::default()
    }
}

impl Conn {
    /// Starts the server and lists what it offers, within its startup timeout.
    pub(crate) async fn start(l: &Launch<'_>, timeout: Duration) -> Result<Conn> {
        let server = l.name.to_string();
        if let Some(why) = l.config.problem() {
            return Err(McpError::Config { server, why });
        }
        let mut process = None;
        let deadline = tokio::time::Instant::now() + timeout;
        let started = tokio::time::timeout_at(deadline, Conn::connect(l, &mut process, deadline)).await;
        match started {
            Ok(r) => r,
            Err(_) => {
                let stderr = process
                    .as_ref()
                    .map(ServerProcess::stderr_tail)
                    .filter(|t| !t.is_empty())
                    .map(|t| format!("; it said on stderr: {t}"))
                    .unwrap_or_default();
                Err(McpError::StartTimeout {
                    server,
                    ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                    stderr,
                })
            }
        }
    }

    /// Connects, initializes and lists what the server offers; `deadline` is when its start is
    /// given up.
    async fn connect(
        l: &Launch<'_>,
        slot: &mut Option<ServerProcess>,
        deadline: tokio::time::Instant,
    ) -> Result<Conn> {
        let server = l.name.to_string();
        let wire = Arc::new(Tripwire::default());
        let start_error = |why: String, p: &mut Option<ServerProcess>| {
            let mut why = match wire.is_tripped() {
                true => format!(
                    "it sent a message of more than {} MiB, the most Retrace takes from a server",
                    MAX_MESSAGE_BYTES >> 20
                ),
                false => why,
            };
            if let Some(p) = p.as_mut() {
                if let Some(end) = p.exited() {
                    why.push_str(&format!(" (the server {end})"));
                }
                let tail = p.stderr_tail();
                if !tail.is_empty() {
                    why.push_str(&format!("; it said on stderr: {tail}"));
                }
            }
            McpError::Start {
                server: server.clone(),
                why,
            }
        };
        let service = match (&l.config.command, &l.config.url) {
            (Some(program), _) => {
                let cwd = match &l.config.cwd {
                    Some(c) => l.root.join(c),
                    None => l.root.to_path_buf(),
                };
                let path = match l.config.env.get("PATH") {
                    Some(p) => Some(std::ffi::OsString::from(p)),
                    None => std::env::var_os("PATH"),
                };
                if !cwd.is_dir() {
                    return Err(McpError::Start {
                        server,
                        why: format!("its directory `{}` (`cwd`) does not exist", cwd.display()),
                    });
                }
                if let Some(why) = program_problem(program, &cwd, path.as_deref()) {
                    return Err(McpError::Start { server, why });
                }
                let mut cmd = command_for(program, &l.config.args, &cwd);
                for name in l.hidden_env {
                    cmd.env_remove(name);
                }
                cmd.envs(&l.config.env);
                let (mut process, stdout, stdin) =
                    ServerProcess::start(cmd).map_err(|source| McpError::Spawn {
                        server: server.clone(),
                        command: program.clone(),
                        source,
                    })?;
                process.hide(l.config.env.values().cloned());
                *slot = Some(process);
                let io = (
                    tokio::process::ChildStdout::from_std(stdout),
                    tokio::process::ChildStdin::from_std(stdin),
                );
                let (out, inp) = match io {
                    (Ok(o), Ok(i)) => (CappedLines::new(o, MAX_MESSAGE_BYTES, wire.clone()), i),
                    (Err(e), _) | (_, Err(e)) => {
                        return Err(start_error(
                            retrace_protocol::mcp::redact_urls(&e.to_string()),
                            slot,
                        ))
                    }
                };
                client_info()
                    .serve((out, inp))
                    .await
                    .map_err(|e| start_error(init_failure(&e), slot))?
            }
            (None, Some(url)) => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                if let Some(var) = &l.config.bearer_token_env {
                    let token = (l.env)(var)
                        .filter(|t| !t.is_empty())
                        .ok_or_else(|| McpError::Config {
                            server: server.clone(),
                            why: format!("the variable `{var}` (`bearer_token_env`) is not set"),
                        })?;
                    config = config.auth_header(token);
                }
                let client = CappedClient::new(reqwest::Client::new(), MAX_MESSAGE_BYTES, wire.clone());
                let transport = StreamableHttpClientTransport::with_client(client, config);
                client_info()
                    .serve(transport)
                    .await
                    .map_err(|e| start_error(init_failure(&e), slot))?
            }
            (None, None) => {
                return Err(McpError::Config {
                    server,
                    why: "give `command` or `url`".into(),
                })
            }
        };
        let caps = service
            .peer_info()
            .map(|i| i.capabilities.clone())
            .unwrap_or_default();
        let (tools, skipped) = match caps.tools {
            Some(_) => list_tools(service.peer())
                .await
                .map_err(|e| start_error(format!("listing its tools failed: {e}"), slot))?,
            None => (Vec::new(), Vec::new()),
        };
        let prompts = match caps.prompts {
            // A server whose prompts cannot be listed (an error, or no answer within the start's
            // time, and never past [`PROMPTS_WAIT`]) still offers its tools.
            Some(_) => {
                let left = deadline
                    .saturating_duration_since(tokio::time::Instant::now())
                    .saturating_sub(Duration::from_millis(100))
                    .min(PROMPTS_WAIT);
                tokio::time::timeout(left, service.list_all_prompts())
                    .await
                    .ok()
                    .and_then(std::result::Result::ok)
                    .unwrap_or_default()
            }
            None => Vec::new(),
        };
        Ok(Conn {
            service,
            process: slot.take(),
            tools,
            skipped,
            prompts,
            resources: caps.resources.is_some(),
            wire,
        })
    }

    /// Why it is no longer usable, if it is not: its process ended or the connection closed.
    pub(crate) fn gone(&mut self) -> Option<String> {
        if self.wire.is_tripped() {
            return Some("it sent a message past the size Retrace takes".to_string());
        }
        if let Some(end) = self.process.as_mut().and_then(ServerProcess::exited) {
            return Some(end);
        }
        self.service
            .is_closed()
            .then(|| "the connection closed".to_string())
    }

    /// The process id of a stdio server.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.process.as_ref().and_then(ServerProcess::pid)
    }

    /// The peer, for requests.
    pub(crate) fn peer(&self) -> &rmcp::Peer<RoleClient> {
        self.service.peer()
    }

    /// Calls `tool` with `args` (a JSON object), giving up past `timeout` or when `cancelled`
    /// completes: the server is then told to cancel the call (`notifications/cancelled`), and
    /// given [`CANCEL_GRACE`] to answer it.
    pub(crate) async fn call(
        &mut self,
        server: &str,
        tool: &str,
        args: serde_json::Map<String, serde_json::Value>,
        timeout: Duration,
        cancelled: impl std::future::Future<Output = ()>,
    ) -> Called {
        let request = ClientRequest::CallToolRequest(CallToolRequest {
            method: Default::default(),
            params: CallToolRequestParams {
                meta: None,
                name: tool.to_string().into(),
                arguments: Some(args),
                task: None,
            },
            extensions: Default::default(),
        });
        let handle = match self
            .service
            .peer()
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(h) => h,
            Err(e) => return Called::Answered(Err(self.request_error(server, e).await)),
        };
        let RequestHandle { mut rx, id, .. } = handle;
        let why = tokio::select! {
            answer = &mut rx => {
                let answer = answer.unwrap_or(Err(ServiceError::TransportClosed));
                return Called::Answered(match answer {
                    Ok(ServerResult::CallToolResult(r)) => Ok(r),
                    Ok(_) => Err(McpError::Refused {
                        server: server.to_string(),
                        message: "it answered the call with something that is not a tool's result".to_string(),
                    }),
                    Err(e) => Err(self.request_error(server, e).await),
                });
            }
            _ = self.wire.tripped() => {
                return Called::Answered(Err(McpError::TooLarge {
                    server: server.to_string(),
                    cap: MAX_MESSAGE_BYTES,
                }));
            }
            _ = tokio::time::sleep(timeout) => GaveUp::Timeout,
            _ = cancelled => GaveUp::Cancelled,
        };
        let reason = match why {
            GaveUp::Timeout => "the call ran past the client's timeout",
            GaveUp::Cancelled => "the user cancelled the call",
        };
        // Sent as the plain notification it is on the wire: the SDK's own cancellation forgets
        // the request, and an answer that still comes (the server settled) would go unseen.
        let params = serde_json::json!({"requestId": id, "reason": reason});
        let told = self
            .service
            .peer()
            .send_notification(ClientNotification::CustomNotification(CustomNotification::new(
                "notifications/cancelled",
                Some(params),
            )))
            .await;
        let settled = told.is_ok() && matches!(tokio::time::timeout(CANCEL_GRACE, &mut rx).await, Ok(Ok(_)));
        Called::GaveUp { why, settled }
    }

    /// Stops the server: a stdio server's processes are killed, and waited for (a short while),
    /// so nothing it started writes any more; a streamable HTTP session is closed.
    pub(crate) async fn stop(mut self) -> CallEnd {
        let end = match self.process.as_mut() {
            Some(p) => {
                p.kill_and_wait().await;
                CallEnd::Stopped
            }
            None => CallEnd::LeftRunning,
        };
        let _ = tokio::time::timeout(Duration::from_secs(1), self.service.cancel()).await;
        end
    }

    /// What a failed request means: the server refused it, or it is gone.
    pub(crate) async fn request_error(&mut self, server: &str, e: ServiceError) -> McpError {
        if self.wire.is_tripped() {
            return McpError::TooLarge {
                server: server.to_string(),
                cap: MAX_MESSAGE_BYTES,
            };
        }
        match e {
            ServiceError::McpError(data) => McpError::Refused {
                server: server.to_string(),
                message: data.message.to_string(),
            },
            other => {
                // A closed pipe is seen before the exit: give the process a moment to be reaped.
                let mut why = None;
                for _ in 0..20 {
                    why = self.gone();
                    if why.as_deref().is_some_and(|w| w != "the connection closed") {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                let why = why.unwrap_or_else(|| match other {
                    ServiceError::TransportSend(_) => "the connection failed".to_string(),
                    ServiceError::TransportClosed => "the connection closed".to_string(),
                    other => innermost(&other),
                });
                let tail = self
                    .process
                    .as_ref()
                    .map(ServerProcess::stderr_tail)
                    .unwrap_or_default();
                McpError::Died {
                    server: server.to_string(),
                    why: match tail.is_empty() {
                        true => format!(" ({why})"),
                        false => format!(" ({why}; it said on stderr: {tail})"),
                    },
                }
            }
        }
    }
}

/// Why the `initialize` handshake failed, in words.
fn init_failure(e: &rmcp::service::ClientInitializeError) -> String {
    use rmcp::service::ClientInitializeError as E;
    match e {
        E::ConnectionClosed(_) => {
            "it closed the connection (or sent something that is not JSON-RPC) instead of answering `initialize`".to_string()
        }
        E::ExpectedInitResponse(_) | E::ExpectedInitResult(_) | E::ConflictInitResponseId(..) => {
            "it answered `initialize` with something else".to_string()
        }
        E::JsonRpcError(data) => format!("it refused `initialize`: {}", data.message),
        E::TransportError { error, .. } => format!("the connection failed: {}", innermost(error)),
        E::Cancelled => "it was cancelled".to_string(),
    }
}

/// The innermost cause of `e` (what the system or the network said), without the transport
/// types that wrap it.
pub(crate) fn innermost(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    // A server's URL in the HTTP client's words loses its password or token.
    let said = retrace_protocol::mcp::redact_urls(&cur.to_string());
    // The HTTP client's own words ("the server answered HTTP 500 …") need no prefix.
    match said.strip_prefix("unexpected server response: ") {
        Some(rest) => rest.to_string(),
        None => said,
    }
}
