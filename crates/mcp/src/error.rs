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
    /// A call did not end in time.
    #[error(
        "the MCP server `{server}` did not answer the call of `{tool}` within {ms} ms (`tool_timeout_ms`)"
    )]
    CallTimeout { server: String, tool: String, ms: u64 },
    /// It stopped (or the connection broke) during a request.
    #[error("the MCP server `{server}` stopped during the call{why}; it is started again at the next call")]
    Died { server: String, why: String },
    /// It answered the request with an error.
    #[error("the MCP server `{server}` refused the request: {message}")]
    Refused { server: String, message: String },
}

/// The crate's result.
pub type Result<T> = std::result::Result<T, McpError>;
