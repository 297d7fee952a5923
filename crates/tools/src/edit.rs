//! `edit_file` and `multi_edit`: exact-string replacements in one text file.
//!
//! Both read the file in the preview and apply the edits there, so a call that cannot succeed (no
//! match, several matches, a binary file) fails before any before-image is captured. `run` reads
//! the file again, checks it is byte-for-byte what the preview read, applies the same edits and
//! writes atomically with the file's mode. A `multi_edit` applies its edits in order to the text
//! produced by the previous ones and writes only if all of them apply: all or nothing.

use std::io::{self, Read};

use retrace_fsutil::sha256_bytes;
use retrace_protocol::ChangeKind;
use serde_json::{json, Value};

use crate::args::{args, Args};
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

const EDIT: &str = "edit_file";
const MULTI: &str = "multi_edit";

/// The lines of context shown around an edit in `edit_file`'s result.
const CONTEXT_LINES: usize = 2;
/// The most lines of the edited region shown in `edit_file`'s result.
const SNIPPET_LINES: usize = 16;

fn edit_schema() -> Value {
    json!({
        "old_string": {"type": "string", "description": "The exact text to replace, including whitespace and indentation. It must occur exactly once unless replace_all is true; include surrounding lines to make it unique."},
        "new_string": {"type": "string", "description": "The text to put in its place (must differ from old_string)."},
        "replace_all": {"type": "boolean", "description": "Replace every occurrence of old_string (default false)."}
    })
}

impl Tool for EditFile {
    fn name(&self) -> &'static str {
        EDIT
    }

    fn description(&self) -> &'static str {
        "Replace an exact string in an existing text file. old_string must match the file exactly \
         (copy it from read_file output without the line-number prefix) and occur exactly once, \
         unless replace_all is true. The file's line endings and permissions are kept."
    }

    fn parameters(&self) -> Value {
        let mut props = edit_schema();
        props["path"] =
            json!({"type": "string", "description": "File path, relative to the workspace root."});
        json!({
            "type": "object",
            "properties": props,
            "required": ["path", "old_string", "new_string"],
            "additionalProperties": false
        })
    }

    fn read_only(&self) -> bool {
        false
    }

    fn preview(&self, ws: &Workspace, args: &Value) -> Result<Preview> {
        args!(EDIT, args, holder, a);
        let path = a.str("path")?;
        let edit = parse_edit(&a)?;
        let loaded = load(ws, path)?;
        let done = apply(loaded.text()?, &edit, &loaded.r.rel.to_lossy(), "")?;
        Ok(loaded.preview(EDIT, &done.text))
    }

    fn run(
        &self,
        ws: &Workspace,
        args: &Value,
        preview: &Preview,
        _ctx: &RunContext<'_>,
    ) -> Result<ToolOutput> {
        args!(EDIT, args, holder, a);
        let path = a.str("path")?;
        let edit = parse_edit(&a)?;
        let loaded = load_again(ws, path, preview)?;
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
        })
    }
}

impl Tool for MultiEdit {
    fn name(&self) -> &'static str {
        MULTI
    }

    fn description(&self) -> &'static str {
        "Apply several exact-string replacements to one existing text file, in order, each to the \
         result of the previous ones. Each old_string must occur exactly once unless its replace_all \
         is true. If any edit fails, none is applied and the file is unchanged."
    }

    fn parameters(&self) -> Value {
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
                        "properties": edit_schema(),
                        "required": ["old_string", "new_string"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["path", "edits"],
            "additionalProperties": false
        })
    }

    fn read_only(&self) -> bool {
        false
    }

    fn preview(&self, ws: &Workspace, args: &Value) -> Result<Preview> {
        args!(MULTI, args, holder, a);
        let path = a.str("path")?;
        let edits = parse_edits(&a)?;
        let loaded = load(ws, path)?;
        let (text, _) = apply_all(&loaded, &edits)?;
        Ok(loaded.preview(MULTI, &text))
    }

    fn run(
        &self,
        ws: &Workspace,
        args: &Value,
        preview: &Preview,
        _ctx: &RunContext<'_>,
    ) -> Result<ToolOutput> {
        args!(MULTI, args, holder, a);
        let path = a.str("path")?;
        let edits = parse_edits(&a)?;
        let loaded = load_again(ws, path, preview)?;
        let (text, replaced) = apply_all(&loaded, &edits)?;
        loaded.write(ws, &text)?;
        Ok(ToolOutput {
            content: format!(
                "Applied {} edit(s) to `{}` ({replaced} replacement(s)).",
                edits.len(),
                loaded.r.rel
            ),
            changed: vec![loaded.r.rel],
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

/// Reads one edit's fields, refusing an empty or unchanged `old_string`.
fn parse_edit(a: &Args<'_>) -> Result<Edit> {
    let old = a.str("old_string")?;
    let new = a.str("new_string")?;
    if old.is_empty() {
        return Err(
            a.err("`old_string` is empty; give the exact text to replace (to create a file use write_file)")
        );
    }
    if old == new {
        return Err(a.err("`old_string` and `new_string` are identical; there is nothing to change"));
    }
    Ok(Edit {
        old: old.to_string(),
        new: new.to_string(),
        replace_all: a.opt_bool("replace_all")?.unwrap_or(false),
    })
}

/// Reads `edits`, naming the failing item in messages.
fn parse_edits(a: &Args<'_>) -> Result<Vec<Edit>> {
    let items = a.array(
        "edits",
        "an array of {old_string, new_string, replace_all?} objects",
    )?;
    if items.is_empty() {
        return Err(a.err("`edits` is empty; give at least one {old_string, new_string}"));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let mut holder = crate::args::Parsed::Borrowed;
        let parsed = Args::new(MULTI, item, &mut holder).and_then(|ia| parse_edit(&ia));
        match parsed {
            Ok(e) => out.push(e),
            Err(ToolError::InvalidArguments { message, .. }) => {
                return Err(a.err(format!("edits[{i}]: {message}")));
            }
            Err(other) => return Err(other),
        }
    }
    Ok(out)
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
    /// The preview of a modification of this file into `text` (written with its mode).
    fn preview(self, tool: &'static str, text: &str) -> Preview {
        let mut p = Preview::empty();
        push_gaps(&mut p.gaps, tool, &self.r.gaps);
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
