//! `retrace exec`: one turn, headless. It subscribes to the session's events, sends the prompt,
//! prints every event until the turn's `turn_finished`, then the result.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use retrace_control::SessionHandle;
use retrace_protocol::{Delivery, Event, TurnAccepted, TurnOutcome};

use super::args::{ModelArgs, SessionArgs};
use crate::common::{load_config, service_options, with_service};
use crate::event_text::{turn_error, Printer};
use crate::failure::{CmdResult, Failure};
use crate::output::say;

/// Events an `exec` may fall behind by before it says it missed some: more than any turn prints
/// between two reads of a terminal or a pipe.
const EXEC_EVENT_BUFFER: usize = 1 << 14;

/// Run one turn headless.
#[derive(Debug, clap::Args)]
#[command(
    mut_arg("session", |a| a
        .value_name("SESSION")
        .help("Continue this session (its own workspace is used)")),
    mut_arg("continue_latest", |a| a
        .help("Continue the latest session of the workspace (found from any subdirectory of it)")),
    mut_arg("workspace", |a| a.help("The workspace (default: the current directory)")),
)]
pub struct ExecArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub backend: crate::commands::args::BackendArgs,
    /// Let the agent run shell commands (denied by default when headless).
    #[arg(long)]
    pub allow_bash: bool,
    /// Print events as JSON Lines; the last line is the result.
    #[arg(long)]
    pub json: bool,
    /// Model requests the turn may make (default 50).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_steps: Option<u32>,
    /// Plan mode: the model may only read, and proposes a plan (writes are refused).
    #[arg(long)]
    pub plan: bool,
    /// Read the prompt from this file.
    #[arg(long, value_name = "FILE", conflicts_with = "prompt")]
    pub prompt_file: Option<PathBuf>,
    /// What the agent should do; `-` (or none, with a pipe on standard input) reads it from
    /// standard input.
    pub prompt: Option<String>,
}

/// The prompt: the argument, else `--prompt-file`, else standard input (for `-`, or when no prompt
/// is given and standard input is not a terminal). At most the prompt limit and one byte is read,
/// so a huge or endless input (`/dev/zero`, a `yes |`) fails at once in bounded memory.
pub fn read_prompt(arg: Option<&str>, file: Option<&Path>) -> Result<String, Failure> {
    use std::io::IsTerminal;
    let from_stdin = || bounded(std::io::stdin().lock(), "standard input");
    match (arg, file) {
        (Some("-"), _) => from_stdin(),
        (Some(p), _) => Ok(p.to_string()),
        (None, Some(f)) => {
            let what = format!("the prompt file `{}`", f.display());
            let file =
                std::fs::File::open(f).map_err(|e| Failure::usage(format!("cannot read {what}: {e}")))?;
            bounded(file, &what)
        }
        (None, None) if !std::io::stdin().is_terminal() => from_stdin(),
        (None, None) => Err(Failure::usage(
            "give a prompt: as an argument, `-` to read it from standard input, or --prompt-file FILE",
        )),
    }
}

/// Reads `from` (named `what` in errors) up to the prompt limit; more is the limit's usage error.
/// The limit does not count one final line end (`\n` or `\r\n`, which editors and `echo` add;
/// the text is kept whole), as `check_prompt` does: a file of exactly the limit plus a newline is
/// taken.
fn bounded(from: impl std::io::Read, what: &str) -> Result<String, Failure> {
    use std::io::Read;
    let limit = retrace_control::MAX_PROMPT_BYTES;
    let mut bytes = Vec::new();
    from.take(limit as u64 + 3)
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::usage(format!("cannot read {what}: {e}")))?;
    if retrace_control::counted_prompt_len(&bytes) > limit {
        return Err(Failure::usage(format!(
            "the prompt in {what} is longer than the limit of {} MiB (reading stopped there): put the material in a file of the workspace and ask the agent to read it",
            limit >> 20
        )));
    }
    String::from_utf8(bytes)
        .map_err(|e| Failure::usage(format!("cannot read {what}: the prompt is not UTF-8 text ({e})")))
}

/// Runs one turn and prints its events.
pub fn run(a: ExecArgs) -> CmdResult {
    let cfg = load_config()?;
    let prompt = read_prompt(a.prompt.as_deref(), a.prompt_file.as_deref())?;
    retrace_control::check_prompt(&prompt)?;
    let spec = a.model.spec(&cfg)?;
    // A resumed session keeps its own model unless one is given: it is set once the session is
    // open (the configured one is for new sessions and sessions that record none).
    let own_model = a.session.resumes() && !a.model.given();
    let mut opts = service_options(&cfg, (!own_model).then(|| spec.clone()), a.allow_bash)?;
    opts.event_buffer = EXEC_EVENT_BUFFER;
    opts.backend = a.backend.backend(&cfg);
    if let Some(n) = a.max_steps {
        opts.max_steps = n as usize;
    }
    let json = a.json;
    // The whole id of the session `--session` names (its id or an unambiguous prefix).
    let asked = a.session.whole_id()?;
    let (accepted, outcome, head, workspace) = with_service(opts, async |svc| {
        let h = a.session.open_or_create(svc, asked.as_deref()).await?;
        if own_model {
            crate::model::keep_own_model(&h, spec.clone(), &cfg).await?;
        }
        // `--json`'s last line is always a `result`, a quit at a second signal's too.
        let quit_line = json.then(|| {
            serde_json::json!({
                "type": "result",
                "session_id": h.session_id(),
                "ok": false,
                "plan_mode": a.plan,
                "error": {
                    "code": retrace_protocol::ErrorCode::Cancelled,
                    "message": "cancelled: quit at once at a second signal (the conversation is repaired at the next turn)",
                    "details": null
                },
            })
            .to_string()
        });
        let signals = tokio::spawn(crate::signals::cancel_on_signals(
            h.clone(),
            "the turn",
            quit_line,
        ));
        let out = one_turn(&h, &prompt, a.plan, json).await;
        signals.abort();
        let (accepted, outcome) = out?;
        // A compaction during the turn moved it to a new head.
        let head = match h.status().await {
            Ok(s) => s.head_id,
            Err(_) => accepted.head_id.clone(),
        };
        Ok((accepted, outcome, head, h.workspace().to_path_buf()))
    })?;
    let mut stdout = std::io::stdout();
    if json {
        let line = serde_json::json!({
            "type": "result",
            "session_id": accepted.session_id,
            "head_id": head,
            "turn": accepted.turn,
            "ok": outcome.ok,
            "plan_mode": a.plan,
            "error": outcome.error.as_deref().map(turn_error),
            "usage": outcome.usage,
        });
        let _ = writeln!(stdout, "{line}");
        if let Some(e) = &outcome.error {
            say(&format!(
                "retrace: the turn failed: {}",
                crate::output::shown_path(e)
            ));
        }
    } else {
        let tokens = outcome
            .usage
            .map(|u| format!(" · {}", crate::output::tokens(&u)))
            .unwrap_or_default();
        let _ = writeln!(
            stdout,
            "session {} · head {} · turn {}{tokens}{}",
            accepted.session_id,
            head,
            accepted.turn,
            if a.plan { " · plan mode" } else { "" }
        );
        if let Some(e) = &outcome.error {
            say(&format!(
                "retrace: the turn failed: {}",
                crate::output::shown_path(e)
            ));
        }
    }
    if let Some(asked) = &asked {
        crate::common::say_new_session(asked, &accepted.session_id, &workspace, json);
    }
    Ok(if outcome.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Sends the prompt and prints the turn's events until it finishes. When standard output goes
/// away (`exec … | head -1`), nothing more is printed and the turn is cancelled like Ctrl-C does:
/// it keeps what ran and answers every tool call, never dies in the middle of one.
async fn one_turn(
    h: &SessionHandle,
    prompt: &str,
    plan: bool,
    json: bool,
) -> Result<(TurnAccepted, TurnOutcome), Failure> {
    let mut events = h.subscribe(None);
    h.set_plan_mode(plan).await?;
    let accepted = h.send(prompt).await?;
    let mut printer = Printer::new(json);
    while let Some(d) = events.recv().await {
        match d {
            Delivery::Event(n) => {
                if printer.print(&n.event) {
                    h.cancel();
                }
                if let Event::TurnFinished {
                    turn,
                    ok,
                    error,
                    usage,
                } = n.event
                {
                    if turn == accepted.turn {
                        return Ok((
                            accepted,
                            TurnOutcome {
                                turn,
                                ok,
                                error,
                                usage,
                            },
                        ));
                    }
                }
            }
            Delivery::Lagged { .. } => {
                say("retrace: warning: some events of this turn were not printed (output too slow)")
            }
        }
    }
    Err(Failure::from(anyhow::anyhow!(
        "the session closed before turn {} finished",
        accepted.turn
    )))
}
