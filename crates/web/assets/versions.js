// The Versions panel: the head tree (switch, retire) and the checkpoint list. Opening it moves the
// focus into it; Esc inside closes it and gives the focus back to its toggle.
import { call, s } from "./api.js";
import { attempt } from "./banner.js";
import { checkpointItems } from "./checkpoints.js";
import { headTree } from "./heads.js";
import { state } from "./state.js";
import { renderTranscript } from "./transcript.js";
import { ui } from "./ui.js";
import { focusFirst, hasFocus } from "./util.js";

/** Renders the panel again if it is open. */
export async function refreshSide() {
  if (!ui.versions.hidden) await renderVersions();
}

/** Renders the transcript again, then the panel if it is open. */
export async function reload() {
  await renderTranscript();
  await refreshSide();
}

const headActions = {
  switchHead: (id) => attempt(() => switchHead(id)),
  retireHead: (id) => attempt(() => retireHead(id)),
};

export async function renderVersions() {
  const id = state.sid;
  if (!id) return;
  const [heads, cps] = await Promise.all([
    call("GET", `${s(id)}/heads`),
    call("GET", `${s(id)}/checkpoints`),
  ]);
  if (id !== state.sid) return;
  // the focused head (a Switch or Retire button), to focus it again in the new tree
  const focusedHead = hasFocus(ui.heads) ? document.activeElement.closest(".head")?.dataset.head : null;
  ui.heads.replaceChildren(headTree(heads, headActions));
  if (focusedHead != null) {
    const li = [...ui.heads.querySelectorAll(".head")].find((h) => h.dataset.head === focusedHead);
    focusFirst(li?.querySelector(":scope > .head-actions button"), li?.querySelector(":scope > .head-row"), ui.versions);
  }
  ui.checkpoints.replaceChildren(...checkpointItems(cps.entries));
}

async function switchHead(head) {
  await call("POST", `${s(state.sid)}/switch`, { head });
  await renderTranscript();
  await renderVersions();
}

async function retireHead(head) {
  await call("POST", `${s(state.sid)}/retire`, { head });
  await renderVersions();
}

function showVersions(open) {
  const had = hasFocus(ui.versions);
  ui.versions.hidden = !open;
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
  ui.versions.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      e.preventDefault();
      showVersions(false);
    }
  });
}
