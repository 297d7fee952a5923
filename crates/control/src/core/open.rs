//! Opening a session's core: a new session on a workspace, or an existing one for writing (its
//! lease taken), with the checkpoint store beside it; the workspace checks every opening makes;
//! and an old flat log becoming a new session on its first write (SPEC §6).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use retrace_checkpoint::{CheckpointStore, StoreOptions};
use retrace_protocol::{CheckpointBackend, ErrorCode, ErrorDetails, RetentionLimits, SessionId};
use retrace_session::{Session, SessionOptions};

use super::Core;
use crate::bus::EventBus;
use crate::error::{coded, ControlError, Result};
use crate::paths::DataRoot;

fn store_options(session: &Session, retention: RetentionLimits) -> StoreOptions {
    StoreOptions {
        session_id: Some(session.id().as_str().to_string()),
        limits: retention,
        ..StoreOptions::default()
    }
}

/// The canonical form of a workspace directory, or a usage error naming it.
pub(crate) fn canonical_workspace(workspace: &Path) -> Result<PathBuf> {
    let root = std::fs::canonicalize(workspace).map_err(|e| {
        coded(
            ErrorCode::Usage,
            format!("the workspace `{}` cannot be used: {e}", workspace.display()),
        )
    })?;
    if !root.is_dir() {
        return Err(coded(
            ErrorCode::Usage,
            format!("the workspace `{}` is not a directory", workspace.display()),
        ));
    }
    if root.parent().is_none() {
        return Err(coded(
            ErrorCode::Usage,
            format!(
                "the workspace `{}` is the file system's root, which cannot be a workspace (the agent could edit any file of the machine); run it in your project",
                workspace.display()
            ),
        ));
    }
    if root.components().any(|c| c.as_os_str() == ".git") || retrace_fsutil::is_git_dir(&root) {
        return Err(coded(
            ErrorCode::Usage,
            format!(
                "the workspace `{}` is a git directory or inside a `.git` directory, which tools never touch; run it in the repository's working tree",
                workspace.display()
            ),
        ));
    }
    Ok(root)
}

/// The canonical form of a directory a new session may work on: a workspace (see
/// [`canonical_workspace`]) outside Retrace's data directory; else a usage error naming it.
pub(crate) fn new_workspace(data: &DataRoot, workspace: &Path) -> Result<PathBuf> {
    let root = canonical_workspace(workspace)?;
    let data_root = std::fs::canonicalize(data.root()).unwrap_or_else(|_| data.root().to_path_buf());
    if root.starts_with(&data_root) {
        return Err(coded(
            ErrorCode::Usage,
            format!(
                "`{}` is inside Retrace's data directory `{}`, which cannot be a workspace (every edit there would be refused); run it in your project",
                root.display(),
                data_root.display()
            ),
        ));
    }
    Ok(root)
}

/// The workspace of an old flat log, which records none (SPEC §6): the one given, else the current
/// directory — never a directory inside the data root, where a code restore would write among the
/// sessions.
fn format1_workspace(data: &DataRoot, session: &Session, here: std::io::Result<PathBuf>) -> Result<PathBuf> {
    let unknown = |why: String| {
        let log = session.log_path().to_string_lossy().into_owned();
        ControlError::Coded(
            retrace_protocol::Error::new(
                ErrorCode::Usage,
                format!(
                    "session {} is an old (format-1) log, which records no workspace, and {why}; a change to it goes to a new session of the workspace the log belongs to, so name that directory",
                    session.id()
                ),
            )
            .with_details(ErrorDetails::WorkspaceUnknown { log_path: log }),
        )
    };
    let root = here.map_err(|e| unknown(format!("the current directory cannot be read ({e})")))?;
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    let data_root = std::fs::canonicalize(data.root()).unwrap_or_else(|_| data.root().to_path_buf());
    if root.starts_with(&data_root) {
        return Err(unknown(format!(
            "`{}` is inside Retrace's data directory `{}`, which cannot be a workspace",
            root.display(),
            data_root.display()
        )));
    }
    Ok(root)
}

impl Core {
    /// Starts a new session on `workspace`.
    pub(crate) fn create(
        data: &DataRoot,
        workspace: &Path,
        backend: CheckpointBackend,
        retention: RetentionLimits,
        bus: Arc<EventBus>,
    ) -> Result<Core> {
        let root = new_workspace(data, workspace)?;
        let sopts = SessionOptions {
            backend,
            ..SessionOptions::default()
        };
        let session = sopts.create(&data.sessions_dir(), &root)?;
        Core::assemble(data, session, root, retention, bus)
    }

    /// Opens session `id` for writing (takes its lease). A given `workspace` must be the session's;
    /// an old flat log, which records none, takes it (else the current directory) when first
    /// written (SPEC §6).
    pub(crate) fn open(
        data: &DataRoot,
        id: &SessionId,
        workspace: Option<&Path>,
        retention: RetentionLimits,
        bus: Arc<EventBus>,
    ) -> Result<Core> {
        let given = match workspace {
            Some(w) => Some(canonical_workspace(w)?),
            None => None,
        };
        // Only an old flat log needs the current directory: a session that records its workspace
        // opens from anywhere, a deleted directory included.
        let here = match &given {
            Some(w) => Ok(w.clone()),
            None => std::env::current_dir(),
        };
        let sopts = SessionOptions {
            legacy_workspace: here.as_ref().ok().cloned(),
            ..SessionOptions::default()
        };
        // A log with a bad line opens too (it takes no write): its files can still be restored.
        let session = sopts.open_writer_tolerant(&data.sessions_dir(), id)?;
        let root = match (session.workspace().map(PathBuf::from), given) {
            (Some(recorded), Some(w)) if recorded != w => {
                return Err(coded(
                    ErrorCode::Usage,
                    format!(
                        "session {id} belongs to the workspace `{}`, not `{}`",
                        recorded.display(),
                        w.display()
                    ),
                ))
            }
            (Some(recorded), _) => recorded,
            (None, _) => format1_workspace(data, &session, here)?,
        };
        if !root.is_dir() {
            return Err(coded(
                ErrorCode::Usage,
                format!(
                    "the workspace `{}` of session {id} does not exist any more",
                    root.display()
                ),
            ));
        }
        // Resolved once, when the session began (SPEC §2): a workspace directory swapped for a
        // symlink since (or moved under one) would lead every write somewhere else.
        match std::fs::canonicalize(&root) {
            Ok(now) if now == root => {}
            Ok(now) => {
                return Err(coded(
                    ErrorCode::Usage,
                    format!(
                        "the workspace `{}` of session {id} now leads to `{}` (a symlink in its place or above it); Retrace does not follow it: put the directory back",
                        root.display(),
                        now.display()
                    ),
                ))
            }
            Err(e) => {
                return Err(coded(
                    ErrorCode::Usage,
                    format!("the workspace `{}` of session {id} cannot be used: {e}", root.display()),
                ))
            }
        }
        Core::assemble(data, session, root, retention, bus)
    }

    /// The core of `session`, a new session made here (a fork into a new workspace) and opened
    /// as a writer, on its workspace `root`.
    pub(crate) fn adopt(
        data: &DataRoot,
        session: Session,
        root: PathBuf,
        retention: RetentionLimits,
        bus: Arc<EventBus>,
    ) -> Result<Core> {
        Core::assemble(data, session, root, retention, bus)
    }

    fn assemble(
        data: &DataRoot,
        session: Session,
        root: PathBuf,
        retention: RetentionLimits,
        bus: Arc<EventBus>,
    ) -> Result<Core> {
        let mut session = session;
        let store = CheckpointStore::open(
            &data.sidecar(session.id()),
            &root,
            store_options(&session, retention),
        )?;
        crate::view::anchor_format1_turns(&mut session, &store)?;
        Ok(Core {
            data: data.clone(),
            session,
            store,
            workspace: root,
            retention,
            bus,
            plans: HashMap::new(),
            plan_counter: 0,
            live: None,
            git: None,
            git_ws: None,
            git_first: None,
            tally: crate::tally::Tally::default(),
        })
    }

    /// Opens the checkpoint store of the current session (after a format-1 log became a new one).
    pub(super) fn reopen_store(&mut self) -> Result<()> {
        self.store = CheckpointStore::open(
            &self.data.sidecar(self.session.id()),
            &self.workspace,
            store_options(&self.session, self.retention),
        )?;
        Ok(())
    }

    /// Before a write to an old flat log: it becomes a new format-2 session (SPEC §6), with a
    /// sidecar of its own.
    pub(super) fn upgrade_if_flat(&mut self) -> Result<()> {
        if self.session.format() == 1 && self.session.upgrade()?.is_some() {
            self.reopen_store()?;
        }
        Ok(())
    }
}
