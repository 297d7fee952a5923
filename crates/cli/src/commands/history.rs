//! `retrace history PATH`: every version of one file the session knows (SPEC §5.8), oldest
//! first: its state at each turn's start and end, before and after each restore, revert, undo or
//! redo, and now. Read-only, no lease needed. `retrace revert PATH --version V` restores one.

use std::path::PathBuf;
use std::process::ExitCode;

use retrace_protocol::{FileHistory, HistoryVersion, VersionOrigin};

use super::args::SessionArgs;
use crate::common::{print_json, reader};
use crate::failure::CmdResult;
use crate::output::{human_bytes, shown_path};

/// List every version of one file the session knows.
#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// The file (relative to the workspace).
    pub path: PathBuf,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Prints the file's versions.
pub fn run(a: HistoryArgs) -> CmdResult {
    let id = a.session.pick_to_read()?.id;
    let h = reader(&id)?.file_history(&a.path)?;
    if a.json {
        print_json(&h)?;
    } else {
        print!("{}", render(&h));
    }
    Ok(ExitCode::SUCCESS)
}

/// The versions as a table, one line each.
pub fn render(h: &FileHistory) -> String {
    let mut out = format!("{}\n", shown_path(&h.path));
    for v in &h.versions {
        out.push_str(&line(v));
        out.push('\n');
    }
    out
}

fn line(v: &HistoryVersion) -> String {
    let what = match (v.origin, v.turn) {
        (VersionOrigin::TurnStart, Some(t)) => format!("turn {t} start"),
        (VersionOrigin::TurnEnd, Some(t)) => format!("turn {t} end"),
        (VersionOrigin::BeforeRestore, _) => "before a restore".to_string(),
        (VersionOrigin::Restore, Some(t)) => format!("restored to before turn {t}"),
        (VersionOrigin::Restore, None) => "restored".to_string(),
        (VersionOrigin::Revert, _) => "reverted".to_string(),
        (VersionOrigin::Undo, _) => "undo".to_string(),
        (VersionOrigin::Redo, _) => "redo".to_string(),
        (VersionOrigin::Now, _) => "now".to_string(),
        (_, None) => "turn".to_string(),
    };
    let state = match (v.existed, &v.sha256) {
        (false, _) => "absent".to_string(),
        (true, Some(sha)) => format!(
            "{} {}",
            sha.get(..12).unwrap_or(sha),
            v.size.map(human_bytes).unwrap_or_default()
        ),
        (true, None) => "present (hash not recorded)".to_string(),
    };
    // `2026-12-06T19:40:45.66Z` → `2026-12-06 19:40:45` (times are UTC).
    let time = v
        .time
        .as_deref()
        .and_then(|t| t.get(..19))
        .map(|t| t.replacen('T', " ", 1))
        .unwrap_or_default();
    let note = match (&v.reason, v.restorable) {
        (Some(why), false) => format!("  (cannot be restored: {why})"),
        _ => String::new(),
    };
    format!("  v{:<3} {what:<20} {time:<19}  {state}{note}", v.version)
        .trim_end()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_per_version() {
        let h = FileHistory {
            path: "a.txt".into(),
            versions: vec![
                HistoryVersion {
                    version: 1,
                    turn: Some(0),
                    origin: VersionOrigin::TurnStart,
                    time: Some("2026-12-06T10:00:00Z".into()),
                    sha256: None,
                    size: None,
                    existed: false,
                    transaction: None,
                    restorable: true,
                    reason: None,
                },
                HistoryVersion {
                    version: 2,
                    turn: Some(0),
                    origin: VersionOrigin::TurnEnd,
                    time: None,
                    sha256: Some("0123456789abcdef".into()),
                    size: Some(10),
                    existed: true,
                    transaction: None,
                    restorable: false,
                    reason: Some("its bytes are no longer kept".into()),
                },
            ],
        };
        assert_eq!(
            render(&h),
            "a.txt\n  v1   turn 0 start         2026-12-06 10:00:00  absent\n  v2   turn 0 end                                0123456789ab 10 B  (cannot be restored: its bytes are no longer kept)\n"
        );
    }
}
