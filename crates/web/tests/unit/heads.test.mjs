// The head tree's shape (assets/heads.js `headForest`) in node, without a browser: every head once,
// under its parent; a head whose parents go round in a circle is shown once, at the top, marked.
//
//   node --test tests/unit/
import { test } from "node:test";
import assert from "node:assert/strict";
import { headForest } from "../../assets/heads.js";

const head = (id, parent_head = null) => ({ id, parent_head });

/** The forest as nested `[id, loop?, children]` arrays, for comparing. */
const shape = (forest) => forest.map((n) => (n.loop ? [n.head.id, "loop", shape(n.children)] : [n.head.id, shape(n.children)]));

/** Every id in the forest, in order. */
const ids = (forest) => forest.flatMap((n) => [n.head.id, ...ids(n.children)]);

test("heads hang under their parents, in listing order", () => {
  const f = headForest([head("main"), head("a", "main"), head("b", "a"), head("c", "main")]);
  assert.deepEqual(shape(f), [["main", [["a", [["b", []]]], ["c", []]]]]);
});

test("a head whose parent is missing is a root, not a loop", () => {
  const f = headForest([head("main"), head("x", "gone")]);
  assert.deepEqual(shape(f), [["main", []], ["x", []]]);
});

test("a head that names itself as its parent is shown once, marked", () => {
  const f = headForest([head("main"), head("self", "self"), head("under", "self")]);
  assert.deepEqual(shape(f), [["main", []], ["self", "loop", [["under", []]]]]);
});

test("parents that go round a circle show each head once, the first met on the circle marked", () => {
  // c hangs off the circle a → b → a; walking up from c meets b first
  const f = headForest([head("main"), head("c", "b"), head("a", "b"), head("b", "a")]);
  assert.deepEqual(shape(f), [["main", []], ["b", "loop", [["c", []], ["a", []]]]]);
  assert.deepEqual(ids(f).sort(), ["a", "b", "c", "main"]);
});

test("a long circle and a listing with no root at all end, each head once", () => {
  const n = 500;
  const heads = Array.from({ length: n }, (_, i) => head(`h${i}`, `h${(i + 1) % n}`));
  const f = headForest(heads);
  assert.equal(f.length, 1);
  assert.equal(f[0].loop, true);
  assert.equal(new Set(ids(f)).size, n);
  assert.equal(ids(f).length, n);
});

test("a head listed twice is shown once", () => {
  const f = headForest([head("main"), head("a", "main"), head("a", "main")]);
  assert.deepEqual(shape(f), [["main", [["a", []]]]]);
});
