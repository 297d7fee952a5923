//! Answers to the requests no screen waits for itself: a rewind's, a revert's, an undo's or a redo's result, a head
//! selected (fork, summary, switch), another session opened, the heads' names, and errors. What
//! they change in the conversation comes with the session's events (a new snapshot after a
//! head change, a rewind or an undo), not with the answers.

use retrace_protocol::{words, Error, HeadEntry, HeadRef, RewindResult, RewindScope, SessionSnapshot};

use crate::app::{App, Awaiting};
use crate::effect::Effect;
use crate::escape;
use crate::screens::Mode;

impl App {
    /// The result of a commit (a rewind's or a single-file revert's), an undo or a redo. What it
    /// did goes into the transcript after the items it left, which a new snapshot brings (asked
    /// for here: the one its event asked for may have been taken before it was done).
    pub fn on_result(&mut self, result: &RewindResult) -> Vec<Effect> {
        let lines = self.transcript.entries().len();
        self.answer_result(result);
        if self.transcript.entries().len() == lines {
            return Vec::new();
        }
        self.reloading = true;
        vec![Effect::LoadSnapshot]
    }

    fn answer_result(&mut self, result: &RewindResult) {
        let undo = if result.undo_available {
            " — /undo to take it back"
        } else {
            ""
        };
        match self.awaiting.take() {
            Some(Awaiting::Commit { turn, scope }) => {
                if result.ok {
                    self.last_restore = Some(format!(
                        "the {} restore to before turn {turn}",
                        match scope {
                            RewindScope::Conversation => "conversation",
                            RewindScope::Code => "code",
                            RewindScope::Both => "code and conversation",
                        }
                    ));
                }
                if result.ok && result.partial {
                    // The conversation was restored; the files were refused after it (they
                    // changed between the preview and the commit).
                    let why = escape::line(
                        result
                            .error
                            .as_deref()
                            .unwrap_or("the files changed since the preview"),
                    );
                    self.message = Some(format!(
                        "rewound the conversation to before turn {turn}, but no file was restored: {why}{undo}"
                    ));
                    self.restored(
                        format!(
                            "restored the conversation to before turn {turn}; no file was restored: {why}"
                        ),
                        result.head_id.as_str(),
                    );
                    self.input.set(&result.prompt);
                } else if result.ok {
                    let what = match scope {
                        RewindScope::Conversation => "the conversation only".to_string(),
                        RewindScope::Code => files_said(result),
                        RewindScope::Both
                            if result.files_written.is_empty() && result.files_deleted.is_empty() =>
                        {
                            format!("the conversation; {}", files_said(result))
                        }
                        RewindScope::Both => files_said(result),
                    };
                    self.message = Some(match scope {
                        RewindScope::Code if !files_changed(result) => format!(
                            "{}{undo}",
                            lowered(&words::files_restored("", false, &files_said(result)))
                        ),
                        _ => format!("rewound to before turn {turn}: {what}{undo}"),
                    });
                    self.restored(
                        match scope {
                            RewindScope::Conversation => {
                                format!("restored the conversation to before turn {turn} (no file touched)")
                            }
                            RewindScope::Code => lowered(&words::files_restored(
                                &format!("code to before turn {turn}"),
                                files_changed(result),
                                &files_said(result),
                            )),
                            RewindScope::Both => format!(
                                "restored code and conversation to before turn {turn}: {}",
                                files_said(result)
                            ),
                        },
                        result.head_id.as_str(),
                    );
                    if matches!(scope, RewindScope::Conversation | RewindScope::Both) {
                        self.input.set(&result.prompt);
                    }
                } else {
                    self.message = Some(format!(
                        "rewind to before turn {turn} failed: {}",
                        escape::line(result.error.as_deref().unwrap_or("nothing was written"))
                    ));
                }
            }
            Some(Awaiting::Revert(revert)) => {
                let to = revert
                    .version
                    .map_or_else(|| "its state before the session".to_string(), |v| format!("v{v}"));
                let path = escape::line(&revert.path);
                let said = lowered(&words::files_restored(
                    &format!("{path} to {to}"),
                    files_changed(result),
                    &files_said(result),
                ));
                if result.ok {
                    self.last_restore = Some(format!("the restore of {path} to {to}"));
                    self.restored(said.clone(), result.head_id.as_str());
                }
                self.message = Some(if result.ok {
                    format!("{said}{undo}")
                } else {
                    format!(
                        "restoring {path} to {to} failed: {}",
                        escape::line(result.error.as_deref().unwrap_or("nothing was written"))
                    )
                });
            }
            Some(Awaiting::Undo) => {
                let redo = if result.redo_available {
                    " — /redo to apply it again"
                } else {
                    ""
                };
                if result.ok {
                    // Named when this UI made it (another frontend's restore is "the last").
                    let what = self
                        .last_restore
                        .clone()
                        .unwrap_or_else(|| "the last restore".to_string());
                    self.restored(changed(&format!("undid {what}"), result), result.head_id.as_str());
                }
                self.message = Some(if !result.ok {
                    format!(
                        "undo failed: {}",
                        escape::line(result.error.as_deref().unwrap_or("nothing was undone"))
                    )
                } else if result.files_written.is_empty() && result.files_deleted.is_empty() {
                    format!("undone{redo}")
                } else {
                    format!("undone: {}{redo}", files_said(result))
                });
            }
            Some(Awaiting::Redo) => {
                if result.ok {
                    let what = self
                        .last_restore
                        .clone()
                        .unwrap_or_else(|| "the restore".to_string());
                    self.restored(changed(&format!("redid {what}"), result), result.head_id.as_str());
                }
                self.message = Some(if !result.ok {
                    format!(
                        "redo failed: {}",
                        escape::line(result.error.as_deref().unwrap_or("nothing was redone"))
                    )
                } else if result.files_written.is_empty() && result.files_deleted.is_empty() {
                    format!("redone{undo}")
                } else {
                    format!("redone: {}{undo}", files_said(result))
                });
            }
            _ => return,
        }
        self.status.head = result.head_id.to_string();
        self.status.session = result.session_id.to_string();
    }

    /// Puts what a restore, an undo or a redo did in the transcript, to stay there: after the
    /// items it left, on the head it left selected.
    fn restored(&mut self, text: String, head: &str) {
        self.transcript.push_restore(text, head);
        self.chat.scroll = 0;
    }

    /// The session's heads, for their names (the status line shows the selected head's).
    pub fn set_head_names(&mut self, heads: &[HeadEntry]) {
        self.head_names = heads
            .iter()
            .filter_map(|h| {
                // `main` needs no second name; the others are called what the controller says.
                let titled = !h.title.is_empty() && h.kind != retrace_protocol::HeadKind::Main;
                let title = h.name.clone().or_else(|| titled.then(|| h.title.clone()))?;
                Some((h.id.to_string(), title))
            })
            .collect();
    }

    /// The selected head's name (or the controller's title for it), if known.
    pub fn head_name(&self) -> Option<&str> {
        self.head_names.get(&self.status.head).map(String::as_str)
    }

    /// Another session was opened in place of this one ([`crate::Effect::OpenSession`]):
    /// everything shown is that session's now, from its snapshot.
    pub fn on_session_opened(&mut self, snap: SessionSnapshot) {
        let model = (self.status.model.clone(), self.status.model_spec.clone());
        let session = snap.status.session_id.clone();
        self.status = crate::status::StatusInfo::from_status(&snap.status);
        self.approvals.clear();
        self.approvals.scroll = 0;
        self.awaiting = None;
        self.mode = Mode::Chat;
        self.transcript.clear();
        self.shown_seq = 0;
        self.seen_seq = 0;
        self.on_snapshot(snap);
        if self.status.model.is_none() {
            (self.status.model, self.status.model_spec) = model;
        }
        self.message = Some(format!(
            "on session {} (the other stays on disk: /sessions to go back)",
            escape::line(session.as_ref())
        ));
    }

    /// After [`App::on_session_opened`], when the session is a fork into a new workspace: where it
    /// is and what it left.
    pub fn on_workspace_fork(&mut self, made: &retrace_protocol::WorkspaceFork) {
        let skipped = match made.skipped.len() {
            0 => String::new(),
            n => format!(", {} skipped", retrace_protocol::words::count(n, "path")),
        };
        self.message = Some(format!(
            "forked turn {} into {}: {} put back{skipped}; session {} stays as it was",
            made.turn,
            escape::line(&made.workspace),
            retrace_protocol::words::count(made.files_restored, "file"),
            escape::line(made.source_session_id.as_str()),
        ));
    }

    /// A fork, summary or switch was done: the head is selected (its event brings its items).
    pub fn on_head_ref(&mut self, r: &HeadRef) {
        self.status.head = r.head_id.to_string();
        self.status.session = r.session_id.to_string();
        if !r.title.is_empty() {
            self.head_names.insert(r.head_id.to_string(), r.title.clone());
        }
        let head = self.head_names.get(r.head_id.as_str()).cloned();
        self.message = Some(match head {
            Some(title) => format!("on head {}", escape::first_line(&title, 56)),
            None => format!("on head {}", escape::line(r.head_id.as_str())),
        });
    }

    /// A request failed: say so, and drop what waited for it.
    /// Shows `message` (escaped) in the status area until the next one.
    pub fn say(&mut self, message: &str) {
        self.message = Some(escape::line(message));
    }

    /// An error answered to a request: said in the status area; a screen left to wait for a
    /// plan or a file's history comes back.
    pub fn on_error(&mut self, err: &Error) {
        match self.awaiting.take() {
            Some(Awaiting::Plan { back: Some(back), .. }) | Some(Awaiting::History(Some(back)))
                if self.mode == Mode::Chat =>
            {
                self.mode = *back;
            }
            _ => {}
        }
        self.message = Some(format!("error: {}", escape::line(&err.message)));
        // A prompt waiting for a model (its input emptied to switch the model) is not lost to a
        // switch that failed: it comes back to be sent once one can answer.
        if self.input.is_empty() && self.status.model.is_none() {
            if let Some(prompt) = &self.held_prompt {
                self.input.set(&prompt.clone());
            }
        }
    }
}

/// Whether a restore wrote or deleted a file.
fn files_changed(r: &RewindResult) -> bool {
    !r.files_written.is_empty() || !r.files_deleted.is_empty()
}

/// A sentence as a line of this UI starts: its first letter small ("nothing was restored: …").
fn lowered(sentence: &str) -> String {
    let mut chars = sentence.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// `what` was done, and what it did to the files when it changed any (`undid the last restore: 1
/// file written`).
fn changed(what: &str, r: &RewindResult) -> String {
    if r.files_written.is_empty() && r.files_deleted.is_empty() && r.conflicts.is_empty() {
        what.to_string()
    } else {
        format!("{what}: {}", files_said(r))
    }
}

/// At most this many skipped files are named, each with why, in a restore's line.
const SKIPS_NAMED: usize = 2;

/// What a restore did to the files, skipped ones included with why: `1 file written, 2 deleted, 1
/// skipped (README.md: edited outside Retrace)`, or plainly `no file changed` when none did.
fn files_said(r: &RewindResult) -> String {
    let done = |p: &String| r.files_written.contains(p) || r.files_deleted.contains(p);
    let skipped: Vec<_> = r.conflicts.iter().filter(|c| !done(&c.path)).collect();
    let mut parts = Vec::new();
    if !r.files_written.is_empty() {
        parts.push(format!("{} written", words::count(r.files_written.len(), "file")));
    }
    if !r.files_deleted.is_empty() {
        // The noun once: "1 file written, 2 deleted", "2 files deleted".
        parts.push(match parts.is_empty() {
            true => format!("{} deleted", words::count(r.files_deleted.len(), "file")),
            false => format!("{} deleted", r.files_deleted.len()),
        });
    }
    let mut why: Vec<String> = skipped
        .iter()
        .take(SKIPS_NAMED)
        .map(|c| format!("{}: {}", escape::short_path(&c.path, 40), words::conflict(c)))
        .collect();
    if skipped.len() > SKIPS_NAMED {
        why.push(format!("{} more", skipped.len() - SKIPS_NAMED));
    }
    let kept = format!("{} skipped ({})", skipped.len(), why.join("; "));
    if parts.is_empty() {
        return match skipped.len() {
            0 => "no file changed (every file in the workspace already as it was)".to_string(),
            _ => format!("no file changed — {kept}"),
        };
    }
    if !skipped.is_empty() {
        parts.push(kept);
    }
    parts.join(", ")
}
