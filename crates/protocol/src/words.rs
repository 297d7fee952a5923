//! Plain words every frontend uses the same way: counts with their plural, how long ago
//! something happened, and why a file conflicts, a restore skips it or a turn has a gap (the wire
//! names stay in JSON).

/// `n` things, singular or plural: "1 turn", "2 turns", "0 files". `what` is the singular; a
/// word ending in "s", "x", "ch" or "sh" takes "es".
pub fn count(n: usize, what: &str) -> String {
    if n == 1 {
        return format!("1 {what}");
    }
    let es = ["s", "x", "ch", "sh"].iter().any(|e| what.ends_with(e));
    format!("{n} {what}{}", if es { "es" } else { "s" })
}

/// How long ago, from the seconds elapsed: "just now", "5 minutes ago", "3 hours ago",
/// "yesterday", "4 days ago", "3 weeks ago", "5 months ago", "2 years ago". A time in the future
/// (a clock set back) reads "just now".
pub fn ago(seconds: i64) -> String {
    const MIN: i64 = 60;
    const HOUR: i64 = 60 * MIN;
    const DAY: i64 = 24 * HOUR;
    let unit = |n: i64, what: &str| format!("{} ago", count(n as usize, what));
    match seconds {
        s if s < MIN => "just now".into(),
        s if s < HOUR => unit(s / MIN, "minute"),
        s if s < DAY => unit(s / HOUR, "hour"),
        s if s < 2 * DAY => "yesterday".into(),
        s if s < 14 * DAY => unit(s / DAY, "day"),
        s if s < 60 * DAY => unit(s / (7 * DAY), "week"),
        s if s < 365 * DAY => unit(s / (30 * DAY), "month"),
        s => unit(s / (365 * DAY), "year"),
    }
}

/// Why a file of a plan conflicts, in words ("edited outside Retrace", "deleted by a shell command
/// or outside Retrace", "already absent"…), the same words on the page.
pub fn conflict(c: &crate::Conflict) -> String {
    use crate::ConflictReason as R;
    let missing = c.current_sha256.is_none();
    match c.reason {
        R::ManualEdit => "edited outside Retrace",
        R::ExternalChange if missing && c.checkpoint_sha256.is_none() => "already absent",
        R::ExternalChange if missing => "deleted by a shell command or outside Retrace",
        R::ExternalChange => "changed by a shell command or outside Retrace",
        R::DeletedAndRecreated => "created again after Retrace removed it",
        R::ModeChange => "its permissions changed outside Retrace",
        R::TypeChange => "something else stands there now: a folder, a link or a device",
        R::Unreadable => "cannot be read: permissions",
        R::PathUnsafe => "an unsafe path: outside the workspace or through a link",
        R::MissingPayload => "its saved copy is no longer kept",
        R::Unverified | R::LegacyUnverified => "Retrace cannot tell that it wrote what is there",
    }
    .to_string()
}

/// A gap in a line: what it concerns (a shell command's gap its command, any other its path; else
/// the other one) and why, in words: "rm x — a shell command: what it did to files is not
/// tracked", "a/b — reached through a link"; why alone when it names neither.
pub fn gap_line(reason: &crate::GapReason, path: Option<&str>, detail: Option<&str>) -> String {
    match gap_subject(reason, path, detail) {
        Some(w) => format!("{w} — {}", gap(reason)),
        None => gap(reason),
    }
}

/// What a gap concerns, as [`gap_line`] names it: a shell command's (or tool call's) gap its
/// command, any other its path; else the other one.
pub fn gap_subject<'a>(
    reason: &crate::GapReason,
    path: Option<&'a str>,
    detail: Option<&'a str>,
) -> Option<&'a str> {
    match reason.is_side_effect() {
        true => detail.or(path),
        false => path.or(detail),
    }
}

/// The sentence reporting a committed restore of files only (a code rewind, one file's version),
/// as every frontend says it: what was restored (`done`: "code to before turn 1", "src/a.rs to
/// v2") and what it did to the files (`files`: "1 file written, 1 deleted"); when it wrote and
/// deleted no file (`changed` false), that nothing was restored, and why (`files`: "no file
/// changed (every file in the workspace already as it was)").
pub fn files_restored(done: &str, changed: bool, files: &str) -> String {
    match changed {
        true => format!("Restored {done}: {files}"),
        false => format!("Nothing was restored: {files}"),
    }
}

/// Why committing a plan would change nothing ([`crate::RewindPlan::changes_nothing`]), as a
/// preview says at once ("Nothing would change: …") and the restore's report after ("Nothing was
/// restored: …"); `kept`: some files are kept as they are (conflicts skipped); `gaps`: the turns
/// restored have gaps (what a shell command or an MCP tool changed, untracked, is not restored:
/// it is never said to be as it was).
pub fn unchanged_files(kept: bool, gaps: bool) -> &'static str {
    match (kept, gaps) {
        (true, false) => "every file in the workspace is already as it was or kept as it is",
        (false, false) => "every file in the workspace is already as it was",
        (true, true) => {
            "every file Retrace tracked is already as it was or kept as it is; what the gaps name was not tracked and is left as it is"
        }
        (false, true) => {
            "every file Retrace tracked is already as it was; what the gaps name was not tracked and is left as it is"
        }
    }
}

/// Why a restore skips a file (keeps it as it is) under the conflict choice `on_conflict`, in
/// words: the file's own conflict when it has one; else, under `refuse` (which restores nothing
/// while any file conflicts), that it is held back.
pub fn skipped(conflict: Option<&crate::Conflict>, on_conflict: crate::OnConflict) -> String {
    match (conflict, on_conflict) {
        (Some(c), _) => self::conflict(c),
        (None, crate::OnConflict::Refuse) => "held back while files conflict".into(),
        (None, _) => "kept as it is".into(),
    }
}

/// What a tool call that did not run or failed says after its status, for a person: the first
/// line of what the model was told, without its "error:" and without repeating what the status
/// and the call's title already say. A shell command the user declined says nothing more
/// ("⊘ denied" after "Run CMD"); plan mode says so; a call cancelled before it ran says "before
/// it ran"; an error says what it was. Empty when there is nothing more to say.
pub fn tool_outcome(status: crate::ToolStatus, output: &str) -> String {
    use crate::ToolStatus as S;
    let first = output.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let said = first.strip_prefix("error:").unwrap_or(first).trim();
    match status {
        S::Denied if said.starts_with("the user declined") => String::new(),
        S::Denied if said.starts_with("plan mode is on") => "plan mode is on: nothing was changed".into(),
        S::Cancelled => said
            .strip_prefix("cancelled")
            .map(|rest| rest.trim_start_matches([':', ' ']))
            .map(|rest| rest.strip_prefix("by the user ").unwrap_or(rest))
            .unwrap_or(said)
            .to_string(),
        _ => said.to_string(),
    }
}

/// What a restore does to a file (a plan file's action under the choice that applies), in a word
/// for a person: "write", "delete", "unchanged", and "keep" for a file it leaves as it is (skipped:
/// conflicting, or held back while others conflict), so that the row never reads like the name
/// of a choice that is not picked.
pub fn file_action(action: crate::FileAction) -> &'static str {
    use crate::FileAction as A;
    match action {
        A::Write => "write",
        A::Delete => "delete",
        A::Unchanged => "unchanged",
        A::Skip => "keep",
    }
}

/// A session another process holds, in words: "This session is open in another Retrace (pid 12,
/// since 2026-12-07 02:06 UTC). Close it there, or start a new session here." `other_host` when
/// that process runs elsewhere, `since` as it took the lease (RFC 3339; shown to the minute, in
/// UTC, when it reads as one).
pub fn held_elsewhere(pid: u32, other_host: Option<&str>, since: Option<&str>) -> String {
    let mut who = Vec::new();
    match (pid, other_host) {
        (0, Some(h)) => who.push(format!("on host {h}")),
        (0, None) => {}
        (p, Some(h)) => who.push(format!("pid {p} on host {h}")),
        (p, None) => who.push(format!("pid {p}")),
    }
    if let Some(t) = since {
        who.push(format!("since {}", minute_utc(t)));
    }
    let who = match who.is_empty() {
        true => String::new(),
        false => format!(" ({})", who.join(", ")),
    };
    format!("This session is open in another Retrace{who}. Close it there, or start a new session here.")
}

/// An RFC 3339 time in UTC to the minute ("2026-12-07T02:06:08.5Z" → "2026-12-07 02:06 UTC");
/// anything else as it is.
fn minute_utc(t: &str) -> String {
    let utc = t.ends_with('Z') || t.ends_with("+00:00");
    match (t.get(..10), t.get(10..11), t.get(11..16)) {
        (Some(day), Some("T"), Some(hm)) if utc && hm.as_bytes().get(2) == Some(&b':') => {
            format!("{day} {hm} UTC")
        }
        _ => t.to_string(),
    }
}

/// Why part of a turn cannot be restored (a gap's reason), in words.
pub fn gap(reason: &crate::GapReason) -> String {
    use crate::GapReason as G;
    match reason {
        G::BashSideEffect => "a shell command: what it did to files is not tracked",
        G::McpSideEffect => "an MCP tool call: what it did is not tracked",
        G::Symlink => "reached through a link",
        G::Hardlink => "a file with several names (hard links)",
        G::Oversized => "too large to keep",
        G::Unreadable => "could not be read",
        G::OutsideWorkspace => "outside the workspace",
        G::ExternalWriter => "changed by another program while the turn ran",
        G::Untracked => {
            "out of the walk's sight (ignored, a repository of its own, or unreadable): left as it is"
        }
        G::LegacyUnverified => "an old record Retrace cannot verify",
        G::ExpiredPayload => "its saved copy is no longer kept",
        G::Other(s) => s,
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restore_that_changed_no_file_restored_nothing() {
        assert_eq!(
            files_restored("code to before turn 1", true, "1 file written"),
            "Restored code to before turn 1: 1 file written"
        );
        // The page's banner says it so ("Nothing was restored: …").
        assert_eq!(
            files_restored(
                "code to before turn 1",
                false,
                "no file changed (every file in the workspace already as it was)"
            ),
            "Nothing was restored: no file changed (every file in the workspace already as it was)"
        );
    }

    #[test]
    fn a_session_held_elsewhere_names_its_process_and_since_when() {
        assert_eq!(
            held_elsewhere(27751, None, Some("2026-12-07T02:06:08.123456789Z")),
            "This session is open in another Retrace (pid 27751, since 2026-12-07 02:06 UTC). \
             Close it there, or start a new session here."
        );
        assert_eq!(
            held_elsewhere(5, Some("box"), None),
            "This session is open in another Retrace (pid 5 on host box). Close it there, or start a new session here."
        );
        assert_eq!(
            held_elsewhere(0, None, Some("2026-12-07T02:06:08+01:00")),
            "This session is open in another Retrace (since 2026-12-07T02:06:08+01:00). Close it there, or start a new session here."
        );
        assert_eq!(
            held_elsewhere(0, None, None),
            "This session is open in another Retrace. Close it there, or start a new session here."
        );
    }

    #[test]
    fn counts_take_their_plural() {
        assert_eq!(count(1, "turn"), "1 turn");
        assert_eq!(count(0, "file"), "0 files");
        assert_eq!(count(2, "line"), "2 lines");
        assert_eq!(count(3, "patch"), "3 patches");
        assert_eq!(count(2, "class"), "2 classes");
    }

    #[test]
    fn a_tool_call_that_did_not_run_says_why_once() {
        use crate::ToolStatus as S;
        let declined = "error: the user declined to run this command: python3 main.py --verbose";
        assert_eq!(tool_outcome(S::Denied, declined), "");
        assert_eq!(
            tool_outcome(
                S::Denied,
                "error: plan mode is on, so `edit_file` was not run and nothing changed; only the read tools work now"
            ),
            "plan mode is on: nothing was changed"
        );
        assert_eq!(
            tool_outcome(S::Cancelled, "error: cancelled by the user before it ran"),
            "before it ran"
        );
        assert_eq!(tool_outcome(S::Cancelled, "error: cancelled"), "");
        assert_eq!(
            tool_outcome(S::Failed, "error: no such file `a.txt`\nmore"),
            "no such file `a.txt`"
        );
        assert_eq!(tool_outcome(S::Failed, "\nboom"), "boom");
        assert_eq!(tool_outcome(S::Ok, ""), "");
    }

    #[test]
    fn a_gap_says_what_it_concerns_and_why() {
        use crate::GapReason as G;
        let shell = gap_line(&G::BashSideEffect, Some("x"), Some("rm x"));
        assert_eq!(
            shell,
            "rm x — a shell command: what it did to files is not tracked"
        );
        assert_eq!(
            gap_line(&G::Unreadable, Some("a"), Some("denied")),
            "a — could not be read"
        );
        assert_eq!(gap_line(&G::Oversized, None, None), "too large to keep");
    }

    #[test]
    fn a_skipped_file_says_why() {
        use crate::{Conflict, ConflictReason, OnConflict};
        let edited = Conflict {
            path: "a.txt".into(),
            reason: ConflictReason::ManualEdit,
            checkpoint_sha256: Some("1".into()),
            last_owned_sha256: None,
            current_sha256: Some("2".into()),
            checkpoint_mode: None,
            current_mode: None,
        };
        for choice in [OnConflict::Refuse, OnConflict::Skip, OnConflict::Overwrite] {
            assert_eq!(skipped(Some(&edited), choice), "edited outside Retrace");
        }
        assert_eq!(
            skipped(None, OnConflict::Refuse),
            "held back while files conflict"
        );
        assert_eq!(skipped(None, OnConflict::Skip), "kept as it is");
    }

    #[test]
    fn ago_reads_like_a_person_would_say_it() {
        assert_eq!(ago(-30), "just now");
        assert_eq!(ago(59), "just now");
        assert_eq!(ago(60), "1 minute ago");
        assert_eq!(ago(5 * 60 + 3), "5 minutes ago");
        assert_eq!(ago(3 * 3600), "3 hours ago");
        assert_eq!(ago(30 * 3600), "yesterday");
        assert_eq!(ago(4 * 86400), "4 days ago");
        assert_eq!(ago(21 * 86400), "3 weeks ago");
        assert_eq!(ago(150 * 86400), "5 months ago");
        assert_eq!(ago(800 * 86400), "2 years ago");
    }
}
