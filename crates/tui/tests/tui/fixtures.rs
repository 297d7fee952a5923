//! Values the tests build screens from: a status, checkpoint listings, transcripts, plans, results.

use std::time::{Duration, Instant};

use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use retrace_protocol::{
    CheckpointEntry, CheckpointListing, Conflict, ConflictReason, Coverage, FileAction, Gap, GapReason,
    HeadId, MessageId, PlanBlocker, PlanFile, PlanGap, RewindPlan, RewindResult, RewindScope, Role,
    SessionId, ToolCall, TranscriptEntry,
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
        actions: retrace_protocol::ActionKind::ALL
            .into_iter()
            .map(|action| retrace_protocol::CheckpointAction {
                action,
                label: action.label().to_string(),
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

pub fn msg(id: &str, role: Role, content: &str) -> TranscriptEntry {
    TranscriptEntry {
        id: MessageId::new(id),
        role,
        content: content.into(),
        tool_calls: None,
        tool_call_id: None,
        turn: None,
        usage: None,
    }
}

pub fn transcript() -> Vec<TranscriptEntry> {
    let mut u0 = msg("m0", Role::User, "write a tokenizer in src/lib.rs");
    u0.turn = Some(0);
    let mut a0 = msg("m1", Role::Assistant, "");
    a0.tool_calls = Some(vec![ToolCall {
        id: "c1".into(),
        name: "write_file".into(),
        arguments: r#"{"path":"src/lib.rs","content":"pub fn tokens() {}"}"#.into(),
    }]);
    let mut t0 = msg("m2", Role::Tool, "wrote src/lib.rs (18 bytes)");
    t0.tool_call_id = Some("c1".into());
    let a0b = msg("m3", Role::Assistant, "Done: `tokens` is in src/lib.rs.");
    let mut u1 = msg("m4", Role::User, "make the parser accept tabs\nand add a test");
    u1.turn = Some(1);
    let a1 = msg(
        "m5",
        Role::Assistant,
        "Tabs are accepted now. I ran the tests:\n\tall 3 pass.",
    );
    vec![
        msg("s", Role::System, "You are a coding agent."),
        u0,
        a0,
        t0,
        a0b,
        u1,
        a1,
    ]
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
            },
            PlanFile {
                path: "tests/parse.rs".into(),
                action: FileAction::Delete,
                size: None,
                conflict: None,
                on_overwrite: None,
            },
        ]
    };
    RewindPlan {
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
    });
    p.files.push(PlanFile {
        path: unsafe_path.path.clone(),
        action: FileAction::Skip,
        size: None,
        conflict: Some(unsafe_path.clone()),
        on_overwrite: Some(FileAction::Skip),
    });
    p.files.push(PlanFile {
        path: "docs/notes.md".into(),
        action: FileAction::Unchanged,
        size: None,
        conflict: None,
        on_overwrite: None,
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
    p
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
