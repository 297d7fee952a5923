// The page's plain words: a turn a restore lands before, a session as the picker names it. Why a
// file conflicts, what was not tracked and what a restore does to a file come in words in the
// answers (each conflict's, gap's and plan file's `says`, the controller's words for every
// frontend); the answers decide all of it. Touches no page when imported (unit tests).
import { ago, count } from "./util.js";

/** Turn `n` as the page names it ("turn 3"). */
export function turnName(n) {
  return `turn ${n}`;
}

/** Where a restore of turn `n` lands: "before turn 3". */
export function beforeTurn(n) {
  return `before ${turnName(n)}`;
}

/** The most characters of a first prompt a session's name shows. */
const PROMPT_CHARS = 48;

/**
 * A session as the picker names it: its first prompt (cut, on one line), how long ago it was last
 * used, its turns — "fix the parser · 5 minutes ago · 3 turns"; "New session" before any prompt;
 * "· open in another Retrace" when another process holds it (its `held_by`).
 */
export function sessionLabel(e, now = Date.now()) {
  const first = (e.first_prompt ?? "").replace(/\s+/g, " ").trim();
  const name = !first ? "New session" : first.length > PROMPT_CHARS ? `${first.slice(0, PROMPT_CHARS - 1)}…` : first;
  const when = ago(e.last_used_at ?? e.created_at, now);
  const held = e.held_by ? "open in another Retrace" : null;
  return [name, when, count(e.turns ?? 0, "turn"), held].filter(Boolean).join(" · ");
}

