//! One tool call of a turn: preview, approval, the capture seam around the run, and the result
//! the model gets; and the ids the model's calls are known by.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use retrace_model::{CancellationToken, ToolCall};
use retrace_protocol::{ApprovalDecision, Event, FileChange, Gap, ToolStatus};
use retrace_tools::{BashPolicy, PreparedCall, Preview, RunContext, ToolError, Workspace};

use super::{Agent, AgentConfig};
use crate::seam::{ApprovalRequest, Approver, CaptureSeam, SeamError, ShellCoverage, ToolResult, TurnSink};

impl Agent {
    /// Runs one tool call: preview, seam, run, seam. Failures are results for the model; only a
    /// [`SeamError::Fatal`] ends the turn ([`Flow::Fatal`], with its text).
    pub(super) async fn execute(
        &self,
        turn: u64,
        call: &ToolCall,
        seam: &mut dyn CaptureSeam,
        sink: &mut dyn TurnSink,
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> Flow {
        let fail = |e: &dyn std::fmt::Display| {
            Flow::Done(ToolResult::not_ok(ToolStatus::Failed, format!("error: {e}")))
        };
        let refuse = |status: ToolStatus, e: &dyn std::fmt::Display| {
            Flow::Done(ToolResult::not_ok(status, format!("error: {e}")))
        };
        if self.is_mcp_call(&call.name) {
            return self.execute_mcp(turn, call, seam, sink, approver, cancel).await;
        }
        let Some(tool) = self.registry.get(&call.name) else {
            let offered: Vec<String> = self.tool_specs().into_iter().map(|s| s.name).collect();
            return fail(&format!(
                "there is no tool `{}`; the tools are: {}",
                call.name,
                offered.join(", ")
            ));
        };
        if self.config.plan_mode && !tool.read_only() {
            return refuse(ToolStatus::Denied, &format!(
                "plan mode is on, so `{}` was not run and nothing changed; only the read tools work now. Propose the change in your plan instead",
                call.name
            ));
        }
        let args: serde_json::Value = match serde_json::from_str(if call.arguments.trim().is_empty() {
            "{}"
        } else {
            &call.arguments
        }) {
            Ok(v) => v,
            Err(e) => return fail(&format!("the arguments of {} are not valid JSON: {e}", call.name)),
        };
        // Parsed once: the preview and the run use the same typed arguments.
        let prepared = match tool.prepare(&args) {
            Ok(p) => p,
            Err(e) => return fail(&e),
        };
        let preview = match prepared.preview(&self.workspace) {
            Ok(p) => p,
            Err(e) => return fail(&e),
        };
        let mut policy = self.config.bash_policy;
        let mut gaps = preview.gaps.clone();
        // The command whose changes the seam tracks (the git backend), if any.
        let mut tracked: Option<String> = None;
        if let Some(command) = &preview.shell_command {
            match policy {
                BashPolicy::Deny => {}
                BashPolicy::Ask => {
                    let request = ApprovalRequest {
                        call_id: call.id.clone(),
                        tool: call.name.clone(),
                        command: command.clone(),
                    };
                    let decision = approver.approve(request, cancel).await;
                    if cancel.is_cancelled() {
                        return refuse(ToolStatus::Cancelled, &"cancelled by the user before it ran");
                    }
                    if decision == ApprovalDecision::Deny {
                        return refuse(
                            ToolStatus::Denied,
                            &ToolError::BashDeclined {
                                command: command.clone(),
                            },
                        );
                    }
                    policy = BashPolicy::Allow;
                }
                BashPolicy::Allow => {}
            }
            if policy == BashPolicy::Allow {
                match seam.shell(command) {
                    Ok(ShellCoverage::Tracked) => tracked = Some(command.clone()),
                    Ok(ShellCoverage::Gap) => {
                        let gap = retrace_tools::bash_side_effect_gap(command);
                        gaps.push(gap.clone());
                        sink.event(Event::CheckpointCaptured {
                            turn,
                            paths: Vec::new(),
                            gaps: vec![gap],
                        });
                    }
                    Err(SeamError::Fatal(e)) => return Flow::Fatal(e),
                    Err(SeamError::Refuse(e)) => {
                        return fail(&format!(
                            "the command was not run: what it changes could not be made restorable: {e}"
                        ))
                    }
                }
            }
        }
        let mutating = !tool.read_only() && !preview.changes.is_empty();
        if mutating {
            match seam.before(tool.name(), &preview) {
                Ok(captured) => {
                    for g in &captured.gaps {
                        if !gaps.contains(g) {
                            gaps.push(g.clone());
                        }
                    }
                    if !captured.paths.is_empty() || !captured.gaps.is_empty() {
                        sink.event(Event::CheckpointCaptured { turn, paths: captured.paths, gaps: captured.gaps });
                    }
                }
                Err(SeamError::Fatal(e)) => return Flow::Fatal(e),
                Err(SeamError::Refuse(e)) => {
                    return fail(&format!(
                        "edit refused: the before-image could not be saved, so the edit could not be taken back ({e}); nothing was written"
                    ))
                }
            }
        }
        let started = std::time::Instant::now();
        let result = run_tool(
            prepared.as_ref(),
            &self.workspace,
            &preview,
            policy,
            &self.config,
            cancel,
        );
        if mutating {
            match seam.after(tool.name(), &preview, result.is_ok()) {
                Ok(()) => {}
                Err(SeamError::Fatal(e)) => return Flow::Fatal(e),
                Err(SeamError::Refuse(e)) => sink.event(Event::Notice {
                    message: format!("could not record the result of {}: {e}", tool.name()),
                    retry: None,
                }),
            }
        }
        let duration_ms = Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
        // A tracked command changed what it changed whatever its exit (or its cancellation).
        let mut shell_changes = Vec::new();
        if let Some(command) = &tracked {
            let gap = retrace_tools::bash_side_effect_gap(command);
            match settle_tracked(seam, sink, turn, command, gap, "the command", &mut gaps) {
                Ok(changes) => shell_changes = changes,
                Err(e) => return Flow::Fatal(e),
            }
        }
        Flow::Done(match result {
            Ok(out) => ToolResult {
                status: ToolStatus::Ok,
                content: out.content,
                // A file written with the bytes it had is no change.
                changes: preview
                    .files
                    .iter()
                    .filter(|c| !c.is_noop())
                    .cloned()
                    .chain(shell_changes)
                    .collect(),
                gaps,
                exit_code: out.exit_code,
                duration_ms,
            },
            Err(e) if cancel.is_cancelled() => ToolResult {
                gaps,
                duration_ms,
                changes: shell_changes,
                ..ToolResult::not_ok(ToolStatus::Cancelled, format!("error: {e}"))
            },
            Err(e) => ToolResult {
                gaps,
                duration_ms,
                changes: shell_changes,
                ..ToolResult::not_ok(ToolStatus::Failed, format!("error: {e}"))
            },
        })
    }
}

/// The model's calls, each with an id of its own: an empty id, or one an earlier call of the same
/// answer has, gets `call_<turn>_<step>_<n>` (a server may send empty or repeated ids; results,
/// approvals and items are all matched by id).
pub(super) fn unique_call_ids(mut calls: Vec<ToolCall>, turn: u64, step: usize) -> Vec<ToolCall> {
    let mut seen = std::collections::HashSet::new();
    for (n, c) in calls.iter_mut().enumerate() {
        if c.id.is_empty() || !seen.insert(c.id.clone()) {
            c.id = format!("call_{turn}_{step}_{n}");
            seen.insert(c.id.clone());
        }
    }
    calls
}

/// What a call the backend tracks (a shell command; an MCP call in the git backend) changed,
/// captured after it ran, whatever its end: its changes, each gap found added to `gaps` and
/// announced. A refused capture records `gap` instead (what the call changed cannot be taken
/// back) and the turn says so, naming the call as `what`. `Err`: the turn ends.
pub(super) fn settle_tracked(
    seam: &mut dyn CaptureSeam,
    sink: &mut dyn TurnSink,
    turn: u64,
    command: &str,
    gap: Gap,
    what: &str,
    gaps: &mut Vec<Gap>,
) -> Result<Vec<FileChange>, String> {
    match seam.shell_done(command) {
        Ok(found) => {
            for g in &found.gaps {
                if !gaps.contains(g) {
                    gaps.push(g.clone());
                }
            }
            if !found.paths.is_empty() || !found.gaps.is_empty() {
                sink.event(Event::CheckpointCaptured {
                    turn,
                    paths: found.paths,
                    gaps: found.gaps,
                });
            }
            Ok(found.changes)
        }
        Err(SeamError::Fatal(e)) => Err(e),
        Err(SeamError::Refuse(e)) => {
            let _ = seam.shell_gap(gap.clone());
            gaps.push(gap.clone());
            sink.event(Event::CheckpointCaptured {
                turn,
                paths: Vec::new(),
                gaps: vec![gap],
            });
            sink.event(Event::Notice {
                message: format!("could not capture what {what} changed: {e}"),
                retry: None,
            });
            Ok(Vec::new())
        }
    }
}

/// How a call's handling ended: with a result for the model, or with the turn's end.
pub(super) enum Flow {
    Done(ToolResult),
    Fatal(String),
}

/// Runs a synchronous tool on this worker thread, with cancellation forwarded to the tool.
fn run_tool(
    call: &dyn PreparedCall,
    ws: &Workspace,
    preview: &Preview,
    policy: BashPolicy,
    config: &AgentConfig,
    cancel: &CancellationToken,
) -> Result<retrace_tools::ToolOutput, ToolError> {
    let flag = Arc::new(AtomicBool::new(cancel.is_cancelled()));
    let watcher = {
        let flag = flag.clone();
        let cancel = cancel.clone();
        tokio::runtime::Handle::try_current().ok().map(|h| {
            h.spawn(async move {
                cancel.cancelled().await;
                flag.store(true, Ordering::SeqCst);
            })
        })
    };
    let approve_none = |_: &str| false;
    let ctx = RunContext::new(policy, &approve_none)
        .with_bash_timeout(config.bash_timeout)
        .with_output_cap(config.output_cap)
        .with_cancel(flag);
    let run = || call.run(ws, preview, &ctx);
    let out = match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(run)
        }
        _ => run(),
    };
    if let Some(w) = watcher {
        w.abort();
    }
    out
}
