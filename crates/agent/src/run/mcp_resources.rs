//! The resource tools of a turn (SPEC §8.1): `list_mcp_resources` and `read_mcp_resource` ask a
//! server as its tools do. A server under `deny` is not asked; one under `ask` is asked about
//! (refused in a headless run, where nobody can answer); one under `allow` is read freely.

use retrace_mcp::McpServers;
use retrace_model::{CancellationToken, ToolCall};
use retrace_protocol::{ApprovalDecision, McpPermission, ToolStatus};
use serde_json::{Map, Value};

use super::mcp::{LIST_RESOURCES, READ_RESOURCE};
use super::Agent;
use crate::seam::{ApprovalRequest, Approver};

/// How a request for resources ended before it was sent: refused (why), or cleared.
enum Cleared {
    Yes,
    No(ToolStatus, String),
}

impl Agent {
    /// Whether the servers' resources may be asked for: their permission, else an approval.
    /// `servers` are those the request goes to; `command` says it in an approval.
    async fn clear_resources(
        &self,
        mcp: &McpServers,
        call: &ToolCall,
        servers: &[String],
        command: String,
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> Cleared {
        let decisions: Vec<_> = servers.iter().map(|s| (s, mcp.decide_server(s))).collect();
        if let Some((s, d)) = decisions
            .iter()
            .find(|(_, d)| d.permission == McpPermission::Deny)
        {
            return Cleared::No(
                ToolStatus::Denied,
                format!(
                    "the MCP server `{s}` is denied ({}): nothing of it is read; it was not asked",
                    d.setting
                ),
            );
        }
        let Some((s, d)) = decisions.iter().find(|(_, d)| d.permission == McpPermission::Ask) else {
            return Cleared::Yes;
        };
        if !self.config.can_ask {
            return Cleared::No(
                ToolStatus::Denied,
                format!(
                    "reading the resources of the MCP server `{s}` needs approval ({}), and nobody can answer in a headless run; it was not asked (`permission = \"allow\"` in `[mcp_servers.{s}]` lets it be read)",
                    d.setting
                ),
            );
        }
        let request = ApprovalRequest {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            command,
        };
        let decision = approver.approve(request, cancel).await;
        if cancel.is_cancelled() {
            return Cleared::No(
                ToolStatus::Cancelled,
                "cancelled by the user before it ran".into(),
            );
        }
        if decision == ApprovalDecision::Deny {
            return Cleared::No(
                ToolStatus::Denied,
                format!(
                    "the user declined the call of `{}`; no server was asked. Ask what they want instead",
                    call.name
                ),
            );
        }
        Cleared::Yes
    }

    /// Clears `list_mcp_resources` or `read_mcp_resource` before anything is sent (the servers'
    /// permissions, an approval): the request to send, or why it is not sent. Nothing is
    /// recorded of a request refused here (no gap, no snapshot): no server was asked.
    pub(super) async fn clear_resource_call(
        &self,
        mcp: &McpServers,
        call: &ToolCall,
        args: &Map<String, Value>,
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> Result<ResourceRequest, (ToolStatus, String)> {
        if call.name == LIST_RESOURCES {
            // Those denied are left out of a listing without a word; the rest asked about at once.
            // Only the servers that started declaring resources are asked (and so are a gap).
            let servers: Vec<String> = mcp
                .enabled()
                .into_iter()
                .filter(|s| mcp.offers_resources(s))
                .filter(|s| mcp.decide_server(s).permission != McpPermission::Deny)
                .collect();
            let asked: Vec<&String> = servers
                .iter()
                .filter(|s| mcp.decide_server(s).permission == McpPermission::Ask)
                .collect();
            let mut listed = servers.clone();
            let mut unasked = String::new();
            if !asked.is_empty() {
                let names: Vec<String> = asked.iter().map(|s| format!("`{s}`")).collect();
                let command = format!("{LIST_RESOURCES} of {}", names.join(", "));
                let asked: Vec<String> = asked.into_iter().cloned().collect();
                if let Cleared::No(status, why) = self
                    .clear_resources(mcp, call, &asked, command, approver, cancel)
                    .await
                {
                    if status == ToolStatus::Cancelled {
                        return Err((status, why));
                    }
                    listed.retain(|s| !asked.contains(s));
                    unasked = format!("\n(not listed: {}: {why})", names.join(", "));
                }
            }
            return Ok(ResourceRequest {
                servers: listed,
                read: None,
                note: unasked,
            });
        }
        let field = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_string);
        let (Some(server), Some(uri)) = (field("server"), field("uri")) else {
            return Err((
                ToolStatus::Failed,
                format!("{READ_RESOURCE} needs `server` and `uri`, both strings"),
            ));
        };
        if !mcp.has_server(&server) {
            return Err((ToolStatus::Failed, format!("there is no MCP server `{server}`")));
        }
        if !mcp.offers_resources(&server) {
            return Err((
                ToolStatus::Failed,
                format!(
                    "the MCP server `{server}` offers no resources (it did not start, or declares none); it was not asked"
                ),
            ));
        }
        let command = format!("{READ_RESOURCE} {server} {uri}");
        if let Cleared::No(status, why) = self
            .clear_resources(
                mcp,
                call,
                std::slice::from_ref(&server),
                command,
                approver,
                cancel,
            )
            .await
        {
            return Err((status, why));
        }
        Ok(ResourceRequest {
            servers: vec![server],
            read: Some(uri),
            note: String::new(),
        })
    }

    /// Sends a cleared request ([`Agent::clear_resource_call`]): the text for the model, or why
    /// not.
    pub(super) async fn run_resource_call(
        &self,
        mcp: &McpServers,
        request: &ResourceRequest,
        cancel: &CancellationToken,
    ) -> Result<String, (ToolStatus, String)> {
        let cap = self.config.output_cap;
        let cancelled = || (ToolStatus::Cancelled, "cancelled by the user".to_string());
        let Some(uri) = &request.read else {
            let text = tokio::select! {
                t = mcp.list_resources(&request.servers, cap) => t,
                _ = cancel.cancelled() => return Err(cancelled()),
            };
            return Ok(format!("{text}{}", request.note));
        };
        let server = request.servers.first().map_or("", String::as_str);
        let read = tokio::select! {
            r = mcp.read_resource(server, uri, cap) => r,
            _ = cancel.cancelled() => return Err(cancelled()),
        };
        read.map_err(|e| (ToolStatus::Failed, e.to_string()))
    }
}

/// A resource request cleared to be sent: the servers it goes to, the URI to read (`None`: a
/// listing), and what a listing adds about the servers left out.
pub(super) struct ResourceRequest {
    /// The servers asked.
    pub(super) servers: Vec<String>,
    read: Option<String>,
    note: String,
}
