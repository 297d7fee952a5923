//! `retrace`: the binary. Parses the command line (SPEC §11), runs the command, and maps its
//! failure to the exit codes of the CLI contract: 0 ok, 1 error, 2 usage, 3 refused, 4
//! confirmation required. Each command is a module of `commands/`.

mod commands;
mod common;
mod config;
mod event_text;
mod exit;
mod failure;
mod item_text;
mod model;
mod output;
mod plan_text;
mod report;
mod signals;

use std::process::ExitCode;

use clap::Parser;

use crate::commands::Command;
use crate::report::JsonOut;

/// The exit codes of every command (SPEC §11), as `--help` lists them.
const EXIT_CODES: &str =
    "Exit codes: 0 ok, 1 error, 2 usage, 3 refused (the plan or the reason is printed), \
4 confirmation required (run again with --yes). With --json, a failure is JSON on standard output too: \
{\"ok\": false, \"error\": {\"code\", \"message\", \"details\"}} (for exec, the last line \
{\"type\": \"result\", \"ok\": false, \"error\"}).";

/// Retrace: a coding agent whose every edit can be taken back.
///
/// With no command, the terminal UI: Esc Esc rewinds to any earlier turn.
#[derive(Debug, Parser)]
#[command(
    name = "retrace",
    version,
    about,
    args_conflicts_with_subcommands = true,
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    ui: commands::ui::UiArgs,
}

/// Restores the default SIGPIPE action, so `retrace … | head` ends quietly like other Unix tools
/// instead of failing to print.
#[allow(unsafe_code)]
fn default_sigpipe() {
    use nix::sys::signal::{signal, SigHandler, Signal};
    // SAFETY: called first thing in `main`, before any other thread exists; SIG_DFL installs no
    // Rust code as a handler.
    let _ = unsafe { signal(Signal::SIGPIPE, SigHandler::SigDfl) };
}

/// Keeps this process's memory and `/proc/<pid>/environ` (which hold the API keys) from other
/// processes of the same user, the shell commands the agent runs among them: they could read
/// the keys there even though their own environment has none (found by attack).
fn guard_secrets() {
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_dumpable(false);
}

/// The command line, with the exit codes at the end of every command's `--help`.
fn parse() -> Result<Cli, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let matches = Cli::command()
        .mut_subcommands(|c| c.after_help(EXIT_CODES))
        .try_get_matches()?;
    Cli::from_arg_matches(&matches)
}

fn main() -> ExitCode {
    guard_secrets();
    let cli = match parse() {
        Ok(cli) => cli,
        Err(e) => return report::parse_failure(e),
    };
    let json = cli.command.as_ref().map_or(JsonOut::No, Command::json_out);
    // `exec` handles a closed standard output itself (the turn is cancelled cleanly, never killed
    // in the middle of a tool call); the other commands end quietly like other Unix tools. Those
    // that talk over sockets, and the terminal UI, keep SIGPIPE ignored: a peer that resets its
    // connection (a browser, a model server) must get an error on that connection, not kill the
    // process (`serve` would lose every session without closing it).
    if cli.command.as_ref().is_some_and(|c| !c.talks_over_sockets()) {
        default_sigpipe();
    }
    let result = match cli.command {
        Some(command) => command.run(),
        None => commands::ui::run(cli.ui),
    };
    match result {
        Ok(code) => code,
        Err(f) => report::report(&f, json),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// clap's own checks of the command line (conflicts and requirements naming flags that
    /// exist, no flag defined twice), with the rewordings of the shared flags applied.
    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
