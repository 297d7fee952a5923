// The actions on a prompt or a checkpoint, as its entry offers them (`GET …/checkpoints`): a
// restore (`preview: true`: its plan prepared and shown in the preview dialog before anything is
// committed), fork, summarize; a version of a file's history restored, through the same preview;
// undo of a restore, and redo of what was undone; and on a head of the Versions panel: switch,
// retire. The server decides what each does and whether it can; the page shows the plan, sends
// the user's choice, reports the result and reads the session again.
import { call, s } from "./api.js";
import { anchorBanner, attempt, banner, hideBanner, say } from "./banner.js";
import { revertSaid, rewindPreview, rewindSaid, walkSaid } from "./checkpoints.js";
import { closeCommitted, openDialog } from "./dialog.js";
import { forkIntoWorkspace } from "./forkspace.js";
import { switchTo } from "./sessions.js";
import { state } from "./state.js";
import { promptRow, returnFocus } from "./transcript.js";
import { ui } from "./ui.js";
import { el, button } from "./util.js";
import { renderVersions } from "./versions.js";
import { beforeTurn } from "./words.js";
import { reload } from "./view.js";

/** The rewind scope (`POST …/rewind/prepare`) of each restore action. */
const SCOPES = { restore_both: "both", restore_conversation: "conversation", restore_code: "code" };

/**
 * Runs `action` (an entry's, `{action, label, preview}`) on turn `turn`, started from the button
 * `opener`.
 */
export async function runTurnAction(action, turn, opener) {
  if (action.preview) {
    const scope = SCOPES[action.action];
    if (!scope) throw new Error(`This page cannot preview “${action.label}”.`);
    return rewind(turn, scope, action.label, opener);
  }
  switch (action.action) {
    case "fork":
      return confirmThen(action.label, turn, opener, FORK_SAYS, () => fork(turn, opener));
    case "summarize_from":
      return confirmThen(action.label, turn, opener, SUMMARIZE_FROM_SAYS, () => summarize(turn, "from", opener));
    case "summarize_up_to":
      return confirmThen(action.label, turn, opener, SUMMARIZE_UP_TO_SAYS, () => summarize(turn, "up_to", opener));
    case "fork_workspace":
      return forkIntoWorkspace(action.label, turn, opener);
    default:
      throw new Error(`This page cannot run “${action.label}”.`);
  }
}

const FORK_SAYS =
  "A new head is made whose conversation ends just before this prompt, and it is selected. " +
  "The current head stays in Versions; no file changes.";
const SUMMARIZE_FROM_SAYS =
  "The model summarizes the conversation from this prompt on; the summary ends a new head, which is selected. " +
  "The full conversation stays in Versions; no file changes.";
const SUMMARIZE_UP_TO_SAYS =
  "The model summarizes the conversation before this prompt; the summary starts a new head, which is selected. " +
  "The full conversation stays in Versions; no file changes.";

/**
 * Asks before action `label` on turn `turn` runs (in the dialog: what it does, `says`; Confirm
 * runs `run()`, Cancel gives the focus back to `opener`).
 */
function confirmThen(label, turn, opener, says, run) {
  const ask = {
    title: `${label} (${beforeTurn(turn)})?`,
    body: [el("p", null, says)],
    commit: () => ({ ready: true, text: label }),
    onChange() {},
  };
  openDialog(ask, opener, turn, async () => {
    closeCommitted();
    await run();
  });
}

async function rewind(turn, scope, label, opener) {
  const plan = await call("POST", `${s(state.sid)}/rewind/prepare`, { turn, scope });
  const loadDiff = (path) =>
    call("GET", `${s(state.sid)}/plans/${encodeURIComponent(plan.plan_id)}/diff?path=${encodeURIComponent(path)}`);
  openDialog(rewindPreview(plan, label, turn, loadDiff), opener, turn, async ({ on_conflict, confirm }) => {
    const result = await call("POST", `${s(state.sid)}/rewind/commit`, { plan_id: plan.plan_id, confirm, on_conflict });
    closeCommitted();
    await afterRewind(result, plan.scope, turn, opener);
  });
}

/**
 * Restores version `version` (a `HistoryVersion`, worded `what`) of file `path` through the
 * preview: its one-file plan (`POST …/revert/prepare {path, version}`) shown with its diff, then
 * committed as a file revert (`POST …/revert/commit`), undoable. `prepared()` is called once the
 * plan is made, before the preview opens. A revert's commit overwrites a conflicted file or
 * refuses; the plan offers only those two choices (keeping the file as it is is Cancel).
 */
export async function restoreVersion(path, version, what, label, opener, prepared) {
  const plan = await call("POST", `${s(state.sid)}/revert/prepare`, { path, version: version.version });
  prepared?.();
  const loadDiff = (p) =>
    call("GET", `${s(state.sid)}/plans/${encodeURIComponent(plan.plan_id)}/diff?path=${encodeURIComponent(p)}`);
  const named = `version ${version.version} (${what})`;
  const preview = rewindPreview(plan, label, plan.turn, loadDiff, { title: `Restore ${path} to ${named}` });
  openDialog(preview, opener, null, async ({ on_conflict, confirm }) => {
    const result = await call("POST", `${s(state.sid)}/revert/commit`, {
      plan_id: plan.plan_id,
      overwrite: on_conflict === "overwrite",
      confirm,
    });
    closeCommitted();
    await reload();
    const undoButton = restored(result, revertSaid(result, path, named), "code");
    returnFocus(opener, null, undoButton);
  });
}

/**
 * What the composer held before a conversation restore put its prompt there, and that prompt: an
 * undo of the restore puts the draft back while the composer still holds the prompt.
 */
let draft = null;

/** Puts turn's `prompt` into the composer (a conversation restored), keeping what it held. */
function promptBack(prompt) {
  if (ui.prompt.value !== prompt) draft = { was: ui.prompt.value, prompt };
  ui.prompt.value = prompt;
}

/** After an undo of a conversation restore: the composer as it was before it, unless edited since. */
function draftBack() {
  if (draft && ui.prompt.value === draft.prompt) ui.prompt.value = draft.was;
  draft = null;
}

/**
 * Says what a committed restore of scope `scope` did (`text`), offering its undo (when the result
 * says one takes it back: never for a restore that changed nothing): the Undo button, if any.
 */
function restored(result, text, scope) {
  const kids = [el("span", null, text)];
  const undoButton = result.undo_available ? button("Undo", () => attempt(() => undo(result.transaction_id, scope)), "undo") : null;
  if (undoButton) kids.push(undoButton);
  kids.push(button("Dismiss", hideBanner));
  banner(result.ok && !result.partial ? "info" : "error", ...kids);
  return undoButton;
}

async function afterRewind(result, scope, turn, opener) {
  if (result.session_id !== state.sid) await switchTo(result.session_id);
  else await reload();
  const undoButton = restored(result, rewindSaid(result, scope, turn), scope);
  if (scope !== "code") {
    // the prompt comes back into the composer, and the focus with it
    promptBack(result.prompt);
    ui.prompt.focus();
  } else {
    // the prompt stays where it was: the banner goes by it
    anchorBanner(promptRow(turn));
    returnFocus(opener, turn, undoButton);
  }
}

/** Undoes the restore of scope `scope` (transaction `transaction_id`) and says what it did. */
async function undo(transaction_id, scope) {
  const result = await call("POST", `${s(state.sid)}/undo`, transaction_id ? { transaction_id } : {});
  await reload();
  // the prompt a conversation restore put into the composer goes again
  if (scope !== "code") draftBack();
  // the server says whether the undone rewind can be applied again
  const kids = [el("span", null, walkSaid(result, "Undone", scope))];
  if (result.redo_available) kids.push(button("Redo", () => attempt(() => redo(scope)), "redo"));
  kids.push(button("Dismiss", hideBanner));
  banner("info", ...kids);
  return result;
}

/** Redoes the undone restore of scope `scope` and says what it did. */
async function redo(scope) {
  const result = await call("POST", `${s(state.sid)}/redo`, {});
  await reload();
  if (scope !== "code" && result.prompt) promptBack(result.prompt);
  const kids = [el("span", null, walkSaid(result, "Redone", scope))];
  if (result.undo_available) kids.push(button("Undo", () => attempt(() => undo(result.transaction_id, scope)), "undo"));
  kids.push(button("Dismiss", hideBanner));
  banner("info", ...kids);
  return result;
}

async function fork(turn, opener) {
  await call("POST", `${s(state.sid)}/fork`, { turn });
  await reload();
  say(`Forked: a new head ends ${beforeTurn(turn)}; the previous one is in Versions.`);
  // the fork's transcript ends before this prompt: the focus goes to the composer
  returnFocus(opener, turn);
}

async function summarize(turn, direction, opener) {
  banner("info", el("span", null, "Summarizing…"));
  await call("POST", `${s(state.sid)}/summarize`, { turn, direction });
  await reload();
  say("Summary written: a new head is selected; the full conversation is in Versions.");
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
