//! Values the tests build screens from: a status, checkpoint listings, the session's items and
//! snapshots, plans, results.

use std::time::{Duration, Instant};

use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use retrace_protocol::{
    ActionKind, ChangeAction, CheckpointAction, CheckpointEntry, CheckpointItem, CheckpointListing,
    ChoiceFile, Conflict, ConflictReason, Coverage, Event, FileAction, FileChange, Gap, GapReason, HeadId,
    Item, ItemBody, NoteItem, NoteKind, OnConflict, PlanBlocker, PlanChoice, PlanDiff, PlanFile, PlanGap,
    RewindPlan, RewindResult, RewindScope, SessionId, SessionSnapshot, SessionStatus, SessionUsage,
    TokenUsage, ToolCallItem, ToolStatus,
};
use retrace_tui::view::{self, ViewState};
use retrace_tui::{App, AppOptions, Effect, StatusInfo};

pub fn status() -> StatusInfo {
    StatusInfo {
        model: Some("demo".into()),
        workspace: "/home/ada/project".into(),
        session: "0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41".into(),
        head: "main".into(),
        turn: None,
        usage: Default::default(),
        running: false,
        spinner: 0,
        plan_mode: false,
        compacting: false,
        ..StatusInfo::default()
    }
}

pub fn app() -> App {
    App::new(status(), AppOptions { no_color: true })
}

/// A clock for keys: `at(ms)` is `ms` milliseconds after a fixed start.
pub struct Clock(Instant);

impl Clock {
    pub fn new() -> Clock {
        Clock(Instant::now())
    }
    pub fn at(&self, ms: u64) -> Instant {
        self.0 + Duration::from_millis(ms)
    }
}

pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// Types `text` then returns what the keys asked for.
pub fn type_text(app: &mut App, text: &str, now: Instant) -> Vec<Effect> {
    let mut effects = Vec::new();
    for c in text.chars() {
        effects.extend(app.on_key(key(KeyCode::Char(c)), now));
    }
    effects
}

pub fn entry(turn: u64, prompt: &str, paths: &[&str]) -> CheckpointEntry {
    CheckpointEntry {
        turn,
        time: format!("2026-05-01T10:4{turn}:07Z"),
        prompt: prompt.into(),
        head: Some("main".into()),
        message_id: Some(format!("m{turn}")),
        msg_index: Some(turn * 4),
        paths: paths.iter().map(|p| p.to_string()).collect(),
        file_count: paths.len(),
        bytes: 120,
        coverage: Coverage::Complete,
        gaps: Vec::new(),
        can_restore_code: Some(true),
        can_restore_conversation: Some(true),
        disabled_reason: None,
        visible: Some(true),
        added: None,
        removed: None,
        actions: ActionKind::ALL
            .into_iter()
            .map(|action| CheckpointAction {
                action,
                label: action.label().to_string(),
                detail: action.detail().to_string(),
                available: true,
                reason: None,
                preview: action.scope().is_some(),
            })
            .collect(),
    }
}

pub fn shell_gap(turn: u64, command: &str) -> Gap {
    Gap {
        reason: GapReason::BashSideEffect,
        tool: Some("bash".into()),
        path: None,
        detail: Some(format!("{command} (turn {turn})")),
    }
}

pub fn listing(entries: Vec<CheckpointEntry>) -> CheckpointListing {
    let next_turn = entries.len() as u64;
    CheckpointListing {
        entries,
        sidecar: "/data/sessions/s.ckpt".into(),
        total_bytes: 2048,
        next_turn,
        problems: Vec::new(),
    }
}

/// `entry` as the listing gives it when these actions are unavailable, each with `reason`.
pub fn unavailable(mut entry: CheckpointEntry, kinds: &[ActionKind], reason: &str) -> CheckpointEntry {
    for a in &mut entry.actions {
        if kinds.contains(&a.action) {
            a.available = false;
            a.reason = Some(reason.into());
        }
    }
    entry
}

/// Two turns: the first writes `src/lib.rs`, the second edits it and runs the tests.
pub fn two_turns() -> CheckpointListing {
    let mut second = entry(
        1,
        "make the parser accept tabs\nand add a test",
        &["src/lib.rs", "tests/parse.rs"],
    );
    second.gaps.push(shell_gap(1, "cargo test"));
    second.coverage = Coverage::Partial;
    listing(vec![
        entry(0, "write a tokenizer in src/lib.rs", &["src/lib.rs"]),
        second,
    ])
}

/// Feeds events to an app numbered after the last one it shows, as the driver does.
pub trait Feed {
    fn feed(&mut self, event: Event) -> Vec<Effect>;
}

impl Feed for App {
    fn feed(&mut self, event: Event) -> Vec<Effect> {
        let seq = self.last_event_seq() + 1;
        self.on_event(seq, event)
    }
}

pub fn prompt(id: &str, turn: u64, text: &str) -> Item {
    Item {
        id: id.into(),
        turn: Some(turn),
        body: ItemBody::UserPrompt { text: text.into() },
    }
}

pub fn checkpoint(turn: u64, files: &[&str]) -> Item {
    Item {
        id: format!("checkpoint-{turn}"),
        turn: Some(turn),
        body: ItemBody::Checkpoint(CheckpointItem {
            files: files.iter().map(|f| f.to_string()).collect(),
            gaps: Vec::new(),
            coverage: if files.is_empty() {
                Coverage::None
            } else {
                Coverage::Complete
            },
            retained: true,
        }),
    }
}

pub fn answer(id: &str, turn: u64, text: &str) -> Item {
    Item {
        id: id.into(),
        turn: Some(turn),
        body: ItemBody::AssistantText {
            text: text.into(),
            reasoning: None,
        },
    }
}

pub fn note(id: &str, text: &str) -> Item {
    Item {
        id: id.into(),
        turn: None,
        body: ItemBody::Note(NoteItem {
            note: NoteKind::Restore,
            text: text.into(),
        }),
    }
}

/// A tool call's item: `title` is what the controller's `describe` would say.
pub fn tool(id: &str, turn: u64, tool: &str, title: &str, status: ToolStatus, output: &str) -> Item {
    let target = title.split_once(' ').map(|(_, t)| t.to_string());
    Item {
        id: id.into(),
        turn: Some(turn),
        body: ItemBody::ToolCall(Box::new(ToolCallItem {
            call_id: format!("call-{id}"),
            tool: tool.into(),
            title: title.into(),
            target,
            arguments: serde_json::json!({}),
            status,
            output: output.into(),
            output_truncated: false,
            changes: Vec::new(),
            gaps: Vec::new(),
            exit_code: None,
        })),
    }
}

/// A file change with its diff.
pub fn change(action: ChangeAction, path: &str, diff: &str) -> FileChange {
    let count = |c: char| diff.lines().filter(|l| l.starts_with(c)).count() as u64;
    FileChange {
        path: path.into(),
        action,
        from: None,
        diff: diff.into(),
        added: count('+'),
        removed: count('-'),
        binary: false,
        diff_truncated: false,
        diff_lost: false,
    }
}

/// `item` (a tool call) with these changes.
pub fn with_changes(mut item: Item, changes: Vec<FileChange>) -> Item {
    if let ItemBody::ToolCall(call) = &mut item.body {
        call.changes = changes;
    }
    item
}

/// Two finished turns: the first writes `src/lib.rs`, the second edits it and runs the tests
/// (a shell command, not tracked).
pub fn items() -> Vec<Item> {
    let mut second = checkpoint(1, &["src/lib.rs", "tests/parse.rs"]);
    if let ItemBody::Checkpoint(c) = &mut second.body {
        c.gaps.push(shell_gap(1, "cargo test"));
        c.coverage = Coverage::Partial;
    }
    vec![
        prompt("m0", 0, "write a tokenizer in src/lib.rs"),
        checkpoint(0, &["src/lib.rs"]),
        with_changes(
            tool(
                "m1.0",
                0,
                "write_file",
                "Write src/lib.rs",
                ToolStatus::Ok,
                "wrote src/lib.rs (18 bytes)",
            ),
            vec![change(
                ChangeAction::Create,
                "src/lib.rs",
                "@@ -0,0 +1 @@\n+pub fn tokens() {}\n",
            )],
        ),
        answer("m3", 0, "Done: `tokens` is in src/lib.rs."),
        prompt("m4", 1, "make the parser accept tabs\nand add a test"),
        second,
        answer("m5", 1, "Tabs are accepted now. I ran the tests:\n\tall 3 pass."),
    ]
}

/// A snapshot of `items` on head `head`, taken at event `seq`, nothing running.
pub fn snapshot_of(items: Vec<Item>, head: &str, seq: u64) -> SessionSnapshot {
    SessionSnapshot {
        status: SessionStatus {
            session_id: SessionId::new("0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41"),
            workspace: "/home/ada/project".into(),
            head_id: HeadId::new(head),
            running: None,
            model: Some("demo".into()),
            model_spec: Some("demo".into()),
            plan_mode: false,
            backend: Default::default(),
            last_event_seq: seq,
        },
        items,
        heads: Vec::new(),
        head_id: HeadId::new(head),
        pending_approvals: Vec::new(),
        context_tokens: None,
        usage: demo_tally(TokenUsage::default(), None),
        last_event_seq: seq,
    }
}

/// The controller's tally of a session on the demo model (it costs nothing; its window is
/// 65.5k tokens) that spent `spent`, its conversation taking `context` tokens.
pub fn demo_tally(spent: TokenUsage, context: Option<u64>) -> SessionUsage {
    SessionUsage::new(
        spent,
        Some(0.0),
        Some(retrace_protocol::price::FREE),
        context,
        Some(65_536),
    )
}

/// The two-turn snapshot ([`items`]) on `main`.
pub fn snapshot() -> SessionSnapshot {
    snapshot_of(items(), "main", 10)
}

/// An app showing the two-turn snapshot.
pub fn app_with_turns() -> App {
    let mut app = app();
    app.on_snapshot(snapshot());
    app
}

pub fn plan(turn: u64, scope: RewindScope) -> RewindPlan {
    let files = if scope == RewindScope::Conversation {
        Vec::new()
    } else {
        vec![
            PlanFile {
                path: "src/lib.rs".into(),
                action: FileAction::Write,
                size: Some(1536),
                conflict: None,
                on_overwrite: None,
                diff: PlanDiff {
                    text: "@@ -1,4 +1,3 @@\n pub fn tokenize(s: &str) -> Vec<&str> {\n-    s.split_whitespace().collect()\n+    s.split(' ').collect()\n }\n-// handles tabs\n".into(),
                    added: 1,
                    removed: 2,
                    ..PlanDiff::default()
                },
            },
            PlanFile {
                path: "tests/parse.rs".into(),
                action: FileAction::Delete,
                size: None,
                conflict: None,
                on_overwrite: None,
                diff: PlanDiff {
                    text: "@@ -1,4 +0,0 @@\n-#[test]\n-fn splits() {\n-    assert_eq!(tokenize(\"a b\"), [\"a\", \"b\"]);\n-}\n".into(),
                    removed: 4,
                    ..PlanDiff::default()
                },
            },
        ]
    };
    RewindPlan {
        title: format!("Rewind to turn {turn}"),
        plan_id: format!("plan-{turn}"),
        turn,
        scope,
        prompt: "write a tokenizer in src/lib.rs".into(),
        can_files: true,
        can_conversation: true,
        disabled_reason: None,
        requires_confirmation: false,
        coverage: Coverage::Complete,
        gaps: Vec::new(),
        files,
        conflicts: Vec::new(),
        expires_at: "2026-05-01T11:00:00Z".into(),
        blockers: Vec::new(),
        choices: Vec::new(),
        unchanged: None,
    }
}

/// A code plan with a manual edit, an unsafe path and a shell gap.
pub fn conflicted_plan() -> RewindPlan {
    let mut p = plan(0, RewindScope::Code);
    let conflict = |path: &str, reason| Conflict {
        path: path.into(),
        reason,
        checkpoint_sha256: Some("aa".into()),
        last_owned_sha256: Some("bb".into()),
        current_sha256: Some("cc".into()),
        checkpoint_mode: Some(0o644),
        current_mode: Some(0o644),
    };
    let edited = conflict("README.md", ConflictReason::ManualEdit);
    let unsafe_path = conflict("link/\u{202e}gpj.exe", ConflictReason::PathUnsafe);
    p.files.push(PlanFile {
        path: edited.path.clone(),
        action: FileAction::Skip,
        size: None,
        conflict: Some(edited.clone()),
        on_overwrite: Some(FileAction::Write),
        diff: PlanDiff {
            text: "@@ -1,2 +1 @@\n # Tokenizer\n-my own notes\n".into(),
            removed: 1,
            ..PlanDiff::default()
        },
    });
    p.files.push(PlanFile {
        path: unsafe_path.path.clone(),
        action: FileAction::Skip,
        size: None,
        conflict: Some(unsafe_path.clone()),
        on_overwrite: Some(FileAction::Skip),
        diff: PlanDiff::default(),
    });
    p.files.push(PlanFile {
        path: "docs/notes.md".into(),
        action: FileAction::Unchanged,
        size: None,
        conflict: None,
        on_overwrite: None,
        diff: PlanDiff::default(),
    });
    p.conflicts = vec![edited, unsafe_path];
    p.gaps.push(PlanGap {
        turn: 1,
        reason: GapReason::BashSideEffect,
        tool: Some("bash".into()),
        path: None,
        detail: Some("cargo test && rm -rf target/tmp".into()),
    });
    p.requires_confirmation = true;
    p.coverage = Coverage::Partial;
    p.blockers = vec![
        PlanBlocker::Conflicts { count: 1 },
        PlanBlocker::ConfirmationRequired,
    ];
    p.choices = choices_of(&p);
    p
}

/// The choices the controller offers for `plan`'s conflicts: refuse (every file skipped, nothing
/// committed while a conflict blocks), skip (the plan's actions), overwrite (each conflicted
/// file's `on_overwrite`).
pub fn choices_of(plan: &RewindPlan) -> Vec<PlanChoice> {
    let files = |pick: &dyn Fn(&PlanFile) -> FileAction| {
        plan.files
            .iter()
            .map(|f| ChoiceFile {
                path: f.path.clone(),
                action: pick(f),
            })
            .collect()
    };
    let blocked = plan
        .blockers
        .iter()
        .any(|b| matches!(b, PlanBlocker::Conflicts { .. }));
    vec![
        PlanChoice {
            on_conflict: OnConflict::Refuse,
            label: "Restore nothing while files conflict".into(),
            commits: !blocked,
            files: files(&|f| if blocked { FileAction::Skip } else { f.action }),
            unchanged: None,
        },
        PlanChoice {
            on_conflict: OnConflict::Skip,
            label: "Skip them (keep your changes)".into(),
            commits: true,
            files: files(&|f| f.action),
            unchanged: None,
        },
        PlanChoice {
            on_conflict: OnConflict::Overwrite,
            label: "Overwrite them".into(),
            commits: true,
            files: files(&|f| f.on_overwrite.unwrap_or(f.action)),
            unchanged: None,
        },
    ]
}

pub fn result(scope: RewindScope, written: &[&str], deleted: &[&str]) -> RewindResult {
    RewindResult {
        ok: true,
        partial: false,
        conversation_forked: scope != RewindScope::Code,
        head_id: HeadId::new(if scope == RewindScope::Code { "main" } else { "h2" }),
        session_id: SessionId::new("0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41"),
        files_written: written.iter().map(|p| p.to_string()).collect(),
        files_deleted: deleted.iter().map(|p| p.to_string()).collect(),
        transaction_id: Some("tx1".into()),
        undo_available: true,
        redo_available: false,
        conflicts: Vec::new(),
        prompt: "write a tokenizer in src/lib.rs".into(),
        error: None,
    }
}

/// The screen as text, `w`×`h` (drawn with a view state that keeps nothing).
pub fn render(app: &App, w: u16, h: u16) -> TestBackend {
    draw(app, &mut ViewState::new(), w, h)
}

/// A frame as the runtime draws it: with the view state kept from earlier frames, and how far
/// what it drew can scroll given to the app (its keys stop there).
pub fn frame(app: &mut App, state: &mut ViewState, w: u16, h: u16) -> TestBackend {
    let backend = draw(app, state, w, h);
    app.set_scroll_limits(state.scroll_limits());
    backend
}

fn draw(app: &App, state: &mut ViewState, w: u16, h: u16) -> TestBackend {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| view::draw(f, app, state)).unwrap();
    terminal.backend().clone()
}

/// The screen's rows as plain text, `w`×`h`.
pub fn rows(app: &App, w: u16, h: u16) -> Vec<String> {
    let backend = render(app, w, h);
    let buf = backend.buffer();
    (0..buf.area.height)
        .map(|y| (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect())
        .collect()
}

/// Opens the action menu of turn `turn` (counted from the oldest) of `listing` with the keys.
pub fn open_menu(app: &mut App, listing: &CheckpointListing, turn: usize) {
    let clock = Clock::new();
    type_text(app, "/rewind", clock.at(0));
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(1)),
        vec![Effect::LoadCheckpoints]
    );
    app.on_checkpoints(listing);
    let visible = listing
        .entries
        .iter()
        .filter(|e| e.visible != Some(false))
        .count();
    for _ in turn..visible {
        app.on_key(key(KeyCode::Up), clock.at(2));
    }
    assert!(app.on_key(key(KeyCode::Enter), clock.at(3)).is_empty());
    assert_eq!(app.screen(), retrace_tui::Screen::Menu);
}
