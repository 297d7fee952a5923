// The transcript as rows of the session's items: rendered whole from a snapshot, then one row
// added, replaced, extended or removed per item event, and the prompts' menus built again when the
// entries are read. A row that is replaced keeps whether it was open and the keyboard focus inside
// it; a re-render keeps the focus on the same prompt, action or tool call.
import { promptMenu, promptResults, reasoningOf, rowOf } from "./messages.js";
import { renderMarkdown } from "./markdown.js";
import { state } from "./state.js";
import { ui } from "./ui.js";
import { isOpen, openAgain } from "./menu.js";
import { el, focusFirst, hasFocus } from "./util.js";

/** item id → its row, as the transcript shows it now. */
let rows = new Map();

/** The row of turn `turn`'s prompt, when the transcript shows it. */
export function promptRow(turn) {
  for (const row of rows.values()) {
    if (row.dataset.turn !== undefined && Number(row.dataset.turn) === turn && row.querySelector(":scope > .rewind")) return row;
  }
  return null;
}

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
    const wasOpen = isOpen(old);
    const menu = promptMenu(turn);
    old.replaceWith(menu);
    // an open menu stays open (a re-render under the keyboard never closes it)
    if (wasOpen) openAgain(menu, action);
    if (action && !hasFocus(menu)) focusFirst(actionIn(menu, action), menu.querySelector(".menu-toggle"), ui.prompt);
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
    menuOpen: isOpen(a.closest(".rewind")),
    summary: a.tagName === "SUMMARY",
    results: !!a.closest(".results"),
  };
}

/** The element in `row` (the new copy of a row) that stands where `path` was. */
function again(row, path) {
  if (!row) return null;
  if (path.action) {
    const menu = row.querySelector(":scope > .rewind");
    if (path.menuOpen && menu) {
      openAgain(menu, path.action);
      if (hasFocus(menu)) return document.activeElement;
    }
    const same = actionIn(menu, path.action);
    return same && !same.closest("[hidden]") ? same : menu?.querySelector(".menu-toggle");
  }
  if (path.summary) return row.querySelector(":scope > summary");
  if (path.results) return row.querySelector(":scope > .results > .results-toggle") ?? row;
  return row;
}

/** Starts a new session with checkpoint backend `backend` and opens it; set once by app.js. */
let startWithBackend = async () => {};

export function setStartWithBackend(f) {
  startWithBackend = f;
}

/** What each checkpoint backend covers, and the other one a new session can use instead. */
const BACKENDS = {
  snapshot: {
    says: "Checkpoints: snapshots of the files Retrace's own tools change. What shell commands change is not kept, and a restore says so.",
    other: "git",
    offer: "New session with git-backed checkpoints",
    explain: "Also keeps what shell commands change (experimental)",
  },
  git: {
    says: "Checkpoints: git-backed (experimental). What shell commands change can be restored too.",
    other: "snapshot",
    offer: "New session with snapshot checkpoints",
    explain: "Keeps only what Retrace's own tools change",
  },
};

/** The line of an empty session's state that says what its checkpoints cover, with a button to
 * start a new session with the other backend instead (a session keeps the backend it was made
 * with). Null while the session's status is not read. */
function backendLine(st) {
  const b = BACKENDS[st?.backend];
  if (!b || st.held_by) return null;
  const start = el("button", "link-button", b.offer);
  start.type = "button";
  start.dataset.action = "new-session-backend";
  start.title = b.explain;
  start.addEventListener("click", () => startWithBackend(b.other));
  return el("p", "empty-backend", b.says, " ", start);
}

/**
 * What an empty session shows: what Retrace is for (every edit can be taken back, and how), the
 * model and the workspace (`state.status`), and what its checkpoints cover.
 */
export function transcriptEmpty(lead = "Ask for a change below.") {
  const st = state.status;
  const where = [];
  if (st?.model) where.push(el("span", null, "Model ", el("code", null, st.model)));
  if (st?.workspace) {
    const ws = el("span", null, "Workspace ", el("code", null, st.workspace));
    if (st.branch) ws.append(" on ", el("code", null, st.branch));
    where.push(ws);
  }
  return el(
    "section",
    "empty",
    el("h2", null, "Every edit can be taken back"),
    el("p", null, `${lead} Retrace keeps a checkpoint of every file the agent changes, turn by turn.`),
    el("p", null, "To go back, open the ", el("strong", null, "⟲ Rewind"), " menu on any of your prompts: " +
      "restore the code, the conversation or both to before that turn, or fork from there. " +
      "Every restore shows what it will do first, and can be undone."),
    where.length ? el("p", "empty-where", ...where.flatMap((w, i) => (i ? [" · ", w] : [w]))) : null,
    backendLine(st),
  );
}

function empty() {
  return transcriptEmpty();
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

/** Rows whose markdown is rendered again at the next frame: item id → its whole text. */
const pending = new Map();

function renderPending() {
  for (const [id, text] of pending) {
    const part = rows.get(id)?.querySelector(":scope > .text");
    if (part) renderMarkdown(part, text);
  }
  pending.clear();
}

/**
 * Shows streamed `text` on `item`'s row (an assistant's text, whole so far): its reasoning gets
 * the text appended if `reasoning`, its answer is rendered as markdown again (once a frame).
 */
export function extendItem(item, text, reasoning) {
  const row = rows.get(item.id);
  if (!row) return;
  if (reasoning) {
    reasoningOf(row, true).append(text);
    return;
  }
  if (pending.size === 0) requestAnimationFrame(renderPending);
  pending.set(item.id, item.text);
}
