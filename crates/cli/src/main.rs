//! `retrace`: the binary. Parses the command line (SPEC §11), wires the crates together and maps
//! errors to the exit codes of the CLI contract: 0 ok, 1 error, 2 usage, 3 refused, 4 confirmation
//! required.

mod checkpoints;
mod common;
mod config;
mod demo;
mod exec;
mod output;
mod sessions;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::common::{CmdResult, Failure};

/// Retrace: a coding agent whose every edit can be taken back.
#[derive(Debug, Parser)]
#[command(name = "retrace", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one turn headless.
    Exec {
        /// Continue this session (its own workspace is used).
        #[arg(long)]
        session: Option<String>,
        /// The workspace (default: the current directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// The model: `deepseek:NAME` (default provider), `openai:NAME`, `script:FILE` or `demo`.
        #[arg(long)]
        model: Option<String>,
        /// An OpenAI-compatible endpoint (requests go to `<URL>/chat/completions`).
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        /// Let the agent run shell commands (denied by default when headless).
        #[arg(long)]
        allow_bash: bool,
        /// Print events as JSON Lines; the last line is the result.
        #[arg(long)]
        json: bool,
        /// What the agent should do.
        prompt: String,
    },
    /// List the sessions of the workspace.
    Sessions {
        /// The workspace (default: the current directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print a head's messages.
    Transcript {
        /// The session.
        #[arg(long)]
        session: String,
        /// The head (id or name; default: the selected one).
        #[arg(long)]
        head: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List checkpoints of a session, or of any sidecar directory (legacy formats too; read-only).
    Checkpoints {
        /// The session whose checkpoints to list.
        #[arg(long, conflicts_with = "sidecar", required_unless_present = "sidecar")]
        session: Option<String>,
        /// A checkpoint sidecar directory (`<session>.ckpt`).
        #[arg(long, value_name = "DIR")]
        sidecar: Option<PathBuf>,
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Verify every record and payload; exit 0 only when no problem fails.
    Fsck {
        /// The session whose sidecar to check.
        #[arg(long, conflicts_with = "sidecar", required_unless_present = "sidecar")]
        session: Option<String>,
        /// The checkpoint sidecar directory to check.
        #[arg(long, value_name = "DIR")]
        sidecar: Option<PathBuf>,
        /// Print `{ok, problems}` as JSON.
        #[arg(long)]
        json: bool,
    },
    /// A narrated run of the built-in demo model on a scratch workspace (no API key needed).
    Demo,
}

fn run(cli: Cli) -> CmdResult {
    let cfg = || config::load(&common::env).map_err(|e| Failure { code: 2, error: e });
    match cli.command {
        Command::Exec {
            session,
            workspace,
            model,
            base_url,
            allow_bash,
            json,
            prompt,
        } => exec::run(
            &cfg()?,
            exec::ExecArgs {
                session: session.as_deref(),
                workspace: workspace.as_deref(),
                model: model.as_deref(),
                base_url: base_url.as_deref(),
                allow_bash,
                json,
                prompt: &prompt,
            },
        ),
        Command::Sessions { workspace, json } => sessions::list(workspace.as_deref(), json),
        Command::Transcript { session, head, json } => sessions::transcript(&session, head.as_deref(), json),
        Command::Checkpoints {
            session,
            sidecar,
            json,
        } => match (session, sidecar) {
            (Some(id), _) => checkpoints::list_session(&id, json),
            (None, Some(dir)) => Ok(checkpoints::list(&dir, json)?),
            (None, None) => Err(Failure::usage("give --session ID or --sidecar DIR")),
        },
        Command::Fsck {
            session,
            sidecar,
            json,
        } => match (session, sidecar) {
            (Some(id), _) => checkpoints::fsck_session(&id, json),
            (None, Some(dir)) => Ok(checkpoints::fsck(&dir, json)?),
            (None, None) => Err(Failure::usage("give --session ID or --sidecar DIR")),
        },
        Command::Demo => demo::run(),
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(f) => {
            eprintln!("retrace: error: {:#}", f.error);
            ExitCode::from(f.code)
        }
    }
}
