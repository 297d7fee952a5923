// The Versions panel (beside the transcript; a drawer over it on a narrow screen): the head tree
// and the checkpoint list (entries.js, with each turn's actions). Opening it moves the focus into it; Esc inside closes it and gives the focus back to
// its toggle. Switch and Retire on a head run the actions app.js sets (rewind.js).
import { call, s } from "./api.js";
import { attempt } from "./banner.js";
import { readEntries } from "./entries.js";
import { headTree } from "./heads.js";
import { state } from "./state.js";
import { ui } from "./ui.js";
import { focusFirst, hasFocus } from "./util.js";

/** The actions on a head, `{switchHead(id), retireHead(id)}` returning promises, set once by app.js. */
let actions = { switchHead: async () => {}, retireHead: async () => {} };

export function setHeadActions(a) {
  actions = a;
}

const headActions = {
  switchHead: (id) => attempt(() => actions.switchHead(id)),
  retireHead: (id) => attempt(() => actions.retireHead(id)),
};

/**
 * Renders the panel again if it is open: its heads, and its checkpoints unless `entries` is false
 * (they were just read).
 */
export async function refreshSide(entries = true) {
  if (!ui.versions.hidden) await renderVersions(entries);
}

export async function renderVersions(entries = true) {
  const id = state.sid;
  if (!id) return;
  const [heads] = await Promise.all([call("GET", `${s(id)}/heads`), entries ? readEntries() : null]);
  if (id !== state.sid) return;
  // the focused head (a Switch or Retire button), to focus it again in the new tree
  const focusedHead = hasFocus(ui.heads) ? document.activeElement.closest(".head")?.dataset.head : null;
  // a session another Retrace holds is only shown: no head is switched or retired from here
  ui.heads.replaceChildren(headTree(heads, state.held ? null : headActions));
  if (focusedHead != null) {
    const li = [...ui.heads.querySelectorAll(".head")].find((h) => h.dataset.head === focusedHead);
    focusFirst(li?.querySelector(":scope > .head-actions button"), li?.querySelector(":scope > .head-row"), ui.versions);
  }
}

function showVersions(open) {
  const had = hasFocus(ui.versions);
  ui.versions.hidden = !open;
  document.body.classList.toggle("versions-open", open);
  ui.versionsToggle.setAttribute("aria-expanded", String(open));
  if (open) ui.versions.focus();
  else if (had) ui.versionsToggle.focus();
}

/** Listens to the panel's toggle and keys (once, at start). */
export function installVersions() {
  ui.versionsToggle.addEventListener("click", () =>
    attempt(async () => {
      showVersions(ui.versions.hidden);
      await refreshSide();
    }),
  );
  ui.versionsClose.addEventListener("click", () => showVersions(false));
  ui.versions.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      e.preventDefault();
      showVersions(false);
    }
  });
}
