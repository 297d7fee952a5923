//! `edit_file` and `multi_edit`: exact-string replacements in one text file.
//!
//! Both read the file in the preview and apply the edits there, so a call that cannot succeed (no
//! match, several matches, a binary file) fails before any before-image is captured. `run` reads
//! the file again, checks it is byte-for-byte what the preview read, applies the same edits and
//! writes atomically with the file's mode. A `multi_edit` applies its edits in order to the text
//! produced by the previous ones and writes only if all of them apply: all or nothing.

use std::io::{self, Read};

use retrace_fsutil::sha256_bytes;
use retrace_protocol::{ChangeAction, ChangeKind};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::args::ToolArgs;
use crate::describe::{field, Title};
use crate::diff::{file_change, Side};
use crate::error::{IoContext, Result, ToolError};
use crate::text::{apply, as_text, shown_line, Edit};
use crate::tool::{mode_bits, push_gaps, FileState, PlannedChange, Preview, RunContext, Tool, ToolOutput};
use crate::workspace::{ResolvedPath, Workspace};
use crate::write::write_atomic;

/// Replaces one exact string in a file (or every occurrence with `replace_all`).
#[derive(Debug, Clone, Copy, Default)]
pub struct EditFile;

/// Applies several exact-string replacements to one file, all or nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct MultiEdit;

/// The lines of context shown around an edit in `edit_file`'s result.
const CONTEXT_LINES: usize = 2;
/// The most lines of the edited region shown in `edit_file`'s result.
const SNIPPET_LINES: usize = 16;

/// One replacement: an item of `multi_edit`'s `edits` (`edit_file` has the same fields beside its
/// path).
#[derive(Debug, Clone, Deserialize)]
pub struct Replacement {
    /// The exact text to replace.
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    pub replace_all: Option<bool>,
}

impl Replacement {
    /// The properties of its schema.
    fn properties() -> Value {
        json!({
            "old_string": {"type": "string", "description": "The exact text to replace, including whitespace and indentation. It must occur exactly once unless replace_all is true; include surrounding lines to make it unique."},
            "new_string": {"type": "string", "description": "The text to put in its place (must differ from old_string)."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence of old_string (default false)."}
        })
    }

    fn edit(&self) -> Edit {
        Edit {
            old: self.old_string.clone(),
            new: self.new_string.clone(),
            replace_all: self.replace_all.unwrap_or(false),
        }
    }
}

/// The arguments of `edit_file`.
#[derive(Debug, Clone, Deserialize)]
pub struct EditFileArgs {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The exact text to replace.
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    pub replace_all: Option<bool>,
}

impl EditFileArgs {
    fn edit(&self) -> Edit {
        Edit {
            old: self.old_string.clone(),
            new: self.new_string.clone(),
            replace_all: self.replace_all.unwrap_or(false),
        }
    }
}

/// Refuses an empty or unchanged `old_string`.
fn check_replacement(old: &str, new: &str) -> std::result::Result<(), String> {
    if old.is_empty() {
        return Err(
            "`old_string` is empty; give the exact text to replace (to create a file use write_file)".into(),
        );
    }
    if old == new {
        return Err("`old_string` and `new_string` are identical; there is nothing to change".into());
    }
    Ok(())
}

impl ToolArgs for EditFileArgs {
    fn schema() -> Value {
        let mut props = Replacement::properties();
        props["path"] =
            json!({"type": "string", "description": "File path, relative to the workspace root."});
        json!({
            "type": "object",
            "properties": props,
            "required": ["path", "old_string", "new_string"],
            "additionalProperties": false
        })
    }

    fn check(&self) -> std::result::Result<(), String> {
        check_replacement(&self.old_string, &self.new_string)
    }
}

/// The arguments of `multi_edit`.
#[derive(Debug, Clone, Deserialize)]
pub struct MultiEditArgs {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The replacements, applied in order.
    pub edits: Vec<Replacement>,
}

impl ToolArgs for MultiEditArgs {
    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the workspace root."},
                "edits": {
                    "type": "array",
                    "minItems": 1,
                    "description": "The replacements, applied in order.",
                    "items": {
                        "type": "object",
                        "properties": Replacement::properties(),
                        "required": ["old_string", "new_string"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["path", "edits"],
            "additionalProperties": false
        })
    }

    fn check(&self) -> std::result::Result<(), String> {
        if self.edits.is_empty() {
            return Err("`edits` is empty; give at least one {old_string, new_string}".into());
        }
        for (i, e) in self.edits.iter().enumerate() {
            check_replacement(&e.old_string, &e.new_string).map_err(|m| format!("edits[{i}]: {m}"))?;
        }
        Ok(())
    }
}

impl Tool for EditFile {
    type Args = EditFileArgs;
    const NAME: &'static str = "edit_file";
    const DESCRIPTION: &'static str = "Replace an exact string in an existing text file. old_string \
         must match the file exactly (copy it from read_file output without the line-number \
         prefix) and occur exactly once, unless replace_all is true. The file's line endings and \
         permissions are kept.";
    const READ_ONLY: bool = false;

    fn describe(args: &Value) -> Title {
        match field(args, "path") {
            Some(path) => Title::on("Edit", path),
            None => Title::new("Edit a file"),
        }
    }

    fn preview(&self, ws: &Workspace, args: &EditFileArgs) -> Result<Preview> {
        let loaded = load(ws, &args.path)?;
        let done = apply(loaded.text()?, &args.edit(), &loaded.r.rel.to_lossy(), "")?;
        Ok(loaded.preview(Self::NAME, &done.text))
    }

    fn run(
        &self,
        ws: &Workspace,
        args: &EditFileArgs,
        preview: &Preview,
        _ctx: &RunContext<'_>,
    ) -> Result<ToolOutput> {
        let edit = args.edit();
        let loaded = load_again(ws, &args.path, preview)?;
        let shown = loaded.r.rel.to_lossy();
        let done = apply(loaded.text()?, &edit, &shown, "")?;
        loaded.write(ws, &done.text)?;
        let what = if done.count == 1 {
            "1 occurrence".to_string()
        } else {
            format!("{} occurrences", done.count)
        };
        let new_lines = edit.new.lines().count().max(1);
        Ok(ToolOutput {
            content: format!(
                "Edited `{shown}`: replaced {what}.\n{}",
                snippet(&done.text, done.first_line, new_lines)
            ),
            changed: vec![loaded.r.rel],
            exit_code: None,
        })
    }
}

impl Tool for MultiEdit {
    type Args = MultiEditArgs;
    const NAME: &'static str = "multi_edit";
    const DESCRIPTION: &'static str = "Apply several exact-string replacements to one existing text \
         file, in order, each to the result of the previous ones. Each old_string must occur \
         exactly once unless its replace_all is true. If any edit fails, none is applied and the \
         file is unchanged.";
    const READ_ONLY: bool = false;

    fn describe(args: &Value) -> Title {
        let edits = args.get("edits").and_then(Value::as_array).map_or(0, Vec::len);
        match field(args, "path") {
            Some(path) if edits > 1 => Title {
                title: format!("Edit {path} ({edits} edits)"),
                target: Some(path.to_string()),
            },
            Some(path) => Title::on("Edit", path),
            None => Title::new("Edit a file"),
        }
    }

    fn preview(&self, ws: &Workspace, args: &MultiEditArgs) -> Result<Preview> {
        let edits: Vec<Edit> = args.edits.iter().map(Replacement::edit).collect();
        let loaded = load(ws, &args.path)?;
        let (text, _) = apply_all(&loaded, &edits)?;
        Ok(loaded.preview(Self::NAME, &text))
    }

    fn run(
        &self,
        ws: &Workspace,
        args: &MultiEditArgs,
        preview: &Preview,
        _ctx: &RunContext<'_>,
    ) -> Result<ToolOutput> {
        let edits: Vec<Edit> = args.edits.iter().map(Replacement::edit).collect();
        let loaded = load_again(ws, &args.path, preview)?;
        let (text, replaced) = apply_all(&loaded, &edits)?;
        loaded.write(ws, &text)?;
        Ok(ToolOutput {
            content: format!(
                "Applied {} to `{}` ({}).",
                retrace_protocol::words::count(edits.len(), "edit"),
                loaded.r.rel,
                retrace_protocol::words::count(replaced, "replacement")
            ),
            changed: vec![loaded.r.rel],
            exit_code: None,
        })
    }
}

/// Applies `edits` in order; the first failure becomes [`ToolError::EditsNotApplied`].
fn apply_all(loaded: &Loaded, edits: &[Edit]) -> Result<(String, usize)> {
    let shown = loaded.r.rel.to_lossy();
    let mut text = loaded.text()?.to_string();
    let mut replaced = 0;
    for (i, e) in edits.iter().enumerate() {
        let which = format!(" (edit {} of {})", i + 1, edits.len());
        let done = apply(&text, e, &shown, &which).map_err(|source| ToolError::EditsNotApplied {
            source: Box::new(source),
        })?;
        text = done.text;
        replaced += done.count;
    }
    Ok((text, replaced))
}

/// A text file read for an edit.
struct Loaded {
    r: ResolvedPath,
    state: FileState,
    bytes: Vec<u8>,
}

/// Reads the text file at `path` (must exist).
fn load(ws: &Workspace, path: &str) -> Result<Loaded> {
    let r = ws.resolve(path)?;
    let shown = r.rel.to_lossy();
    let (mut file, meta) = match retrace_fsutil::open_read(&r.real) {
        Ok(opened) => opened,
        Err(e) if e.kind() == io::ErrorKind::NotFound || e.kind() == io::ErrorKind::NotADirectory => {
            return Err(ToolError::NotFound {
                path: shown,
                hint: "; check the path with list_dir or glob, or create the file with write_file",
            })
        }
        Err(e) => return Err(e).at("read", &r.real),
    };
    if meta.is_dir() {
        return Err(ToolError::IsDirectory {
            path: shown,
            hint: "; edit tools change files",
        });
    }
    if !meta.is_file() {
        return Err(ToolError::NotARegularFile { path: shown });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes).at("read", &r.real)?;
    let state = FileState::of_bytes_hash(sha256_bytes(&bytes), mode_bits(&meta));
    Ok(Loaded { r, state, bytes })
}

/// Reads the file again in `run` and fails with "file changed since it was read" unless it is
/// exactly what `preview` read (a file deleted since counts as changed).
fn load_again(ws: &Workspace, path: &str, preview: &Preview) -> Result<Loaded> {
    let loaded = match load(ws, path) {
        Ok(l) => l,
        Err(ToolError::NotFound { path, .. }) => return Err(ToolError::FileChanged { path }),
        Err(e) => return Err(e),
    };
    let change = preview.change_of(&loaded.r.rel)?;
    if change.seen != loaded.state {
        return Err(ToolError::FileChanged {
            path: loaded.r.rel.to_lossy(),
        });
    }
    Ok(loaded)
}

impl Loaded {
    /// The preview of a modification of this file into `text` (written with its mode), with its
    /// diff from the text read.
    fn preview(self, tool: &'static str, text: &str) -> Preview {
        let mut p = Preview::empty();
        push_gaps(&mut p.gaps, tool, &self.r.gaps);
        p.files.push(file_change(
            self.r.rel.to_lossy(),
            ChangeAction::Modify,
            Side::Bytes(&self.bytes),
            Side::Bytes(text.as_bytes()),
        ));
        let mode = self.state.mode.unwrap_or_else(crate::write::new_file_mode);
        let after = FileState::of_bytes_hash(sha256_bytes(text.as_bytes()), mode);
        p.changes.push(PlannedChange {
            path: self.r.rel,
            abs: self.r.abs,
            kind: ChangeKind::Modify,
            seen: self.state,
            after: Some(after),
        });
        p
    }

    /// The content as text, or [`ToolError::Binary`].
    fn text(&self) -> Result<&str> {
        as_text(&self.bytes, &self.r.rel.to_lossy())
    }

    /// Writes `text` over the file, keeping its mode.
    fn write(&self, ws: &Workspace, text: &str) -> Result<()> {
        let mode = self.state.mode.unwrap_or_else(crate::write::new_file_mode);
        write_atomic(ws, &self.r.real, text.as_bytes(), mode)
    }
}

/// Lines `first_line - 2 ..= first_line + new_lines + 1` of `text`, numbered.
fn snippet(text: &str, first_line: usize, new_lines: usize) -> String {
    let start = first_line.saturating_sub(CONTEXT_LINES).max(1);
    let len = (new_lines + 2 * CONTEXT_LINES).min(SNIPPET_LINES);
    let mut out = String::new();
    for (i, line) in text.lines().enumerate().skip(start - 1).take(len) {
        out.push_str(&format!("{:>6}\t{}\n", i + 1, shown_line(line)));
    }
    out.truncate(out.trim_end_matches('\n').len());
    out
}
