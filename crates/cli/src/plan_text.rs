//! How the commands that restore or move heads print what they did: a rewind's or revert's plan,
//! a restore's result, the head a command selected; and a refused commit's failure, with its plan
//! for `--json` (SPEC §11).

use std::path::Path;

use retrace_protocol::{
    words, ErrorCode, FileAction, HeadRef, OnConflict, PlanDiff, RewindPlan, RewindResult,
};

use crate::common::{print_json, say_new_session};
use crate::failure::Failure;
use crate::output::{shown_path, shown_text};

/// Prints a plan (`confirmed`: `--yes` was given, so the plan does not ask for it).
/// Prints a plan; each file's action is what the `chosen` conflict choice does to it.
pub fn print_plan(plan: &RewindPlan, json: bool, confirmed: bool, chosen: OnConflict) -> Result<(), Failure> {
    if json {
        return print_json(plan);
    }
    println!("{}", shown_path(&plan.title));
    if let Some(r) = &plan.disabled_reason {
        println!("  not available: {}", shown_path(r));
    }
    let choice = plan.choices.iter().find(|c| c.on_conflict == chosen);
    // A commit that would change nothing says so first, in the words every frontend uses.
    let unchanged = match choice {
        Some(c) => c.unchanged.as_deref(),
        None => plan.unchanged.as_deref(),
    };
    if let Some(why) = unchanged {
        println!("  Nothing would change: {why}.");
    }
    for (i, f) in plan.files.iter().enumerate() {
        let action = choice
            .and_then(|c| c.files.get(i))
            .filter(|c| c.path == f.path)
            .map_or(f.action, |c| c.action);
        // In the words every frontend uses; a file kept as it is says why.
        let what = words::file_action(action);
        let why = match action {
            FileAction::Skip => format!("  ({})", words::skipped(f.conflict.as_ref(), chosen)),
            _ => f
                .conflict
                .as_ref()
                .map(|c| format!("  ({})", words::conflict(c)))
                .unwrap_or_default(),
        };
        println!(
            "  {what:<9} {}{}{why}",
            shown_path(&f.path),
            counts(action, &f.diff)
        );
    }
    for g in &plan.gaps {
        // a shell command's gap by its command, any other by its path
        let line = words::gap_line(&g.reason, g.path.as_deref(), g.detail.as_deref());
        println!("  ! turn {}: {}", g.turn, shown_path(&line));
    }
    if !plan.choices.is_empty() {
        let named: Vec<String> = plan
            .choices
            .iter()
            .map(|c| {
                let mark = if c.on_conflict == chosen { " (chosen)" } else { "" };
                format!("{}: {}{mark}", on_conflict_name(c.on_conflict), c.label)
            })
            .collect();
        println!("  Changed since Retrace wrote them: {}", named.join(" · "));
    }
    if plan.requires_confirmation && !confirmed {
        println!("  Some changes since this turn were not tracked; confirm with --yes.");
    }
    Ok(())
}

/// What a file's diff changes, for a file the chosen action writes or deletes: `  +A −R`,
/// `  binary`, or `  +? −?` for a diff the plan did not compute.
fn counts(action: FileAction, d: &PlanDiff) -> String {
    match action {
        FileAction::Write | FileAction::Delete => {}
        FileAction::Unchanged | FileAction::Skip => return String::new(),
    }
    if d.binary {
        "  binary".into()
    } else if d.deferred {
        "  +? −?".into()
    } else {
        format!("  +{} −{}", d.added, d.removed)
    }
}

/// The wire name of a conflict choice.
fn on_conflict_name(c: OnConflict) -> &'static str {
    match c {
        OnConflict::Refuse => "refuse",
        OnConflict::Skip => "skip",
        OnConflict::Overwrite => "overwrite",
    }
}

/// Prints a result; `asked` is the session the command named (an old flat log keeps the
/// transaction of a restore, so its undo is asked of it).
pub fn print_result(r: &RewindResult, asked: &str, json: bool) -> Result<(), Failure> {
    print_result_with(r, asked, json, None, None)
}

/// Prints a result as [`print_result`] does; `conversation`, when set, says what became of the
/// conversation (an undo or a redo that selected another head), in place of a rewind's line;
/// `unchanged`, the plan's words for a commit that changed nothing (they name untracked gaps).
pub fn print_result_with(
    r: &RewindResult,
    asked: &str,
    json: bool,
    conversation: Option<&str>,
    unchanged: Option<&str>,
) -> Result<(), Failure> {
    if json {
        return print_json(r);
    }
    if let Some(said) = conversation {
        println!("{said}");
    } else if r.conversation_forked {
        println!("conversation rewound: now on head {}", r.head_id);
    }
    // A conflicted file that was written anyway (`--on-conflict overwrite`) says so where it is
    // listed as written; only the others were left alone.
    let over = |f: &str| r.conflicts.iter().find(|c| c.path == f).map(words::conflict);
    for f in &r.files_written {
        match over(f) {
            Some(why) => println!("  restored {}  (overwritten: {why})", shown_path(f)),
            None => println!("  restored {}", shown_path(f)),
        }
    }
    for f in &r.files_deleted {
        match over(f) {
            Some(why) => println!("  deleted  {}  (overwritten: {why})", shown_path(f)),
            None => println!("  deleted  {}", shown_path(f)),
        }
    }
    let done = |p: &String| r.files_written.contains(p) || r.files_deleted.contains(p);
    for c in r.conflicts.iter().filter(|c| !done(&c.path)) {
        println!("  left alone ({}) {}", words::conflict(c), shown_path(&c.path));
    }
    let nothing_changed = r.files_written.is_empty() && r.files_deleted.is_empty() && r.error.is_none();
    if nothing_changed && r.conflicts.is_empty() && !r.conversation_forked && conversation.is_none() {
        println!(
            "  nothing to restore: {}",
            unchanged.unwrap_or("every file in the workspace is already as it was")
        );
    } else if nothing_changed && !r.conflicts.is_empty() {
        // Every file there was to restore was skipped: say so, not just list them.
        println!("  no file changed: every file to restore was left alone");
    }
    if let Some(tx) = &r.transaction_id {
        let undo = match (r.undo_available, r.session_id.as_str() == asked) {
            (false, _) => String::new(),
            (true, true) => " — `retrace undo` takes it back".to_string(),
            (true, false) => format!(
                " — `retrace undo --session {}` takes it back (the restore is kept with the old log)",
                shown_path(asked)
            ),
        };
        println!("transaction {tx}{undo}");
    }
    if r.redo_available {
        println!("`retrace redo` applies the undone rewind again");
    }
    if let Some(e) = &r.error {
        eprintln!("retrace: {}", shown_path(e));
    }
    if !r.prompt.is_empty() && r.conversation_forked {
        println!("prompt of that turn: {}", shown_text(&r.prompt));
    }
    Ok(())
}

/// A refused commit: the plan it refused goes to stdout, the reason and what to do to stderr; with
/// `--json`, the plan is the failure's one document, with `ok: false` and `error` (SPEC §11). Any
/// other error is just an error.
pub fn refused(
    plan: &RewindPlan,
    e: retrace_protocol::Error,
    json: bool,
    confirmed: bool,
    hints: &Hints,
) -> Failure {
    let hint = match e.code {
        ErrorCode::Conflict => hints.conflict,
        ErrorCode::ConfirmationRequired => hints.confirm,
        _ => "",
    };
    if !matches!(
        e.code,
        ErrorCode::Refused | ErrorCode::Conflict | ErrorCode::ConfirmationRequired
    ) {
        return Failure::hinted(e, hint);
    }
    if json {
        return Failure::hinted(e, hint).with_plan(plan);
    }
    if let Err(f) = print_plan(plan, json, confirmed, OnConflict::Refuse) {
        return f;
    }
    Failure::hinted(e, hint)
}

/// What to tell the user about a refused commit, in this command's flags.
pub struct Hints {
    pub conflict: &'static str,
    pub confirm: &'static str,
}

/// Prints `{head_id, session_id}`, and after a write to an old flat log, which session to use next.
pub fn print_head(asked: &str, head: &HeadRef, workspace: &Path, json: bool) -> Result<(), Failure> {
    if json {
        print_json(head)?;
    } else {
        println!("now on head {}", head.head_id);
    }
    say_new_session(asked, &head.session_id, workspace, json);
    Ok(())
}
