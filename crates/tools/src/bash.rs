//! `bash {command, timeout_ms?}`: runs a shell command in the workspace root.
//!
//! Shell commands are not previewable: the preview only carries the command line, which the agent
//! records as a `bash_side_effect` gap (the tools crate does not know the checkpoint store). The
//! approval policy is applied in `run`: `deny` refuses, `ask` asks [`RunContext::approve`], `allow`
//! runs. A refusal is a [`ToolError`] the model sees, never a failed turn; its
//! [`ToolError::touched_nothing`] is true, so the agent need not record a gap for it.

use std::time::Duration;

use retrace_protocol::{Gap, GapReason};
use serde_json::{json, Value};

use crate::args::{args, Args};
use crate::error::{Result, ToolError};
use crate::shell::{run_shell, Ended};
use crate::tool::{BashPolicy, Preview, RunContext, Tool, ToolOutput};
use crate::workspace::Workspace;

/// Runs a shell command.
#[derive(Debug, Clone, Copy, Default)]
pub struct Bash;

const NAME: &str = "bash";

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
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "Run a shell command (bash -c) in the workspace root, with stdin closed, and return its \
         output (stdout and stderr together, capped) and exit code. Use it for builds, tests and \
         git queries; use the file tools to read and edit files, because changes made by shell \
         commands cannot be taken back by a rewind. The user may have to approve each command."
    }

    fn parameters(&self) -> Value {
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

    fn read_only(&self) -> bool {
        false
    }

    fn preview(&self, _ws: &Workspace, args: &Value) -> Result<Preview> {
        args!(NAME, args, holder, a);
        let (command, _) = parse(&a)?;
        Ok(Preview {
            shell_command: Some(command.to_string()),
            ..Preview::default()
        })
    }

    fn run(
        &self,
        ws: &Workspace,
        args: &Value,
        _preview: &Preview,
        ctx: &RunContext<'_>,
    ) -> Result<ToolOutput> {
        args!(NAME, args, holder, a);
        let (command, timeout_ms) = parse(&a)?;
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
        })
    }
}

/// The command (non-blank) and the optional timeout (1..=[`MAX_TIMEOUT_MS`]).
fn parse<'v>(a: &Args<'v>) -> Result<(&'v str, Option<u64>)> {
    let command = a.str("command")?;
    if command.trim().is_empty() {
        return Err(a.err("`command` is empty; give the command line to run"));
    }
    let timeout = a.opt_u64("timeout_ms")?;
    if let Some(t) = timeout {
        if t == 0 || t > MAX_TIMEOUT_MS {
            return Err(a.err(format!(
                "`timeout_ms` must be between 1 and {MAX_TIMEOUT_MS} (ten minutes), got {t}"
            )));
        }
    }
    Ok((command, timeout))
}
