//! `retrace checkpoints`: the checkpoint list of a session, or of any sidecar directory (legacy
//! formats too); read-only, no lease needed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use retrace_protocol::CheckpointListing;

use super::args::SessionArgs;
use crate::common::print_json;
use crate::failure::{CmdResult, Failure};
use crate::output::{first_line, human_bytes, shown_path};

/// List checkpoints of a session, or of any sidecar directory (legacy formats too; read-only).
#[derive(Debug, clap::Args)]
pub struct CheckpointsArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// A checkpoint sidecar directory (`<session>.ckpt`).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["session", "continue_latest", "workspace"])]
    pub sidecar: Option<PathBuf>,
    /// Print a JSON array instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// The list of `--sidecar`, else of the session's.
pub fn run(a: CheckpointsArgs) -> CmdResult {
    match a.sidecar {
        Some(dir) => list(&dir, a.json),
        None => list_session(&a.session.pick_to_read()?.id, a.json),
    }
}

/// A `--sidecar` that is not there, or not a readable directory, is a usage error (exit 2), as
/// every file named on the command line.
pub(super) fn check_sidecar_arg(sidecar: &Path) -> Result<(), Failure> {
    let why = match std::fs::read_dir(sidecar) {
        Ok(_) => return Ok(()),
        Err(e) => e.to_string(),
    };
    Err(Failure::usage(format!(
        "cannot read the sidecar `{}`: {why}; pass the `<session>.ckpt` directory with --sidecar",
        sidecar.display()
    )))
}

/// An unreadable `--sidecar`: the error, and which directory to pass.
pub(super) fn sidecar_failure(e: retrace_protocol::Error, sidecar: &Path) -> Failure {
    Failure::hinted(
        retrace_protocol::Error::new(
            e.code,
            format!("cannot read the sidecar `{}`: {}", sidecar.display(), e.message),
        ),
        "; pass the `<session>.ckpt` directory with --sidecar",
    )
}

/// Lists the checkpoints of a session (with visibility on its selected head).
fn list_session(id: &str, json: bool) -> CmdResult {
    let listing = crate::common::reader(id)?.checkpoints()?;
    print_list(&listing, json)
}

/// Lists the checkpoints of any sidecar directory.
fn list(sidecar: &Path, json: bool) -> CmdResult {
    check_sidecar_arg(sidecar)?;
    let listing = retrace_control::read_sidecar(sidecar).map_err(|e| sidecar_failure(e, sidecar))?;
    print_list(&listing, json)
}

fn print_list(listing: &CheckpointListing, json: bool) -> CmdResult {
    for p in &listing.problems {
        eprintln!(
            "retrace: warning: {}: {}",
            shown_path(&p.path),
            shown_path(&p.problem)
        );
    }
    if json {
        print_json(&listing.entries)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:>5}  {:<20}  {:<8}  {:>5}  {:>9}  PROMPT",
        "TURN", "TIME", "COVERAGE", "FILES", "BYTES"
    );
    for e in &listing.entries {
        let time: String = e.time.chars().take(19).collect();
        println!(
            "{:>5}  {:<20}  {:<8}  {:>5}  {:>9}  {}",
            e.turn,
            time,
            e.coverage.as_str(),
            e.file_count,
            human_bytes(e.bytes),
            first_line(&e.prompt, 60)
        );
        match (e.visible, e.can_restore_conversation) {
            (Some(false), Some(true)) => println!(
                "{:>5}  (folded by a compaction: a conversation restore forks from the full version)",
                ""
            ),
            (Some(false), _) => println!("{:>5}  (not on this head: code restore only)", ""),
            _ => {}
        }
        // What the checkpoint cannot restore, in the words of a restore's preview.
        for g in &e.gaps {
            let path = g.path.as_deref().map(shown_path);
            let detail = g.detail.as_deref().map(|d| first_line(d, 60));
            let said = retrace_protocol::words::gap_line(&g.reason, path.as_deref(), detail.as_deref());
            println!("{:>5}  ! {said}", "");
        }
    }
    println!(
        "{}; next turn {}; stored: {} in {}",
        retrace_protocol::words::count(listing.entries.len(), "checkpoint"),
        listing.next_turn,
        human_bytes(listing.total_bytes),
        listing.sidecar
    );
    Ok(ExitCode::SUCCESS)
}
