//! How `retrace exec` prints a turn's events: as they stream, for a person (the answer on
//! standard output, notices and reasoning on standard error), or as JSON Lines with `--json`.

use std::io::Write;

use retrace_protocol::{ErrorCode, Event, ItemBody};

/// An event as `exec --json` prints it: the protocol's event, with a tool call's `arguments` as the
/// JSON value the model sent rather than JSON text inside JSON (the model's text as a string when
/// it is not JSON). Other events are written straight from the protocol type: going through a
/// `serde_json::Value` would copy every diff and output an item carries once more.
fn json_line(e: &Event) -> serde_json::Result<String> {
    match e {
        Event::ToolCall { arguments, .. } => {
            let mut v = serde_json::to_value(e)?;
            if let Ok(parsed) = serde_json::from_str::<serde_json::Value>(arguments) {
                v["arguments"] = parsed;
            }
            serde_json::to_string(&v)
        }
        _ => serde_json::to_string(e),
    }
}

/// Prints a turn's events in order, keeping what it needs across them.
pub struct Printer {
    json: bool,
    mid_line: bool,
    /// Reasoning was printed (to standard error) without its line ending.
    reasoning_mid_line: bool,
    /// The before-images and gaps printed so far (a checkpoint item grows during the turn).
    captured: std::collections::HashSet<String>,
    gaps: std::collections::HashSet<String>,
    /// Standard output went away: nothing more is written to it.
    closed: bool,
}

impl Printer {
    /// A printer for a person, or of JSON Lines (`json`).
    pub fn new(json: bool) -> Printer {
        Printer {
            json,
            mid_line: false,
            reasoning_mid_line: false,
            captured: Default::default(),
            gaps: Default::default(),
            closed: false,
        }
    }

    /// Prints one event; `true` when standard output just went away: nothing more is written to
    /// it.
    pub fn print(&mut self, e: &Event) -> bool {
        if self.closed {
            return false;
        }
        self.closed = self.write(e).is_err();
        self.closed
    }

    /// Writes one event; an error means standard output cannot be written any more.
    fn write(&mut self, e: &Event) -> std::io::Result<()> {
        let mut out = String::new();
        let mut err = String::new();
        self.render(e, &mut out, &mut err);
        if !err.is_empty() {
            let _ = std::io::stderr().write_all(err.as_bytes());
        }
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(out.as_bytes())?;
        stdout.flush()
    }

    /// What `e` prints, to standard output (`out`) and standard error (`err`).
    fn render(&mut self, e: &Event, out: &mut String, err: &mut String) {
        use crate::output::{first_line, shown_path, shown_text};
        use std::fmt::Write as _;
        if self.json {
            if let Ok(line) = json_line(e) {
                let _ = writeln!(out, "{line}");
            }
            // Notices and errors go to standard error too (SPEC §11): a script that reads only
            // the result line still shows the user why a turn waited or failed.
            match e {
                Event::Notice { message, .. } => {
                    let _ = writeln!(err, "retrace: {}", shown_path(message));
                }
                Event::Error { message } => {
                    let _ = writeln!(err, "retrace: error: {}", shown_path(message));
                }
                _ => {}
            }
            return;
        }
        if self.reasoning_mid_line && !matches!(e, Event::ReasoningDelta { .. }) {
            // The answer (or anything else) starts on a line of its own, apart from the reasoning.
            err.push('\n');
            self.reasoning_mid_line = false;
        }
        if self.mid_line && !matches!(e, Event::AssistantDelta { .. } | Event::ReasoningDelta { .. }) {
            out.push('\n');
            self.mid_line = false;
        }
        match e {
            Event::TurnStarted { turn, prompt, .. } => {
                let _ = writeln!(out, "── turn {turn}: {}", shown_text(&first_line(prompt, 70)));
            }
            Event::AssistantDelta { text, .. } => {
                out.push_str(&shown_text(text));
                self.mid_line = !text.ends_with('\n');
            }
            Event::ReasoningDelta { text, .. } => {
                err.push_str(&shown_text(text));
                self.reasoning_mid_line = !text.ends_with('\n');
            }
            Event::ItemStarted { item } | Event::ItemUpdated { item } | Event::ItemCompleted { item } => {
                match &item.body {
                    ItemBody::ToolCall(call) if matches!(e, Event::ItemStarted { .. }) => {
                        out.push_str(&crate::item_text::started(call));
                    }
                    ItemBody::ToolCall(call) if matches!(e, Event::ItemCompleted { .. }) => {
                        out.push_str(&crate::item_text::finished(call));
                    }
                    ItemBody::Checkpoint(c) => {
                        let new: Vec<String> = c
                            .files
                            .iter()
                            .filter(|p| self.captured.insert((*p).clone()))
                            .map(|p| shown_path(p))
                            .collect();
                        if !new.is_empty() {
                            let _ = writeln!(out, "  ⎌ before-image saved: {}", new.join(", "));
                        }
                        for g in &c.gaps {
                            let what = g.path.as_deref().or(g.detail.as_deref()).unwrap_or("");
                            let line =
                                format!("{} {}", g.reason.as_str(), shown_path(&first_line(what, 100)));
                            if self.gaps.insert(line.clone()) {
                                let _ = writeln!(out, "  ! not restorable: {line}");
                            }
                        }
                    }
                    ItemBody::Note(n) => {
                        let _ = writeln!(out, "  ⓘ {}", shown_text(&n.text));
                    }
                    _ => {}
                }
            }
            Event::ToolCall { .. }
            | Event::ToolResult { .. }
            | Event::CheckpointCaptured { .. }
            | Event::ItemRemoved { .. } => {}
            Event::StepFinished { .. } => {}
            Event::TurnFinished { turn, ok, error, .. } => match (ok, error) {
                (true, _) => {
                    let _ = writeln!(out, "── turn {turn} finished");
                }
                (false, Some(e)) => {
                    let _ = writeln!(out, "── turn {turn} failed: {}", shown_path(e));
                }
                (false, None) => {
                    let _ = writeln!(out, "── turn {turn} failed");
                }
            },
            Event::Notice { message, .. } => {
                let _ = writeln!(err, "retrace: {}", shown_path(message));
            }
            Event::Error { message } => {
                let _ = writeln!(err, "retrace: error: {}", shown_path(message));
            }
            Event::ApprovalRequested { tool, command, .. } => {
                let what = match tool.as_str() {
                    "bash" => "shell command",
                    _ => "tool call",
                };
                let _ = writeln!(err, "retrace: {what} needs approval: {}", shown_path(command));
            }
            Event::Compacted {
                head_id,
                automatic,
                before_tokens,
                after_tokens,
                ..
            } => {
                let how = if *automatic {
                    "compacted automatically"
                } else {
                    "compacted"
                };
                let _ = writeln!(
                    out,
                    "  ⎘ {how}: about {before_tokens} → {after_tokens} tokens; new head {head_id} (the full conversation stays a version)"
                );
            }
            Event::PlanMode { on } => {
                let _ = writeln!(err, "retrace: plan mode is {}", if *on { "on" } else { "off" });
            }
            Event::SummaryStarted { .. } | Event::SummaryFinished { .. } => {}
            // The session's tally: a status line's, which a headless run has not.
            Event::Usage { .. } => {}
            Event::ApprovalResolved { .. }
            | Event::Rewound { .. }
            | Event::Undone { .. }
            | Event::Redone { .. }
            | Event::HeadChanged { .. } => {}
        }
    }
}

/// A failed turn's error as every `--json` failure carries one (`{code, message, details}`). The
/// turn's end reports only its text; the controller's texts say which kind it is: cancelled, the
/// model (its failure or its step limit), or the log (I/O).
pub fn turn_error(message: &str) -> serde_json::Value {
    let code = if message.starts_with("cancelled") {
        ErrorCode::Cancelled
    } else if message.starts_with("cannot write the conversation log")
        || message.starts_with("the conversation log could not be synced")
    {
        ErrorCode::Io
    } else {
        ErrorCode::Model
    };
    serde_json::json!({"code": code, "message": message, "details": null})
}

#[cfg(test)]
mod tests {
    use super::turn_error;

    #[test]
    fn a_turn_error_has_a_code() {
        for (message, code) in [
            ("cancelled by the user", "cancelled"),
            ("the model failed: HTTP 500", "model"),
            (
                "the turn reached its limit of 2 model requests; send another message to continue",
                "model",
            ),
            ("cannot write the conversation log: disk full", "io"),
            ("the conversation log could not be synced: EIO", "io"),
        ] {
            let e = turn_error(message);
            assert_eq!(e["code"], code, "{message}");
            assert_eq!(e["message"], message);
        }
    }
}
