// The sessions of the workspace: the picker, opening one (its address, status, transcript and
// event stream), creating one.
import { call, s, subscribe } from "./api.js";
import { hideBanner, showError } from "./banner.js";
import { setRunning, showPlan } from "./controls.js";
import { onEvent } from "./live.js";
import { state } from "./state.js";
import { renderTranscript } from "./transcript.js";
import { ui } from "./ui.js";
import { el } from "./util.js";
import { renderVersions } from "./versions.js";

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

function connectEvents() {
  const es = subscribe(state.sid, state.lastSeq, (type, seq, data) => {
    if (state.events !== es) return;
    if (seq != null) state.lastSeq = seq;
    if (data === undefined) return;
    onEvent(type, data).catch(showError);
  });
  state.events = es;
}

export async function openSession(id) {
  state.sid = id;
  if (state.events) state.events.close();
  state.events = null;
  state.live = null;
  state.notes = new Map();
  ui.usage.textContent = "";
  hideBanner();
  ui.select.value = id;
  const url = new URL(location.href);
  url.searchParams.set("session", id);
  history.replaceState(null, "", url);
  const status = await call("GET", s(id));
  state.lastSeq = status.last_event_seq;
  setRunning(!!status.running);
  showPlan(!!status.plan_mode);
  await renderTranscript();
  connectEvents();
  if (!ui.versions.hidden) await renderVersions();
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
