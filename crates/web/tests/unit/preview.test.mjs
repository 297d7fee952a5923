// A rewind's preview (assets/checkpoints.js `rewindPreview`) in node, on a few elements of its own
// (no browser): the plan's conflict choices offered by their labels with none picked, the file
// table following the pick, and what the commit button does and sends as the user chooses.
//
//   node --test tests/unit/
import { test } from "node:test";
import assert from "node:assert/strict";

/** Just enough of the page's elements for `el` and the preview's listeners. */
class Node {
  constructor(tag) {
    this.tag = tag;
    this.children = [];
    this.dataset = {};
    this.listeners = {};
    this.text = "";
    this.checked = false;
  }
  append(...kids) {
    this.children.push(...kids);
  }
  addEventListener(type, f) {
    (this.listeners[type] ??= []).push(f);
  }
  setAttribute() {}
  set textContent(t) {
    this.children = [];
    this.text = t;
  }
  get textContent() {
    return this.text + this.children.map((c) => c.textContent).join("");
  }
  /** Every element under this one, depth first. */
  all() {
    return this.children.flatMap((c) => (c instanceof Node ? [c, ...c.all()] : []));
  }
}
globalThis.document = {
  createElement: (tag) => new Node(tag),
  createTextNode: (text) => ({ textContent: text }),
};
const { rewindPreview } = await import("../../assets/checkpoints.js");

const files = (a, b) => [{ path: "a.txt", action: a }, { path: "b.txt", action: b }];
const plan = (blockers, conflicted = true) => ({
  plan_id: "p",
  scope: "code",
  prompt: "one",
  blockers,
  gaps: [],
  files: conflicted ? [{ path: "a.txt", action: "skip" }, { path: "b.txt", action: "delete" }] : files("write", "delete"),
  conflicts: conflicted ? [{ path: "a.txt", reason: "manual_edit" }] : [],
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

test("a conflict's choices are the plan's, none picked; the table and the commit follow the pick", () => {
  const p = rewindPreview(plan([{ kind: "conflicts", count: 1 }]), "Restore code", 0);
  assert.equal(p.title, "Restore code to before turn 0");
  const radios = inputs(p, "radio");
  assert.deepEqual(radios.map((r) => r.value), ["refuse", "skip", "overwrite"]);
  assert.ok(radios.every((r) => !r.checked));
  assert.deepEqual(p.commit(), { ready: false, text: "Restore code", on_conflict: "refuse", confirm: false });
  assert.deepEqual(actions(p), [["a.txt", "skip"], ["b.txt", "delete"]]);
  let changes = 0;
  p.onChange(() => changes++);
  pick(radios[2]);
  assert.equal(changes, 1);
  assert.deepEqual(actions(p), [["a.txt", "delete"], ["b.txt", "delete"]]);
  assert.deepEqual(p.commit(), { ready: true, text: "Restore code — Overwrite them", on_conflict: "overwrite", confirm: false });
  pick(radios[0]);
  assert.deepEqual(actions(p), [["a.txt", "skip"], ["b.txt", "skip"]]);
  assert.deepEqual(p.commit(), { ready: false, text: "Restore nothing while files conflict", on_conflict: "refuse", confirm: false });
  assert.equal(inputs(p, "checkbox").length, 0);
});

test("confirm is sent only when the plan asks for it and the user ticked it", () => {
  const p = rewindPreview(plan([{ kind: "confirmation_required" }], false), "Restore code", 2);
  assert.equal(inputs(p, "radio").length, 0);
  assert.deepEqual(p.commit(), { ready: false, text: "Restore code", on_conflict: "refuse", confirm: false });
  const [box] = inputs(p, "checkbox");
  pick(box);
  assert.deepEqual(p.commit(), { ready: true, text: "Restore code", on_conflict: "refuse", confirm: true });
  box.checked = false;
  for (const f of box.listeners.change) f();
  assert.equal(p.commit().ready, false);
});

test("an unavailable half blocks the commit whatever is chosen", () => {
  const p = rewindPreview(plan([{ kind: "unavailable", reason: "not on this head" }], false), "Restore code and conversation", 1);
  assert.ok(p.body.some((e) => e.textContent === "Not available: not on this head"));
  assert.deepEqual(p.commit(), { ready: false, text: "Restore code and conversation", on_conflict: "refuse", confirm: false });
});
