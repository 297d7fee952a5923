//! The three interfaces the controller implements for the agent.

use retrace_model::{BoxFuture, CancellationToken, ChatMessage};
use retrace_protocol::{ApprovalDecision, Event, FileChange, Gap, HeadId, TokenUsage, ToolStatus};
use retrace_tools::Preview;

/// What the seam captured for one tool call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    /// Paths whose before-image was taken now (first touch in the turn).
    pub paths: Vec<String>,
    /// Gaps recorded now.
    pub gaps: Vec<Gap>,
}

/// Why the controller's side of a turn did not do what the agent asked: the call is refused and
/// the model told why (the turn goes on), or the turn cannot go on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeamError {
    /// This call is refused (nothing was written); the model gets the text as the call's error.
    Refuse(String),
    /// The turn ends with this error (the conversation log cannot be written).
    Fatal(String),
}

impl SeamError {
    /// The text.
    pub fn text(&self) -> &str {
        match self {
            SeamError::Refuse(t) | SeamError::Fatal(t) => t,
        }
    }
}

impl std::fmt::Display for SeamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}

impl std::error::Error for SeamError {}

/// Called around every mutating tool (ARCHITECTURE.md, data flow steps 5–6).
pub trait CaptureSeam: Send {
    /// Before the tool writes: make the before-image of every previewed change durable. An error
    /// refuses the edit; its text is told to the model.
    fn before(&mut self, tool: &str, preview: &Preview) -> Result<Captured, SeamError>;
    /// After the tool ran, successfully (`ok`) or not: record the after-images of the previewed
    /// paths. A tool that succeeded left exactly what its preview said it would (each change's
    /// `after`, where known), so those need not be read back.
    fn after(&mut self, tool: &str, preview: &Preview, ok: bool) -> Result<(), SeamError>;
    /// A shell command is about to run: record the `bash_side_effect` gap ([`ShellCoverage::Gap`]),
    /// or (the git backend) take the snapshot its changes will be found against
    /// ([`ShellCoverage::Tracked`]).
    fn shell(&mut self, command: &str) -> Result<ShellCoverage, SeamError>;
    /// A tracked shell command ran (whatever its exit): capture what it changed. The default has
    /// nothing to capture.
    fn shell_done(&mut self, command: &str) -> Result<ShellChanges, SeamError> {
        let _ = command;
        Ok(ShellChanges::default())
    }
    /// A call whose effects are not known is about to run (an MCP tool the user does not vouch
    /// for as read-only): record `gap` ([`ShellCoverage::Gap`]), or (the git backend) take the snapshot
    /// its changes will be found against ([`ShellCoverage::Tracked`], then
    /// [`CaptureSeam::shell_done`]). The default records the gap through
    /// [`CaptureSeam::shell_gap`].
    fn side_effect(&mut self, gap: Gap) -> Result<ShellCoverage, SeamError> {
        self.shell_gap(gap)?;
        Ok(ShellCoverage::Gap)
    }
    /// A call the user vouches changes nothing is about to run (an MCP tool in the config's
    /// `read_only_tools`): no gap is recorded, but a backend that can snapshot the workspace
    /// around it cheaply (the git backend) does, so that a wrong claim is still restorable.
    /// `true`: tracked ([`CaptureSeam::shell_done`] follows); the default tracks nothing.
    fn watch(&mut self, gap: Gap) -> Result<bool, SeamError> {
        let _ = gap;
        Ok(false)
    }
    /// A tracked command's changes could not be captured: record `gap` (a `bash_side_effect`
    /// or `mcp_side_effect` gap) instead. The default records nothing.
    fn shell_gap(&mut self, gap: Gap) -> Result<(), SeamError> {
        let _ = gap;
        Ok(())
    }
}

/// How a shell command's changes to files are covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellCoverage {
    /// They are not: a `bash_side_effect` gap was recorded.
    Gap,
    /// They are found and captured once it ran ([`CaptureSeam::shell_done`]).
    Tracked,
}

/// What a tracked shell command changed, captured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellChanges {
    /// Each changed file, with its diff, as an edit tool's changes are shown.
    pub changes: Vec<FileChange>,
    /// The paths whose before-image was captured now (first touch in the turn).
    pub paths: Vec<String>,
    /// What could not be captured.
    pub gaps: Vec<Gap>,
}

/// Where a turn's output goes.
pub trait TurnSink: Send {
    /// An event for the frontends.
    fn event(&mut self, event: Event);
    /// A tool result to append to the conversation. An error ends the turn: the log must not miss
    /// what the model was told.
    fn message(&mut self, message: &ChatMessage) -> Result<(), SeamError>;
    /// An assistant message to append, with the tokens of the request that produced it (when the
    /// server counted them). An error ends the turn, as for [`TurnSink::message`].
    fn assistant(&mut self, message: &ChatMessage, usage: Option<TokenUsage>) -> Result<(), SeamError>;
    /// A tool call's result to append to the conversation: the text the model gets, how the call
    /// ended and what it changed. The default appends the text alone (as [`TurnSink::message`]).
    fn tool_result(&mut self, call_id: &str, result: &ToolResult) -> Result<(), SeamError> {
        self.message(&ChatMessage::tool(call_id.to_string(), result.content.clone()))
    }
    /// What to ask the model for to compact the conversation of the running turn: the messages
    /// before the turn, then the instruction to summarize them. `None`: this sink cannot compact
    /// (the default); `Some(Err)`: not now (nothing to summarize), and why.
    /// `max_tokens` is what the request may take: the source is shortened to fit it.
    fn compaction_source(&mut self, max_tokens: u64) -> Option<Result<Vec<ChatMessage>, SeamError>> {
        let _ = max_tokens;
        None
    }
    /// Makes the compacted conversation from the model's `summary` (a new head, selected, that
    /// the rest of the turn is written to) and returns it as the model will see it.
    /// `usage`: what the server counted for the request that wrote the summary.
    fn compacted(&mut self, summary: String, usage: Option<TokenUsage>) -> Result<Compaction, SeamError> {
        let _ = (summary, usage);
        Err(SeamError::Refuse("this turn cannot be compacted".to_string()))
    }
}

/// How one tool call ended, as the agent reports it to the sink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// Succeeded, failed, denied or cancelled (never running).
    pub status: ToolStatus,
    /// The text given back to the model.
    pub content: String,
    /// The files it changed, from its preview (empty unless it succeeded).
    pub changes: Vec<FileChange>,
    /// What it did that cannot be restored (its preview's gaps, those the capture found, a
    /// shell command's side effects).
    pub gaps: Vec<Gap>,
    /// A shell command's exit code, when it exited.
    pub exit_code: Option<i32>,
    /// How long the tool ran, in milliseconds (`None` when it never ran).
    pub duration_ms: Option<u64>,
}

impl ToolResult {
    /// A call that did not succeed, with the text the model gets.
    pub fn not_ok(status: ToolStatus, content: impl Into<String>) -> ToolResult {
        ToolResult {
            status,
            content: content.into(),
            changes: Vec::new(),
            gaps: Vec::new(),
            exit_code: None,
            duration_ms: None,
        }
    }

    /// A call that succeeded, with the text the model gets.
    pub fn success(content: impl Into<String>) -> ToolResult {
        ToolResult {
            content: content.into(),
            ..ToolResult::not_ok(ToolStatus::Ok, "")
        }
    }

    /// Whether it succeeded.
    pub fn ok(&self) -> bool {
        self.status == ToolStatus::Ok
    }
}

/// A conversation compacted during a turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    /// The turn's history from now on: the summary, then the turn so far.
    pub history: Vec<ChatMessage>,
    /// The new head.
    pub head_id: HeadId,
    /// The head it was made from.
    pub from_head: HeadId,
}

/// A shell command that needs the user's say-so (bash policy `ask`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// The tool call waiting.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The command line.
    pub command: String,
}

/// Answers approvals. The answer may take as long as the user needs; when `cancel` fires the wait
/// ends with [`ApprovalDecision::Deny`]. The approver tells the frontends (the
/// `approval_requested` event), not the agent.
pub trait Approver: Send + Sync {
    /// Whether the command may run.
    fn approve<'a>(
        &'a self,
        request: ApprovalRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, ApprovalDecision>;
}

/// An approver that declines everything (no one to ask).
#[derive(Debug, Clone, Copy, Default)]
pub struct DenyAll;

impl Approver for DenyAll {
    fn approve<'a>(
        &'a self,
        _request: ApprovalRequest,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(std::future::ready(ApprovalDecision::Deny))
    }
}
