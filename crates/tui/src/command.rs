//! Slash commands typed into the input box.

/// A parsed slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `/rewind`: open the rewind picker.
    Rewind,
    /// `/undo`: undo the last rewind.
    Undo,
    /// `/redo`: apply the last undone rewind again.
    Redo,
    /// `/diff [turn]`: what a turn changed (`None`: the latest turn with a checkpoint).
    Diff(Option<u64>),
    /// `/history <path>`: every version of a file.
    History(String),
    /// `/heads` (alias `/branch`): list the heads.
    Heads,
    /// `/switch <id|name>`: select a head.
    Switch(String),
    /// `/fork [name]`.
    Fork(Option<String>),
    /// `/fork [--turn N] --worktree DIR`: fork into a new workspace (without a turn, the picker
    /// asks for it).
    ForkWorkspace {
        /// The turn, when given.
        turn: Option<u64>,
        /// The new workspace's directory, as typed.
        dir: String,
    },
    /// `/sessions`.
    Sessions,
    /// `/model <spec>`.
    Model(String),
    /// `/model` alone: list the models to choose from.
    Models,
    /// `/compact`: summarize everything before the latest turn into a new head.
    Compact,
    /// `/plan` (toggle), `/plan on`, `/plan off`.
    Plan(Option<bool>),
    /// `/new`: a new session on the workspace.
    New,
    /// `/status`: the session, its workspace, model, tokens, cost and log.
    Status,
    /// `/mcp`: the MCP servers, their status, tools and prompts.
    Mcp,
    /// `/SERVER:PROMPT [args]`: an MCP server's prompt, put in the input. `args` are
    /// `name=value` words.
    McpPrompt {
        /// The server.
        server: String,
        /// The prompt.
        prompt: String,
        /// The arguments, by name.
        args: Vec<(String, String)>,
    },
    /// `/help`.
    Help,
    /// `/quit` (alias `/exit`).
    Quit,
    /// A command with a missing argument: the usage to show.
    Usage(&'static str),
    /// Not a known command: its name.
    Unknown(String),
}

/// The commands with a one-line description: what `/help` and the `/` palette list, and Tab
/// completes. An argument in `<>` is needed (Enter in the palette completes the name first), one
/// in `[]` may be left out.
pub const COMMANDS: &[(&str, &str)] = &[
    ("/rewind", "open the rewind picker (also Esc Esc)"),
    ("/undo", "undo the last rewind"),
    ("/redo", "apply the last undone rewind again"),
    ("/diff [turn]", "what a turn changed: files, diffs, commands"),
    (
        "/history <path>",
        "a file's versions; Enter restores one (undoable)",
    ),
    ("/heads", "list the heads (alias /branch)"),
    ("/switch <id|name>", "select another head"),
    (
        "/fork [name]",
        "fork the conversation (--worktree DIR: a new workspace)",
    ),
    ("/sessions", "switch session"),
    (
        "/model [spec]",
        "change the model (alone: list the models to choose from)",
    ),
    (
        "/compact",
        "summarize the turns before the last one (the full conversation stays a version)",
    ),
    (
        "/plan [on|off]",
        "plan mode: the model only reads and plans (also Shift+Tab)",
    ),
    ("/new", "start a new session (this one stays on disk: /sessions)"),
    (
        "/status",
        "session id, head, workspace, model, tokens and cost, log file",
    ),
    (
        "/mcp",
        "the MCP servers: status, tools (read-only marked), prompts (/SERVER:PROMPT)",
    ),
    ("/help", "keys and commands"),
    ("/quit", "leave (the session stays on disk)"),
];

/// A command's name in its usage (`/diff [turn]` → `/diff`).
pub fn name(usage: &str) -> &str {
    usage.split_whitespace().next().unwrap_or(usage)
}

/// Whether a command's usage says it needs an argument (`/switch <id|name>`).
pub fn needs_argument(usage: &str) -> bool {
    usage.contains('<')
}

/// Parses `input` as a slash command; `None` when it is a prompt: it does not start with `/`, or
/// its first word is a path (`/usr/bin/foo crashes…` is a question, not a command).
pub fn parse(input: &str) -> Option<Command> {
    let rest = input.trim().strip_prefix('/')?;
    let (name, arg) = match rest.find(char::is_whitespace) {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest, ""),
    };
    if name.contains('/') || name.contains('.') {
        return None;
    }
    // The argument as typed (a head named `x  y` keeps its two spaces).
    let arg = (!arg.is_empty()).then(|| arg.to_string());
    Some(match name {
        "rewind" => Command::Rewind,
        "undo" => Command::Undo,
        "redo" => Command::Redo,
        "diff" => match arg.as_deref().map(str::parse::<u64>) {
            None => Command::Diff(None),
            Some(Ok(turn)) => Command::Diff(Some(turn)),
            Some(Err(_)) => Command::Usage("/diff [turn]"),
        },
        "history" => match arg {
            Some(path) => Command::History(path),
            None => Command::Usage("/history <path>"),
        },
        "heads" | "branch" => Command::Heads,
        "switch" => match arg {
            Some(a) => Command::Switch(a),
            None => Command::Usage("/switch <id|name>"),
        },
        "fork" => match arg {
            Some(a) if a.starts_with("--") => fork_workspace(&a),
            other => Command::Fork(other),
        },
        "sessions" => Command::Sessions,
        "model" => match arg {
            Some(a) => Command::Model(a),
            None => Command::Models,
        },
        "compact" => match arg {
            None => Command::Compact,
            Some(_) => Command::Usage("/compact"),
        },
        "plan" => match arg.as_deref() {
            None => Command::Plan(None),
            Some("on") => Command::Plan(Some(true)),
            Some("off") => Command::Plan(Some(false)),
            Some(_) => Command::Usage("/plan [on|off]"),
        },
        "new" => match arg {
            None => Command::New,
            Some(_) => Command::Usage("/new"),
        },
        "status" => Command::Status,
        "mcp" => Command::Mcp,
        n if n.contains(':') => mcp_prompt(n, arg.as_deref().unwrap_or_default()),
        "help" | "?" => Command::Help,
        "quit" | "exit" | "q" => Command::Quit,
        other => Command::Unknown(other.to_string()),
    })
}

/// `/SERVER:PROMPT name=value …`.
fn mcp_prompt(name: &str, args: &str) -> Command {
    const USAGE: &str = "/SERVER:PROMPT [name=value …]";
    let Some((server, prompt)) = name
        .split_once(':')
        .filter(|(s, p)| !s.is_empty() && !p.is_empty())
    else {
        return Command::Usage(USAGE);
    };
    let mut pairs = Vec::new();
    for word in args.split_whitespace() {
        match word.split_once('=') {
            Some((k, v)) if !k.is_empty() => pairs.push((k.to_string(), v.to_string())),
            _ => return Command::Usage(USAGE),
        }
    }
    Command::McpPrompt {
        server: server.to_string(),
        prompt: prompt.to_string(),
        args: pairs,
    }
}

/// `/fork [--turn N] --worktree DIR`'s arguments (`DIR` is the rest of the line, spaces kept).
fn fork_workspace(args: &str) -> Command {
    const USAGE: &str = "/fork [--turn N] --worktree DIR";
    let mut rest = args.trim();
    let mut turn = None;
    if let Some(after) = rest.strip_prefix("--turn") {
        let after = after.trim_start();
        let (n, more) = after.split_once(char::is_whitespace).unwrap_or((after, ""));
        match n.parse::<u64>() {
            Ok(n) => turn = Some(n),
            Err(_) => return Command::Usage(USAGE),
        }
        rest = more.trim_start();
    }
    match rest.strip_prefix("--worktree") {
        Some(dir) if dir.starts_with(char::is_whitespace) && !dir.trim().is_empty() => {
            Command::ForkWorkspace {
                turn,
                dir: dir.trim().to_string(),
            }
        }
        _ => Command::Usage(USAGE),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        assert_eq!(parse("hello"), None);
        assert_eq!(parse("/branch"), Some(Command::Heads));
        assert_eq!(parse("/redo"), Some(Command::Redo));
        assert_eq!(parse("/mcp"), Some(Command::Mcp));
        assert_eq!(
            parse("/everything:args-prompt city=Paris state=x"),
            Some(Command::McpPrompt {
                server: "everything".into(),
                prompt: "args-prompt".into(),
                args: vec![("city".into(), "Paris".into()), ("state".into(), "x".into())],
            })
        );
        assert_eq!(
            parse("/x:y nope"),
            Some(Command::Usage("/SERVER:PROMPT [name=value …]"))
        );
        assert_eq!(
            parse(" /switch  my head "),
            Some(Command::Switch("my head".into()))
        );
        assert_eq!(parse("/switch"), Some(Command::Usage("/switch <id|name>")));
        assert_eq!(parse("/fork"), Some(Command::Fork(None)));
        assert_eq!(parse("/nope"), Some(Command::Unknown("nope".into())));
        assert_eq!(parse("/usr/bin/foo crashes"), None);
        assert_eq!(parse("/etc/hosts"), None);
        assert_eq!(parse("/fork a  b"), Some(Command::Fork(Some("a  b".into()))));
        assert_eq!(
            parse("/fork --worktree ../try b"),
            Some(Command::ForkWorkspace {
                turn: None,
                dir: "../try b".into()
            })
        );
        assert_eq!(
            parse("/fork --turn 3 --worktree /tmp/x"),
            Some(Command::ForkWorkspace {
                turn: Some(3),
                dir: "/tmp/x".into()
            })
        );
        assert_eq!(
            parse("/fork --worktree"),
            Some(Command::Usage("/fork [--turn N] --worktree DIR"))
        );
        assert_eq!(
            parse("/fork --turn x --worktree d"),
            Some(Command::Usage("/fork [--turn N] --worktree DIR"))
        );
        assert_eq!(parse("/diff"), Some(Command::Diff(None)));
        assert_eq!(parse("/diff 3"), Some(Command::Diff(Some(3))));
        assert_eq!(parse("/diff three"), Some(Command::Usage("/diff [turn]")));
        assert_eq!(
            parse("/history demo/notes.md"),
            Some(Command::History("demo/notes.md".into()))
        );
        assert_eq!(parse("/history"), Some(Command::Usage("/history <path>")));
        assert_eq!(parse("/model"), Some(Command::Models));
        assert_eq!(parse("/model demo"), Some(Command::Model("demo".into())));
    }
}
