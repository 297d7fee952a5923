//! The MCP servers in the terminal UI (SPEC §8.1): `/mcp` lists them in the transcript (status,
//! tools with the read-only ones marked, prompts), and their prompts are listed by the `/`
//! palette as `/SERVER:PROMPT`; running one puts its text in the input, to be read and sent.

use retrace_protocol::{McpServerStatus, McpStatus};

use crate::app::App;
use crate::transcript::Entry;

impl App {
    /// The servers' answer: their prompts go to the palette; when `/mcp` asked (`show`), the list
    /// goes into the transcript.
    pub fn on_mcp(&mut self, servers: &[McpServerStatus], show: bool) {
        self.chat.mcp_prompts = servers
            .iter()
            .flat_map(|s| {
                s.prompts
                    .iter()
                    .map(|p| (format!("/{}:{}", s.server, p.name), p.description.clone()))
            })
            .collect();
        if !show {
            return;
        }
        self.message = None;
        let mut rows = Vec::new();
        if servers.is_empty() {
            rows.push((
                "mcp".to_string(),
                "no MCP server is configured ([mcp_servers.NAME] in the config)".to_string(),
            ));
        }
        for s in servers {
            let status = match (s.status, &s.error) {
                (McpStatus::Ready, _) => {
                    let tools = retrace_protocol::words::count(s.tools.len(), "tool");
                    match s.tools.iter().filter(|t| t.left_out.is_some()).count() {
                        0 => format!("ready · {tools}"),
                        n => format!("ready · {tools} ({n} left out)"),
                    }
                }
                (_, Some(e)) => format!("{} · {e}", s.status.as_str()),
                (other, None) => other.as_str().to_string(),
            };
            rows.push((s.server.clone(), status));
            for t in &s.tools {
                let ro = t.mark();
                let first = t.description.lines().next().unwrap_or_default();
                rows.push((
                    String::new(),
                    format!("mcp__{}__{}{ro}  {first}", s.server, t.name),
                ));
            }
            for p in &s.prompts {
                rows.push((
                    String::new(),
                    format!("/{}:{}  {}", s.server, p.name, p.description),
                ));
            }
        }
        self.transcript.push_local(Entry::Info { rows });
        self.chat.scroll = 0;
    }

    /// A prompt's text: it goes into the input, to be read, changed and sent.
    pub fn on_mcp_prompt(&mut self, text: &str) {
        self.input.set(text);
        self.message = Some("the prompt is in the input: Enter sends it".to_string());
    }
}
