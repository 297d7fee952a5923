// A file's name wherever the page shows one (a tool call's changes, a turn's results, a
// checkpoint, a restore's preview): a button that opens the file's history. What opening it does
// is set once by app.js (filehistory.js), so the modules that show names need not import the
// dialog. Touches no page when imported.
import { el } from "./util.js";

/** Opens the history of a file, `(path, button) => void`, set once by app.js. */
let open = () => {};

export function setFileHistory(f) {
  open = f;
}

/** File `path`'s name as a button that opens its history. */
export function fileLink(path) {
  const b = el("button", "file-link", path);
  b.type = "button";
  b.title = "History of this file";
  b.dataset.file = path;
  b.addEventListener("click", () => open(path, b));
  return b;
}
