//! `retrace demo`: the terminal UI on a scratch workspace with the built-in demo model; with
//! `--headless` (or off a terminal) a narrated headless run of it instead — real turns through the
//! real controller, checkpoints listed at the end.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use retrace_control::{Service, ServiceOptions, SessionHandle};
use retrace_protocol::{
    CommitRewind, Delivery, Event, FileAction, ModelSpec, OnConflict, PrepareRewind, RewindScope, UndoRequest,
};

use crate::common::runtime;
use crate::failure::{CmdResult, Failure};
use crate::output::first_line;

const PROMPTS: [&str; 4] = [
    "Start a notes file and a todo list for the project.",
    "Add a line about rewinds to the notes.",
    "The todo item is done: move it to done/.",
    "Tidy up: update the notes and add a changelog in one go.",
];

/// The terminal UI on a scratch workspace with the built-in demo model (no API key needed);
/// a narrated run instead when standard output is not a terminal.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Print the narrated run even on a terminal.
    #[arg(long)]
    pub headless: bool,
}

/// The terminal UI on a terminal, else (or with `--headless`) the narrated run.
pub fn run(a: DemoArgs) -> CmdResult {
    if !a.headless && super::ui::on_a_terminal() {
        return super::ui::demo();
    }
    narrated()
}

/// A scratch directory (deleted when dropped) with a seeded `workspace/`, and service options on
/// a data root beside it with the demo model.
pub fn scratch() -> Result<(tempfile::TempDir, std::path::PathBuf, ServiceOptions), Failure> {
    let tmp = tempfile::Builder::new()
        .prefix("retrace-demo-")
        .tempdir()
        .context("creating a scratch directory")?;
    let ws = tmp.path().join("workspace");
    std::fs::create_dir(&ws).context("creating the scratch workspace")?;
    std::fs::write(ws.join("README.md"), "# Demo project\n").context("seeding the workspace")?;
    let mut opts = ServiceOptions::new(tmp.path().join("data"));
    opts.model = Some(ModelSpec::demo());
    Ok((tmp, ws, opts))
}

/// Runs the narrated demo.
fn narrated() -> CmdResult {
    let (_tmp, ws, opts) = scratch()?;
    let rt = runtime()?;
    rt.block_on(async {
        let service = Service::new(opts);
        let out = demo(&service, &ws).await;
        service.shutdown().await;
        out
    })?;
    println!(
        "\nTry it on your own code, in a scratch copy: `retrace exec --model demo \"...\"` runs a turn,"
    );
    println!("`retrace checkpoints --session <id>` lists them, `retrace rewind --session <id> --turn N");
    println!("--scope code --dry-run` shows what a rewind would write (drop `--dry-run` to do it), and");
    println!("`retrace undo --session <id>` takes it back. The README has a whole session to paste.");
    Ok(ExitCode::SUCCESS)
}

async fn demo(service: &Service, ws: &Path) -> Result<(), Failure> {
    let h = service.create(ws).await?;
    println!("Retrace demo — the built-in demo model edits a scratch workspace; no API key needed.");
    println!("workspace: {}\nsession:   {}\n", ws.display(), h.session_id());
    for prompt in PROMPTS {
        println!("you › {prompt}");
        let mut events = h.subscribe(None);
        let accepted = h.send(prompt).await?;
        while let Some(Delivery::Event(n)) = events.recv().await {
            narrate(&n.event);
            match n.event {
                Event::TurnFinished { turn, ok, error, .. } if turn == accepted.turn => {
                    if !ok {
                        println!("  (turn {turn} failed: {})", error.unwrap_or_default());
                    }
                    break;
                }
                _ => {}
            }
        }
        println!();
    }
    println!("Checkpoints (every file above can go back to its state at the start of any turn):");
    for e in h.checkpoints().await?.entries {
        println!(
            "  turn {}  {:<55}  files: {}",
            e.turn,
            first_line(&e.prompt, 55),
            e.paths.join(", ")
        );
    }
    println!();
    print_tree(ws)?;
    rewind_and_undo(&h, ws).await
}

/// Rewinds the code to the start of turn 1, shows the files, then undoes the rewind.
async fn rewind_and_undo(h: &SessionHandle, ws: &Path) -> Result<(), Failure> {
    const TURN: u64 = 1;
    println!("\nRewind the code to the start of turn {TURN} (a dry run first):");
    let plan = h
        .prepare_rewind(PrepareRewind {
            turn: TURN,
            scope: RewindScope::Code,
        })
        .await?;
    for f in &plan.files {
        let what = match f.action {
            FileAction::Write => "write back",
            FileAction::Delete => "delete (it did not exist yet)",
            FileAction::Unchanged => "unchanged",
            FileAction::Skip => "skip (conflict)",
        };
        println!("  {:<24} {what}", f.path);
    }
    let done = h
        .commit_rewind(CommitRewind {
            plan_id: plan.plan_id.clone(),
            confirm: true,
            on_conflict: OnConflict::Refuse,
            in_place: true,
        })
        .await?;
    println!(
        "  done: {} written, {} deleted, each checked against what Retrace itself last wrote there",
        done.files_written.len(),
        done.files_deleted.len()
    );
    print_tree(ws)?;
    println!("\nUndo the rewind (it is a transaction, so it can be taken back):");
    let undone = h
        .undo(UndoRequest {
            transaction_id: done.transaction_id.clone(),
        })
        .await?;
    println!(
        "  done: {} written, {} deleted",
        undone.files_written.len(),
        undone.files_deleted.len()
    );
    print_tree(ws)
}

fn narrate(e: &Event) {
    match e {
        Event::TurnStarted { turn, .. } => println!("  turn {turn} — checkpoint opened before anything else"),
        Event::ToolCall { name, arguments, .. } => println!("  agent → {name} {}", first_line(arguments, 70)),
        Event::CheckpointCaptured { paths, .. } if !paths.is_empty() => {
            println!("          before-image saved first: {}", paths.join(", "))
        }
        Event::ToolResult {
            ok: false, content, ..
        } => println!("          ✗ {}", first_line(content, 70)),
        Event::TurnFinished { turn, ok: true, .. } => println!("  turn {turn} finished"),
        _ => {}
    }
}

fn print_tree(ws: &Path) -> Result<(), Failure> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
        let mut entries: Vec<_> = std::fs::read_dir(dir)?.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            if p.is_dir() {
                walk(&p, root, out)?;
            } else {
                out.push(p.strip_prefix(root).unwrap_or(&p).to_string_lossy().into_owned());
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(ws, ws, &mut files).context("listing the workspace")?;
    println!("The workspace now holds: {}", files.join(", "));
    Ok(())
}
