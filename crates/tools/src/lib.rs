//! The agent's tools (SPEC §8) and the workspace path safety they share (SPEC §4).
//!
//! # Design
//!
//! Every tool implements [`Tool`]: typed arguments ([`Tool::Args`], a struct with its JSON schema
//! beside it, [`ToolArgs`]) that the registry parses once per call with messages naming the field,
//! a one-line [`Tool::describe`] of a call, a [`Tool::preview`] that says what will change (with
//! each file's diff, [`Preview::files`]), and a [`Tool::run`] that does it. The [`Registry`] holds
//! them as [`DynTool`]s, which take the arguments as JSON. The split is the capture seam: the
//! agent previews a mutating call, has the checkpoint store make the before-image of every
//! [`PlannedChange`] durable, and only then runs it. So:
//!
//! - **Previews read, never write.** An edit's preview reads the file and applies the edit in
//!   memory, so a call that cannot succeed (no match, several matches, a binary file, a destination
//!   that exists) fails before anything is captured. Each [`PlannedChange`] records the
//!   [`FileState`] it read (existence, SHA-256, mode).
//! - **Runs re-check.** Right before writing, `run` reads each file again and refuses with "file
//!   changed since it was read" if it is not exactly what the preview saw, so an edit never lands
//!   on bytes whose before-image was not taken.
//! - **Writes are atomic and keep the mode**: temp file beside the target, write, chmod, fsync,
//!   rename, fsync the directory, through [`retrace_fsutil::Fs`] (see [`mod@write`]).
//! - **Paths are resolved by [`Workspace::resolve`]**: `..` escapes, absolute paths elsewhere and
//!   symlinks leading outside are refused; symlinks inside and hard-linked files are edited but
//!   reported as gaps in the preview.
//! - **Errors are for the model.** A [`ToolError`] says what to fix (the closest lines when an
//!   `old_string` is not found, the line numbers when it is found several times); the agent shows
//!   it as an error tool result and the turn goes on.
//! - **Shell commands are not tracked**: `bash`'s preview carries the command line for the agent's
//!   `bash_side_effect` gap; its approval policy is applied in `run`.
//!
//! Read tools (`read_file`, `list_dir`, `glob`, `grep`) honour `.gitignore` (also outside a git
//! repository), never show `.git/`, show workspace-relative paths and cap their output.
//!
//! # What it trades away
//!
//! - Text tools handle UTF-8 only; other encodings count as binary and are refused rather than
//!   re-encoded (an edit must not change bytes the model never saw).
//! - Files are read whole for editing; that is fine for source code, not for gigabyte logs (which
//!   `read_file` streams instead).
//! - Path checks and writes are separate system calls: a hostile local process racing the agent
//!   could still redirect a write. The tools guard against mistakes, not attackers.
//! - The code is synchronous; the agent runs tools on a blocking thread.

mod args;
pub mod bash;
pub mod delete_file;
pub mod describe;
pub mod diff;
mod dyn_tool;
pub mod edit;
pub mod error;
pub mod glob;
pub mod grep;
mod ignore_rules;
pub mod list_dir;
pub mod move_file;
pub mod read_file;
pub mod registry;
mod shell;
mod text;
pub mod tool;
pub mod tree_walk;
mod walk;
pub mod workspace;
pub mod write;
pub mod write_file;

pub use args::ToolArgs;
pub use bash::{bash_side_effect_gap, Bash};
pub use delete_file::DeleteFile;
pub use describe::{describe, Described, Title};
pub use dyn_tool::{DynTool, PreparedCall};
pub use edit::{EditFile, MultiEdit};
pub use error::{Result, ToolError};
pub use glob::Glob;
pub use grep::Grep;
pub use list_dir::ListDir;
pub use move_file::MoveFile;
pub use read_file::ReadFile;
pub use registry::Registry;
pub use shell::kill_running_shells;
pub use tool::{
    BashPolicy, FileState, PlannedChange, Preview, RunContext, Tool, ToolOutput, ToolSpec,
    DEFAULT_BASH_TIMEOUT, DEFAULT_OUTPUT_CAP,
};
pub use workspace::{ResolvedPath, Workspace};
pub use write::next_temp_number;
pub use write_file::WriteFile;
