// A rewind's preview (assets/checkpoints.js `rewindPreview`) in node, on the few elements of dom.mjs
// (no browser): the plan's conflict choices offered by their labels, the one the plan opens on
// picked (keeping the conflicted files), the file table's actions and changes following the pick, what the commit button does and sends as the user chooses, and each
// file's diff opened from its counts (a cut one loading the whole diff).
//
//   node --test tests/unit/
import { test } from "node:test";
import assert from "node:assert/strict";

import "./dom.mjs";

const { planCounts, rewindPreview } = await import("../../assets/checkpoints.js");

/** A file action in the server's words (retrace_protocol::words::file_action), as plans send them. */
const SAYS = { write: "write", delete: "delete", unchanged: "unchanged", skip: "keep" };
const files = (a, b) => [{ path: "a.txt", action: a, says: SAYS[a] }, { path: "b.txt", action: b, says: SAYS[b] }];
const plan = (blockers, conflicted = true, preselected) => ({
  plan_id: "p",
  preselected,
  scope: "code",
  prompt: "one",
  blockers,
  gaps: [],
  files: conflicted
    ? [
        { path: "a.txt", action: "skip", says: "keep", diff: "@@ -1 +0,0 @@\n-mine\n", added: 0, removed: 1 },
        { path: "b.txt", action: "delete", says: "delete", diff: "@@ -1 +0,0 @@\n-b\n", added: 0, removed: 1 },
      ]
    : files("write", "delete"),
  conflicts: conflicted ? [{ path: "a.txt", reason: "manual_edit", says: "edited outside Retrace" }] : [],
  choices: conflicted
    ? [
        { on_conflict: "refuse", label: "Restore nothing while files conflict", commits: false, files: files("skip", "skip") },
        { on_conflict: "skip", label: "Skip them (keep your changes)", commits: true, files: files("skip", "delete") },
        { on_conflict: "overwrite", label: "Overwrite them", commits: true, files: files("delete", "delete") },
      ]
    : [],
});
const inputs = (p, type) => p.body.flatMap((e) => [e, ...e.all()]).filter((e) => e.tag === "input" && e.type === type);
const pick = (r) => {
  r.checked = true;
  for (const f of r.listeners.change) f();
};
/** The file table's action column, by path. */
const actions = (p) =>
  p.body
    .flatMap((e) => [e, ...e.all()])
    .filter((e) => e.tag === "tr" && e.dataset.path)
    .map((r) => [r.dataset.path, r.children[1].textContent]);
/** The file table's changes column, by path. */
const changesOf = (p) =>
  p.body
    .flatMap((e) => [e, ...e.all()])
    .filter((e) => e.tag === "tr" && e.dataset.path)
    .map((r) => [r.dataset.path, r.children[3].textContent]);

test("a conflict's choices are the plan's, the one it opens on picked; the table and the commit follow the pick", () => {
  // opened on keeping the conflicted file: its action is skip and it shows no changes
  const kept = rewindPreview(plan([{ kind: "conflicts", count: 1 }], true, "skip"), "Restore code", 0);
  assert.deepEqual(inputs(kept, "radio").map((r) => r.checked), [false, true, false]);
  assert.deepEqual(kept.commit(), { ready: true, text: "Restore code — Skip them (keep your changes)", close: false, on_conflict: "skip", confirm: false });
  assert.deepEqual(actions(kept), [["a.txt", "keep"], ["b.txt", "delete"]]);
  assert.deepEqual(changesOf(kept), [["a.txt", ""], ["b.txt", "+0 −1"]]);
  // overwriting shows what it does to the file
  pick(inputs(kept, "radio")[2]);
  assert.deepEqual(changesOf(kept), [["a.txt", "+0 −1"], ["b.txt", "+0 −1"]]);
  pick(inputs(kept, "radio")[1]);
  assert.deepEqual(changesOf(kept), [["a.txt", ""], ["b.txt", "+0 −1"]]);

  // a plan that names none opens with none picked
  const p = rewindPreview(plan([{ kind: "conflicts", count: 1 }]), "Restore code", 0);
  assert.equal(p.title, "Restore code to before turn 0");
  const radios = inputs(p, "radio");
  assert.deepEqual(radios.map((r) => r.value), ["refuse", "skip", "overwrite"]);
  assert.ok(radios.every((r) => !r.checked));
  assert.deepEqual(p.commit(), { ready: false, text: "Restore code", close: false, on_conflict: "refuse", confirm: false });
  assert.deepEqual(actions(p), [["a.txt", "keep"], ["b.txt", "delete"]]);
  // why it conflicts, in the plan's words
  const fieldset = p.body.find((e) => e.tag === "fieldset");
  assert.ok(fieldset.textContent.includes("a.txt — edited outside Retrace"), fieldset.textContent);
  let changes = 0;
  p.onChange(() => changes++);
  pick(radios[2]);
  assert.equal(changes, 1);
  assert.deepEqual(actions(p), [["a.txt", "delete"], ["b.txt", "delete"]]);
  assert.deepEqual(p.commit(), { ready: true, text: "Restore code — Overwrite them", close: false, on_conflict: "overwrite", confirm: false });
  pick(radios[0]);
  assert.deepEqual(actions(p), [["a.txt", "keep"], ["b.txt", "keep"]]);
  assert.deepEqual(changesOf(p), [["a.txt", ""], ["b.txt", ""]]);
  assert.deepEqual(p.commit(), { ready: false, text: "Restore nothing while files conflict", close: false, on_conflict: "refuse", confirm: false });
  assert.equal(inputs(p, "checkbox").length, 0);
});

test("confirm is sent only when the plan asks for it and the user ticked it", () => {
  const p = rewindPreview(plan([{ kind: "confirmation_required" }], false), "Restore code", 2);
  assert.equal(inputs(p, "radio").length, 0);
  assert.deepEqual(p.commit(), { ready: false, text: "Restore code", close: false, on_conflict: "refuse", confirm: false });
  const [box] = inputs(p, "checkbox");
  pick(box);
  assert.deepEqual(p.commit(), { ready: true, text: "Restore code", close: false, on_conflict: "refuse", confirm: true });
  box.checked = false;
  for (const f of box.listeners.change) f();
  assert.equal(p.commit().ready, false);
});

test("an unavailable half blocks the commit whatever is chosen", () => {
  const p = rewindPreview(plan([{ kind: "unavailable", reason: "not on this head" }], false), "Restore code and conversation", 1);
  assert.ok(p.body.some((e) => e.textContent === "Not available: not on this head"));
  assert.deepEqual(p.commit(), { ready: false, text: "Restore code and conversation", close: false, on_conflict: "refuse", confirm: false });
});

test("each file's counts open its numbered diff; a cut one loads the whole diff", async () => {
  const diff = (text, more) => ({ diff: text, added: 1, removed: 1, binary: false, ...more });
  const asked = [];
  const p = rewindPreview(
    {
      ...plan([], false),
      files: [
        { path: "a.txt", action: "write", ...diff("@@ -7 +7 @@\n-old\n+new\n", { diff_truncated: true }) },
        { path: "b.txt", action: "delete", ...diff("", { diff_deferred: true, added: 0, removed: 0 }) },
        { path: "c.bin", action: "write", ...diff("", { binary: true }) },
        { path: "d.txt", action: "unchanged", ...diff("", { added: 0, removed: 0 }) },
      ],
    },
    "Restore code",
    0,
    async (path) => {
      asked.push(path);
      if (path === "b.txt") throw new Error("stale_plan: preview again");
      return { path, diff: "@@ -7,2 +7,2 @@\n-old\n+new\n tail\n", added: 1, removed: 1, binary: false };
    },
  );
  const all = p.body.flatMap((e) => [e, ...e.all()]);
  const cells = all.filter((e) => e.tag === "td" && e.className === "file-diff").map((c) => c.textContent);
  assert.deepEqual(cells, ["+1 −1", "+? −?", "binary", ""]);
  const [toggleA, toggleB] = all.filter((e) => e.tag === "button" && e.className === "diff-toggle");
  const rows = all.filter((e) => e.tag === "tr" && e.className === "plan-diff");
  assert.deepEqual(rows.map((r) => [r.dataset.diffOf, r.hidden]), [["a.txt", true], ["b.txt", true]]);

  // Opened: the numbered lines, what is missing, and a button for the whole diff.
  for (const f of toggleA.listeners.click) f();
  assert.equal(rows[0].hidden, false);
  assert.equal(toggleA["aria-expanded"], "true");
  const lines = () => rows[0].all().filter((e) => e.tag === "span" && e.className !== "ln").map((e) => e.textContent);
  assert.deepEqual(lines(), ["            @@ -7 +7 @@\n", "    7       -old\n", "          7 +new\n"]);
  const load = rows[0].all().find((e) => e.tag === "button");
  assert.equal(load.textContent, "Load the whole diff");
  await load.listeners.click[0]();
  assert.deepEqual(asked, ["a.txt"]);
  assert.equal(lines().length, 4);
  assert.ok(lines()[3].endsWith(" tail\n"), lines()[3]);
  assert.equal(globalThis.focused, toggleA);
  // Closed again.
  for (const f of toggleA.listeners.click) f();
  assert.equal(rows[0].hidden, true);

  // Not computed: said, and a failure to load says why, leaving the button to try again.
  for (const f of toggleB.listeners.click) f();
  assert.ok(rows[1].textContent.includes("not computed"), rows[1].textContent);
  const loadB = rows[1].all().find((e) => e.tag === "button");
  await loadB.listeners.click[0]();
  assert.ok(rows[1].textContent.includes("The whole diff cannot be had: stale_plan: preview again"), rows[1].textContent);
  assert.equal(loadB.disabled, false);
});

test("a plan file's counts say what its diff changes", () => {
  assert.equal(planCounts({ diff: "@@ -1 +1 @@\n-a\n+b\n", added: 1, removed: 1 }), "+1 −1");
  assert.equal(planCounts({ diff: "", binary: true }), "binary");
  assert.equal(planCounts({ diff: "", diff_deferred: true }), "+? −?");
  assert.equal(planCounts({ diff: "" }), "");
  // a plan of an earlier build has no diff at all
  assert.equal(planCounts({ path: "a", action: "write" }), "");
});

test("a preview that would change nothing says so and only closes; a choice that changes something commits", () => {
  // every file in the workspace already as it was: the plan says why, in the server's words
  const same = { ...plan([], false), files: files("unchanged", "unchanged"), unchanged: "every file in the workspace is already as it was" };
  const p = rewindPreview(same, "Restore code", 1);
  const said = p.body.find((e) => e.className === "unchanged");
  assert.ok(!said.hidden);
  assert.equal(said.textContent, "Nothing would change: every file in the workspace is already as it was. Closing this preview restores nothing.");
  assert.deepEqual(p.commit(), { ready: true, text: "Close", close: true, on_conflict: "refuse", confirm: false });
  assert.deepEqual(actions(p), [["a.txt", "unchanged"], ["b.txt", "unchanged"]]);

  // a conflicted file kept (the choice it opens on) changes nothing; overwriting it does
  const c = plan([{ kind: "conflicts", count: 1 }], true, "skip");
  c.choices[1] = { ...c.choices[1], files: files("skip", "unchanged"), unchanged: "every file in the workspace is already as it was or kept as it is" };
  const k = rewindPreview(c, "Restore code", 1);
  const kept = k.body.find((e) => e.className === "unchanged");
  assert.equal(kept.textContent, "Nothing would change: every file in the workspace is already as it was or kept as it is. Closing this preview restores nothing.");
  assert.equal(k.commit().close, true);
  assert.deepEqual(actions(k), [["a.txt", "keep"], ["b.txt", "unchanged"]]);
  pick(inputs(k, "radio")[2]);
  assert.ok(kept.hidden);
  assert.deepEqual(k.commit(), { ready: true, text: "Restore code — Overwrite them", close: false, on_conflict: "overwrite", confirm: false });
});
