//! `retrace exec`: one turn, headless.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use retrace_control::{Controller, TurnReport};
use retrace_model::CancellationToken;
use retrace_protocol::Event;

use crate::common::{controller_options, data_root, model, workspace_arg, CmdResult, Failure};
use crate::config::Config;

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
    if a.prompt.trim().is_empty() {
        return Err(Failure::usage(
            "the prompt is empty; say what the agent should do",
        ));
    }
    let data = data_root()?;
    let m = model(cfg, a.model, a.base_url)?;
    let opts = controller_options(cfg, a.allow_bash);
    let mut ctl = match a.session {
        Some(id) => Controller::open(&data, id, a.workspace, Some(m), opts)?,
        None => Controller::create(&data, &workspace_arg(a.workspace)?, Some(m), opts)?,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(anyhow::Error::from)?;
    let cancel = CancellationToken::new();
    let json = a.json;
    let report: TurnReport = rt.block_on(async {
        let c = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\nretrace: cancelling the turn (Ctrl-C)");
                c.cancel();
            }
        });
        let mut printer = Printer {
            json,
            mid_line: false,
        };
        let mut out = |e: Event| printer.print(&e);
        let deny = |_: &str| false;
        ctl.send(a.prompt, &mut out, &deny, &cancel).await
    })?;
    if json {
        let line = serde_json::json!({
            "type": "result",
            "session_id": report.session_id,
            "head_id": report.head_id,
            "turn": report.turn,
            "ok": report.ok,
            "error": report.error,
        });
        println!("{line}");
    } else {
        println!(
            "session {} · head {} · turn {}",
            report.session_id, report.head_id, report.turn
        );
        if let Some(e) = &report.error {
            eprintln!("retrace: the turn failed: {e}");
        }
    }
    Ok(if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
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
            Event::Rewound { .. } | Event::Undone { .. } | Event::HeadChanged { .. } => {}
        }
    }
}
