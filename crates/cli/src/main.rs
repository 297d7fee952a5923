//! `retrace`: the binary. Parses the command line (SPEC §11), wires the crates together and maps
//! errors to the exit codes of the CLI contract: 0 ok, 1 error, 2 usage, 3 refused, 4 confirmation
//! required.

mod checkpoints;
mod common;
mod config;
mod config_cmd;
mod demo;
mod exec;
mod exit;
mod item_text;
mod output;
mod rewind;
mod serve;
mod sessions;
mod sessions_remove;
mod ui;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use retrace_protocol::{OnConflict, RewindScope, SummarizeDirection};

use crate::common::{CmdResult, Failure};

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
    /// Open this session in the terminal UI (its own workspace is used).
    #[arg(long, conflicts_with = "continue_latest")]
    session: Option<String>,
    /// Open the latest session of the workspace (found from any subdirectory of it).
    #[arg(short = 'c', long = "continue")]
    continue_latest: bool,
    /// The workspace (default: the current directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// The model: `deepseek:NAME` (default provider), `openai:NAME`, `script:FILE` or `demo`.
    #[arg(long)]
    model: Option<String>,
    /// An OpenAI-compatible endpoint (requests go to `<URL>/chat/completions`).
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one turn headless.
    Exec {
        /// Continue this session (its own workspace is used).
        #[arg(long, conflicts_with = "continue_latest")]
        session: Option<String>,
        /// Continue the latest session of the workspace (found from any subdirectory of it).
        #[arg(short = 'c', long = "continue")]
        continue_latest: bool,
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
        /// Model requests the turn may make (default 50).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        max_steps: Option<u32>,
        /// Plan mode: the model may only read, and proposes a plan (writes are refused).
        #[arg(long)]
        plan: bool,
        /// Read the prompt from this file.
        #[arg(long, value_name = "FILE", conflicts_with = "prompt")]
        prompt_file: Option<PathBuf>,
        /// What the agent should do; `-` (or none, with a pipe on standard input) reads it from
        /// standard input.
        prompt: Option<String>,
    },
    /// List the sessions of the workspace (newest first); delete or prune them.
    Sessions {
        #[command(subcommand)]
        action: Option<SessionsAction>,
        /// The workspace (default: the current directory).
        #[arg(long, value_name = "DIR", global = true)]
        workspace: Option<PathBuf>,
        /// Print JSON.
        #[arg(long, global = true)]
        json: bool,
    },
    /// Print a head's messages.
    Transcript {
        #[command(flatten)]
        s: SessionArgs,
        /// The head (id or name; default: the selected one).
        #[arg(long)]
        head: Option<String>,
        /// Print the head's items (prompts, answers, tool calls with status and diffs,
        /// checkpoints, notes) as every frontend shows them, instead of its raw messages.
        #[arg(long)]
        items: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List checkpoints of a session, or of any sidecar directory (legacy formats too; read-only).
    Checkpoints {
        /// The session whose checkpoints to list.
        #[command(flatten)]
        s: SessionArgs,
        /// A checkpoint sidecar directory (`<session>.ckpt`).
        #[arg(long, value_name = "DIR", conflicts_with_all = ["session", "continue_latest", "workspace"])]
        sidecar: Option<PathBuf>,
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Verify every record and payload (and a session's log); exit 0 only when no problem fails.
    Fsck {
        /// The session whose log and sidecar to check.
        #[command(flatten)]
        s: SessionArgs,
        /// The checkpoint sidecar directory to check.
        #[arg(long, value_name = "DIR", conflicts_with_all = ["session", "continue_latest", "workspace"])]
        sidecar: Option<PathBuf>,
        /// Repair the session's log first: every line it cannot read moves into
        /// `<session>.damaged-<n>` beside it (never deleted); then check.
        #[arg(long, conflicts_with = "sidecar")]
        repair: bool,
        /// Print `{ok, problems}` as JSON (with `repair`, what it did).
        #[arg(long)]
        json: bool,
    },
    /// Rewind code, conversation or both to a turn (prepare, then commit in place).
    Rewind {
        #[command(flatten)]
        s: SessionArgs,
        /// The turn to rewind to.
        #[arg(long)]
        turn: u64,
        /// What to restore.
        #[arg(long, value_enum)]
        scope: ScopeArg,
        /// Prepare and print the plan only.
        #[arg(long)]
        dry_run: bool,
        /// Confirm a restore that spans untracked changes (shell commands, legacy records).
        #[arg(long)]
        yes: bool,
        /// What to do with files changed since Retrace wrote them.
        #[arg(long, value_enum, default_value = "refuse")]
        on_conflict: OnConflictArg,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Undo the last rewind.
    Undo {
        #[command(flatten)]
        s: SessionArgs,
        /// The transaction to undo (must be the last rewind).
        #[arg(long)]
        transaction: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Revert one file to its state before the session first touched it.
    Revert {
        #[command(flatten)]
        s: SessionArgs,
        /// The file (relative to the workspace).
        path: PathBuf,
        /// Replace the file even if it changed since Retrace wrote it (undoable).
        #[arg(long)]
        overwrite: bool,
        /// Confirm a revert that spans untracked changes (a shell command in a turn that touched it).
        #[arg(long)]
        yes: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// A new head that ends just before a turn (selected); code untouched.
    Fork {
        #[command(flatten)]
        s: SessionArgs,
        /// The turn.
        #[arg(long)]
        turn: u64,
        /// A name for the head.
        #[arg(long)]
        name: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Replace the conversation from (or up to) a turn by a summary, on a new selected head.
    Summarize {
        #[command(flatten)]
        s: SessionArgs,
        /// The turn.
        #[arg(long)]
        turn: u64,
        /// Summarize this turn and everything after it.
        #[arg(long, conflicts_with = "up_to", required_unless_present = "up_to")]
        from: bool,
        /// Summarize everything before this turn.
        #[arg(long)]
        up_to: bool,
        /// The model that writes the summary.
        #[arg(long)]
        model: Option<String>,
        /// An OpenAI-compatible endpoint.
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Compact the selected head now: the model summarizes everything before its latest turn
    /// into a new selected summary head; the original head stays a version.
    Compact {
        #[command(flatten)]
        s: SessionArgs,
        /// The model that writes the summary.
        #[arg(long)]
        model: Option<String>,
        /// An OpenAI-compatible endpoint.
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the heads of a session.
    Heads {
        #[command(flatten)]
        s: SessionArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Select a head (id or name).
    Switch {
        #[command(flatten)]
        s: SessionArgs,
        /// The head.
        head: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The HTTP API and the web UI (SPEC §9.3; docs/API.md): open the address printed on the
    /// first line. Runs until interrupted (SIGINT or SIGTERM).
    Serve {
        /// The address to listen on (an IP address or `localhost`).
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        /// The port (0 picks a free one).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Listen on an address that is not a loopback one (other machines can reach the API).
        #[arg(long)]
        allow_remote: bool,
        /// The workspace of new sessions (default: the current directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// The model: `deepseek:NAME` (default provider), `openai:NAME`, `script:FILE` or `demo`.
        #[arg(long)]
        model: Option<String>,
        /// An OpenAI-compatible endpoint (requests go to `<URL>/chat/completions`).
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
    },
    /// Show the settings in effect (config file, model endpoint and key variable, permissions).
    Config {
        /// Print a config file with every key explained, instead.
        #[arg(long, conflicts_with_all = ["model", "base_url", "json"])]
        example: bool,
        /// Show where this model's requests would go.
        #[arg(long)]
        model: Option<String>,
        /// As `exec --base-url`.
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The terminal UI on a scratch workspace with the built-in demo model (no API key needed);
    /// a narrated run instead when standard output is not a terminal.
    Demo {
        /// Print the narrated run even on a terminal.
        #[arg(long)]
        headless: bool,
    },
}

#[derive(Debug, Subcommand)]
enum SessionsAction {
    /// Delete a session: its log, its lease and its whole checkpoint sidecar (refused while a
    /// process writes it).
    Delete {
        /// The session: its id or any unambiguous prefix of it.
        id: String,
    },
    /// Delete the sessions of the workspace (or, with --all, of every workspace) whose log was
    /// last written longer ago than AGE; sessions a process writes are kept.
    Prune {
        /// An age: a number and a unit (s, m, h, d, w), like 30d.
        #[arg(long, value_name = "AGE")]
        older_than: String,
        /// Every session of the data directory, not only this workspace's.
        #[arg(long, conflicts_with = "workspace")]
        all: bool,
        /// List what would be deleted; delete nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

/// `--session ID | -c [--workspace DIR]` of every command that works on one session.
#[derive(Debug, clap::Args)]
struct SessionArgs {
    /// The session: its id or any unambiguous prefix of it.
    #[arg(long, value_name = "ID", conflicts_with = "continue_latest")]
    session: Option<String>,
    /// The latest session of the workspace (found from any subdirectory of it).
    #[arg(short = 'c', long = "continue")]
    continue_latest: bool,
    /// With --session: must be the session's own workspace; with -c: the workspace whose latest
    /// session (default: the current directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
}

impl SessionArgs {
    /// The whole id of the session named, and the workspace to hold it to.
    fn pick(&self) -> Result<common::Picked, Failure> {
        common::pick_session(&self.as_pick())
    }

    /// As `pick`, for a command that only reads.
    fn pick_to_read(&self) -> Result<common::Picked, Failure> {
        common::pick_session_to_read(&self.as_pick())
    }

    fn as_pick(&self) -> common::SessionPick<'_> {
        common::SessionPick {
            session: self.session.as_deref(),
            continue_latest: self.continue_latest,
            workspace: self.workspace.as_deref(),
        }
    }
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ScopeArg {
    Code,
    Conversation,
    Both,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum OnConflictArg {
    Refuse,
    Skip,
    Overwrite,
}

fn run(cli: Cli) -> CmdResult {
    let cfg = || config::load(&common::env).map_err(|e| Failure { code: 2, error: e });
    let Some(command) = cli.command else {
        let session = common::whole_id(cli.session.as_deref())?;
        return ui::run(
            &cfg()?,
            ui::UiArgs {
                session: session.as_deref(),
                continue_latest: cli.continue_latest,
                workspace: cli.workspace.as_deref(),
                model: cli.model.as_deref(),
                base_url: cli.base_url.as_deref(),
            },
        );
    };
    match command {
        Command::Exec {
            session,
            continue_latest,
            workspace,
            model,
            base_url,
            allow_bash,
            json,
            max_steps,
            plan,
            prompt_file,
            prompt,
        } => exec::run(
            &cfg()?,
            exec::ExecArgs {
                session: session.as_deref(),
                continue_latest,
                workspace: workspace.as_deref(),
                model: model.as_deref(),
                base_url: base_url.as_deref(),
                allow_bash,
                json,
                max_steps,
                plan,
                prompt: &exec::read_prompt(prompt.as_deref(), prompt_file.as_deref())?,
            },
        ),
        Command::Sessions {
            action,
            workspace,
            json,
        } => match action {
            None => sessions::list(workspace.as_deref(), json),
            Some(SessionsAction::Delete { id }) => {
                sessions_remove::delete(&common::session_to_delete(&id)?, json)
            }
            Some(SessionsAction::Prune {
                older_than,
                all,
                dry_run,
            }) => sessions_remove::prune(&older_than, all, workspace.as_deref(), dry_run, json),
        },
        Command::Transcript { s, head, items, json } => match items {
            true => sessions::items(&s.pick_to_read()?.id, head.as_deref(), json),
            false => sessions::transcript(&s.pick_to_read()?.id, head.as_deref(), json),
        },
        Command::Checkpoints { s, sidecar, json } => match sidecar {
            Some(dir) => checkpoints::list(&dir, json),
            None => checkpoints::list_session(&s.pick_to_read()?.id, json),
        },
        Command::Fsck {
            s,
            sidecar,
            repair,
            json,
        } => match sidecar {
            Some(dir) => checkpoints::fsck(&dir, json),
            None => checkpoints::fsck_session(&s.pick_to_read()?.id, json, repair),
        },
        Command::Rewind {
            s,
            turn,
            scope,
            dry_run,
            yes,
            on_conflict,
            json,
        } => {
            let s = s.pick()?;
            rewind::rewind(
                &cfg()?,
                rewind::RewindArgs {
                    session: &s.id,
                    workspace: s.workspace.as_deref(),
                    turn,
                    scope: match scope {
                        ScopeArg::Code => RewindScope::Code,
                        ScopeArg::Conversation => RewindScope::Conversation,
                        ScopeArg::Both => RewindScope::Both,
                    },
                    dry_run,
                    yes,
                    on_conflict: match on_conflict {
                        OnConflictArg::Refuse => OnConflict::Refuse,
                        OnConflictArg::Skip => OnConflict::Skip,
                        OnConflictArg::Overwrite => OnConflict::Overwrite,
                    },
                    json,
                },
            )
        }
        Command::Undo { s, transaction, json } => {
            let s = s.pick()?;
            rewind::undo(
                &cfg()?,
                &s.id,
                s.workspace.as_deref(),
                transaction.as_deref(),
                json,
            )
        }
        Command::Revert {
            s,
            path,
            overwrite,
            yes,
            json,
        } => {
            let s = s.pick()?;
            rewind::revert(
                &cfg()?,
                rewind::RevertArgs {
                    session: &s.id,
                    workspace: s.workspace.as_deref(),
                    path: &path,
                    overwrite,
                    yes,
                    json,
                },
            )
        }
        Command::Fork { s, turn, name, json } => {
            let s = s.pick()?;
            rewind::fork(&cfg()?, &s.id, s.workspace.as_deref(), turn, name, json)
        }
        Command::Summarize {
            s,
            turn,
            from,
            up_to: _,
            model,
            base_url,
            json,
        } => {
            let s = s.pick()?;
            rewind::summarize(
                &cfg()?,
                rewind::SummarizeArgs {
                    session: &s.id,
                    workspace: s.workspace.as_deref(),
                    turn,
                    direction: if from {
                        SummarizeDirection::From
                    } else {
                        SummarizeDirection::UpTo
                    },
                    model: model.as_deref(),
                    base_url: base_url.as_deref(),
                    json,
                },
            )
        }
        Command::Compact {
            s,
            model,
            base_url,
            json,
        } => {
            let s = s.pick()?;
            rewind::compact(
                &cfg()?,
                &s.id,
                s.workspace.as_deref(),
                model.as_deref(),
                base_url.as_deref(),
                json,
            )
        }
        Command::Heads { s, json } => rewind::heads(&s.pick_to_read()?.id, json),
        Command::Switch { s, head, json } => {
            let s = s.pick()?;
            rewind::switch(&cfg()?, &s.id, s.workspace.as_deref(), &head, json)
        }
        Command::Serve {
            host,
            port,
            allow_remote,
            workspace,
            model,
            base_url,
        } => serve::run(
            &cfg()?,
            serve::ServeArgs {
                host,
                port,
                allow_remote,
                workspace: workspace.as_deref(),
                model: model.as_deref(),
                base_url: base_url.as_deref(),
            },
        ),
        Command::Config { example: true, .. } => config_cmd::example(),
        Command::Config {
            model,
            base_url,
            json,
            ..
        } => config_cmd::show(&cfg()?, model.as_deref(), base_url.as_deref(), json),
        Command::Demo { headless } if !headless && ui::on_a_terminal() => ui::demo(),
        Command::Demo { .. } => demo::run(),
    }
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

/// An error and its causes, each said once: the project's error types already quote their source.
fn error_chain(err: &anyhow::Error) -> String {
    let mut out = err.to_string();
    for cause in err.chain().skip(1) {
        let s = cause.to_string();
        if !out.contains(&s) {
            out.push_str(": ");
            out.push_str(&s);
        }
    }
    out
}

/// Keeps this process's memory and `/proc/<pid>/environ` (which hold the API keys) from other
/// processes of the same user, the shell commands the agent runs among them: they could read
/// the keys there even though their own environment has none (found by attack).
fn guard_secrets() {
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_dumpable(false);
}

/// How a failure is printed besides standard error: with `--json`, as JSON on standard output
/// (SPEC §11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JsonOut {
    No,
    /// One document, `{ok: false, error}` (a refused plan: the plan with `ok` and `error`).
    Document,
    /// `exec`'s last JSON Lines line, `{"type": "result", "ok": false, "error"}`.
    ExecResult,
}

fn json_out(cli: &Cli) -> JsonOut {
    let json = match &cli.command {
        Some(Command::Exec { json: true, .. }) => return JsonOut::ExecResult,
        Some(
            Command::Sessions { json, .. }
            | Command::Transcript { json, .. }
            | Command::Checkpoints { json, .. }
            | Command::Fsck { json, .. }
            | Command::Rewind { json, .. }
            | Command::Undo { json, .. }
            | Command::Revert { json, .. }
            | Command::Fork { json, .. }
            | Command::Summarize { json, .. }
            | Command::Compact { json, .. }
            | Command::Heads { json, .. }
            | Command::Switch { json, .. }
            | Command::Config { json, .. },
        ) => *json,
        _ => false,
    };
    if json {
        JsonOut::Document
    } else {
        JsonOut::No
    }
}

/// Prints a failure: on standard error, and with `--json` as JSON on standard output.
fn report(f: &Failure, json: JsonOut) -> ExitCode {
    use std::io::Write;
    let message = error_chain(&f.error);
    let _ = writeln!(
        std::io::stderr(),
        "retrace: error: {}",
        output::shown_path(&message)
    );
    print_failure_json(f, &message, json);
    ExitCode::from(f.code)
}

/// The JSON of a failure on standard output, when `--json` asked for it.
fn print_failure_json(f: &Failure, message: &str, json: JsonOut) {
    use std::io::Write;
    let doc = f.json(message);
    let text = match json {
        JsonOut::No => return,
        JsonOut::Document => serde_json::to_string_pretty(&doc),
        JsonOut::ExecResult => {
            serde_json::to_string(&serde_json::json!({"type": "result", "ok": false, "error": doc["error"]}))
        }
    };
    if let Ok(text) = text {
        let _ = writeln!(std::io::stdout(), "{text}");
    }
}

/// The command line, with the exit codes at the end of every command's `--help`.
fn parse() -> Result<Cli, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let matches = Cli::command()
        .mut_subcommands(|c| c.after_help(EXIT_CODES))
        .try_get_matches()?;
    Cli::from_arg_matches(&matches)
}

/// A command line clap refused. With `--json` among the arguments it is a JSON usage failure
/// (exit 2) as well as clap's own message on standard error; help and version print as usual.
fn parse_failure(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // A `--json` after `--` is a prompt's text, not the flag. `--json=VALUE` (which clap refuses:
    // the flag takes no value) counts too: the failure is about the flag itself.
    let wants_json = args
        .iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--json" || a.to_str().is_some_and(|a| a.starts_with("--json=")));
    if !wants_json
        || matches!(
            e.kind(),
            ErrorKind::DisplayHelp
                | ErrorKind::DisplayVersion
                | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        )
    {
        e.exit();
    }
    let _ = e.print();
    let rendered = e.to_string();
    let message = rendered
        .lines()
        .next()
        .unwrap_or("")
        .trim_start_matches("error: ")
        .to_string();
    let json = if args.get(1).is_some_and(|a| a == "exec") {
        JsonOut::ExecResult
    } else {
        JsonOut::Document
    };
    // The message went to standard error in clap's own words above.
    print_failure_json(&Failure::usage(message.clone()), &message, json);
    ExitCode::from(2)
}

fn main() -> ExitCode {
    guard_secrets();
    let cli = match parse() {
        Ok(cli) => cli,
        Err(e) => return parse_failure(e),
    };
    let json = json_out(&cli);
    // `exec` handles a closed standard output itself (the turn is cancelled cleanly, never killed
    // in the middle of a tool call); the other commands end quietly like other Unix tools. Those
    // that talk over sockets keep SIGPIPE ignored: a peer that resets its connection (a browser,
    // a model server) must get an error on that connection, not kill the process (`serve` would
    // lose every session without closing it).
    if !matches!(
        cli.command,
        Some(
            Command::Exec { .. }
                | Command::Serve { .. }
                | Command::Summarize { .. }
                | Command::Compact { .. }
        ) | None
    ) {
        default_sigpipe();
    }
    match run(cli) {
        Ok(code) => code,
        Err(f) => report(&f, json),
    }
}
