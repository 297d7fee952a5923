//! The temp files the edit tools name `.<name>.retrace-<pid>-<n>.tmp` beside the file they write
//! (`retrace_fsutil::tool_temp_name`): those a crashed turn's calls left, which recovery removes
//! (exactly the names their intents journaled), and those still there, which fsck names.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use retrace_fsutil::RelPath;

use crate::sidecar::Sidecar;

impl Sidecar {
    /// The edit tools' temp files beside a path some turn touched, which recovery did not remove
    /// (their process is alive, or their directory cannot be reached): `(path, pid)`, for fsck.
    pub(crate) fn stray_tool_temps(&self) -> Vec<(String, u32)> {
        let Some(root) = self.root.as_deref() else {
            return Vec::new();
        };
        let mut beside = Beside::default();
        for t in self.turns.values() {
            for f in &t.files {
                if let Some(rel) = f.path.safe() {
                    beside.add(rel);
                }
            }
        }
        let mut out = Vec::new();
        for (dir, names) in &beside.0 {
            for (cand, pid) in tool_temps_in(root, dir, names) {
                let is_file = std::fs::symlink_metadata(root.join(dir).join(&cand))
                    .is_ok_and(|m| m.file_type().is_file());
                if is_file {
                    out.push((dir.join(&cand).to_string_lossy().into_owned(), pid));
                }
            }
        }
        out
    }
}

/// File names by directory (workspace-relative): where to look for the tools' temp files, each
/// directory listed once however many of its files a turn touched.
#[derive(Default)]
struct Beside(BTreeMap<PathBuf, BTreeSet<OsString>>);

impl Beside {
    fn add(&mut self, rel: &RelPath) {
        let p = rel.as_path();
        if let Some(name) = p.file_name() {
            let dir = p.parent().unwrap_or(Path::new("")).to_path_buf();
            self.0.entry(dir).or_default().insert(name.to_os_string());
        }
    }
}

/// The tools' temp files in `dir` made for one of `names`, with their process ids. Reached
/// without following a symlink (a directory that cannot be listed that way yields none).
fn tool_temps_in(root: &Path, dir: &Path, names: &BTreeSet<OsString>) -> Vec<(OsString, u32)> {
    let Ok(listed) = retrace_fsutil::list_dir_nofollow(root, dir) else {
        return Vec::new();
    };
    listed
        .into_iter()
        // Cheap first: only a name shaped like a tool's temp file is matched against the names.
        .filter(|c| {
            let b = c.as_bytes();
            b.starts_with(b".") && b.ends_with(b".tmp") && b.windows(9).any(|w| w == b".retrace-")
        })
        .filter_map(|c| {
            let pid = names
                .iter()
                .find_map(|n| retrace_fsutil::tool_temp_owner(n, &c))?;
            Some((c, pid))
        })
        .collect()
}

/// Removes the edit tools' temp files in `dir` made for one of `names` by the crashed turn's calls:
/// exactly the names `.<name>.retrace-<pid>-<n>.tmp` its intents journaled (`numbers`), regular
/// files only. That process no longer holds the session (recovery runs under its lock), so its temp
/// files are left over whether or not its number belongs to another process now; any other name —
/// another session's write in progress, or a file of the user's that merely looks like a temp
/// file — is never removed. Never through a symlink; what cannot be removed stays, and fsck names it.
pub(crate) fn remove_tool_temps(
    fs_: &retrace_fsutil::Fs,
    root: &Path,
    temps: &[(RelPath, u32, u64)],
    numbers: &BTreeMap<(u32, u64), u64>,
) {
    let mut synced: BTreeSet<PathBuf> = BTreeSet::new();
    for (rel, pid, from) in temps {
        let p = rel.as_path();
        let (Some(name), dir) = (p.file_name(), p.parent().unwrap_or(Path::new(""))) else {
            continue;
        };
        if *pid == std::process::id() {
            continue;
        }
        let count = numbers.get(&(*pid, *from)).copied().unwrap_or(1);
        for n in *from..from.saturating_add(count) {
            let cand = retrace_fsutil::tool_temp_name(name, *pid, n);
            let is_file =
                std::fs::symlink_metadata(root.join(dir).join(&cand)).is_ok_and(|m| m.file_type().is_file());
            if !is_file {
                continue;
            }
            if fs_.step("remove_file").is_err() {
                return;
            }
            if retrace_fsutil::remove_file_nofollow(root, &dir.join(&cand)).is_ok() {
                synced.insert(dir.to_path_buf());
            }
        }
    }
    for dir in synced {
        let _ = fs_.sync_dir(&root.join(dir));
    }
}
