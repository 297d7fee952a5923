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

/** Whether `name` stands at `i` in `text` as a word of its own (a space or an end on each side). */
function standsAt(text, i, name) {
  const after = text[i + name.length];
  return (i === 0 || text[i - 1] === " ") && (after === undefined || after === " ");
}

/**
 * A title's words after its verb (" a.txt → b.txt") as text and chips: each changed file's name
 * where the title shows it is a chip that opens the file's history.
 */
function titleRest(rest, changes) {
  const names = changes.flatMap((c) => (c.from != null ? [c.from, c.path] : [c.path]));
  const out = [];
  while (rest) {
    let at = -1;
    let name = "";
    for (const n of names) {
      for (let i = rest.indexOf(n); i >= 0; i = rest.indexOf(n, i + 1)) {
        if (!standsAt(rest, i, n)) continue;
        if (at < 0 || i < at || (i === at && n.length > name.length)) [at, name] = [i, n];
        break;
      }
    }
    if (at < 0) {
      out.push(rest);
      break;
    }
    if (at > 0) out.push(rest.slice(0, at));
    out.push(chip(name));
    rest = rest.slice(at + name.length);
  }
  return out;
}

/** The tools that write a file: one that ran and changed nothing wrote it as it was. */
const WRITERS = new Set(["write_file", "edit_file", "multi_edit"]);

/**
 * A tool call's row headline: its title as the controller words it for every frontend (what it
 * does while it runs, what it did once it ran: "Edited calc/ops.py", "Created …", "Moved a → b",
 * "Ran npm test"), its verb stressed and each changed file's name a chip opening its history,
 * then the `+A −R` of its text files (as the terminal UI adds them; none when all are binary, nor
 * for a move that changed no line) or, for a shell command, its exit code and how long it ran. A
 * write that ran and changed nothing ("Wrote a.txt") has its file's chip too, and says
 * "unchanged". A call that changes nothing and runs no command shows its title alone ("Read
 * a.txt"). The elements, in order.
 */
export function toolHeadline(item) {
  const title = item.title ?? item.tool ?? "";
  const changes = item.changes ?? [];
  const command = item.tool === "bash" && item.target != null;
  const unchanged = !changes.length && item.status === "ok" && WRITERS.has(item.tool) && item.target != null;
  if (unchanged) {
    const [verb, rest] = splitVerb(title);
    return [el("span", "verb", verb), ...titleRest(rest, [{ path: item.target }]), " ", el("span", "tool-count", "unchanged")];
  }
  if (!changes.length && !command) return [el("span", "title", title)];
  const [verb, rest] = splitVerb(title);
  const out = [el("span", "verb", verb)];
  if (command && rest === ` ${item.target}`) out.push(" ", el("code", "command", item.target));
  else out.push(...titleRest(rest, changes));
  const counts = changesCount(changes.filter((c) => !c.binary));
  if (counts) out.push(" ", el("span", "tool-count", counts));
  if (command) {
    const code = exitCode(item);
    const facts = [];
    if (code != null) facts.push(`exit ${code}`);
    if (item.duration_ms != null) facts.push(duration(item.duration_ms));
    if (facts.length) out.push(el("span", "tool-count", ` · ${facts.join(" · ")}`));
  }
  return out;
}

/** A title's verb ("Edited") and the rest after it (" a.txt"). */
function splitVerb(title) {
  const space = title.indexOf(" ");
  return space > 0 ? [title.slice(0, space), title.slice(space)] : [title, ""];
}

function chip(path) {
  const b = fileLink(path);
  b.className += " chip";
  return b;
}

/** Whether a change is a move that changed no line: its counts say nothing (not "+0 −0"). */
export function bareMove(c) {
  return c.action === "move" && !c.added && !c.removed;
}

/**
 * The added and removed lines of all the changes: "+3 −1", or "" when there are none (or only
 * moves that changed no line).
 */
export function changesCount(changes) {
  changes = (changes ?? []).filter((c) => !bareMove(c));
  if (!changes.length) return "";
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
  head.append(fileLink(c.path));
  if (!bareMove(c)) head.append(` ${c.binary ? "(binary)" : `(+${c.added} −${c.removed})`}`);
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
