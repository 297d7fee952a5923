//! Every server as `retrace mcp list` and the frontends show it: its state, why it failed, its
//! tools (which are left out and why, which are read-only and on whose word) and prompts.

use retrace_protocol::{McpServerStatus, McpStatus, McpToolInfo};

use crate::catalog::hinted_read_only;
use crate::servers::{McpServers, State};

impl McpServers {
    /// Every server as `retrace mcp list` shows it, after starting those never started.
    pub async fn status(&self) -> Vec<McpServerStatus> {
        self.start_all().await;
        // Before any server's listing is locked: the catalog locks each of them.
        let catalog = self.catalog();
        let mut out = Vec::new();
        for slot in &self.slots {
            let state = slot.state.lock().await;
            let (status, error) = match (&*state, slot.config.is_enabled()) {
                (_, false) => (McpStatus::Disabled, None),
                (State::Idle, true) => (McpStatus::NotStarted, None),
                (State::Ready(_) | State::Stopped, true) => (McpStatus::Ready, None),
                (State::Failed(why), true) => (McpStatus::Failed, Some(why.clone())),
            };
            let (tools, prompts) = match (status, slot.offered.lock()) {
                (McpStatus::Ready, Ok(o)) => {
                    let why = |tool: &str| {
                        catalog
                            .left_out
                            .iter()
                            .find(|l| l.server == slot.name && l.tool == tool)
                            .map(|l| l.why.clone())
                    };
                    let listed = o.tools.iter().map(|t| McpToolInfo {
                        name: t.name.to_string(),
                        description: t.description.as_deref().unwrap_or_default().to_string(),
                        read_only: hinted_read_only(t),
                        vouched_read_only: slot.config.vouches_read_only(
                            &slot.name,
                            &t.name,
                            hinted_read_only(t),
                        ),
                        left_out: why(&t.name),
                    });
                    let unread = o.skipped.iter().map(|s| McpToolInfo {
                        name: s.name.clone(),
                        description: String::new(),
                        read_only: false,
                        vouched_read_only: false,
                        left_out: Some(s.why.clone()),
                    });
                    (listed.chain(unread).collect(), o.prompts.clone())
                }
                _ => (Vec::new(), Vec::new()),
            };
            out.push(McpServerStatus {
                server: slot.name.clone(),
                status,
                error,
                tools,
                prompts,
            });
        }
        out
    }
}
