//! `delete_file {path}`: removes one file (a symlink is removed itself, not its target).

use serde::Deserialize;
use serde_json::{json, Value};

use retrace_protocol::{ChangeAction, ChangeKind};

use crate::args::ToolArgs;
use crate::describe::{field, Title};
use crate::diff::{file_change, Side, MAX_DIFF_INPUT};
use crate::error::Result;
use crate::tool::{push_gaps, FileState, PlannedChange, Preview, RunContext, Tool, ToolOutput};
use crate::workspace::Workspace;
use crate::write::{recheck, remove};

/// Deletes a file.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeleteFile;

/// The arguments of `delete_file`.
#[derive(Debug, Clone, Deserialize)]
pub struct DeleteFileArgs {
    /// The file, relative to the workspace root.
    pub path: String,
}

impl ToolArgs for DeleteFileArgs {
    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the workspace root."}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }
}

impl Tool for DeleteFile {
    type Args = DeleteFileArgs;
    const NAME: &'static str = "delete_file";
    const DESCRIPTION: &'static str =
        "Delete one file (not a directory). The deletion can be taken back by a rewind.";
    const READ_ONLY: bool = false;

    fn describe(args: &Value) -> Title {
        match field(args, "path") {
            Some(path) => Title::on("Delete", path),
            None => Title::new("Delete a file"),
        }
    }

    /// Reads the file once, hashing it and keeping its bytes for the diff (every line removed)
    /// when it has at most [`MAX_DIFF_INPUT`] bytes; a larger one is reported like a binary file.
    fn preview(&self, ws: &Workspace, args: &DeleteFileArgs) -> Result<Preview> {
        let r = ws.resolve(&args.path)?;
        let shown = r.rel.to_lossy();
        let (seen, old) = FileState::read_existing_keeping(
            &r.entry,
            &shown,
            "; delete_file removes files only",
            MAX_DIFF_INPUT,
        )?;
        let old = old.as_deref().map_or(Side::TooLarge, Side::Bytes);
        let mut preview = Preview::empty();
        push_gaps(&mut preview.gaps, Self::NAME, &r.gaps);
        preview
            .files
            .push(file_change(shown, ChangeAction::Delete, old, Side::Absent));
        preview.changes.push(PlannedChange {
            path: r.rel,
            abs: r.abs,
            kind: ChangeKind::Delete,
            seen,
            after: Some(FileState::absent()),
        });
        Ok(preview)
    }

    fn run(
        &self,
        ws: &Workspace,
        args: &DeleteFileArgs,
        preview: &Preview,
        _ctx: &RunContext<'_>,
    ) -> Result<ToolOutput> {
        let r = ws.resolve(&args.path)?;
        let change = preview.change_of(&r.rel)?;
        recheck(change, &r.entry)?;
        remove(ws, &r.entry)?;
        Ok(ToolOutput {
            content: format!("Deleted `{}`.", r.rel),
            changed: vec![r.rel],
            exit_code: None,
        })
    }
}
