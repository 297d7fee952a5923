// The transcript's rows, one per item of the session's view: a prompt with its turn's results and
// its rewind actions (its turn's checkpoint entry's, `state.entries`), a turn's checkpoint, an
// assistant's text and reasoning, a tool call with its changes and output, a note. Each row
// carries its item's id (`data-item`); every file name shown opens the file's history. Everything
// from the workspace or the model goes in with `textContent` (via `el`), never as HTML.
import { attempt } from "./banner.js";
import { changeBlock, changesCount } from "./changes.js";
import { actionButtons } from "./checkpoints.js";
import { fileLink } from "./filelink.js";
import { gapList } from "./results.js";
import { state } from "./state.js";
import { turnResults } from "./turns.js";
import { el, fmtTokens } from "./util.js";

/** Runs an entry's action, `(action, turn, button) => Promise`, set once by app.js. */
let runAction = async () => {};

export function setTurnActions(run) {
  runAction = run;
}

/**
 * Checkpoint entry `entry`'s actions as a group of buttons of class `cls`, in the entry's order
 * with its labels; an unavailable one is disabled and says why.
 */
export function actionMenu(entry, cls) {
  const menu = el("div", cls);
  menu.setAttribute("role", "group");
  menu.setAttribute("aria-label", `Rewind to turn ${entry.turn}`);
  menu.append(...actionButtons(entry.actions ?? [], (a, b) => attempt(() => runAction(a, entry.turn, b))));
  return menu;
}

/** The rewind menu of turn `turn`'s prompt: its entry's actions (none while it is not read). */
export function promptMenu(turn) {
  return actionMenu(state.entries.get(turn) ?? { turn, actions: [] }, "rewind");
}

const STATUS = { running: "…", ok: "✓", failed: "✗", denied: "⊘ denied", cancelled: "⊘ cancelled" };

/**
 * The results of turn `turn` shown on its prompt (turns.js): its summary, opening what it did.
 * Empty while its checkpoint entry is not read, and for a turn whose checkpoint is not kept.
 */
export function promptResults(turn) {
  const entry = state.entries.get(turn);
  return entry ? turnResults(entry, "prompt") : el("div", "results");
}

// A prompt's rewind actions show on hover and while the prompt has keyboard focus: Tab onto the
// prompt, Enter (or Tab) into its actions, arrows between those available, Esc back to the prompt.
// Below them, its turn's results (a summary that opens them); the focus there does not show the
// actions. Both are built again whenever the entries are read (transcript.js `showMenus`).
function promptRow(item) {
  const content = item.text;
  const turn = item.turn;
  const m = el("article", "msg user");
  m.append(el("div", "text", content));
  if (turn == null) return m;
  m.dataset.turn = String(turn);
  m.tabIndex = 0;
  m.setAttribute("aria-label", `Turn ${turn}: ${content.slice(0, 80)}`);
  m.append(promptMenu(turn), promptResults(turn));
  m.addEventListener("keydown", (e) => {
    const buttons = [...m.querySelectorAll(":scope > .rewind button:not(:disabled)")];
    const i = buttons.indexOf(document.activeElement);
    if (e.target === m && (e.key === "Enter" || e.key === " ")) {
      e.preventDefault();
      buttons[0]?.focus();
    } else if (i >= 0 && ["ArrowRight", "ArrowDown", "ArrowLeft", "ArrowUp", "Home", "End"].includes(e.key)) {
      e.preventDefault();
      const n = buttons.length;
      const j = { ArrowRight: i + 1, ArrowDown: i + 1, ArrowLeft: i - 1, ArrowUp: i - 1, Home: 0, End: n - 1 }[e.key];
      buttons[(j + n) % n].focus();
    } else if (i >= 0 && e.key === "Escape") {
      e.preventDefault();
      m.focus();
    }
  });
  return m;
}

/** A turn's checkpoint: how many files it holds (which ones on opening it), what it missed. */
function checkpointRow(item) {
  const n = item.files.length;
  const count = n === 1 ? "1 file" : `${n} files`;
  const facts = [count];
  if (item.coverage === "partial") facts.push("partly restorable");
  if (!item.retained) facts.push("no longer kept");
  const d = el("details", "msg checkpoint");
  d.append(el("summary", null, `Checkpoint of turn ${item.turn}: ${facts.join(" · ")}`));
  if (n > 0) {
    const ul = el("ul", "cp-files");
    for (const p of item.files) ul.append(el("li", null, fileLink(p)));
    d.append(ul);
  }
  if (item.gaps?.length) d.append(gapList(item.gaps));
  return d;
}

/** The reasoning part of an assistant's row: its `.text` element, made if `make`. */
export function reasoningOf(row, make) {
  const found = row.querySelector(":scope > .reasoning > .text");
  if (found || !make) return found;
  const text = el("div", "text");
  row.prepend(el("details", "reasoning", el("summary", null, "reasoning"), text));
  return text;
}

function assistantRow(item) {
  const m = el("article", "msg assistant", el("div", "text", item.text));
  if (item.reasoning) reasoningOf(m, true).textContent = item.reasoning;
  return m;
}

function toolRow(item) {
  const d = el("details", `msg tool ${item.status}`);
  const count = changesCount(item.changes);
  d.append(
    el("summary", null,
      el("span", "tool-status", STATUS[item.status] ?? item.status), " ",
      el("code", null, item.title),
      count ? el("span", "tool-count", ` ${count}`) : null),
  );
  for (const c of item.changes ?? []) d.append(changeBlock(c));
  if (item.gaps?.length) d.append(gapList(item.gaps));
  if (item.output) {
    d.append(el("div", "tool-label", item.output_truncated ? "output (cut)" : "output"), el("pre", "tool-out", item.output));
  }
  return d;
}

function noteRow(item) {
  const n = el("div", `msg note ${item.note}`, el("div", "text", item.text));
  n.setAttribute("role", "note");
  return n;
}

const ROWS = { user_prompt: promptRow, checkpoint: checkpointRow, assistant_text: assistantRow, tool_call: toolRow, note: noteRow };

/** The row of an item (an item of a kind this page does not know gets a muted line). */
export function rowOf(item) {
  const make = ROWS[item.kind];
  const row = make ? make(item) : el("div", "msg muted", `(${item.kind})`);
  row.dataset.item = item.id;
  return row;
}

/** What a compaction did, in a sentence (the `compacted` event). */
export function compactedText(ev) {
  return `${ev.automatic ? "Compacted automatically (the conversation was near the model's context limit)" : "Compacted"}: ` +
    `about ${fmtTokens(ev.before_tokens)} → ${fmtTokens(ev.after_tokens)} tokens. The full conversation stays in Versions.`;
}
