//! `retrace`: the binary. Parses the command line (SPEC §11), wires the crates together and maps
//! errors to the exit codes of the CLI contract: 0 ok, 1 error, 2 usage, 3 refused, 4 confirmation
//! required.

mod checkpoints;
mod demo;
mod output;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Retrace: a coding agent whose every edit can be taken back.
#[derive(Debug, Parser)]
#[command(name = "retrace", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the checkpoints of a sidecar directory (legacy formats too; read-only).
    Checkpoints {
        /// The checkpoint sidecar directory to list (`<session>.ckpt`).
        #[arg(long, value_name = "DIR")]
        sidecar: PathBuf,
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Verify every record and payload of a sidecar; exit 0 only when no problem fails.
    Fsck {
        /// The checkpoint sidecar directory to check.
        #[arg(long, value_name = "DIR")]
        sidecar: PathBuf,
        /// Print `{ok, problems}` as JSON.
        #[arg(long)]
        json: bool,
    },
    /// A narrated walk through capture and listing on a scratch workspace (no API key needed).
    Demo,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Checkpoints { sidecar, json } => checkpoints::list(&sidecar, json),
        Command::Fsck { sidecar, json } => checkpoints::fsck(&sidecar, json),
        Command::Demo => demo::run(),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("retrace: error: {e:#}");
            ExitCode::from(1)
        }
    }
}
