//! The crate's errors: each names the server, and says what to do where there is something to do.

/// What went wrong with an MCP server.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// No server of that name is configured.
    #[error("there is no MCP server `{0}`")]
    NoServer(String),

    #[error("the MCP server `{0}` is denied (`permission = \"deny\"`, or `[permissions] mcp`): nothing of it is read")]
    Denied(String),
    /// The server has no such tool.
    #[error("the MCP server `{server}` has no tool `{tool}`")]
    NoTool { server: String, tool: String },
    /// The tool is left out (not offered to the model), and cannot be called.
    #[error("the tool `{tool}` of the MCP server `{server}` is left out ({why}); it cannot be called")]
    LeftOut {
        server: String,
        tool: String,
        why: String,
    },
    /// `enabled = false`.
    #[error("the MCP server `{0}` is disabled (`enabled = false` in its config)")]
    Disabled(String),
    /// Its config cannot work.
    #[error("the MCP server `{server}` is not configured right: {why}")]
    Config { server: String, why: String },
    /// Its program could not be started.
    #[error("cannot start `{command}` for the MCP server `{server}`: {source}")]
    Spawn {
        server: String,
        command: String,
        source: std::io::Error,
    },
    /// It did not start (its handshake failed, it exited).
    #[error("the MCP server `{server}` did not start: {why}")]
    Start { server: String, why: String },
    /// It did not start earlier in the session (`why`, reported then) and is not tried again.
    #[error("{why}; it is not started again in this session")]
    Unavailable { server: String, why: String },
    /// It did not start in time.
    #[error("the MCP server `{server}` did not start within {ms} ms (`startup_timeout_ms`){stderr}")]
    StartTimeout { server: String, ms: u64, stderr: String },
    /// A call did not end in time: the server was told to cancel it, and how that ended.
    #[error(
        "the MCP server `{server}` did not answer the call of `{tool}` within {ms} ms (`tool_timeout_ms`); {end}"
    )]
    CallTimeout {
        server: String,
        tool: String,
        ms: u64,
        end: CallEnd,
    },
    /// A call was cancelled while it ran: the server was told to cancel it, and how that ended.
    #[error("the call of `{tool}` on the MCP server `{server}` was cancelled; {end}")]
    Cancelled {
        server: String,
        tool: String,
        end: CallEnd,
    },
    /// A request other than a tool call (a resource listed or read, a prompt) went unanswered
    /// past the server's `tool_timeout_ms`: the server was stopped (a stdio server's processes
    /// killed; a session over HTTP closed) and is started again at its next request.
    #[error("the MCP server `{server}` did not answer `{what}` within {ms} ms (`tool_timeout_ms`); it was stopped (a server over HTTP: its session closed), and is started again at its next request")]
    RequestTimeout {
        server: String,
        what: &'static str,
        ms: u64,
    },
    /// It stopped (or the connection broke) during a request.
    #[error("the MCP server `{server}` stopped during the call{why}; it is started again at the next call")]
    Died { server: String, why: String },
    /// It sent a message past [`crate::MAX_MESSAGE_BYTES`]: the request failed, and the
    /// connection with it.
    #[error("the MCP server `{server}` sent a message of more than {} MiB, the most Retrace takes from a server; the request failed, and the server is started again at its next call", .cap >> 20)]
    TooLarge { server: String, cap: usize },
    /// It answered the request with an error.
    #[error("the MCP server `{server}` refused the request: {message}")]
    Refused { server: String, message: String },
}

/// How a call given up (past its timeout, cancelled) ended once the server was told to cancel
/// it (`notifications/cancelled`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallEnd {
    /// A server over HTTP answered the call soon after (it cannot be stopped: its word is taken).
    Settled,
    /// A stdio server answered the call soon after, and was stopped all the same (its processes
    /// killed; started again at its next call): an answer is not proof that nothing of the call
    /// still runs.
    AnsweredStopped,
    /// It did not answer: its processes were killed (started again at its next call), so nothing
    /// of the call runs any more.
    Stopped,
    /// It did not answer, and it is a server over HTTP, which cannot be stopped: the session was
    /// closed (a new one at its next call), but the server may still be running the call.
    LeftRunning,
}

impl std::fmt::Display for CallEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CallEnd::Settled => "it was told to cancel the call, and answered",
            CallEnd::AnsweredStopped => "it was told to cancel the call and answered, and was stopped all the same (its processes killed, so that nothing of the call runs any more); it is started again at its next call",
            CallEnd::Stopped => "it was told to cancel the call and did not answer, so it was stopped (its processes killed); it is started again at its next call",
            CallEnd::LeftRunning => "it was told to cancel the call and did not answer; its session was closed (a new one is opened at its next call), but a server over HTTP cannot be stopped and may still be running the call: what it does is not tracked",
        })
    }
}

impl McpError {
    /// Whether the server may still be running what was asked of it (a call given up on a
    /// server over HTTP that did not answer once told to cancel it).
    pub fn left_running(&self) -> bool {
        matches!(
            self,
            McpError::CallTimeout {
                end: CallEnd::LeftRunning,
                ..
            } | McpError::Cancelled {
                end: CallEnd::LeftRunning,
                ..
            }
        )
    }
}

/// The crate's result.
pub type Result<T> = std::result::Result<T, McpError>;
