// A prompt queued while a turn (or a summary) runs, as the terminal UI queues one: Enter (or
// Queue) keeps it, shown under the transcript with its first line; Edit (or ↑ in an empty prompt
// box) takes it back into the prompt box, Remove (or Esc in the prompt box) drops it; a second one
// joins it on a new line. When the turn ends well it is sent; when the turn fails or is
// cancelled, it goes back into the prompt box. The controller has no queue: only this page keeps
// it, for the session it was typed on — reloading or closing the page, or opening another
// session, drops it.
import { call, s } from "./api.js";
import { attempt } from "./banner.js";
import { setRunning } from "./controls.js";
import { state } from "./state.js";
import { ui } from "./ui.js";
import { button, el } from "./util.js";

/** The prompt queued, and the session it is for; null when none is. */
let queued = null;

/** Sends `prompt` on the open session now (the turn's events may come before the answer). */
export async function sendNow(prompt) {
  // running before the request: the turn's events can come before its answer
  setRunning(true);
  try {
    await call("POST", `${s(state.sid)}/messages`, { prompt });
  } catch (e) {
    setRunning(false);
    throw e;
  }
}

/** The prompt queued, if any. */
export function queuedPrompt() {
  return queued?.sid === state.sid ? queued.text : null;
}

/** Queues `prompt` (after the one queued, on a new line) to be sent when the running job ends. */
export function queue(prompt) {
  const before = queuedPrompt();
  queued = { sid: state.sid, text: before ? `${before}\n${prompt}` : prompt };
  showQueued();
}

/** Drops the queued prompt; whether there was one. */
export function dropQueued() {
  const had = queuedPrompt() != null;
  queued = null;
  showQueued();
  if (had) ui.activity.textContent = "Queued prompt removed (Cancel stops the turn).";
  return had;
}

/**
 * Takes the queued prompt back into the prompt box (before what is typed there), to edit; Enter
 * queues it again. Whether there was one.
 */
export function editQueued() {
  const text = queuedPrompt();
  if (text == null) return false;
  queued = null;
  showQueued();
  const typed = ui.prompt.value;
  ui.prompt.value = typed ? `${text}\n${typed}` : text;
  ui.prompt.focus();
  ui.prompt.setSelectionRange(ui.prompt.value.length, ui.prompt.value.length);
  return true;
}

/** Forgets the queue (another session is opened). */
export function clearQueue() {
  queued = null;
  showQueued();
}

/**
 * The running turn or summary ended (`ok`: it finished well): the queued prompt is sent; when it
 * did not finish, the prompt goes back into the prompt box, saying so.
 */
export async function afterJob(ok) {
  const text = queuedPrompt();
  if (text == null || state.running) return;
  queued = null;
  showQueued();
  if (!ok) {
    backToBox(text);
    ui.activity.textContent = "The turn did not finish: the queued prompt is back in the prompt box.";
    return;
  }
  const sent = await attempt(async () => {
    await sendNow(text);
    return true;
  });
  if (!sent) backToBox(text);
}

function backToBox(text) {
  const typed = ui.prompt.value;
  ui.prompt.value = typed ? `${text}\n${typed}` : text;
}

/** The queued prompt's row under the transcript: its first line, how many follow, Edit and Remove. */
function showQueued() {
  const text = queuedPrompt();
  ui.queued.hidden = text == null;
  if (text == null) return ui.queued.replaceChildren();
  const [first, ...rest] = text.split("\n");
  const more = rest.length === 0 ? "" : rest.length === 1 ? " (+1 line)" : ` (+${rest.length} lines)`;
  const edit = button("Edit", () => editQueued());
  edit.title = "Take the queued prompt back into the prompt box (↑ in an empty prompt box does too)";
  const remove = button("Remove", () => dropQueued());
  remove.title = "Remove the queued prompt (Esc in the prompt box does too)";
  remove.setAttribute("aria-label", "Remove the queued prompt");
  ui.queued.replaceChildren(
    el("span", "queued-mark", "↳ Queued: "),
    el("span", "queued-text", first, more),
    el("span", "queued-actions", edit, remove),
  );
  ui.queued.title = "Sent when the turn ends. Only this page keeps it: reloading or closing the page drops it.";
}
