// The composer's controls showing what the session is doing: a turn or summary running, plan
// mode, a compaction asked for; and a session another Retrace holds, which is shown read-only.
import { state } from "./state.js";
import { ui } from "./ui.js";

const PROMPT_HINT = ui.prompt.placeholder;
const PLAN_HINT = "Ask for a plan… (plan mode: nothing is changed)";

/**
 * Shows a turn or a summary running (`on`) or not: while it runs, Send gives way to Queue (a
 * prompt is then queued, queue.js) and Cancel shows.
 */
export function setRunning(on) {
  state.running = on;
  ui.cancel.hidden = !on;
  ui.send.disabled = on || !!state.held;
  ui.send.hidden = on && !state.held;
  ui.queue.hidden = !on || !!state.held;
  document.body.classList.toggle("running", on);
  setCompactButton();
}

/** Shows plan mode on or off: the switch, the indicator above the composer, the prompt's hint. */
export function showPlan(on) {
  state.plan = on;
  ui.planMode.checked = on;
  ui.planIndicator.hidden = !on;
  ui.composer.classList.toggle("plan", on);
  if (!state.held) ui.prompt.placeholder = on ? PLAN_HINT : PROMPT_HINT;
}

/**
 * Shows the open session as held by another Retrace (`holder`, its status's `held_by`) or not
 * (null): held, nothing here can change it — the prompt, Send, plan mode, the model and Compact
 * are disabled (its rewind actions come unavailable in its entries).
 */
export function setHeld(holder) {
  state.held = holder ?? null;
  const held = !!state.held;
  document.body.classList.toggle("held", held);
  ui.prompt.disabled = held;
  ui.planMode.disabled = held;
  ui.model.disabled = held;
  ui.prompt.placeholder = held ? "This session is open in another Retrace: start a new session to write here." : state.plan ? PLAN_HINT : PROMPT_HINT;
  setRunning(state.running);
}

// The compact button is never `disabled` (a disabled button drops the keyboard focus): while a
// turn or a summary runs it says so with aria-disabled and does nothing.
export function setCompactButton() {
  const busy = state.compacting || state.running || !state.sid || !!state.held;
  ui.compact.setAttribute("aria-disabled", String(busy));
  ui.compact.setAttribute("aria-busy", String(state.compacting));
  ui.compact.textContent = state.compacting ? "Compacting…" : "Compact";
}
