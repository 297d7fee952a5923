// The actions on a prompt: restore code, conversation or both (through the preview dialog), fork,
// summarize; undo of a restore; and on a head of the Versions panel: switch, retire. The server
// decides what a rewind does (its plan); the page shows the plan, sends the user's choice, reports
// the result and reads the session again.
import { call, s } from "./api.js";
import { attempt, banner, hideBanner, say } from "./banner.js";
import { rewindPreview, rewindSaid } from "./checkpoints.js";
import { closeCommitted, openDialog } from "./dialog.js";
import { switchTo } from "./sessions.js";
import { state } from "./state.js";
import { returnFocus } from "./transcript.js";
import { ui } from "./ui.js";
import { el, button } from "./util.js";
import { renderVersions } from "./versions.js";
import { reload } from "./view.js";

/** The actions on each prompt, in the order they show: `[label, (turn, opener) => Promise]`. */
export const TURN_ACTIONS = [
  ["Restore code", (t, b) => rewind(t, "code", b)],
  ["Restore conversation", (t, b) => rewind(t, "conversation", b)],
  ["Restore both", (t, b) => rewind(t, "both", b)],
  ["Fork from here", (t, b) => fork(t, b)],
  ["Summarize from here", (t, b) => summarize(t, "from", b)],
  ["Summarize up to here", (t, b) => summarize(t, "up_to", b)],
];

async function rewind(turn, scope, opener) {
  const plan = await call("POST", `${s(state.sid)}/rewind/prepare`, { turn, scope });
  const { title, body, blocked, choice } = rewindPreview(plan, scope, turn);
  openDialog(title, body, blocked, opener, turn, async () => {
    const on_conflict = choice ? choice.querySelector("input:checked").value : "refuse";
    const result = await call("POST", `${s(state.sid)}/rewind/commit`, {
      plan_id: plan.plan_id,
      confirm: true,
      on_conflict,
    });
    closeCommitted();
    await afterRewind(result, scope, turn, opener);
  });
}

async function afterRewind(result, scope, turn, opener) {
  if (result.session_id !== state.sid) await switchTo(result.session_id);
  else await reload();
  const kids = [el("span", null, rewindSaid(result, scope, turn))];
  const undoButton = result.undo_available ? button("Undo", () => attempt(() => undo(result.transaction_id)), "undo") : null;
  if (undoButton) kids.push(undoButton);
  kids.push(button("Dismiss", hideBanner));
  banner(result.ok && !result.partial ? "info" : "error", ...kids);
  if (scope !== "code") {
    // the prompt comes back into the composer, and the focus with it
    ui.prompt.value = result.prompt;
    ui.prompt.focus();
  } else {
    returnFocus(opener, turn, undoButton);
  }
}

async function undo(transaction_id) {
  const result = await call("POST", `${s(state.sid)}/undo`, transaction_id ? { transaction_id } : {});
  await reload();
  say("Undone.");
  return result;
}

async function fork(turn, opener) {
  await call("POST", `${s(state.sid)}/fork`, { turn });
  await reload();
  say(`Forked from turn ${turn}.`);
  // the fork's transcript ends before this prompt: the focus goes to the composer
  returnFocus(opener, turn);
}

async function summarize(turn, direction, opener) {
  banner("info", el("span", null, "Summarizing…"));
  await call("POST", `${s(state.sid)}/summarize`, { turn, direction });
  await reload();
  say("Summary written to a new head.");
  returnFocus(opener, turn);
}

/** The actions on a head (versions.js `setHeadActions`). */
export const HEAD_ACTIONS = {
  async switchHead(head) {
    await call("POST", `${s(state.sid)}/switch`, { head });
    await reload(); // the panel too
  },
  async retireHead(head) {
    await call("POST", `${s(state.sid)}/retire`, { head });
    await renderVersions();
  },
};
