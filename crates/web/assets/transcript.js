// The transcript as rows of the session's items: rendered whole from a snapshot, then one row
// added, replaced, extended or removed per item event, and the prompts' menus built again when the
// entries are read. A row that is replaced keeps whether it was open and the keyboard focus inside
// it; a re-render keeps the focus on the same prompt, action or tool call.
import { promptMenu, promptResults, reasoningOf, rowOf } from "./messages.js";
import { ui } from "./ui.js";
import { el, focusFirst, hasFocus } from "./util.js";

/** item id → its row, as the transcript shows it now. */
let rows = new Map();

export function scrollDown() {
  ui.transcript.scrollTop = ui.transcript.scrollHeight;
}

/** Turn `turn`'s prompt, as the transcript shows it now. */
function promptOf(turn) {
  return ui.rows.querySelector(`.msg.user[data-turn="${Number(turn)}"]`);
}

/** The button of action `action` in `menu` (a group of an entry's actions). */
function actionIn(menu, action) {
  return menu && [...menu.querySelectorAll("button")].find((b) => b.dataset.action === action);
}

/**
 * The action `opener` stood for (one of turn `turn`'s), as the page shows it now: in the Versions
 * panel's list if it was there, else on the turn's prompt.
 */
function sameAction(opener, turn) {
  if (turn == null || !opener) return null;
  const menu = opener.closest(".cp-actions")
    ? ui.checkpoints.querySelector(`li[data-turn="${Number(turn)}"] > .cp-actions`)
    : promptOf(turn)?.querySelector(":scope > .rewind");
  return actionIn(menu, opener.dataset.action);
}

/**
 * Gives the keyboard focus back after an action started from `opener` (an action of turn
 * `turn`): to the opener if it is still in the page, to the same action where it was shown again,
 * else to the composer.
 */
export function returnFocus(opener, turn, ...fallbacks) {
  focusFirst(opener, sameAction(opener, turn), ...fallbacks, ui.prompt);
}

/**
 * Builds every prompt's menu again from the entries (entries.js), the focus kept on its action,
 * and its results where they say something new (or were not shown yet); results that say the
 * same are kept as they are (open, read).
 */
export function showMenus() {
  for (const row of rows.values()) {
    const old = row.querySelector(":scope > .rewind");
    if (!old) continue;
    const turn = Number(row.dataset.turn);
    const action = hasFocus(old) ? document.activeElement.dataset.action : null;
    const menu = promptMenu(turn);
    old.replaceWith(menu);
    if (action) focusFirst(actionIn(menu, action), row);
    const had = row.querySelector(":scope > .results");
    const results = promptResults(turn);
    if (had?.dataset.summary === results.dataset.summary) continue;
    const focused = had && hasFocus(had);
    if (had) had.replaceWith(results);
    else menu.after(results);
    if (focused) focusFirst(results.querySelector(".results-toggle"), row);
  }
}

/** Where the focus is inside `root`, to find it again in a new copy: the focused element's path. */
function focusPath(root) {
  const a = document.activeElement;
  if (!root.contains(a)) return null;
  return {
    item: a.closest("[data-item]")?.dataset.item,
    action: a.dataset.action,
    summary: a.tagName === "SUMMARY",
    results: !!a.closest(".results"),
  };
}

/** The element in `row` (the new copy of a row) that stands where `path` was. */
function again(row, path) {
  if (!row) return null;
  if (path.action) return actionIn(row.querySelector(":scope > .rewind"), path.action);
  if (path.summary) return row.querySelector(":scope > summary");
  if (path.results) return row.querySelector(":scope > .results > .results-toggle") ?? row;
  return row;
}

function empty() {
  return el("p", "empty", "No messages yet. Type a prompt below.");
}

/** Shows `items` (a snapshot's) as the whole transcript. */
export function renderItems(items) {
  const path = focusPath(ui.rows);
  const open = new Set([...rows].filter(([, r]) => r.open).map(([id]) => id));
  rows = new Map();
  for (const item of items) {
    const row = rowOf(item);
    if (open.has(item.id) && "open" in row) row.open = true;
    rows.set(item.id, row);
  }
  ui.rows.replaceChildren(...(rows.size ? rows.values() : [empty()]));
  if (path) focusFirst(again(rows.get(path.item), path), ui.prompt);
  scrollDown();
}

/** Shows `item`: its row replaced where it is, or added at the end. */
export function showItem(item) {
  const row = rowOf(item);
  const old = rows.get(item.id);
  rows.set(item.id, row);
  if (!old) {
    ui.rows.querySelector(":scope > .empty")?.remove();
    ui.rows.append(row);
    return;
  }
  const path = focusPath(old);
  if (old.open && "open" in row) row.open = true;
  old.replaceWith(row);
  if (path) focusFirst(again(row, path), ui.prompt);
}

/** Removes item `id`'s row. */
export function removeItem(id) {
  const old = rows.get(id);
  rows.delete(id);
  if (!old) return;
  const had = hasFocus(old);
  old.remove();
  if (!rows.size) ui.rows.replaceChildren(empty());
  if (had) ui.prompt.focus();
}

/** Appends streamed `text` to item `id`'s row (its reasoning if `reasoning`). */
export function extendItem(id, text, reasoning) {
  const row = rows.get(id);
  if (!row) return;
  const part = reasoning ? reasoningOf(row, true) : row.querySelector(":scope > .text");
  part?.append(text);
}
