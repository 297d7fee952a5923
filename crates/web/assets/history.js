// A file's history (SPEC §5.8, `GET …/history?path=P`) as the page words and shows it: each
// version's number, what it is ("turn 3 start", "before a restore", "restored to before turn 2", "undo",
// "now"…), its time, its short hash and size (or "absent"), and a button to restore it, or why it
// cannot be. The server says which versions there are and which can be restored; the page words
// the fields. Touches no page when imported (the unit tests load it in node).
import { el, fmtSize } from "./util.js";

/** What a version is, from its `origin` and `turn`: "turn 3 start", "restored to before turn 2", "now". */
export function versionWhat(v) {
  const t = v.turn;
  switch (v.origin) {
    case "turn_start":
      return t == null ? "a turn's start" : `turn ${t} start`;
    case "turn_end":
      return t == null ? "a turn's end" : `turn ${t} end`;
    case "before_restore":
      return "before a restore";
    case "restore":
      return t == null ? "restored" : `restored to before turn ${t}`;
    case "revert":
      return "reverted";
    case "undo":
      return "undo";
    case "redo":
      return "redo";
    case "now":
      return "now";
    default:
      return String(v.origin);
  }
}

/** The file in that version: "absent", its short hash and size, or that its hash is not known. */
export function versionState(v) {
  if (!v.existed) return "absent";
  if (!v.sha256) return "present (hash not recorded)";
  return v.size == null ? v.sha256.slice(0, 12) : `${v.sha256.slice(0, 12)} ${fmtSize(v.size)}`;
}

/** When, to the second (`2026-12-06T19:40:45.66Z` → `2026-12-06 19:40:45`; times are UTC). */
export function versionTime(v) {
  return v.time ? v.time.slice(0, 19).replace("T", " ") : "";
}

/** Why a version cannot be restored, or "" when it can. */
export function versionWhyNot(v) {
  if (v.restorable) return "";
  return v.reason ? `cannot be restored: ${v.reason}` : "cannot be restored";
}

/** The label of the button that restores a version. */
export const RESTORE_VERSION = "Restore this version";

/**
 * File history `h` as a table, oldest version first: each row its number, what it is, its time,
 * its state and, for a restorable one, a button that runs `restore(version, button)`, else why it
 * cannot be restored.
 */
export function historyTable(h, restore) {
  const t = el("table", "history-versions");
  t.append(el("tr", null, el("th", null, "version"), el("th", null, "what"), el("th", null, "time"), el("th", null, "file"), el("th", null, "")));
  for (const v of h.versions) {
    let last;
    if (v.restorable) {
      last = el("button", "restore-version", RESTORE_VERSION);
      last.type = "button";
      last.setAttribute("aria-label", `${RESTORE_VERSION}: version ${v.version}, ${versionWhat(v)}`);
      last.addEventListener("click", () => restore(v, last));
    } else {
      last = el("span", "why", versionWhyNot(v));
    }
    const row = el("tr", v.origin === "now" ? "now" : null,
      el("td", null, `v${v.version}`),
      el("td", null, versionWhat(v)),
      el("td", "time", versionTime(v)),
      el("td", null, el("code", null, versionState(v))),
      el("td", null, last));
    row.dataset.version = String(v.version);
    t.append(row);
  }
  return t;
}
