//! Random keys, events, answers and terminal sizes: nothing panics, and every frame drawn with the
//! kept transcript layout equals one laid out from nothing.

use std::time::{Duration, Instant};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEventKind};
use retrace_protocol::{
    ChangeAction, Event, HeadEntry, HeadId, HeadKind, Item, ItemBody, RewindScope, SessionEntry, SessionId,
    ToolStatus,
};
use retrace_tui::view::ViewState;
use retrace_tui::{App, Mode};

use crate::fixtures::*;
use crate::history::{history, revert_plan};
use crate::turn_diff::results;

/// xorshift64*: enough randomness for a fuzz test, seeded so a failure replays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn random_key(rng: &mut Rng) -> KeyEvent {
    const CODES: [KeyCode; 15] = [
        KeyCode::Esc,
        KeyCode::Enter,
        KeyCode::Up,
        KeyCode::Down,
        KeyCode::Left,
        KeyCode::Right,
        KeyCode::Backspace,
        KeyCode::Delete,
        KeyCode::Home,
        KeyCode::End,
        KeyCode::PageUp,
        KeyCode::PageDown,
        KeyCode::Tab,
        KeyCode::BackTab,
        KeyCode::Char(' '),
    ];
    const CHARS: &[char] = &[
        '1', '2', '3', '4', '5', '6', 'y', 'a', 'n', 'p', 'd', 'f', 'h', 's', 'o', 'j', 'k', 'q', '/', 'é',
        'b', 'e', 'u', 'w', 'm', '漢', '\u{202e}', '\u{1b}',
    ];
    let code = if rng.below(2) == 0 {
        CODES[rng.below(CODES.len() as u64) as usize]
    } else {
        KeyCode::Char(CHARS[rng.below(CHARS.len() as u64) as usize])
    };
    let modifiers = match rng.below(8) {
        0 => KeyModifiers::CONTROL,
        1 => KeyModifiers::ALT,
        2 => KeyModifiers::SHIFT,
        _ => KeyModifiers::NONE,
    };
    KeyEvent::new(code, modifiers)
}

/// An item of the current turn: a prompt, a checkpoint, an answer, a tool call (with changes and
/// diffs full of what must be escaped), a note; ids from a small set so that events replace and
/// extend each other.
fn random_item(rng: &mut Rng, turn: u64) -> Item {
    let id = format!("i{}", rng.below(6));
    match rng.below(5) {
        0 => prompt(&id, turn, "p\u{1b}[2J\nsecond line"),
        1 => {
            let mut c = checkpoint(turn, &["a.rs", "b\u{202e}.rs"][..rng.below(3) as usize]);
            if let ItemBody::Checkpoint(c) = &mut c.body {
                if rng.below(2) == 0 {
                    c.gaps.push(shell_gap(turn, "rm -rf x\u{1b}[2J"));
                    c.coverage = retrace_protocol::Coverage::Partial;
                }
                c.retained = rng.below(5) != 0;
            }
            c
        }
        2 => answer(
            &id,
            turn,
            &"word 漢字 \u{202e}rtl\n".repeat(rng.below(5) as usize),
        ),
        3 => {
            let status = [
                ToolStatus::Running,
                ToolStatus::Ok,
                ToolStatus::Failed,
                ToolStatus::Denied,
                ToolStatus::Cancelled,
            ][rng.below(5) as usize];
            let diff =
                "@@ -1,2 +1,2 @@\n a\tb\r\n-漢\n+a\u{202e}b\n\\ No newline\n".repeat(rng.below(8) as usize);
            let mut moved = change(ChangeAction::Move, "x\u{1b}[2J.rs", "");
            moved.from = Some("a/very/long/path/that/keeps/going/and/going.rs".into());
            let mut binary = change(ChangeAction::Modify, "img.png", "");
            binary.binary = true;
            let changes = [
                change(ChangeAction::Create, "new.rs", &diff),
                moved,
                binary,
                change(ChangeAction::Delete, "old.rs", &diff),
            ];
            let n = rng.below(5) as usize;
            with_changes(
                tool(
                    &id,
                    turn,
                    "edit_file",
                    "Edit a/very/long/path/that/keeps/going/and/going.rs",
                    status,
                    &"out\u{1b}[31m\r\n".repeat(rng.below(30) as usize),
                ),
                changes[..n].to_vec(),
            )
        }
        _ => note(&id, "The user restored\nthese files: a\u{1b}[2J"),
    }
}

fn random_event(rng: &mut Rng, turn: &mut u64) -> Event {
    match rng.below(17) {
        0 => {
            *turn += 1;
            Event::TurnStarted {
                session_id: SessionId::new("s"),
                head_id: HeadId::main(),
                turn: *turn,
                prompt: "p\u{1b}[2J\nsecond line".into(),
            }
        }
        1 => Event::AssistantDelta {
            item_id: Some(format!("i{}", rng.below(6))),
            text: "word 漢字 \u{202e}rtl\n".repeat(rng.below(5) as usize),
        },
        2 => Event::ReasoningDelta {
            item_id: Some(format!("i{}", rng.below(6))),
            text: "think\n".into(),
        },
        3 => Event::ItemStarted {
            item: random_item(rng, *turn),
        },
        4 => Event::ItemCompleted {
            item: random_item(rng, *turn),
        },
        5 => Event::TurnFinished {
            turn: *turn,
            ok: rng.below(2) == 0,
            error: Some("cancelled".into()),
            usage: None,
        },
        6 => Event::ApprovalRequested {
            note: None,
            prefixes: Vec::new(),
            call_id: format!("c{}", rng.below(3)),
            tool: "bash".into(),
            command: "x".repeat(rng.below(400) as usize),
        },
        7 => Event::Notice {
            message: "notice\r\n".into(),
            retry: None,
        },
        8 => Event::Compacted {
            head_id: HeadId::new(["h3", "h4"][rng.below(2) as usize]),
            from_head: HeadId::main(),
            turn: *turn,
            automatic: rng.below(2) == 0,
            before_tokens: rng.below(100_000),
            after_tokens: rng.below(10_000),
        },
        9 => Event::PlanMode {
            on: rng.below(2) == 0,
        },
        10 => Event::SummaryStarted {
            turn: *turn,
            direction: retrace_protocol::SummarizeDirection::UpTo,
        },
        11 => Event::SummaryFinished {
            turn: *turn,
            ok: rng.below(2) == 0,
            head_id: Some(HeadId::new("h4")),
            error: Some("failed \u{1b}[2J".into()),
        },
        12 => Event::ItemUpdated {
            item: random_item(rng, *turn),
        },
        13 => Event::ItemRemoved {
            item_id: format!("i{}", rng.below(6)),
        },
        14 => Event::Error {
            message: "boom\u{1b}[2J".into(),
        },
        15 => Event::AssistantDelta {
            item_id: None,
            text: "an older stream's delta".into(),
        },
        _ => Event::HeadChanged {
            head_id: HeadId::new("h2"),
        },
    }
}

fn head_entry(id: &str, parent: Option<&str>) -> HeadEntry {
    HeadEntry {
        id: HeadId::new(id),
        kind: HeadKind::Fork,
        name: Some("n\u{1b}[2J\nx".into()),
        parent_head: parent.map(HeadId::new),
        fork_from: None,
        selected: parent.is_none(),
        retired: false,
        message_count: 1,
        turns: 1,
        last_activity: None,
        title: String::new(),
    }
}

fn session_entry(id: &str) -> SessionEntry {
    SessionEntry {
        id: SessionId::new(id),
        format: 2,
        workspace: Some("/w".into()),
        created_at: Some("bad time \u{1b}".into()),
        log_path: String::new(),
        checkpoint_dir: String::new(),
        heads: 1,
        turns: 1,
        first_prompt: None,
        last_used_at: None,
        forked_from: None,
        forks: Vec::new(),
    }
}

/// Draws `app` as the runtime does, with the view state kept from earlier frames, and with one
/// that keeps nothing (laid out from nothing): the two frames are the same.
fn same_as_laid_out_afresh(app: &mut App, state: &mut ViewState, w: u16, h: u16) {
    let drawn = frame(app, state, w, h);
    let afresh = render(app, w, h);
    assert_eq!(drawn.buffer(), afresh.buffer(), "at {w}×{h}");
}

#[test]
fn random_keys_events_and_sizes_never_panic() {
    // The screens reached under any approval box.
    let mut reached: Vec<&str> = Vec::new();
    for seed in 1..=24u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut app = app_with_turns();
        let mut state = ViewState::new();
        let start = Instant::now();
        let mut ms = 0u64;
        let mut turn = 0u64;
        for _ in 0..400 {
            ms += rng.below(700);
            let now = start + Duration::from_millis(ms);
            match rng.below(10) {
                0..=5 => {
                    app.on_key(random_key(&mut rng), now);
                }
                6 => {
                    app.feed(random_event(&mut rng, &mut turn));
                }
                7 => match rng.below(13) {
                    10 => {
                        // A flow typed and answered at once (unless a box or a request in
                        // flight is in the way): `/diff 1`, `/history`, or Enter on a version
                        // and its revert's preview.
                        let command = |app: &mut App, typed: &str| {
                            app.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE), now);
                            for c in typed.chars() {
                                app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE), now);
                            }
                            app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE), now);
                        };
                        match rng.below(3) {
                            0 => {
                                command(&mut app, "/diff 1");
                                app.on_turn_results(results());
                            }
                            1 => {
                                command(&mut app, "/history src/lib.rs");
                                app.on_file_history(history());
                            }
                            _ => {
                                command(&mut app, "/history src/lib.rs");
                                app.on_file_history(history());
                                app.on_key(KeyEvent::new(KeyCode::Up, KeyModifiers::NONE), now);
                                app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE), now);
                                app.on_plan(revert_plan(2));
                            }
                        }
                    }
                    11 => {
                        // A turn's results or a file's history, answered whether asked for or not.
                        let mut r = results();
                        r.files.truncate(rng.below(6) as usize);
                        match rng.below(2) {
                            0 => app.on_turn_results(r),
                            _ => {
                                let mut h = history();
                                h.versions.truncate(rng.below(9) as usize);
                                app.on_file_history(h);
                            }
                        }
                    }
                    12 => {
                        // A revert's plan (the answer to Enter on a version).
                        app.on_plan(revert_plan(2));
                    }
                    7 => {
                        // A snapshot (the answer to a head change or a lag), mid-turn or not,
                        // taken at the last event or before it.
                        let seq = app.last_event_seq().saturating_sub(rng.below(3));
                        let mut items = items();
                        for _ in 0..rng.below(4) {
                            let item = random_item(&mut rng, turn);
                            if items.iter().all(|i| i.id != item.id) {
                                items.push(item);
                            }
                        }
                        app.on_snapshot(snapshot_of(items, "main", seq));
                    }
                    8 => {
                        app.on_compact_failed(&retrace_protocol::Error::new(
                            retrace_protocol::ErrorCode::Refused,
                            "nothing to summarize \u{1b}[2J",
                        ));
                    }
                    0 => app.on_checkpoints(&two_turns()),
                    4 => app.on_heads(vec![head_entry("main", None), head_entry("h2", Some("main"))]),
                    5 => app.on_sessions(vec![session_entry("s"), session_entry("t\u{1b}[2J")]),
                    6 => match rng.below(3) {
                        0 => {
                            app.on_mouse(MouseEventKind::ScrollUp);
                        }
                        1 => {
                            app.on_mouse(MouseEventKind::ScrollDown);
                        }
                        _ => match rng.below(2) {
                            0 => app.on_paste("pasted\r\nline\u{1b}[2J"),
                            // A block of many lines: folded.
                            _ => app
                                .on_paste(&"many\u{202e}\u{fdd0} lines\n".repeat(3 + rng.below(60) as usize)),
                        },
                    },
                    1 => {
                        let mut p = match rng.below(3) {
                            0 => conflicted_plan(),
                            1 => plan(0, RewindScope::Conversation),
                            _ => plan(0, RewindScope::Code),
                        };
                        // Diffs cut or not computed, which `f` asks to load whole.
                        for f in &mut p.files {
                            match rng.below(4) {
                                0 => f.diff.truncated = true,
                                1 => f.diff.deferred = true,
                                2 => f.diff.binary = true,
                                _ => {}
                            }
                        }
                        app.on_plan(p);
                    }
                    9 => {
                        // The answer to `f`, for a file the plan has or not.
                        let path = ["src/lib.rs", "tests/parse.rs", "x\u{1b}[2J"][rng.below(3) as usize];
                        match rng.below(2) {
                            0 => app.on_plan_diff(
                                "plan-0",
                                retrace_protocol::PlanFileDiff {
                                    path: path.into(),
                                    diff: retrace_protocol::PlanDiff {
                                        text: "@@ -1 +1 @@\n-\u{1b}[2J\r\n+漢\u{202e}\n"
                                            .repeat(rng.below(40) as usize),
                                        added: 1,
                                        removed: 1,
                                        ..Default::default()
                                    },
                                },
                            ),
                            _ => app.on_plan_diff_failed(
                                "plan-0",
                                path,
                                &retrace_protocol::Error::new(
                                    retrace_protocol::ErrorCode::StalePlan,
                                    "stale\u{1b}[2J",
                                ),
                            ),
                        }
                    }
                    2 => {
                        app.on_result(&result(RewindScope::Both, &["a"], &[]));
                    }
                    _ => {
                        app.on_tick();
                    }
                },
                _ => {
                    let w = 1 + rng.below(200) as u16;
                    let h = 1 + rng.below(60) as u16;
                    same_as_laid_out_afresh(&mut app, &mut state, w, h);
                }
            }
            // The kept layout (warm at this size) shows what laying out from nothing shows.
            same_as_laid_out_afresh(&mut app, &mut state, 80, 24);
            let mode = match app.mode() {
                Mode::Preview(_) => "preview",
                Mode::Diff(_) => "diff",
                Mode::History(_) => "history",
                _ => "other",
            };
            if !reached.contains(&mode) {
                reached.push(mode);
            }
        }
        for (w, h) in [(1, 1), (40, 10), (39, 10), (200, 60)] {
            render(&app, w, h);
        }
    }
    for mode in ["preview", "diff", "history"] {
        assert!(reached.contains(&mode), "never reached {mode}: {reached:?}");
    }
}
