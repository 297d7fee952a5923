//! `retrace sessions delete ID` and `retrace sessions prune --older-than AGE`: remove sessions
//! (log, lease, whole sidecar; SPEC §2). A session a process writes is refused (delete, exit 1
//! naming the holder) or left alone (prune, listed as held).

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use retrace_control::{PruneRequest, Service, ServiceOptions};
use retrace_protocol::RemovedSession;

use crate::common::{data_root, print_json, with_service, workspace_arg, CmdResult, Failure};
use crate::output::{human_bytes, shown_path};

fn service_options() -> Result<ServiceOptions, Failure> {
    Ok(ServiceOptions::new(data_root()?.root()))
}

fn line(verb: &str, r: &RemovedSession) {
    let ws = r
        .workspace
        .as_deref()
        .map(shown_path)
        .unwrap_or_else(|| "(workspace unknown)".to_string());
    let used = r
        .last_used
        .as_deref()
        .map(|t| t.chars().take(19).collect::<String>())
        .unwrap_or_default();
    println!(
        "{verb} {}  {ws}  last used {used}  {}",
        r.id,
        human_bytes(r.bytes)
    );
}

/// `sessions delete ID`.
pub fn delete(id: &str, json: bool) -> CmdResult {
    let removed = with_service(service_options()?, async |svc: &Service| {
        Ok(svc.delete_session(id).await?)
    })?;
    if json {
        print_json(&removed)?;
    } else {
        line("deleted", &removed);
    }
    Ok(ExitCode::SUCCESS)
}

/// `sessions prune --older-than AGE [--all] [--dry-run]`.
pub fn prune(older_than: &str, all: bool, workspace: Option<&Path>, dry_run: bool, json: bool) -> CmdResult {
    let age = parse_age(older_than).map_err(|e| Failure::usage(format!("--older-than: {e}")))?;
    let workspace = if all {
        None
    } else {
        Some(workspace_arg(workspace)?)
    };
    let req = PruneRequest {
        older_than: age,
        workspace,
        dry_run,
    };
    let report = with_service(service_options()?, async |svc: &Service| {
        Ok(svc.prune_sessions(req).await?)
    })?;
    if json {
        print_json(&report)?;
        return Ok(ExitCode::SUCCESS);
    }
    let verb = if dry_run { "would delete" } else { "deleted" };
    for r in &report.removed {
        line(verb, r);
    }
    for id in &report.held {
        println!("kept {id}  (a process is writing it)");
    }
    let bytes: u64 = report.removed.iter().map(|r| r.bytes).sum();
    let summary = if dry_run { "would be deleted" } else { "deleted" };
    println!(
        "{} session(s) {summary}, {}; {} held",
        report.removed.len(),
        human_bytes(bytes),
        report.held.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// `30d`, `12h`, `2w`, `90m`, `45s`: a number and one unit.
pub fn parse_age(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not an age (like 30d, 12h or 2w)"))?;
    let secs: u64 = match unit.trim() {
        "s" => 1,
        "m" | "min" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        "" => {
            return Err(format!(
                "`{s}` has no unit; write {n}d for days (s, m, h, d or w)"
            ))
        }
        other => return Err(format!("unknown unit `{other}` in `{s}` (use s, m, h, d or w)")),
    };
    n.checked_mul(secs)
        .map(Duration::from_secs)
        .ok_or_else(|| format!("`{s}` is too long"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages() {
        assert_eq!(parse_age("30d"), Ok(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_age("12h"), Ok(Duration::from_secs(12 * 3600)));
        assert_eq!(parse_age("0s"), Ok(Duration::ZERO));
        assert!(parse_age("30").unwrap_err().contains("no unit"));
        assert!(parse_age("3 fortnights").is_err());
        assert!(parse_age("d").is_err());
    }
}
