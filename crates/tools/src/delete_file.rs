//! `delete_file {path}`: removes one file (a symlink is removed itself, not its target).

use serde_json::{json, Value};

use retrace_protocol::ChangeKind;

use crate::args::args;
use crate::error::Result;
use crate::tool::{push_gaps, FileState, PlannedChange, Preview, RunContext, Tool, ToolOutput};
use crate::workspace::Workspace;
use crate::write::{recheck, remove};

/// Deletes a file.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeleteFile;

const NAME: &str = "delete_file";

impl Tool for DeleteFile {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "Delete one file (not a directory). The deletion can be taken back by a rewind."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the workspace root."}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    fn read_only(&self) -> bool {
        false
    }

    fn preview(&self, ws: &Workspace, args: &Value) -> Result<Preview> {
        args!(NAME, args, holder, a);
        let r = ws.resolve(a.str("path")?)?;
        let shown = r.rel.to_lossy();
        let seen = FileState::read_existing(&r.entry, &shown, "; delete_file removes files only")?;
        let mut preview = Preview::empty();
        push_gaps(&mut preview.gaps, NAME, &r.gaps);
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
        args: &Value,
        preview: &Preview,
        _ctx: &RunContext<'_>,
    ) -> Result<ToolOutput> {
        args!(NAME, args, holder, a);
        let r = ws.resolve(a.str("path")?)?;
        let change = preview.change_of(&r.rel)?;
        recheck(change, &r.entry)?;
        remove(ws, &r.entry)?;
        Ok(ToolOutput {
            content: format!("Deleted `{}`.", r.rel),
            changed: vec![r.rel],
        })
    }
}
