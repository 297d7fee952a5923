//! `bash {command, timeout_ms?}`: runs a shell command in the workspace root.
//!
//! Shell commands are not previewable: the preview only carries the command line, which the agent
//! records as a `bash_side_effect` gap (the tools crate does not know the checkpoint store). The
//! approval policy is applied in `run`: `deny` refuses, `ask` asks [`RunContext::approve`], `allow`
//! runs. A refusal is a [`ToolError`] the model sees, never a failed turn; its
//! [`ToolError::touched_nothing`] is true, so the agent need not record a gap for it.

use std::time::Duration;

use retrace_protocol::{Gap, GapReason};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::args::ToolArgs;
use crate::describe::{field, one_line, Title, SHOWN_CHARS};
use crate::error::{Result, ToolError};
use crate::shell::{run_shell, Ended};
use crate::tool::{BashPolicy, Preview, RunContext, Tool, ToolOutput};
use crate::workspace::Workspace;

/// Runs a shell command.
#[derive(Debug, Clone, Copy, Default)]
pub struct Bash;

const NAME: &str = "bash";

/// The arguments of `bash`.
#[derive(Debug, Clone, Deserialize)]
pub struct BashArgs {
    /// The command line (not blank).
    pub command: String,
    /// Kill the command after this many milliseconds (1..=[`MAX_TIMEOUT_MS`]).
    pub timeout_ms: Option<u64>,
}

impl ToolArgs for BashArgs {
    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command line to run."},
                "timeout_ms": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT_MS, "description": "Kill the command after this many milliseconds (default 120000)."}
            },
            "required": ["command"],
            "additionalProperties": false
        })
    }

    fn check(&self) -> std::result::Result<(), String> {
        if self.command.trim().is_empty() {
            return Err("`command` is empty; give the command line to run".into());
        }
        if let Some(t) = self.timeout_ms {
            if t == 0 || t > MAX_TIMEOUT_MS {
                return Err(format!(
                    "`timeout_ms` must be between 1 and {MAX_TIMEOUT_MS} (ten minutes), got {t}"
                ));
            }
        }
        Ok(())
    }
}

/// The longest timeout a call may ask for: ten minutes.
pub const MAX_TIMEOUT_MS: u64 = 600_000;

/// The `bash_side_effect` gap of a shell call: its effects on files are not tracked.
pub fn bash_side_effect_gap(command: &str) -> Gap {
    Gap {
        reason: GapReason::BashSideEffect,
        tool: Some(NAME.to_string()),
        path: None,
        detail: Some(command.to_string()),
    }
}

impl Tool for Bash {
    type Args = BashArgs;
    const NAME: &'static str = NAME;
    const DESCRIPTION: &'static str = "Run a shell command (bash -c) in the workspace root, with \
         stdin closed, and return its output (stdout and stderr together, capped) and exit code. \
         Use it for builds, tests and git queries; use the file tools to read and edit files, \
         because changes made by shell commands cannot be taken back by a rewind. The user may \
         have to approve each command.";
    const READ_ONLY: bool = false;

    fn describe(args: &Value) -> Title {
        match field(args, "command") {
            Some(command) => Title::on("Run", &one_line(command, SHOWN_CHARS)),
            None => Title::new("Run a command"),
        }
    }

    fn preview(&self, _ws: &Workspace, args: &BashArgs) -> Result<Preview> {
        Ok(Preview {
            shell_command: Some(args.command.clone()),
            ..Preview::default()
        })
    }

    fn run(
        &self,
        ws: &Workspace,
        args: &BashArgs,
        _preview: &Preview,
        ctx: &RunContext<'_>,
    ) -> Result<ToolOutput> {
        let (command, timeout_ms) = (args.command.as_str(), args.timeout_ms);
        match ctx.bash_policy {
            BashPolicy::Allow => {}
            BashPolicy::Deny => return Err(ToolError::BashDisabled),
            BashPolicy::Ask => {
                if !(ctx.approve)(command) {
                    return Err(ToolError::BashDeclined {
                        command: command.to_string(),
                    });
                }
            }
        }
        let timeout = timeout_ms.map_or(ctx.bash_timeout_default, Duration::from_millis);
        let run = run_shell(
            ws.root(),
            ws.hidden_env(),
            command,
            timeout,
            ctx.output_cap_bytes,
            &ctx.cancel,
        )?;
        let mut text = run.output.render();
        match run.ended {
            Ended::TimedOut => {
                return Err(ToolError::Timeout {
                    timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                    output: text,
                })
            }
            Ended::Cancelled => return Err(ToolError::Cancelled),
            Ended::Exited(_) | Ended::Signalled(_) => {}
        }
        if text.is_empty() {
            text.push_str("(no output)");
        }
        if !text.ends_with('\n') {
            text.push('\n');
        }
        match run.ended {
            Ended::Signalled(s) => text.push_str(&format!("[killed by signal {s}]")),
            Ended::Exited(c) => text.push_str(&format!("[exit code {c}]")),
            Ended::TimedOut | Ended::Cancelled => {}
        }
        Ok(ToolOutput {
            content: text,
            changed: Vec::new(),
            exit_code: match run.ended {
                Ended::Exited(c) => Some(c),
                _ => None,
            },
        })
    }
}
