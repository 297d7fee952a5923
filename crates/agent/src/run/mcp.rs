//! The MCP tools of a turn (SPEC §8.1): offered as `mcp__SERVER__TOOL` beside the resource tools,
//! and one call of them: plan mode, the permission and its approval, the capture seam around
//! every call (a gap unless the config vouches for the tool as read-only; the git backend's
//! snapshots around any call), the result.

use std::sync::Arc;

use retrace_mcp::{McpError, McpServers, McpTool, TOOL_PREFIX};
use retrace_model::{CancellationToken, ToolCall, ToolSpec};
use retrace_protocol::{ApprovalDecision, Event, Gap, GapReason, McpPermission, ToolStatus};
use serde_json::{json, Map, Value};

use super::call::{settle_tracked, Flow};
use super::Agent;
use crate::seam::{ApprovalRequest, Approver, CaptureSeam, SeamError, ShellCoverage, ToolResult, TurnSink};

/// The tool that lists the servers' resources.
pub const LIST_RESOURCES: &str = "list_mcp_resources";
/// The tool that reads one resource.
pub const READ_RESOURCE: &str = "read_mcp_resource";

/// The `mcp_side_effect` gap of a call of `tool`: what it did is not tracked.
pub fn mcp_side_effect_gap(tool: &McpTool) -> Gap {
    Gap {
        reason: GapReason::McpSideEffect,
        tool: Some(tool.qualified.clone()),
        path: None,
        detail: Some(format!("{}/{}", tool.server, tool.tool)),
    }
}

/// The `mcp_side_effect` gap of a resource request (`tool`, listing or reading) of `servers`.
fn resources_gap(tool: &str, servers: &[String]) -> Gap {
    Gap {
        reason: GapReason::McpSideEffect,
        tool: Some(tool.to_string()),
        path: None,
        detail: Some(format!("{}/resources", servers.join(","))),
    }
}

/// The capture seam around a call whose changes are not known (`gap`): snapshots around it where
/// the backend takes them (the git backend), else the gap (recorded, said, and pushed to
/// `gaps`); for a call the config `vouched` for, no gap, and snapshots only where cheap. Whether
/// the call is tracked (its changes to be settled after it), or the flow that ends it.
fn cover(
    seam: &mut dyn CaptureSeam,
    sink: &mut dyn TurnSink,
    turn: u64,
    gap: &Gap,
    vouched: bool,
    name: &str,
    gaps: &mut Vec<Gap>,
) -> Result<bool, Flow> {
    let coverage = match vouched {
        true => seam.watch(gap.clone()).map(|t| match t {
            true => Some(ShellCoverage::Tracked),
            false => None,
        }),
        false => seam.side_effect(gap.clone()).map(Some),
    };
    match coverage {
        Ok(Some(ShellCoverage::Tracked)) => Ok(true),
        Ok(None) => Ok(false),
        Ok(Some(ShellCoverage::Gap)) => {
            gaps.push(gap.clone());
            sink.event(Event::CheckpointCaptured {
                turn,
                paths: Vec::new(),
                gaps: vec![gap.clone()],
            });
            Ok(false)
        }
        Err(SeamError::Fatal(e)) => Err(Flow::Fatal(e)),
        Err(SeamError::Refuse(e)) => Err(Flow::Done(ToolResult::not_ok(
            ToolStatus::Failed,
            format!("error: `{name}` was not run: what it changes could not be made restorable: {e}"),
        ))),
    }
}

impl Agent {
    /// Gives the agent the MCP servers of its session (none are started yet).
    pub fn with_mcp(mut self, servers: Arc<McpServers>) -> Agent {
        self.mcp = (!servers.is_empty()).then_some(servers);
        self
    }

    /// The MCP servers of the session, if any are configured.
    pub fn mcp(&self) -> Option<&Arc<McpServers>> {
        self.mcp.as_ref()
    }

    /// Starts the servers not started yet (the first turn that needs them), telling the sink
    /// about each that did not start (once: it is not tried again).
    /// A cancel meanwhile stops the servers being started (they start again at the next turn):
    /// `false`.
    pub(super) async fn start_mcp(&self, sink: &mut dyn TurnSink, cancel: &CancellationToken) -> bool {
        let Some(mcp) = &self.mcp else {
            return true;
        };
        let errors = tokio::select! {
            e = mcp.start_all() => e,
            _ = cancel.cancelled() => return false,
        };
        for e in errors {
            sink.event(Event::Notice {
                message: format!("{e}; its tools are not offered in this session"),
                retry: None,
            });
        }
        self.say_mcp_notices(mcp, sink);
        true
    }

    /// Says the notices about tools left out (and config names matching no tool) not said yet:
    /// at a turn's start, and after each call (a server started again after it died may list
    /// other tools).
    fn say_mcp_notices(&self, mcp: &McpServers, sink: &mut dyn TurnSink) {
        let notices = mcp.left_out_notices();
        let fresh: Vec<String> = match self.mcp_notices_said.lock() {
            Ok(mut said) => {
                let fresh: Vec<String> = notices.into_iter().filter(|n| !said.contains(n)).collect();
                said.extend(fresh.iter().cloned());
                fresh
            }
            Err(_) => Vec::new(),
        };
        for message in fresh {
            sink.event(Event::Notice { message, retry: None });
        }
    }

    /// The MCP tools offered now (in plan mode only those the config vouches for as read-only),
    /// and the resource tools.
    pub(super) fn mcp_specs(&self) -> Vec<ToolSpec> {
        let Some(mcp) = &self.mcp else {
            return Vec::new();
        };
        let plan = self.config.plan_mode;
        let mut specs: Vec<ToolSpec> = mcp
            .tools()
            .into_iter()
            .filter(|t| !plan || t.vouched)
            .map(|t| ToolSpec {
                name: t.qualified,
                description: format!("(MCP server `{}`) {}", t.server, t.description),
                parameters: t.schema,
            })
            .collect();
        specs.push(ToolSpec {
            name: LIST_RESOURCES.to_string(),
            description: "List the resources of the MCP servers: one line each, `SERVER: URI (name)`."
                .to_string(),
            parameters: json!({"type": "object", "properties": {}}),
        });
        specs.push(ToolSpec {
            name: READ_RESOURCE.to_string(),
            description: "Read one resource of an MCP server, by the server's name and the resource's URI (from list_mcp_resources).".to_string(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "the MCP server's name"},
                    "uri": {"type": "string", "description": "the resource's URI"}
                },
                "required": ["server", "uri"]
            }),
        });
        specs
    }

    /// Whether `name` is an MCP tool or a resource tool of this agent.
    pub(super) fn is_mcp_call(&self, name: &str) -> bool {
        self.mcp.is_some()
            && (name.starts_with(TOOL_PREFIX) || name == LIST_RESOURCES || name == READ_RESOURCE)
    }

    /// Runs one call of an MCP tool or a resource tool.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn execute_mcp(
        &self,
        turn: u64,
        call: &ToolCall,
        seam: &mut dyn CaptureSeam,
        sink: &mut dyn TurnSink,
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> Flow {
        let fail = |status: ToolStatus, e: &dyn std::fmt::Display| {
            Flow::Done(ToolResult::not_ok(status, format!("error: {e}")))
        };
        let Some(mcp) = self.mcp.clone() else {
            return fail(ToolStatus::Failed, &"no MCP server is configured");
        };
        let args = match parse_object(&call.arguments) {
            Ok(a) => a,
            Err(e) => return fail(ToolStatus::Failed, &format!("the arguments of {} {e}", call.name)),
        };
        let cap = self.config.output_cap;
        let started = std::time::Instant::now();
        let ran = |r: ToolResult| {
            Flow::Done(ToolResult {
                duration_ms: Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)),
                ..r
            })
        };
        if call.name == LIST_RESOURCES || call.name == READ_RESOURCE {
            // A resource request is one the server may act on, as a tool call is: the same
            // plan-mode rule, gap or snapshots, unless the config vouches for its server.
            let asked: Vec<String> = match call.name == READ_RESOURCE {
                true => args
                    .get("server")
                    .and_then(Value::as_str)
                    .filter(|s| mcp.has_server(s))
                    .map(str::to_string)
                    .into_iter()
                    .collect(),
                false => mcp
                    .enabled()
                    .into_iter()
                    .filter(|s| mcp.offers_resources(s))
                    .collect(),
            };
            let vouched = asked.iter().all(|s| mcp.vouches_for_resources(s));
            if self.config.plan_mode && !vouched {
                let unvouched: Vec<String> = asked
                    .iter()
                    .filter(|s| !mcp.vouches_for_resources(s))
                    .map(|s| format!("`{s}`"))
                    .collect();
                return fail(ToolStatus::Denied, &format!(
                    "plan mode is on, so `{}` was not run and nothing changed: a server may act on a resource request, and the config does not vouch for the resources of {} (`trust_read_only_hints = true` in its `[mcp_servers.NAME]` does); only the read tools work now",
                    call.name,
                    unvouched.join(", ")
                ));
            }
            // Asked about first: a request the user declines, or that is refused, asks no
            // server and so is no gap.
            let request = match self
                .clear_resource_call(&mcp, call, &args, approver, cancel)
                .await
            {
                Ok(r) => r,
                Err((status, e)) => return fail(status, &e),
            };
            let mut gaps = Vec::new();
            // The gap names the servers asked that the config does not vouch for.
            let unvouched: Vec<String> = request
                .servers
                .iter()
                .filter(|s| !mcp.vouches_for_resources(s))
                .cloned()
                .collect();
            let vouched = unvouched.is_empty();
            let gap = match vouched {
                true => resources_gap(&call.name, &request.servers),
                false => resources_gap(&call.name, &unvouched),
            };
            let tracked = match request.servers.is_empty() {
                true => false,
                false => match cover(seam, sink, turn, &gap, vouched, &call.name, &mut gaps) {
                    Ok(t) => t,
                    Err(flow) => return flow,
                },
            };
            let answer = self.run_resource_call(&mcp, &request, cancel).await;
            let mut changes = Vec::new();
            if tracked {
                let command = one_line(&call.name, &Map::new());
                match settle_tracked(seam, sink, turn, &command, gap, &call.name, &mut gaps) {
                    Ok(found) => changes = found,
                    Err(e) => return Flow::Fatal(e),
                }
            }
            let base = match answer {
                Ok(text) => ToolResult::success(text),
                Err((status, e)) => ToolResult::not_ok(status, format!("error: {e}")),
            };
            return ran(ToolResult {
                gaps,
                changes,
                ..base
            });
        }
        let Some(tool) = mcp.tool(&call.name) else {
            let offered: Vec<String> = self.tool_specs().into_iter().map(|s| s.name).collect();
            return fail(
                ToolStatus::Failed,
                &format!(
                    "there is no tool `{}`; the tools are: {}",
                    call.name,
                    offered.join(", ")
                ),
            );
        };
        if self.config.plan_mode && !tool.vouched {
            let why = match tool.read_only {
                true => format!(
                    "its server marks it read-only, but that is the server's own claim, which Retrace cannot check (`read_only_tools = [\"{}\"]`, or `trust_read_only_hints = true`, in `[mcp_servers.{}]` vouches for it)",
                    tool.tool, tool.server
                ),
                false => "the config does not vouch for it as read-only".to_string(),
            };
            return fail(ToolStatus::Denied, &format!(
                "plan mode is on, so `{}` was not run and nothing changed: {why}; only the read tools work now. Propose the change in your plan instead",
                call.name
            ));
        }
        let decision = mcp.decide(&tool.server, &tool.tool);
        match decision.permission {
            McpPermission::Allow => {}
            McpPermission::Deny => {
                return fail(ToolStatus::Denied, &format!(
                    "`{}` is not allowed ({}); it was not run",
                    call.name, decision.setting
                ))
            }
            McpPermission::Ask if !self.config.can_ask => {
                return fail(ToolStatus::Denied, &format!(
                    "`{}` needs approval ({}), and nobody can answer in a headless run; it was not run (`tool_permissions = {{ \"{}\" = \"allow\" }}`, or `permission = \"allow\"`, in `[mcp_servers.{}]` lets it run)",
                    call.name, decision.setting, tool.tool, tool.server
                ))
            }
            McpPermission::Ask => {
                let request = ApprovalRequest {
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    command: one_line(&call.name, &args),
                };
                let decision = approver.approve(request, cancel).await;
                if cancel.is_cancelled() {
                    return fail(ToolStatus::Cancelled, &"cancelled by the user before it ran");
                }
                if decision == ApprovalDecision::Deny {
                    return fail(ToolStatus::Denied, &format!(
                        "the user declined the call of `{}`; it was not run. Ask what they want instead",
                        call.name
                    ));
                }
            }
        }
        // What it may change is not known (a server's `readOnlyHint` is its own claim): a gap, or
        // (the git backend) snapshots around it. A tool the user vouches for is no gap, and still
        // snapshotted where that is cheap.
        let mut gaps = Vec::new();
        let gap = mcp_side_effect_gap(&tool);
        let tracked = match cover(seam, sink, turn, &gap, tool.vouched, &call.name, &mut gaps) {
            Ok(t) => t,
            Err(flow) => return flow,
        };
        // Given up (cancelled, past its timeout), the call is cancelled at the server, which is
        // stopped unless it answers: its changes are settled only once nothing of it runs.
        let result = mcp
            .call_until(&tool.server, &tool.tool, args, cap, cancel.cancelled())
            .await;
        let mut changes = Vec::new();
        if tracked {
            let command = one_line(&call.name, &Map::new());
            match settle_tracked(seam, sink, turn, &command, gap.clone(), &call.name, &mut gaps) {
                Ok(found) => changes = found,
                Err(e) => return Flow::Fatal(e),
            }
        }
        // A server over HTTP cannot be stopped: what it may still do is a gap.
        if matches!(&result, Err(e) if e.left_running()) && !gaps.contains(&gap) {
            if let Err(SeamError::Fatal(e)) = seam.shell_gap(gap.clone()) {
                return Flow::Fatal(e);
            }
            gaps.push(gap.clone());
            sink.event(Event::CheckpointCaptured {
                turn,
                paths: Vec::new(),
                gaps: vec![gap],
            });
        }
        self.say_mcp_notices(&mcp, sink);
        let base = match result {
            Err(McpError::Cancelled { server, end, .. }) => ToolResult::not_ok(
                ToolStatus::Cancelled,
                format!("error: cancelled by the user while it ran; the MCP server `{server}`: {end}"),
            ),
            Ok(out) if out.is_error => ToolResult::not_ok(ToolStatus::Failed, format!("error: {}", out.text)),
            Ok(out) => ToolResult::success(out.text),
            Err(e) => ToolResult::not_ok(ToolStatus::Failed, format!("error: {e}")),
        };
        ran(ToolResult {
            gaps,
            changes,
            ..base
        })
    }
}

/// The arguments as a JSON object (empty text is no arguments).
fn parse_object(text: &str) -> Result<Map<String, Value>, String> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err("are not a JSON object".to_string()),
        Err(e) => Err(format!("are not valid JSON: {e}")),
    }
}

/// A call on one line, as an approval shows it: the tool and its arguments.
fn one_line(name: &str, args: &Map<String, Value>) -> String {
    match args.is_empty() {
        true => name.to_string(),
        false => format!("{name} {}", Value::Object(args.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_an_object() {
        assert_eq!(parse_object(" "), Ok(Map::new()));
        assert!(parse_object("[1]").unwrap_err().contains("not a JSON object"));
        assert!(parse_object("{").unwrap_err().contains("not valid JSON"));
        assert_eq!(one_line("t", &Map::new()), "t");
    }
}
