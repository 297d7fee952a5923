//! The commands of `retrace` (SPEC §11), one module each: its `#[derive(clap::Args)]` struct, whose
//! doc comment is the command's help, and its `run`. The flags several commands share are one
//! struct each in `args`, flattened where used. `retrace` with no command is `ui`, whose flags
//! are the command line's top level.

pub mod args;
pub mod checkpoints;
pub mod compact;
pub mod config;
pub mod demo;
pub mod diff;
pub mod exec;
pub mod fork;
pub mod fsck;
pub mod heads;
pub mod history;
pub mod mcp;
pub mod redo;
pub mod revert;
pub mod rewind;
pub mod serve;
pub mod sessions;
pub mod summarize;
pub mod switch;
pub mod transcript;
pub mod ui;
pub mod undo;

use crate::failure::CmdResult;
use crate::report::JsonOut;

/// The commands, in the order `retrace --help` lists them.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    Exec(exec::ExecArgs),
    Sessions(sessions::SessionsArgs),
    Transcript(transcript::TranscriptArgs),
    Checkpoints(checkpoints::CheckpointsArgs),
    Diff(diff::DiffArgs),
    History(history::HistoryArgs),
    Fsck(fsck::FsckArgs),
    Rewind(rewind::RewindArgs),
    Undo(undo::UndoArgs),
    Redo(redo::RedoArgs),
    Revert(revert::RevertArgs),
    Fork(fork::ForkArgs),
    Summarize(summarize::SummarizeArgs),
    Compact(compact::CompactArgs),
    Heads(heads::HeadsArgs),
    Switch(switch::SwitchArgs),
    Serve(serve::ServeArgs),
    Config(config::ConfigArgs),
    Mcp(mcp::McpArgs),
    Demo(demo::DemoArgs),
}

impl Command {
    /// Runs the command.
    pub fn run(self) -> CmdResult {
        match self {
            Command::Exec(a) => exec::run(a),
            Command::Sessions(a) => sessions::run(a),
            Command::Transcript(a) => transcript::run(a),
            Command::Checkpoints(a) => checkpoints::run(a),
            Command::Diff(a) => diff::run(a),
            Command::History(a) => history::run(a),
            Command::Fsck(a) => fsck::run(a),
            Command::Rewind(a) => rewind::run(a),
            Command::Undo(a) => undo::run(a),
            Command::Redo(a) => redo::run(a),
            Command::Revert(a) => revert::run(a),
            Command::Fork(a) => fork::run(a),
            Command::Summarize(a) => summarize::run(a),
            Command::Compact(a) => compact::run(a),
            Command::Heads(a) => heads::run(a),
            Command::Switch(a) => switch::run(a),
            Command::Serve(a) => serve::run(a),
            Command::Config(a) => config::run(a),
            Command::Mcp(a) => mcp::run(a),
            Command::Demo(a) => demo::run(a),
        }
    }

    /// How a failure of the command is printed besides standard error (`--json`).
    pub fn json_out(&self) -> JsonOut {
        let json = match self {
            Command::Exec(a) if a.json => return JsonOut::ExecResult,
            Command::Exec(_) | Command::Serve(_) | Command::Demo(_) => false,
            Command::Sessions(a) => a.json,
            Command::Transcript(a) => a.json,
            Command::Checkpoints(a) => a.json,
            Command::Diff(a) => a.json,
            Command::History(a) => a.json,
            Command::Fsck(a) => a.json,
            Command::Rewind(a) => a.json,
            Command::Undo(a) => a.json,
            Command::Redo(a) => a.json,
            Command::Revert(a) => a.json,
            Command::Fork(a) => a.json,
            Command::Summarize(a) => a.json,
            Command::Compact(a) => a.json,
            Command::Heads(a) => a.json,
            Command::Switch(a) => a.json,
            Command::Config(a) => a.json,
            Command::Mcp(a) => a.json(),
        };
        if json {
            JsonOut::Document
        } else {
            JsonOut::No
        }
    }

    /// Whether the command talks over sockets or pipes (to a model server, to browsers, to MCP
    /// servers, which may exit while it writes), where SIGPIPE must stay ignored (`main`).
    pub fn talks_over_sockets(&self) -> bool {
        matches!(
            self,
            Command::Exec(_)
                | Command::Serve(_)
                | Command::Summarize(_)
                | Command::Compact(_)
                | Command::Mcp(_)
        )
    }
}
