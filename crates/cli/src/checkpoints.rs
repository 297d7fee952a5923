//! `retrace checkpoints` and `retrace fsck`, for a session or any sidecar directory.

use std::path::Path;
use std::process::ExitCode;

use retrace_control::ServiceOptions;
use retrace_protocol::{CheckpointListing, FsckReport, LogRepair, Severity};

use crate::common::{print_json, with_service, CmdResult, Failure};
use crate::output::{first_line, human_bytes, shown_path};

/// A `--sidecar` that is not there, or not a readable directory, is a usage error (exit 2), as
/// every file named on the command line.
fn check_sidecar_arg(sidecar: &Path) -> Result<(), Failure> {
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
fn sidecar_failure(e: retrace_protocol::Error, sidecar: &Path) -> Failure {
    Failure::hinted(
        retrace_protocol::Error::new(
            e.code,
            format!("cannot read the sidecar `{}`: {}", sidecar.display(), e.message),
        ),
        "; pass the `<session>.ckpt` directory with --sidecar",
    )
}

/// Lists the checkpoints of a session (with visibility on its selected head).
pub fn list_session(id: &str, json: bool) -> CmdResult {
    let listing = crate::sessions::reader(id)?.checkpoints()?;
    print_list(&listing, json)
}

/// Lists the checkpoints of any sidecar directory.
pub fn list(sidecar: &Path, json: bool) -> CmdResult {
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
        for g in &e.gaps {
            let mut line = format!("{:>5}  gap: {}", "", g.reason.as_str());
            if let Some(p) = &g.path {
                line.push_str(&format!(" {}", shown_path(p)));
            }
            if let Some(d) = &g.detail {
                line.push_str(&format!(" ({})", first_line(d, 60)));
            }
            println!("{line}");
        }
    }
    println!(
        "{} checkpoint(s); next turn {}; sidecar size {} ({})",
        listing.entries.len(),
        listing.next_turn,
        human_bytes(listing.total_bytes),
        listing.sidecar
    );
    Ok(ExitCode::SUCCESS)
}

/// Checks a session's log and sidecar; with `repair`, repairs the log first (lines it cannot read
/// move into a file beside it) and says what moved where.
pub fn fsck_session(id: &str, json: bool, repair: bool) -> CmdResult {
    if !repair {
        return print_fsck(crate::sessions::reader(id)?.fsck(), json);
    }
    let opts = ServiceOptions::new(crate::common::data_root()?.root());
    let repaired = with_service(opts, async |svc| Ok(svc.repair_log(id).await?))?;
    let report = crate::sessions::reader(id)?.fsck();
    if json {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            #[serde(flatten)]
            report: &'a FsckReport,
            repair: &'a LogRepair,
        }
        print_json(&Out {
            report: &report,
            repair: &repaired,
        })?;
        return Ok(exit_of(&report));
    }
    match &repaired.moved_to {
        None if repaired.placeholders > 0 => println!(
            "repaired {}: no line was moved; a placeholder note stands for each of {} message(s) that later lines name but no line holds, so what follows them stays",
            shown_path(&repaired.log_path),
            repaired.placeholders
        ),
        None => println!(
            "the log {} reads as a whole: nothing to repair",
            shown_path(&repaired.log_path)
        ),
        Some(to) => {
            println!(
                "repaired {}: moved {} line(s) to {} ({} line(s) kept)",
                shown_path(&repaired.log_path),
                repaired.moved.len(),
                shown_path(to),
                repaired.lines_kept
            );
            for m in &repaired.moved {
                println!("  line {}: {}", m.line, shown_path(&m.reason));
            }
            if repaired.placeholders > 0 {
                println!(
                    "  a placeholder note stands for each of {} message(s) that could not be read, so what follows them stays",
                    repaired.placeholders
                );
            }
        }
    }
    print_fsck(report, false)
}

fn exit_of(report: &FsckReport) -> ExitCode {
    if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Checks the sidecar; exit 0 only when no problem has severity `error`.
pub fn fsck(sidecar: &Path, json: bool) -> CmdResult {
    check_sidecar_arg(sidecar)?;
    let report = retrace_control::fsck_sidecar(sidecar).map_err(|e| sidecar_failure(e, sidecar))?;
    print_fsck(report, json)
}

fn print_fsck(report: FsckReport, json: bool) -> CmdResult {
    if json {
        print_json(&report)?;
    } else {
        for p in &report.problems {
            let sev = match p.severity {
                Severity::Info => "info",
                Severity::Warning => "warning",
                Severity::Error => "ERROR",
            };
            let mut line = format!("{sev:<7} {}: {}", shown_path(&p.path), shown_path(&p.problem));
            if let Some(t) = p.turn {
                line.push_str(&format!(" [turn {t}]"));
            }
            if let Some(f) = &p.file {
                line.push_str(&format!(" [file {}]", shown_path(f)));
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
    Ok(exit_of(&report))
}
