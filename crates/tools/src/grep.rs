//! `grep {pattern, path?}`: lines matching a regular expression, honouring `.gitignore`.
//!
//! Output is one `path:line:text` per match, paths relative to the workspace root, in path order.
//! Binary and non-UTF-8 files are skipped (and counted), as are files over 8 MiB and symlinks (a
//! symlink inside the workspace points at a file the walk reaches anyway, or at one outside that
//! must not be read). The output stops at the output cap with a note.

use std::fs;
use std::io;
use std::path::Path;

use regex::{Regex, RegexBuilder};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::args::ToolArgs;
use crate::describe::{field, one_line, Title, SHOWN_CHARS};
use crate::error::{IoContext, Result, ToolError};
use crate::text::{binary_reason, shown_line};
use crate::tool::{Preview, RunContext, Tool, ToolOutput};
use crate::walk::{shown_under, walker};
use crate::workspace::Workspace;

/// Searches file contents by regular expression.
#[derive(Debug, Clone, Copy, Default)]
pub struct Grep;

const NAME: &str = "grep";

/// Files larger than this are not searched.
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// The arguments of `grep`.
#[derive(Debug, Clone, Deserialize)]
pub struct GrepArgs {
    /// The regular expression (Rust syntax).
    pub pattern: String,
    /// The file or directory to search (default: the whole workspace).
    pub path: Option<String>,
}

impl ToolArgs for GrepArgs {
    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression to search for."},
                "path": {"type": "string", "description": "File or directory to search, relative to the workspace root (default: the whole workspace)."}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    fn check(&self) -> std::result::Result<(), String> {
        compile(&self.pattern).map(|_| ())
    }
}

impl Tool for Grep {
    type Args = GrepArgs;
    const NAME: &'static str = NAME;
    const DESCRIPTION: &'static str = "Search file contents with a regular expression (Rust regex \
         syntax; `(?i)` for case-insensitive). Prints `path:line:text` for each matching line. \
         Searches the workspace, or the file or directory given as path. Files ignored by \
         .gitignore and binary files are skipped.";
    const READ_ONLY: bool = true;

    fn describe(args: &Value) -> Title {
        let what = match field(args, "pattern") {
            Some(p) => format!("Search `{}`", one_line(p, SHOWN_CHARS)),
            None => "Search files".to_string(),
        };
        match field(args, "path") {
            Some(path) => Title {
                title: format!("{what} in {path}"),
                target: Some(path.to_string()),
            },
            None => Title::new(what),
        }
    }

    fn preview(&self, _ws: &Workspace, _args: &GrepArgs) -> Result<Preview> {
        Ok(Preview::empty())
    }

    fn run(
        &self,
        ws: &Workspace,
        args: &GrepArgs,
        _preview: &Preview,
        ctx: &RunContext<'_>,
    ) -> Result<ToolOutput> {
        let pattern = &args.pattern;
        let re = compile(pattern).map_err(|m| ToolError::args(NAME, m))?;
        let target = ws.resolve_read(args.path.as_deref().unwrap_or("."))?;
        let meta = match fs::metadata(&target.real) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(ToolError::NotFound {
                    path: target.shown,
                    hint: "",
                })
            }
            Err(e) => return Err(e).at("search", &target.real),
        };
        let mut s = Search::new(&re, ctx.output_cap_bytes);
        if meta.is_file() {
            if !s.file(&target.real, &target.shown)? {
                return Ok(ToolOutput {
                    content: format!(
                        "`{}` is a binary or oversized file; grep searches text files only.",
                        target.shown
                    ),
                    changed: Vec::new(),
                    exit_code: None,
                });
            }
        } else {
            for entry in walker(ws, &target.real, None)?.flatten() {
                if s.capped {
                    break;
                }
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    continue;
                }
                let shown = shown_under(&target.real, &target.shown, entry.path());
                s.file(entry.path(), &shown)?;
            }
        }
        Ok(ToolOutput {
            content: s.finish(pattern, &target.shown),
            changed: Vec::new(),
            exit_code: None,
        })
    }
}

/// Compiles `pattern`, or a message for the model.
fn compile(pattern: &str) -> std::result::Result<Regex, String> {
    if pattern.is_empty() {
        return Err("`pattern` is empty; give a regular expression".into());
    }
    RegexBuilder::new(pattern)
        .size_limit(10 * 1024 * 1024)
        .build()
        .map_err(|e| format!("`pattern` is not a valid regular expression: {e}"))
}

/// The state of one search.
struct Search<'r> {
    re: &'r Regex,
    cap: usize,
    out: String,
    matches: usize,
    files: usize,
    skipped: usize,
    capped: bool,
}

impl<'r> Search<'r> {
    fn new(re: &'r Regex, cap: usize) -> Search<'r> {
        Search {
            re,
            cap,
            out: String::new(),
            matches: 0,
            files: 0,
            skipped: 0,
            capped: false,
        }
    }

    /// Searches one file; false when it was skipped (binary or too large).
    fn file(&mut self, path: &Path, shown: &str) -> Result<bool> {
        let len = match fs::metadata(path) {
            Ok(m) => m.len(),
            Err(_) => return Ok(false),
        };
        if len > MAX_FILE_BYTES {
            self.skipped += 1;
            return Ok(false);
        }
        // Non-blocking, and only regular files: a FIFO must not hang the search.
        let bytes = match retrace_fsutil::open_regular(path).and_then(|(mut f, _)| {
            let mut b = Vec::new();
            io::Read::read_to_end(&mut f, &mut b).map(|_| b)
        }) {
            Ok(b) => b,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::PermissionDenied | io::ErrorKind::InvalidInput
                ) =>
            {
                self.skipped += 1;
                return Ok(false);
            }
            Err(e) => return Err(e).at("read", path),
        };
        if binary_reason(&bytes).is_some() {
            self.skipped += 1;
            return Ok(false);
        }
        let text = String::from_utf8_lossy(&bytes);
        let mut hit = false;
        for (i, line) in text.lines().enumerate() {
            if !self.re.is_match(line) {
                continue;
            }
            let rendered = format!("{shown}:{}:{}\n", i + 1, shown_line(line));
            if self.out.len() + rendered.len() > self.cap {
                self.capped = true;
                break;
            }
            self.out.push_str(&rendered);
            self.matches += 1;
            hit = true;
        }
        if hit {
            self.files += 1;
        }
        Ok(true)
    }

    /// The text for the model.
    fn finish(mut self, pattern: &str, shown: &str) -> String {
        if self.matches == 0 && !self.capped {
            self.out = format!("No matches for `{pattern}` in `{shown}`.");
        } else {
            self.out
                .push_str(&format!("[{} matches in {} files", self.matches, self.files));
            if self.capped {
                self.out.push_str(&format!(
                    "; output capped at {} bytes, narrow the pattern or the path",
                    self.cap
                ));
            }
            self.out.push(']');
        }
        if self.skipped > 0 {
            self.out
                .push_str(&format!("\n[{} binary or oversized files skipped]", self.skipped));
        }
        self.out
    }
}
