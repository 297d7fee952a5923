//! The agent: one turn is a loop of steps, a step is one model request (SPEC §8). Tool calls of a
//! response run in order; before every mutating tool the agent asks the tool for a preview and hands
//! it to the [`CaptureSeam`], which must make the before-images durable — if it cannot, the edit is
//! refused and the model is told why. The agent knows neither the checkpoint store nor the session
//! log: the controller implements the seam and the [`TurnSink`].
//!
//! Trade-off: tools are synchronous (plain `std::fs` and processes) and run on the calling worker via
//! `block_in_place`, so a turn needs the multi-threaded tokio runtime; in exchange the tools stay
//! simple and testable without async.

mod budget;
mod compact;
mod context;
mod history;
mod run;
mod seam;

pub use budget::{history_tokens, message_tokens, ContextBudget, PLAN_MODE_INSTRUCTION};
pub use context::{system_prompt, INSTRUCTION_FILES, MAX_INSTRUCTIONS_BYTES};
pub use history::well_formed;
pub use retrace_mcp::{kill_running_servers, McpError, McpServers, TOOL_PREFIX as MCP_TOOL_PREFIX};
pub use run::mcp::{mcp_side_effect_gap, LIST_RESOURCES, READ_RESOURCE};
pub use run::{Agent, AgentConfig, TurnEnd, TurnReport};
pub use seam::{
    ApprovalRequest, Approver, CaptureSeam, Captured, Compaction, DenyAll, SeamError, ShellChanges,
    ShellCoverage, ToolResult, TurnSink,
};
