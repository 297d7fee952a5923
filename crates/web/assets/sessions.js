// The sessions of the workspace: the picker, opening one (its address, then its view), creating
// one.
import { call } from "./api.js";
import { hideBanner } from "./banner.js";
import { state } from "./state.js";
import { ui } from "./ui.js";
import { el } from "./util.js";
import { reload, stopEvents } from "./view.js";

/** Fills the picker with the workspace's sessions (and `selected`, if not among them). */
export async function loadSessions(selected) {
  const list = await call("GET", "/api/sessions");
  ui.select.replaceChildren(
    ...list.map((e) => {
      const o = el("option", null, `${e.created_at ?? e.id} · ${e.turns} turns`);
      o.value = e.id;
      return o;
    }),
  );
  if (selected && !list.some((e) => e.id === selected)) {
    const o = el("option", null, selected);
    o.value = selected;
    ui.select.prepend(o);
  }
  return list;
}

export async function openSession(id) {
  state.sid = id;
  state.entries = new Map();
  stopEvents();
  ui.usage.textContent = "";
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

export async function newSession(focus = true) {
  const { session_id } = await call("POST", "/api/sessions", {});
  await switchTo(session_id);
  if (focus) ui.prompt.focus();
}
