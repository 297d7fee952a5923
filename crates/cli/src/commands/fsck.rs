//! `retrace fsck`: verifies every record and payload of a sidecar (and a session's log);
//! `--repair` first moves the lines of a damaged log aside (SPEC §6).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use retrace_control::ServiceOptions;
use retrace_protocol::words::count;
use retrace_protocol::{FsckReport, LogRepair, Severity};

use super::args::SessionArgs;
use super::checkpoints::{check_sidecar_arg, sidecar_failure};
use crate::common::{print_json, reader, with_service};
use crate::failure::CmdResult;
use crate::output::shown_path;

/// Verify every record and payload (and a session's log); exit 0 only when no problem fails.
#[derive(Debug, clap::Args)]
pub struct FsckArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// The checkpoint sidecar directory to check.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["session", "continue_latest", "workspace"])]
    pub sidecar: Option<PathBuf>,
    /// Repair the session's log first: every line it cannot read moves into
    /// `<session>.damaged-<n>` beside it (never deleted); then check.
    #[arg(long, conflicts_with = "sidecar")]
    pub repair: bool,
    /// Print `{ok, problems}` as JSON (with `repair`, what it did).
    #[arg(long)]
    pub json: bool,
}

/// Checks `--sidecar`, else the session's log and sidecar.
pub fn run(a: FsckArgs) -> CmdResult {
    match a.sidecar {
        Some(dir) => fsck(&dir, a.json),
        None => fsck_session(&a.session.pick_to_read()?.id, a.json, a.repair),
    }
}

/// Checks a session's log and sidecar; with `repair`, repairs the log first (lines it cannot read
/// move into a file beside it) and says what moved where.
fn fsck_session(id: &str, json: bool, repair: bool) -> CmdResult {
    if !repair {
        return print_fsck(reader(id)?.fsck(), json);
    }
    let opts = ServiceOptions::new(crate::common::data_root()?.root());
    let repaired = with_service(opts, async |svc| Ok(svc.repair_log(id).await?))?;
    let report = reader(id)?.fsck();
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
            "repaired {}: no line was moved; a placeholder note stands for each of {} that later lines name but no line holds, so what follows them stays",
            shown_path(&repaired.log_path),
            count(repaired.placeholders as usize, "message")
        ),
        None => println!(
            "the log {} reads as a whole: nothing to repair",
            shown_path(&repaired.log_path)
        ),
        Some(to) => {
            println!(
                "repaired {}: moved {} to {} ({} kept)",
                shown_path(&repaired.log_path),
                count(repaired.moved.len(), "line"),
                shown_path(to),
                count(repaired.lines_kept as usize, "line")
            );
            for m in &repaired.moved {
                println!("  line {}: {}", m.line, shown_path(&m.reason));
            }
            if repaired.placeholders > 0 {
                println!(
                    "  a placeholder note stands for each of {} that could not be read, so what follows them stays",
                    count(repaired.placeholders as usize, "message")
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
fn fsck(sidecar: &Path, json: bool) -> CmdResult {
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
            println!("ok: no problem fails ({})", count(report.problems.len(), "note"));
        } else {
            let fail = if failing == 1 { "fails" } else { "fail" };
            println!("FAILED: {} {fail}", count(failing, "problem"));
        }
    }
    Ok(exit_of(&report))
}
