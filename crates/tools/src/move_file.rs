//! `move_file {from, to}`: renames one file, creating the destination's parent directories and
//! never replacing an existing destination. Its preview has two changes: the source (delete) and
//! the destination (create), so both get a before-image.

use std::fs;

use serde_json::{json, Value};

use retrace_protocol::ChangeKind;

use crate::args::args;
use crate::error::{Result, ToolError};
use crate::tool::{push_gaps, FileState, PlannedChange, Preview, RunContext, Tool, ToolOutput};
use crate::workspace::{ResolvedPath, Workspace};
use crate::write::{move_entry, recheck, MoveOutcome};

/// Moves (renames) a file.
#[derive(Debug, Clone, Copy, Default)]
pub struct MoveFile;

const NAME: &str = "move_file";

impl Tool for MoveFile {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "Move or rename one file. Missing parent directories of the destination are created. The \
         destination must not exist: move_file never replaces a file."
    }

    fn parameters(&self) -> Value {
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

    fn read_only(&self) -> bool {
        false
    }

    fn preview(&self, ws: &Workspace, args: &Value) -> Result<Preview> {
        args!(NAME, args, holder, a);
        let (from, to) = (ws.resolve(a.str("from")?)?, ws.resolve(a.str("to")?)?);
        if from.rel == to.rel {
            return Err(a.err(format!("`from` and `to` are the same path `{}`", from.rel)));
        }
        let shown = from.rel.to_lossy();
        let seen = FileState::read_existing(&from.entry, &shown, "; move_file moves one file at a time")?;
        refuse_existing(&to)?;
        let mut preview = Preview::empty();
        push_gaps(&mut preview.gaps, NAME, &from.gaps);
        push_gaps(&mut preview.gaps, NAME, &to.gaps);
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
        args: &Value,
        preview: &Preview,
        _ctx: &RunContext<'_>,
    ) -> Result<ToolOutput> {
        args!(NAME, args, holder, a);
        let (from, to) = (ws.resolve(a.str("from")?)?, ws.resolve(a.str("to")?)?);
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
        })
    }
}

/// Refuses a destination that exists in any form (file, directory, dangling symlink).
fn refuse_existing(to: &ResolvedPath) -> Result<()> {
    match fs::symlink_metadata(&to.entry) {
        Err(_) => Ok(()),
        Ok(m) if m.is_dir() => Err(ToolError::InvalidArguments {
            tool: NAME,
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
