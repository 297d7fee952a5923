//! Rewind plans and results (SPEC §5.3): what `prepare_rewind` shows and what a commit returns.

use serde::{Deserialize, Serialize};

use crate::checkpoint::Coverage;
use crate::event::RewindScope;
use crate::ids::{HeadId, SessionId};
use crate::restore::{Conflict, FileAction, OnConflict, PlanFile, PlanGap};

/// A rewind plan: prepared, shown, then committed or dropped. Changes nothing by itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewindPlan {
    /// Single-use id for the commit.
    pub plan_id: String,
    /// What committing it does, in one line, as every frontend heads its preview
    /// (`Rewind code to turn 3: "fix the parser"`, `Revert src/a.rs to before the session first
    /// touched it`, `Restore src/a.rs to version 4 of its history`).
    #[serde(default)]
    pub title: String,
    /// The turn rewound to.
    pub turn: u64,
    /// What is restored.
    pub scope: RewindScope,
    /// The turn's prompt (UIs put it back into the input box).
    pub prompt: String,
    /// Whether the files can be restored.
    pub can_files: bool,
    /// Whether the conversation can be rewound (the turn is on the current head).
    pub can_conversation: bool,
    /// Why an asked-for half is unavailable.
    pub disabled_reason: Option<String>,
    /// True for `code`/`both` when a spanned turn is legacy, expired or has a gap.
    pub requires_confirmation: bool,
    /// The weakest coverage of the spanned turns.
    pub coverage: Coverage,
    /// Gaps of the spanned turns.
    pub gaps: Vec<PlanGap>,
    /// Every file of the restore set (empty for `conversation`).
    pub files: Vec<PlanFile>,
    /// The conflicted files.
    pub conflicts: Vec<Conflict>,
    /// When the plan expires (RFC 3339, 10 minutes after it was made).
    pub expires_at: String,
    /// Why a commit with the default choices (`on_conflict: refuse`, not confirmed) would not go
    /// ahead, in the order they are checked; empty when it would. Frontends render these (offer
    /// skip/overwrite, ask for confirmation, grey the action out) instead of deciding themselves.
    pub blockers: Vec<PlanBlocker>,
    /// When files conflict: the choices a commit can make about them (`refuse`, `skip`,
    /// `overwrite`, in that order), each with what it would do to every file. Empty when nothing
    /// conflicts (the plan's `files` say what a commit does). Frontends offer these, with these
    /// names, and show the chosen one's file actions.
    #[serde(default)]
    pub choices: Vec<PlanChoice>,
    /// Set when nothing conflicts and committing would change nothing at all
    /// ([`RewindPlan::changes_nothing`]): why, in words ([`crate::words::unchanged_files`]:
    /// "every file in the workspace is already as it was"). Frontends say so at once and offer no commit; when
    /// files conflict, each choice says it of itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unchanged: Option<String>,
}

impl RewindPlan {
    /// The conflict choice a preview shows picked when it opens: the safe one, keeping the
    /// conflicted files as they are (`skip`) when a commit with it goes ahead, else `refuse`
    /// (which restores nothing while files conflict); `None` when nothing conflicts. Every
    /// frontend starts from it; the user may pick another.
    pub fn preselected(&self) -> Option<OnConflict> {
        let keep = self
            .choices
            .iter()
            .find(|c| c.on_conflict == OnConflict::Skip && c.commits);
        keep.or_else(|| self.choices.iter().find(|c| c.on_conflict == OnConflict::Refuse))
            .or(self.choices.first())
            .map(|c| c.on_conflict)
    }

    /// What a commit with `on_conflict` does to each file of the plan, in its order: as that
    /// choice says when files conflict, else as the plan's files say.
    pub fn file_actions(&self, on_conflict: OnConflict) -> Vec<FileAction> {
        let choice = self.choices.iter().find(|c| c.on_conflict == on_conflict);
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| {
                choice
                    .and_then(|c| {
                        c.files
                            .get(i)
                            .filter(|cf| cf.path == f.path)
                            .or_else(|| c.files.iter().find(|cf| cf.path == f.path))
                    })
                    .map_or(f.action, |cf| cf.action)
            })
            .collect()
    }

    /// Whether a commit with `on_conflict` would change nothing at all: the plan restores files
    /// only (scope `code`, or one file's version), the choice commits, and it would write and
    /// delete none, every file
    /// being already as it was (or kept as it is). Every frontend says so as soon as it shows the
    /// plan ([`crate::words::unchanged_files`]), and its commit then commits nothing: it
    /// closes the preview.
    pub fn changes_nothing(&self, on_conflict: OnConflict) -> bool {
        let commits = self
            .choices
            .iter()
            .find(|c| c.on_conflict == on_conflict)
            .is_none_or(|c| c.commits);
        self.scope == RewindScope::Code
            && commits
            && self
                .file_actions(on_conflict)
                .iter()
                .all(|a| matches!(a, FileAction::Unchanged | FileAction::Skip))
    }
}

impl RewindPlan {
    /// Says, on the plan and on each of its choices, whether committing it would change nothing
    /// ([`RewindPlan::changes_nothing`]) and why (`unchanged`), as the controller sends every
    /// plan: never while an asked-for half is unavailable (then it cannot commit at all).
    pub fn say_unchanged(&mut self) {
        let unavailable = self
            .blockers
            .iter()
            .any(|b| matches!(b, PlanBlocker::Unavailable { .. }));
        let said = |p: &RewindPlan, on: OnConflict| {
            (!unavailable && p.changes_nothing(on)).then(|| {
                crate::words::unchanged_files(
                    p.file_actions(on).contains(&FileAction::Skip),
                    !p.gaps.is_empty(),
                )
                .to_string()
            })
        };
        self.unchanged = match self.choices.is_empty() {
            true => said(self, OnConflict::Refuse),
            false => None,
        };
        let said: Vec<Option<String>> = self.choices.iter().map(|c| said(self, c.on_conflict)).collect();
        for (c, s) in self.choices.iter_mut().zip(said) {
            c.unchanged = s;
        }
    }
}

/// One way to commit a plan whose files conflict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanChoice {
    /// The `on_conflict` a commit sends for it.
    pub on_conflict: OnConflict,
    /// Its name, as every frontend shows it.
    pub label: String,
    /// Whether a commit with it goes ahead (given the confirmation, when the plan needs one; it
    /// may change no file). `refuse` with conflicts does not.
    pub commits: bool,
    /// What it does to each file of the plan, in the plan's order.
    pub files: Vec<ChoiceFile>,
    /// Set when a commit with it would change nothing at all ([`RewindPlan::changes_nothing`]):
    /// why, in words ("every file in the workspace is already as it was or kept as it is").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unchanged: Option<String>,
}

/// What one choice does to one file. Sent with `says`, the action in a word for a person
/// ([`crate::words::file_action`], `said.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ChoiceFile {
    /// The path.
    pub path: String,
    /// What happens to it.
    pub action: FileAction,
}

/// Why a plan cannot commit as it stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PlanBlocker {
    /// An asked-for half is not offered; no choice commits this plan (`refused`).
    Unavailable {
        /// Why (e.g. "not on this head", "history after this turn was pruned").
        reason: String,
    },
    /// Files changed since Retrace wrote them: `refuse` writes nothing (`conflict`); `skip`
    /// restores the rest, `overwrite` restores them too (see each file's `on_overwrite`).
    Conflicts {
        /// How many files conflict (path_unsafe entries, never written and never blocking, excluded).
        count: usize,
    },
    /// The restore spans changes Retrace could not track (shell commands, legacy or expired
    /// records): commit needs `confirm` (`confirmation_required`).
    ConfirmationRequired,
}

/// The outcome of a rewind commit, an undo or a redo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewindResult {
    /// Whether it did what was asked.
    pub ok: bool,
    /// The conversation forked but the files then failed.
    pub partial: bool,
    /// Whether a new head was made.
    pub conversation_forked: bool,
    /// The head the rewind made (or the head now selected, for code-only rewinds, undo and redo).
    pub head_id: HeadId,
    /// The session (a new one when an old flat log was upgraded).
    pub session_id: SessionId,
    /// Files written.
    pub files_written: Vec<String>,
    /// Files deleted.
    pub files_deleted: Vec<String>,
    /// The transaction, when one was written.
    pub transaction_id: Option<String>,
    /// Whether `undo` would undo this now.
    pub undo_available: bool,
    /// Whether `redo` would apply an undone rewind again now (true right after an undo).
    #[serde(default)]
    pub redo_available: bool,
    /// Conflicted files that were skipped or overwritten.
    pub conflicts: Vec<Conflict>,
    /// The turn's prompt.
    pub prompt: String,
    /// What went wrong, when `ok` is false or `partial` is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(choices: &[(OnConflict, bool)]) -> RewindPlan {
        let choices = choices
            .iter()
            .map(|&(on_conflict, commits)| PlanChoice {
                on_conflict,
                label: String::new(),
                commits,
                files: Vec::new(),
                unchanged: None,
            })
            .collect();
        RewindPlan {
            plan_id: "p".into(),
            title: String::new(),
            turn: 0,
            scope: RewindScope::Code,
            prompt: String::new(),
            can_files: true,
            can_conversation: true,
            disabled_reason: None,
            requires_confirmation: false,
            coverage: Coverage::Complete,
            gaps: Vec::new(),
            files: Vec::new(),
            conflicts: Vec::new(),
            expires_at: String::new(),
            blockers: Vec::new(),
            choices,
            unchanged: None,
        }
    }

    #[test]
    fn a_code_plan_that_writes_nothing_changes_nothing() {
        use crate::restore::{PlanDiff, PlanFile};
        let file = |path: &str, action| PlanFile {
            path: path.into(),
            action,
            size: None,
            conflict: None,
            on_overwrite: None,
            diff: PlanDiff::default(),
        };
        let mut p = plan(&[]);
        p.files = vec![file("a", FileAction::Unchanged), file("b", FileAction::Unchanged)];
        assert!(p.changes_nothing(OnConflict::Refuse));
        p.say_unchanged();
        assert_eq!(
            p.unchanged.as_deref(),
            Some("every file in the workspace is already as it was")
        );
        // The conversation still goes back.
        p.scope = RewindScope::Both;
        assert!(!p.changes_nothing(OnConflict::Refuse));
        p.scope = RewindScope::Code;
        // A conflicted file kept under skip, written under overwrite.
        p.files.push(file("c", FileAction::Skip));
        let choice = |on_conflict, action| PlanChoice {
            on_conflict,
            label: String::new(),
            commits: true,
            files: vec![
                ChoiceFile {
                    path: "a".into(),
                    action: FileAction::Unchanged,
                },
                ChoiceFile {
                    path: "b".into(),
                    action: FileAction::Unchanged,
                },
                ChoiceFile {
                    path: "c".into(),
                    action,
                },
            ],
            unchanged: None,
        };
        p.choices = vec![
            choice(OnConflict::Skip, FileAction::Skip),
            choice(OnConflict::Overwrite, FileAction::Write),
        ];
        assert!(p.changes_nothing(OnConflict::Skip));
        assert!(!p.changes_nothing(OnConflict::Overwrite));
        // … as the plan sent says, each choice of itself
        p.say_unchanged();
        let said: Vec<Option<&str>> = p.choices.iter().map(|c| c.unchanged.as_deref()).collect();
        assert_eq!(
            said,
            [
                Some("every file in the workspace is already as it was or kept as it is"),
                None
            ]
        );
        assert_eq!(p.unchanged, None);
        // not while a half is unavailable: that plan cannot commit at all
        p.blockers.push(PlanBlocker::Unavailable {
            reason: "not on this head".into(),
        });
        p.say_unchanged();
        assert!(p.choices.iter().all(|c| c.unchanged.is_none()));
        p.blockers.clear();
        // A choice that commits nothing is refused, not "nothing would change".
        p.choices[0].commits = false;
        assert!(!p.changes_nothing(OnConflict::Skip));
        p.choices[0].commits = true;
        p.files[0].action = FileAction::Write;
        p.choices[0].files[0].action = FileAction::Write;
        assert!(!p.changes_nothing(OnConflict::Skip));
    }

    #[test]
    fn a_preview_opens_on_keeping_the_conflicted_files() {
        use OnConflict::{Overwrite, Refuse, Skip};
        assert_eq!(plan(&[]).preselected(), None);
        assert_eq!(
            plan(&[(Refuse, false), (Skip, true), (Overwrite, true)]).preselected(),
            Some(Skip)
        );
        // keeping them commits nothing here (or is not offered, as for a revert): restore nothing
        assert_eq!(
            plan(&[(Refuse, false), (Skip, false), (Overwrite, true)]).preselected(),
            Some(Refuse)
        );
        assert_eq!(
            plan(&[(Refuse, false), (Overwrite, true)]).preselected(),
            Some(Refuse)
        );
    }
}
