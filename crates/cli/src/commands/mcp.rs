//! `retrace mcp list [--json]`: the configured MCP servers (SPEC §8.1), each started to list its
//! tools and stopped again: its status, why it failed, its tools (read-only or not) and prompts.

use std::path::PathBuf;
use std::process::ExitCode;

use retrace_protocol::words::count;
use retrace_protocol::{McpServerStatus, McpStatus};

use crate::common::{load_config, print_json, runtime, service_options, workspace_arg};
use crate::failure::CmdResult;
use crate::output::{first_line, say, shown_path};

/// The MCP servers of the config (`[mcp_servers.NAME]`).
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    #[command(subcommand)]
    pub action: McpAction,
}

#[derive(Debug, clap::Subcommand)]
pub enum McpAction {
    /// Start each configured server (then stop it) and list its status and tools.
    List {
        /// The workspace the servers run in (default: the current directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Print JSON: `[{server, status, error?, tools: [{name, description, read_only, vouched_read_only, left_out?}], prompts?}]`.
        #[arg(long)]
        json: bool,
    },
}

impl McpArgs {
    /// Whether it prints JSON.
    pub fn json(&self) -> bool {
        match &self.action {
            McpAction::List { json, .. } => *json,
        }
    }
}

/// `retrace mcp list`.
pub fn run(a: McpArgs) -> CmdResult {
    let McpAction::List { workspace, json } = a.action;
    let cfg = load_config()?;
    let workspace = workspace_arg(workspace.as_deref())?;
    let opts = service_options(&cfg, None, false)?;
    let rt = runtime()?;
    let service = retrace_control::Service::new(opts);
    // A signal while servers start stops them (their process groups killed) and quits.
    let stopped = rt.block_on(async {
        let quit = crate::signals::quit_signals()?;
        Ok::<_, crate::failure::Failure>(tokio::select! {
            list = service.mcp_list(&workspace) => Ok(list?),
            name = quit => Err(name),
        })
    })?;
    let (list, notices) = match stopped {
        Ok(list) => list,
        Err(name) => {
            retrace_control::kill_running_mcp_servers();
            say(&format!(
                "\nretrace: stopped ({name}); the servers being started were stopped"
            ));
            return Ok(ExitCode::from(130));
        }
    };
    drop(service);
    // Said on stderr (the listing's JSON is unchanged): a name in the config matching no tool.
    for n in &notices {
        say(&format!("retrace: {}", crate::output::shown_path(n)));
    }
    // The listing is printed either way; when no enabled server started, it is an error (1),
    // so that a script checking its config sees it.
    let enabled = list.iter().filter(|s| s.status != McpStatus::Disabled).count();
    let failed = list.iter().filter(|s| s.status == McpStatus::Failed).count();
    let end = match enabled > 0 && failed == enabled {
        true => {
            say(&format!(
                "retrace: no MCP server started: {} failed",
                count(failed, "enabled server")
            ));
            ExitCode::from(1)
        }
        false => ExitCode::SUCCESS,
    };
    if json {
        print_json(&list)?;
        return Ok(end);
    }
    if list.is_empty() {
        println!(
            "no MCP server is configured (`[mcp_servers.NAME]` in the config; `retrace config --example`)"
        );
    }
    for s in &list {
        print_server(s);
    }
    Ok(end)
}

/// One server in words.
fn print_server(s: &McpServerStatus) {
    let left_out = s.tools.iter().filter(|t| t.left_out.is_some()).count();
    let tools = match (s.status, left_out) {
        (McpStatus::Ready, 0) => format!(", {}", count(s.tools.len(), "tool")),
        (McpStatus::Ready, n) => format!(", {} ({n} left out)", count(s.tools.len(), "tool")),
        _ => String::new(),
    };
    println!("{}  {}{tools}", shown_path(&s.server), s.status.as_str());
    if let Some(e) = &s.error {
        println!("  {}", shown_path(e));
    }
    for t in &s.tools {
        println!(
            "  mcp__{}__{}{}  {}",
            shown_path(&s.server),
            shown_path(&t.name),
            shown_path(&t.mark()),
            first_line(&t.description, 100)
        );
    }
    for p in &s.prompts {
        println!(
            "  prompt /{}:{}  {}",
            shown_path(&s.server),
            shown_path(&p.name),
            first_line(&p.description, 100)
        );
    }
}
