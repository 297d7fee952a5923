// The open session's checkpoint entries (`GET …/checkpoints`): what each turn offers, its actions
// in the order every frontend shows them, each available or not and why. Read with every snapshot,
// when a turn starts or ends, and with the Versions panel; each time, the prompts' menus and
// results and the panel's checkpoint list (each turn's `+A −R`, results and actions) are built
// from them again.
import { call, s } from "./api.js";
import { checkpointItems } from "./checkpoints.js";
import { isOpen, openAgain } from "./menu.js";
import { actionMenu } from "./messages.js";
import { state } from "./state.js";
import { showMenus } from "./transcript.js";
import { turnResults } from "./turns.js";
import { ui } from "./ui.js";
import { focusFirst, hasFocus } from "./util.js";

/** How many reads were asked for: only the latest one's answer is shown. */
let asked = 0;

/** Reads the open session's entries and shows what they offer. */
export async function readEntries() {
  const id = state.sid;
  if (!id) return;
  const n = ++asked;
  const listing = await call("GET", `${s(id)}/checkpoints`);
  if (id !== state.sid || n !== asked) return;
  state.entries = new Map(listing.entries.map((e) => [e.turn, e]));
  showMenus();
  showList(listing.entries);
}

/**
 * The Versions panel's checkpoint list, the focus kept on the same action, results or file of the
 * same turn.
 */
function showList(entries) {
  const a = document.activeElement;
  const focused = hasFocus(ui.checkpoints)
    ? {
        turn: a.closest("li[data-turn]")?.dataset.turn,
        action: a.dataset.action,
        file: a.dataset.file,
        results: !!a.closest(".results"),
        menuOpen: isOpen(a.closest(".cp-actions")),
      }
    : null;
  ui.checkpoints.replaceChildren(...checkpointItems(entries, (e) => actionMenu(e, "cp-actions"), (e) => turnResults(e, "panel")));
  if (!focused) return;
  const li = [...ui.checkpoints.children].find((x) => x.dataset.turn === focused.turn);
  const menu = li?.querySelector(".cp-actions");
  // an open menu stays open, the focus on the same action
  if (focused.menuOpen && menu) {
    openAgain(menu, focused.action);
    if (hasFocus(menu)) return;
  }
  const buttons = li ? [...li.querySelectorAll("button")] : [];
  const same = focused.results
    ? li?.querySelector(":scope > .results > .results-toggle")
    : buttons.find((b) => (focused.action ? b.dataset.action === focused.action : focused.file != null && b.dataset.file === focused.file));
  focusFirst(same, ui.versions);
}
