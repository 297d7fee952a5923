//! What a session asks of its servers besides tool calls: their resources (listed, read) and
//! their prompts' text.

use rmcp::model::{GetPromptRequestParams, PromptMessageContent, ReadResourceRequestParams};

use crate::error::{McpError, Result};
use crate::result::{cap_text, content_text, resource_text};
use crate::servers::{McpServers, State};

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
            let conn = match self.ready(slot, &mut state).await {
                Ok(c) if c.resources => c,
                Ok(_) => continue,
                Err(e) => {
                    out.push(format!("{}: {e}", slot.name));
                    continue;
                }
            };
            match conn.peer().list_all_resources().await {
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
                Err(e) => {
                    let e = conn.request_error(&slot.name, e).await;
                    out.push(format!("{}: {e}", slot.name));
                }
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
        let conn = self.ready(slot, &mut state).await?;
        let params = ReadResourceRequestParams {
            meta: None,
            uri: uri.to_string(),
        };
        match conn.peer().read_resource(params).await {
            Ok(r) => {
                let text: Vec<String> = r.contents.iter().map(resource_text).collect();
                Ok(cap_text(text.join("\n"), cap))
            }
            Err(e) => Err(conn.request_error(server, e).await),
        }
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
        let conn = self.ready(slot, &mut state).await?;
        let params = GetPromptRequestParams {
            meta: None,
            name: name.to_string(),
            arguments: Some(args),
        };
        match conn.peer().get_prompt(params).await {
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
            Err(e) => Err(conn.request_error(server, e).await),
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
