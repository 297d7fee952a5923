//! `list_dir {path}`: the entries of one directory, honouring `.gitignore`.

use std::fs;
use std::io;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::args::ToolArgs;
use crate::describe::{field, Title};
use crate::error::{IoContext, Result, ToolError};
use crate::tool::{Preview, RunContext, Tool, ToolOutput};
use crate::walk::{shown_under, walker};
use crate::workspace::Workspace;

/// Lists a directory.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListDir;

const NAME: &str = "list_dir";

/// The most entries listed.
pub const MAX_ENTRIES: usize = 1000;

/// The arguments of `list_dir`.
#[derive(Debug, Clone, Deserialize)]
pub struct ListDirArgs {
    /// The directory, relative to the workspace root (default `.`, though the schema asks for it).
    pub path: Option<String>,
}

impl ToolArgs for ListDirArgs {
    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory path, relative to the workspace root (\".\" for the root)."}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }
}

impl Tool for ListDir {
    type Args = ListDirArgs;
    const NAME: &'static str = NAME;
    const DESCRIPTION: &'static str = "List the entries of a directory (not recursive), as paths \
         relative to the workspace root; directories end with `/`. Entries ignored by .gitignore \
         and the .git directory are not shown. Use \".\" for the workspace root.";
    const READ_ONLY: bool = true;

    fn describe(args: &Value) -> Title {
        Title::on("List", field(args, "path").unwrap_or("."))
    }

    fn preview(&self, _ws: &Workspace, _args: &ListDirArgs) -> Result<Preview> {
        Ok(Preview::empty())
    }

    fn run(
        &self,
        ws: &Workspace,
        args: &ListDirArgs,
        _preview: &Preview,
        ctx: &RunContext<'_>,
    ) -> Result<ToolOutput> {
        let target = ws.resolve_read(args.path.as_deref().unwrap_or("."))?;
        match fs::metadata(&target.real) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(ToolError::NotADirectory { path: target.shown }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(ToolError::NotFound {
                    path: target.shown,
                    hint: "",
                })
            }
            Err(e) => return Err(e).at("list", &target.real),
        }
        let mut lines: Vec<String> = Vec::new();
        let (mut listed, mut bytes, mut more) = (0usize, 0usize, 0usize);
        for entry in walker(ws, &target.real, Some(1))?.flatten() {
            if entry.depth() == 0 {
                continue;
            }
            listed += 1;
            let mut line = shown_under(&target.real, &target.shown, entry.path());
            match entry.file_type() {
                Some(t) if t.is_dir() => line.push('/'),
                Some(t) if t.is_symlink() => {
                    if let Ok(to) = fs::read_link(entry.path()) {
                        line.push_str(&format!(" -> {}", to.display()));
                    }
                }
                _ => {}
            }
            if lines.len() >= MAX_ENTRIES || bytes + line.len() + 1 > ctx.output_cap_bytes {
                more += 1;
                continue;
            }
            bytes += line.len() + 1;
            lines.push(line);
        }
        let on_disk = fs::read_dir(&target.real)
            .at("list", &target.real)?
            .flatten()
            .filter(|e| e.file_name() != ".git")
            .count();
        let ignored = on_disk.saturating_sub(listed);
        let mut content = if lines.is_empty() {
            format!("`{}` has no entries to show.", target.shown)
        } else {
            lines.join("\n")
        };
        if more > 0 {
            content.push_str(&format!("\n[{more} more entries not shown]"));
        }
        if ignored > 0 {
            content.push_str(&format!("\n[{ignored} entries ignored by .gitignore not shown]"));
        }
        Ok(ToolOutput {
            content,
            changed: Vec::new(),
            exit_code: None,
        })
    }
}
