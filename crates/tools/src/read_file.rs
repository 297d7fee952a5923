//! `read_file {path, offset?, limit?}`: a text file with line numbers, like `cat -n`.
//!
//! The file is streamed line by line, so a window deep inside a large log costs no more memory than
//! the window. Only the lines shown (and the first 8 KiB, for NUL bytes) are checked to be text;
//! lines after the window are only counted. A file named explicitly is read even when
//! `.gitignore` lists it: ignore rules hide files from listings and searches, not from a request.

use std::io::{self, BufRead, BufReader};

use serde::Deserialize;
use serde_json::{json, Value};

use crate::args::ToolArgs;
use crate::describe::{field, Title};
use crate::error::{IoContext, Result, ToolError};
use crate::text::SNIFF_BYTES;
use crate::tool::{Preview, RunContext, Tool, ToolOutput};
use crate::workspace::Workspace;

/// Reads a text file with line numbers.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadFile;

const NAME: &str = "read_file";

/// Lines shown when the call gives no `limit`.
pub const DEFAULT_LIMIT: u64 = 2000;
/// Longest line shown, in characters; longer lines are cut with a note.
const MAX_LINE_CHARS: usize = 2000;

/// The arguments of `read_file`.
#[derive(Debug, Clone, Deserialize)]
pub struct ReadFileArgs {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The 1-based first line (0 is read as 1; default 1).
    pub offset: Option<u64>,
    /// How many lines (at least 1; default [`DEFAULT_LIMIT`]).
    pub limit: Option<u64>,
}

impl ToolArgs for ReadFileArgs {
    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the workspace root."},
                "offset": {"type": "integer", "minimum": 1, "description": "The 1-based line number to start at (default 1)."},
                "limit": {"type": "integer", "minimum": 1, "description": "How many lines to show (default 2000)."}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    fn check(&self) -> std::result::Result<(), String> {
        if self.limit == Some(0) {
            return Err("`limit` must be at least 1".into());
        }
        Ok(())
    }
}

impl Tool for ReadFile {
    type Args = ReadFileArgs;
    const NAME: &'static str = NAME;
    const DESCRIPTION: &'static str = "Read a text file. Each line is shown as `<line number>\\t<text>` \
         (the number is not part of the file). By default the first 2000 lines are shown; use \
         offset (1-based first line) and limit (number of lines) to read other parts of long \
         files. Binary files are refused.";
    const READ_ONLY: bool = true;

    fn describe(args: &Value) -> Title {
        match field(args, "path") {
            Some(path) => Title::on("Read", path),
            None => Title::new("Read a file"),
        }
    }

    fn preview(&self, _ws: &Workspace, _args: &ReadFileArgs) -> Result<Preview> {
        Ok(Preview::empty())
    }

    fn run(
        &self,
        ws: &Workspace,
        args: &ReadFileArgs,
        _preview: &Preview,
        ctx: &RunContext<'_>,
    ) -> Result<ToolOutput> {
        let path = &args.path;
        let offset = args.offset.unwrap_or(1).max(1);
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
        let target = ws.resolve_read(path)?;
        let shown = target.shown;
        // Non-blocking: a FIFO must not hang the turn (its type is checked below).
        let (file, meta) = match retrace_fsutil::open_read(&target.real) {
            Ok(opened) => opened,
            Err(e) if e.kind() == io::ErrorKind::NotFound || e.kind() == io::ErrorKind::NotADirectory => {
                return Err(ToolError::NotFound {
                    path: shown,
                    hint: "; find files with glob or list_dir",
                })
            }
            Err(e) => return Err(e).at("read", &target.real),
        };
        if meta.is_dir() {
            return Err(ToolError::IsDirectory {
                path: shown,
                hint: "; use list_dir to see its entries",
            });
        }
        if !meta.is_file() {
            return Err(ToolError::NotARegularFile { path: shown });
        }
        let window = Window {
            offset,
            limit,
            cap: ctx.output_cap_bytes,
        };
        let content = render(BufReader::new(file), &shown, window).at("read", &target.real)?;
        Ok(ToolOutput {
            content: content?,
            changed: Vec::new(),
            exit_code: None,
        })
    }
}

/// Which lines to show and how many bytes at most.
#[derive(Debug, Clone, Copy)]
struct Window {
    offset: u64,
    limit: u64,
    cap: usize,
}

/// Renders the window of lines; the outer error is I/O, the inner one a refusal for the model.
fn render<R: BufRead>(mut r: R, shown: &str, w: Window) -> io::Result<Result<String>> {
    let mut out = String::new();
    let mut line = Vec::new();
    let (mut n, mut read, mut last_shown) = (0u64, 0usize, 0u64);
    let mut capped = false;
    loop {
        line.clear();
        let got = r.read_until(b'\n', &mut line)?;
        if got == 0 {
            break;
        }
        n += 1;
        let sniff_end = SNIFF_BYTES.saturating_sub(read).min(line.len());
        read += got;
        let in_window = n >= w.offset && n < w.offset.saturating_add(w.limit) && !capped;
        if !in_window {
            if line[..sniff_end].contains(&0) {
                return Ok(Err(binary(shown, &line[..sniff_end])));
            }
            continue;
        }
        if line[..sniff_end].contains(&0) || std::str::from_utf8(&line).is_err() {
            return Ok(Err(binary(shown, &line)));
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches('\n').trim_end_matches('\r');
        let rendered = format!("{:>6}\t{}\n", n, cut(text));
        if out.len() + rendered.len() > w.cap && last_shown > 0 {
            capped = true;
            continue;
        }
        out.push_str(&rendered);
        last_shown = n;
    }
    if n == 0 {
        return Ok(Ok(format!("`{shown}` is empty.")));
    }
    if w.offset > n {
        return Ok(Err(ToolError::args(
            NAME,
            format!(
                "`offset` {} is past the end of `{shown}`, which has {n} lines",
                w.offset
            ),
        )));
    }
    if last_shown < n {
        let why = if capped {
            format!("output capped at {} bytes", w.cap)
        } else {
            "limit reached".to_string()
        };
        out.push_str(&format!(
            "[lines {}-{last_shown} of {n} ({why}); call read_file with offset={} to read more]\n",
            w.offset,
            last_shown + 1
        ));
    }
    Ok(Ok(out))
}

/// The refusal for a binary line (the reason is rough: offsets are within the line).
fn binary(shown: &str, line: &[u8]) -> ToolError {
    let why = if line.contains(&0) {
        "it contains NUL bytes".to_string()
    } else {
        "it is not valid UTF-8".to_string()
    };
    ToolError::Binary {
        path: shown.to_string(),
        why,
    }
}

/// `text` cut to [`MAX_LINE_CHARS`] characters, with a note.
fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((at, _)) => format!("{}… [line cut: {} chars]", &text[..at], text.chars().count()),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(text: &str, offset: u64, limit: u64, cap: usize) -> Result<String> {
        render(text.as_bytes(), "f", Window { offset, limit, cap }).unwrap()
    }

    #[test]
    fn window_and_note() {
        let text = "a\nb\r\nc\nd";
        assert_eq!(
            show(text, 1, 10, 1000).unwrap(),
            "     1\ta\n     2\tb\n     3\tc\n     4\td\n"
        );
        let out = show(text, 2, 2, 1000).unwrap();
        assert_eq!(
            out,
            "     2\tb\n     3\tc\n[lines 2-3 of 4 (limit reached); call read_file with offset=4 to read more]\n"
        );
        assert!(show(text, 9, 1, 1000)
            .unwrap_err()
            .to_string()
            .contains("past the end"));
        assert_eq!(show("", 1, 5, 100).unwrap(), "`f` is empty.");
    }

    #[test]
    fn cap_cuts_on_a_line_boundary() {
        let text = "0123456789\n".repeat(10);
        let out = show(&text, 1, 100, 40).unwrap();
        assert!(
            out.starts_with("     1\t0123456789\n     2\t0123456789\n[lines 1-2 of 10"),
            "{out}"
        );
        assert!(out.contains("output capped at 40 bytes"), "{out}");
    }

    #[test]
    fn binary_refused() {
        assert!(matches!(
            show("a\nb\0c\n", 1, 10, 100),
            Err(ToolError::Binary { .. })
        ));
        let bad = render(
            &b"ok\ncaf\xe9\n"[..],
            "f",
            Window {
                offset: 1,
                limit: 9,
                cap: 99,
            },
        )
        .unwrap();
        assert!(matches!(bad, Err(ToolError::Binary { .. })));
    }
}
