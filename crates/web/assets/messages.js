// The transcript's rows, one per item of the session's view: a prompt with its turn's results and
// its rewind actions (its turn's checkpoint entry's, `state.entries`), a turn's checkpoint, an
// assistant's text and reasoning, a tool call with its changes and output, a note. Each row
// carries its item's id (`data-item`); every file name shown opens the file's history. Everything
// from the workspace or the model goes in with `textContent` (via `el`), never as HTML.
import { attempt } from "./banner.js";
import { changeBlock, exitCode, toolHeadline } from "./changes.js";
import { actionButtons } from "./checkpoints.js";
import { fileLink } from "./filelink.js";
import { renderMarkdown } from "./markdown.js";
import { menuControl } from "./menu.js";
import { gapList } from "./results.js";
import { state } from "./state.js";
import { turnResults } from "./turns.js";
import { count, el, fmtTokens } from "./util.js";
import { beforeTurn, turnName } from "./words.js";

/** Runs an entry's action, `(action, turn, button) => Promise`, set once by app.js. */
let runAction = async () => {};

export function setTurnActions(run) {
  runAction = run;
}

/** Actions that write the workspace's files: marked in the menu (restoring code is the risky part). */
const WRITES_FILES = new Set(["restore_code", "restore_both"]);

/**
 * Checkpoint entry `entry`'s actions as a menu control of class `cls`: one small button that
 * opens them, in the entry's order with its labels; an unavailable one is disabled and says why,
 * the ones that write files are marked. An action runs with the menu's button as its opener.
 */
export function actionMenu(entry, cls) {
  const items = actionButtons(entry.actions ?? [], (a, b) => attempt(() => runAction(a, entry.turn, toggleOf(b))));
  items.forEach((b, i) => {
    // a line between the restores (previewed first) and the rest
    if (i > 0 && entry.actions[i - 1].preview && !entry.actions[i].preview) b.classList.add("divided");
    if (!WRITES_FILES.has(b.dataset.action)) return;
    b.classList.add("risky");
    b.append(el("span", "risk", "changes files"));
  });
  const label = `Rewind: actions ${beforeTurn(entry.turn)}`;
  return menuControl(cls, el("span", "menu-face", "⟲", el("span", "menu-word", " Rewind")), label, items);
}

/** The menu button of the control an item `b` is in. */
function toggleOf(b) {
  return b.closest(".rewind, .cp-actions")?.querySelector(".menu-toggle") ?? b;
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

// A prompt: its text, one small rewind control that opens its turn's actions (menu.js), and
// below, its turn's results (a summary that opens them). The control and the results are built
// again whenever the entries are read (transcript.js `showMenus`).
function promptRow(item) {
  const content = item.text;
  const turn = item.turn;
  const m = el("article", "msg user");
  m.append(el("div", "text", content));
  if (turn == null) return m;
  m.dataset.turn = String(turn);
  m.setAttribute("aria-label", `Prompt of ${turnName(turn)}: ${content.slice(0, 80)}`);
  m.append(promptMenu(turn), promptResults(turn));
  return m;
}

/** A turn's checkpoint: how many files it holds (which ones on opening it), what it missed. */
function checkpointRow(item) {
  const n = item.files.length;
  const facts = [count(n, "file")];
  if (item.coverage === "partial") facts.push("partly restorable");
  if (!item.retained) facts.push("no longer kept");
  const d = el("details", "msg checkpoint");
  d.append(el("summary", null, `Checkpoint of ${turnName(item.turn)}: ${facts.join(" · ")}`));
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
  const text = el("div", "text md");
  renderMarkdown(text, item.text);
  const m = el("article", "msg assistant", text);
  if (item.reasoning) reasoningOf(m, true).textContent = item.reasoning;
  return m;
}

function toolRow(item) {
  // A shell command that ran but exited with a code other than 0 failed, as a terminal says.
  const code = item.status === "ok" ? exitCode(item) : null;
  const failedExit = code != null && code !== 0;
  const shown = failedExit ? "failed" : item.status;
  const d = el("details", `msg tool ${shown}`);
  const status = el("span", "tool-status", failedExit ? `✗ exit ${code}` : (STATUS[item.status] ?? item.status));
  status.title = failedExit ? `exited with code ${code}` : item.status;
  d.append(el("summary", null, status, " ", el("span", "headline", ...toolHeadline(item))));
  for (const c of item.changes ?? []) d.append(changeBlock(c));
  if (item.gaps?.length) d.append(gapList(item.gaps));
  if (item.output) {
    d.append(el("div", "tool-label", item.output_truncated ? "output (cut)" : "output"), el("pre", "tool-out", item.output));
  }
  return d;
}

/** The mark before a note of each kind: a restore (of files, its undo or redo) reads "↺ Restored …". */
const NOTE_MARKS = { restore: "↺" };

/** A note, in the controller's words for the user (a restore's, not the note the model was given). */
function noteRow(item) {
  const text = el("div", "text");
  const mark = NOTE_MARKS[item.note];
  if (mark) {
    const m = el("span", "note-mark", `${mark} `);
    m.setAttribute("aria-hidden", "true");
    text.append(m);
  }
  text.append(item.text);
  const n = el("div", `msg note ${item.note}`, text);
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
