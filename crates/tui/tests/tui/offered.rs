//! What the controller offers, shown as it is: the menu is the entry's `actions` (labels, order,
//! availability, reasons), every restore goes through the preview, and the preview's conflict
//! choices are the plan's (labels, and what each does to each file).

use ratatui::crossterm::event::KeyCode;
use retrace_protocol::{
    ActionKind, CommitRewind, FileAction, ForkRequest, OnConflict, PlanBlocker, PrepareRewind, RewindScope,
};
use retrace_tui::{Effect, Screen};

use crate::fixtures::*;

/// The rows of the box on top, without its borders, trimmed.
fn boxed_rows(app: &retrace_tui::App) -> Vec<String> {
    rows(app, 100, 30)
        .iter()
        .filter_map(|r| {
            let inner = r.split('│').nth(1)?;
            Some(inner.trim().to_string())
        })
        .collect()
}

#[test]
fn the_menu_shows_the_entrys_labels_and_reasons_in_its_order() {
    let clock = Clock::new();
    let mut first = entry(0, "write a tokenizer in src/lib.rs", &["src/lib.rs"]);
    // The entry's own order and names; two of them unavailable, each with its own reason.
    let named = |kind, label: &str| {
        let mut a = first.actions.iter().find(|a| a.action == kind).unwrap().clone();
        a.label = label.into();
        a
    };
    let mut actions = vec![
        named(ActionKind::Fork, "Branch off here"),
        named(ActionKind::RestoreCode, "Put the files back"),
        named(ActionKind::RestoreConversation, "Go back in the chat"),
        named(ActionKind::SummarizeUpTo, "Fold what came before"),
    ];
    actions[1].available = false;
    actions[1].reason = Some("history after this turn was pruned".into());
    actions[3].available = false;
    actions[3].reason = Some("nothing to summarize".into());
    first.actions = actions;
    // What older listings said is not read: the actions decide.
    first.can_restore_conversation = Some(false);
    first.can_restore_code = Some(true);
    first.disabled_reason = Some("an older field".into());
    let l = listing(vec![first]);

    let mut app = app_with_turns();
    open_menu(&mut app, &l, 0);
    let shown = boxed_rows(&app);
    let menu: Vec<&String> = shown
        .iter()
        .filter(|r| {
            let r = r.trim_start_matches("› ");
            r.starts_with(|c: char| c.is_ascii_digit()) && r[1..].starts_with("  ")
        })
        .collect();
    assert_eq!(
        menu,
        [
            "1  Branch off here",
            "2  Put the files back — unavailable: history after this turn was pruned",
            "› 3  Go back in the chat",
            "4  Fold what came before — unavailable: nothing to summarize",
        ],
        "{shown:#?}"
    );
    assert!(shown.iter().any(|r| r.starts_with("1-4 choose")), "{shown:#?}");
    let all = shown.join("\n");
    assert!(
        !all.contains("Restore") && !all.contains("an older field"),
        "{all}"
    );

    // An unavailable action says the entry's reason and is refused; a key past the last does nothing.
    assert!(app.on_key(key(KeyCode::Char('2')), clock.at(10)).is_empty());
    assert_eq!(
        app.message(),
        Some("Put the files back: unavailable (history after this turn was pruned)")
    );
    assert!(app.on_key(key(KeyCode::Char('4')), clock.at(11)).is_empty());
    assert!(app.message().unwrap().contains("nothing to summarize"));
    assert!(app.on_key(key(KeyCode::Char('5')), clock.at(12)).is_empty());
    assert_eq!(app.screen(), Screen::Menu);
    // Keys go by position: `3` is the conversation here, `1` the fork.
    assert_eq!(
        app.on_key(key(KeyCode::Char('3')), clock.at(13)),
        vec![Effect::PrepareRewind(PrepareRewind {
            turn: 0,
            scope: RewindScope::Conversation
        })]
    );
    app.on_error(&retrace_protocol::Error::new(
        retrace_protocol::ErrorCode::Refused,
        "gone",
    ));
    assert_eq!(app.screen(), Screen::Menu, "an error goes back to the menu");
    assert_eq!(
        app.on_key(key(KeyCode::Char('1')), clock.at(14)),
        vec![Effect::Fork(ForkRequest {
            turn: 0,
            name: None,
            select: true
        })]
    );
}

#[test]
fn every_previewed_action_is_shown_before_it_commits() {
    let clock = Clock::new();
    let l = two_turns();
    let previewed: Vec<(usize, RewindScope)> = l.entries[0]
        .actions
        .iter()
        .enumerate()
        .filter(|(_, a)| a.preview)
        .map(|(i, a)| (i, a.action.scope().unwrap()))
        .collect();
    assert_eq!(previewed.len(), 3);
    for (i, scope) in previewed {
        let mut app = app_with_turns();
        open_menu(&mut app, &l, 0);
        let k = char::from_digit(i as u32 + 1, 10).unwrap();
        assert_eq!(
            app.on_key(key(KeyCode::Char(k)), clock.at(0)),
            vec![Effect::PrepareRewind(PrepareRewind { turn: 0, scope })]
        );
        assert!(app.on_plan(plan(0, scope)).is_empty(), "{scope:?}");
        assert_eq!(app.screen(), Screen::Preview, "{scope:?}");
        let shown = boxed_rows(&app).join("\n");
        // The conversation half says what it goes back to; the code half lists the files.
        assert_eq!(
            shown.contains("› write a tokenizer in src/lib.rs"),
            scope != RewindScope::Code,
            "{shown}"
        );
        assert_eq!(
            shown.contains("src/lib.rs  1.5 KiB"),
            scope != RewindScope::Conversation,
            "{shown}"
        );
        assert_eq!(
            shown.contains("files: untouched"),
            scope == RewindScope::Conversation,
            "{shown}"
        );
        assert_eq!(
            app.on_key(key(KeyCode::Enter), clock.at(1)),
            vec![Effect::Commit(CommitRewind {
                plan_id: "plan-0".into(),
                confirm: false,
                on_conflict: OnConflict::Refuse,
                in_place: true,
            })]
        );
    }
}

#[test]
fn a_conversation_plan_that_cannot_commit_says_why_in_its_preview() {
    let clock = Clock::new();
    let mut app = app_with_turns();
    open_menu(&mut app, &two_turns(), 0);
    app.on_key(key(KeyCode::Char('2')), clock.at(0));
    let mut p = plan(0, RewindScope::Conversation);
    p.can_conversation = false;
    p.blockers = vec![PlanBlocker::Unavailable {
        reason: "not on this head".into(),
    }];
    app.on_plan(p);
    assert_eq!(app.screen(), Screen::Preview);
    assert!(app.on_key(key(KeyCode::Enter), clock.at(1)).is_empty());
    let shown = boxed_rows(&app);
    assert_eq!(shown[0], "cannot commit: not on this head", "{shown:#?}");
    assert_eq!(
        shown
            .iter()
            .filter(|r| *r == "cannot commit: not on this head")
            .count(),
        1,
        "said once, on top, where Enter's hint would be: {shown:#?}"
    );
}

/// The action column of `path` in the preview (after the file cursor's `›`, on one row).
fn action_of(app: &retrace_tui::App, path: &str) -> String {
    let shown: Vec<String> = boxed_rows(app)
        .into_iter()
        .map(|r| r.trim_start_matches('›').trim_start().to_string())
        .collect();
    let row = shown
        .iter()
        .find(|r| r.split_whitespace().nth(1) == Some(path))
        .unwrap_or_else(|| panic!("{path} in {shown:#?}"));
    row.split_whitespace().next().unwrap().to_string()
}

/// The picked choice's row.
fn picked(app: &retrace_tui::App) -> String {
    let shown = boxed_rows(app);
    shown
        .into_iter()
        .find(|r| r.starts_with("(•)"))
        .expect("a picked choice")
}

#[test]
fn a_picked_choice_changes_the_action_column() {
    let clock = Clock::new();
    let mut app = app_with_turns();
    open_menu(&mut app, &two_turns(), 0);
    app.on_key(key(KeyCode::Char('3')), clock.at(0));
    let mut p = conflicted_plan();
    // What each choice does to each file is the plan's word, whatever the TUI would think.
    p.choices[2].files[4].action = FileAction::Delete;
    app.on_plan(p);
    let column = |app: &retrace_tui::App| {
        ["src/lib.rs", "tests/parse.rs", "README.md", "docs/notes.md"].map(|f| action_of(app, f))
    };

    // Before a pick: the controller's preselected choice, skip (keep the conflicted files).
    assert_eq!(column(&app), ["write", "delete", "keep", "unchanged"]);
    assert_eq!(picked(&app), "(•) s  Skip them (keep your changes)");
    // Tab goes round: overwrite, as the plan says it, then refuse, which restores nothing while
    // files conflict and so cannot be committed.
    app.on_key(key(KeyCode::Tab), clock.at(1));
    assert_eq!(column(&app), ["write", "delete", "write", "delete"]);
    assert_eq!(picked(&app), "(•) o  Overwrite them");
    app.on_key(key(KeyCode::Tab), clock.at(2));
    assert_eq!(column(&app), ["keep", "keep", "keep", "keep"]);
    assert_eq!(picked(&app), "(•)    Restore nothing while files conflict");
    let shown = boxed_rows(&app);
    assert!(
        shown.contains(&"( ) s  Skip them (keep your changes)".to_string()),
        "{shown:#?}"
    );
    assert!(shown.contains(&"( ) o  Overwrite them".to_string()), "{shown:#?}");
    assert!(app.on_key(key(KeyCode::Enter), clock.at(3)).is_empty());
    assert!(
        boxed_rows(&app)
            .contains(&"Restore nothing while files conflict: pick s or o (or Tab), then Enter".to_string()),
        "{:#?}",
        boxed_rows(&app)
    );

    // `s`: skip; `o`: overwrite; Shift+Tab back to skip.
    assert!(app.on_key(key(KeyCode::Char('s')), clock.at(4)).is_empty());
    assert_eq!(column(&app), ["write", "delete", "keep", "unchanged"]);
    app.on_key(key(KeyCode::Char('o')), clock.at(5));
    assert_eq!(picked(&app), "(•) o  Overwrite them");
    app.on_key(key(KeyCode::BackTab), clock.at(6));
    assert_eq!(picked(&app), "(•) s  Skip them (keep your changes)");

    // Enter commits the picked choice, confirmed (the plan spans a shell command).
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(7)),
        vec![Effect::Commit(CommitRewind {
            plan_id: "plan-0".into(),
            confirm: true,
            on_conflict: OnConflict::Skip,
            in_place: true,
        })]
    );
}

/// Found by a new user's trial: under "refuse" the files that do not conflict showed `skip` and
/// nothing more. Every skipped row says why, in the words every frontend uses.
#[test]
fn every_skipped_row_says_why_under_every_choice() {
    let clock = Clock::new();
    let mut app = app_with_turns();
    open_menu(&mut app, &two_turns(), 0);
    app.on_key(key(KeyCode::Char('3')), clock.at(0));
    app.on_plan(conflicted_plan());
    let others = "(held back while files conflict)";
    let unsafe_path = ("gpj.exe", "(an unsafe path: outside the workspace or through");
    for (k, skipped) in [
        // Skip (preselected): the conflicting ones.
        (None, vec![("README.md", "(edited outside Retrace)"), unsafe_path]),
        // Overwrite: the one that cannot be overwritten, for its reason.
        (Some(KeyCode::Char('o')), vec![unsafe_path]),
        // Refuse (Tab from overwrite): every file, the conflicting ones with their own reason.
        (
            Some(KeyCode::Tab),
            vec![
                ("src/lib.rs", others),
                ("tests/parse.rs", others),
                ("README.md", "(edited outside Retrace)"),
                unsafe_path,
                ("docs/notes.md", others),
            ],
        ),
    ] {
        if let Some(k) = k {
            app.on_key(key(k), clock.at(1));
        }
        let shown = boxed_rows(&app);
        let skip_rows: Vec<&String> = shown
            .iter()
            .filter(|r| r.trim_start_matches('›').trim_start().starts_with("keep "))
            .collect();
        assert_eq!(skip_rows.len(), skipped.len(), "{shown:#?}");
        for (path, why) in skipped {
            assert!(
                skip_rows.iter().any(|r| r.contains(path) && r.contains(why)),
                "{path} {why}: {shown:#?}"
            );
        }
    }
}

#[test]
fn without_conflicts_there_is_no_choice_and_s_or_o_do_nothing() {
    let clock = Clock::new();
    let mut app = app_with_turns();
    open_menu(&mut app, &two_turns(), 0);
    app.on_key(key(KeyCode::Char('3')), clock.at(0));
    app.on_plan(plan(0, RewindScope::Code));
    for k in ['s', 'o'] {
        assert!(app.on_key(key(KeyCode::Char(k)), clock.at(1)).is_empty());
    }
    app.on_key(key(KeyCode::Tab), clock.at(2));
    let shown = boxed_rows(&app).join("\n");
    assert!(!shown.contains("(•)") && !shown.contains("what to do"), "{shown}");
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(3)),
        vec![Effect::Commit(CommitRewind {
            plan_id: "plan-0".into(),
            confirm: false,
            on_conflict: OnConflict::Refuse,
            in_place: true,
        })]
    );
}

#[test]
fn fork_refuses_a_turn_whose_entry_does_not_offer_it_with_its_reason() {
    let clock = Clock::new();
    let mut app = app_with_turns();
    let mut l = two_turns();
    l.entries[0] = unavailable(l.entries[0].clone(), &[ActionKind::Fork], "not on this head");
    l.entries[1].actions.retain(|a| a.action != ActionKind::Fork);
    type_text(&mut app, "/fork x", clock.at(0));
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(1)),
        vec![Effect::LoadCheckpoints]
    );
    app.on_checkpoints(&l);
    app.on_key(key(KeyCode::Up), clock.at(2));
    assert!(app.on_key(key(KeyCode::Enter), clock.at(3)).is_empty());
    assert_eq!(app.message(), Some("cannot fork here: not offered"));
    app.on_key(key(KeyCode::Up), clock.at(4));
    assert!(app.on_key(key(KeyCode::Enter), clock.at(5)).is_empty());
    assert_eq!(app.message(), Some("cannot fork here: not on this head"));
    assert_eq!(app.screen(), Screen::Picker);
}

/// Under "Restore nothing while files conflict" no file reads "skip", the name of a choice that
/// is not picked: each says what that choice does to it, "keep".
#[test]
fn the_preview_says_what_the_picked_choice_does() {
    let clock = Clock::new();
    let mut app = app_with_turns();
    open_menu(&mut app, &two_turns(), 0);
    app.on_key(key(KeyCode::Char('3')), clock.at(0));
    app.on_plan(conflicted_plan());
    // Skip, preselected: the conflicting file is kept, the others are written.
    let screen = rows(&app, 120, 40).join("\n");
    assert!(screen.contains("keep      README.md"), "{screen}");
    assert!(screen.contains("write     src/lib.rs"), "{screen}");
    // Overwrite: it is written.
    app.on_key(key(KeyCode::Char('o')), clock.at(1));
    let screen = rows(&app, 120, 40).join("\n");
    assert!(screen.contains("write     README.md"), "{screen}");
    // Refuse (Tab from overwrite): every file is kept.
    app.on_key(key(KeyCode::Tab), clock.at(2));
    let screen = rows(&app, 120, 40).join("\n");
    assert!(
        screen.contains("(•)    Restore nothing while files conflict"),
        "{screen}"
    );
    assert!(
        !screen.contains("› skip") && !screen.contains("  skip  "),
        "{screen}"
    );
    assert!(
        screen.contains("keep      README.md    (edited outside Retrace)"),
        "{screen}"
    );
}

/// A code restore whose every file in the workspace is already as it was says at once that nothing would change
/// and what Enter does then (closes the preview, committing nothing); with a conflicted file
/// kept, the same until overwriting it is picked.
#[test]
fn a_preview_with_nothing_to_change_says_so_at_once() {
    let clock = Clock::new();
    let mut app = app_with_turns();
    open_menu(&mut app, &two_turns(), 0);
    app.on_key(key(KeyCode::Char('3')), clock.at(0));
    let mut p = plan(0, RewindScope::Code);
    for f in &mut p.files {
        f.action = FileAction::Unchanged;
    }
    app.on_plan(p);
    let shown = rows(&app, 80, 24).join("\n");
    assert!(
        shown.contains("Nothing would change: every file in the workspace is already as it was"),
        "{shown}"
    );
    assert!(shown.contains("Enter close"), "{shown}");
    assert_eq!(app.on_key(key(KeyCode::Enter), clock.at(1)), vec![]);
    assert_eq!(app.screen(), Screen::Chat);
    assert_eq!(
        app.message(),
        Some("nothing was restored: every file in the workspace is already as it was")
    );

    // Conflicts: keeping them (the preselected choice) changes nothing here; overwriting does.
    open_menu(&mut app, &two_turns(), 0);
    app.on_key(key(KeyCode::Char('3')), clock.at(2));
    let mut p = conflicted_plan();
    for c in &mut p.choices {
        for f in &mut c.files {
            if c.on_conflict != OnConflict::Overwrite {
                f.action = match f.action {
                    FileAction::Write | FileAction::Delete => FileAction::Unchanged,
                    other => other,
                };
            }
        }
    }
    app.on_plan(p);
    let shown = rows(&app, 80, 40).join("\n");
    // This plan has gaps: the files Retrace tracked are as they were, not every file.
    assert!(
        shown.contains("Nothing would change: every file Retrace tracked is already as it was or")
            && shown.contains("what the gaps name was not tracked"),
        "{shown}"
    );
    // Wider than the box (100 cells at most): wrapped inside it, never cut at its border (a trial
    // saw "… Enter closes this previe…" at 120 columns).
    let wide = rows(&app, 120, 40).join("\n");
    assert!(!wide.contains('…'), "{wide}");
    assert!(wide.contains("restoring nothing"), "{wide}");
    app.on_key(key(KeyCode::Char('o')), clock.at(3));
    let shown = rows(&app, 80, 40).join("\n");
    assert!(!shown.contains("Nothing would change"), "{shown}");
    assert!(matches!(
        app.on_key(key(KeyCode::Enter), clock.at(4)).as_slice(),
        [Effect::Commit(_)]
    ));
}
