// The banner: a toast saying what an action did, or why it failed, above the composer — or, for a
// restore of files chosen from a prompt's menu, just under that prompt (`anchorBanner`), by the
// action that caused it. It moves nothing in the transcript; while it shows above the composer,
// the transcript can scroll its last row above it.
import { ApiError } from "./api.js";
import { ui } from "./ui.js";
import { el, button, hasFocus, focusFirst } from "./util.js";

// A banner replaced or hidden under the keyboard focus hands it on (its new first button, or the
// composer), rather than dropping it on the page's body.
export function banner(kind, ...kids) {
  const had = hasFocus(ui.banner);
  ui.banner.className = `banner ${kind}`;
  ui.banner.style.top = "";
  ui.banner.replaceChildren(...kids);
  ui.banner.hidden = false;
  room();
  if (had) focusFirst(ui.banner.querySelector("button"), ui.prompt);
}

/** Room under the transcript's last row for the toast (nothing shown moves). */
function room() {
  const above = !ui.banner.hidden && !ui.banner.classList.contains("anchored");
  ui.transcript.style.paddingBottom = above ? `${ui.banner.offsetHeight + 16}px` : "";
}

/**
 * Moves the banner just under `row` (the prompt whose menu started the action) when that row is in
 * view and the banner fits under it there; else it stays above the composer.
 */
export function anchorBanner(row) {
  const layout = ui.banner.offsetParent;
  if (!row?.isConnected || !layout || ui.banner.hidden) return;
  const r = row.getBoundingClientRect();
  const view = ui.transcript.getBoundingClientRect();
  const top = r.bottom + 6;
  if (r.bottom < view.top || top + ui.banner.offsetHeight > view.bottom - 8) return;
  ui.banner.classList.add("anchored");
  ui.banner.style.top = `${top - layout.getBoundingClientRect().top}px`;
  room();
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
