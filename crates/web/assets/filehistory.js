// A file's history in a modal dialog, opened from any file name the page shows (filelink.js): its
// versions (`GET …/history?path=P`, SPEC §5.8) oldest first, each restorable one with a button
// that restores it through the preview (rewind.js `restoreVersion`), the others saying why not.
// Esc or Close closes it and gives the focus back to the name that opened it. Opened from the
// preview (a file of a plan), it shows on top; a version restored from it takes that preview's
// place. A failure to read the history or to prepare a restore is said inside the dialog.
import { call, s } from "./api.js";
import { errorText, showError } from "./banner.js";
import { trapTab } from "./dialog.js";
import { historyTable, RESTORE_VERSION, versionWhat } from "./history.js";
import { restoreVersion } from "./rewind.js";
import { state } from "./state.js";
import { ui } from "./ui.js";
import { el, focusFirst } from "./util.js";

/** The name that opened the dialog, and how many openings there were (only the latest is shown). */
const shown = { opener: null, asked: 0 };

function sayError(text) {
  ui.historyError.textContent = text;
  ui.historyError.hidden = false;
}

/** Opens file `path`'s history, from the button `opener`. */
export async function openHistory(path, opener) {
  const n = ++shown.asked;
  const sid = state.sid;
  shown.opener = opener;
  ui.historyTitle.textContent = `History of ${path}`;
  ui.historyBody.replaceChildren(el("p", "muted", "Reading the file's history…"));
  ui.historyError.hidden = true;
  ui.historyError.textContent = "";
  if (!ui.history.open) ui.history.showModal();
  ui.historyClose.focus();
  let h;
  try {
    h = await call("GET", `${s(sid)}/history?path=${encodeURIComponent(path)}`);
  } catch (e) {
    if (n === shown.asked) {
      ui.historyBody.replaceChildren();
      sayError(`The history cannot be read: ${errorText(e)}`);
    }
    return;
  }
  if (n !== shown.asked || !ui.history.open || sid !== state.sid) return;
  ui.historyBody.replaceChildren(
    el("p", "muted", "Oldest first; times are UTC."),
    historyTable(h, (v, b) => restore(h.path, v, b)),
  );
  if (document.activeElement === ui.historyClose) focusFirst(ui.historyBody.querySelector("button"), ui.historyClose);
}

/** Restores version `v` of `path` (its button `b`): the history closes once the plan is made. */
async function restore(path, v, b) {
  b.disabled = true;
  ui.historyError.hidden = true;
  try {
    await restoreVersion(path, v, versionWhat(v), RESTORE_VERSION, shown.opener, () => ui.history.close());
  } catch (e) {
    b.disabled = false;
    if (!ui.history.open) return showError(e);
    // the plan could not be made: the dialog is still open, and says why
    sayError(errorText(e));
    focusFirst(b, ui.historyClose);
  }
}

/** Listens to the dialog's Close button and keys (once, at start). */
export function installHistory() {
  ui.historyClose.addEventListener("click", () => ui.history.close());
  trapTab(ui.history);
  ui.history.addEventListener("close", () => {
    const { opener } = shown;
    shown.opener = null;
    shown.asked++;
    // back to the name that opened it, unless the focus went on (to a restore's preview)
    const a = document.activeElement;
    if (!a || a === document.body || ui.history.contains(a)) focusFirst(opener, ui.prompt);
  });
}
