//! `retrace demo`: until the agent and the terminal UI exist, a narrated walk through what the
//! checkpoint store does, on a scratch workspace that is deleted afterwards.

use std::process::ExitCode;

use anyhow::{Context, Result};
use retrace_checkpoint::{BeginTurn, Change, CheckpointStore, StoreOptions};
use retrace_protocol::ChangeKind;

/// A demo edit: a path and its new content, or `None` to delete it.
type Edit = (&'static str, Option<&'static str>);

/// Runs the narrated demo.
pub fn run() -> Result<ExitCode> {
    let tmp = tempfile::tempdir().context("creating a scratch directory")?;
    let ws = tmp.path().join("workspace");
    std::fs::create_dir(&ws).context("creating the scratch workspace")?;
    std::fs::write(ws.join("notes.txt"), "first draft\n").context("seeding the workspace")?;
    let sidecar = tmp.path().join("demo.ckpt");
    let mut store = CheckpointStore::open(&sidecar, &ws, StoreOptions::default())?;
    println!("Scratch workspace: {}", ws.display());

    let turns: [(&str, &[Edit]); 3] = [
        (
            "add a greeting",
            &[
                ("hello.txt", Some("hello, world\n")),
                ("notes.txt", Some("second draft\n")),
            ],
        ),
        (
            "rename the greeting",
            &[("hello.txt", None), ("greeting.txt", Some("hello, world\n"))],
        ),
        ("drop the notes", &[("notes.txt", None)]),
    ];
    for (msg, (prompt, edits)) in turns.iter().enumerate() {
        let n = store.begin_turn(BeginTurn {
            prompt: prompt.to_string(),
            msg_index: msg as u64 * 2,
            ..BeginTurn::default()
        })?;
        println!("\nTurn {n}: \"{prompt}\"");
        for (path, content) in edits.iter() {
            let abs = ws.join(path);
            let kind = match (abs.exists(), content) {
                (false, _) => ChangeKind::Create,
                (true, Some(_)) => ChangeKind::Modify,
                (true, None) => ChangeKind::Delete,
            };
            store.capture_before(&[Change::new(*path, kind)], Some("demo"))?;
            match content {
                Some(c) => std::fs::write(&abs, c).with_context(|| format!("writing {path}"))?,
                None => std::fs::remove_file(&abs).with_context(|| format!("deleting {path}"))?,
            }
            store.capture_after(&[abs])?;
            println!("  {kind:?} {path} (before-image captured first)");
        }
        store.end_turn();
    }
    println!("\nCheckpoints:");
    for e in store.list() {
        println!(
            "  turn {}  {:<22} files: {}",
            e.turn,
            format!("\"{}\"", e.prompt),
            e.paths.join(", ")
        );
    }
    println!("\nEvery file above can be brought back to its state at the start of any turn.");
    println!("Rewind, undo and the model-driven agent arrive in the next releases; see README.md.");
    Ok(ExitCode::SUCCESS)
}
