//! `move_file {from, to}`: renames one file, creating the destination's parent directories and
//! never replacing an existing destination. Its preview has two changes: the source (delete) and
//! the destination (create), so both get a before-image; its `files` has one `move`.

use std::fs;

use serde::Deserialize;
use serde_json::{json, Value};

use retrace_protocol::ChangeKind;

use crate::args::ToolArgs;
use crate::describe::{field, Title};
use crate::diff::moved;
use crate::error::{Result, ToolError};
use crate::tool::{push_gaps, FileState, PlannedChange, Preview, RunContext, Tool, ToolOutput};
use crate::workspace::{ResolvedPath, Workspace};
use crate::write::{move_entry, recheck, MoveOutcome};

/// Moves (renames) a file.
#[derive(Debug, Clone, Copy, Default)]
pub struct MoveFile;

/// The arguments of `move_file`.
#[derive(Debug, Clone, Deserialize)]
pub struct MoveFileArgs {
    /// The file to move, relative to the workspace root.
    pub from: String,
    /// Its new path (a file path, not a directory).
    pub to: String,
}

impl ToolArgs for MoveFileArgs {
    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "from": {"type": "string", "description": "The file to move, relative to the workspace root."},
                "to": {"type": "string", "description": "Its new path (the full file path, not a directory), relative to the workspace root."}
            },
            "required": ["from", "to"],
            "additionalProperties": false
        })
    }
}

impl Tool for MoveFile {
    type Args = MoveFileArgs;
    const NAME: &'static str = "move_file";
    const DESCRIPTION: &'static str = "Move or rename one file. Missing parent directories of the \
         destination are created. The destination must not exist: move_file never replaces a file.";
    const READ_ONLY: bool = false;

    fn describe(args: &Value) -> Title {
        match (field(args, "from"), field(args, "to")) {
            (Some(from), Some(to)) => Title {
                title: format!("Move {from} → {to}"),
                target: Some(to.to_string()),
            },
            (None, Some(to)) => Title::on("Move a file to", to),
            (Some(from), None) => Title::new(format!("Move {from}")),
            (None, None) => Title::new("Move a file"),
        }
    }

    fn preview(&self, ws: &Workspace, args: &MoveFileArgs) -> Result<Preview> {
        let (from, to) = (ws.resolve(&args.from)?, ws.resolve(&args.to)?);
        if from.rel == to.rel {
            return Err(ToolError::args(
                Self::NAME,
                format!("`from` and `to` are the same path `{}`", from.rel),
            ));
        }
        let shown = from.rel.to_lossy();
        let seen = FileState::read_existing(&from.entry, &shown, "; move_file moves one file at a time")?;
        refuse_existing(&to)?;
        let mut preview = Preview::empty();
        push_gaps(&mut preview.gaps, Self::NAME, &from.gaps);
        push_gaps(&mut preview.gaps, Self::NAME, &to.gaps);
        preview.files.push(moved(shown, to.rel.to_lossy()));
        // The destination gets the source's inode: its bytes and mode.
        let moved = seen.clone();
        preview.changes.push(PlannedChange {
            path: from.rel,
            abs: from.abs,
            kind: ChangeKind::Delete,
            seen,
            after: Some(FileState::absent()),
        });
        preview.changes.push(PlannedChange {
            path: to.rel,
            abs: to.abs,
            kind: ChangeKind::Create,
            seen: FileState::absent(),
            after: Some(moved),
        });
        Ok(preview)
    }

    fn run(
        &self,
        ws: &Workspace,
        args: &MoveFileArgs,
        preview: &Preview,
        _ctx: &RunContext<'_>,
    ) -> Result<ToolOutput> {
        let (from, to) = (ws.resolve(&args.from)?, ws.resolve(&args.to)?);
        recheck(preview.change_of(&from.rel)?, &from.entry)?;
        preview.change_of(&to.rel)?;
        refuse_existing(&to)?;
        if move_entry(ws, &from.entry, &to.entry)? == MoveOutcome::DestinationExists {
            return Err(ToolError::DestinationExists {
                path: to.rel.to_lossy(),
            });
        }
        Ok(ToolOutput {
            content: format!("Moved `{}` to `{}`.", from.rel, to.rel),
            changed: vec![from.rel, to.rel],
            exit_code: None,
        })
    }
}

/// Refuses a destination that exists in any form (file, directory, dangling symlink).
fn refuse_existing(to: &ResolvedPath) -> Result<()> {
    match fs::symlink_metadata(&to.entry) {
        Err(_) => Ok(()),
        Ok(m) if m.is_dir() => Err(ToolError::InvalidArguments {
            tool: MoveFile::NAME,
            message: format!(
                "`to` names the existing directory `{}`; give the full destination file path, like `{}/<name>`",
                to.rel, to.rel
            ),
        }),
        Ok(_) => Err(ToolError::DestinationExists {
            path: to.rel.to_lossy(),
        }),
    }
}
