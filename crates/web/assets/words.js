// The page's plain words for what the answers name with wire names: a turn a restore lands
// before, why a file conflicts, what was not tracked, what a restore does to a file. The answers
// decide all of it; this only says it in words. Touches no page when imported (unit tests).
import { ago, count } from "./util.js";

/** Turn `n` as the page names it ("turn 3"). */
export function turnName(n) {
  return `turn ${n}`;
}

/** Where a restore of turn `n` lands: "before turn 3". */
export function beforeTurn(n) {
  return `before ${turnName(n)}`;
}

/**
 * Why a file conflicts (a plan's `conflicts[]`), in words: "edited outside Retrace", "deleted by
 * a shell command or outside Retrace", "already absent"…; an unknown reason as it came.
 */
export function conflictWords(c) {
  const missing = c.current_sha256 == null;
  switch (c.reason) {
    case "manual_edit":
      return "edited outside Retrace";
    case "external_change":
      if (missing && c.checkpoint_sha256 == null) return "already absent";
      return missing ? "deleted by a shell command or outside Retrace" : "changed by a shell command or outside Retrace";
    case "deleted_and_recreated":
      return "created again after Retrace removed it";
    case "mode_change":
      return "its permissions changed outside Retrace";
    case "type_change":
      return "something else stands there now: a folder, a link or a device";
    case "unreadable":
      return "cannot be read: permissions";
    case "path_unsafe":
      return "an unsafe path: outside the workspace or through a link";
    case "missing_payload":
      return "its saved copy is no longer kept";
    case "unverified":
    case "legacy_unverified":
      return "Retrace cannot tell that it wrote what is there";
    default:
      return String(c.reason ?? "");
  }
}

/** Why part of a turn cannot be restored (a `Gap`'s reason), in words. */
const GAP_REASONS = {
  bash_side_effect: "a shell command: what it did to files is not tracked",
  symlink: "reached through a link",
  hardlink: "a file with several names (hard links)",
  oversized: "too large to keep",
  unreadable: "could not be read",
  outside_workspace: "outside the workspace",
  external_writer: "changed by another program while the turn ran",
  legacy_unverified: "an old record Retrace cannot verify",
  expired_payload: "its saved copy is no longer kept",
};

/** A gap in a line: what it concerns (the command or the path) and why, in words. */
export function gapWords(g) {
  const why = GAP_REASONS[g.reason] ?? g.reason;
  const what = g.reason === "bash_side_effect" ? g.detail ?? g.path : g.path ?? g.detail;
  return what ? `${what} — ${why}` : why;
}

/** What a restore does to a file (a plan file's `action`), in words. */
export function fileActionWords(action) {
  return { write: "write", delete: "delete", skip: "skip (keep as it is)", unchanged: "already as it was" }[action] ?? action;
}

/** The most characters of a first prompt a session's name shows. */
const PROMPT_CHARS = 48;

/**
 * A session as the picker names it: its first prompt (cut, on one line), how long ago it was last
 * used, its turns — "fix the parser · 5 minutes ago · 3 turns"; "New session" before any prompt.
 */
export function sessionLabel(e, now = Date.now()) {
  const first = (e.first_prompt ?? "").replace(/\s+/g, " ").trim();
  const name = !first ? "New session" : first.length > PROMPT_CHARS ? `${first.slice(0, PROMPT_CHARS - 1)}…` : first;
  const when = ago(e.last_used_at ?? e.created_at, now);
  return [name, when, count(e.turns ?? 0, "turn")].filter(Boolean).join(" · ");
}

