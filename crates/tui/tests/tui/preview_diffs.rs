//! The preview's diffs: each file shows `+A −R` from its plan diff, `n`/`p` move between files,
//! `d` (or Space) opens a file's diff with line numbers, and `f` asks the controller for the whole
//! diff of one the plan cut or did not compute.

use insta::assert_snapshot;
use ratatui::crossterm::event::KeyCode;
use retrace_protocol::{Error, ErrorCode, PlanDiff, PlanFileDiff, RewindPlan, RewindScope};
use retrace_tui::{App, Effect, Mode, Screen};

use crate::fixtures::*;

/// The app previewing `p` (a code rewind to before turn 0).
fn previewing(p: RewindPlan) -> App {
    let clock = Clock::new();
    let mut app = app_with_turns();
    open_menu(&mut app, &two_turns(), 0);
    app.on_key(key(KeyCode::Char('3')), clock.at(0));
    app.on_plan(p);
    assert_eq!(app.screen(), Screen::Preview);
    app
}

fn press(app: &mut App, code: KeyCode) -> Vec<Effect> {
    app.on_key(key(code), Clock::new().at(0))
}

fn preview(app: &App) -> &retrace_tui::screens::preview::Preview {
    match app.mode() {
        Mode::Preview(p) => p,
        _ => panic!("not previewing"),
    }
}

/// A plan whose first file's diff was cut at its cap.
fn cut_plan() -> RewindPlan {
    let mut p = plan(0, RewindScope::Code);
    p.files[0].diff.truncated = true;
    p.files[1].diff = PlanDiff {
        deferred: true,
        ..PlanDiff::default()
    };
    p
}

#[test]
fn files_show_their_counts_and_open_diffs_with_line_numbers() {
    let mut app = previewing(plan(0, RewindScope::Code));
    assert_eq!(preview(&app).list.cursor, 0);
    assert!(press(&mut app, KeyCode::Char('d')).is_empty());
    assert!(press(&mut app, KeyCode::Char('n')).is_empty());
    assert!(press(&mut app, KeyCode::Char(' ')).is_empty());
    assert_eq!(preview(&app).list.cursor, 1);
    assert_eq!(
        preview(&app).list.open.iter().copied().collect::<Vec<_>>(),
        vec![0, 1]
    );
    assert_snapshot!(render(&app, 80, 30));
    // Closed again; the cursor stops at either end.
    press(&mut app, KeyCode::Char('d'));
    for _ in 0..5 {
        press(&mut app, KeyCode::Char('n'));
    }
    assert_eq!(preview(&app).list.cursor, 1);
    for _ in 0..5 {
        press(&mut app, KeyCode::Char('p'));
    }
    assert_eq!(preview(&app).list.cursor, 0);
    assert_eq!(
        preview(&app).list.open.iter().copied().collect::<Vec<_>>(),
        vec![0]
    );
    // Enter still commits.
    assert!(matches!(
        press(&mut app, KeyCode::Enter).as_slice(),
        [Effect::Commit(_)]
    ));
}

#[test]
fn a_cut_diff_offers_the_whole_one_and_f_loads_it_from_the_controller() {
    let mut app = previewing(cut_plan());
    press(&mut app, KeyCode::Char('d'));
    let shown = rows(&app, 80, 30).join("\n");
    assert!(
        shown.contains("the diff was cut at 64.0 KiB — f loads the whole diff"),
        "{shown}"
    );
    assert_eq!(
        press(&mut app, KeyCode::Char('f')),
        vec![Effect::LoadPlanDiff {
            plan_id: "plan-0".into(),
            path: "src/lib.rs".into(),
        }]
    );
    // Asked once; loading meanwhile.
    assert!(press(&mut app, KeyCode::Char('f')).is_empty());
    assert!(rows(&app, 80, 30).join("\n").contains("loading the whole diff…"));
    // An answer about another plan is not this one's.
    let whole = PlanFileDiff {
        path: "src/lib.rs".into(),
        diff: PlanDiff {
            text: "@@ -40,2 +40,2 @@\n-old line\n+new line\n tail\n".into(),
            added: 1,
            removed: 1,
            ..PlanDiff::default()
        },
    };
    app.on_plan_diff("plan-9", whole.clone());
    assert!(preview(&app).whole.is_empty());
    app.on_plan_diff("plan-0", whole);
    assert!(preview(&app).loading.is_empty());
    let shown = rows(&app, 80, 30).join("\n");
    assert!(!shown.contains("f loads"), "{shown}");
    assert!(shown.contains("   40       - old line"), "{shown}");
    assert!(shown.contains("   41    41   tail"), "{shown}");
    // Loaded: `f` asks nothing more.
    assert!(press(&mut app, KeyCode::Char('f')).is_empty());

    // A diff not computed says so and loads the same way; a failure is said in the preview.
    press(&mut app, KeyCode::Char('n'));
    press(&mut app, KeyCode::Char('d'));
    assert_snapshot!(render(&app, 80, 30));
    assert_eq!(
        press(&mut app, KeyCode::Char('f')),
        vec![Effect::LoadPlanDiff {
            plan_id: "plan-0".into(),
            path: "tests/parse.rs".into(),
        }]
    );
    app.on_plan_diff_failed(
        "plan-0",
        "tests/parse.rs",
        &Error::new(
            ErrorCode::StalePlan,
            "`tests/parse.rs` changed since the plan was made",
        ),
    );
    assert!(preview(&app).loading.is_empty());
    let shown = rows(&app, 80, 30).join("\n");
    assert!(
        shown.contains("the whole diff of tests/parse.rs cannot be had"),
        "{shown}"
    );
    // Asked again after a failure.
    assert_eq!(press(&mut app, KeyCode::Char('f')).len(), 1);
}

#[test]
fn the_cursor_stays_in_view_in_a_long_list() {
    let mut p = plan(0, RewindScope::Code);
    let template = p.files[0].clone();
    for i in 0..60 {
        let mut f = template.clone();
        f.path = format!("src/generated_{i}.rs");
        p.files.push(f);
    }
    let mut app = previewing(p);
    app.set_viewport(80, 20);
    for i in 0..40 {
        press(&mut app, KeyCode::Char('n'));
        let shown = rows(&app, 80, 20);
        let at = &preview(&app).plan.files[i + 1].path;
        let cursor = shown
            .iter()
            .find(|r| r.contains("│›"))
            .map(|r| r.contains(at.as_str()));
        assert_eq!(cursor, Some(true), "{at}:\n{}", shown.join("\n"));
    }
    for _ in 0..40 {
        press(&mut app, KeyCode::Char('p'));
    }
    assert!(rows(&app, 80, 20).join("\n").contains("› write     src/lib.rs"));
}

#[test]
fn open_diffs_stay_in_the_box_above_the_input_box_at_80_by_24() {
    // Three files, each diff open: far more rows than 80×24 shows.
    let mut p = plan(0, RewindScope::Both);
    let mut third = p.files[0].clone();
    third.path = "src/main.rs".into();
    p.files.push(third);
    let mut app = previewing(p);
    app.set_viewport(80, 24);
    for _ in 0..3 {
        press(&mut app, KeyCode::Char('d'));
        press(&mut app, KeyCode::Char('n'));
    }
    let shown = rows(&app, 80, 24);
    // The input box is whole, below the box: its top border, its row, its bottom border.
    let input = shown
        .iter()
        .position(|r| r.starts_with("┌ Enter send"))
        .unwrap_or_else(|| {
            panic!(
                "no input box:
{}",
                shown.join(
                    "
"
                )
            )
        });
    assert_eq!(
        input,
        20,
        "{}",
        shown.join(
            "
"
        )
    );
    assert!(shown[21].starts_with('│') && shown[22].starts_with('└'));
    let bottom = shown
        .iter()
        .rposition(|r| r.trim_start().starts_with('└') && r.starts_with("  "))
        .unwrap_or_else(|| {
            panic!(
                "no box:
{}",
                shown.join(
                    "
"
                )
            )
        });
    assert!(
        bottom < input,
        "{}",
        shown.join(
            "
"
        )
    );
    // What does not fit is counted on the box's border, and the cursor's file shows.
    assert!(
        shown[bottom].contains("more above"),
        "{}",
        shown.join(
            "
"
        )
    );
    assert!(
        shown.iter().any(|r| r.contains("› write     src/main.rs")),
        "{}",
        shown.join(
            "
"
        )
    );
    assert_snapshot!(render(&app, 80, 24));
    // Scrolled to the top, the rest is counted below.
    for _ in 0..40 {
        press(&mut app, KeyCode::Up);
    }
    let shown = rows(&app, 80, 24);
    assert!(
        shown[..20]
            .iter()
            .any(|r| r.contains("↓") && r.contains("more below")),
        "{}",
        shown.join("\n")
    );
}
