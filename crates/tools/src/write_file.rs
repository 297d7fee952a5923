//! `write_file {path, content}`: creates a file or replaces it whole.

use serde::Deserialize;
use serde_json::{json, Value};

use retrace_protocol::words::count;
use retrace_protocol::{ChangeAction, ChangeKind};

use crate::args::ToolArgs;
use crate::describe::{field, Title};
use crate::diff::{file_change, Side, MAX_DIFF_INPUT};
use crate::error::Result;
use crate::tool::{push_gaps, FileState, PlannedChange, Preview, RunContext, Tool, ToolOutput};
use crate::workspace::Workspace;
use crate::write::{new_file_mode, recheck, write_atomic};

/// Creates or overwrites a file with the given text.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteFile;

/// The arguments of `write_file`.
#[derive(Debug, Clone, Deserialize)]
pub struct WriteFileArgs {
    /// The file, relative to the workspace root.
    pub path: String,
    /// Its whole new content.
    pub content: String,
}

impl ToolArgs for WriteFileArgs {
    fn schema() -> Value {
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
}

impl Tool for WriteFile {
    type Args = WriteFileArgs;
    const NAME: &'static str = "write_file";
    const DESCRIPTION: &'static str = "Create a file, or replace an existing file's whole content, \
         with the given text. Missing parent directories are created; an existing file keeps its \
         permissions. Prefer edit_file or multi_edit to change part of an existing file.";
    const READ_ONLY: bool = false;

    fn describe(args: &Value) -> Title {
        match field(args, "path") {
            Some(path) => Title::on("Write", path),
            None => Title::new("Write a file"),
        }
    }

    /// Reads the file once, hashing it and keeping its bytes for the diff when it has at most
    /// [`MAX_DIFF_INPUT`] bytes; a larger file is replaced without a diff (its change is
    /// reported like a binary one).
    fn preview(&self, ws: &Workspace, args: &WriteFileArgs) -> Result<Preview> {
        let r = ws.resolve(&args.path)?;
        let (seen, old) = FileState::read_keeping(&r.real, &r.rel.to_lossy(), MAX_DIFF_INPUT)?;
        let (kind, action, old) = match (seen.exists, &old) {
            (false, _) => (ChangeKind::Create, ChangeAction::Create, Side::Absent),
            (true, Some(bytes)) => (ChangeKind::Modify, ChangeAction::Modify, Side::Bytes(bytes)),
            (true, None) => (ChangeKind::Modify, ChangeAction::Modify, Side::TooLarge),
        };
        let mut preview = Preview::empty();
        push_gaps(&mut preview.gaps, Self::NAME, &r.gaps);
        preview.files.push(file_change(
            r.rel.to_lossy(),
            action,
            old,
            Side::Bytes(args.content.as_bytes()),
        ));
        let after = FileState::of_bytes_hash(
            retrace_fsutil::sha256_bytes(args.content.as_bytes()),
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
        args: &WriteFileArgs,
        preview: &Preview,
        _ctx: &RunContext<'_>,
    ) -> Result<ToolOutput> {
        let content = &args.content;
        let r = ws.resolve(&args.path)?;
        let change = preview.change_of(&r.rel)?;
        recheck(change, &r.real)?;
        let mode = change.seen.mode.unwrap_or_else(new_file_mode);
        write_atomic(ws, &r.real, content.as_bytes(), mode)?;
        let verb = if change.seen.exists { "Wrote" } else { "Created" };
        Ok(ToolOutput {
            content: format!(
                "{verb} `{}` ({}, {}).",
                r.rel,
                count(line_count(content), "line"),
                count(content.len(), "byte")
            ),
            changed: vec![r.rel],
            exit_code: None,
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
