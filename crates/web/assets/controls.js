// The composer's controls showing what the session is doing: a turn or summary running, plan
// mode, a compaction asked for.
import { state } from "./state.js";
import { ui } from "./ui.js";

const PROMPT_HINT = ui.prompt.placeholder;

export function setRunning(on) {
  state.running = on;
  ui.cancel.hidden = !on;
  ui.send.disabled = on;
  document.body.classList.toggle("running", on);
  setCompactButton();
}

/** Shows plan mode on or off: the switch, the indicator above the composer, the prompt's hint. */
export function showPlan(on) {
  state.plan = on;
  ui.planMode.checked = on;
  ui.planIndicator.hidden = !on;
  ui.composer.classList.toggle("plan", on);
  ui.prompt.placeholder = on ? "Ask for a plan… (plan mode: nothing is changed)" : PROMPT_HINT;
}

// The compact button is never `disabled` (a disabled button drops the keyboard focus): while a
// turn or a summary runs it says so with aria-disabled and does nothing.
export function setCompactButton() {
  const busy = state.compacting || state.running || !state.sid;
  ui.compact.setAttribute("aria-disabled", String(busy));
  ui.compact.setAttribute("aria-busy", String(state.compacting));
  ui.compact.textContent = state.compacting ? "Compacting…" : "Compact";
}
