// The session picker: the workspace's sessions, each named by its first prompt, when it was last
// used and its turns (words.js `sessionLabel`), read again when a turn ends.
import { call } from "./api.js";
import { ui } from "./ui.js";
import { el } from "./util.js";
import { sessionLabel } from "./words.js";

/** Fills the picker with the workspace's sessions (and `selected`, if not among them). */
export async function loadSessions(selected) {
  const list = await call("GET", "/api/sessions");
  ui.select.replaceChildren(
    ...list.map((e) => {
      const o = el("option", null, sessionLabel(e));
      o.value = e.id;
      o.title = e.first_prompt ?? e.id;
      return o;
    }),
  );
  if (list.length === 0 && !selected) {
    const o = el("option", null, "no sessions yet");
    o.value = "";
    ui.select.append(o);
  }
  if (selected && !list.some((e) => e.id === selected)) {
    const o = el("option", null, "this session");
    o.value = selected;
    ui.select.prepend(o);
  }
  if (selected) ui.select.value = selected;
  return list;
}

