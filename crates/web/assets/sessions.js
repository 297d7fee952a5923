// The sessions of the workspace: opening one (its address, then its view), creating one; the
// picker's list is picker.js's.
import { call } from "./api.js";
import { hideBanner } from "./banner.js";
import { showUsage } from "./header.js";
import { loadSessions } from "./picker.js";
import { clearQueue } from "./queue.js";
import { state } from "./state.js";
import { ui } from "./ui.js";
import { reload, stopEvents } from "./view.js";

export async function openSession(id) {
  state.sid = id;
  state.entries = new Map();
  stopEvents();
  showUsage(null);
  clearQueue();
  ui.activity.textContent = "";
  hideBanner();
  ui.select.value = id;
  const url = new URL(location.href);
  url.searchParams.set("session", id);
  history.replaceState(null, "", url);
  await reload();
}

/** Opens `id` after an action moved to it (a rewind or compaction that made a new session). */
export async function switchTo(id) {
  await loadSessions(id);
  await openSession(id);
}

/**
 * Creates a session (with `model`, else the server's; with checkpoint backend `backend`, else the
 * server's) and opens it.
 */
export async function newSession(focus = true, model, backend) {
  const body = {};
  if (model) body.model = model;
  if (backend) body.backend = backend;
  const { session_id } = await call("POST", "/api/sessions", body);
  await switchTo(session_id);
  if (focus) ui.prompt.focus();
}
