//! What a session asks of its servers besides tool calls: their resources (listed, read) and
//! their prompts' text.

use std::time::Duration;

use rmcp::model::{GetPromptRequestParams, PromptMessageContent, ReadResourceRequestParams};
use rmcp::service::ServiceError;

use crate::error::{McpError, Result};
use crate::result::{cap_text, content_text, resource_text};
use crate::servers::{McpServers, Slot, State};
use retrace_protocol::DEFAULT_MCP_TOOL_TIMEOUT_MS;

/// Sends one request (`what`) to `slot`'s server (started when needed) and waits for its answer
/// at most the server's `tool_timeout_ms`: past it the server is stopped (a stdio server's
/// processes killed and waited for, a session over HTTP closed), so that nothing asked of it
/// runs any more, and started again at its next request.
async fn bounded<T, F>(
    servers: &McpServers,
    slot: &Slot,
    state: &mut State,
    what: &'static str,
    send: impl FnOnce(rmcp::Peer<rmcp::RoleClient>) -> F,
) -> Result<T>
where
    F: std::future::Future<Output = std::result::Result<T, ServiceError>>,
{
    let ms = slot.config.tool_timeout_ms.unwrap_or(DEFAULT_MCP_TOOL_TIMEOUT_MS);
    let peer = servers.ready(slot, state).await?.peer().clone();
    match tokio::time::timeout(Duration::from_millis(ms), send(peer)).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(e)) => match state {
            State::Ready(conn) => Err(conn.request_error(&slot.name, e).await),
            _ => Err(McpError::Died {
                server: slot.name.clone(),
                why: String::new(),
            }),
        },
        Err(_) => {
            if let State::Ready(conn) = std::mem::replace(state, State::Stopped) {
                conn.stop().await;
            }
            Err(McpError::RequestTimeout {
                server: slot.name.clone(),
                what,
                ms,
            })
        }
    }
}

impl McpServers {
    /// The resources of the servers named in `servers` that offer some (started when needed), as
    /// a listing for the model. The caller has cleared each (its permission, an approval); a
    /// denied server is still not asked for anything.
    pub async fn list_resources(&self, servers: &[String], cap: usize) -> String {
        let mut out = Vec::new();
        for slot in self
            .slots
            .iter()
            .filter(|s| s.config.is_enabled() && !self.denied(s) && servers.contains(&s.name))
        {
            let mut state = slot.state.lock().await;
            if matches!(*state, State::Failed(_)) {
                continue;
            }
            match self.ready(slot, &mut state).await {
                Ok(c) if c.resources => {}
                Ok(_) => continue,
                Err(e) => {
                    out.push(format!("{}: {e}", slot.name));
                    continue;
                }
            }
            let listed = bounded(self, slot, &mut state, "resources/list", |peer| async move {
                peer.list_all_resources().await
            })
            .await;
            match listed {
                Ok(list) => {
                    for r in list {
                        let mut line = format!("{}: {} ({})", slot.name, r.uri, r.name);
                        if let Some(m) = &r.mime_type {
                            line.push_str(&format!(", {m}"));
                        }
                        if let Some(d) = &r.description {
                            line.push_str(&format!(": {}", d.lines().next().unwrap_or_default()));
                        }
                        out.push(line);
                    }
                }
                Err(e) => out.push(format!("{}: {e}", slot.name)),
            }
        }
        if out.is_empty() {
            return "no MCP server offers resources".to_string();
        }
        cap_text(out.join("\n"), cap)
    }

    /// Reads the resource `uri` of `server`, as text for the model.
    pub async fn read_resource(&self, server: &str, uri: &str, cap: usize) -> Result<String> {
        let slot = self.slot(server)?;
        if self.denied(slot) {
            return Err(McpError::Denied(server.to_string()));
        }
        let mut state = slot.state.lock().await;
        let params = ReadResourceRequestParams {
            meta: None,
            uri: uri.to_string(),
        };
        let r = bounded(self, slot, &mut state, "resources/read", |peer| async move {
            peer.read_resource(params).await
        })
        .await?;
        let text: Vec<String> = r.contents.iter().map(resource_text).collect();
        Ok(cap_text(text.join("\n"), cap))
    }

    /// The text of `server`'s prompt `name` with `args`: its messages, each after its role.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        args: serde_json::Map<String, serde_json::Value>,
    ) -> Result<String> {
        let slot = self.slot(server)?;
        let mut state = slot.state.lock().await;
        let params = GetPromptRequestParams {
            meta: None,
            name: name.to_string(),
            arguments: Some(args),
        };
        let answer = bounded(self, slot, &mut state, "prompts/get", |peer| async move {
            peer.get_prompt(params).await
        })
        .await;
        match answer {
            Ok(r) => Ok(r
                .messages
                .iter()
                .map(|m| match &m.content {
                    PromptMessageContent::Text { text } => text.clone(),
                    PromptMessageContent::Image { image } => {
                        content_text(&rmcp::model::RawContent::Image(image.raw.clone()))
                    }
                    PromptMessageContent::Resource { resource } => resource_text(&resource.resource),
                    PromptMessageContent::ResourceLink { link } => {
                        content_text(&rmcp::model::RawContent::ResourceLink(link.raw.clone()))
                    }
                })
                .collect::<Vec<_>>()
                .join("\n\n")),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use retrace_protocol::{McpPermission, McpServerConfig};

    use super::*;

    /// Found by an attack: the resources of a denied server were listed and read.
    #[tokio::test]
    async fn a_denied_servers_resources_are_neither_listed_nor_read() {
        let config = McpServerConfig {
            // Never started: a denied server is not asked for anything.
            command: Some("/nonexistent/never-run".into()),
            permission: Some(McpPermission::Deny),
            ..Default::default()
        };
        let servers = McpServers::new(
            BTreeMap::from([("evil".to_string(), config)]),
            PathBuf::from("/"),
            Vec::new(),
            std::sync::Arc::new(|_| None),
            McpPermission::Allow,
        );
        assert!(!servers
            .list_resources(&servers.enabled(), 1000)
            .await
            .contains("evil"));
        let e = servers.read_resource("evil", "evil://r", 1000).await.unwrap_err();
        assert!(e.to_string().contains("denied"), "{e}");
    }
}
