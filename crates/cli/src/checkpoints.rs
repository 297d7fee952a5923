//! `retrace checkpoints` and `retrace fsck`, for a session or any sidecar directory.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use retrace_checkpoint::CheckpointStore;
use retrace_control::SessionView;
use retrace_protocol::{CheckpointEntry, Severity};

use crate::common::{data_root, Failure};
use crate::output::{first_line, human_bytes};

fn open(sidecar: &Path) -> Result<CheckpointStore> {
    CheckpointStore::open_bare(sidecar).with_context(|| {
        format!(
            "cannot read the sidecar `{}`; pass the `<session>.ckpt` directory with --sidecar",
            sidecar.display()
        )
    })
}

/// Lists the checkpoints of a session (with visibility on its selected head).
pub fn list_session(id: &str, json: bool) -> Result<ExitCode, Failure> {
    let data = data_root()?;
    let view = SessionView::open(&data, id)?;
    let entries = view.checkpoints();
    let sidecar = data.sidecar(view.session().id());
    Ok(print_list(&entries, view.store(), &sidecar, json)?)
}

/// Lists the checkpoints: a table and the sidecar's total size, or a JSON array.
pub fn list(sidecar: &Path, json: bool) -> Result<ExitCode> {
    let store = open(sidecar)?;
    let entries = store.list();
    print_list(&entries, &store, sidecar, json)
}

fn print_list(
    entries: &[CheckpointEntry],
    store: &CheckpointStore,
    sidecar: &Path,
    json: bool,
) -> Result<ExitCode> {
    for p in store
        .load_problems()
        .iter()
        .filter(|p| p.severity == Severity::Error)
    {
        eprintln!("retrace: warning: {}: {}", p.path, p.problem);
    }
    if json {
        println!("{}", serde_json::to_string_pretty(entries)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:>5}  {:<20}  {:<8}  {:>5}  {:>9}  PROMPT",
        "TURN", "TIME", "COVERAGE", "FILES", "BYTES"
    );
    for e in entries {
        let coverage = serde_json::to_value(e.coverage)?
            .as_str()
            .unwrap_or("")
            .to_string();
        let time: String = e.time.chars().take(19).collect();
        println!(
            "{:>5}  {:<20}  {:<8}  {:>5}  {:>9}  {}",
            e.turn,
            time,
            coverage,
            e.file_count,
            human_bytes(e.bytes),
            first_line(&e.prompt, 60)
        );
        if e.visible == Some(false) {
            println!("{:>5}  (not on this head: code restore only)", "");
        }
        for g in &e.gaps {
            let mut line = format!("{:>5}  gap: {}", "", g.reason.as_str());
            if let Some(p) = &g.path {
                line.push_str(&format!(" {p}"));
            }
            if let Some(d) = &g.detail {
                line.push_str(&format!(" ({})", first_line(d, 60)));
            }
            println!("{line}");
        }
    }
    let total = store.total_size().context("measuring the sidecar")?;
    println!(
        "{} checkpoint(s); next turn {}; sidecar size {} ({})",
        entries.len(),
        store.next_turn(),
        human_bytes(total),
        sidecar.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Checks a session's sidecar.
pub fn fsck_session(id: &str, json: bool) -> Result<ExitCode, Failure> {
    let view = SessionView::open(&data_root()?, id)?;
    Ok(print_fsck(view.fsck(), json)?)
}

/// Checks the sidecar; exit 0 only when no problem has severity `error`.
pub fn fsck(sidecar: &Path, json: bool) -> Result<ExitCode> {
    let store = open(sidecar)?;
    print_fsck(store.fsck(), json)
}

fn print_fsck(report: retrace_protocol::FsckReport, json: bool) -> Result<ExitCode> {
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for p in &report.problems {
            let sev = match p.severity {
                Severity::Info => "info",
                Severity::Warning => "warning",
                Severity::Error => "ERROR",
            };
            let mut line = format!("{sev:<7} {}: {}", p.path, p.problem);
            if let Some(t) = p.turn {
                line.push_str(&format!(" [turn {t}]"));
            }
            if let Some(f) = &p.file {
                line.push_str(&format!(" [file {f}]"));
            }
            println!("{line}");
        }
        let failing = report
            .problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .count();
        if report.ok {
            println!("ok: no problem fails ({} note(s))", report.problems.len());
        } else {
            println!("FAILED: {failing} problem(s) fail");
        }
    }
    Ok(if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
