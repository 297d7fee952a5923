//! The [`Tool`] trait and the values that pass through it: previews, run contexts, outputs.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use retrace_fsutil::{copy_hashed, RelPath};
use retrace_protocol::{ChangeKind, FileChange, Gap};
use serde::Serialize;

use crate::describe::Title;
use crate::error::{IoContext, Result, ToolError};
use crate::workspace::Workspace;

/// One tool the model can call.
///
/// A tool is a unit struct with typed [`Tool::Args`]: the registry parses a call's JSON into them
/// once (messages name the field, see [`ToolArgs`]) and the tool never sees raw JSON, except in
/// [`Tool::describe`], which must work on anything. The registry holds tools as [`DynTool`]s,
/// implemented for every `Tool`.
///
/// The agent calls [`Tool::preview`] first, captures the before-images of the previewed paths,
/// then calls [`Tool::run`] with that preview; `run` re-checks every [`PlannedChange::seen`] right
/// before writing. Both return a [`ToolError`] for anything the model can fix; the agent turns it
/// into an error tool result, never a failed turn.
///
/// [`DynTool`]: crate::DynTool
/// [`ToolArgs`]: crate::ToolArgs
pub trait Tool: Send + Sync + 'static {
    /// Its arguments, with their JSON schema beside them.
    type Args: crate::args::ToolArgs;
    /// The name the model calls it by (`edit_file`).
    const NAME: &'static str;
    /// What it does, for the model.
    const DESCRIPTION: &'static str;
    /// True for tools that never change the workspace (their preview is empty).
    const READ_ONLY: bool;

    /// One line saying what a call with these arguments does, and what it acts on. Never fails:
    /// `args` may be anything the model sent (fields missing or of the wrong type), so it reads
    /// what it can.
    fn describe(args: &serde_json::Value) -> Title;

    /// Says what the call will change, reading the current state of each path; refuses a call that
    /// cannot succeed.
    fn preview(&self, ws: &Workspace, args: &Self::Args) -> Result<Preview>;

    /// Carries the call out. `preview` must be this call's preview; read-only tools, which the
    /// agent need not preview, accept [`Preview::empty`].
    fn run(
        &self,
        ws: &Workspace,
        args: &Self::Args,
        preview: &Preview,
        ctx: &RunContext<'_>,
    ) -> Result<ToolOutput>;
}

/// What a tool call will do, known before it runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preview {
    /// The files it will create, modify or delete (`move_file`: its source, then its destination).
    pub changes: Vec<PlannedChange>,
    /// What it cannot track (a symlink component, a hard-linked file), with `tool` set.
    pub gaps: Vec<Gap>,
    /// The command line of a shell call: the agent records it as a `bash_side_effect` gap.
    pub shell_command: Option<String>,
    /// What the call does to each file, with its diff, for showing (computed here, once, from the
    /// bytes the preview read): one entry per changed file, in the order of `changes`, except a
    /// move, which is one `move` entry (destination, with `from`).
    pub files: Vec<FileChange>,
}

/// One file a preview says will change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedChange {
    /// The workspace-relative path.
    pub path: RelPath,
    /// `root/path` (symlinks not followed).
    pub abs: PathBuf,
    /// Create, modify or delete.
    pub kind: ChangeKind,
    /// The file as the preview read it; `run` refuses to write if it differs now.
    pub seen: FileState,
    /// The file as a successful `run` leaves it (existence, SHA-256, mode), when the preview can
    /// tell: the capture seam makes it durable before the write, so that after a crash recovery
    /// can recognise the tool's own write. `None`: not known in advance.
    pub after: Option<FileState>,
}

/// Existence, content hash and mode of a file at one instant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileState {
    /// Whether a file was there.
    pub exists: bool,
    /// SHA-256 of its bytes (lowercase hex), when it existed.
    pub sha256: Option<String>,
    /// Its permission bits (`mode & 0o7777`), when it existed.
    pub mode: Option<u32>,
}

impl FileState {
    /// The state of a file that must exist and be a file (what delete and move act on): a
    /// directory is refused with `dir_hint`, a missing file with `NotFound`.
    pub fn read_existing(abs: &Path, shown: &str, dir_hint: &'static str) -> Result<FileState> {
        Ok(FileState::read_existing_keeping(abs, shown, dir_hint, 0)?.0)
    }

    /// [`FileState::read_existing`], also keeping the bytes as [`FileState::read_keeping`] does.
    pub(crate) fn read_existing_keeping(
        abs: &Path,
        shown: &str,
        dir_hint: &'static str,
        keep: usize,
    ) -> Result<(FileState, Option<Vec<u8>>)> {
        let (seen, bytes) = match FileState::read_keeping(abs, shown, keep) {
            Err(ToolError::IsDirectory { path, .. }) => {
                return Err(ToolError::IsDirectory { path, hint: dir_hint })
            }
            other => other?,
        };
        if !seen.exists {
            return Err(ToolError::NotFound {
                path: shown.to_string(),
                hint: "",
            });
        }
        Ok((seen, bytes))
    }

    /// "No file here."
    pub fn absent() -> FileState {
        FileState {
            exists: false,
            sha256: None,
            mode: None,
        }
    }

    /// The state of `abs` now, following symlinks; the SHA-256 is streamed. `shown` names the
    /// path in errors (a directory or a FIFO is refused: tools edit regular files only).
    pub fn read(abs: &Path, shown: &str) -> Result<FileState> {
        Ok(FileState::read_keeping(abs, shown, 0)?.0)
    }

    /// [`FileState::read`], also keeping the bytes read when the file has at most `keep` bytes
    /// (`None` when it is absent or larger): one read both hashes and keeps them.
    pub(crate) fn read_keeping(abs: &Path, shown: &str, keep: usize) -> Result<(FileState, Option<Vec<u8>>)> {
        // Opened non-blocking and typed from what was opened: a FIFO swapped in never hangs.
        let (file, meta) = match retrace_fsutil::open_read(abs) {
            Ok(opened) => opened,
            Err(e) if e.kind() == io::ErrorKind::NotFound || e.kind() == io::ErrorKind::NotADirectory => {
                return Ok((FileState::absent(), None));
            }
            Err(e) => return Err(e).at("inspect", abs),
        };
        if meta.is_dir() {
            return Err(ToolError::IsDirectory {
                path: shown.to_string(),
                hint: "",
            });
        }
        if !meta.is_file() {
            return Err(ToolError::NotARegularFile {
                path: shown.to_string(),
            });
        }
        let mut kept = KeepUpTo::new(keep, meta.len());
        let hashed = if keep == 0 {
            copy_hashed::<_, KeepUpTo>(&file, None)
        } else {
            copy_hashed(&file, Some(&mut kept))
        }
        .at("read", abs)?;
        let state = FileState::of_bytes_hash(hashed.sha256, mode_bits(&meta));
        Ok((state, kept.bytes))
    }

    /// The state of an existing file with this hash and mode.
    pub(crate) fn of_bytes_hash(sha256: String, mode: u32) -> FileState {
        FileState {
            exists: true,
            sha256: Some(sha256),
            mode: Some(mode),
        }
    }
}

/// A sink keeping the bytes written to it as long as they fit in a cap (then none of them).
struct KeepUpTo {
    bytes: Option<Vec<u8>>,
    cap: usize,
}

impl KeepUpTo {
    /// Keeps up to `cap` bytes, expecting `len`.
    fn new(cap: usize, len: u64) -> KeepUpTo {
        let fits = usize::try_from(len).is_ok_and(|l| l <= cap);
        KeepUpTo {
            bytes: fits.then(|| Vec::with_capacity(usize::try_from(len).unwrap_or(0))),
            cap,
        }
    }
}

impl io::Write for KeepUpTo {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(bytes) = &mut self.bytes {
            if bytes.len() + buf.len() > self.cap {
                self.bytes = None;
            } else {
                bytes.extend_from_slice(buf);
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Permission bits (including setuid/setgid/sticky) of a file.
pub(crate) fn mode_bits(meta: &std::fs::Metadata) -> u32 {
    meta.permissions().mode() & 0o7777
}

/// Whether shell commands may run (`Ask`: only if [`RunContext::approve`] says yes).
pub use retrace_protocol::BashPolicy;

/// Approver that says no: the default of [`RunContext`].
fn never(_: &str) -> bool {
    false
}

/// What a run may do and how long it may take: set by the agent per call.
pub struct RunContext<'a> {
    /// Whether shell commands may run.
    pub bash_policy: BashPolicy,
    /// Asked with the command line when the policy is [`BashPolicy::Ask`]; true runs it.
    pub approve: &'a dyn Fn(&str) -> bool,
    /// The shell timeout when the call gives no `timeout_ms`.
    pub bash_timeout_default: Duration,
    /// The most bytes of output a tool returns to the model (a note says when output was cut).
    pub output_cap_bytes: usize,
    /// Set to stop the running tool (a shell command is killed).
    pub cancel: Arc<AtomicBool>,
}

/// The default shell timeout: two minutes.
pub const DEFAULT_BASH_TIMEOUT: Duration = Duration::from_secs(120);
/// The default output cap: 30,000 bytes.
pub const DEFAULT_OUTPUT_CAP: usize = 30_000;

impl<'a> RunContext<'a> {
    /// A context with `policy` and `approve`, and default timeout, cap and cancel flag.
    pub fn new(bash_policy: BashPolicy, approve: &'a dyn Fn(&str) -> bool) -> RunContext<'a> {
        RunContext {
            bash_policy,
            approve,
            bash_timeout_default: DEFAULT_BASH_TIMEOUT,
            output_cap_bytes: DEFAULT_OUTPUT_CAP,
            cancel: Arc::new(AtomicBool::new(false)),
        }
    }

    /// This context with another default shell timeout.
    pub fn with_bash_timeout(mut self, timeout: Duration) -> RunContext<'a> {
        self.bash_timeout_default = timeout;
        self
    }

    /// This context with another output cap.
    pub fn with_output_cap(mut self, bytes: usize) -> RunContext<'a> {
        self.output_cap_bytes = bytes;
        self
    }

    /// This context sharing `cancel` with the caller.
    pub fn with_cancel(mut self, cancel: Arc<AtomicBool>) -> RunContext<'a> {
        self.cancel = cancel;
        self
    }
}

impl Default for RunContext<'_> {
    /// Shell denied, every other value at its default.
    fn default() -> Self {
        RunContext::new(BashPolicy::Deny, &never)
    }
}

impl std::fmt::Debug for RunContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunContext")
            .field("bash_policy", &self.bash_policy)
            .field("bash_timeout_default", &self.bash_timeout_default)
            .field("output_cap_bytes", &self.output_cap_bytes)
            .field("cancel", &self.cancel)
            .finish_non_exhaustive()
    }
}

/// What a successful call returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolOutput {
    /// The text the model sees.
    pub content: String,
    /// The workspace paths written or deleted (for the agent's after-images).
    pub changed: Vec<RelPath>,
    /// A shell command's exit code (`None` for other tools, and for a command a signal ended).
    pub exit_code: Option<i32>,
}

/// The model-facing description of one tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The JSON schema of its arguments.
    pub parameters: serde_json::Value,
}

impl Preview {
    /// The preview of a call that changes nothing.
    pub fn empty() -> Preview {
        Preview::default()
    }

    /// The planned change of `path`, or a [`ToolError::PreviewMismatch`].
    pub(crate) fn change_of(&self, path: &RelPath) -> Result<&PlannedChange> {
        self.changes
            .iter()
            .find(|c| &c.path == path)
            .ok_or_else(|| ToolError::PreviewMismatch {
                detail: format!("no planned change for `{path}`"),
            })
    }
}

/// Collects a resolved path's gaps into `gaps`, naming `tool`.
pub(crate) fn push_gaps(gaps: &mut Vec<Gap>, tool: &'static str, found: &[Gap]) {
    for g in found {
        let mut g = g.clone();
        g.tool = Some(tool.to_string());
        if !gaps.contains(&g) {
            gaps.push(g);
        }
    }
}
