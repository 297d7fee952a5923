//! How a service opens the agent of a session: the model, the tools' view of the workspace (what
//! is off limits, which variables shell commands never see) and the agent's settings.

use std::path::Path;
use std::sync::Arc;

use retrace_agent::{Agent, AgentConfig, McpServers};
use retrace_model::{open_model, ChatModel, ModelOptions};
use retrace_protocol::{ErrorCode, ModelSpec, Provider};
use retrace_tools::Workspace;

use crate::actor::AgentFactory;
use crate::error::{coded, Result};
use crate::options::ServiceOptions;

/// Opens a model, and an agent around it on the workspace `root`.
pub(super) fn factory(opts: &ServiceOptions, root: &Path) -> AgentFactory {
    let (opts, root) = (opts.clone(), root.to_path_buf());
    Arc::new(move |spec: &ModelSpec| {
        let model = open_model(spec, &ModelOptions::default(), &*opts.env)?;
        let mut ws = workspace_of(&root, &opts)?;
        if let Some(var) = &spec.api_key_env {
            // The key of a model set after opening (a resumed session's own) is hidden too.
            ws = ws.with_hidden_env(var);
        }
        Ok(agent(&opts, ws, model, spec))
    })
}

/// The agent of a session on `ws` with `model` (which `spec` names): the service's settings, and
/// the MCP servers of the config (none started yet).
pub(super) fn agent(
    opts: &ServiceOptions,
    ws: Workspace,
    model: Box<dyn ChatModel>,
    spec: &ModelSpec,
) -> Agent {
    let hidden = ws.hidden_env().to_vec();
    let root = ws.root().to_path_buf();
    let agent = Agent::new(ws, model, agent_config(opts, spec));
    match opts.mcp_servers.is_empty() {
        true => agent,
        false => agent.with_mcp(Arc::new(mcp_servers(opts, &root, hidden))),
    }
}

/// The MCP servers of a session on `root` (none started): their processes never see the
/// variables `hidden` names (the API keys).
pub(super) fn mcp_servers(opts: &ServiceOptions, root: &Path, hidden: Vec<String>) -> McpServers {
    let env = opts.env.clone();
    McpServers::new(
        opts.mcp_servers.clone(),
        root.to_path_buf(),
        hidden,
        Arc::new(move |k: &str| env(k)),
        opts.mcp,
    )
}

/// The tools' view of a session's workspace: the data root and the places `opts` names are off
/// limits, and so is `.git/` unless allowed (SPEC §8).
pub(super) fn workspace_of(root: &Path, opts: &ServiceOptions) -> Result<Workspace> {
    let mut ws = Workspace::new(root)
        .map_err(|e| coded(ErrorCode::Usage, e.to_string()))?
        .with_git(opts.allow_git)
        .with_off_limits(
            &opts.data_root,
            "Retrace's data directory (sessions and checkpoints)",
        );
    for (p, what) in &opts.off_limits {
        ws = ws.with_off_limits(p, what);
    }
    let mut hidden: Vec<&str> = [Provider::DeepSeek, Provider::OpenAi]
        .into_iter()
        .filter_map(Provider::api_key_env)
        .collect();
    hidden.extend(opts.model.iter().filter_map(|m| m.api_key_env.as_deref()));
    hidden.extend(opts.hidden_env.iter().map(String::as_str));
    for name in hidden {
        ws = ws.with_hidden_env(name);
    }
    Ok(ws)
}

/// The agent settings a service gives every session that uses the model `spec`.
pub(super) fn agent_config(opts: &ServiceOptions, spec: &ModelSpec) -> AgentConfig {
    AgentConfig {
        bash_policy: opts.bash,
        can_ask: opts.can_ask,
        max_steps: opts.max_steps,
        budget: retrace_agent::ContextBudget {
            window: opts
                .context_window
                .unwrap_or_else(|| retrace_model::default_context_window(spec)),
            compact_at: opts.compact_at,
        },
        ..AgentConfig::default()
    }
}
