// The open session's view (docs/ARCHITECTURE.md, "The session view"): its snapshot (`GET
// …/{id}?include=items`) rendered, with what each turn offers (its checkpoint entry, read beside
// it), then the events numbered after it applied to its items by id.
// Whenever the items cannot follow from the events (another head, a rewind, an undo, a
// compaction, `lagged`, a stream that broke off and came back, as when the server restarts), the
// session is read again whole. The stream stays open meanwhile: what it brings during the read
// waits, and is applied once the snapshot is shown, as far as the snapshot does not hold it.
// A session another Retrace holds (its status's `held_by`, decided by the server) is shown
// read-only from its log: no event stream (nothing here changes it), a panel saying so with a New
// session button, and the session read again every few seconds, so that it opens here once the
// other one lets it go.
import { ApiError, call, s, subscribe } from "./api.js";
import { showApprovals } from "./approvals.js";
import { attempt, banner, errorText, hideBanner, say, showError } from "./banner.js";
import { setHeld, setRunning, showPlan } from "./controls.js";
import { readEntries } from "./entries.js";
import { loadMcp, showStatus, showUsage } from "./header.js";
import { ItemList } from "./items.js";
import { onEvent } from "./live.js";
import { state } from "./state.js";
import { extendItem, removeItem, renderItems, scrollDown, showItem } from "./transcript.js";
import { button, el } from "./util.js";
import { refreshSide } from "./versions.js";

/** Starts a new session and opens it, `() => Promise`, set once by app.js (sessions.js). */
let startNew = async () => {};

export function setStartNew(f) {
  startNew = f;
}

/** How often a session another Retrace holds is read again, in ms. */
const HELD_RECHECK_MS = 3000;
let heldTimer = null;
/** The session last shown as held, if any: once it is not, the page says it can go on with it. */
let heldId = null;

/** The snapshot being read, if any, and whether another was asked for meanwhile. */
let loading = null;
let again = false;
/** While a snapshot is read: the events that came meanwhile, `[type, seq, data]`. */
let waiting = null;

/** Closes the open stream (its events are not applied any more). */
export function stopEvents() {
  state.events?.close();
  state.events = null;
}

/**
 * Reads the open session again: its snapshot rendered, its event stream opened after it (unless
 * one is open), the Versions panel if open. Calls made while one runs are answered by one more
 * read after it.
 */
export function reload() {
  if (loading) {
    again = true;
    return loading;
  }
  loading = (async () => {
    try {
      do {
        again = false;
        await loadOnce();
      } while (again);
    } finally {
      loading = null;
    }
  })();
  return loading;
}

async function loadOnce() {
  const id = state.sid;
  if (!id) return;
  waiting = [];
  let snap;
  let came;
  try {
    [snap] = await Promise.all([call("GET", `${s(id)}?include=items`), readEntries()]);
  } catch (e) {
    // what the stream brought meanwhile is lost with the snapshot: the next read starts afresh
    if (id === state.sid) stopEvents();
    // held by another Retrace, and its log cannot be read here either: said plainly
    if (id === state.sid && e instanceof ApiError && e.code === "busy") {
      renderItems([]);
      return showHeld(id, { says: `This session is open in another Retrace, and cannot be read here: ${e.message}` });
    }
    throw e;
  } finally {
    came = waiting;
    waiting = null;
  }
  if (id !== state.sid) return;
  const holder = snap.status.held_by ?? null;
  const wasHeld = heldId === id;
  const after = snap.last_event_seq;
  // what came up to the snapshot is in it, but for what the page only says (a banner, a notice)
  const held = (seq) => seq != null && seq <= after;
  for (const [type, , data] of came.filter(([, seq]) => held(seq))) onEvent(type, data).catch(showError);
  showStatus(snap.status);
  showUsage(snap.usage);
  if (!holder) loadMcp(id);
  state.items = new ItemList(snap.items);
  renderItems(state.items.items());
  showApprovals(snap.pending_approvals);
  setRunning(!!snap.status.running);
  showPlan(!!snap.status.plan_mode);
  if (holder) {
    showHeld(id, holder);
    await refreshSide(false);
    return;
  }
  setHeld(null);
  heldId = null;
  if (wasHeld) say("This session is no longer open in another Retrace: you can go on with it here.");
  if (state.events) {
    for (const [type, seq, data] of came.filter(([, seq]) => !held(seq))) apply(type, data);
  } else {
    connect(id, after);
  }
  await refreshSide(false);
}

/**
 * Shows session `id` as held by another Retrace (`holder`: its `says`): nothing here changes it,
 * no event stream follows it, and it is read again in a while.
 */
function showHeld(id, holder) {
  stopEvents();
  setHeld(holder);
  heldId = id;
  banner("held", el("span", null, holder.says), button("New session", () => attempt(startNew), "primary"));
  clearTimeout(heldTimer);
  heldTimer = setTimeout(() => {
    if (state.sid === id && state.held) reread();
  }, HELD_RECHECK_MS);
}

/** Whether the page said it cannot read the session (and takes that back once it can). */
let lost = false;

/** Reads the session again for the page's own reasons (an event, a stream that came back). */
function reread() {
  const id = state.sid;
  reload().then(found, (e) => failed(id, e, 1000));
}

function found() {
  if (lost) hideBanner();
  lost = false;
}

/**
 * Reading session `id` failed with `e` (the server is down, or answered an error): read it again
 * after `wait` ms, and again, waiting longer, while it fails. A server that no longer knows the page's key (it was restarted) is not asked
 * again: the page says to open the address it printed.
 */
function failed(id, e, wait) {
  if (state.sid !== id) return;
  if (e instanceof ApiError && e.status === 401) {
    banner("error", el("span", null, "The server no longer knows this page (it was restarted): open the address `retrace serve` printed."));
    return;
  }
  if (!lost) banner("error", el("span", null, `Could not read the session (${errorText(e)}): trying again…`));
  lost = true;
  setTimeout(() => {
    if (state.sid !== id) return;
    reload().then(found, (again) => failed(id, again, Math.min(wait * 2, 30000)));
  }, wait);
}

function connect(id, after) {
  let broken = false;
  const es = subscribe(id, after, (type, seq, data) => {
    if (state.events !== es || data === undefined) return;
    if (waiting) waiting.push([type, seq, data]);
    else apply(type, data);
  });
  // The browser reconnects on its own after a network error or the stream's end, resuming after
  // the last event it got; the session is read again then, in case the server is a new one. After
  // an HTTP error (a restarted server refuses the page's old key) it gives up: the page reads the
  // session again itself.
  es.addEventListener("error", () => {
    if (state.events !== es) return;
    if (es.readyState === EventSource.CLOSED) {
      stopEvents();
      reread();
    } else {
      broken = true;
    }
  });
  es.addEventListener("open", () => {
    if (state.events === es && broken) reread();
  });
  state.events = es;
}

/** One event: its effect on the items, then on the rest of the page. */
function apply(type, ev) {
  const done = state.items.apply(type, ev);
  if (done?.reload) reread();
  else if (done?.item) showItem(state.items.get(done.item));
  else if (done?.removed) removeItem(done.removed);
  else if (done?.extended) extendItem(state.items.get(done.extended), done.text, done.reasoning);
  onEvent(type, ev).catch(showError);
  scrollDown();
}
