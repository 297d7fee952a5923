//! What the state machine asks of the runtime: each [`Effect`] is one request to the session
//! handle (or to the terminal), carried in the protocol's own request types.

use retrace_protocol::{
    ApprovalDecision, CommitRevert, CommitRewind, ForkRequest, ModelSpec, PrepareRevert, PrepareRewind,
    RedoRequest, SummarizeRequest, SwitchRequest, UndoRequest, WorkspaceForkRequest,
};

/// A request for the runtime. Answers come back through `App::on_*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Start a turn with this prompt (`SessionHandle::send`).
    Send(String),
    /// Cancel the running turn (`SessionHandle::cancel`).
    Cancel,
    /// Answer a shell command's approval.
    Approve {
        /// The waiting tool call.
        call_id: String,
        /// The answer.
        decision: ApprovalDecision,
    },
    /// Answer a waiting approval with "for the session", for every simple command starting with
    /// `prefix`.
    AllowPrefix {
        /// The waiting tool call.
        call_id: String,
        /// One of the approval's offered prefixes.
        prefix: String,
    },
    /// List the checkpoints; answer with `App::on_checkpoints`.
    LoadCheckpoints,
    /// Take a new snapshot of the session (`SessionHandle::snapshot`) and follow the events
    /// after it; answer with `App::on_snapshot`.
    LoadSnapshot,
    /// Refresh the session's status (head, model); answer with `App::on_status`.
    LoadStatus,
    /// List the heads; answer with `App::on_heads`.
    LoadHeads,
    /// Prepare a rewind; answer with `App::on_plan`.
    PrepareRewind(PrepareRewind),
    /// The whole diff of one file of a prepared plan (`SessionHandle::plan_file_diff`); answer
    /// with `App::on_plan_diff` or `App::on_plan_diff_failed`.
    LoadPlanDiff {
        /// The plan.
        plan_id: String,
        /// The file, as the plan names it.
        path: String,
    },
    /// Commit a prepared rewind; answer with `App::on_result`.
    Commit(CommitRewind),
    /// What a turn changed (`SessionHandle::turn_results`); answer with `App::on_turn_results`.
    LoadTurnResults(u64),
    /// Every version of a file (`SessionHandle::file_history`, the path relative to the
    /// workspace); answer with `App::on_file_history`.
    LoadHistory(String),
    /// Prepare a single-file revert to a version of its history; answer with `App::on_plan`.
    PrepareRevert(PrepareRevert),
    /// Commit a prepared single-file revert; answer with `App::on_result`.
    CommitRevert(CommitRevert),
    /// Undo the last rewind; answer with `App::on_result`.
    Undo(UndoRequest),
    /// Apply the last undone rewind again; answer with `App::on_result`.
    Redo(RedoRequest),
    /// Fork from a turn; answer with `App::on_head_ref`.
    Fork(ForkRequest),
    /// Fork from a turn into a new workspace (`Service::fork_into_workspace`) and open the new
    /// session in place of this one; answer with `App::on_session_opened`, then
    /// `App::on_workspace_fork`.
    ForkWorkspace(WorkspaceForkRequest),
    /// Summarize from or up to a turn; answer with `App::on_head_ref`.
    Summarize(SummarizeRequest),
    /// Select a head; answer with `App::on_head_ref`.
    Switch(SwitchRequest),
    /// Use another model from the next turn (`SessionHandle::set_model`); the answer refreshes
    /// the status.
    SetModel(ModelSpec),
    /// List the workspace's sessions; answer with `App::on_sessions`.
    LoadSessions,
    /// List the workspace's sessions for `/status` (it shows this one's log file); answer with
    /// `App::on_status_report`.
    LoadStatusReport,
    /// The session's MCP servers (starting them), for `/mcp` (`show`) or the palette's prompts;
    /// answer with `App::on_mcp`.
    LoadMcp {
        /// `/mcp` asked: the list goes into the transcript.
        show: bool,
    },
    /// An MCP server's prompt with its arguments; answer with `App::on_mcp_prompt`.
    McpPrompt {
        /// The server.
        server: String,
        /// The prompt.
        prompt: String,
        /// The arguments, by name.
        args: Vec<(String, String)>,
    },
    /// Open this session in place of the current one (the model carried over); answer with
    /// `App::on_session_opened`.
    OpenSession(String),
    /// Compact the selected head (`SessionHandle::compact`); answer with `App::on_compact_done`
    /// or `App::on_compact_failed`.
    Compact,
    /// Turn plan mode on or off (`SessionHandle::set_plan_mode`); answer with
    /// `App::show_plan_mode`.
    SetPlanMode(bool),
    /// Open a new session on the workspace in place of this one (`Service::create_like`);
    /// answer with `App::on_session_opened`.
    NewSession,
    /// Leave the UI (restore the terminal; the session stays on disk).
    Quit,
}
