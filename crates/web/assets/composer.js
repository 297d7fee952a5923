// The composer: send a prompt (queue it while a turn runs: queue.js), cancel the running turn,
// plan mode, compact; and the session picker's controls beside it.
import { call, s } from "./api.js";
import { attempt, banner } from "./banner.js";
import { setCompactButton, showPlan } from "./controls.js";
import { dropQueued, editQueued, queue, queuedPrompt, sendNow } from "./queue.js";
import { newSession, openSession, switchTo } from "./sessions.js";
import { state } from "./state.js";
import { ui } from "./ui.js";
import { el } from "./util.js";
import { reload } from "./view.js";

async function send() {
  const prompt = ui.prompt.value;
  if (!prompt.trim() || state.held) return;
  if (state.running && state.sid) {
    // sent when the turn ends
    queue(prompt);
    ui.prompt.value = "";
    return;
  }
  if (!state.sid) await newSession();
  await sendNow(prompt);
  ui.prompt.value = "";
}

async function setPlan(on) {
  try {
    if (state.held) throw new Error("This session is open in another Retrace: plan mode cannot be changed here.");
    if (!state.sid) await newSession(false);
    const status = await call("POST", `${s(state.sid)}/plan`, { on });
    showPlan(!!status.plan_mode);
  } catch (e) {
    showPlan(state.plan);
    throw e;
  }
}

async function compact() {
  if (!state.sid || state.compacting || state.running || state.held) return;
  state.compacting = true;
  setCompactButton();
  // the `compacted` event says what it did (live.js), in place of this
  banner("info", el("span", null, "Compacting: the model is summarizing the conversation before the latest turn…"));
  try {
    const r = await call("POST", `${s(state.sid)}/compact`, {});
    if (r.session_id !== state.sid) await switchTo(r.session_id);
    else await reload();
  } finally {
    state.compacting = false;
    setCompactButton();
  }
}

/** Listens to the composer's and the picker's controls (once, at start). */
export function installComposer() {
  ui.prompt.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      attempt(send);
    } else if (e.key === "Escape" && queuedPrompt() != null) {
      e.preventDefault();
      dropQueued();
    } else if (e.key === "ArrowUp" && !ui.prompt.value && queuedPrompt() != null) {
      e.preventDefault();
      editQueued();
    }
  });
  ui.send.addEventListener("click", () => attempt(send));
  ui.queue.addEventListener("click", () => attempt(send));
  ui.cancel.addEventListener("click", () => attempt(() => call("POST", `${s(state.sid)}/cancel`, {})));
  ui.newSession.addEventListener("click", () => attempt(newSession));
  ui.select.addEventListener("change", () => attempt(() => openSession(ui.select.value)));
  ui.compact.addEventListener("click", () => attempt(compact));
  ui.planMode.addEventListener("change", () => attempt(() => setPlan(ui.planMode.checked)));
}
