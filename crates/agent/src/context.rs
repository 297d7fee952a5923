//! The system prompt of a turn: the built-in instructions, the environment (date, OS, workspace,
//! whether it is a git repository) and the project's own instructions, read from `AGENTS.md` and
//! `RETRACE.md` at the workspace root at the start of every turn (so an edit to them counts from
//! the next turn).
//!
//! Instruction files are read like any tool read: through the workspace's path rules (a symlink
//! leading outside, into `.git/` or into Retrace's data is not followed, so a repository cannot
//! make the agent send a private file to the model), never blocking (a FIFO is skipped), and
//! capped at [`MAX_INSTRUCTIONS_BYTES`] each.

use std::io::Read;
use std::path::Path;

use retrace_tools::Workspace;

/// The project instruction files, in the order they are given to the model.
pub const INSTRUCTION_FILES: [&str; 2] = ["AGENTS.md", "RETRACE.md"];

/// How much of one instruction file the model is given.
pub const MAX_INSTRUCTIONS_BYTES: u64 = 32 * 1024;

/// `base` followed by the environment and the project instructions of `ws`.
pub fn system_prompt(base: &str, ws: &Workspace) -> String {
    let mut out = String::from(base);
    out.push_str("\n\n# Environment\n");
    out.push_str(&format!(
        "- Date (UTC): {}\n",
        time::OffsetDateTime::now_utc().date()
    ));
    out.push_str(&format!(
        "- Operating system: {} ({})\n",
        std::env::consts::OS,
        std::env::consts::ARCH
    ));
    out.push_str(&format!("- Workspace: {}\n", ws.root().display()));
    out.push_str(&format!("- Git repository: {}\n", git_status(ws.root())));
    for name in INSTRUCTION_FILES {
        match read_instructions(ws, name) {
            Instructions::Absent => {}
            Instructions::Text { text, truncated } => {
                out.push_str(&format!(
                    "\n# Project instructions ({name}, from the workspace root)\n"
                ));
                out.push_str(text.trim_end());
                out.push('\n');
                if truncated {
                    out.push_str(&format!(
                        "[{name} is longer than {MAX_INSTRUCTIONS_BYTES} bytes; the rest was not read]\n"
                    ));
                }
            }
            Instructions::Unusable(why) => {
                out.push_str(&format!("\n[{name} at the workspace root was not read: {why}]\n"));
            }
        }
    }
    out
}

/// Whether `root` is (in) a git repository, in words.
fn git_status(root: &Path) -> String {
    match root.ancestors().find(|d| d.join(".git").exists()) {
        Some(top) if top == root => "yes".to_string(),
        Some(top) => format!("yes (its top is {})", top.display()),
        None => "no".to_string(),
    }
}

enum Instructions {
    Absent,
    Text { text: String, truncated: bool },
    Unusable(String),
}

fn read_instructions(ws: &Workspace, name: &str) -> Instructions {
    if ws.root().join(name).symlink_metadata().is_err() {
        return Instructions::Absent;
    }
    // The reasons given to the model name no path: where a symlink leads stays private.
    let resolved = match ws.resolve(name) {
        Ok(r) => r,
        Err(_) => {
            return Instructions::Unusable(
                "it leads outside the workspace or to a place the tools may not read".to_string(),
            )
        }
    };
    let (file, _) = match retrace_fsutil::open_regular(&resolved.real) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Instructions::Absent,
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
            return Instructions::Unusable(e.to_string())
        }
        Err(e) => return Instructions::Unusable(format!("it cannot be opened ({})", e.kind())),
    };
    let mut bytes = Vec::new();
    if let Err(e) = file.take(MAX_INSTRUCTIONS_BYTES + 1).read_to_end(&mut bytes) {
        return Instructions::Unusable(e.to_string());
    }
    let truncated = bytes.len() as u64 > MAX_INSTRUCTIONS_BYTES;
    bytes.truncate(MAX_INSTRUCTIONS_BYTES as usize);
    Instructions::Text {
        text: String::from_utf8_lossy(&bytes).into_owned(),
        truncated,
    }
}
