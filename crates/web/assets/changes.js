// What a tool call did to each file, as its item says (`changes`: path, action, line counts and a
// unified diff made once by the server), and the diffs of a restore's plan. The page only colours
// a diff's lines and numbers them from its hunk headers; it never diffs.
import { fileLink } from "./filelink.js";
import { el } from "./util.js";

/** What happened to a file, as a verb in the past: `action` → "created", "modified"… */
export const ACTIONS = { create: "created", modify: "modified", delete: "deleted", move: "moved" };

/**
 * The lines of a unified diff as `[class, line]` pairs: `hunk` for an `@@` line, `add` for `+`,
 * `del` for `-`, `ctx` for context and `meta` for anything else (`\ No newline at end of file`).
 * The line keeps its first character.
 */
export function diffLines(diff) {
  if (!diff) return [];
  const lines = diff.split("\n");
  // a final line break ends the last line; it is not one more empty line
  if (lines[lines.length - 1] === "") lines.pop();
  return lines.map((line) => {
    const c = line[0];
    const cls = line.startsWith("@@") ? "hunk" : c === "+" ? "add" : c === "-" ? "del" : c === " " || line === "" ? "ctx" : "meta";
    return [cls, line];
  });
}

/**
 * The lines of a unified diff with their numbers in the old and in the new file, counted from each
 * hunk's header (`@@ -a,b +c,d @@`): `[class, old, new, line]` (classes as `diffLines`), `old` or
 * `new` null where that side has no such line (and for headers and notes).
 */
export function numberedLines(diff) {
  let oldNo = 0;
  let newNo = 0;
  return diffLines(diff).map(([cls, line]) => {
    switch (cls) {
      case "hunk": {
        const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
        if (m) [oldNo, newNo] = [Number(m[1]), Number(m[2])];
        return [cls, null, null, line];
      }
      case "ctx":
        return [cls, oldNo++, newNo++, line];
      case "del":
        return [cls, oldNo++, null, line];
      case "add":
        return [cls, null, newNo++, line];
      default:
        return [cls, null, null, line];
    }
  });
}

/** A unified diff with its lines coloured and numbered (old, new) in a gutter. */
export function numberedDiff(diff) {
  const pre = el("pre", "tool-diff numbered");
  const num = (n) => (n == null ? "" : String(n)).padStart(5);
  for (const [cls, o, n, line] of numberedLines(diff)) {
    pre.append(el("span", cls, el("span", "ln", `${num(o)} ${num(n)} `), `${line}\n`));
  }
  return pre;
}

/** What a tool call did to a file, as the headline of its row says it: done, and while running. */
const VERBS = {
  create: ["Created", "Creating"],
  modify: ["Edited", "Editing"],
  delete: ["Deleted", "Deleting"],
  move: ["Moved", "Moving"],
};

/** A shell command's exit code: the item's, else the `[exit code N]` line its output ends with. */
export function exitCode(item) {
  if (item.exit_code != null) return item.exit_code;
  const m = /\[exit code (-?\d+)\]\s*$/.exec(item.output ?? "");
  return m ? Number(m[1]) : null;
}

/** A duration in milliseconds: "12 ms", "2.1 s". */
function duration(ms) {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * A tool call's row headline, as the terminal UI says it: "Edited calc/ops.py +3 −0", "Created …",
 * "Deleted …", "Moved a → b" (each name a chip opening the file's history), "Ran `npm test` ·
 * exit 1 · 2.1 s"; any other call by its title. The elements, in order.
 */
export function toolHeadline(item) {
  const running = item.status === "running";
  const changes = (item.changes ?? []).filter((c) => VERBS[c.action]);
  if (changes.length > 0 && item.status !== "failed") {
    const out = [];
    changes.forEach((c, i) => {
      if (i > 0) out.push(el("span", "sep", " · "));
      out.push(el("span", "verb", VERBS[c.action][running ? 1 : 0]), " ");
      if (c.action === "move" && c.from != null) out.push(chip(c.from), " → ");
      out.push(chip(c.path));
      const counts = c.binary ? "binary" : c.added || c.removed || c.action !== "delete" ? `+${c.added} −${c.removed}` : "";
      if (counts) out.push(" ", el("span", "tool-count", counts));
    });
    return out;
  }
  if (item.tool === "bash" && item.target != null) {
    const out = [el("span", "verb", running ? "Running" : "Ran"), " ", el("code", "command", item.target)];
    const code = exitCode(item);
    const facts = [];
    if (code != null) facts.push(`exit ${code}`);
    if (item.duration_ms != null) facts.push(duration(item.duration_ms));
    if (facts.length) out.push(el("span", "tool-count", ` · ${facts.join(" · ")}`));
    return out;
  }
  return [el("span", "title", item.title)];
}

function chip(path) {
  const b = fileLink(path);
  b.className += " chip";
  return b;
}

/** The added and removed lines of all the changes: "+3 −1", or "" when there are none. */
export function changesCount(changes) {
  if (!changes?.length) return "";
  const added = changes.reduce((n, c) => n + (c.added ?? 0), 0);
  const removed = changes.reduce((n, c) => n + (c.removed ?? 0), 0);
  return `+${added} −${removed}`;
}

/**
 * One file's change: its sentence (the file's name opening its history), then its diff with
 * coloured lines (when it has one).
 */
export function changeBlock(c) {
  const head = el("div", "change-head", `${ACTIONS[c.action] ?? c.action} `);
  if (c.action === "move" && c.from != null) head.append(fileLink(c.from), " → ");
  head.append(fileLink(c.path), ` ${c.binary ? "(binary)" : `(+${c.added} −${c.removed})`}`);
  const d = el("div", "change", head);
  const lines = diffLines(c.diff);
  if (lines.length) {
    const pre = el("pre", "tool-diff");
    for (const [cls, line] of lines) pre.append(el("span", cls, `${line}\n`));
    d.append(pre);
  }
  if (c.diff_truncated) d.append(el("div", "muted", "(the diff is cut here; the counts are whole)"));
  if (c.diff_lost) {
    d.append(el("div", "muted", "(diff not kept: lost when the machine stopped; the counts are whole)"));
  }
  return d;
}
