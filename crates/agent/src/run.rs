//! The turn loop.

use std::time::Duration;

use retrace_model::{CancellationToken, ChatMessage, ChatModel, ChatRequest, Delta, ModelError, ToolSpec};
use retrace_protocol::{Event, TokenUsage, ToolStatus};
use retrace_tools::{BashPolicy, Registry, Workspace};

use crate::budget::{
    fingerprint, fixed_tokens, request_tokens, ContextBudget, Counted, PLAN_MODE_INSTRUCTION,
};
use crate::seam::{Approver, CaptureSeam, SeamError, ToolResult, TurnSink};

use call::{unique_call_ids, Flow};

mod call;
pub mod mcp;
mod mcp_resources;

/// How a turn runs.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// Model requests per turn (SPEC §8 default 50). Tool calls per response are not limited.
    pub max_steps: usize,
    /// Shell policy: `Allow`, `Deny`, or `Ask` (the approver decides).
    pub bash_policy: BashPolicy,
    /// Default shell timeout.
    pub bash_timeout: Duration,
    /// Cap on a tool's output given to the model.
    pub output_cap: usize,
    /// The system prompt; `None` uses the built-in one. The environment and the project's
    /// instruction files (`AGENTS.md`, `RETRACE.md`) are added to it at every turn.
    pub system_prompt: Option<String>,
    /// The model's context window and when to compact (SPEC §10).
    pub budget: ContextBudget,
    /// Plan mode: only the read tools are offered, and any other call is refused unrun.
    pub plan_mode: bool,
    /// Whether the approver can ask anyone; `false` (a headless run): an MCP call its permission
    /// says to ask about is refused, saying why.
    pub can_ask: bool,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            max_steps: 50,
            bash_policy: BashPolicy::Deny,
            bash_timeout: retrace_tools::DEFAULT_BASH_TIMEOUT,
            output_cap: retrace_tools::DEFAULT_OUTPUT_CAP,
            system_prompt: None,
            budget: ContextBudget::default(),
            plan_mode: false,
            can_ask: true,
        }
    }
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnEnd {
    /// The model answered without tool calls.
    Finished,
    /// The model failed, the step limit was reached, or the log could not be written.
    Failed(String),
    /// The user cancelled.
    Cancelled,
}

/// What a turn did: how it ended, and what its model requests cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnReport {
    /// How it ended.
    pub end: TurnEnd,
    /// The tokens of its model requests, summed over those the server counted; `None` when it
    /// counted none.
    pub usage: Option<TokenUsage>,
}

/// The agent of one session: a workspace, its tools and a model.
pub struct Agent {
    workspace: Workspace,
    registry: Registry,
    pub(crate) model: Box<dyn ChatModel>,
    config: AgentConfig,
    /// The last request a server counted, for the size of the next one.
    pub(crate) counted: Option<Counted>,
    /// The session's MCP servers, when any is configured (SPEC §8.1).
    mcp: Option<std::sync::Arc<retrace_mcp::McpServers>>,
    /// The notices about the MCP tools left out (and config names matching no tool) said so
    /// far: each is said once, when it first holds (at a session's first turn, or after a server
    /// started again listing other tools).
    mcp_notices_said: std::sync::Mutex<Vec<String>>,
    /// What the log says the server last counted, for the next turn: the messages before the
    /// answer, and the request's tokens ([`Agent::set_logged_count`]).
    logged_count: Option<(usize, u64)>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("workspace", &self.workspace.root())
            .field("model", &self.model.describe())
            .finish()
    }
}

const SYSTEM_PROMPT: &str = "You are Retrace, a coding agent. You work in the user's workspace through \
the tools you are given; paths are relative to the workspace root. Read before you edit, keep edits \
small and exact, and say briefly what you changed when you are done. Every edit you make can be \
taken back by the user.";

impl Agent {
    /// An agent on `workspace` with the standard tools.
    pub fn new(workspace: Workspace, model: Box<dyn ChatModel>, config: AgentConfig) -> Agent {
        Agent {
            workspace,
            registry: Registry::standard(),
            model,
            config,
            counted: None,
            logged_count: None,
            mcp: None,
            mcp_notices_said: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// What the session log says a server counted last on the conversation of the next turn: the
    /// number of messages before the answer it produced, and the request's `prompt_tokens`. A new
    /// process sizes its first request from it (plus an estimate of what was added since), as
    /// the process that made the request would have.
    pub fn set_logged_count(&mut self, count: Option<(usize, u64)>) {
        self.logged_count = count;
    }

    /// Turns plan mode on or off for the next turns.
    pub fn set_plan_mode(&mut self, on: bool) {
        self.config.plan_mode = on;
    }

    /// The context budget.
    pub fn budget(&self) -> ContextBudget {
        self.config.budget
    }

    /// The system prompt of a turn starting now.
    fn system(&self) -> String {
        let base = self.config.system_prompt.as_deref().unwrap_or(SYSTEM_PROMPT);
        let mut system = crate::context::system_prompt(base, &self.workspace);
        if self.config.plan_mode {
            system.push_str("\n\n");
            system.push_str(PLAN_MODE_INSTRUCTION);
        }
        system
    }

    /// The model's description (`deepseek:deepseek-chat`, `demo`, …).
    pub fn model_name(&self) -> String {
        self.model.describe()
    }

    /// The model, for requests outside a turn (summaries).
    pub fn model_mut(&mut self) -> &mut dyn ChatModel {
        self.model.as_mut()
    }

    /// The model, taken out of the agent.
    pub fn into_model(self) -> Box<dyn ChatModel> {
        self.model
    }

    /// The tool specs the model sees: the shell is not offered when it is denied, and in plan
    /// mode only the read tools are (a call to another anyway still gets the tool error saying
    /// so, and nothing runs).
    pub fn tool_specs(&self) -> Vec<ToolSpec> {
        let deny = self.config.bash_policy == BashPolicy::Deny;
        let plan = self.config.plan_mode;
        self.registry
            .specs()
            .into_iter()
            .filter(|s| !(deny && s.name == "bash"))
            .filter(|s| !plan || self.registry.get(&s.name).is_some_and(|t| t.read_only()))
            .map(|s| ToolSpec {
                name: s.name,
                description: s.description,
                parameters: s.parameters,
            })
            .chain(self.mcp_specs())
            .collect()
    }

    /// Runs one turn on `history` (which ends with the turn's user message). Assistant messages and
    /// tool results go to `sink` as they happen, so an interrupted turn leaves a consistent log.
    /// Each answered model request is a `step_finished` event with its usage; retries of a request
    /// are `notice` events saying why and how long the wait is.
    pub async fn run_turn(
        &mut self,
        turn: u64,
        history: Vec<ChatMessage>,
        seam: &mut dyn CaptureSeam,
        sink: &mut dyn TurnSink,
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> TurnReport {
        let mut tally = UsageTally { sink, usage: None };
        let end = self
            .run_steps(turn, history, seam, &mut tally, approver, cancel)
            .await;
        TurnReport {
            end,
            usage: tally.usage,
        }
    }

    /// The steps of a turn.
    async fn run_steps(
        &mut self,
        turn: u64,
        mut history: Vec<ChatMessage>,
        seam: &mut dyn CaptureSeam,
        sink: &mut dyn TurnSink,
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> TurnEnd {
        history = crate::history::well_formed(history);
        if let Some((messages, prompt_tokens)) = self.logged_count.take() {
            // The count this process made, if it still applies, is the newer one.
            let ours_applies = self.counted.is_some_and(|c| {
                c.messages <= history.len()
                    && history.get(..c.messages).map(fingerprint) == Some(c.fingerprint)
            });
            if !ours_applies {
                if let Some(prefix) = history.get(..messages) {
                    self.counted = Some(Counted {
                        prompt_tokens,
                        messages,
                        fingerprint: fingerprint(prefix),
                    });
                }
            }
        }
        let system = self.system();
        if !self.start_mcp(sink, cancel).await {
            return TurnEnd::Cancelled;
        }
        let tools = self.tool_specs();
        let fixed = fixed_tokens(&system, &tools);
        // Each at most once a turn: compaction for the budget, and compaction then a retry after
        // the model said the request was too long. Never a loop.
        let (mut budget_checked, mut retried_too_long) = (false, false);
        for step in 0..self.config.max_steps {
            if cancel.is_cancelled() {
                return TurnEnd::Cancelled;
            }
            let size = request_tokens(fixed, &history, self.counted);
            if !budget_checked && size > self.config.budget.threshold() {
                budget_checked = true;
                let why = format!(
                    "the conversation is about {size} tokens, past {:.0}% of the model's {}-token context window",
                    self.config.budget.compact_at * 100.0,
                    self.config.budget.window
                );
                match self
                    .compact(
                        turn,
                        sink,
                        cancel,
                        crate::compact::Why {
                            before: size,
                            fixed,
                            history: &history,
                            reason: &why,
                        },
                    )
                    .await
                {
                    Ok(Some(h)) => history = h,
                    Ok(None) => {}
                    Err(end) => return end,
                }
            }
            let history_print = fingerprint(&history);
            let mut messages = Vec::with_capacity(history.len() + 1);
            messages.push(ChatMessage::system(system.clone()));
            messages.extend(history.iter().cloned());
            let req = ChatRequest {
                messages,
                tools: tools.clone(),
            };
            let response = {
                let mut on_delta = |d: Delta| match d {
                    Delta::Content(text) => sink.event(Event::AssistantDelta { item_id: None, text }),
                    Delta::Reasoning(text) => sink.event(Event::ReasoningDelta { item_id: None, text }),
                    Delta::Retry { message, notice } => sink.event(Event::Notice {
                        message,
                        retry: Some(notice),
                    }),
                    Delta::ToolCallStart { .. } | Delta::ToolCallArgs { .. } => {}
                };
                self.model.complete(&req, &mut on_delta, cancel).await
            };
            let response = match response {
                Ok(r) => r,
                Err(ModelError::Cancelled) => return TurnEnd::Cancelled,
                Err(e) if e.is_context_too_long() && !retried_too_long => {
                    retried_too_long = true;
                    budget_checked = true;
                    let why = format!("the model said the request is too long ({})", e.retry_reason());
                    match self.compact(
                        turn,
                        sink,
                        cancel,
                        crate::compact::Why {
                            before: size,
                            fixed,
                            history: &history,
                            reason: &why,
                        },
                    ).await {
                        Ok(Some(h)) => {
                            history = h;
                            continue;
                        }
                        Ok(None) => {
                            return TurnEnd::Failed(format!(
                                "the model failed: {e}; compacting the earlier turns could not make it fit, so this turn alone is too long for the model: rewind the conversation to before turn {turn} (/rewind, or `retrace rewind --scope conversation --turn {turn}`) and ask for less at once"
                            ))
                        }
                        Err(end) => return end,
                    }
                }
                Err(e) if e.is_context_too_long() => {
                    return TurnEnd::Failed(format!(
                        "the model failed: {e}; it was compacted once already this turn, so this turn alone is too long for the model: rewind the conversation to before turn {turn} (/rewind, or `retrace rewind --scope conversation --turn {turn}`) and ask for less at once"
                    ))
                }
                Err(e) => return TurnEnd::Failed(format!("the model failed: {e}")),
            };
            if let Some(u) = response.usage {
                self.counted = Some(Counted {
                    prompt_tokens: u.prompt_tokens,
                    messages: history.len(),
                    fingerprint: history_print,
                });
            }
            let calls = unique_call_ids(response.tool_calls.clone(), turn, step);
            let assistant = ChatMessage::assistant(response.content.clone(), calls.clone());
            if let Err(e) = sink.assistant(&assistant, response.usage) {
                return TurnEnd::Failed(log_failure(e));
            }
            sink.event(Event::StepFinished {
                turn,
                step: step as u64,
                finish_reason: response.finish_reason.clone(),
                usage: response.usage,
            });
            history.push(assistant);
            if calls.is_empty() {
                return TurnEnd::Finished;
            }
            for call in &calls {
                let result = if cancel.is_cancelled() {
                    // Every call the model made gets a result, so the log stays consistent.
                    ToolResult::not_ok(
                        ToolStatus::Cancelled,
                        "error: cancelled by the user before it ran",
                    )
                } else {
                    sink.event(Event::ToolCall {
                        id: call.id.clone(),
                        name: call.name.clone(),
                        arguments: call.arguments.clone(),
                    });
                    let result = match self.execute(turn, call, seam, sink, approver, cancel).await {
                        Flow::Done(r) => r,
                        Flow::Fatal(fatal) => return TurnEnd::Failed(fatal),
                    };
                    sink.event(Event::ToolResult {
                        id: call.id.clone(),
                        name: call.name.clone(),
                        ok: result.ok(),
                        content: result.content.clone(),
                    });
                    result
                };
                if let Err(e) = sink.tool_result(&call.id, &result) {
                    return TurnEnd::Failed(log_failure(e));
                }
                history.push(ChatMessage::tool(call.id.clone(), result.content));
            }
            if cancel.is_cancelled() {
                return TurnEnd::Cancelled;
            }
        }
        TurnEnd::Failed(format!(
            "the turn reached its limit of {} model requests; send another message to continue",
            self.config.max_steps
        ))
    }
}

/// Why a turn ends when the sink could not write: a fatal error says so itself; a refusal (a
/// sink that has nothing else to say) is put in the log's words.
fn log_failure(e: SeamError) -> String {
    match e {
        SeamError::Fatal(text) => text,
        SeamError::Refuse(text) => format!("cannot write the conversation log: {text}"),
    }
}

/// A sink that passes everything on and adds up the usage of the assistant messages written.
struct UsageTally<'a> {
    sink: &'a mut dyn TurnSink,
    usage: Option<TokenUsage>,
}

impl TurnSink for UsageTally<'_> {
    fn event(&mut self, event: Event) {
        self.sink.event(event);
    }

    fn message(&mut self, message: &ChatMessage) -> Result<(), SeamError> {
        self.sink.message(message)
    }

    fn tool_result(&mut self, call_id: &str, result: &ToolResult) -> Result<(), SeamError> {
        self.sink.tool_result(call_id, result)
    }

    fn assistant(&mut self, message: &ChatMessage, usage: Option<TokenUsage>) -> Result<(), SeamError> {
        if let Some(u) = usage {
            self.usage = Some(self.usage.unwrap_or_default().plus(u));
        }
        self.sink.assistant(message, usage)
    }

    fn compaction_source(&mut self, max_tokens: u64) -> Option<Result<Vec<ChatMessage>, SeamError>> {
        self.sink.compaction_source(max_tokens)
    }

    fn compacted(
        &mut self,
        summary: String,
        usage: Option<TokenUsage>,
    ) -> Result<crate::seam::Compaction, SeamError> {
        self.sink.compacted(summary, usage)
    }
}
