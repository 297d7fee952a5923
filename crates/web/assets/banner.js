// The banner: a toast above the composer saying what an action did, or why it failed. It moves
// nothing in the transcript; while it shows, the transcript can scroll its last row above it.
import { ApiError } from "./api.js";
import { ui } from "./ui.js";
import { el, button, hasFocus, focusFirst } from "./util.js";

// A banner replaced or hidden under the keyboard focus hands it on (its new first button, or the
// composer), rather than dropping it on the page's body.
export function banner(kind, ...kids) {
  const had = hasFocus(ui.banner);
  ui.banner.className = `banner ${kind}`;
  ui.banner.replaceChildren(...kids);
  ui.banner.hidden = false;
  room();
  if (had) focusFirst(ui.banner.querySelector("button"), ui.prompt);
}

/** Room under the transcript's last row for the toast (nothing shown moves). */
function room() {
  ui.transcript.style.paddingBottom = ui.banner.hidden ? "" : `${ui.banner.offsetHeight + 16}px`;
}

export function hideBanner() {
  const had = hasFocus(ui.banner);
  ui.banner.hidden = true;
  ui.banner.replaceChildren();
  room();
  if (had) ui.prompt.focus();
}

/** An info banner saying `text`, with a Dismiss button. */
export function say(text) {
  banner("info", el("span", null, text), button("Dismiss", hideBanner));
}

/** A failure as one line: the API's `code: message`, or the error's message. */
export function errorText(e) {
  return e instanceof ApiError ? `${e.code}: ${e.message}` : String(e?.message ?? e);
}

export function showError(e) {
  banner("error", el("span", null, errorText(e)), button("Dismiss", hideBanner));
}

/** Runs an action, showing its failure in the banner. */
export async function attempt(f) {
  try {
    return await f();
  } catch (e) {
    showError(e);
    return undefined;
  }
}
