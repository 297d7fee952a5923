//! The rewind screens' state: the picker of turns, the action menu (SPEC §5.1, fixed keys) and the
//! preview of a plan. The plan decides what is possible; these only show it and collect a choice.

use retrace_protocol::{CheckpointEntry, CheckpointListing, GapReason, PlanBlocker, RewindPlan, RewindScope};

/// The rewind picker: the turns visible on this head, oldest first, then "(current)".
#[derive(Debug, Clone, PartialEq)]
pub struct Picker {
    /// The turns shown.
    pub rows: Vec<CheckpointEntry>,
    /// The selected row; `rows.len()` is "(current)".
    pub selected: usize,
    /// What choosing a turn does.
    pub purpose: Purpose,
}

/// What the picker was opened for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Purpose {
    /// Esc Esc or `/rewind`: a turn opens the action menu.
    Rewind,
    /// `/fork [name]`: a turn forks a new head that ends just before it, with this name.
    Fork(Option<String>),
}

impl Picker {
    /// A picker over the visible turns of `listing`, with "(current)" selected.
    pub fn new(listing: &CheckpointListing, purpose: Purpose) -> Picker {
        let rows: Vec<CheckpointEntry> = listing
            .entries
            .iter()
            .filter(|e| e.visible != Some(false))
            .cloned()
            .collect();
        let selected = rows.len();
        Picker {
            rows,
            selected,
            purpose,
        }
    }

    /// Moves the selection up (towards older turns).
    pub fn up(&mut self) {
        self.selected = self.selected.saturating_sub(1);
    }

    /// Moves the selection down (towards "(current)").
    pub fn down(&mut self) {
        self.selected = (self.selected + 1).min(self.rows.len());
    }

    /// The selected turn; `None` on "(current)".
    pub fn chosen(&self) -> Option<&CheckpointEntry> {
        self.rows.get(self.selected)
    }
}

/// Whether a turn ran a shell command whose effects Retrace could not track.
pub fn has_shell_gap(entry: &CheckpointEntry) -> bool {
    entry.gaps.iter().any(|g| g.reason == GapReason::BashSideEffect)
}

/// An action of the menu (SPEC §5.1), in key order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `1` restore code and conversation.
    Both,
    /// `2` restore conversation (the default: it never touches a file).
    Conversation,
    /// `3` restore code.
    Code,
    /// `4` fork from here.
    Fork,
    /// `5` summarize from here.
    SummarizeFrom,
    /// `6` summarize up to here.
    SummarizeUpTo,
}

impl Action {
    /// Every action, in key order.
    pub const ALL: [Action; 6] = [
        Action::Both,
        Action::Conversation,
        Action::Code,
        Action::Fork,
        Action::SummarizeFrom,
        Action::SummarizeUpTo,
    ];

    /// Its key.
    pub fn key(self) -> char {
        match self {
            Action::Both => '1',
            Action::Conversation => '2',
            Action::Code => '3',
            Action::Fork => '4',
            Action::SummarizeFrom => '5',
            Action::SummarizeUpTo => '6',
        }
    }

    /// The action of a key.
    pub fn from_key(c: char) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.key() == c)
    }

    /// Its label.
    pub fn label(self) -> &'static str {
        match self {
            Action::Both => "Restore code and conversation",
            Action::Conversation => "Restore conversation",
            Action::Code => "Restore code",
            Action::Fork => "Fork from here",
            Action::SummarizeFrom => "Summarize from here",
            Action::SummarizeUpTo => "Summarize up to here",
        }
    }

    /// The rewind scope, for the three restore actions.
    pub fn scope(self) -> Option<RewindScope> {
        match self {
            Action::Both => Some(RewindScope::Both),
            Action::Conversation => Some(RewindScope::Conversation),
            Action::Code => Some(RewindScope::Code),
            _ => None,
        }
    }

    /// Whether the listing offers it for `entry`; `Err(reason)` when not.
    pub fn availability(self, entry: &CheckpointEntry) -> Result<(), String> {
        let needs_code = matches!(self, Action::Both | Action::Code);
        let needs_conversation = !matches!(self, Action::Code);
        let reason = || {
            entry
                .disabled_reason
                .clone()
                .unwrap_or_else(|| "not available".to_string())
        };
        if needs_code && entry.can_restore_code == Some(false) {
            return Err(reason());
        }
        if needs_conversation && entry.can_restore_conversation == Some(false) {
            return Err(reason());
        }
        Ok(())
    }
}

/// The action menu for one chosen turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Menu {
    /// The turn chosen in the picker.
    pub entry: CheckpointEntry,
    /// The highlighted action (index into [`Action::ALL`]); `Conversation` on opening.
    pub highlighted: usize,
    /// The picker it came from, to go back to.
    pub picker: Picker,
}

impl Menu {
    /// The menu for the picker's chosen turn, "restore conversation" highlighted.
    pub fn new(entry: CheckpointEntry, picker: Picker) -> Menu {
        Menu {
            entry,
            highlighted: 1,
            picker,
        }
    }

    /// The highlighted action.
    pub fn current(&self) -> Action {
        Action::ALL[self.highlighted.min(Action::ALL.len() - 1)]
    }
}

/// The preview of a code (or code and conversation) plan, before anything is written.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    /// The plan.
    pub plan: RewindPlan,
    /// The first line shown of the list.
    pub scroll: usize,
    /// A hint after a key that cannot commit (conflicts without a choice, a blocked plan).
    pub hint: Option<String>,
    /// The menu it came from, to go back to.
    pub menu: Option<Box<Menu>>,
}

impl Preview {
    /// Why no choice commits this plan, when one of its halves is unavailable.
    pub fn unavailable(&self) -> Option<&str> {
        self.plan.blockers.iter().find_map(|b| match b {
            PlanBlocker::Unavailable { reason } => Some(reason.as_str()),
            _ => None,
        })
    }

    /// How many files conflict (0: none block the commit).
    pub fn conflicts(&self) -> usize {
        self.plan
            .blockers
            .iter()
            .find_map(|b| match b {
                PlanBlocker::Conflicts { count } => Some(*count),
                _ => None,
            })
            .unwrap_or(0)
    }

    /// Whether committing needs the user's confirmation (untracked changes): the preview is it.
    pub fn needs_confirmation(&self) -> bool {
        self.plan.requires_confirmation
            || self
                .plan
                .blockers
                .iter()
                .any(|b| matches!(b, PlanBlocker::ConfirmationRequired))
    }
}

/// What a restore did to the files, skipped ones included: `1 written, 2 deleted, 1 skipped
/// (kept as it is)`, or plainly `no file changed` when none did.
pub(crate) fn files_said(r: &retrace_protocol::RewindResult) -> String {
    let done = |p: &String| r.files_written.contains(p) || r.files_deleted.contains(p);
    let skipped = r.conflicts.iter().filter(|c| !done(&c.path)).count();
    let mut parts = Vec::new();
    if !r.files_written.is_empty() {
        parts.push(format!("{} written", r.files_written.len()));
    }
    if !r.files_deleted.is_empty() {
        parts.push(format!("{} deleted", r.files_deleted.len()));
    }
    let kept = match skipped {
        0 => String::new(),
        1 => "1 skipped (kept as it is)".to_string(),
        n => format!("{n} skipped (kept as they are)"),
    };
    if parts.is_empty() {
        return match skipped {
            0 => "no file changed (every file already as it was)".to_string(),
            _ => format!("no file changed — {kept}"),
        };
    }
    if skipped > 0 {
        parts.push(kept);
    }
    parts.join(", ")
}
