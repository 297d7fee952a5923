//! `retrace exec`: one turn, headless. It subscribes to the session's events, sends the prompt,
//! prints every event until the turn's `turn_finished`, then the result.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use retrace_control::SessionHandle;
use retrace_protocol::{Delivery, Event, TurnAccepted, TurnOutcome};

use crate::common::{model_spec, service_options, with_service, workspace_arg, CmdResult, Failure};
use crate::config::Config;

/// Events an `exec` may fall behind by before it says it missed some: more than any turn prints
/// between two reads of a terminal or a pipe.
const EXEC_EVENT_BUFFER: usize = 1 << 14;

/// The arguments of `exec`.
pub struct ExecArgs<'a> {
    pub session: Option<&'a str>,
    pub workspace: Option<&'a Path>,
    pub model: Option<&'a str>,
    pub base_url: Option<&'a str>,
    pub allow_bash: bool,
    pub json: bool,
    pub prompt: &'a str,
}

/// Runs one turn and prints its events.
pub fn run(cfg: &Config, a: ExecArgs<'_>) -> CmdResult {
    retrace_control::check_prompt(a.prompt)?;
    let spec = model_spec(cfg, a.model, a.base_url)?;
    let mut opts = service_options(cfg, Some(spec), a.allow_bash)?;
    opts.event_buffer = EXEC_EVENT_BUFFER;
    let json = a.json;
    let (accepted, outcome) = with_service(opts, async |svc| {
        let h = match a.session {
            Some(id) => svc.open(id, a.workspace).await?,
            None => svc.create(&workspace_arg(a.workspace)?).await?,
        };
        let c = h.clone();
        let ctrl_c = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\nretrace: cancelling the turn (Ctrl-C)");
                c.cancel();
            }
        });
        let out = one_turn(&h, a.prompt, json).await;
        ctrl_c.abort();
        out
    })?;
    if json {
        let line = serde_json::json!({
            "type": "result",
            "session_id": accepted.session_id,
            "head_id": accepted.head_id,
            "turn": accepted.turn,
            "ok": outcome.ok,
            "error": outcome.error,
        });
        println!("{line}");
    } else {
        println!(
            "session {} · head {} · turn {}",
            accepted.session_id, accepted.head_id, accepted.turn
        );
        if let Some(e) = &outcome.error {
            eprintln!("retrace: the turn failed: {e}");
        }
    }
    Ok(if outcome.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Sends the prompt and prints the turn's events until it finishes.
async fn one_turn(
    h: &SessionHandle,
    prompt: &str,
    json: bool,
) -> Result<(TurnAccepted, TurnOutcome), Failure> {
    let mut events = h.subscribe(None);
    let accepted = h.send(prompt).await?;
    let mut printer = Printer {
        json,
        mid_line: false,
    };
    while let Some(d) = events.recv().await {
        match d {
            Delivery::Event(n) => {
                printer.print(&n.event);
                if let Event::TurnFinished { turn, ok, error } = n.event {
                    if turn == accepted.turn {
                        return Ok((accepted, TurnOutcome { turn, ok, error }));
                    }
                }
            }
            Delivery::Lagged { .. } => {
                eprintln!("retrace: warning: some events of this turn were not printed (output too slow)");
            }
        }
    }
    Err(Failure::from(anyhow::anyhow!(
        "the session closed before turn {} finished",
        accepted.turn
    )))
}

struct Printer {
    json: bool,
    mid_line: bool,
}

impl Printer {
    fn print(&mut self, e: &Event) {
        if self.json {
            if let Ok(line) = serde_json::to_string(e) {
                println!("{line}");
            }
            return;
        }
        let mut stdout = std::io::stdout();
        let nl = |p: &mut Printer| {
            if p.mid_line {
                println!();
                p.mid_line = false;
            }
        };
        match e {
            Event::TurnStarted { turn, prompt, .. } => {
                println!("── turn {turn}: {}", crate::output::first_line(prompt, 70));
            }
            Event::AssistantDelta { text } => {
                print!("{text}");
                let _ = stdout.flush();
                self.mid_line = !text.ends_with('\n');
            }
            Event::ReasoningDelta { text } => eprint!("{text}"),
            Event::ToolCall { name, arguments, .. } => {
                nl(self);
                println!("→ {name} {}", crate::output::first_line(arguments, 100));
            }
            Event::ToolResult { ok, content, .. } => {
                let mark = if *ok { "✓" } else { "✗" };
                println!("  {mark} {}", crate::output::first_line(content, 100));
            }
            Event::CheckpointCaptured { paths, gaps, .. } => {
                if !paths.is_empty() {
                    println!("  ⎌ before-image saved: {}", paths.join(", "));
                }
                for g in gaps {
                    println!(
                        "  ! not restorable: {} {}",
                        g.reason.as_str(),
                        g.path.as_deref().or(g.detail.as_deref()).unwrap_or("")
                    );
                }
            }
            Event::TurnFinished { turn, ok, error } => {
                nl(self);
                match (ok, error) {
                    (true, _) => println!("── turn {turn} finished"),
                    (false, Some(e)) => println!("── turn {turn} failed: {e}"),
                    (false, None) => println!("── turn {turn} failed"),
                }
            }
            Event::Notice { message } => {
                nl(self);
                eprintln!("retrace: {message}");
            }
            Event::Error { message } => {
                nl(self);
                eprintln!("retrace: error: {message}");
            }
            Event::ApprovalRequested { command, .. } => {
                nl(self);
                eprintln!("retrace: shell command needs approval: {command}");
            }
            Event::SummaryStarted { .. } | Event::SummaryFinished { .. } => {}
            Event::ApprovalResolved { .. }
            | Event::Rewound { .. }
            | Event::Undone { .. }
            | Event::HeadChanged { .. } => {}
        }
    }
}
