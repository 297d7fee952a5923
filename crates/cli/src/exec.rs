//! `retrace exec`: one turn, headless. It subscribes to the session's events, sends the prompt,
//! prints every event until the turn's `turn_finished`, then the result.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use retrace_control::SessionHandle;
use retrace_protocol::{Delivery, ErrorCode, Event, ItemBody, TurnAccepted, TurnOutcome};

use crate::common::{model_spec, service_options, with_service, workspace_arg, CmdResult, Failure};
use crate::config::Config;

/// Events an `exec` may fall behind by before it says it missed some: more than any turn prints
/// between two reads of a terminal or a pipe.
const EXEC_EVENT_BUFFER: usize = 1 << 14;

/// The arguments of `exec`.
pub struct ExecArgs<'a> {
    pub session: Option<&'a str>,
    /// `--continue`: the latest session of the workspace.
    pub continue_latest: bool,
    pub workspace: Option<&'a Path>,
    pub model: Option<&'a str>,
    pub base_url: Option<&'a str>,
    pub allow_bash: bool,
    pub json: bool,
    pub max_steps: Option<u32>,
    /// `--plan`: the turn runs in plan mode (read tools only); without it, plan mode is off.
    pub plan: bool,
    pub prompt: &'a str,
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
pub fn run(cfg: &Config, a: ExecArgs<'_>) -> CmdResult {
    retrace_control::check_prompt(a.prompt)?;
    let spec = model_spec(cfg, a.model, a.base_url)?;
    // A resumed session keeps its own model unless one is given: it is set once the session is
    // open (the configured one is for new sessions and sessions that record none).
    let own_model = (a.session.is_some() || a.continue_latest) && a.model.is_none() && a.base_url.is_none();
    let mut opts = service_options(cfg, (!own_model).then(|| spec.clone()), a.allow_bash)?;
    opts.event_buffer = EXEC_EVENT_BUFFER;
    if let Some(n) = a.max_steps {
        opts.max_steps = n as usize;
    }
    let json = a.json;
    // The whole id of the session `--session` names (its id or an unambiguous prefix).
    let asked = crate::common::whole_id(a.session)?;
    let (accepted, outcome, head, workspace) = with_service(opts, async |svc| {
        let h = match (asked.as_deref(), a.continue_latest) {
            (Some(id), _) => svc.open(id, a.workspace).await?,
            (None, true) => svc.open_latest(&workspace_arg(a.workspace)?).await?,
            (None, false) => svc.create(&workspace_arg(a.workspace)?).await?,
        };
        if own_model {
            crate::ui::keep_own_model(&h, spec.clone(), cfg).await?;
        }
        let signals = tokio::spawn(cancel_on_signals(h.clone(), "the turn"));
        let out = one_turn(&h, a.prompt, a.plan, json).await;
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

/// Cancels the turn on Ctrl-C, SIGTERM or SIGHUP, like Ctrl-C always did: the turn keeps what
/// ran, answers every tool call and kills the shell's process group. A second signal quits at
/// once, killing any shell command still running first.
pub(crate) async fn cancel_on_signals(h: SessionHandle, what: &'static str) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        return;
    };
    let name = tokio::select! {
        _ = int.recv() => "Ctrl-C",
        _ = term.recv() => "SIGTERM",
        _ = hup.recv() => "SIGHUP",
    };
    say(&format!(
        "\nretrace: cancelling {what} ({name}); a second Ctrl-C quits at once"
    ));
    h.cancel();
    tokio::select! {
        _ = int.recv() => {},
        _ = term.recv() => {},
        _ = hup.recv() => {},
    }
    say("retrace: quitting now; the conversation is repaired at the next turn");
    retrace_control::kill_running_shells();
    std::process::exit(130);
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
    let mut printer = Printer {
        json,
        mid_line: false,
        captured: Default::default(),
        gaps: Default::default(),
        closed: false,
    };
    while let Some(d) = events.recv().await {
        match d {
            Delivery::Event(n) => {
                if printer.print(&n.event).is_err() && !printer.closed {
                    printer.closed = true;
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

/// A line on standard error; an error writing it (a closed terminal) is not one more failure.
pub(crate) fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// An event as `exec --json` prints it: the protocol's event, with a tool call's `arguments` as the
/// JSON value the model sent rather than JSON text inside JSON (the model's text as a string when
/// it is not JSON).
fn json_event(e: &Event) -> serde_json::Value {
    let mut v = serde_json::to_value(e).unwrap_or(serde_json::Value::Null);
    if let Event::ToolCall { arguments, .. } = e {
        if let Ok(parsed) = serde_json::from_str::<serde_json::Value>(arguments) {
            v["arguments"] = parsed;
        }
    }
    v
}

struct Printer {
    json: bool,
    mid_line: bool,
    /// The before-images and gaps printed so far (a checkpoint item grows during the turn).
    captured: std::collections::HashSet<String>,
    gaps: std::collections::HashSet<String>,
    /// Standard output went away: nothing more is written to it.
    closed: bool,
}

impl Printer {
    /// Prints one event; an error means standard output cannot be written any more.
    fn print(&mut self, e: &Event) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let mut out = String::new();
        let mut err = String::new();
        self.render(e, &mut out, &mut err);
        if !err.is_empty() {
            let _ = std::io::stderr().write_all(err.as_bytes());
        }
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(out.as_bytes())?;
        stdout.flush()
    }

    /// What `e` prints, to standard output (`out`) and standard error (`err`).
    fn render(&mut self, e: &Event, out: &mut String, err: &mut String) {
        use crate::output::{first_line, shown_path, shown_text};
        use std::fmt::Write as _;
        if self.json {
            if let Ok(line) = serde_json::to_string(&json_event(e)) {
                let _ = writeln!(out, "{line}");
            }
            // Notices and errors go to standard error too (SPEC §11): a script that reads only
            // the result line still shows the user why a turn waited or failed.
            match e {
                Event::Notice { message, .. } => {
                    let _ = writeln!(err, "retrace: {}", shown_path(message));
                }
                Event::Error { message } => {
                    let _ = writeln!(err, "retrace: error: {}", shown_path(message));
                }
                _ => {}
            }
            return;
        }
        if self.mid_line && !matches!(e, Event::AssistantDelta { .. } | Event::ReasoningDelta { .. }) {
            out.push('\n');
            self.mid_line = false;
        }
        match e {
            Event::TurnStarted { turn, prompt, .. } => {
                let _ = writeln!(out, "── turn {turn}: {}", shown_text(&first_line(prompt, 70)));
            }
            Event::AssistantDelta { text, .. } => {
                out.push_str(&shown_text(text));
                self.mid_line = !text.ends_with('\n');
            }
            Event::ReasoningDelta { text, .. } => err.push_str(&shown_text(text)),
            Event::ItemStarted { item } | Event::ItemUpdated { item } | Event::ItemCompleted { item } => {
                match &item.body {
                    ItemBody::ToolCall(call) if matches!(e, Event::ItemStarted { .. }) => {
                        out.push_str(&crate::item_text::started(call));
                    }
                    ItemBody::ToolCall(call) if matches!(e, Event::ItemCompleted { .. }) => {
                        out.push_str(&crate::item_text::finished(call));
                    }
                    ItemBody::Checkpoint(c) => {
                        let new: Vec<String> = c
                            .files
                            .iter()
                            .filter(|p| self.captured.insert((*p).clone()))
                            .map(|p| shown_path(p))
                            .collect();
                        if !new.is_empty() {
                            let _ = writeln!(out, "  ⎌ before-image saved: {}", new.join(", "));
                        }
                        for g in &c.gaps {
                            let what = g.path.as_deref().or(g.detail.as_deref()).unwrap_or("");
                            let line =
                                format!("{} {}", g.reason.as_str(), shown_path(&first_line(what, 100)));
                            if self.gaps.insert(line.clone()) {
                                let _ = writeln!(out, "  ! not restorable: {line}");
                            }
                        }
                    }
                    ItemBody::Note(n) => {
                        let _ = writeln!(out, "  ⓘ {}", shown_text(&n.text));
                    }
                    _ => {}
                }
            }
            Event::ToolCall { .. }
            | Event::ToolResult { .. }
            | Event::CheckpointCaptured { .. }
            | Event::ItemRemoved { .. } => {}
            Event::StepFinished { .. } => {}
            Event::TurnFinished { turn, ok, error, .. } => match (ok, error) {
                (true, _) => {
                    let _ = writeln!(out, "── turn {turn} finished");
                }
                (false, Some(e)) => {
                    let _ = writeln!(out, "── turn {turn} failed: {}", shown_path(e));
                }
                (false, None) => {
                    let _ = writeln!(out, "── turn {turn} failed");
                }
            },
            Event::Notice { message, .. } => {
                let _ = writeln!(err, "retrace: {}", shown_path(message));
            }
            Event::Error { message } => {
                let _ = writeln!(err, "retrace: error: {}", shown_path(message));
            }
            Event::ApprovalRequested { command, .. } => {
                let _ = writeln!(
                    err,
                    "retrace: shell command needs approval: {}",
                    shown_path(command)
                );
            }
            Event::Compacted {
                head_id,
                automatic,
                before_tokens,
                after_tokens,
                ..
            } => {
                let how = if *automatic {
                    "compacted automatically"
                } else {
                    "compacted"
                };
                let _ = writeln!(
                    out,
                    "  ⎘ {how}: about {before_tokens} → {after_tokens} tokens; new head {head_id} (the full conversation stays a version)"
                );
            }
            Event::PlanMode { on } => {
                let _ = writeln!(err, "retrace: plan mode is {}", if *on { "on" } else { "off" });
            }
            Event::SummaryStarted { .. } | Event::SummaryFinished { .. } => {}
            Event::ApprovalResolved { .. }
            | Event::Rewound { .. }
            | Event::Undone { .. }
            | Event::HeadChanged { .. } => {}
        }
    }
}

/// A failed turn's error as every `--json` failure carries one (`{code, message, details}`). The
/// turn's end reports only its text; the controller's texts say which kind it is: cancelled, the
/// model (its failure or its step limit), or the log (I/O).
fn turn_error(message: &str) -> serde_json::Value {
    let code = if message.starts_with("cancelled") {
        ErrorCode::Cancelled
    } else if message.starts_with("cannot write the conversation log")
        || message.starts_with("the conversation log could not be synced")
    {
        ErrorCode::Io
    } else {
        ErrorCode::Model
    };
    serde_json::json!({"code": code, "message": message, "details": null})
}

#[cfg(test)]
mod tests {
    use super::turn_error;

    #[test]
    fn a_turn_error_has_a_code() {
        for (message, code) in [
            ("cancelled by the user", "cancelled"),
            ("the model failed: HTTP 500", "model"),
            (
                "the turn reached its limit of 2 model requests; send another message to continue",
                "model",
            ),
            ("cannot write the conversation log: disk full", "io"),
            ("the conversation log could not be synced: EIO", "io"),
        ] {
            let e = turn_error(message);
            assert_eq!(e["code"], code, "{message}");
            assert_eq!(e["message"], message);
        }
    }
}
