//! `write_file {path, content}`: creates a file or replaces it whole.

use serde_json::{json, Value};

use retrace_protocol::ChangeKind;

use crate::args::args;
use crate::error::Result;
use crate::tool::{push_gaps, FileState, PlannedChange, Preview, RunContext, Tool, ToolOutput};
use crate::workspace::Workspace;
use crate::write::{new_file_mode, recheck, write_atomic};

/// Creates or overwrites a file with the given text.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteFile;

const NAME: &str = "write_file";

impl Tool for WriteFile {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "Create a file, or replace an existing file's whole content, with the given text. Missing \
         parent directories are created; an existing file keeps its permissions. Prefer edit_file \
         or multi_edit to change part of an existing file."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the workspace root."},
                "content": {"type": "string", "description": "The complete new content of the file."}
            },
            "required": ["path", "content"],
            "additionalProperties": false
        })
    }

    fn read_only(&self) -> bool {
        false
    }

    fn preview(&self, ws: &Workspace, args: &Value) -> Result<Preview> {
        args!(NAME, args, holder, a);
        let path = a.str("path")?;
        let content = a.str("content")?;
        let r = ws.resolve(path)?;
        let seen = FileState::read(&r.real, &r.rel.to_lossy())?;
        let kind = if seen.exists {
            ChangeKind::Modify
        } else {
            ChangeKind::Create
        };
        let mut preview = Preview::empty();
        push_gaps(&mut preview.gaps, NAME, &r.gaps);
        let after = FileState::of_bytes_hash(
            retrace_fsutil::sha256_bytes(content.as_bytes()),
            seen.mode.unwrap_or_else(new_file_mode),
        );
        preview.changes.push(PlannedChange {
            path: r.rel,
            abs: r.abs,
            kind,
            seen,
            after: Some(after),
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
        let path = a.str("path")?;
        let content = a.str("content")?;
        let r = ws.resolve(path)?;
        let change = preview.change_of(&r.rel)?;
        recheck(change, &r.real)?;
        let mode = change.seen.mode.unwrap_or_else(new_file_mode);
        write_atomic(ws, &r.real, content.as_bytes(), mode)?;
        let verb = if change.seen.exists { "Wrote" } else { "Created" };
        Ok(ToolOutput {
            content: format!(
                "{verb} `{}` ({} lines, {} bytes).",
                r.rel,
                line_count(content),
                content.len()
            ),
            changed: vec![r.rel],
        })
    }
}

/// Lines of `text`, counting a last line without a newline.
pub(crate) fn line_count(text: &str) -> usize {
    let n = text.matches('\n').count();
    if text.is_empty() || text.ends_with('\n') {
        n
    } else {
        n + 1
    }
}
