//! Listing the sessions of a workspace by reading only the first line of each log.

use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::entry::{ForkedFrom, Header, FORMAT};
use crate::error::{IoContext, Result};
use crate::ids::SessionId;

/// The longest first line read when listing (a header is far shorter; a format-1 message may not be).
const FIRST_LINE_LIMIT: u64 = 1 << 20;

/// One session, from its header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionListing {
    /// The session id (the log's file stem).
    pub id: SessionId,
    /// 2, or 1 for a flat legacy log.
    pub format: u32,
    /// The workspace from the header (`None` for format 1, which records none).
    pub workspace: Option<String>,
    /// When it was created (`None` for format 1).
    pub created_at: Option<String>,
    /// Where it was made from, if anywhere.
    pub forked_from: Option<ForkedFrom>,
    /// The log file.
    pub log_path: PathBuf,
}

/// A log that could not be listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListProblem {
    /// The file.
    pub path: PathBuf,
    /// Why it was skipped.
    pub problem: String,
}

/// The sessions of a directory.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SessionList {
    /// Sessions, oldest first (by `created_at`, then id).
    pub sessions: Vec<SessionListing>,
    /// `*.jsonl` files whose first line is neither a format-2 header nor a format-1 message.
    pub problems: Vec<ListProblem>,
}

/// Lists the sessions in `dir` (a missing directory has none). With `workspace`, only the format-2
/// sessions whose header names it (after canonicalising it) are listed; format-1 logs, which name no
/// workspace, are listed only without a filter. Reads the first line of each `*.jsonl`, nothing more.
pub fn list_sessions(dir: &Path, workspace: Option<&Path>) -> Result<SessionList> {
    let mut out = SessionList::default();
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e).at("list", dir),
    };
    let want = workspace.map(|w| {
        fs::canonicalize(w)
            .unwrap_or_else(|_| w.to_path_buf())
            .to_string_lossy()
            .into_owned()
    });
    for entry in entries {
        let entry = entry.at("list", dir)?;
        let path = entry.path();
        let name = entry.file_name();
        let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".jsonl")) else {
            continue;
        };
        if stem.is_empty() || stem.starts_with('.') || !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let id = SessionId::new(stem);
        match read_first_line(&path) {
            Ok(line) => match classify(&line) {
                Some(Ok(header)) => {
                    if want.as_ref().is_some_and(|w| *w != header.workspace) {
                        continue;
                    }
                    out.sessions.push(SessionListing {
                        id,
                        format: FORMAT,
                        workspace: Some(header.workspace),
                        created_at: Some(header.created_at),
                        forked_from: header.forked_from,
                        log_path: path,
                    });
                }
                Some(Err(())) if want.is_none() => out.sessions.push(SessionListing {
                    id,
                    format: 1,
                    workspace: None,
                    created_at: None,
                    forked_from: None,
                    log_path: path,
                }),
                Some(Err(())) => {}
                None => out.problems.push(ListProblem {
                    path,
                    problem: "the first line is neither a format-2 session header nor a format-1 message"
                        .to_string(),
                }),
            },
            Err(problem) => out.problems.push(ListProblem { path, problem }),
        }
    }
    out.sessions
        .sort_by(|a, b| (&a.created_at, &a.id).cmp(&(&b.created_at, &b.id)));
    Ok(out)
}

fn read_first_line(path: &Path) -> std::result::Result<Vec<u8>, String> {
    let (file, _) = retrace_fsutil::open_regular(path).map_err(|e| format!("cannot open: {e}"))?;
    let mut line = Vec::new();
    BufReader::new(file.take(FIRST_LINE_LIMIT))
        .read_until(b'\n', &mut line)
        .map_err(|e| format!("cannot read: {e}"))?;
    if line.last() != Some(&b'\n') {
        return Err(if line.is_empty() {
            "the file is empty".to_string()
        } else {
            "the first line is incomplete or longer than 1 MiB".to_string()
        });
    }
    line.pop();
    Ok(line)
}

/// `Some(Ok(header))` for format 2, `Some(Err(()))` for a format-1 message, `None` otherwise.
fn classify(line: &[u8]) -> Option<std::result::Result<Header, ()>> {
    let v: serde_json::Value = serde_json::from_slice(line).ok()?;
    let obj = v.as_object()?;
    match obj.get("type") {
        Some(t) if t == "session" => serde_json::from_value::<Header>(v)
            .ok()
            .filter(|h| h.format == FORMAT)
            .map(Ok),
        Some(_) => None,
        None => obj.contains_key("role").then_some(Err(())),
    }
}

/// The sessions of `workspace` (canonical, as headers record it) other than `except` whose writer
/// lease is held now, by this process or another: writers that may change the workspace's files
/// while one of `except`'s commands runs. Only lease files are looked at, and only the logs of held
/// ones are read; whatever cannot be read is left out.
pub fn other_writers(dir: &Path, workspace: &Path, except: &SessionId) -> Vec<SessionId> {
    writers_of(dir, workspace, except, None)
}

/// [`other_writers`], and also every other session of `workspace` whose lease was taken or whose
/// log was written at or after `since`, though no one holds it now: a session that opened,
/// wrote and closed within a span (a shell command's) was writing in the workspace then.
pub fn writers_since(
    dir: &Path,
    workspace: &Path,
    except: &SessionId,
    since: std::time::SystemTime,
) -> Vec<SessionId> {
    writers_of(dir, workspace, except, Some(since))
}

fn writers_of(
    dir: &Path,
    workspace: &Path,
    except: &SessionId,
    since: Option<std::time::SystemTime>,
) -> Vec<SessionId> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let want = workspace.to_string_lossy();
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".lease")) else {
            continue;
        };
        let id = SessionId::new(stem);
        if stem.is_empty() || stem.starts_with('.') || &id == except {
            continue;
        }
        let log = crate::log::log_path(dir, &id);
        let touched_since = |p: &Path| {
            since.is_some_and(|t| fs::metadata(p).and_then(|m| m.modified()).is_ok_and(|m| m >= t))
        };
        let held = matches!(crate::Lease::holder(dir, &id), Ok(Some(_)));
        if !held && !touched_since(&entry.path()) && !touched_since(&log) {
            continue;
        }
        let same = read_first_line(&log)
            .ok()
            .and_then(|l| classify(&l))
            .and_then(|h| h.ok())
            .is_some_and(|h| h.workspace == want);
        if same {
            out.push(id);
        }
    }
    out.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    out
}
