// Checkpoints and what restoring one does, as the page shows them: the Versions panel's list, a
// rewind's preview (from its plan) and the sentence that reports its result.
import { el, fmtSize } from "./util.js";

/** The Versions panel's checkpoint list (`GET …/checkpoints`'s entries) as `<li>`s. */
export function checkpointItems(entries) {
  return entries.map((c) => {
    const li = el("li", null, el("div", null, el("strong", null, `Turn ${c.turn}`), ` ${c.prompt}`));
    if (c.paths.length) {
      const ul = el("ul", "cp-files");
      for (const p of c.paths) ul.append(el("li", null, el("code", null, p)));
      li.append(ul);
    } else li.append(el("div", "muted", "no file changes"));
    return li;
  });
}

/**
 * A rewind's preview from its plan (`POST …/rewind/prepare`): the dialog's title and `body`
 * elements, `blocked` when something cannot be restored, and the conflicts' choice (a fieldset of
 * radio buttons named `on_conflict`, or null when there is no conflict).
 */
export function rewindPreview(plan, scope, turn) {
  const body = [];
  const unavailable = plan.blockers.filter((b) => b.kind === "unavailable");
  for (const b of unavailable) body.push(el("p", "warn", `Not available: ${b.reason}`));
  if (scope !== "code") body.push(el("p", null, "The conversation goes back to before this prompt: ", el("q", null, plan.prompt)));
  if (scope !== "conversation") {
    if (plan.files.length === 0) body.push(el("p", null, "No file changes to restore."));
    else {
      const t = el("table", "plan-files");
      t.append(el("tr", null, el("th", null, "file"), el("th", null, "action"), el("th", null, "size")));
      for (const f of plan.files) {
        t.append(el("tr", null, el("td", null, el("code", null, f.path)), el("td", null, f.action), el("td", null, fmtSize(f.size))));
      }
      body.push(t);
    }
  }
  let choice = null;
  if (plan.conflicts.length > 0) {
    const fs = el("fieldset", "conflicts", el("legend", null, `${plan.conflicts.length} file(s) changed since Retrace wrote them`));
    for (const c of plan.conflicts) fs.append(el("div", null, el("code", null, c.path), ` — ${c.reason}`));
    for (const [v, label] of [["skip", "Skip them (keep your changes)"], ["overwrite", "Overwrite them"]]) {
      const r = el("input");
      r.type = "radio";
      r.name = "on_conflict";
      r.value = v;
      r.checked = v === "skip";
      fs.append(el("label", null, r, ` ${label}`));
    }
    body.push(fs);
    choice = fs;
  }
  if (scope !== "conversation" && plan.gaps.length > 0) {
    const g = el("div", "warn", el("p", null, "These changes were not tracked; their effects stay:"));
    const ul = el("ul");
    for (const gap of plan.gaps) ul.append(el("li", null, `turn ${gap.turn}: ${gap.tool ?? gap.reason} ${gap.detail ?? gap.path ?? ""}`));
    g.append(ul);
    body.push(g);
  }
  const title = `Restore ${scope === "both" ? "code and conversation" : scope} to before turn ${turn}`;
  return { title, body, blocked: unavailable.length > 0, choice };
}

/** What a restore did to the files, skipped ones included, or plainly that no file changed. */
function filesSaid(result) {
  const done = new Set([...result.files_written, ...result.files_deleted]);
  const skipped = result.conflicts.filter((c) => !done.has(c.path)).length;
  const kept = skipped === 1 ? "1 skipped (kept as it is)" : `${skipped} skipped (kept as they are)`;
  const parts = [];
  if (result.files_written.length > 0) parts.push(`${result.files_written.length} written`);
  if (result.files_deleted.length > 0) parts.push(`${result.files_deleted.length} deleted`);
  if (parts.length === 0) {
    return { changed: false, text: skipped > 0 ? `no file changed — ${kept}` : "no file changed (every file already as it was)" };
  }
  if (skipped > 0) parts.push(kept);
  return { changed: true, text: parts.join(", ") };
}

/** The sentence reporting a committed rewind (`POST …/rewind/commit`'s result). */
export function rewindSaid(result, scope, turn) {
  const files = filesSaid(result);
  return (result.partial
    ? `Restored conversation to before turn ${turn}, but no file was restored (they changed since the preview).`
    : scope === "conversation"
    ? `Restored conversation to before turn ${turn}.`
    : !files.changed && scope === "code"
      ? `Nothing was restored: ${files.text}.`
      : !files.changed
        ? `Restored conversation to before turn ${turn}; ${files.text}.`
        : `Restored ${scope === "both" ? "code and conversation" : "code"} to before turn ${turn}: ${files.text}.`) +
    (result.error ? ` — ${result.error}` : "");
}
