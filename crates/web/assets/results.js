// A turn's results (SPEC §5.7, `GET …/turns/{n}/results`) as the page words and shows them: the
// summary ("2 files +5 −1 · 1 command"), each file changed (its `+A −R` opening its diff, numbered
// and coloured as in the restore preview; a binary one's sizes; why one cannot be shown), the
// shell commands with their exit codes and durations, what was not captured. The server diffs
// and counts; the page only adds up a turn's per-file counts and words what the fields say.
// Touches no page when imported (the unit tests load it in node).
import { ACTIONS, bareMove, numberedDiff } from "./changes.js";
import { fileLink } from "./filelink.js";
import { el, fmtSize } from "./util.js";

const plural = (n, one, many) => (n === 1 ? `1 ${one}` : `${n} ${many}`);

/**
 * A turn's results in a line: `files` changed (a count), `added` and `removed` lines when known
 * (null: not recorded; none shown when both are 0: a turn that only moved files or wrote them
 * unchanged), `commands` when known — "2 files +5 −1 · 1 command", "no file changes".
 */
export function resultsSummary({ files, added, removed, commands }) {
  const parts = [];
  if (!files) parts.push("no file changes");
  else if (added == null || (!added && !removed)) parts.push(plural(files, "file", "files"));
  else parts.push(`${plural(files, "file", "files")} +${added} −${removed ?? 0}`);
  if (commands) parts.push(plural(commands, "command", "commands"));
  return parts.join(" · ");
}

/** What a checkpoint entry (`GET …/checkpoints`) says of its turn's results, before they are read. */
export function entryCounts(e) {
  return { files: e.file_count ?? e.paths?.length ?? 0, added: e.added ?? null, removed: e.removed ?? null };
}

/** What a turn's results count: the files, their lines added and removed, the commands. */
export function resultsCounts(r) {
  return {
    files: r.files.length,
    added: r.files.reduce((n, f) => n + (f.added ?? 0), 0),
    removed: r.files.reduce((n, f) => n + (f.removed ?? 0), 0),
    commands: r.commands.length,
  };
}

/** A side of a binary file: its size, or "absent". */
const sideSize = (v) => (v?.size == null ? "absent" : fmtSize(v.size));

/**
 * What a file's change shows besides its name: "+3 −1", "binary, 3 B → absent", or why it cannot
 * be shown ("no diff: …"); "" for a move that changed no line.
 */
export function fileDetail(f) {
  if (f.unknown) return `no diff: ${f.unknown}`;
  if (f.binary) return `binary, ${sideSize(f.before)} → ${sideSize(f.after)}`;
  if (bareMove(f)) return "";
  return `+${f.added} −${f.removed}`;
}

/** A duration in milliseconds: "12 ms", "1.5 s". */
export function durationText(ms) {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** How a command ended: "exit 0 · 12 ms", "cancelled", "exit 2". */
export function commandEnd(c) {
  const how = c.exit_code != null ? `exit ${c.exit_code}` : c.status;
  return c.duration_ms != null ? `${how} · ${durationText(c.duration_ms)}` : how;
}

/** A gap (what a checkpoint, a tool call or a turn could not capture) in a few words: its `says`. */
export function gapText(g) {
  return g.says;
}

export function gapList(gaps, title = "Not restorable:") {
  const ul = el("ul", "gaps");
  for (const g of gaps) ul.append(el("li", null, gapText(g)));
  return el("div", "warn", title, ul);
}

/**
 * A button saying `label` that shows or hides `target` (hidden at first), filled by `fill()` the
 * first time it opens.
 */
function disclosure(label, cls, target, fill) {
  const b = el("button", cls, label);
  b.type = "button";
  b.setAttribute("aria-expanded", "false");
  target.hidden = true;
  let filled = false;
  b.addEventListener("click", () => {
    if (!filled) fill();
    filled = true;
    target.hidden = !target.hidden;
    b.setAttribute("aria-expanded", String(!target.hidden));
  });
  return b;
}

/** One file of a turn's results: what happened to it, its name, its detail (opening its diff). */
function fileItem(f) {
  const li = el("li", "result-file");
  li.dataset.file = f.path;
  li.append(`${ACTIONS[f.action] ?? f.action} `);
  if (f.action === "move" && f.from != null) li.append(fileLink(f.from), " → ");
  li.append(fileLink(f.path), " ");
  if (!f.diff) {
    const detail = fileDetail(f);
    if (detail) li.append(el("span", "result-detail", `(${detail})`));
    return li;
  }
  const diff = el("div", "result-diff");
  const toggle = disclosure(fileDetail(f), "diff-toggle", diff, () => {
    diff.append(numberedDiff(f.diff));
    if (f.diff_truncated) diff.append(el("p", "muted", "The diff is cut here; the counts are whole."));
  });
  toggle.title = "What the turn did to this file";
  li.append(toggle, diff);
  return li;
}

/** A command of a turn's results: the command line, how it ended. */
function commandItem(c) {
  const li = el("li", `result-command ${c.status}`);
  li.append(el("code", null, c.command), ` → ${commandEnd(c)}`);
  return li;
}

/** A turn's results (`TurnResults`) as elements: its files, its commands, what it missed. */
export function resultsBody(r) {
  const out = [];
  if (r.files.length === 0) out.push(el("p", "muted", "No file changed."));
  else {
    const ul = el("ul", "result-files");
    for (const f of r.files) ul.append(fileItem(f));
    out.push(ul);
  }
  if (r.commands.length > 0) {
    const ul = el("ul", "result-commands");
    for (const c of r.commands) ul.append(commandItem(c));
    out.push(el("div", "result-label", "Commands"), ul);
  }
  if (r.gaps?.length) out.push(gapList(r.gaps, "Not captured:"));
  return out;
}

/**
 * A turn's results as a disclosure: a button saying `summary` (what its checkpoint entry counts)
 * that shows or hides them, read with `load()` (a promise of its `TurnResults`) when first opened,
 * and again when opened after a failed read; read, the button says what the results count.
 * `open`: opened at once (it was open before the page showed it again); `onToggle(open)` hears
 * each opening and closing.
 */
export function resultsSection(summary, load, { open = false, onToggle } = {}) {
  const label = el("span", "results-summary", summary);
  const caret = el("span", "results-caret", "▸ ");
  caret.setAttribute("aria-hidden", "true");
  const toggle = el("button", "results-toggle", caret, label);
  toggle.type = "button";
  toggle.title = "What the turn did";
  toggle.setAttribute("aria-expanded", "false");
  const body = el("div", "results-body");
  body.hidden = true;
  const box = el("div", "results", toggle, body);
  let read = false;
  const fill = async () => {
    read = true;
    body.replaceChildren(el("p", "muted", "Reading the turn's results…"));
    try {
      const r = await load();
      body.replaceChildren(...resultsBody(r));
      label.textContent = resultsSummary(resultsCounts(r));
    } catch (e) {
      read = false;
      body.replaceChildren(el("p", "warn", `The results cannot be read: ${e?.message ?? e}`));
    }
  };
  const show = (on) => {
    body.hidden = !on;
    toggle.setAttribute("aria-expanded", String(on));
    caret.textContent = on ? "▾ " : "▸ ";
    if (on && !read) fill();
  };
  toggle.addEventListener("click", () => {
    show(body.hidden);
    onToggle?.(!body.hidden);
  });
  if (open) show(true);
  return box;
}
