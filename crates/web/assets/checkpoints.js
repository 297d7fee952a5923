// Checkpoints and what restoring one does, as the page shows them: the actions a checkpoint entry
// offers (`GET …/checkpoints`: each with its label, whether it is available and why not), the
// Versions panel's list, a rewind's preview (from its plan: its blockers, its conflict choices and
// what each does to each file, each file's diff) and the sentence that reports its result. The
// server decides all of it; nothing here says what is possible.
import { numberedDiff } from "./changes.js";
import { fileLink } from "./filelink.js";
import { count, el, fmtSize } from "./util.js";
import { beforeTurn, turnName } from "./words.js";

/**
 * The buttons of a checkpoint entry's `actions`, in their order, with their labels: `run(action,
 * button)` on a click. What each does (its `detail`) is its tooltip, its accessible description
 * and its `data-explain`, which a menu shows under its items for the one highlighted (menu.js),
 * and a line of its own under its label on a phone (style.css). An unavailable one is disabled
 * and says why (its title and its text).
 */
export function actionButtons(actions, run) {
  return actions.map((a) => {
    const b = el("button", null, el("span", "label", a.label));
    // What it does, in the controller's words.
    if (a.detail) {
      b.title = a.detail;
      b.setAttribute("aria-description", a.detail);
      b.dataset.explain = a.detail;
      const line = el("span", "detail", a.detail);
      line.setAttribute("aria-hidden", "true");
      b.append(line);
    }
    b.type = "button";
    b.dataset.action = a.action;
    if (a.available) {
      b.addEventListener("click", () => run(a, b));
    } else {
      const why = a.reason ?? "not available";
      b.disabled = true;
      b.title = why;
      b.append(el("span", "why", ` — ${why}`));
    }
    return b;
  });
}

/**
 * The Versions panel's checkpoint list (`GET …/checkpoints`'s entries) as `<li>`s, each with the
 * turn's `+A −R` when the entry has them and they are not both 0, its files (each name opening its history), its results
 * (`resultsOf(entry)`: an element, or null) and its actions (`actionsOf(entry)`: likewise).
 */
export function checkpointItems(entries, actionsOf, resultsOf = () => null) {
  return entries.map((c) => {
    const said = c.added != null && (c.added || c.removed);
    const counts = said ? el("span", "cp-counts", ` +${c.added} −${c.removed ?? 0}`) : null;
    const li = el("li", null, el("div", null, el("strong", null, `Turn ${c.turn}`), counts, ` ${c.prompt}`));
    li.dataset.turn = String(c.turn);
    if (c.paths.length) {
      const ul = el("ul", "cp-files");
      for (const p of c.paths) ul.append(el("li", null, fileLink(p)));
      li.append(ul);
    } else li.append(el("div", "muted", "no file changes"));
    const results = resultsOf(c);
    if (results) li.append(results);
    const actions = actionsOf(c);
    if (actions) li.append(actions);
    return li;
  });
}

function radio(name, value, label) {
  const r = el("input");
  r.type = "radio";
  r.name = name;
  r.value = value;
  return [r, el("label", null, r, ` ${label}`)];
}

/**
 * What a plan's file's diff changes: "+1 −2", "binary", "+? −?" for a diff the plan did not
 * compute, or "" when its text does not change.
 */
export function planCounts(f) {
  if (f.binary) return "binary";
  if (f.diff_deferred) return "+? −?";
  if (!f.diff) return "";
  return `+${f.added ?? 0} −${f.removed ?? 0}`;
}

/**
 * Fills `td` with file `f`'s diff (coloured, numbered) and, when the plan cut it or did not
 * compute it, a button that asks `loadDiff(path)` for the whole one; the focus goes to `back` once
 * the button is gone.
 */
function fillDiff(td, f, loadDiff, back) {
  const parts = [];
  if (f.diff) parts.push(numberedDiff(f.diff));
  if (f.diff_deferred) parts.push(el("p", "muted", "The diff was not computed (the plan's budget for diffs ran out)."));
  else if (f.diff_truncated) parts.push(el("p", "muted", "The diff is cut here; the counts are whole."));
  if ((f.diff_truncated || f.diff_deferred) && loadDiff) {
    const b = el("button", "load-diff", "Load the whole diff");
    b.type = "button";
    const error = el("p", "warn");
    error.hidden = true;
    b.addEventListener("click", async () => {
      b.disabled = true;
      b.textContent = "Loading…";
      try {
        const whole = await loadDiff(f.path);
        td.replaceChildren(whole.binary ? el("p", "muted", "binary: no diff") : numberedDiff(whole.diff));
        back.focus();
      } catch (err) {
        b.disabled = false;
        b.textContent = "Load the whole diff";
        error.textContent = `The whole diff cannot be had: ${err?.message ?? err}`;
        error.hidden = false;
      }
    });
    parts.push(b, error);
  }
  td.replaceChildren(...parts);
}

/**
 * File `f`'s changes cell (its counts; a button that shows or hides its diff when it has one to
 * show) and the row under it that holds the diff, hidden (null when there is none); `show(on)`
 * shows the counts, or nothing (and the diff hidden) for a file the chosen action leaves as it is.
 */
function fileDiff(f, loadDiff) {
  const counts = planCounts(f);
  if (!counts || f.binary) {
    const cell = el("td", "file-diff", counts);
    return { cell, row: null, show: (on) => cell.replaceChildren(on ? counts : "") };
  }
  const td = el("td");
  td.colSpan = 4;
  const row = el("tr", "plan-diff", td);
  row.hidden = true;
  row.dataset.diffOf = f.path;
  const toggle = el("button", "diff-toggle", counts);
  toggle.type = "button";
  toggle.title = "What the restore does to this file";
  toggle.setAttribute("aria-expanded", "false");
  let filled = false;
  toggle.addEventListener("click", () => {
    if (!filled) fillDiff(td, f, loadDiff, toggle);
    filled = true;
    row.hidden = !row.hidden;
    toggle.setAttribute("aria-expanded", String(!row.hidden));
  });
  const cell = el("td", "file-diff", toggle);
  let shown = true;
  const show = (on) => {
    if (on === shown) return;
    shown = on;
    if (on) return cell.replaceChildren(toggle);
    cell.replaceChildren();
    row.hidden = true;
    toggle.setAttribute("aria-expanded", "false");
  };
  return { cell, row, show };
}

/** What a file's action does to it: a write or a delete changes it; skip and unchanged do not. */
const CHANGES = new Set(["write", "delete"]);

/**
 * A rewind's preview from its plan (`POST …/rewind/prepare`, with the choice it opens on,
 * `preselected`), asked for by the action `label` (its entry's) on turn `turn`: the dialog's
 * `title` and `body` elements, and
 *
 * - `commit()`: what the commit button does as the user has chosen so far: its `text`, whether it
 *   is `ready` (nothing blocks it, a choice that commits is picked when files conflict, the
 *   confirmation is ticked when the plan needs one) and the commit's fields (`on_conflict`,
 *   `confirm`: true only when the plan needs it and the user ticked it); `close` when committing
 *   as chosen would change nothing (the plan's or the picked choice's `unchanged`, said on top):
 *   the button then reads "Close" and only closes the preview;
 * - `onChange(f)`: calls `f` whenever the user changes a choice.
 *
 * The conflict choices are the plan's `choices`, by their labels, the `preselected` one picked at
 * first (keeping the conflicted files, when that commits); the file table's action column shows
 * what the picked one does to each file, and its changes column the counts of the files it
 * changes only: a kept file shows none, an overwritten one what overwriting does. Each file's
 * counts open its diff (what committing it does to the file); a cut one offers the whole diff,
 * which `loadDiff(path)` (when given) fetches. Each file's name opens its history. `title`
 * replaces the dialog's title (a version's restore says what it restores).
 */
export function rewindPreview(plan, label, turn, loadDiff, { title } = {}) {
  const listeners = [];
  const choices = plan.choices ?? [];
  let picked = choices.find((c) => c.on_conflict === plan.preselected) ?? null;
  let confirmed = false;
  const changed = () => {
    showActions();
    for (const f of listeners) f();
  };
  const blockers = plan.blockers ?? [];
  const unavailable = blockers.filter((b) => b.kind === "unavailable");
  const needsConfirm = blockers.some((b) => b.kind === "confirmation_required");

  const body = [];
  for (const b of unavailable) body.push(el("p", "warn", `Not available: ${b.reason}`));
  // a commit that would change nothing (the plan's, or the picked choice's, `unchanged`: why, in
  // the server's words) is said at once, and the preview only closes
  const nothing = el("p", "unchanged");
  nothing.hidden = true;
  body.push(nothing);
  /** Why committing as chosen would change nothing, when it would: the picked choice's, else the plan's. */
  const unchanged = () => (choices.length ? picked?.unchanged : plan.unchanged) ?? null;
  if (plan.scope !== "code") body.push(el("p", null, "The conversation goes back to before this prompt: ", el("q", null, plan.prompt)));
  /** path → the action cell of its row in the file table, and its changes' `show(on)`. */
  const cells = new Map();
  const conflicted = new Set(plan.conflicts.map((c) => c.path));
  if (plan.scope !== "conversation") {
    // (a plan that changes nothing says so once, above)
    if (plan.files.length === 0) {
      if (!plan.unchanged) body.push(el("p", null, "No file changes to restore."));
    } else {
      const t = el("table", "plan-files");
      t.append(el("tr", null, el("th", null, "file"), el("th", null, "action"), el("th", "num", "size"), el("th", null, "changes")));
      for (const f of plan.files) {
        const cell = el("td", "file-action", f.says ?? f.action);
        const diff = fileDiff(f, loadDiff);
        cells.set(f.path, { cell, show: diff.show });
        const row = el("tr", null, el("td", null, fileLink(f.path)), cell, el("td", "num", f.size == null ? "—" : fmtSize(f.size)), diff.cell);
        row.dataset.path = f.path;
        if (conflicted.has(f.path)) row.className = "conflicted";
        t.append(row);
        if (diff.row) t.append(diff.row);
      }
      body.push(t);
    }
  }
  /** The file table's actions (in the server's words) and changes: the picked choice's, else the plan's own. */
  const showActions = () => {
    const by = new Map((picked?.files ?? plan.files).map((f) => [f.path, f]));
    for (const [path, { cell, show }] of cells) {
      const f = by.get(path);
      cell.textContent = f ? f.says ?? f.action : "";
      show(CHANGES.has(f?.action));
    }
    const why = unchanged();
    nothing.hidden = !why;
    nothing.textContent = why ? `Nothing would change: ${why}. Closing this preview restores nothing.` : "";
  };

  if (plan.conflicts.length > 0) {
    const n = plan.conflicts.length;
    const fs = el("fieldset", "conflicts", el("legend", null, `${n === 1 ? "1 file" : `${n} files`} changed since Retrace wrote ${n === 1 ? "it" : "them"}: choose what to do`));
    for (const c of plan.conflicts) fs.append(el("div", null, el("code", null, c.path), ` — ${c.says}`));
    for (const c of choices) {
      const [r, l] = radio("on_conflict", c.on_conflict, c.label);
      r.checked = c === picked;
      r.addEventListener("change", () => {
        if (!r.checked) return;
        picked = c;
        changed();
      });
      fs.append(l);
    }
    body.push(fs);
  }
  if (plan.scope !== "conversation" && plan.gaps.length > 0) {
    const g = el("div", "warn", el("p", null, "These changes were not tracked; their effects stay:"));
    const ul = el("ul");
    for (const gap of plan.gaps) ul.append(el("li", null, `${turnName(gap.turn)}: ${gap.says}`));
    g.append(ul);
    body.push(g);
  }
  if (needsConfirm) {
    const box = el("input");
    box.type = "checkbox";
    box.name = "confirm";
    box.addEventListener("change", () => {
      confirmed = box.checked;
      changed();
    });
    body.push(el("label", "confirm-untracked", box, " I understand: what was not tracked stays as it is"));
  }

  showActions();
  return {
    title: title ?? `${label} to ${beforeTurn(turn)}`,
    body,
    commit() {
      if (unchanged()) return { ready: true, text: "Close", close: true, on_conflict: picked?.on_conflict ?? "refuse", confirm: false };
      const choose = choices.length > 0;
      const ready = unavailable.length === 0 && (!choose || !!picked?.commits) && (!needsConfirm || confirmed);
      const text = !choose || !picked ? label : picked.commits ? `${label} — ${picked.label}` : picked.label;
      return { ready, text, close: false, on_conflict: picked?.on_conflict ?? "refuse", confirm: needsConfirm && confirmed };
    },
    onChange(f) {
      listeners.push(f);
    },
  };
}

/** What a restore did to the files, skipped ones included, or plainly that no file changed. */
function filesSaid(result) {
  const done = new Set([...result.files_written, ...result.files_deleted]);
  const skipped = result.conflicts.filter((c) => !done.has(c.path)).length;
  const kept = skipped === 1 ? "1 skipped (kept as it is)" : `${skipped} skipped (kept as they are)`;
  const parts = [];
  if (result.files_written.length > 0) parts.push(`${count(result.files_written.length, "file")} written`);
  if (result.files_deleted.length > 0) parts.push(`${count(result.files_deleted.length, "file")} deleted`);
  if (parts.length === 0) {
    return { changed: false, text: skipped > 0 ? `no file changed — ${kept}` : "no file changed (every file in the workspace already as it was)" };
  }
  if (skipped > 0) parts.push(kept);
  return { changed: true, text: parts.join(", ") };
}

/** The sentence reporting a committed rewind (`POST …/rewind/commit`'s result). */
export function rewindSaid(result, scope, turn) {
  const files = filesSaid(result);
  return (result.partial
    ? `Restored conversation to ${beforeTurn(turn)}, but no file was restored (they changed since the preview).`
    : scope === "conversation"
    ? `Restored conversation to ${beforeTurn(turn)}.`
    : !files.changed && scope === "code"
      ? `Nothing was restored: ${files.text}.`
      : !files.changed
        ? `Restored conversation to ${beforeTurn(turn)}; ${files.text}.`
        : `Restored ${scope === "both" ? "code and conversation" : "code"} to ${beforeTurn(turn)}: ${files.text}.`) +
    (result.error ? ` — ${result.error}` : "");
}

/**
 * The sentence reporting an undo (`verb` "Undone") or a redo ("Redone") of a restore of scope
 * `scope` (its `POST …/undo` or `…/redo` result): what it did to the conversation and the files —
 * "Undone: 1 file written back.", "Redone: the conversation restored again; 2 files written."
 */
export function walkSaid(result, verb, scope) {
  const back = verb === "Undone";
  const parts = [];
  if (scope && scope !== "code") parts.push(back ? "the conversation is back as it was" : "the conversation restored again");
  const files = [];
  const written = result.files_written.length;
  const deleted = result.files_deleted.length;
  if (written > 0) files.push(`${count(written, "file")} written${back ? " back" : ""}`);
  if (deleted > 0) files.push(`${count(deleted, "file")} deleted`);
  if (files.length > 0) parts.push(files.join(", "));
  if (parts.length === 0) parts.push(back ? "the restore was taken back" : "the restore was made again");
  return `${verb}: ${parts.join("; ")}.`;
}

/**
 * The sentence reporting a committed restore of one version of a file (`POST …/revert/commit`'s
 * result): `path`, and `version` as the history words it ("version 2 (turn 0 end)").
 */
export function revertSaid(result, path, version) {
  const files = filesSaid(result);
  return (files.changed ? `Restored ${path} to ${version}: ${files.text}.` : `Nothing was restored: ${files.text}.`) +
    (result.error ? ` — ${result.error}` : "");
}
