//! `retrace diff`: what one retained turn did (SPEC §5.7): each file it changed with its diff from
//! the turn's start to the turn's end, its shell commands with their exit codes, its coverage.
//! Read-only, no lease needed. On a terminal the diff is coloured (unless `NO_COLOR` is set) and
//! goes through a pager (`$PAGER`, else `less -FRX`); piped, it is plain text.

use std::io::{IsTerminal, Write};
use std::process::{Command, ExitCode, Stdio};

use retrace_protocol::{ChangeAction, TurnFile, TurnResults};

use super::args::SessionArgs;
use crate::common::{print_json, reader};
use crate::failure::CmdResult;
use crate::output::{first_line, human_bytes, shown_path, shown_text};

/// Show what a turn changed: each file's diff, its commands, its coverage.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// The turn.
    #[arg(long, value_name = "N")]
    pub turn: u64,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Prints the turn's results.
pub fn run(a: DiffArgs) -> CmdResult {
    let id = a.session.pick_to_read()?.id;
    let results = reader(&id)?.turn_results(a.turn)?;
    if a.json {
        print_json(&results)?;
        return Ok(ExitCode::SUCCESS);
    }
    let terminal = std::io::stdout().is_terminal();
    let colour = terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let text = render(&results, colour);
    if terminal {
        page(&text);
    } else {
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        out.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}

/// SGR colours, or nothing.
struct Paint(bool);

impl Paint {
    fn wrap(&self, code: &str, s: &str) -> String {
        match self.0 {
            true => format!("\x1b[{code}m{s}\x1b[0m"),
            false => s.to_string(),
        }
    }
}

/// The results as text.
pub fn render(r: &TurnResults, colour: bool) -> String {
    let p = Paint(colour);
    let mut out = String::new();
    let coverage = word(r.coverage);
    out.push_str(&p.wrap(
        "1",
        &format!(
            "turn {} · {} · coverage {coverage}",
            r.turn,
            first_line(&r.prompt, 60)
        ),
    ));
    out.push('\n');
    if r.files.is_empty() {
        out.push_str("no file changed\n");
    }
    for f in &r.files {
        out.push('\n');
        out.push_str(&p.wrap("1", &file_line(f)));
        out.push('\n');
        for line in f.diff.split_inclusive('\n') {
            let shown = shown_text(line.strip_suffix('\n').unwrap_or(line));
            let painted = match line.as_bytes().first() {
                Some(b'+') => p.wrap("32", &shown),
                Some(b'-') => p.wrap("31", &shown),
                Some(b'@') => p.wrap("36", &shown),
                Some(b'\\') => p.wrap("2", &shown),
                _ => shown,
            };
            out.push_str(&painted);
            out.push('\n');
        }
        if f.diff_truncated {
            out.push_str(&p.wrap("2", "(the diff is cut here; the counts are whole)"));
            out.push('\n');
        }
    }
    if !r.commands.is_empty() {
        out.push_str("\ncommands:\n");
        for c in &r.commands {
            let how = match (c.exit_code, c.status) {
                (Some(code), _) => format!("exit {code}"),
                (None, s) => word(s),
            };
            let took = c
                .duration_ms
                .map(|ms| format!(" · {}", duration(ms)))
                .unwrap_or_default();
            out.push_str(&format!("  $ {} → {how}{took}\n", first_line(&c.command, 100)));
        }
    }
    if !r.gaps.is_empty() {
        out.push_str("\nnot captured:\n");
        for g in &r.gaps {
            let what = g
                .path
                .as_deref()
                .map(shown_path)
                .or_else(|| g.detail.as_deref().map(|d| first_line(d, 100)));
            out.push_str(&format!(
                "  {:?}{}\n",
                g.reason,
                what.map(|w| format!(": {w}")).unwrap_or_default()
            ));
        }
    }
    out
}

/// `modified src/lib.rs (+3 −1)`, and the like.
fn file_line(f: &TurnFile) -> String {
    let path = shown_path(&f.path);
    let verb = f.action.past_tense();
    let head = match (&f.action, &f.from) {
        (ChangeAction::Move, Some(from)) => format!("{verb} {} → {path}", shown_path(from)),
        _ => format!("{verb} {path}"),
    };
    if let Some(why) = &f.unknown {
        return format!("{head} (no diff: {why})");
    }
    if f.binary {
        let size = |v: &Option<retrace_protocol::FileVersion>| {
            v.as_ref()
                .and_then(|v| v.size)
                .map_or_else(|| "absent".to_string(), human_bytes)
        };
        return format!("{head} (binary, {} → {})", size(&f.before), size(&f.after));
    }
    if f.is_bare_move() {
        return head;
    }
    format!("{head} (+{} −{})", f.added, f.removed)
}

/// A value's JSON name (`partial`, `bash_side_effect`, …).
fn word(v: impl serde::Serialize) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn duration(ms: u64) -> String {
    match ms {
        0..=999 => format!("{ms} ms"),
        _ => format!("{:.1} s", ms as f64 / 1000.0),
    }
}

/// Shows `text` through the user's pager; prints it when no pager starts.
fn page(text: &str) {
    let pager = std::env::var("PAGER").ok().filter(|p| !p.trim().is_empty());
    let mut cmd = match &pager {
        Some(p) => {
            let mut c = Command::new("sh");
            c.arg("-c").arg(p);
            c
        }
        None => {
            let mut c = Command::new("less");
            c.arg("-FRX");
            c
        }
    };
    if let Ok(mut child) = cmd.stdin(Stdio::piped()).spawn() {
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(text.as_bytes());
        }
        if child.wait().is_ok() {
            return;
        }
    }
    let _ = std::io::stdout().write_all(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use retrace_protocol::{Coverage, FileVersion, ToolStatus, TurnCommand};

    fn results() -> TurnResults {
        TurnResults {
            turn: 2,
            prompt: "fix it".into(),
            coverage: Coverage::Partial,
            files: vec![
                TurnFile {
                    path: "a.txt".into(),
                    action: ChangeAction::Modify,
                    from: None,
                    diff: "@@ -1 +1 @@\n-a\n+b\x1b[2J\n".into(),
                    added: 1,
                    removed: 1,
                    binary: false,
                    diff_truncated: false,
                    before: Some(FileVersion {
                        sha256: None,
                        size: Some(2),
                        mode: None,
                    }),
                    after: Some(FileVersion {
                        sha256: None,
                        size: Some(2),
                        mode: None,
                    }),
                    unknown: None,
                },
                TurnFile {
                    path: "img.png".into(),
                    action: ChangeAction::Create,
                    from: None,
                    diff: String::new(),
                    added: 0,
                    removed: 0,
                    binary: true,
                    diff_truncated: false,
                    before: None,
                    after: Some(FileVersion {
                        sha256: None,
                        size: Some(2048),
                        mode: None,
                    }),
                    unknown: None,
                },
            ],
            commands: vec![TurnCommand {
                command: "cargo test".into(),
                exit_code: Some(101),
                duration_ms: Some(1500),
                status: ToolStatus::Ok,
            }],
            gaps: Vec::new(),
        }
    }

    #[test]
    fn plain_text_escapes_what_the_files_hold() {
        let text = render(&results(), false);
        assert_eq!(
            text,
            "turn 2 · fix it · coverage partial\n\nmodified a.txt (+1 −1)\n@@ -1 +1 @@\n-a\n+b\\u{1b}[2J\n\ncreated img.png (binary, absent → 2.0 KiB)\n\ncommands:\n  $ cargo test → exit 101 · 1.5 s\n"
        );
    }

    #[test]
    fn colour_marks_added_and_removed_lines() {
        let text = render(&results(), true);
        assert!(text.contains("\x1b[32m+b\\u{1b}[2J\x1b[0m"), "{text}");
        assert!(text.contains("\x1b[31m-a\x1b[0m"));
    }
}
