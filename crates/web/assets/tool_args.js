// What the page reads out of a tool call's raw JSON arguments: its one-line label and the change
// it makes. Temporary: it goes when the server sends each call's label and change; until then
// nothing else should parse tool arguments.
import { lineDiff } from "./legacy_diff.js";

function parse(args) {
  try {
    return JSON.parse(args);
  } catch {
    return null;
  }
}

/** The one-line label of a tool call: its name and its path or command. */
export function toolLabel(name, args) {
  // unparsable arguments are shown raw (below the label)
  const a = parse(args);
  const what = a && (a.path ?? a.command ?? a.pattern ?? "");
  return what ? `${name} ${what}` : name;
}

/**
 * The change a tool call makes as [tag, line] pairs (tag `+`, `-` or ` `): the diff of its edits,
 * or a written file's content as added lines; null when there is none to show.
 */
export function toolChange(name, args) {
  const a = parse(args);
  if (!a || typeof a !== "object") return null;
  const edits =
    name === "edit_file" ? [a] : name === "multi_edit" && Array.isArray(a.edits) ? a.edits : null;
  let lines = [];
  if (edits) {
    for (const e of edits) {
      if (typeof e?.old_string !== "string" || typeof e?.new_string !== "string") continue;
      const d = lineDiff(e.old_string, e.new_string);
      if (!d) return null;
      lines = lines.concat(d);
    }
  } else if (name === "write_file" && typeof a.content === "string") {
    lines = a.content.replace(/\n$/, "").split("\n").map((l) => ["+", l]);
  }
  return lines.length ? lines : null;
}
