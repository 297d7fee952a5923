//! `glob {pattern}`: files whose workspace-relative path matches a glob, honouring `.gitignore`.
//!
//! Patterns match the whole path from the workspace root: `*` stays within one directory, `**`
//! crosses directories, so `*.rs` finds top-level files and `**/*.rs` finds them everywhere (the
//! result says so when a slash-free pattern finds nothing). Only the directory named by the
//! pattern's literal prefix is walked (`src/**/*.rs` walks `src`). Directories are not listed.

use globset::GlobBuilder;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::args::ToolArgs;
use crate::describe::{field, one_line, Title, SHOWN_CHARS};
use crate::error::{Result, ToolError};
use crate::tool::{Preview, RunContext, Tool, ToolOutput};
use crate::walk::{shown_under, walker};
use crate::workspace::Workspace;

/// Finds files by glob pattern.
#[derive(Debug, Clone, Copy, Default)]
pub struct Glob;

const NAME: &str = "glob";

/// The most paths returned.
pub const MAX_RESULTS: usize = 1000;

/// The arguments of `glob`.
#[derive(Debug, Clone, Deserialize)]
pub struct GlobArgs {
    /// The pattern, relative to the workspace root.
    pub pattern: String,
}

impl ToolArgs for GlobArgs {
    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Glob pattern relative to the workspace root, e.g. `**/*.rs`."}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }
}

impl Tool for Glob {
    type Args = GlobArgs;
    const NAME: &'static str = NAME;
    const DESCRIPTION: &'static str = "Find files by glob pattern, matched against paths relative \
         to the workspace root: `*` matches within one directory, `**` across directories, `{a,b}` \
         alternatives. Examples: `**/*.rs`, `src/**/test_*.py`, `*.{toml,md}`. Files ignored by \
         .gitignore are not listed.";
    const READ_ONLY: bool = true;

    fn describe(args: &Value) -> Title {
        match field(args, "pattern") {
            Some(p) => Title::new(format!("Find `{}`", one_line(p, SHOWN_CHARS))),
            None => Title::new("Find files"),
        }
    }

    fn preview(&self, ws: &Workspace, args: &GlobArgs) -> Result<Preview> {
        normalise(ws, &args.pattern).map_err(|m| ToolError::args(NAME, m))?;
        Ok(Preview::empty())
    }

    fn run(
        &self,
        ws: &Workspace,
        args: &GlobArgs,
        _preview: &Preview,
        ctx: &RunContext<'_>,
    ) -> Result<ToolOutput> {
        let given = &args.pattern;
        let pattern = normalise(ws, given).map_err(|m| ToolError::args(NAME, m))?;
        let matcher = GlobBuilder::new(&pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| ToolError::args(NAME, format!("`pattern` is not a valid glob: {e}")))?
            .compile_matcher();
        let base = literal_prefix(&pattern);
        let mut found: Vec<String> = Vec::new();
        let (mut bytes, mut more) = (0usize, 0usize);
        if let Ok(target) = ws.resolve_read(&base) {
            for entry in walker(ws, &target.real, None)?.flatten() {
                if entry.file_type().is_none_or(|t| t.is_dir()) {
                    continue;
                }
                let shown = shown_under(&target.real, &target.shown, entry.path());
                if !matcher.is_match(&shown) {
                    continue;
                }
                if found.len() >= MAX_RESULTS || bytes + shown.len() + 1 > ctx.output_cap_bytes {
                    more += 1;
                    continue;
                }
                bytes += shown.len() + 1;
                found.push(shown);
            }
        }
        let mut content = if found.is_empty() {
            let mut s = format!("No files match `{given}`.");
            if !pattern.contains('/') {
                s.push_str(&format!(
                    " Patterns match from the workspace root; use `**/{pattern}` to search every directory."
                ));
            }
            s
        } else {
            found.join("\n")
        };
        if more > 0 {
            content.push_str(&format!("\n[{more} more matches not shown; narrow the pattern]"));
        }
        Ok(ToolOutput {
            content,
            changed: Vec::new(),
            exit_code: None,
        })
    }
}

/// The pattern relative to the root, or a message for the model.
fn normalise(ws: &Workspace, pattern: &str) -> std::result::Result<String, String> {
    if pattern.trim().is_empty() {
        return Err("`pattern` is empty; give a glob such as `**/*.rs`".into());
    }
    let root = ws.root().to_string_lossy();
    let mut p = pattern;
    if p.starts_with('/') {
        match p.strip_prefix(root.as_ref()) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => p = rest.trim_start_matches('/'),
            _ => {
                return Err(format!(
                    "`pattern` must be relative to the workspace root, like `src/**/*.rs`; `{pattern}` is outside it"
                ))
            }
        }
    }
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    if p.split('/').any(|c| c == "..") {
        return Err("`pattern` must not contain `..`: it matches inside the workspace only".into());
    }
    if p.is_empty() {
        return Err("`pattern` names the workspace root; give a glob such as `**/*.rs`".into());
    }
    Ok(p.to_string())
}

/// The leading directories of `pattern` that hold no glob syntax (`.` when there are none).
fn literal_prefix(pattern: &str) -> String {
    let comps: Vec<&str> = pattern.split('/').collect();
    let literal: Vec<&str> = comps[..comps.len().saturating_sub(1)]
        .iter()
        .take_while(|c| !c.contains(['*', '?', '[', ']', '{', '}', '\\']))
        .copied()
        .collect();
    if literal.is_empty() {
        ".".into()
    } else {
        literal.join("/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        assert_eq!(literal_prefix("src/**/*.rs"), "src");
        assert_eq!(literal_prefix("a/b/c.txt"), "a/b");
        assert_eq!(literal_prefix("**/*.rs"), ".");
        assert_eq!(literal_prefix("*.rs"), ".");
    }
}
