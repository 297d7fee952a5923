//! The one event stream every frontend renders (SPEC §7). Serialised with a `type` tag in snake_case:
//! `retrace exec --json` prints one per line; the server streams them as SSE.

use serde::{Deserialize, Serialize};

use crate::checkpoint::Gap;
use crate::ids::{HeadId, SessionId};
use crate::item::Item;
use crate::request::{ApprovalDecision, SummarizeDirection};
use crate::usage::{RetryNotice, TokenUsage};

/// What to restore in a rewind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RewindScope {
    /// Files only.
    Code,
    /// The conversation only (a new head).
    Conversation,
    /// Both.
    Both,
}

/// One event of the controller.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A turn began: its checkpoint exists and the user message is in the log.
    TurnStarted {
        /// The session.
        session_id: SessionId,
        /// The head the turn runs on.
        head_id: HeadId,
        /// The turn number.
        turn: u64,
        /// The user's prompt.
        prompt: String,
    },
    /// Streamed assistant text.
    AssistantDelta {
        /// The new text.
        text: String,
        /// The `assistant_text` item it extends (absent from streams of older versions).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        item_id: Option<String>,
    },
    /// Streamed reasoning text (DeepSeek's `reasoning_content`), shown apart from the answer.
    ReasoningDelta {
        /// The new text.
        text: String,
        /// The `assistant_text` item whose reasoning it extends.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        item_id: Option<String>,
    },
    /// A new item of the session's view (a prompt, a tool call starting, a note…), in order after
    /// the items already shown. If an item with its id is shown already, it replaces it.
    ItemStarted {
        /// The item.
        item: Item,
    },
    /// An item changed (a tool call's preview, a checkpoint capturing more files): replace the
    /// item with this id.
    ItemUpdated {
        /// The item, whole.
        item: Item,
    },
    /// An item is final (a tool call answered, an assistant message written): replace the item
    /// with this id.
    ItemCompleted {
        /// The item, whole.
        item: Item,
    },
    /// An item that was started will not be kept (a streamed answer cut off by a cancel, which
    /// the conversation does not record): remove it.
    ItemRemoved {
        /// The item's id.
        item_id: String,
    },
    /// The model called a tool.
    ToolCall {
        /// The call id.
        id: String,
        /// The tool.
        name: String,
        /// The arguments as the model gave them (JSON text).
        arguments: String,
    },
    /// A tool finished (successfully or not; a failed tool is a result for the model).
    ToolResult {
        /// The call id.
        id: String,
        /// The tool.
        name: String,
        /// Whether it succeeded.
        ok: bool,
        /// The text given back to the model.
        content: String,
    },
    /// Before-images were captured for a tool call.
    CheckpointCaptured {
        /// The turn.
        turn: u64,
        /// The paths captured now (first touch in the turn).
        paths: Vec<String>,
        /// Gaps recorded now.
        gaps: Vec<Gap>,
    },
    /// One model request of a turn (a step) answered in full; its tool calls, if any, run next.
    StepFinished {
        /// The turn.
        turn: u64,
        /// The step: 0 for the turn's first model request, then 1, 2, …
        step: u64,
        /// Why the model stopped (`stop`, `tool_calls`, `length`, …), when the server said.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        finish_reason: Option<String>,
        /// The tokens of this request, when the server counted them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<TokenUsage>,
    },
    /// The turn ended.
    TurnFinished {
        /// The turn.
        turn: u64,
        /// False when it ended in an error (model failure, exhausted script, cancellation).
        ok: bool,
        /// Why it failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// The tokens of the turn's model requests, summed over those the server counted; absent
        /// when it counted none (the script and demo models count nothing).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<TokenUsage>,
    },
    /// A rewind was committed.
    Rewound {
        /// What was restored.
        scope: RewindScope,
        /// The turn rewound to.
        turn: u64,
        /// The head now selected.
        head_id: HeadId,
        /// Files written.
        files_written: Vec<String>,
        /// Files deleted.
        files_deleted: Vec<String>,
        /// The transaction, if files changed.
        transaction_id: Option<String>,
        /// True when the conversation forked but the files then failed.
        partial: bool,
    },
    /// A rewind was undone.
    Undone {
        /// The transaction undone.
        transaction_id: String,
        /// The head now selected.
        head_id: HeadId,
    },
    /// An undone rewind was applied again (redo).
    Redone {
        /// The undone transaction applied again.
        transaction_id: String,
        /// The redo's own transaction: what `undo` takes back now.
        redo_id: String,
        /// The head now selected.
        head_id: HeadId,
    },
    /// The selected head changed.
    HeadChanged {
        /// The head now selected.
        head_id: HeadId,
    },
    /// Something worth telling the user.
    Notice {
        /// The text.
        message: String,
        /// Set when the notice announces a retried model request: the attempt, the wait, why.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry: Option<RetryNotice>,
    },
    /// An error outside a tool result.
    Error {
        /// The text.
        message: String,
    },
    /// A shell command waits for the user's approval: any frontend answers it by `call_id`
    /// (allow once, allow for the session, deny). Cancelling the turn denies it.
    ApprovalRequested {
        /// The tool call waiting.
        call_id: String,
        /// The tool (`bash`).
        tool: String,
        /// The command line.
        command: String,
        /// What running it means for taking changes back, in words (see `PendingApproval`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        /// Word prefixes the user may allow for the session (see `PendingApproval`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        prefixes: Vec<String>,
    },
    /// A summary began (summarize from / up to a turn): the model writes it; writes wait.
    SummaryStarted {
        /// The turn.
        turn: u64,
        /// Which side of it is folded.
        direction: SummarizeDirection,
    },
    /// A summary ended: its head was made and selected, or it failed or was cancelled.
    SummaryFinished {
        /// The turn.
        turn: u64,
        /// Whether the summary head was made.
        ok: bool,
        /// The new head, when it was made.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        head_id: Option<HeadId>,
        /// Why not.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// An approval was answered (by any frontend, or denied by a cancel): close its prompt.
    ApprovalResolved {
        /// The tool call.
        call_id: String,
        /// The answer.
        decision: ApprovalDecision,
    },
    /// The conversation was compacted: everything before `turn` on `from_head` was summarized
    /// into the new selected head `head_id` (SPEC §7 `compact`); the next request is built from it.
    /// Frontends re-read the transcript, as after `head_changed`.
    Compacted {
        /// The new head (a `summary` head), now selected.
        head_id: HeadId,
        /// The head that was compacted; it stays as a version.
        from_head: HeadId,
        /// The turn kept verbatim after the summary (the latest one).
        turn: u64,
        /// `true` when the controller compacted on its own (the context budget, or a model
        /// that said the request was too long); `false` for `compact()`.
        automatic: bool,
        /// The request's size before, in tokens (reported by the server, or estimated).
        before_tokens: u64,
        /// The estimated size after.
        after_tokens: u64,
    },
    /// Plan mode was turned on or off: while on, the model is offered only the read tools.
    PlanMode {
        /// Whether it is on now.
        on: bool,
    },
    /// The session's tally changed (a model request was counted, the conversation compacted,
    /// the model switched): what every frontend's status shows now.
    Usage {
        /// The tally, as a snapshot's `usage`.
        usage: crate::tally::SessionUsage,
    },
}
